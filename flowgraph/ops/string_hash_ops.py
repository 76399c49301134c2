"""String hashing and vocabulary lookups for categorical features.

`to_hash_bucket_fast(s, n)` is ``Fingerprint64(s) mod n``, where Fingerprint64 is
FarmHash's 64-bit fingerprint (``farmhashna::Hash64``), the function TensorFlow uses. It is
implemented here in pure Python on the UTF-8 bytes of each string, so bucket ids are the
same in every process, on every machine and as in TensorFlow (tests compare them with
values TensorFlow computed). Python's ``hash()`` is never used.

`fingerprint_cat64(a, b)` combines two fingerprints the way TensorFlow's hashed feature
crosses do (`tf.sparse.cross_hashed`).

`VocabLookup` maps strings or integers to ids through an in-memory hash table built once
per session from a vocabulary list or a vocabulary file; keys not in it go to
``vocab_size + Fingerprint64(key) mod num_oov_buckets`` (integers are hashed as their
decimal text) or, without OOV buckets, to `default_value`. Kernels:
`flowgraph/backends/cpu/kernels_sparse.py`.

Example
-------
>>> import flowgraph as tf
>>> ids = tf.strings.to_hash_bucket_fast(["hello", "a"], 1000000)
>>> with tf.Session() as sess:
...     print(sess.run(ids))
[800296 363939]
"""

from __future__ import annotations

import functools

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.farmhash_words import (
    K0,
    K1,
    K2,
    M64,
    fetch32,
    fetch64,
    hash16,
    hash_len_0_to_16,
    rotate,
    shift_mix,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["as_string", "string_to_hash_bucket_fast"]

_KMUL = 0xC6A4A7935BD1E995
_M, _K0, _K1, _K2 = M64, K0, K1, K2
_u64, _u32, _rot, _mix, _h16 = fetch64, fetch32, rotate, shift_mix, hash16


# -- FarmHash Fingerprint64 ---------------------------------------------------------------
def _len0to16(s: bytes, n: int) -> int:
    return hash_len_0_to_16(s[:n])


def _len17to32(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K1) & _M
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _M
    d = (_u64(s, n - 16) * _K2) & _M
    return _h16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K2) & _M
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _M
    d = (_u64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _h16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_u64(s, 16) * mul) & _M
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _M
    h = ((z + _u64(s, n - 24)) * mul) & _M
    return _h16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _u64(s, i), _u64(s, i + 8), _u64(s, i + 16), _u64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


@functools.lru_cache(maxsize=1 << 16)
def fingerprint64(data: bytes) -> int:
    """FarmHash Fingerprint64 of `data` (bytes, or str as UTF-8): an int in [0, 2**64).

    Example
    -------
    >>> fingerprint64(b"hello") % 1000000
    800296
    """
    s = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _u64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _u64(s, i + 40)) & _M
        z = (_rot((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak32(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w[0] + ((n - 1) & 63)) & _M
    v0 = (v[0] + w0) & _M
    w0 = (w0 + v0) & _M
    v, w = (v0, v[1]), (w0, w[1])
    x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _u64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
    z, x = x, z
    return _h16((_h16(v[0], w[0], mul) + _mix(y) * _K0 + z) & _M,
                (_h16(v[1], w[1], mul) + x) & _M, mul)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """Combine two 64-bit fingerprints (order matters), as TensorFlow's hashed crosses do.

    Example
    -------
    >>> fingerprint_cat64(1, 2) != fingerprint_cat64(2, 1)
    True
    """
    result = fp1 ^ _KMUL
    result ^= (_mix((fp2 * _KMUL) & _M) * _KMUL) & _M
    result = (result * _KMUL) & _M
    result = (_mix(result) * _KMUL) & _M
    return _mix(result)


def as_bytes(v) -> bytes:
    """A string tensor element (`bytes` from graph constants, `str` from feeds) as bytes."""
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


# -- StringToHashBucketFast ---------------------------------------------------------------
@register_op("StringToHashBucketFast", attrs={"num_buckets": 1},
             dtype_fn=fixed_dtype(_dtypes.int64))
def _hash_bucket_shape(op, x):
    if op.attrs["num_buckets"] < 1:
        raise op.shape_error(f"num_buckets must be >= 1, got {op.attrs['num_buckets']}")
    return [x]


def to_hash_bucket_fast(input, num_buckets: int, name: str | None = None):
    """Hash each string of `input` into ``[0, num_buckets)``: ``Fingerprint64(s) %
    num_buckets`` (FarmHash, identical to TensorFlow's ids). Returns int64.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.strings.to_hash_bucket_fast([["a"], ["hello"]], 100)))
    [[39]
     [96]]
    """
    x = convert_to_tensor(input, dtype=_dtypes.string, name="input")
    if x.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"to_hash_bucket_fast: input must be a string tensor, got "
                        f"{x.dtype.name} ({x.name}); use tf.as_string first")
    if int(num_buckets) < 1:
        raise ValueError(f"to_hash_bucket_fast: num_buckets must be >= 1, got {num_buckets}")
    return make_tensor("StringToHashBucketFast", [x], {"num_buckets": int(num_buckets)},
                       name=name or "StringToHashBucketFast")


string_to_hash_bucket_fast = to_hash_bucket_fast


# -- AsString ------------------------------------------------------------------------------
@register_op("AsString", attrs={"precision": -1, "scientific": False, "shortest": False,
                                 "width": -1, "fill": ""},
             dtype_fn=fixed_dtype(_dtypes.string))
def _as_string_shape(op, x):
    if op.inputs[0].dtype.base_dtype == _dtypes.string:
        raise op.shape_error("input is already a string tensor")
    return [x]


def as_string(input, precision: int = -1, scientific: bool = False, shortest: bool = False,
              width: int = -1, fill: str = "", name: str | None = None):
    """Each element as text: integers and booleans in decimal (``true``/``false``),
    floats with 6 decimals unless `precision`/`shortest`/`scientific` say otherwise,
    padded to `width` with `fill` (a space unless '0').

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.as_string([7, -12])))
    [b'7' b'-12']
    """
    x = convert_to_tensor(input, name="input")
    if len(fill) > 1:
        raise ValueError(f"as_string: fill must be at most one character, got {fill!r}")
    return make_tensor("AsString", [x], {"precision": int(precision),
                                         "scientific": bool(scientific),
                                         "shortest": bool(shortest), "width": int(width),
                                         "fill": fill}, name=name or "AsString")


# -- VocabLookup ---------------------------------------------------------------------------
@register_op("VocabLookup", attrs={"vocabulary": [], "vocabulary_file": "", "vocab_size": -1,
                                   "default_value": -1, "num_oov_buckets": 0,
                                   "column_name": ""},
             dtype_fn=fixed_dtype(_dtypes.int64))
def _vocab_lookup_shape(op, keys):
    return [keys]


def vocab_lookup(keys, vocabulary=None, vocabulary_file: str = "", vocab_size: int = -1,
                 default_value: int = -1, num_oov_buckets: int = 0, column_name: str = "",
                 name: str | None = None):
    """int64 ids of `keys` (strings or integers) in a vocabulary list or file (one key per
    line, the first `vocab_size` lines). Unknown keys get `default_value`, or with
    ``num_oov_buckets > 0`` ``vocab_size + Fingerprint64(key) % num_oov_buckets``.

    Example
    -------
    >>> import flowgraph as tf
    >>> ids = vocab_lookup(["b", "zz", "a"], vocabulary=["a", "b"])
    >>> with tf.Session() as sess:
    ...     print(sess.run(ids))
    [ 1 -1  0]
    """
    with name_scope(name, "VocabLookup", [keys]) as scope:
        k = convert_to_tensor(keys, name="keys")
        if not (k.dtype.base_dtype == _dtypes.string or k.dtype.is_integer):
            raise TypeError(f"vocab_lookup: keys must be strings or integers, got "
                            f"{k.dtype.name} ({k.name})")
        vocab = [] if vocabulary is None else [
            v.decode("utf-8") if isinstance(v, bytes) else v for v in vocabulary]
        if k.dtype.is_integer:
            vocab = [int(v) for v in vocab]
        else:
            vocab = [str(v) for v in vocab]
        return make_tensor("VocabLookup", [k], {
            "vocabulary": vocab, "vocabulary_file": str(vocabulary_file or ""),
            "vocab_size": int(vocab_size if vocab_size is not None else -1),
            "default_value": int(default_value), "num_oov_buckets": int(num_oov_buckets),
            "column_name": column_name}, name=scope)


not_differentiable("StringToHashBucketFast", "AsString", "VocabLookup")
