"""The 64-bit word operations FarmHash's fingerprints are built from, shared by
``Fingerprint64`` (`flowgraph.ops.string_hash_ops`, ``tf.string_to_hash_bucket_fast``) and
``Fingerprint128`` (`flowgraph.backends.cpu._fingerprint128`, ``SdcaFprint``). Python
integers masked to 64 bits.

>>> hash_len_0_to_16(b"") == K2
True
"""

from __future__ import annotations

__all__ = ["K0", "K1", "K2", "M64", "fetch32", "fetch64", "hash16", "hash_len_0_to_16",
           "rotate", "shift_mix"]

M64 = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def fetch64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 8], "little")


def fetch32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 4], "little")


def rotate(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & M64


def shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def hash16(u: int, v: int, mul: int) -> int:
    """Two words mixed into one by `mul` (Murmur-style)."""
    a = ((u ^ v) * mul) & M64
    a ^= a >> 47
    b = ((v ^ a) * mul) & M64
    b ^= b >> 47
    return (b * mul) & M64


def hash_len_0_to_16(s: bytes) -> int:
    """The hash of a string of at most 16 bytes (both fingerprints start here)."""
    n = len(s)
    if n >= 8:
        mul = K2 + n * 2
        a = (fetch64(s, 0) + K2) & M64
        b = fetch64(s, n - 8)
        c = (rotate(b, 37) * mul + a) & M64
        d = ((rotate(a, 25) + b) * mul) & M64
        return hash16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        return hash16((n + (fetch32(s, 0) << 3)) & M64, fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (shift_mix(((y * K2) ^ (z * K0)) & M64) * K2) & M64
    return K2
