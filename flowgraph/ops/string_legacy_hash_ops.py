"""``tf.string_to_hash_bucket`` (TensorFlow's legacy ``StringToHashBucket``: its
MurmurHash-style ``Hash64`` with seed 0xDECAFCAFFE) and ``tf.string_to_hash_bucket_strong``
(``StringToHashBucketStrong``: keyed SipHash-2-4), each modulo `num_buckets`, equal to
TensorFlow's values. New code uses `tf.strings.to_hash_bucket_fast` (FarmHash).

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.string_to_hash_bucket_strong(["a", "b"], 10, key=[1, 2])).shape
(2,)
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["string_to_hash_bucket", "string_to_hash_bucket_strong"]

_M64 = (1 << 64) - 1


def _same(op, x):
    return [x]


register_op("StringToHashBucket", attrs={"num_buckets": 1},
            dtype_fn=fixed_dtype(_dtypes.int64))(_same)
register_op("StringToHashBucketStrong", attrs={"num_buckets": 1, "key": ()},
            dtype_fn=fixed_dtype(_dtypes.int64))(_same)
not_differentiable("StringToHashBucket", "StringToHashBucketStrong")


def hash64(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's ``Hash64`` (a MurmurHash64A variant) of `data`."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(data)
    h = (seed ^ (n * m)) & _M64
    full = n - n % 8
    for i in range(0, full, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * m) & _M64
        k ^= k >> r
        k = (k * m) & _M64
        h ^= k
        h = (h * m) & _M64
    rest = data[full:]
    if rest:
        for j in range(len(rest) - 1, 0, -1):
            h ^= rest[j] << (8 * j)
        h ^= rest[0]
        h = (h * m) & _M64
    h ^= h >> r
    h = (h * m) & _M64
    h ^= h >> r
    return h


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of `data` with the 128-bit key ``(k0, k1)``."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, n):
        for _ in range(n):
            v0 = (v0 + v1) & _M64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _M64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _M64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _M64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(data)
    full = n - n % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def _strings(x):
    t = convert_to_tensor(x, name="string_tensor")
    if t.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"string_tensor must be a string tensor, got {t.dtype.base_dtype.name}")
    return t


def _buckets(num_buckets, fn):
    n = int(num_buckets)
    if n < 1:
        raise ValueError(f"tf.{fn}: num_buckets must be positive, got {num_buckets}")
    return n


def string_to_hash_bucket(string_tensor=None, num_buckets=None, name=None, input=None):
    """``Hash64(s) % num_buckets`` for each string (TensorFlow's legacy hash); `input` is
    TF 2's name for `string_tensor`."""
    if input is not None and string_tensor is not None:
        raise ValueError("Cannot specify both 'input' and 'string_tensor'")
    string_tensor = input if input is not None else string_tensor
    return make_tensor("StringToHashBucket", [_strings(string_tensor)],
                       {"num_buckets": _buckets(num_buckets, "string_to_hash_bucket")},
                       name=name or "StringToHashBucket")


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):
    """``SipHash-2-4(key, s) % num_buckets`` for each string: a keyed hash whose buckets
    an adversary cannot predict without `key` (two uint64s)."""
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"tf.string_to_hash_bucket_strong: key must hold two integers, got "
                         f"{key}")
    for k in key:
        if not -(1 << 63) <= k < (1 << 63):
            raise ValueError(f"tf.string_to_hash_bucket_strong: key value {k} is out of the "
                             "int64 range")
    return make_tensor("StringToHashBucketStrong", [_strings(input)],
                       {"num_buckets": _buckets(num_buckets, "string_to_hash_bucket_strong"),
                        "key": tuple(key)}, name=name or "StringToHashBucketStrong")
