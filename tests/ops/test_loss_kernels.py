"""The one-pass softmax cross-entropy kernels (flowgraph/backends/cpu/_loss.pyx) behind
SparseSoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyWithLogits.

Each kernel is checked against a float64 NumPy reference and against the NumPy path of
`kernels_nn_loss.py` (the fallback for other dtypes and layouts). Gradients are not checked
here: `test_gradient_registry.py` checks both ops against float64 finite differences, with
float64 2-D logits, i.e. through these kernels.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import _loss, kernels_nn_loss  # no skip: the build must have it
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.ops import nn_loss_ops as nn
from tests.ops.module_spy import ModuleSpy

RNG = np.random.default_rng(11)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-6}  # rtol; the backprop also gets atol = rtol / 10
# (rows, classes): one class, an empty batch, no classes, several blocks of rows with a
# partial last one (64 rows a block for 7 classes), one row a block (>= 2048 classes).
SHAPES = [(1, 1), (5, 1), (0, 4), (0, 0), (3, 2), (256, 10), (300, 7), (3, 2500), (17, 33)]


def ref_sparse(x, labels):
    """float64 reference ``(loss, backprop)`` of the sparse cross-entropy."""
    x = x.astype(np.float64)
    if x.size == 0:
        return np.zeros(x.shape[0]), x.copy()
    z = x - x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(x.shape[0])
    backprop = np.exp(z - lse)
    backprop[rows, labels] -= 1
    return lse[:, 0] - z[rows, labels], backprop


def ref_dense(x, y):
    """float64 reference ``(loss, backprop)`` of the dense cross-entropy."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    if x.shape[1] == 0:
        return np.zeros(x.shape[0]), np.zeros(x.shape)
    z = x - x.max(axis=1, keepdims=True)
    log_sm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    terms = np.where(y == 0, 0.0, -y * log_sm)
    return terms.sum(axis=1), np.exp(log_sm) - y


def numpy_path(fn, *args):
    """Run kernel `fn` with the Cython module hidden: its NumPy path."""
    saved = kernels_nn_loss._loss
    kernels_nn_loss._loss = None
    try:
        return fn(*args)
    finally:
        kernels_nn_loss._loss = saved


def assert_matches(got, want, dtype):
    loss, backprop = got
    want_loss, want_backprop = want
    assert loss.dtype == dtype and backprop.dtype == dtype
    assert loss.shape == want_loss.shape and backprop.shape == want_backprop.shape
    rtol = TOL[dtype]
    np.testing.assert_allclose(loss, want_loss, rtol=rtol, atol=rtol / 10)
    np.testing.assert_allclose(backprop, want_backprop, rtol=rtol, atol=rtol / 10)


# -- agreement with NumPy -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_matches_numpy(dtype, shape, label_dtype):
    n, c = shape
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    labels = RNG.integers(0, max(c, 1), n).astype(label_dtype)
    got = _loss.sparse_xent(x, labels)
    assert_matches(got, ref_sparse(x, labels), dtype)
    fallback = numpy_path(kernels_nn_loss.sparse_softmax_cross_entropy_with_logits, x, labels)
    assert_matches(got, fallback, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dense_matches_numpy(dtype, shape):
    n, c = shape
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    y = RNG.dirichlet(np.ones(c), size=n).astype(dtype) if c else np.zeros(shape, dtype)
    if n > 1 and c > 1:
        y[0] = 0  # a one-hot row, with classes of probability 0
        y[0, -1] = 1
    got = _loss.dense_xent(x, y)
    assert_matches(got, ref_dense(x, y), dtype)
    assert_matches(got, numpy_path(kernels_nn_loss.softmax_cross_entropy_with_logits, x, y),
                   dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_logits_neither_overflow_nor_give_nan(dtype):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4], [-1e4, 0.0, 1e4]],
                 dtype)
    labels = np.array([0, 1, 2, 0])
    loss, backprop = _loss.sparse_xent(x, labels)
    assert np.all(np.isfinite(loss)) and np.all(np.isfinite(backprop))
    assert loss[0] == 0 and not np.signbit(loss[0])  # +0 for the dominant class
    np.testing.assert_allclose(loss, [0.0, np.log(3), 2e4 + np.log(2), 2e4], rtol=TOL[dtype])
    assert_matches((loss, backprop), ref_sparse(x, labels), dtype)
    y = np.eye(3, dtype=dtype)[labels]
    dense = _loss.dense_xent(x, y)
    assert np.all(np.isfinite(dense[0])) and np.all(np.isfinite(dense[1]))
    assert_matches(dense, ref_dense(x, y), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_infinite_logits_follow_the_numpy_path(dtype):
    x = np.array([[np.nan, 1, 2], [1, 2, np.nan], [1, np.inf, 2], [-np.inf] * 3,
                  [0, -np.inf, 1]], dtype)
    labels = np.array([1, 0, 2, 0, 2])
    y = np.full(x.shape, 0.5, dtype) * (np.arange(3) != 1)
    with np.errstate(invalid="ignore"):
        for fn, args in ((kernels_nn_loss.sparse_softmax_cross_entropy_with_logits, (x, labels)),
                         (kernels_nn_loss.softmax_cross_entropy_with_logits, (x, y))):
            got, want = fn(*args), numpy_path(fn, *args)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=TOL[dtype], atol=0)  # NaN == NaN
    assert np.isnan(got[0][:4]).all() and np.isfinite(got[0][4])


def test_float32_exp_is_within_2_ulp():
    """Rows [0, v] with v <= -18 give ``backprop[:, 1] = exp(v)`` exactly (the sum of exps
    rounds to 1), so this reads the float32 exp directly, subnormal results included."""
    v = np.linspace(-110, -18, 400_001, dtype=np.float32)
    x = np.stack([np.zeros_like(v), v], axis=1)
    e = _loss.sparse_xent(x, np.zeros(len(v), np.int32))[1][:, 1].astype(np.float64)
    exact = np.exp(v.astype(np.float64))
    ulp = np.spacing(np.maximum(exact, np.finfo(np.float32).tiny).astype(np.float32))
    assert (np.abs(e - exact) / ulp).max() <= 2
    assert e[0] == 0  # exp(-110) underflows


# -- the error for a label out of range ------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_out_of_range_label_raises_the_numpy_path_error(dtype, label_dtype):
    x = np.ones((4, 3), dtype)
    fn = kernels_nn_loss.sparse_softmax_cross_entropy_with_logits
    for bad in ([0, 3, 1, -1], [0, -1, 7, 2], [3, 3, 3, 3]):
        labels = np.array(bad, label_dtype)
        assert _loss.sparse_xent(x, labels) is None
        with pytest.raises(InvalidArgumentError) as fast:
            fn(x, labels)
        with pytest.raises(InvalidArgumentError) as slow:
            numpy_path(fn, x, labels)
        assert str(fast.value) == str(slow.value)
        first = next(v for v in bad if not 0 <= v < 3)
        assert f"label value of {first} which is outside the valid range of [0, 3)" in str(
            fast.value)
    with pytest.raises(InvalidArgumentError, match=r"\[0, 0\)"):
        fn(np.ones((2, 0), dtype), np.zeros(2, label_dtype))


def test_out_of_range_label_through_a_session(sess):
    logits = tf.placeholder(tf.float32, [None, 4])
    labels = tf.placeholder(tf.int64, [None])
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       name="xent")
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(sess.run(loss, {logits: x, labels: [0, 3, 2]}),
                               ref_sparse(x, [0, 3, 2])[0], rtol=1e-5)
    with pytest.raises(InvalidArgumentError) as info:
        sess.run(loss, {logits: x, labels: [0, 4, 2]})
    text = str(info.value)
    assert "label value of 4" in text and "[0, 4)" in text and "Label values: 0 4 2" in text
    assert "xent" in text and "SparseSoftmaxCrossEntropyWithLogits" in text


# -- which path runs ------------------------------------------------------------------------------
def test_kernel_module_uses_the_extension():
    assert kernels_nn_loss._loss is _loss


@pytest.mark.parametrize("dtype", DTYPES)
def test_kernels_take_the_cython_path_and_never_write_inputs(dtype, monkeypatch):
    calls = []
    monkeypatch.setattr(kernels_nn_loss, "_loss", ModuleSpy(_loss, calls))
    x = RNG.standard_normal((6, 5)).astype(dtype)
    labels = np.array([0, 4, 2, 2, 1, 3], np.int32)
    y = RNG.dirichlet(np.ones(5), size=6).astype(dtype)
    x0, labels0, y0 = x.copy(), labels.copy(), y.copy()
    sparse = kernels_nn_loss.sparse_softmax_cross_entropy_with_logits(x, labels)
    dense = kernels_nn_loss.softmax_cross_entropy_with_logits(x, y)
    assert calls == ["sparse_xent", "dense_xent"]
    assert_matches(sparse, ref_sparse(x0, labels0), dtype)
    assert_matches(dense, ref_dense(x0, y0), dtype)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(labels, labels0)
    np.testing.assert_array_equal(y, y0)
    outputs = [*sparse, *dense]
    for out in outputs:  # new arrays, owning their data, shared with nobody
        assert out.flags.owndata and out.flags.c_contiguous
        assert not any(np.shares_memory(out, a) for a in (x, labels, y))
    assert not np.shares_memory(sparse[1], dense[1])


def test_session_runs_the_cython_path_for_float32(sess, monkeypatch):
    calls = []
    monkeypatch.setattr(kernels_nn_loss, "_loss", ModuleSpy(_loss, calls))
    x = RNG.standard_normal((8, 10)).astype(np.float32)
    labels = RNG.integers(0, 10, 8)
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
    dense = nn.softmax_cross_entropy_with_logits_v2(labels=np.eye(10, dtype=np.float32)[labels],
                                                    logits=x)
    out, out_dense = sess.run([loss, dense])
    assert sorted(calls) == ["dense_xent", "sparse_xent"]
    np.testing.assert_allclose(out, ref_sparse(x, labels)[0], rtol=1e-5)
    np.testing.assert_allclose(out_dense, out, rtol=1e-5)


def test_other_dtypes_and_layouts_take_the_numpy_path(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels_nn_loss, "_loss", ModuleSpy(_loss, calls))
    sparse = kernels_nn_loss.sparse_softmax_cross_entropy_with_logits
    dense = kernels_nn_loss.softmax_cross_entropy_with_logits
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    labels = np.array([0, 3, 1, 2, 0])
    y = RNG.dirichlet(np.ones(4), size=5).astype(np.float32)
    half = sparse(x.astype(np.float16), labels)
    assert half[0].dtype == np.float16
    np.testing.assert_allclose(half[0], ref_sparse(x, labels)[0], rtol=5e-3)
    f_order = np.asfortranarray(x)
    assert_matches(sparse(f_order, labels), ref_sparse(x, labels), np.float32)
    assert_matches(sparse(x, np.stack([labels, labels], 1)[:, 0]), ref_sparse(x, labels),
                   np.float32)  # strided labels
    assert_matches(dense(f_order, y), ref_dense(x, y), np.float32)
    assert_matches(dense(x, y.astype(np.float64)), ref_dense(x, y), np.float32)  # mixed
    assert_matches(dense(x, y[:1]), ref_dense(x, np.repeat(y[:1], 5, 0)), np.float32)
    assert calls == []


def test_direct_calls_reject_what_the_kernels_do_not_take():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="features"):
        _loss.sparse_xent(x.astype(np.float16), np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="features"):
        _loss.sparse_xent(np.asfortranarray(np.zeros((3, 4), np.float32)), np.zeros(3))
    with pytest.raises(TypeError, match="labels"):
        _loss.sparse_xent(x, np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="3 rows"):
        _loss.sparse_xent(x, np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="same dtype"):
        _loss.dense_xent(x, x.astype(np.float64))
    with pytest.raises(ValueError, match="shape"):
        _loss.dense_xent(x, x[:2])


def test_kernels_release_the_gil():
    """Two threads run both kernels on large inputs concurrently and get the right answer."""
    x = (RNG.standard_normal((4096, 64)) * 3).astype(np.float32)
    labels = RNG.integers(0, 64, 4096)
    y = np.eye(64, dtype=np.float32)[labels]
    want = _loss.sparse_xent(x, labels)
    results = [None, None]

    def work(k):
        for _ in range(5):
            results[k] = (_loss.sparse_xent(x, labels), _loss.dense_xent(x, y))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sparse, dense in results:
        np.testing.assert_array_equal(sparse[0], want[0])
        np.testing.assert_array_equal(sparse[1], want[1])
        np.testing.assert_allclose(dense[0], want[0], rtol=1e-5)
