"""tf.nn loss and ranking ops (cross-entropies, l2_loss, log_poisson_loss, top_k, in_top_k)
against NumPy references; expected values marked "TF" were printed by TensorFlow 2.15."""

import math

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.ops import nn_loss_ops as nn

RNG = np.random.default_rng(7)


def np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def np_sigmoid_xent(z, x):
    z, x = np.asarray(z, np.float64), np.asarray(x, np.float64)
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


# -- softmax cross-entropy ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_softmax_xent_matches_numpy(sess, dtype):
    logits = (RNG.standard_normal((4, 5)) * 3).astype(dtype)
    labels = RNG.dirichlet(np.ones(5), size=4).astype(dtype)
    loss = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    out = sess.run(loss)
    if dtype == np.float16:  # TF runs float16 logits in float32 and casts the loss back
        assert loss.op.type == "Cast" and loss.name.endswith("/Cast_2:0")
        loss = loss.op.inputs[0]
    # TF's layout: the op's loss is reshaped back to the batch shape ("…/Reshape_2").
    assert loss.op.type == "Reshape" and loss.name.endswith("/Reshape_2:0")
    assert loss.op.inputs[0].op.type == "SoftmaxCrossEntropyWithLogits" and out.dtype == dtype
    want = -(labels.astype(np.float64) * np_log_softmax(logits)).sum(-1)
    tol = 5e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


def test_softmax_xent_backprop_output(sess):
    logits = RNG.standard_normal((3, 4)).astype(np.float32)
    labels = np.eye(4, dtype=np.float32)[[0, 3, 1]]
    op = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits).op.inputs[0].op
    loss, backprop = sess.run(op.outputs)
    np.testing.assert_allclose(backprop, np.exp(np_log_softmax(logits)) - labels, atol=1e-6)
    assert op.outputs[1].shape.as_list() == [3, 4] and loss.shape == (3,)


def test_softmax_xent_is_stable_for_large_logits(sess):
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 999.0]], np.float32)
    labels = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32)
    out = sess.run(nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, 1.0 + math.log1p(math.exp(-1.0))], rtol=1e-6)
    sparse = nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2], logits=logits)
    np.testing.assert_allclose(sess.run(sparse), out, rtol=1e-6)


def test_softmax_xent_tf_values(sess):
    p = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]],
                 np.float32)
    labels = [[0.0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0.5, 0, 0]]
    out = sess.run(nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=p))
    np.testing.assert_allclose(out, [0.7816719, np.nan, 1.3862944], rtol=1e-6)  # TF


def test_softmax_xent_axis_and_rank3(sess):
    logits = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    labels = RNG.dirichlet(np.ones(3), size=(2, 4)).transpose(0, 2, 1).astype(np.float32)
    loss = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=1)
    assert loss.shape.as_list() == [2, 4]
    want = -(labels * np_log_softmax(logits, axis=1)).sum(1)
    np.testing.assert_allclose(sess.run(loss), want, rtol=1e-5)
    last = nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=-1)
    assert last.shape.as_list() == [2, 3]
    np.testing.assert_allclose(sess.run(last), -(labels * np_log_softmax(logits)).sum(-1),
                               rtol=1e-5)


def test_softmax_xent_v1_stops_label_gradient_and_takes_positions(sess):
    logits = tf.constant([[1.0, 2.0]])
    loss = nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=logits)
    assert loss.op.name.startswith("softmax_cross_entropy_with_logits_sg")
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert "StopGradient" in types
    np.testing.assert_allclose(sess.run(loss), -np_log_softmax([[1.0, 2.0]])[:, 1], rtol=1e-6)
    # TF 2.15's compat.v1 takes labels and logits by position (TF 1.x had `_sentinel`).
    positional = nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], logits)
    np.testing.assert_allclose(sess.run(positional), sess.run(loss))
    with pytest.raises(ValueError, match="labels and logits"):
        nn.softmax_cross_entropy_with_logits(logits=logits)


def test_softmax_xent_shape_inference_and_errors():
    x = tf.placeholder(tf.float32, [None, 5])
    loss = nn.softmax_cross_entropy_with_logits_v2(labels=tf.placeholder(tf.float32), logits=x)
    assert loss.shape.as_list() == [None]
    unknown = nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.placeholder(tf.float32), logits=tf.placeholder(tf.float32))
    assert unknown.shape.ndims is None
    r3 = nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.placeholder(tf.float32, [None, 3, 5]),
        logits=tf.placeholder(tf.float32, [2, None, 5]))
    assert r3.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="same shape"):
        nn.softmax_cross_entropy_with_logits_v2(labels=tf.zeros([3, 4]), logits=tf.zeros([3, 5]))
    with pytest.raises(TypeError, match="int32"):
        nn.softmax_cross_entropy_with_logits_v2(labels=[[1, 0]], logits=[[1, 2]])
    ints = nn.softmax_cross_entropy_with_logits_v2(labels=[[1, 0]], logits=[[1.0, 2.0]])
    assert ints.dtype == tf.float32


# -- sparse softmax cross-entropy --------------------------------------------------------------
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_softmax_xent_matches_numpy(sess, label_dtype):
    logits = (RNG.standard_normal((6, 5)) * 4).astype(np.float32)
    labels = np.array([0, 4, 2, 2, 1, 3], label_dtype)
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.op.type == "SparseSoftmaxCrossEntropyWithLogits"
    assert loss.op.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
    out = sess.run(loss)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, -np_log_softmax(logits)[np.arange(6), labels], rtol=1e-5)
    backprop = sess.run(loss.op.outputs[1])
    want = np.exp(np_log_softmax(logits))
    want[np.arange(6), labels] -= 1
    np.testing.assert_allclose(backprop, want, atol=1e-6)


def test_sparse_softmax_xent_rank3(sess):
    logits = RNG.standard_normal((2, 3, 4)).astype(np.float64)
    labels = RNG.integers(0, 4, (2, 3))
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3] and loss.dtype == tf.float64
    want = np.take_along_axis(-np_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(sess.run(loss), want, rtol=1e-10)


def test_sparse_softmax_xent_out_of_range_label_fails_at_run_time(sess):
    p = np.ones((3, 4), np.float32)
    for bad in ([1, 5, 2], [1, -1, 2]):
        loss = nn.sparse_softmax_cross_entropy_with_logits(labels=bad, logits=p, name="xent")
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(loss)
        text = str(info.value)
        assert f"label value of {bad[1]}" in text and "[0, 4)" in text
        assert "xent" in text and "SparseSoftmaxCrossEntropyWithLogits" in text


def test_sparse_softmax_xent_static_errors():
    p = tf.zeros([3, 4])
    with pytest.raises(TypeError, match="int32, int64"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1.0, 3.0, 2.0], logits=p)
    with pytest.raises(ValueError, match="Rank mismatch"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[[1], [3], [2]], logits=p)
    with pytest.raises(ValueError, match="Shape mismatch"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 3], logits=p)
    with pytest.raises(ValueError, match="scalars"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=1, logits=1.0)
    assert nn.sparse_softmax_cross_entropy_with_logits([1, 2, 3], p).shape.as_list() == [3]
    shape = nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.int64, [None]), logits=tf.placeholder(tf.float32, [None, 7]))
    assert shape.shape.as_list() == [None]
    unknown = nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.int32), logits=tf.placeholder(tf.float32))
    assert unknown.shape.ndims is None


# -- sigmoid / weighted cross-entropy, l2_loss, log_poisson_loss -----------------------------------
def test_sigmoid_xent_matches_numpy_and_is_stable(sess):
    x = np.array([[0.0, 1000.0, -1000.0], [2.5, -3.0, 0.3]], np.float32)
    z = np.array([[1.0, 0.0, 1.0], [0.2, 1.0, 0.0]], np.float32)
    loss = nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    assert loss.name == "logistic_loss:0" and loss.shape.as_list() == [2, 3]
    np.testing.assert_allclose(sess.run(loss), np_sigmoid_xent(z, x), rtol=1e-6)
    with pytest.raises(ValueError, match="same shape"):
        nn.sigmoid_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=tf.zeros([3, 4]))
    np.testing.assert_allclose(sess.run(nn.sigmoid_cross_entropy_with_logits(z, x)),
                               sess.run(loss))


def test_weighted_xent(sess):
    x = RNG.standard_normal((3, 4)).astype(np.float32) * 5
    z = (RNG.random((3, 4)) > 0.5).astype(np.float32)
    q = 2.5
    out = sess.run(nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=q))
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    want = (1 - zd) * xd + (1 + (q - 1) * zd) * np.log1p(np.exp(-xd))
    np.testing.assert_allclose(out, want, rtol=1e-5)
    tf_values = nn.weighted_cross_entropy_with_logits(targets=[1.0, 0.0], logits=[0.5, 0.1],
                                                      pos_weight=2.0)
    np.testing.assert_allclose(sess.run(tf_values), [0.948154, 0.7443967], rtol=1e-6)  # TF


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_l2_loss(sess, dtype):
    t = RNG.standard_normal((3, 5)).astype(dtype)
    loss = nn.l2_loss(t)
    out = sess.run(loss)
    assert loss.op.type == "L2Loss" and loss.shape.as_list() == [] and out.dtype == dtype
    np.testing.assert_allclose(out, (t.astype(np.float64) ** 2).sum() / 2,
                               rtol=2e-3 if dtype == np.float16 else 1e-6)
    with pytest.raises(TypeError, match="float"):
        nn.l2_loss([[1, 3]])


def test_log_poisson_loss(sess):
    t = np.array([0.0, 0.5, 1.0, 2.0], np.float32)
    c = np.array([0.5, 0.1, 0.3, 0.2], np.float32)
    np.testing.assert_allclose(sess.run(nn.log_poisson_loss(t, c)), np.exp(c) - c * t,
                               rtol=1e-6)
    full = sess.run(nn.log_poisson_loss(t, c, compute_full_loss=True))
    np.testing.assert_allclose(full, [1.6487212, 1.055171, 1.0498588, 1.4732093],
                               rtol=1e-6)  # TF
    with pytest.raises(ValueError, match="same shape"):
        nn.log_poisson_loss([1.0, 2.0], [1.0, 2.0, 3.0])


# -- top_k / in_top_k ----------------------------------------------------------------------------
def np_top_k(x, k):
    idx = np.array([sorted(range(x.shape[-1]), key=lambda j: (-row[j], j))[:k]
                    for row in x.reshape(-1, x.shape[-1])])
    idx = idx.reshape(*x.shape[:-1], k)
    return np.take_along_axis(x, idx, -1), idx


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_top_k_matches_numpy_with_ties(sess, dtype):
    x = RNG.integers(0, 4, (2, 3, 7)).astype(dtype)  # many ties
    values, indices = sess.run(nn.top_k(x, k=4))
    want_v, want_i = np_top_k(x, 4)
    assert values.dtype == dtype and indices.dtype == np.int32
    np.testing.assert_array_equal(indices, want_i)
    np.testing.assert_array_equal(values, want_v)


def test_top_k_tf_values(sess):
    p = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]],
                 np.float32)
    result = sess.run(nn.top_k(p, 3))
    np.testing.assert_array_equal(result.indices, [[1, 2, 0], [0, 2, 1], [0, 1, 2]])  # TF
    np.testing.assert_array_equal(result.values, [[3, 3, 1], [np.nan, 2, 1], [1, 1, 1]])
    values, indices = sess.run(nn.top_k([3, 1, 3, 2], 2))
    np.testing.assert_array_equal(indices, [0, 2])
    np.testing.assert_array_equal(values, [3, 3])


def test_top_k_shapes_and_errors(sess):
    x = tf.placeholder(tf.float32, [None, 6])
    r = nn.top_k(x, 2)
    assert r.values.shape.as_list() == [None, 2] and r.indices.shape.as_list() == [None, 2]
    assert r.values.op.type == "TopKV2" and r.indices.dtype == tf.int32
    assert nn.top_k(tf.placeholder(tf.float32), 2).values.shape.ndims is None
    k = tf.placeholder(tf.int32, [])
    dyn = nn.top_k(x, k)
    assert dyn.values.shape.as_list() == [None, None]
    out = sess.run(dyn, {x: np.arange(12.0).reshape(2, 6), k: 3})
    np.testing.assert_array_equal(out.indices, [[5, 4, 3], [5, 4, 3]])
    with pytest.raises(ValueError, match="last dimension >= k = 7"):
        nn.top_k(x, 7)
    with pytest.raises(ValueError, match="non-negative"):
        nn.top_k(x, -1)
    with pytest.raises(InvalidArgumentError, match="at least k columns"):
        sess.run(dyn, {x: np.zeros((2, 6)), k: 8})


def test_in_top_k_ties_nonfinite_and_range(sess):
    p = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]],
                 np.float32)
    run = sess.run
    np.testing.assert_array_equal(run(nn.in_top_k(p, [2, 0, 3], 1)), [True, False, True])
    np.testing.assert_array_equal(run(nn.in_top_k(p, [1, 1, 3], 1)), [True, False, True])
    np.testing.assert_array_equal(run(nn.in_top_k(p, [7, -1, 3], 2)), [False, False, True])
    t64 = tf.constant([2, 0, 3], tf.int64)
    np.testing.assert_array_equal(run(nn.in_top_k(p, t64, 1)), [True, False, True])


def test_in_top_k_matches_numpy(sess):
    p = RNG.integers(0, 5, (9, 6)).astype(np.float32)
    targets = RNG.integers(0, 6, 9)
    for k in (1, 2, 4):
        out = sess.run(nn.in_top_k(p, targets, k))
        more = (p > p[np.arange(9), targets][:, None]).sum(1)
        np.testing.assert_array_equal(out, more < k)


def test_in_top_k_shapes_and_errors():
    r = nn.in_top_k(tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.int32, [5]), 2)
    assert r.shape.as_list() == [5] and r.dtype == tf.bool and r.op.type == "InTopKV2"
    assert r.op.name == "in_top_k/InTopKV2"
    with pytest.raises(TypeError, match="float32"):
        nn.in_top_k(tf.constant([[1.0, 3.0]], tf.float64), [1], 1)
    with pytest.raises(ValueError, match="batch size"):
        nn.in_top_k(tf.zeros([3, 4]), [1, 2], 1)
    with pytest.raises(ValueError, match="2-D"):
        nn.in_top_k(tf.zeros([4]), [1], 1)
