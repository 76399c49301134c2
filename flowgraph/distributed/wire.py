"""The bytes that travel between tasks: a JSON header plus raw tensor buffers.

Every RPC body of `flowgraph.distributed` is one *message*::

    b"FGW1" | header length (uint32, little endian) | header (UTF-8 JSON) | buffers

The header is a JSON object; its ``"tensors"`` entry lists each tensor as
``{"name", "dtype", "shape", "nbytes"}`` and the buffers follow in that order, each the
tensor's C-contiguous bytes. Numeric dtypes travel as NumPy dtype strings (``"<f4"``);
string tensors (``dtype: "string"``) as their items, each a uint32 length and the bytes.
Decoding checks every size against the header (a truncated or padded message is a
`DataLossError`) and builds NumPy arrays that view the received bytes without copying.
Nothing here can run code from the wire: no pickle, no object arrays.

Optional lossy compression (the whitepaper's section 5.5, TensorFlow's
``GraphOptions.enable_bfloat16_sendrecv``): ``encode(..., bfloat16=True)`` sends each
float32 tensor as ``dtype: "bfloat16"``, the top 16 bits of every value (truncation,
half the bytes; a NaN stays a NaN). `decode` turns it back into float32 with the low 16
bits zero.

Example
-------
>>> import numpy as np
>>> blob = encode({"op": "demo"}, {"x": np.arange(3, dtype=np.float32)})
>>> header, tensors = decode(blob)
>>> header["op"], tensors["x"].tolist()
('demo', [0.0, 1.0, 2.0])
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from flowgraph.framework import errors

__all__ = ["decode", "encode", "encode_parts", "from_bfloat16", "to_bfloat16"]

MAGIC = b"FGW1"
_LEN = struct.Struct("<I")
_STRING = "string"
_BFLOAT16 = "bfloat16"
# Kinds that are plain fixed-size values: bool, ints, unsigned ints, floats, complex.
_NUMERIC_KINDS = frozenset("biufc")


def _string_buffer(arr: np.ndarray) -> bytes:
    parts = []
    for item in arr.reshape(-1):
        raw = item if isinstance(item, bytes) else str(item).encode("utf-8")
        parts.append(_LEN.pack(len(raw)))
        parts.append(raw)
    return b"".join(parts)


def to_bfloat16(arr: np.ndarray) -> np.ndarray:
    """The top 16 bits of each float32 value, as little-endian uint16 (a NaN keeps a
    mantissa bit set, so truncation cannot turn it into an infinity).

    >>> to_bfloat16(np.array([1.0, -2.5], np.float32)).tolist()
    [16256, 49184]
    """
    bits = np.ascontiguousarray(arr, dtype="<f4").view("<u4")
    top = (bits >> 16).astype("<u2")
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    if nan.any():
        top[nan] |= 0x0040
    return top


def from_bfloat16(top: np.ndarray) -> np.ndarray:
    """float32 values whose top 16 bits are `top` (uint16) and low 16 bits zero."""
    return (top.astype("<u4") << 16).view("<f4")


def _tensor_entry(name: str, value, bfloat16: bool) -> tuple[dict, bytes | memoryview]:
    arr = np.asarray(value)
    if bfloat16 and arr.dtype == np.float32:
        top = to_bfloat16(arr)
        return ({"name": name, "dtype": _BFLOAT16, "shape": list(arr.shape),
                 "nbytes": top.nbytes}, memoryview(top.reshape(-1).view(np.uint8)))
    if arr.dtype == object or arr.dtype.kind in "SU":
        buf = _string_buffer(arr)
        return {"name": name, "dtype": _STRING, "shape": list(arr.shape),
                "nbytes": len(buf)}, buf
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise errors.InvalidArgumentError(
            None, None,
            f"Cannot send tensor '{name}' between tasks: dtype {arr.dtype} is not a numeric "
            "or string dtype (only those have a wire format).")
    shape = list(arr.shape)  # np.ascontiguousarray makes a 0-d array 1-d
    arr = np.ascontiguousarray(arr)
    return ({"name": name, "dtype": arr.dtype.str, "shape": shape,
             "nbytes": arr.nbytes}, memoryview(arr.reshape(-1).view(np.uint8)))


def encode_parts(header: dict, tensors: dict | None = None,
                 bfloat16: bool = False) -> list:
    """The pieces of `encode`'s message, in order, the tensors' own buffers among them
    (for a socket's ``sendmsg``: the message is never assembled).

    >>> parts = encode_parts({}, {"x": np.zeros(2, np.float32)})
    >>> b"".join(parts) == encode({}, {"x": np.zeros(2, np.float32)})
    True
    """
    entries, buffers = [], []
    for name, value in (tensors or {}).items():
        entry, buf = _tensor_entry(name, value, bfloat16)
        entries.append(entry)
        buffers.append(buf)
    head = json.dumps({**header, "tensors": entries}, separators=(",", ":")).encode()
    return [MAGIC + _LEN.pack(len(head)) + head, *buffers]


def encode(header: dict, tensors: dict | None = None, bfloat16: bool = False) -> bytes:
    """One message: `header` (a JSON-serializable dict) and named arrays; with
    `bfloat16`, float32 arrays travel truncated to bfloat16 (see the module docstring)."""
    return b"".join(encode_parts(header, tensors, bfloat16))


def _loss(what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Malformed flowgraph wire message: {what}")


def _decode_strings(buf: memoryview, shape: list, name: str) -> np.ndarray:
    count = math.prod(shape)
    items, pos = [], 0
    for _ in range(count):
        if pos + 4 > len(buf):
            raise _loss(f"string tensor '{name}' ends inside an item length")
        (n,) = _LEN.unpack_from(buf, pos)
        pos += 4
        if pos + n > len(buf):
            raise _loss(f"string tensor '{name}' item of {n} bytes runs past its buffer")
        items.append(bytes(buf[pos:pos + n]))
        pos += n
    if pos != len(buf):
        raise _loss(f"string tensor '{name}' has {len(buf) - pos} trailing bytes")
    out = np.empty(count, dtype=object)
    out[:] = items
    return out.reshape(shape)


def _decode_tensor(entry: dict, buf: memoryview) -> np.ndarray:
    name, shape = entry.get("name"), entry.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise _loss(f"tensor '{name}' has an invalid shape {shape!r}")
    if entry.get("dtype") == _STRING:
        return _decode_strings(buf, shape, name)
    if entry.get("dtype") == _BFLOAT16:
        count = math.prod(shape)
        if 2 * count != len(buf):
            raise _loss(f"bfloat16 tensor '{name}' of shape {shape} needs {2 * count} bytes; "
                        f"the message holds {len(buf)}")
        return from_bfloat16(np.frombuffer(buf, dtype="<u2", count=count)).reshape(shape)
    try:
        dtype = np.dtype(entry.get("dtype"))
    except TypeError:
        raise _loss(f"tensor '{name}' has an unknown dtype {entry.get('dtype')!r}") from None
    if dtype.kind not in _NUMERIC_KINDS:
        raise _loss(f"tensor '{name}' has a non-numeric dtype {dtype}")
    count = math.prod(shape)
    if count * dtype.itemsize != len(buf):
        raise _loss(f"tensor '{name}' of shape {shape} and dtype {dtype} needs "
                    f"{count * dtype.itemsize} bytes; the message holds {len(buf)}")
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)


def decode(blob: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and the named arrays of a message (arrays view `blob`, read-only)."""
    view = memoryview(blob)
    if len(view) < 8 or bytes(view[:4]) != MAGIC:
        raise _loss("it does not start with the FGW1 magic")
    (head_len,) = _LEN.unpack_from(view, 4)
    if 8 + head_len > len(view):
        raise _loss(f"header of {head_len} bytes runs past the message ({len(view)} bytes)")
    try:
        header = json.loads(bytes(view[8:8 + head_len]))
    except ValueError as e:
        raise _loss(f"header is not JSON ({e})") from None
    if not isinstance(header, dict) or not isinstance(header.get("tensors", []), list):
        raise _loss("header is not an object with a 'tensors' list")
    pos, tensors = 8 + head_len, {}
    for entry in header.pop("tensors", []):
        nbytes = entry.get("nbytes") if isinstance(entry, dict) else None
        if not isinstance(nbytes, int) or nbytes < 0 or pos + nbytes > len(view):
            raise _loss(f"tensor entry {entry!r} does not fit the message")
        tensors[entry["name"]] = _decode_tensor(entry, view[pos:pos + nbytes])
        pos += nbytes
    if pos != len(view):
        raise _loss(f"{len(view) - pos} bytes follow the last tensor")
    return header, tensors
