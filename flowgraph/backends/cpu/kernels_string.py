"""CPU kernels of the string ops (`flowgraph/ops/string_ops.py`). Strings are bytes in
object arrays; a ``str`` element is taken as its UTF-8 bytes."""

from __future__ import annotations

import re

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _b(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _objects(items, shape=None) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out if shape is None else out.reshape(shape)


def _sparse(rows: list[list[bytes]]):
    idx = [[r, i] for r, toks in enumerate(rows) for i in range(len(toks))]
    vals = [t for toks in rows for t in toks]
    shape = [len(rows), max((len(t) for t in rows), default=0)]
    return (np.asarray(idx, dtype=np.int64).reshape(-1, 2), _objects(vals),
            np.asarray(shape, dtype=np.int64))


@cpu_kernel("StringSplit")
def string_split(source, delimiter, *, skip_empty):
    delim = _b(np.asarray(delimiter, dtype=object).reshape(())[()])
    rows = []
    for s in np.asarray(source, dtype=object).reshape(-1).tolist():
        s = _b(s)
        if not s:
            rows.append([])
        elif not delim:
            rows.append([s[i:i + 1] for i in range(len(s))])
        else:
            toks = re.split(b"[" + re.escape(delim) + b"]", s)
            rows.append([t for t in toks if t] if skip_empty else toks)
    return _sparse(rows)


@cpu_kernel("StringSplitV2")
def string_split_v2(source, sep, *, maxsplit):
    sep = _b(np.asarray(sep, dtype=object).reshape(())[()]) or None
    rows = [_b(s).split(sep, maxsplit) for s in np.asarray(source, dtype=object)
            .reshape(-1).tolist()]
    return _sparse(rows)


_INT_RANGE = {_dtypes.int32: (-(2**31), 2**31 - 1), _dtypes.int64: (-(2**63), 2**63 - 1)}


@cpu_kernel("StringToNumber")
def string_to_number(x, *, out_type):
    dtype = _dtypes.as_dtype(out_type).base_dtype
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.size, dtype=dtype.as_numpy_dtype)
    for i, s in enumerate(arr.reshape(-1).tolist()):
        text = _b(s).decode("utf-8", "replace").strip()
        try:
            if dtype.is_integer:
                v = int(text, 10)
                lo, hi = _INT_RANGE[dtype]
                if not lo <= v <= hi:
                    raise ValueError("out of range")
            else:
                v = float(text)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"StringToNumberOp could not correctly convert string: "
                f"{_b(s)[:64].decode('utf-8', 'replace')} (to {dtype.name}, element {i})") \
                from None
        out[i] = v
    return out.reshape(arr.shape)


@cpu_kernel("StringJoin")
def string_join(*inputs, separator):
    arrays = [np.asarray(x, dtype=object) for x in inputs]
    shape = next((a.shape for a in arrays if a.ndim), ())
    for a in arrays:
        if a.ndim and a.shape != shape:
            raise errors.InvalidArgumentError(
                None, None, f"StringJoin: inputs must be scalars or of one shape, got "
                f"{shape} and {a.shape}")
    flat = [np.broadcast_to(a, shape).reshape(-1).tolist() for a in arrays]
    sep = separator.encode("utf-8")
    joined = [sep.join(_b(v) for v in parts) for parts in zip(*flat)]
    return _objects(joined, shape)


@cpu_kernel("Substr")
def substr(x, pos, length, *, unit):
    arr = np.asarray(x, dtype=object)
    pos, length = np.asarray(pos), np.asarray(length)
    for name, v in (("pos", pos), ("len", length)):
        if v.ndim and v.shape != arr.shape:
            raise errors.InvalidArgumentError(
                None, None, f"Substr: {name} must be a scalar or of the input's shape "
                f"{arr.shape}, got {v.shape}")
    ps = np.broadcast_to(pos, arr.shape).reshape(-1).tolist()
    ns = np.broadcast_to(length, arr.shape).reshape(-1).tolist()
    out = []
    for i, s in enumerate(arr.reshape(-1).tolist()):
        b = _b(s)
        seq = b.decode("utf-8") if unit == "UTF8_CHAR" else b
        p, n = int(ps[i]), int(ns[i])
        start = p + len(seq) if p < 0 else p
        if not 0 <= start <= len(seq):
            raise errors.InvalidArgumentError(
                None, None, f"Substr: pos {p} out of range for string {b[:64]!r} of length "
                f"{len(seq)} at index {i}")
        piece = seq[start:start + max(n, 0)]
        out.append(piece.encode("utf-8") if unit == "UTF8_CHAR" else piece)
    return _objects(out, arr.shape)


@cpu_kernel("StringLength")
def string_length(x, *, unit):
    arr = np.asarray(x, dtype=object)
    if unit == "UTF8_CHAR":
        lengths = [len(_b(s).decode("utf-8", "replace")) for s in arr.reshape(-1).tolist()]
    else:
        lengths = [len(_b(s)) for s in arr.reshape(-1).tolist()]
    return np.asarray(lengths, dtype=np.int32).reshape(arr.shape)
