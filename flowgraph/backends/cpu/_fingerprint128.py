"""FarmHash's 128-bit fingerprint (``farmhash::Fingerprint128``: the CityHash128
construction of farmhashcc), the hash TensorFlow's ``Fingerprint128`` and the
``SdcaFprint`` op use. Pure Python on 64-bit words (masked), one string at a time.

Example
-------
>>> lo, hi = fingerprint128(b"")
>>> (lo, hi) == fingerprint128(b"")
True
"""

from __future__ import annotations

from flowgraph.framework.farmhash_words import (
    K0,
    K1,
    M64,
    fetch32,
    fetch64,
    hash16,
    hash_len_0_to_16,
    rotate,
    shift_mix,
)

K_MUL = 0x9DDFEA08EB382D69
_M = M64
_fetch64, _fetch32, _rot, _shift_mix = fetch64, fetch32, rotate, shift_mix
_hash_len_0_to_16 = hash_len_0_to_16


def _hash16(u: int, v: int, mul: int = K_MUL) -> int:
    return hash16(u, v, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_fetch64(s, i + 8 * k) for k in range(4))
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def _city_murmur(s: bytes, lo: int, hi: int) -> tuple[int, int]:
    n = len(s)
    a, b, c, d = lo, hi, 0, 0
    if n <= 16:
        a = (_shift_mix((a * K1) & _M) * K1) & _M
        c = (b * K1 + _hash_len_0_to_16(s)) & _M
        d = _shift_mix((a + (_fetch64(s, 0) if n >= 8 else c)) & _M)
    else:
        c = _hash16((_fetch64(s, n - 8) + K1) & _M, a)
        d = _hash16((b + n) & _M, (c + _fetch64(s, n - 16)) & _M)
        a = (a + d) & _M
        pos, left = 0, n - 16
        while True:
            a ^= (_shift_mix((_fetch64(s, pos) * K1) & _M) * K1) & _M
            a = (a * K1) & _M
            b ^= a
            c ^= (_shift_mix((_fetch64(s, pos + 8) * K1) & _M) * K1) & _M
            c = (c * K1) & _M
            d ^= c
            pos += 16
            left -= 16
            if left <= 0:
                break
    a = _hash16(a, c)
    b = _hash16(d, b)
    return a ^ b, _hash16(b, a)


def _city128_seeded(s: bytes, lo: int, hi: int) -> tuple[int, int]:
    n = len(s)
    if n < 128:
        return _city_murmur(s, lo, hi)
    x, y, z = lo, hi, (n * K1) & _M
    v0 = (_rot(y ^ K1, 49) * K1 + _fetch64(s, 0)) & _M
    v1 = (_rot(v0, 42) * K1 + _fetch64(s, 8)) & _M
    w0 = (_rot((y + z) & _M, 35) * K1 + x) & _M
    w1 = (_rot((x + _fetch64(s, 88)) & _M, 53) * K1) & _M
    pos = 0
    while True:
        for _ in range(2):
            x = (_rot((x + y + v0 + _fetch64(s, pos + 8)) & _M, 37) * K1) & _M
            y = (_rot((y + v1 + _fetch64(s, pos + 48)) & _M, 42) * K1) & _M
            x ^= w1
            y = (y + v0 + _fetch64(s, pos + 40)) & _M
            z = (_rot((z + w0) & _M, 33) * K1) & _M
            v0, v1 = _weak32(s, pos, (v1 * K1) & _M, (x + w0) & _M)
            w0, w1 = _weak32(s, pos + 32, (z + w1) & _M, (y + _fetch64(s, pos + 16)) & _M)
            z, x = x, z
            pos += 64
        n -= 128
        if n < 128:
            break
    x = (x + _rot((v0 + z) & _M, 49) * K0) & _M
    y = (y * K0 + _rot(w1, 37)) & _M
    z = (z * K0 + _rot(w0, 27)) & _M
    w0 = (w0 * 9) & _M
    v0 = (v0 * K0) & _M
    done = 0
    while done < n:
        done += 32
        y = (_rot((x + y) & _M, 42) * K0 + v1) & _M
        w0 = (w0 + _fetch64(s, pos + n - done + 16)) & _M
        x = (x * K0 + w0) & _M
        z = (z + w1 + _fetch64(s, pos + n - done)) & _M
        w1 = (w1 + v0) & _M
        v0, v1 = _weak32(s, pos + n - done, (v0 + z) & _M, v1)
        v0 = (v0 * K0) & _M
    x = _hash16(x, v0)
    y = _hash16((y + z) & _M, w0)
    return ((_hash16((x + v1) & _M, w1) + y) & _M, _hash16((x + w1) & _M, (y + v1) & _M))


def fingerprint128(s: bytes) -> tuple[int, int]:
    """``(low64, high64)`` of FarmHash's Fingerprint128 of `s` (unsigned)."""
    if len(s) >= 16:
        return _city128_seeded(s[16:], _fetch64(s, 0), (_fetch64(s, 8) + K0) & _M)
    return _city128_seeded(s, K0, K1)
