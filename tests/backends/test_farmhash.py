"""The vectorized FarmHash of the CPU kernels against the pure-Python reference
(`flowgraph/ops/string_hash_ops.py`, itself checked against TensorFlow's ids), and the
vectorized hashed cross against the general per-row cross."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import _farmhash, kernels_sparse
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import string_hash_ops as sh

R = np.random.RandomState(7)


def _reference(values):
    return [sh.fingerprint64.__wrapped__(sh.as_bytes(v)) for v in values]


def test_every_length_class_matches_the_reference():
    # 0, 1-3, 4-7, 8-16, 17-32 (arrays) and 33-80 (reference path), random bytes with
    # NULs and high bytes, several strings per length so that lengths mix in one batch.
    values = [bytes(R.randint(0, 256, size=n).astype(np.uint8)) for n in range(81)
              for _ in range(5)]
    R.shuffle(values)
    got = _farmhash.fingerprint64_array(np.array(values, dtype=object))
    assert got.dtype == np.uint64
    assert got.tolist() == _reference(values)


@pytest.mark.parametrize("values", [
    ["a", "hello", "héllo wörld", "", "日本語のテキスト、三十二バイトを超える長さ"],
    [b"ab\0", b"\0", b"x" * 16, b"y" * 17, b"z" * 32, b"w" * 33],
    [b"only", "mixed", b"types"],
])
def test_str_bytes_and_utf8(values):
    arr = np.array(values, dtype=object)
    assert _farmhash.fingerprint64_array(arr).tolist() == _reference(values)
    assert _farmhash.fingerprints(arr).tolist() == _reference(values)
    # Second call: every value comes from the cache.
    assert _farmhash.fingerprints(arr).tolist() == _reference(values)


def test_shapes_and_empty():
    arr = np.array([["a", "b"], ["c", "d"]], dtype=object)
    assert _farmhash.fingerprint64_array(arr).shape == (2, 2)
    assert _farmhash.fingerprint64_array(np.zeros((0,), dtype=object)).shape == (0,)
    assert _farmhash.fingerprints(np.zeros((0, 3), dtype=object)).shape == (0,)


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_farmhash, "_cache", {})
    monkeypatch.setattr(_farmhash, "_CACHE_MAX", 8)
    values = [f"v{i}" for i in range(20)]
    for lo in range(0, 20, 4):
        chunk = values[lo:lo + 4]
        assert _farmhash.fingerprints(np.array(chunk, dtype=object)).tolist() == \
            _reference(chunk)
        assert len(_farmhash._cache) <= 8


def test_fingerprint_cat64_array():
    a = R.randint(0, 2**62, size=50).astype(np.uint64) * np.uint64(3)
    b = R.randint(0, 2**62, size=50).astype(np.uint64)
    want = [sh.fingerprint_cat64(int(x), int(y)) for x, y in zip(a, b)]
    assert _farmhash.fingerprint_cat64_array(a, b).tolist() == want


def test_hash_bucket_kernel_matches_tensorflow_ids(sess):
    # Ids from the module docstring of string_hash_ops (TensorFlow's values).
    ids = tf.strings.to_hash_bucket_fast(["hello", "a"], 1000000)
    assert sess.run(ids).tolist() == [800296, 363939]


def _cross_both_ways(monkeypatch, sess, inputs, **kw):
    fast = sess.run(tf.sparse.cross_hashed(inputs, **kw))
    monkeypatch.setattr(kernels_sparse, "_cross_hashed_single", lambda *a: None)
    slow = sess.run(tf.sparse.cross_hashed(inputs, **kw))
    return fast, slow


@pytest.mark.parametrize("num_buckets", [1000, 0])
def test_single_value_cross_equals_the_general_cross(monkeypatch, sess, num_buckets):
    n = 40
    rows = np.sort(R.choice(n, size=30, replace=False))  # some rows empty
    site = SparseTensor(np.stack([rows, np.zeros_like(rows)], 1),
                        np.array([f"s{i % 7}" for i in rows], dtype=object), [n, 1])
    ad = tf.constant(np.array([[f"ad{i % 11}"] for i in range(n)], dtype=object))
    user = tf.constant(R.randint(-5, 10**6, size=(n, 1)).astype(np.int64))
    fast, slow = _cross_both_ways(monkeypatch, sess, [site, ad, user],
                                  num_buckets=num_buckets, hash_key=0xDECAF)
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)
    assert fast.indices[:, 0].tolist() == rows.tolist()


def test_multi_value_rows_take_the_general_path(monkeypatch, sess):
    words = SparseTensor([[0, 0], [0, 1], [2, 0]], ["hello", "world", "foo"], [3, 2])
    dense = tf.constant([["a"], ["c"], ["e"]])
    fast, slow = _cross_both_ways(monkeypatch, sess, [words, dense], num_buckets=100)
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)
