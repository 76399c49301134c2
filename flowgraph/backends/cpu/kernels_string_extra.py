"""CPU kernels of `flowgraph/ops/string_extra_ops.py`. Strings are bytes in object arrays
(a ``str`` element is taken as its UTF-8 bytes)."""

from __future__ import annotations

import base64
import os
import re
import zlib

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.io.tf_record import read_file_bytes


def _b(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _map(fn, x):
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1).tolist()):
        flat[i] = fn(_b(v))
    return out


def _invalid(op, msg):
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


def _re2_rewrite(rewrite: str) -> bytes:
    # RE2 writes groups as \1; Python's re accepts the same, but \0 is the whole match.
    return re.sub(r"\\0", r"\\g<0>", rewrite).encode("utf-8")


@cpu_kernel("StaticRegexReplace", fresh=True)
def static_regex_replace(x, *, pattern, rewrite, replace_global, op):
    try:
        regex = re.compile(pattern.encode("utf-8"))
    except re.error as e:
        raise _invalid(op, f"invalid pattern {pattern!r}: {e}") from None
    repl = _re2_rewrite(rewrite)
    return _map(lambda s: regex.sub(repl, s, count=0 if replace_global else 1), x)


def _scalar_str(value, op, what: str) -> str:
    arr = np.asarray(value, dtype=object)
    if arr.ndim != 0:
        raise _invalid(op, f"{what} must be a scalar, got shape {list(arr.shape)}")
    return _b(arr.item()).decode("utf-8", "surrogateescape")


@cpu_kernel("StaticRegexFullMatch", fresh=True)
def static_regex_full_match(x, *, pattern, op):
    try:
        regex = re.compile(pattern.encode("utf-8"))
    except re.error as e:
        raise _invalid(op, f"invalid pattern {pattern!r}: {e}") from None
    arr = np.asarray(x, dtype=object)
    return np.asarray([regex.fullmatch(_b(s)) is not None for s in arr.reshape(-1).tolist()],
                      dtype=bool).reshape(arr.shape)


@cpu_kernel("RegexFullMatch", fresh=True)
def regex_full_match(x, pattern, *, op):
    return static_regex_full_match(x, pattern=_scalar_str(pattern, op, "pattern"), op=op)


@cpu_kernel("RegexReplace", fresh=True)
def regex_replace(x, pattern, rewrite, *, replace_global, op):
    return static_regex_replace(x, pattern=_scalar_str(pattern, op, "pattern"),
                                rewrite=_scalar_str(rewrite, op, "rewrite"),
                                replace_global=replace_global, op=op)


@cpu_kernel("StringStrip", fresh=True)
def string_strip(x):
    return _map(lambda s: s.strip(), x)


@cpu_kernel("StringLower", fresh=True)
def string_lower(x, *, encoding):
    if encoding:
        return _map(lambda s: s.decode("utf-8").lower().encode("utf-8"), x)
    return _map(lambda s: s.lower(), x)


@cpu_kernel("StringUpper", fresh=True)
def string_upper(x, *, encoding):
    if encoding:
        return _map(lambda s: s.decode("utf-8").upper().encode("utf-8"), x)
    return _map(lambda s: s.upper(), x)


@cpu_kernel("ReduceJoin", fresh=True)
def reduce_join(x, axes, *, keep_dims, separator, op):
    arr = np.asarray(x, dtype=object)
    sep = separator.encode("utf-8")
    axes = sorted({int(a) % arr.ndim for a in np.asarray(axes).reshape(-1)}) if arr.ndim \
        else []
    keep = [i for i in range(arr.ndim) if i not in axes]
    moved = np.transpose(arr, keep + axes) if arr.ndim else arr
    lead = moved.shape[:len(keep)]
    flat = moved.reshape(*lead, -1) if arr.ndim else moved.reshape(1, 1)
    out = np.empty(lead, dtype=object)
    for idx in np.ndindex(*lead):
        out[idx] = sep.join(_b(v) for v in flat[idx])
    if keep_dims:
        out = out.reshape([1 if i in axes else arr.shape[i] for i in range(arr.ndim)])
    return out


@cpu_kernel("EncodeBase64", fresh=True)
def encode_base64(x, *, pad):
    def enc(s):
        out = base64.urlsafe_b64encode(s)
        return out if pad else out.rstrip(b"=")

    return _map(enc, x)


_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _web_safe_b64decode(s: bytes, op) -> bytes:
    """TensorFlow's base64 decoding: the web-safe alphabet only, no whitespace, padding
    optional but only on the last block of four (at most two ``=``)."""
    body = len(s) - (len(s) - 1) % 4 - 1 if s else 0  # the blocks before the last
    tail = s[body:]
    if len(tail) == 4 and tail.endswith(b"="):
        tail = tail[:-2] if tail.endswith(b"==") else tail[:-1]
    if any(c not in _WEB_SAFE for c in s[:body]) or (
            len(tail) != 1 and any(c not in _WEB_SAFE for c in tail)):
        raise _invalid(op, f"invalid character found in base64 string {s[:40]!r} (only the "
                           "web-safe alphabet A-Z a-z 0-9 - _ and final '=' padding)")
    if len(tail) == 1:
        raise _invalid(op, f"base64 string length cannot be 1 modulo 4, got {len(s)} "
                           f"({s[:40]!r})")
    return base64.urlsafe_b64decode(s[:body] + tail + b"=" * (-len(tail) % 4))


@cpu_kernel("DecodeBase64", fresh=True)
def decode_base64(x, *, op):
    return _map(lambda s: _web_safe_b64decode(s, op), x)


@cpu_kernel("DecodeCompressed", fresh=True)
def decode_compressed(x, *, compression_type, op):
    if compression_type not in ("GZIP", "ZLIB"):
        return _map(lambda s: s, x)
    wbits = zlib.MAX_WBITS | (16 if compression_type == "GZIP" else 0)

    def dec(s):
        # A stream cut short after its data (a missing checksum) inflates to that data,
        # as TensorFlow's streaming reader does; corrupt data is a DataLossError.
        out = []
        try:
            while s:  # concatenated members, as gzip writes them when appending
                d = zlib.decompressobj(wbits)
                out.append(d.decompress(s) + d.flush())
                s = d.unused_data
            return b"".join(out)
        except zlib.error as e:
            raise errors.DataLossError(
                None, None, f"{op.type} '{op.name}': inflate() failed on {compression_type} "
                f"data: {e}") from None

    return _map(dec, x)


@cpu_kernel("DecodeRaw", fresh=True)
def decode_raw(x, *, out_type, little_endian, op):
    dtype = np.dtype(out_type.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    arr = np.asarray(x, dtype=object)
    items = [_b(v) for v in arr.reshape(-1).tolist()]
    sizes = {len(s) for s in items}
    if len(sizes) > 1:
        raise _invalid(op, f"all input strings must have the same length, got lengths "
                       f"{sorted(sizes)}")
    n = sizes.pop() if sizes else 0
    if n % dtype.itemsize:
        raise _invalid(op, f"input size {n} is not a multiple of {dtype.itemsize}, the size "
                       f"of {out_type.name}")
    out = np.empty((len(items), n // dtype.itemsize), dtype=dtype.newbyteorder("="))
    for i, s in enumerate(items):
        out[i] = np.frombuffer(s, dtype=dtype)
    return out.reshape(*arr.shape, n // dtype.itemsize)


@cpu_kernel("ReadFile")
def read_file(filename):
    path = _b(np.asarray(filename, dtype=object).item()).decode("utf-8")
    out = np.empty((), dtype=object)
    out[()] = read_file_bytes(path, "", "ReadFile")  # uncompressed: the bytes as they are
    return out


@cpu_kernel("WriteFile")
def write_file(filename, contents):
    path = _b(np.asarray(filename, dtype=object).item()).decode("utf-8")
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as f:
        f.write(_b(np.asarray(contents, dtype=object).item()))
    return []


def content_proto(value):
    """The TensorProto TensorFlow's ``Tensor::AsProtoTensorContent`` writes: numbers as
    little-endian ``tensor_content``, strings in ``string_val``, zero sizes omitted."""
    from flowgraph.framework import dtypes as _dtypes
    from flowgraph.framework.event_format import TensorProto, TensorShapeProto

    arr = np.asarray(value)
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) if d else
                                  TensorShapeProto.Dim() for d in arr.shape])
    if arr.dtype == object or arr.dtype.kind in "SU":
        return TensorProto(dtype=_dtypes.string.as_datatype_enum, tensor_shape=shape,
                           string_val=[_b(v) for v in arr.reshape(-1).tolist()])
    out = TensorProto(dtype=_dtypes.as_dtype(arr.dtype).as_datatype_enum, tensor_shape=shape)
    if arr.size:
        out.tensor_content = np.ascontiguousarray(
            arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return out


@cpu_kernel("SerializeTensor")
def serialize_tensor(x):
    out = np.empty((), dtype=object)
    out[()] = content_proto(x).SerializeToString()
    return out


@cpu_kernel("ParseTensor", fresh=True)
def parse_tensor(serialized, *, out_type, op):
    from flowgraph.framework.event_format import TensorProto
    from flowgraph.framework.tf_formats.graph_def import tensor_value

    try:
        value = tensor_value(TensorProto.FromString(_b(np.asarray(serialized,
                                                                 dtype=object).item())))
    except Exception as e:  # malformed bytes: report, never crash the step
        raise _invalid(op, f"could not parse a TensorProto ({e})") from None
    want = np.dtype(out_type.as_numpy_dtype) if out_type.name != "string" else np.dtype(object)
    if np.asarray(value).dtype != want:
        raise _invalid(op, f"type mismatch between parsed tensor ({np.asarray(value).dtype}) "
                       f"and dtype ({out_type.name})")
    return np.array(value, copy=True)
