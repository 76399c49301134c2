"""The bytes that travel between tasks: a JSON header plus raw tensor buffers.

Every RPC body of `flowgraph.distributed` is one *message*::

    b"FGW2" | header length H | table length T (uint32 each, little endian)
            | header (H bytes of UTF-8 JSON) | tensor table (T bytes of JSON) | buffers

The header is a JSON object, or two: ``base`` ``0x1E`` ``header``, where *base* is a part
that many messages repeat (a stage's call signature: `Base`, encoded once by the
sender and parsed once per process by the receiver, which caches it by its bytes) and
the decoded header is base's keys updated with header's. (``0x1E`` never occurs in JSON
text: control characters are escaped inside strings and are not whitespace.) The
tensor table lists each tensor as ``[name, dtype,
shape, nbytes]`` and the buffers follow in that order, each the tensor's C-contiguous
bytes followed by zeros up to a multiple of `ALIGN` bytes; the header is padded with
spaces so that the first buffer starts at a multiple of `ALIGN` too. So arrays decoded
from a message read into an aligned buffer are aligned, like those NumPy allocates.
A step sends the same names, dtypes and shapes on every call: both ends keep the table
of each layout they met (encoded, and parsed and checked), so a repeated message costs
one JSON header and a view per tensor; for plain numeric arrays, the layout's key and
the views are made in C (`flowgraph.distributed._wire`).
Numeric dtypes travel as NumPy dtype strings (``"<f4"``);
string tensors (``dtype: "string"``) as their items, each a uint32 length and the bytes.
Decoding checks every size against the table (a truncated or padded message is a
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
import json.encoder
import json.scanner
import math
import struct

import numpy as np

from flowgraph.distributed._wire import Views, signature
from flowgraph.framework import errors

__all__ = ["Base", "decode", "encode", "encode_message", "encode_parts", "from_bfloat16",
           "to_bfloat16"]

MAGIC = b"FGW2"
ALIGN = 16  # bytes: every buffer starts at a multiple of it from the message's start
_PADS = [bytes(k) for k in range(ALIGN)]
_LEN = struct.Struct("<I")
_LENGTHS = struct.Struct("<II")  # header length, tensor table length
_PREFIX = struct.Struct("<4sII")  # magic and the two lengths
_CACHE_SIZE = 256  # tensor tables (and their parsed layouts) kept, by layout
_TABLES: dict = {}  # (name, dtype, shape, nbytes) per tensor -> table JSON
_BY_KEY: dict = {}  # `_wire.signature` of plain arrays -> the same as _TABLES
_LAYOUTS: dict = {}  # table JSON -> ([(name, dtype, shape, count, nbytes)], Views or None)
_BASES: dict = {}  # base JSON -> its parsed dict (never handed out: decode copies it)
_BASE_MARK = b"\x1e"
_STRING = "string"
_BFLOAT16 = "bfloat16"
# Kinds that are plain fixed-size values: bool, ints, unsigned ints, floats, complex.
_NUMERIC_KINDS = frozenset("biufc")
# One encoder for every message: json.dumps with arguments builds a new one per call.
_JSON = json.JSONEncoder(separators=(",", ":"))
# A message's own header part, the one JSON text made and parsed per call, goes straight
# through the json module's C encoder and scanner (what JSONEncoder.encode and json.loads
# build or wrap on every call). No check for circular references: headers are ours.
_ENCODE = json.encoder.c_make_encoder(
    None, _JSON.default, json.encoder.c_encode_basestring_ascii, None, ":", ",", False,
    False, True) if json.encoder.c_make_encoder else None
_SCAN = json.scanner.c_make_scanner(json.JSONDecoder()) if json.scanner.c_make_scanner \
    else None


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


def _tensor_entry(name: str, value, bfloat16: bool) -> tuple[tuple, object]:
    """``((name, dtype, shape, nbytes), buffer)`` of one tensor (the buffer: anything a
    socket's ``sendmsg`` and ``bytes.join`` take, such as a C-contiguous array)."""
    if (type(value) is np.ndarray and value.dtype.kind in _NUMERIC_KINDS
            and value.flags.c_contiguous and not (bfloat16 and value.dtype == np.float32)):
        # The common case, kept short: a step sends a few tensors per call.
        return (name, value.dtype.str, value.shape, value.nbytes), value
    arr = np.asarray(value)
    if bfloat16 and arr.dtype == np.float32:
        top = to_bfloat16(arr)
        return (name, _BFLOAT16, arr.shape, top.nbytes), top
    if arr.dtype == object or arr.dtype.kind in "SU":
        buf = _string_buffer(arr)
        return (name, _STRING, arr.shape, len(buf)), buf
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise errors.InvalidArgumentError(
            None, None,
            f"Cannot send tensor '{name}' between tasks: dtype {arr.dtype} is not a numeric "
            "or string dtype (only those have a wire format).")
    shape = arr.shape  # np.ascontiguousarray makes a 0-d array 1-d
    arr = np.ascontiguousarray(arr)
    return (name, arr.dtype.str, shape, arr.nbytes), arr


def _table(entries: tuple) -> tuple[bytes, list, int]:
    """``(table, after, nbytes)`` of a layout, made once per layout (a step sends the same
    names, dtypes and shapes every time): its JSON tensor table; per tensor, None to
    leave out its (empty) buffer, else the padding that follows it; the bytes of the
    buffers and their padding."""
    known = _TABLES.get(entries)
    if known is None:
        table = _JSON.encode([[n, d, list(s), b] for n, d, s, b in entries]).encode()
        after = [_PADS[-b % ALIGN] if b else None for _, _, _, b in entries]
        known = (table, after, sum(b + (-b % ALIGN) for _, _, _, b in entries))
        if len(_TABLES) >= _CACHE_SIZE:
            _TABLES.clear()
        _TABLES[entries] = known
    return known


_NO_TENSORS = _table(())


class Base:
    """A header part that many messages repeat, encoded once (see the module docstring):
    `data` must not change after it is made.

    >>> base = Base({"handle": "h", "feeds": ["a"]})
    >>> decode(encode({"step_id": 7}, base=base))[0]
    {'handle': 'h', 'feeds': ['a'], 'step_id': 7}
    """

    __slots__ = ("data", "json")

    def __init__(self, data: dict) -> None:
        self.data = data
        self.json = _JSON.encode(data).encode() + _BASE_MARK


def encode_message(header: dict, tensors: dict | None = None, bfloat16: bool = False,
                   base: Base | None = None) -> tuple[list, int]:
    """``(parts, size)``: the pieces of `encode`'s message in order, the tensors' own
    buffers among them (for a socket's ``sendmsg``: the message is never assembled), and
    their total size in bytes. With `base`, the message carries ``base.data`` under
    `header` (see the module docstring)."""
    if not tensors:
        table, after, nbytes = _NO_TENSORS
        buffers = ()
    else:
        key = signature(tensors, bfloat16)  # C: None unless every value is a plain array
        known = _BY_KEY.get(key) if key is not None else None
        if known is None:
            entries, buffers = [], []
            for name, value in tensors.items():
                entry, buf = _tensor_entry(name, value, bfloat16)
                entries.append(entry)
                buffers.append(buf)
            known = _table(tuple(entries))
            if key is not None:
                if len(_BY_KEY) >= _CACHE_SIZE:
                    _BY_KEY.clear()
                _BY_KEY[key] = known
        else:
            buffers = tensors.values()  # (arrays and NumPy scalars are their own buffers)
        table, after, nbytes = known
    head = ("".join(_ENCODE(header, 0)) if _ENCODE else _JSON.encode(header)).encode()
    if base is not None:
        head = base.json + head
    size = _PREFIX.size + len(head) + len(table)
    pad = -size % ALIGN
    if pad:
        head += b" " * pad
        size += pad
    parts = [MAGIC + _LENGTHS.pack(len(head), len(table)) + head + table]
    for buf, pad in zip(buffers, after):
        if pad is not None:
            parts.append(buf)
            if pad:
                parts.append(pad)
    return parts, size + nbytes


def encode_parts(header: dict, tensors: dict | None = None, bfloat16: bool = False,
                 base: Base | None = None) -> list:
    """The pieces of `encode`'s message, in order (`encode_message` without the size).

    >>> parts = encode_parts({}, {"x": np.zeros(2, np.float32)})
    >>> b"".join(parts) == encode({}, {"x": np.zeros(2, np.float32)})
    True
    """
    return encode_message(header, tensors, bfloat16, base)[0]


def encode(header: dict, tensors: dict | None = None, bfloat16: bool = False,
           base: Base | None = None) -> bytes:
    """One message: `header` (a JSON-serializable dict) and named arrays; with
    `bfloat16`, float32 arrays travel truncated to bfloat16 (see the module docstring);
    with `base`, ``base.data`` goes under `header`."""
    return b"".join(encode_message(header, tensors, bfloat16, base)[0])


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


# Numeric dtypes by their wire string, once checked (`_numeric_dtype`).
_DTYPES: dict = {}


def _numeric_dtype(text, name) -> np.dtype:
    dtype = _DTYPES.get(text)
    if dtype is None:
        try:
            dtype = np.dtype(text)
        except TypeError:
            raise _loss(f"tensor '{name}' has an unknown dtype {text!r}") from None
        if dtype.kind not in _NUMERIC_KINDS:
            raise _loss(f"tensor '{name}' has a non-numeric dtype {dtype}")
        if len(_DTYPES) < 64:  # (a peer cannot grow it without bound)
            _DTYPES[text] = dtype
    return dtype


def _valid_shape(shape) -> bool:
    if type(shape) is not list:
        return False
    for d in shape:
        if type(d) is not int or d < 0:
            return False
    return True


def _layout(entry) -> tuple:
    """``(name, dtype, shape, count, nbytes)`` of a table entry, every size checked;
    dtype is a NumPy dtype, or ``"string"`` / ``"bfloat16"``."""
    if type(entry) is not list or len(entry) != 4:
        raise _loss(f"tensor entry {entry!r} is not [name, dtype, shape, nbytes]")
    name, kind, shape, nbytes = entry
    if type(name) is not str or type(nbytes) is not int or nbytes < 0:
        raise _loss(f"tensor entry {entry!r} has no valid name and size")
    if not _valid_shape(shape):
        raise _loss(f"tensor '{name}' has an invalid shape {shape!r}")
    count = math.prod(shape)
    if kind == _STRING:
        return name, _STRING, tuple(shape), count, nbytes
    if kind == _BFLOAT16:
        if 2 * count != nbytes:
            raise _loss(f"bfloat16 tensor '{name}' of shape {shape} needs {2 * count} bytes; "
                        f"the message holds {nbytes}")
        return name, _BFLOAT16, tuple(shape), count, nbytes
    dtype = _numeric_dtype(kind, name)
    if count * dtype.itemsize != nbytes:
        raise _loss(f"tensor '{name}' of shape {shape} and dtype {dtype} needs "
                    f"{count * dtype.itemsize} bytes; the message holds {nbytes}")
    return name, dtype, tuple(shape), count, nbytes


def _read_table(table: bytes) -> tuple[list, Views | None]:
    """``(layout, views)`` of a tensor table, parsed and checked once: views is the C
    `Views` of a table of numeric, non-empty tensors only (else None)."""
    known = _LAYOUTS.get(table)
    if known is None:
        try:
            entries = json.loads(table)
        except ValueError as e:
            raise _loss(f"tensor table is not JSON ({e})") from None
        if type(entries) is not list:
            raise _loss("tensor table is not a list")
        layout = [_layout(entry) for entry in entries]
        plain = all(isinstance(d, np.dtype) and c for _, d, _, c, _ in layout)
        views = Views(layout) if plain and layout else None
        if len(_LAYOUTS) >= _CACHE_SIZE:
            _LAYOUTS.clear()
        known = _LAYOUTS[table] = (layout, views)
    return known


def _tensor_at(view: memoryview, pos: int, item: tuple) -> np.ndarray:
    name, dtype, shape, count, nbytes = item
    if dtype is _STRING:
        return _decode_strings(view[pos:pos + nbytes], list(shape), name)
    if dtype is _BFLOAT16:
        top = np.frombuffer(view, dtype="<u2", count=count, offset=pos) if count else \
            np.zeros(0, "<u2")
        return from_bfloat16(top).reshape(shape)
    if not count:
        out = np.zeros(shape, dtype)
        out.flags.writeable = False
        return out
    return np.frombuffer(view, dtype=dtype, count=count, offset=pos).reshape(shape)


def _json_object(raw: bytes, what: str) -> dict:
    if _SCAN is not None:  # the common case: one JSON object, then the padding's spaces
        try:
            text = raw.decode()
            value, end = _SCAN(text, 0)
        except (ValueError, StopIteration):
            value, end = None, -1
        if type(value) is dict and (end == len(text) or not text[end:].strip(" \t\n\r")):
            return value
    try:  # (anything else: json.loads says what is wrong)
        value = json.loads(raw)
    except ValueError as e:
        raise _loss(f"{what} is not JSON ({e})") from None
    if type(value) is not dict:
        raise _loss(f"{what} is not a JSON object")
    return value


def decode(blob: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and the named arrays of a message (arrays view `blob`). Values inside
    the header may be shared with other decoded headers (a cached `Base`): read them,
    do not change them."""
    view = memoryview(blob)
    if len(view) < _PREFIX.size or view[:4] != MAGIC:
        raise _loss(f"it does not start with the {MAGIC.decode()} magic (a task or client "
                    "of another flowgraph version? every process of a cluster needs the "
                    "same one)")
    head_len, table_len = _LENGTHS.unpack_from(view, 4)
    pos = _PREFIX.size + head_len + table_len
    if pos > len(view):
        raise _loss(f"header and tensor table of {head_len + table_len} bytes run past the "
                    f"message ({len(view)} bytes)")
    raw = bytes(view[_PREFIX.size:_PREFIX.size + head_len])
    cut = raw.find(_BASE_MARK)
    header = _json_object(raw if cut < 0 else raw[cut + 1:], "header")
    if cut >= 0:
        base = _BASES.get(raw[:cut])
        if base is None:
            base = _json_object(raw[:cut], "header base")
            if len(_BASES) >= _CACHE_SIZE:
                _BASES.clear()
            _BASES[raw[:cut]] = base
        header = {**base, **header}
    layout, views = _read_table(bytes(view[pos - table_len:pos]))
    if views is not None:  # C: every array at once, or None if the sizes do not add up
        tensors = views.arrays(view, pos)
        if tensors is not None:
            return header, tensors
    tensors = {}
    end = len(view)
    data = np.frombuffer(view, np.uint8) if layout else None
    for item in layout:
        name, dtype, shape, count, nbytes = item
        if pos + nbytes > end:
            raise _loss(f"tensor '{name}' ({nbytes} bytes) does not fit the message")
        if count and dtype is not _STRING and dtype is not _BFLOAT16:  # a cheap view
            tensors[name] = np.ndarray(shape, dtype, data, pos)
        else:
            tensors[name] = _tensor_at(view, pos, item)
        pos += nbytes + (-nbytes % ALIGN)
        if pos > end:
            raise _loss(f"tensor '{name}' ends inside its padding")
    if pos != end:
        raise _loss(f"{end - pos} bytes follow the last tensor")
    return header, tensors
