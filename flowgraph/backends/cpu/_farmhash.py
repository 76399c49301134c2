"""FarmHash Fingerprint64 and TensorFlow's fingerprint combination, vectorized with NumPy.

The reference implementation is `flowgraph/ops/string_hash_ops.py` (pure Python, one
string at a time, validated against TensorFlow's values). This module computes the same
function for a whole batch: strings of up to 32 bytes -- the common case for categorical
features -- are packed into fixed-width uint8 rows and hashed with uint64 array
arithmetic (which wraps modulo 2**64, as the algorithm needs); longer strings go through
the reference one by one. Tests check both paths against the reference on every length
from 0 to 80 bytes.

    values (object array of bytes)
      -> lengths, 32-byte zero-padded rows            (one pass in Python: len, ljust)
      -> per length class (0 | 1-3 | 4-7 | 8-16 | 17-32), the FarmHash formulas on uint64
      -> fingerprints (uint64)

`fingerprints` is what the kernels call: it first looks every value up in a bounded
dictionary of recent fingerprints (categorical values repeat: a hit costs one dict lookup)
and hashes only the misses, with arrays.
"""

from __future__ import annotations

import numpy as np

from flowgraph.ops.string_hash_ops import as_bytes, fingerprint64

__all__ = ["fingerprint64_array", "fingerprint_cat64_array", "fingerprints"]

_U = np.uint64
_K0 = _U(0xC3A5C85C97CB3127)
_K1 = _U(0xB492B66FBE98F273)
_K2 = _U(0x9AE16A3B2F90404F)
_KMUL = _U(0xC6A4A7935BD1E995)
_WIDTH = 32  # bytes hashed with arrays; longer strings use the reference


def _rot(v: np.ndarray, s: int) -> np.ndarray:
    return v if s == 0 else (v >> _U(s)) | (v << _U(64 - s))


def _mix(v: np.ndarray) -> np.ndarray:
    return v ^ (v >> _U(47))


def _h16(u, v, mul):
    a = (u ^ v) * mul
    a ^= a >> _U(47)
    b = (v ^ a) * mul
    b ^= b >> _U(47)
    return b * mul


class _Rows:
    """Byte rows of width 32 with unaligned little-endian loads at per-row offsets."""

    def __init__(self, buf: np.ndarray) -> None:
        self.buf = np.ascontiguousarray(buf, dtype=np.uint8)
        n = len(self.buf)
        mem = self.buf.reshape(-1)
        # Overlapping views: u64[r, o] is the 8 bytes at offset o of row r.
        self.u64 = np.ndarray((n, _WIDTH - 7), "<u8", buffer=mem, strides=(_WIDTH, 1))
        self.u32 = np.ndarray((n, _WIDTH - 3), "<u4", buffer=mem, strides=(_WIDTH, 1))
        self.rows = np.arange(n)

    def load64(self, offsets) -> np.ndarray:
        return self.u64[self.rows, offsets].astype(np.uint64)

    def load32(self, offsets) -> np.ndarray:
        return self.u32[self.rows, offsets].astype(np.uint64)


def _len0to16(r: _Rows, n: np.ndarray) -> np.ndarray:
    """Fingerprints of rows whose lengths are at most 16; all lengths classes computed on
    every row and selected, which is faster than splitting the batch for small batches."""
    n64 = n.astype(np.uint64)
    mul = _K2 + n64 * _U(2)
    with np.errstate(over="ignore"):
        out = np.full(len(n), _K2, dtype=np.uint64)
        m8 = n >= 8
        if m8.any():
            a = r.load64(0) + _K2
            b = r.load64(np.maximum(n - 8, 0))
            c = _rot(b, 37) * mul + a
            d = (_rot(a, 25) + b) * mul
            out = np.where(m8, _h16(c, d, mul), out)
        m4 = (n >= 4) & ~m8
        if m4.any():
            first = r.load32(0)
            last = r.load32(np.clip(n - 4, 0, _WIDTH - 4))
            out = np.where(m4, _h16(n64 + (first << _U(3)), last, mul), out)
        m1 = (n > 0) & (n < 4)
        if m1.any():
            buf = r.buf
            s0 = buf[:, 0].astype(np.uint64)
            smid = buf[r.rows, n >> 1].astype(np.uint64)
            slast = buf[r.rows, np.maximum(n - 1, 0)].astype(np.uint64)
            y = (s0 + (smid << _U(8))) & _U(0xFFFFFFFF)
            z = (n64 + (slast << _U(2))) & _U(0xFFFFFFFF)
            out = np.where(m1, _mix((y * _K2) ^ (z * _K0)) * _K2, out)
    return out


def _len17to32(r: _Rows, n: np.ndarray) -> np.ndarray:
    """Fingerprints of rows whose lengths are in [17, 32] (other rows: garbage)."""
    mul = _K2 + n.astype(np.uint64) * _U(2)
    n = np.clip(n, 16, _WIDTH)
    with np.errstate(over="ignore"):
        a = r.load64(0) * _K1
        b = r.load64(8)
        c = r.load64(n - 8) * mul
        d = r.load64(n - 16) * _K2
        return _h16(_rot(a + b, 43) + _rot(c, 30) + d, a + _rot(b + _K2, 18) + c, mul)


def _packed(flat: np.ndarray) -> tuple[np.ndarray, list]:
    """``(fixed, items)``: `flat` as a NumPy bytes array (zero-padded) and as a list of
    bytes objects."""
    try:
        fixed = flat.astype("S")  # C loop; str elements must be ASCII
        items = flat.tolist()
        if any(type(v) is not bytes for v in items):
            items = [as_bytes(v) for v in items]
        return fixed, items
    except (UnicodeEncodeError, TypeError, ValueError):
        items = [as_bytes(v) for v in flat.tolist()]
        return np.array(items, dtype="S") if items else np.zeros(0, "S1"), items


def fingerprint64_array(values) -> np.ndarray:
    """Fingerprint64 of every element of `values` (bytes or str), as a uint64 array of the
    same shape; equal to `string_hash_ops.fingerprint64` element by element.

    Example
    -------
    >>> int(fingerprint64_array(np.array([b"hello"], dtype=object))[0]) % 1000000
    800296
    """
    arr = np.asarray(values, dtype=object)
    flat = arr.reshape(-1)
    if flat.size == 0:
        return np.zeros(arr.shape, dtype=np.uint64)
    fixed, items = _packed(flat)
    n = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    width = max(fixed.dtype.itemsize, 1)
    raw = np.frombuffer(fixed.tobytes(), dtype=np.uint8).reshape(len(items), width)
    buf = np.zeros((len(items), _WIDTH), dtype=np.uint8)
    buf[:, :min(width, _WIDTH)] = raw[:, :_WIDTH]
    rows = _Rows(buf)
    out = _len0to16(rows, np.minimum(n, 16))
    medium = n > 16
    if medium.any():
        out = np.where(medium, _len17to32(rows, n), out)
    for i in np.flatnonzero(n > _WIDTH).tolist():
        out[i] = fingerprint64(items[i])
    return out.reshape(arr.shape)


def fingerprint_cat64_array(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """`string_hash_ops.fingerprint_cat64` on uint64 arrays (broadcasting)."""
    with np.errstate(over="ignore"):
        result = np.asarray(fp1, np.uint64) ^ _KMUL
        result = result ^ (_mix(np.asarray(fp2, np.uint64) * _KMUL) * _KMUL)
        result = result * _KMUL
        result = _mix(result) * _KMUL
        return _mix(result)


_cache: dict = {}
_CACHE_MAX = 1 << 17  # entries (~15 MB of short keys); cleared when full


def fingerprints(values) -> np.ndarray:
    """Fingerprint64 of every element of `values` (bytes or str; flattened), uint64.

    Example
    -------
    >>> int(fingerprints(np.array([b"hello", "hello"], dtype=object))[1]) % 1000000
    800296
    """
    items = np.asarray(values, dtype=object).reshape(-1).tolist()
    cache = _cache
    got = [cache.get(v) for v in items]
    if None in got:
        miss = [i for i, g in enumerate(got) if g is None]
        fps = fingerprint64_array(np.array([items[i] for i in miss] + [None],
                                           dtype=object)[:-1]).tolist()
        if len(cache) + len(miss) > _CACHE_MAX:
            cache.clear()
        for i, fp in zip(miss, fps, strict=True):
            got[i] = fp
            cache[items[i]] = fp
    return np.array(got, dtype=np.uint64)
