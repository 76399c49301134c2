"""Bounded reading of the ``.npy`` members of a checkpoint (a NumPy ``.npz`` zip).

A member declares its dtype and shape in a small header; the zip directory declares
its compressed and uncompressed sizes. None of these are trusted: before a byte of the
array is allocated, `read_header` parses the header itself (a Python literal of plain
values, parsed with `ast.literal_eval` after a length check, never NumPy's tokenizer),
and `read_array` checks that

    header length + prod(shape) * itemsize == the member's declared uncompressed size
    declared uncompressed size <= MAX_INFLATE_RATIO * compressed size (+ 1 MiB)
    compressed size <= the archive's length

and then reads exactly that many bytes, so a deflate bomb or a tampered size field
stops at the bound instead of filling memory. Every failure is a `CorruptMember`
(a ValueError) whose message says which rule failed; the checkpoint reader turns it
into a `DataLossError` naming the file.

Example
-------
>>> import io, zipfile, numpy as np
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as zf:
...     with zf.open("w.npy", "w") as m:
...         np.lib.format.write_array(m, np.arange(6, dtype=np.int32).reshape(2, 3))
>>> zf = zipfile.ZipFile(buf)
>>> read_header(zf, "w.npy")
((2, 3), dtype('int32'), False)
>>> read_array(zf, "w.npy", archive_size=len(buf.getvalue())).tolist()
[[0, 1, 2], [3, 4, 5]]
"""

from __future__ import annotations

import ast
import math
import struct
import zipfile
import zlib

import numpy as np

__all__ = ["MAX_INFLATE_RATIO", "CorruptMember", "read_array", "read_header"]

MAGIC = b"\x93NUMPY"
MAX_HEADER_BYTES = 65535
MAX_NDIM = 32
# Deflate cannot do better than ~1032:1; checkpoints flowgraph writes are stored (1:1).
MAX_INFLATE_RATIO = 64
_INFLATE_SLACK = 1 << 20
_CHUNK = 1 << 22

# What can go wrong inside zipfile/zlib on hostile input, besides BadZipFile.
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
              NotImplementedError, OverflowError, struct.error, KeyError, IndexError,
              UnicodeDecodeError, RuntimeError, zlib.error)


class CorruptMember(ValueError):
    """A ``.npy`` member breaks one of the rules of this module."""


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError,
            OverflowError) as e:
        raise CorruptMember(f"the .npy header is not a Python literal ({type(e).__name__})") \
            from None


def _parse_header(raw: bytes) -> tuple[tuple[int, ...], np.dtype, bool]:
    doc = _literal(raw.decode("latin1"))
    if not isinstance(doc, dict) or set(doc) != {"descr", "shape", "fortran_order"}:
        raise CorruptMember("the .npy header must be a dict with exactly 'descr', "
                            "'fortran_order' and 'shape'")
    shape, fortran = doc["shape"], doc["fortran_order"]
    if not isinstance(fortran, bool):
        raise CorruptMember(f"fortran_order must be True or False, found {fortran!r:.40}")
    if (not isinstance(shape, tuple) or len(shape) > MAX_NDIM or not all(
            type(d) is int and 0 <= d < 1 << 62 for d in shape)):
        raise CorruptMember(f"shape must be a tuple of at most {MAX_NDIM} non-negative "
                            f"integers, found {shape!r:.80}")
    try:
        dtype = np.lib.format.descr_to_dtype(doc["descr"])
    except Exception as e:  # NumPy raises several types for a bad descr
        raise CorruptMember(f"unknown dtype descr {doc['descr']!r:.80} "
                            f"({type(e).__name__})") from None
    if dtype.hasobject:
        raise CorruptMember("object arrays are not allowed (they would need pickle; "
                            "allow_pickle is never set)")
    if dtype.itemsize == 0 or dtype.kind not in "biufc":
        raise CorruptMember(f"dtype {dtype} is not a numeric dtype of a checkpoint")
    return shape, dtype, fortran


def _read_exact(fp, n: int, what: str) -> bytes:
    data = fp.read(n)
    if len(data) != n:
        raise CorruptMember(f"{what}: {n} bytes expected, {len(data)} present")
    return data


def _header_from(fp) -> tuple[tuple[int, ...], np.dtype, bool, int]:
    """(shape, dtype, fortran_order, header length in bytes) from an open member."""
    magic = _read_exact(fp, 8, "the .npy magic")
    if magic[:6] != MAGIC:
        raise CorruptMember("not a .npy member (bad magic)")
    major = magic[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", _read_exact(fp, 2, "the .npy header length"))
        start = 10
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", _read_exact(fp, 4, "the .npy header length"))
        start = 12
    else:
        raise CorruptMember(f"unsupported .npy format version {major}")
    if hlen > MAX_HEADER_BYTES:
        raise CorruptMember(f"the .npy header declares {hlen} bytes (at most "
                            f"{MAX_HEADER_BYTES})")
    raw = _read_exact(fp, hlen, "the .npy header")
    shape, dtype, fortran = _parse_header(raw)
    return shape, dtype, fortran, start + hlen


def _open(zf: zipfile.ZipFile, member: str):
    try:
        return zf.open(member)
    except ZIP_ERRORS as e:
        raise CorruptMember(f"cannot open member {member} ({type(e).__name__}: {e})") \
            from None


def read_header(zf: zipfile.ZipFile, member: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, fortran_order) of `member`, reading only its header."""
    with _open(zf, member) as fp:
        try:
            shape, dtype, fortran, _ = _header_from(fp)
        except ZIP_ERRORS as e:
            if isinstance(e, CorruptMember):
                raise
            raise CorruptMember(f"{type(e).__name__}: {e}") from None
    return shape, dtype, fortran


def nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """The bytes of an array of `shape` and `dtype` (an exact Python integer)."""
    return math.prod(shape) * dtype.itemsize


def read_array(zf: zipfile.ZipFile, member: str, archive_size: int) -> np.ndarray:
    """The array of `member`, after checking its declared sizes (module docstring)."""
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise CorruptMember(f"no member {member}") from None
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise CorruptMember(f"member {member} uses compression method {info.compress_type} "
                            "(only stored or deflated members are read)")
    if info.compress_size > archive_size:
        raise CorruptMember(f"member {member} declares {info.compress_size} compressed bytes "
                            f"in a {archive_size}-byte file")
    limit = info.compress_size if info.compress_type == zipfile.ZIP_STORED else \
        MAX_INFLATE_RATIO * info.compress_size + _INFLATE_SLACK
    if info.file_size > limit:
        raise CorruptMember(f"member {member} declares {info.file_size} bytes from "
                            f"{info.compress_size} compressed (more than {limit}: a "
                            "decompression bomb or a tampered size)")
    with _open(zf, member) as fp:
        try:
            shape, dtype, fortran, hlen = _header_from(fp)
            size = nbytes(shape, dtype)
            if hlen + size != info.file_size:
                raise CorruptMember(
                    f"member {member} declares shape {list(shape)} of {dtype} "
                    f"({size} bytes) but holds {info.file_size - hlen} bytes of data")
            out = np.empty(size, dtype=np.uint8)
            pos = 0
            while pos < size:
                chunk = fp.read(min(_CHUNK, size - pos))
                if not chunk:
                    raise CorruptMember(f"member {member} ends after {pos} of {size} bytes")
                out[pos:pos + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
                pos += len(chunk)
            fp.read(1)  # reach the end, so that zipfile checks the CRC
        except ZIP_ERRORS as e:
            if isinstance(e, CorruptMember):
                raise
            raise CorruptMember(f"{type(e).__name__}: {e}") from None
    arr = out.view(dtype)
    return arr.reshape(shape[::-1]).transpose() if fortran else arr.reshape(shape)
