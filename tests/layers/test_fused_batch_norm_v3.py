"""FusedBatchNormV3 / FusedBatchNormGradV3: kernels against TensorFlow 2.15's values and a
NumPy reference, gradients against finite differences, and the layer's op layout."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.op_util import make_op

X = np.random.RandomState(1).randn(2, 3, 2, 3).astype(np.float32)
SCALE = np.array([1.0, 2.0, 0.5], np.float32)
OFFSET = np.array([0.1, -0.2, 0.3], np.float32)
MEAN = np.array([0.5, 0.0, -0.5], np.float32)
VAR = np.array([1.0, 2.0, 0.5], np.float32)
DY = np.cos(np.arange(X.size)).reshape(X.shape).astype(np.float32)
ATTRS = {"T": tf.float32, "U": tf.float32, "epsilon": 0.01, "data_format": "NHWC"}


def _bn(x, training, factor=1.0, data_format="NHWC"):
    return make_op("FusedBatchNormV3", [tf.constant(x), *map(tf.constant, (SCALE, OFFSET,
                                                                           MEAN, VAR))],
                   dict(ATTRS, exponential_avg_factor=factor, is_training=training,
                        data_format=data_format))


def test_training_outputs_match_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        op = _bn(X, True, 0.3)
        assert [t.shape.as_list() for t in op.outputs] == [[2, 3, 2, 3]] + [[3]] * 4 + [[0]]
        y, m, v, r1, r2, r3 = sess.run(op.outputs)
        g = make_op("FusedBatchNormGradV3", [tf.constant(DY), tf.constant(X),
                                             tf.constant(SCALE), *op.outputs[3:]],
                    dict(ATTRS, is_training=True))
        dx, dscale, doffset, r4, r5 = sess.run(g.outputs)
    # TensorFlow 2.15 (gen_nn_ops.fused_batch_norm_v3 / _grad_v3, CPU)
    np.testing.assert_allclose(y[0, 0], [[1.6709, -1.8395, 0.2529], [-0.9701, 2.1946, -0.6311]],
                               atol=1e-4)
    np.testing.assert_allclose(m, [0.356, -0.0034, -0.4801], atol=1e-4)
    np.testing.assert_allclose(v, [1.0381, 1.5722, 0.676], atol=1e-4)
    np.testing.assert_allclose(r1, [0.02, -0.0114, -0.4338], atol=1e-4)
    np.testing.assert_allclose(r2, [1.0331, 0.5263, 0.9961], atol=1e-4)
    assert r3.shape == (0,) and r4.shape == () and r5.shape == ()
    np.testing.assert_allclose(dx[0, 0], [[0.2956, 0.6418, -0.1865], [-0.5762, -0.4747, 0.0047]],
                               atol=1e-4)
    np.testing.assert_allclose(dscale, [4.9964, -4.6709, -2.1473], atol=1e-4)
    np.testing.assert_allclose(doffset, [0.5288, -0.1652, -0.7073], atol=1e-4)


def test_bessel_corrected_variance_and_numpy_reference():
    with tf.Graph().as_default(), tf.Session() as sess:
        y, m, v = sess.run(_bn(X, True).outputs[:3])
    rows = X.reshape(-1, 3).astype(np.float64)
    mu, var = rows.mean(0), rows.var(0)
    np.testing.assert_allclose(m, mu, atol=1e-5)
    np.testing.assert_allclose(v, var * 12 / 11, atol=1e-5)
    ref = (X - mu) / np.sqrt(var + 0.01) * SCALE + OFFSET
    np.testing.assert_allclose(y, ref, atol=1e-5)


def test_inference_and_nchw():
    with tf.Graph().as_default(), tf.Session() as sess:
        y, m, v = sess.run(_bn(X, False).outputs[:3])
        yn = sess.run(_bn(X.transpose(0, 3, 1, 2), True, data_format="NCHW").outputs[0])
        yt = sess.run(_bn(X, True).outputs[0])
    np.testing.assert_allclose(y, (X - MEAN) / np.sqrt(VAR + 0.01) * SCALE + OFFSET,
                               atol=1e-5)
    np.testing.assert_array_equal(m, MEAN)
    np.testing.assert_array_equal(v, VAR)
    np.testing.assert_allclose(yn, yt.transpose(0, 3, 1, 2), atol=1e-6)


def test_half_input_computes_in_float32():
    with tf.Graph().as_default(), tf.Session() as sess:
        y, m, _ = tf.nn.fused_batch_norm(tf.constant(X.astype(np.float16)), SCALE, OFFSET,
                                         epsilon=0.01)
        assert (y.dtype, m.dtype) == (tf.float16, tf.float32)
        np.testing.assert_allclose(sess.run(y), sess.run(_bn(X, True).outputs[0]), atol=2e-3)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_gradient_matches_finite_differences(training, data_format):
    rng = np.random.RandomState(3)
    x0 = rng.randn(2, 3, 4, 3).astype(np.float32)
    w = rng.randn(*x0.shape).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x, s, o = (tf.placeholder(tf.float32, a.shape) for a in (x0, SCALE, OFFSET))
        y, _, _ = tf.nn.fused_batch_norm(x, s, o, None if training else MEAN,
                                         None if training else VAR, epsilon=0.01,
                                         data_format=data_format, is_training=training)
        loss = tf.reduce_sum(y * w)
        grads = sess.run(tf.gradients(loss, [x, s, o]), {x: x0, s: SCALE, o: OFFSET})
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "FusedBatchNormGradV3" in types
        values = [x0, SCALE, OFFSET]
        direction = [rng.randn(*a.shape) for a in values]
        h = 1e-2

        def at(t):
            feed = {p: (a + t * d).astype(np.float32)
                    for p, a, d in zip((x, s, o), values, direction)}
            return float(sess.run(loss, feed))

        numeric = (at(h) - at(-h)) / (2 * h)
    analytic = sum(float((g * d).sum()) for g, d in zip(grads, direction))
    np.testing.assert_allclose(analytic, numeric, rtol=2e-2, atol=2e-2)


def _op_types(graph):
    return [op.type for op in graph.get_operations()]


@pytest.mark.parametrize("fused", [None, True])
def test_layer_builds_one_fused_op_as_tensorflow(fused):
    g = tf.Graph()
    with g.as_default():
        y = tf.layers.batch_normalization(tf.constant(X), training=True, fused=fused)
        assert y.name == "batch_normalization/FusedBatchNormV3:0"
        assert [o.name for o in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
            "batch_normalization/AssignMovingAvg", "batch_normalization/AssignMovingAvg_1"]
        assert [v.name for v in tf.global_variables()] == [
            "batch_normalization/gamma:0", "batch_normalization/beta:0",
            "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
            mm, mv = sess.run(["batch_normalization/moving_mean:0",
                               "batch_normalization/moving_variance:0"])
    rows = X.reshape(-1, 3).astype(np.float64)
    np.testing.assert_allclose(mm, 0.01 * rows.mean(0), atol=1e-6)
    np.testing.assert_allclose(mv, 0.99 + 0.01 * rows.var(0, ddof=1), atol=1e-6)


def test_layer_placeholder_training_uses_cond_and_non_fused_cases():
    with tf.Graph().as_default() as g:
        t = tf.placeholder_with_default(True, [])
        y = tf.layers.batch_normalization(tf.constant(X), training=t)
        assert y.name == "batch_normalization/cond/Merge:0"
        assert _op_types(g).count("FusedBatchNormV3") == 2
        y2 = tf.layers.batch_normalization(tf.constant(X), training=True, fused=False)
        y3 = tf.layers.batch_normalization(tf.constant(X[:, 0, 0]), training=True)
        assert y2.name == "batch_normalization_1/batchnorm/add_1:0"
        assert y3.name == "batch_normalization_2/batchnorm/add_1:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([y, y2])
            c = sess.run(y, {t: False})
    np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(c, X / np.sqrt(1.001), atol=1e-5)


def test_keras_layer_builds_fused_op():
    with tf.Graph().as_default():
        y = tf.keras.layers.BatchNormalization()(tf.constant(X), training=True)
        assert y.name == "batch_normalization/FusedBatchNormV3:0"


def test_checkpoint_of_the_elementwise_layout_restores_into_the_fused_one(tmp_path):
    path = str(tmp_path / "bn.ckpt")
    with tf.Graph().as_default():
        y = tf.layers.batch_normalization(tf.constant(X), training=True, fused=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
            saved = sess.run(tf.global_variables())
            tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        t = tf.placeholder_with_default(False, [])
        y = tf.layers.batch_normalization(tf.constant(X), training=t)
        assert y.name == "batch_normalization/cond/Merge:0"
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            restored = sess.run(tf.global_variables())
            before = sess.run("batch_normalization/moving_mean:0")
            out, _ = sess.run([y, tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
            after = sess.run("batch_normalization/moving_mean:0")
    for a, b in zip(saved, restored):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(before, after)  # training False: momentum 1, no change
    mm, mv = saved[2], saved[3]
    np.testing.assert_allclose(out, (X - mm) / np.sqrt(mv + 1e-3) * saved[0] + saved[1],
                               atol=1e-5)
