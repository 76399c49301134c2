"""Recycled output arrays (flowgraph/backends/cpu/_buffers.pyx) behind MatMul, Relu,
ReluGrad and BiasAdd: an array is handed out again only when nobody references it."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import flowgraph as tf

_buffers = pytest.importorskip("flowgraph.backends.cpu._buffers")
empty = _buffers.empty

SHAPE = (129, 257)  # 132 KB of float32: large enough to be kept


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_an_array_is_reused_only_when_unreferenced():
    # earlier tests may have filled the process-wide pool to its cap: start from empty
    # (a full pool keeps nothing, and a freed array's block may come back by chance)
    _buffers.clear()
    a = empty(SHAPE, np.float32)
    b = empty(SHAPE, np.float32)
    assert a is not b and a.flags.c_contiguous and a.dtype == np.float32
    view = a[1:]
    address = _address(a)
    del a
    c = empty(SHAPE, np.float32)
    assert _address(c) != address  # the view still holds the array
    del view
    d = empty(SHAPE, np.float32)
    refs = sys.getrefcount(d)
    assert _address(d) == address
    assert refs == 3  # the kept list, `d`, getrefcount's argument


def test_small_large_and_distinct_keys_are_not_mixed():
    small = empty((4, 4), np.float32)
    assert small.shape == (4, 4)
    a32 = empty(SHAPE, np.float32)
    a64 = empty(SHAPE, np.float64)
    transposed = empty(SHAPE[::-1], np.float32)
    assert a64.dtype == np.float64 and transposed.shape == SHAPE[::-1]
    assert len({_address(a32), _address(a64), _address(transposed)}) == 3
    assert 0 < _buffers.held_bytes() <= _buffers.BUDGET


def test_threads_never_share_an_array():
    errors = []

    def work(k):
        mine = []
        for step in range(300):
            arr = empty(SHAPE, np.float32)
            arr.fill(k)
            mine.append(arr)
            if len(mine) > 3:
                old = mine.pop(0)
                if not (old == k).all():  # another thread wrote into an array we hold
                    errors.append(step)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_fetched_results_survive_later_steps():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((257, 300)).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 257])
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    flat = tf.reshape(h, [-1])
    with tf.Session() as sess:
        feeds = [rng.standard_normal((130, 257)).astype(np.float32) for _ in range(4)]
        kept = [sess.run([h, flat], {x: f}) for f in feeds]
        for _ in range(3):  # later steps recycle whatever nobody holds
            sess.run(h, {x: feeds[0] * 2})
    for f, (hv, fv) in zip(feeds, kept):
        want = np.maximum(f @ w + b, 0)
        np.testing.assert_allclose(hv, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(fv, hv.ravel())


def test_clear_forgets_kept_arrays():
    a = empty(SHAPE, np.float32)
    _buffers.clear()
    assert _buffers.held_bytes() == 0
    b = empty(SHAPE, np.float32)
    assert b is not a


def test_pooled_arrays_start_on_a_cache_line_and_views_of_views_hold_them():
    a = empty(SHAPE, np.float32)
    assert _address(a) % 64 == 0
    address = _address(a)
    view_of_view = a.reshape(-1)[5:]  # NumPy names `a` as the base of both views
    del a
    assert _address(empty(SHAPE, np.float32)) != address
    del view_of_view
    assert _address(empty(SHAPE, np.float32)) == address
