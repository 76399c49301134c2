"""tf.layers.dense / dropout / flatten: NumPy references, naming, reuse, losses."""

import doctest

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.layers import core


def _init(sess):
    sess.run(tf.global_variables_initializer())


def test_dense_numpy_reference_any_batch(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu)
    assert y.shape.as_list() == [None, 4]
    _init(sess)
    k, b = sess.run(tf.trainable_variables())
    for n in (1, 5):
        xv = np.random.RandomState(n).randn(n, 3).astype(np.float32)
        np.testing.assert_allclose(sess.run(y, {x: xv}), np.maximum(xv @ k + b, 0), rtol=1e-5)
    assert k.shape == (3, 4) and not b.any()
    assert np.abs(k).max() <= np.sqrt(6 / 7)


def test_dense_rank3_contracts_last_axis(sess):
    x = tf.placeholder(tf.float32, [None, None, 3])
    y = tf.layers.dense(x, 2, bias_initializer=tf.constant_initializer(0.5))
    assert y.shape.as_list() == [None, None, 2]
    _init(sess)
    k, b = sess.run(tf.trainable_variables())
    xv = np.random.RandomState(0).randn(4, 5, 3).astype(np.float32)
    np.testing.assert_allclose(sess.run(y, {x: xv}), xv @ k + b, rtol=1e-5)
    z = tf.layers.dense(tf.ones([2, 5, 3]), 6)
    assert z.shape.as_list() == [2, 5, 6]


def test_default_naming_and_op_names():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4)
    y2 = tf.layers.dense(y, 2, activation=tf.nn.relu)
    assert [v.name for v in tf.global_variables()] == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert y.op.type == "BiasAdd" and y.name == "dense/BiasAdd:0"
    assert y2.name == "dense_1/Relu:0"
    k = tf.global_variables()[0]
    assert k.initializer.inputs[1].op.name.startswith("dense/kernel/Initializer/random_uniform")


def test_named_layer_reuse_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    a = tf.layers.dense(x, 4, name="fc")
    with pytest.raises(ValueError, match=r"^Variable fc/kernel already exists, disallowed"):
        tf.layers.dense(x, 4, name="fc")
    b = tf.layers.dense(x, 4, name="fc", reuse=True)
    assert len(tf.global_variables()) == 2
    assert b.op.name.startswith("fc_2/")  # ops in a new name scope, variables shared
    with pytest.raises(ValueError, match="specified shape"):
        tf.layers.dense(x, 5, name="fc", reuse=True)
    with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
        c = tf.layers.dense(x, 4, name="fc")
        d = tf.layers.dense(x, 4, name="fc")
    assert {v.name for v in tf.global_variables()} >= {"net/fc/kernel:0"}
    assert len(tf.global_variables()) == 4 and a is not c and c is not d


def test_unnamed_layers_reuse_in_reentered_scope():
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("tower"):
        tf.layers.dense(tf.layers.dense(x, 4), 2)
    with tf.variable_scope("tower", reuse=True):
        tf.layers.dense(tf.layers.dense(x, 4), 2)
    assert [v.name for v in tf.global_variables()] == [
        "tower/dense/kernel:0", "tower/dense/bias:0",
        "tower/dense_1/kernel:0", "tower/dense_1/bias:0"]


def test_layer_object_shares_variables_across_calls(sess):
    layer = tf.layers.Dense(3, use_bias=False, name="proj")
    a = layer(tf.ones([2, 4]))
    b = layer.apply(tf.ones([5, 4]))
    assert len(tf.global_variables()) == 1 and b.shape.as_list() == [5, 3]
    assert layer.trainable_weights == [layer.kernel]
    _init(sess)
    np.testing.assert_allclose(sess.run(a)[0], sess.run(b)[0])


def test_scope_initializer_used_for_kernel_not_bias(sess):
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.5)):
        tf.layers.dense(tf.ones([1, 2]), 3)
    _init(sess)
    k, b = sess.run(tf.global_variables())
    assert (k == 0.5).all() and (b == 0).all()


def test_regularizers_and_activity_regularizer(sess):
    l2 = tf.contrib.layers.l2_regularizer(0.1)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.layers.dense(x, 3, kernel_regularizer=l2, bias_regularizer=l2,
                        activity_regularizer=tf.contrib.layers.l1_regularizer(0.5),
                        kernel_initializer=tf.constant_initializer(0.25),
                        bias_initializer=tf.constant_initializer(1.0))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.op.name for t in losses] == [
        "dense/kernel/Regularizer/l2_regularizer", "dense/bias/Regularizer/l2_regularizer",
        "dense/ActivityRegularizer/truediv"]
    _init(sess)
    got = sess.run([*losses, y])
    np.testing.assert_allclose(got[0], 0.1 * 6 * 0.0625 / 2, rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.1 * 3 / 2, rtol=1e-6)
    np.testing.assert_allclose(got[2], 0.5 * np.abs(got[3]).sum() / 2, rtol=1e-6)
    # Reusing the layer adds no second weight loss.
    tf.layers.dense(x, 3, kernel_regularizer=l2, name="dense", reuse=True)
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 3


def test_trainable_false_and_float64():
    tf.layers.dense(tf.placeholder(tf.float64, [None, 2]), 3, trainable=False)
    assert tf.trainable_variables() == []
    assert all(v.dtype.base_dtype == tf.float64 for v in tf.global_variables())


def test_dense_errors():
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense`"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.ones([3]), 2)
    with pytest.raises(ValueError, match="units"):
        tf.layers.dense(tf.ones([1, 3]), 0)


# -- dropout ---------------------------------------------------------------------------------
def test_dropout_training_python_bool(sess):
    x = tf.placeholder(tf.float32, [None, 50])
    y = tf.layers.dropout(x, rate=0.4, training=True, seed=1)
    idle = tf.layers.dropout(x, rate=0.4)
    assert y.shape.as_list() == [None, 50] and idle.op.type == "Identity"
    xv = np.ones((40, 50), np.float32)
    out = sess.run(y, {x: xv})
    kept = out[out != 0]
    np.testing.assert_allclose(kept, np.full(kept.shape, 1 / 0.6), rtol=1e-6)
    assert abs((out == 0).mean() - 0.4) < 0.04
    np.testing.assert_array_equal(sess.run(idle, {x: xv}), xv)


def test_dropout_training_tensor_and_noise_shape(sess):
    training = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [None, 6, 30])
    y = tf.layers.dropout(x, 0.5, noise_shape=[None, 1, 30], seed=2, training=training)
    xv = np.random.RandomState(0).rand(3, 6, 30).astype(np.float32) + 1
    np.testing.assert_array_equal(sess.run(y, {x: xv, training: False}), xv)
    out = sess.run(y, {x: xv, training: True})
    dropped = out == 0
    assert dropped.any() and (dropped == dropped[:, :1, :]).all()  # same mask on axis 1
    np.testing.assert_allclose(out[~dropped], 2 * xv[~dropped], rtol=1e-6)


def test_dropout_seed_reproducible_and_rate_validation():
    def run():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(5)
            y = tf.layers.dropout(tf.ones([20, 20]), 0.5, training=True)
            return tf.Session().run(y)

    np.testing.assert_array_equal(run(), run())
    with pytest.raises(ValueError, match="rate"):
        tf.layers.dropout(tf.ones([2]), rate=1.0, training=True)
    with pytest.raises(TypeError, match="training"):
        tf.layers.dropout(tf.ones([2]), training=tf.constant(1.0))


def test_flatten(sess):
    x = tf.placeholder(tf.float32, [None, 2, 3, 4])
    f = tf.layers.flatten(x)
    assert f.shape.as_list() == [None, 24] and f.op.name == "flatten/Reshape"
    xv = np.arange(48, dtype=np.float32).reshape(2, 2, 3, 4)
    np.testing.assert_array_equal(sess.run(f, {x: xv}), xv.reshape(2, 24))
    u = tf.layers.flatten(tf.placeholder(tf.float32, [None, None, 3]))
    assert u.shape.as_list() == [None, None]
    np.testing.assert_array_equal(
        sess.run(u, {"Placeholder_1:0": np.ones((2, 5, 3))}), np.ones((2, 15)))
    cf = tf.layers.flatten(tf.constant(xv), data_format="channels_first")
    np.testing.assert_array_equal(sess.run(cf), xv.transpose(0, 2, 3, 1).reshape(2, 24))


def test_docstring_examples():
    result = doctest.testmod(core, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
