"""tf.keras gap-fill (session 16): the backend's nn functions, focal losses, the new
metric classes, Adamax / Nadam / Ftrl and the learning-rate schedules. Expected values
were recorded with the tf-oracle under TF 2.15's tf.compat.v1 (graph mode; F1Score,
FBetaScore and R2Score from TF's eager run, since its graph mode drops their updates).
Arrays are checked by their first six values and their sum (4 decimals), the same
summary the oracle script printed."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras.backend
M = tf.keras.metrics
L = tf.keras.losses
OPT = tf.keras.optimizers

RNG = np.random.RandomState(0)
X4 = RNG.randn(2, 5, 6, 3).astype("float32")
K4 = RNG.randn(3, 2, 3, 4).astype("float32")
X3 = RNG.randn(2, 7, 3).astype("float32")
K3 = RNG.randn(3, 3, 2).astype("float32")
X5 = RNG.randn(1, 4, 5, 6, 2).astype("float32")
K5 = RNG.randn(2, 2, 2, 2, 3).astype("float32")
KT = RNG.randn(3, 3, 4, 3).astype("float32")
DW = RNG.randn(3, 3, 3, 2).astype("float32")
SEP_D, SEP_P = RNG.randn(3, 3, 3, 2).astype("float32"), RNG.randn(1, 1, 6, 4).astype("float32")
_RNG1 = np.random.RandomState(0)  # the conv1d script's draws
_RNG1.randn(2, 5, 6, 3)
X3B, K3B = _RNG1.randn(2, 7, 3).astype("float32"), _RNG1.randn(3, 3, 2).astype("float32")


def _probe_rng():
    """The oracle script's generator after the module-level draws above."""
    rng = np.random.RandomState(0)
    for shape in [(2, 5, 6, 3), (3, 2, 3, 4), (2, 7, 3), (3, 3, 2), (1, 4, 5, 6, 2),
                  (2, 2, 2, 2, 3), (3, 3, 4, 3), (3, 3, 3, 2), (3, 3, 3, 2), (1, 1, 6, 4)]:
        rng.randn(*shape)
    return rng


def _run(t, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(t, feed)


def _check(value, shape, head, total):
    value = np.asarray(value, dtype=float)
    assert value.shape == tuple(shape)
    np.testing.assert_allclose(value.ravel()[:len(head)], head, atol=2e-4)
    assert abs(value.sum() - total) < 2e-3 * max(1.0, abs(total))


C = tf.constant
BACKEND_CASES = {
    "conv1d": (lambda: K.conv1d(C(X3B), C(K3B)), (2, 5, 2),
               [4.5289, -2.3242, -2.7988, 2.5887, -0.3869, 2.4231], 14.468),
    "conv1d_causal": (lambda: K.conv1d(C(X3B), C(K3B), padding="causal", dilation_rate=2),
                      (2, 7, 2), [-1.9199, 2.1339, 2.8222, -4.1156, 3.5584, -0.9766], 12.643),
    "conv1d_cf": (lambda: K.conv1d(C(X3B.transpose(0, 2, 1)), C(K3B),
                                   data_format="channels_first", padding="same"),
                  (2, 2, 7), [5.341, 4.5289, -2.7988, -0.3869, 4.4241, -0.2048], 11.944),
    "conv1d_s2": (lambda: K.conv1d(C(X3B), C(K3B), strides=2, padding="same"), (2, 4, 2),
                  [5.341, -3.6208, -2.7988, 2.5887, 4.4241, 0.3523], 9.255),
    "conv2d": (lambda: K.conv2d(X4, K4, strides=(1, 2), padding="same"), (2, 5, 3, 4),
               [-1.9256, 1.0282, 3.417, -2.3826, -3.9481, -7.1645], -31.241),
    "conv2d_cf": (lambda: K.conv2d(X4.transpose(0, 3, 1, 2), K4, data_format="channels_first"),
                  (2, 4, 3, 5), [-1.4188, 1.866, -4.2082, 5.1643, 0.9392, 6.3557], -23.911),
    "conv2d_dil": (lambda: K.conv2d(X4, K4, dilation_rate=(2, 1)), (2, 1, 5, 4),
                   [6.3985, -3.2077, 1.0689, -5.0155, -0.5274, -6.1537], -11.902),
    "conv2d_transpose": (lambda: K.conv2d_transpose(X4, KT, (2, 10, 12, 4), strides=(2, 2),
                                                    padding="same"), (2, 10, 12, 4),
                         [-3.4923, -0.7201, -0.7468, -2.6416, 1.2967, 1.1262], -144.271),
    "conv3d": (lambda: K.conv3d(X5, K5, padding="same"), (1, 4, 5, 6, 3),
               [-1.203, 4.4487, 1.1947, 2.5513, 5.3143, 0.3208], 98.439),
    "depthwise": (lambda: K.depthwise_conv2d(X4, DW, padding="same"), (2, 5, 6, 6),
                  [-0.4489, -5.0522, -1.5484, -5.8311, -0.7902, -3.4215], 27.689),
    "separable": (lambda: K.separable_conv2d(X4, SEP_D, SEP_P), (2, 3, 4, 4),
                  [-0.5699, 6.6077, -1.711, 8.8182, -9.9374, 9.9417], 43.406),
    "pool2d_avg": (lambda: K.pool2d(X4, (2, 2), strides=(2, 2), padding="same",
                                    pool_mode="avg"), (2, 3, 3, 3),
                   [1.2429, 0.5695, -0.8234, 0.8608, 0.0178, 0.7165], 4.129),
    "pool2d_max": (lambda: K.pool2d(X4, (2, 3)), (2, 4, 4, 3),
                   [2.2698, 1.8676, 0.9787, 2.2698, 1.8676, 1.4694], 125.428),
    "pool2d_cf": (lambda: K.pool2d(C(X4.transpose(0, 3, 1, 2)), (2, 2),
                                   data_format="channels_first", pool_mode="avg"),
                  (2, 3, 4, 5), [1.2429, 1.5286, 0.8608, 0.2848, -0.1828, 0.4737], 2.332),
    "pool3d": (lambda: K.pool3d(X5, (2, 2, 2), pool_mode="max"), (1, 3, 4, 5, 2),
               [0.8416, 2.2567, 1.6481, 2.2567, 1.6481, 0.9433], 161.489),
    "bias_add": (lambda: K.bias_add(C(X4), np.float32([1, 2, 3])), (2, 5, 6, 3),
                 [2.7641, 2.4002, 3.9787, 3.2409, 3.8676, 2.0227], 376.79),
    "bias_add_cf": (lambda: K.bias_add(C(X4), np.float32([1, 2, 3, 4, 5]),
                                       data_format="channels_first"), (2, 5, 6, 3),
                    [2.7641, 1.4002, 1.9787, 3.2409, 2.8676, 0.0227], 556.79),
    "batch_normalization": (lambda: K.batch_normalization(
        C(X4), C(np.float32([.1, .2, .3])), C(np.float32([1, 2, 3])),
        C(np.float32([.5, .5, .5])), C(np.float32([1, 1, 2])), epsilon=1e-3), (2, 5, 6, 3),
        [2.1632, 0.6415, 1.2836, 2.6398, 1.6788, -0.9746], 66.765),
    "resize_nearest": (lambda: K.resize_images(C(X4), 2, 3, "channels_last"), (2, 10, 18, 3),
                       [1.7641, 0.4002, 0.9787, 1.7641, 0.4002, 0.9787], 100.74),
    "resize_bilinear": (lambda: K.resize_images(C(X4), 2, 2, "channels_last",
                                                interpolation="bilinear"), (2, 10, 12, 3),
                        [1.7641, 0.4002, 0.9787, 1.8833, 0.767, 0.4897], 67.16),
    "resize_cf": (lambda: K.resize_images(C(X4.transpose(0, 3, 1, 2)), 2, 1,
                                          "channels_first"), (2, 3, 10, 6),
                  [1.7641, 2.2409, 0.9501, 0.4106, 0.761, 0.3337], 33.58),
    "resize_volumes": (lambda: K.resize_volumes(C(X5), 2, 1, 2, "channels_last"),
                       (1, 8, 5, 12, 2),
                       [-1.1268, -0.7307, -1.1268, -0.7307, -0.3849, 0.0944], -112.51),
    "spatial_2d_padding": (lambda: K.spatial_2d_padding(X4), (2, 7, 8, 3), [0] * 6, 16.79),
    "spatial_2d_padding_cf": (lambda: K.spatial_2d_padding(
        X4, ((1, 2), (0, 1)), data_format="channels_first"), (2, 5, 9, 4),
        [0, 0, 0, 0, 1.7641, 0.4002], 16.79),
    "spatial_3d_padding": (lambda: K.spatial_3d_padding(X5), (1, 6, 7, 8, 2), [0] * 6,
                           -28.127),
    "temporal_padding": (lambda: K.temporal_padding(X3, (2, 1)), (2, 10, 3), [0] * 6, -1.284),
    "repeat": (lambda: K.repeat(C([[1., 2.], [3, 4]]), 3), (2, 3, 2),
               [1, 2, 1, 2, 1, 2], 30.0),
    "hard_sigmoid": (lambda: K.hard_sigmoid(C([-3., -1, 0, 1, 3])), (5,),
                     [0, 0.3, 0.5, 0.7, 1.0], 2.5),
}


@pytest.mark.parametrize("name", sorted(BACKEND_CASES))
def test_backend_nn_functions_match_tf(name):
    make, shape, head, total = BACKEND_CASES[name]
    _check(_run(make()), shape, head, total)


def test_local_convolutions_match_tf_and_numpy():
    rng = _probe_rng()
    rng.rand(2, 6, 5)
    xl, kl = rng.randn(2, 4, 3).astype("f"), rng.randn(3, 6, 2).astype("f")
    out = _run(K.local_conv1d(C(xl), C(kl), (2,), (1,)))
    _check(out, (2, 3, 2), [-2.437, 0.9393, -1.6003, 1.5725, 1.4468, -0.4901], 0.195)
    expected = np.stack([xl[:, i:i + 2].reshape(2, -1) @ kl[i] for i in range(3)], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    xl2, kl2 = rng.randn(2, 3, 4, 2).astype("f"), rng.randn(6, 8, 3).astype("f")
    out = _run(K.local_conv2d(C(xl2), C(kl2), (2, 2), (1, 1), (2, 3), "channels_last"))
    _check(out, (2, 2, 3, 3), [1.6992, -1.1452, 0.248, 2.6187, 0.298, 1.029], 6.858)
    p = 0
    for i in range(2):
        for j in range(3):
            patch = xl2[:, i:i + 2, j:j + 2, :].reshape(2, -1)
            np.testing.assert_allclose(out[:, i, j], patch @ kl2[p], rtol=1e-5, atol=1e-5)
            p += 1


def test_normalize_batch_in_training_matches_tf():
    y, mean, var = _run(K.normalize_batch_in_training(
        C(X4), C(np.float32([1, 2, 3])), C(np.float32([0, 1, 0])), [0, 1, 2]))
    _check(y, (2, 5, 6, 3), [1.4742, 1.4394, 3.5222, 1.9403, 4.443, -2.5211], float(y.sum()))
    np.testing.assert_allclose(mean, [0.2556, 0.1855, -0.1613], atol=1e-4)
    np.testing.assert_allclose(var, [1.0636, 0.9699, 0.9578], atol=1e-4)  # Bessel-corrected
    y, mean, var = _run(K.normalize_batch_in_training(
        C(X3), C(np.float32([1, 2, 3])), C(np.float32([0, 1, 0])), [0, 1]))
    np.testing.assert_allclose(y.ravel()[:6], [0.1179, 0.5509, 2.1141, 0.683, -0.1278, -3.6633],
                               atol=1e-4)
    np.testing.assert_allclose(mean, [0.0266, -0.0506, -0.0677], atol=1e-4)
    np.testing.assert_allclose(var, [0.9562, 1.432, 1.1598], atol=1e-4)


def test_focal_crossentropy_functions_match_tf():
    yt = np.float32([[0, 1], [1, 0], [1, 1]])
    yp = np.float32([[.2, .7], [.6, .1], [.9, .4]])
    yc, pc = np.float32([[0, 1, 0], [1, 0, 0]]), np.float32([[.2, .7, .1], [.5, .3, .2]])
    got = _run([
        K.binary_focal_crossentropy(yt, yp),
        K.binary_focal_crossentropy(yt, yp, apply_class_balancing=True, alpha=.3, gamma=1.5),
        K.binary_focal_crossentropy(yt, yp, from_logits=True),
        K.categorical_focal_crossentropy(yc, pc),
        K.categorical_focal_crossentropy(yc, pc, from_logits=True, alpha=.5, gamma=1.),
        M.binary_focal_crossentropy(yt, yp),
        M.binary_focal_crossentropy(yt, yp, apply_class_balancing=True, alpha=.4, gamma=3.,
                                    label_smoothing=0.1),
        M.categorical_focal_crossentropy(yc, pc),
        M.categorical_focal_crossentropy(yc, pc, label_smoothing=0.2, from_logits=True),
        L.binary_focal_crossentropy(yt, yp), L.categorical_focal_crossentropy(yc, pc)])
    _check(got[0], (3, 2), [0.0089, 0.0321, 0.0817, 0.0011, 0.0011, 0.3299], 0.455)
    _check(got[1], (3, 2), [0.014, 0.0176, 0.0388, 0.0023, 0.001, 0.1278], 0.201)
    _check(got[2], (3, 2), [0.2413, 0.0444, 0.0549, 0.2052, 0.0285, 0.0826], 0.657)
    np.testing.assert_allclose(got[3], [0.008, 0.0433], atol=1e-4)
    np.testing.assert_allclose(got[4], [0.2058, 0.2863], atol=1e-4)
    np.testing.assert_allclose(got[5], [0.02051, 0.04139, 0.16546], atol=1e-5)
    np.testing.assert_allclose(got[6], [0.00373, 0.00768, 0.03785], atol=1e-5)
    np.testing.assert_allclose(got[7], [0.00803, 0.04332], atol=1e-5)
    np.testing.assert_allclose(got[8], [0.07139, 0.09482], atol=1e-5)
    np.testing.assert_allclose(got[9], got[5])
    np.testing.assert_allclose(got[10], got[7])
    # NumPy reference of the binary focal formula
    p_t = yt * yp + (1 - yt) * (1 - yp)
    ce = -(yt * np.log(yp + 1e-7) + (1 - yt) * np.log(1 - yp + 1e-7))
    np.testing.assert_allclose(got[0], (1 - p_t) ** 2 * ce, rtol=1e-4, atol=1e-6)
    # ... and of the categorical one: sum over classes of -alpha (1 - p)^gamma y log p
    pn = np.clip(pc / pc.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    np.testing.assert_allclose(got[3], np.sum(-0.25 * (1 - pn) ** 2 * yc * np.log(pn), -1),
                               rtol=1e-5)


def test_focal_loss_gradients_match_tf_and_finite_differences():
    g = C(np.float32([[0.3, 0.7], [0.6, 0.2]]))
    loss = tf.reduce_sum(K.binary_focal_crossentropy(C(np.float32([[0, 1], [1, 0]])), g,
                                                     apply_class_balancing=True))
    np.testing.assert_allclose(_run(tf.gradients(loss, g)[0]),
                               [[0.25693, -0.08564], [-0.16883, 0.10444]], atol=1e-4)
    p = C(np.float32([[0.2, 0.5, 0.3]]))
    loss = tf.reduce_sum(K.categorical_focal_crossentropy(C(np.float32([[0, 1, 0]])), p))
    np.testing.assert_allclose(_run(tf.gradients(loss, p)[0]),
                               [[0.14914, -0.14914, 0.14914]], atol=1e-4)
    x = C(np.float64([[0.3, 0.7], [0.6, 0.2]]))
    y = tf.reduce_sum(K.binary_focal_crossentropy(C(np.float64([[0, 1], [1, 0]])), x))
    with tf.Session():
        theirs, ours = tf.test.compute_gradient(
            x, [2, 2], y, [], x_init_value=np.float64([[0.3, 0.7], [0.6, 0.2]]))
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


def test_ctc_functions_match_tf():
    ypr = _probe_rng().rand(2, 6, 5).astype("float32")
    ypr /= ypr.sum(-1, keepdims=True)
    labels = C([[1, 2, 0], [3, 0, 0]])
    cost = _run(K.ctc_batch_cost(labels, C(ypr), C([[6], [5]]), C([[2], [1]])))
    assert cost.shape == (2, 1)
    (dense,), log_prob = _run(K.ctc_decode(C(ypr), C([6, 5])))
    beam, beam_prob = _run(K.ctc_decode(C(ypr), C([6, 5]), greedy=False, beam_width=4,
                                        top_paths=2))
    sparse = _run(K.ctc_label_dense_to_sparse(labels, C([2, 1])))
    assert sparse.indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert sparse.values.tolist() == [1, 2, 3] and sparse.dense_shape.tolist() == [2, 3]
    assert dense.dtype == np.int64 and dense.shape == (2, 6)
    assert log_prob.shape == (2, 1) and len(beam) == 2 and beam_prob.shape == (2, 2)
    np.testing.assert_allclose(dense.ravel()[:6], [3, 2, 0, 3, -1, -1])
    np.testing.assert_allclose(log_prob.ravel(), [6.5038, 5.3014], atol=1e-3)
    np.testing.assert_allclose(beam[0].ravel()[:6], [3, 2, 0, -1, -1, -1])
    np.testing.assert_allclose(beam_prob.ravel(), [-5.1118, -5.2625, -4.3698, -4.38],
                               atol=1e-3)
    np.testing.assert_allclose(cost.ravel(), [5.3154, 5.4583], atol=1e-3)


def test_rnn_unrolls_like_tf_with_and_without_mask():
    rng = _probe_rng()
    rng.rand(2, 6, 5)
    rng.randn(2, 4, 3), rng.randn(3, 6, 2), rng.randn(2, 3, 4, 2), rng.randn(6, 8, 3)
    a, b = rng.randn(2, 4, 3).astype("f"), rng.randn(2, 4, 3).astype("f")

    def step(i, s):
        return i * 2 + s[0], [s[0] + i]

    last, outs, states = _run(K.rnn(step, C(a), [tf.zeros((2, 3))]))
    np.testing.assert_allclose(last.ravel(), [0.6282, 3.8396, -3.2078, -2.5471, -1.9043, 6.1054],
                               atol=1e-4)
    np.testing.assert_allclose(outs.ravel()[:6], [2.8091, 0.2929, -2.9625, -1.1406, 3.184,
                                                 -3.8236], atol=1e-4)
    np.testing.assert_allclose(states[0].ravel(), [0.7624, 2.6182, -3.015, -0.9971, -1.4485,
                                                   4.6792], atol=1e-4)
    mask = C(np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool))
    last, outs, states = _run(K.rnn(step, C(b), [tf.zeros((2, 3))], go_backwards=True,
                                    mask=mask))
    np.testing.assert_allclose(last.ravel(), [2.1993, 2.9884, 2.0431, 5.4405, -2.684, 1.3557],
                               atol=1e-4)
    np.testing.assert_allclose(outs.ravel()[:6], np.zeros(6), atol=1e-6)
    np.testing.assert_allclose(states[0].ravel(), [1.2632, 2.31, 1.2104, 3.6186, -2.6083,
                                                   0.9348], atol=1e-4)


def test_control_flow_random_and_misc_backend_functions_match_tf(capsys):
    got = _run([K.foldl(lambda a, b: a + b, C([1., 2., 3.])),
                K.foldr(lambda a, b: a * 2 + b, C([1., 2., 3.]), initializer=C(0.)),
                K.map_fn(lambda a: a * a, C([1., 2., 3.])),
                K.in_top_k(C([[.1, .5, .4], [.3, .3, .4]]), C([2, 0]), 1),
                K.to_dense(tf.SparseTensor([[0, 1], [1, 2]], [3., 4.], [2, 3])),
                K.random_bernoulli((3, 4), p=0.5, seed=3),
                K.dropout(tf.ones((3, 4)), 0.5, seed=1)])
    assert got[0] == 6.0 and got[1] == 17.0 and got[2].tolist() == [1, 4, 9]
    assert got[3].tolist() == [False, False]
    assert got[4].tolist() == [[0, 3, 0], [0, 0, 4]]
    # TF's Philox streams: the same draws for the same seeds
    assert got[5].ravel()[:6].tolist() == [1, 1, 0, 1, 0, 1] and got[5].sum() == 9
    assert got[6].ravel()[:6].tolist() == [0, 2, 0, 0, 2, 0] and got[6].sum() == 10
    assert K.is_sparse(tf.SparseTensor([[0]], [1.], [1])) and not K.is_sparse(C(1.0))
    assert K.to_dense(C(1.0)).op.type == "Const"
    with pytest.warns(DeprecationWarning):
        K.random_binomial((2,), 0.5, seed=1)
    v = K.random_normal_variable((2, 3), 1., 2., seed=1, name="rnv")
    u = K.random_uniform_variable((2, 3), 0., 2., seed=1)
    assert v.name == "rnv:0" and u.name == "Variable:0" and v.dtype == tf.float32
    assert ((_run(u) >= 0) & (_run(u) < 2)).all()
    t = K.print_tensor(C([1., 2.]), message="hello")
    assert t.op.type == "Identity" and _run(t).tolist() == [1, 2]
    assert "hello [1 2]" in capsys.readouterr().out
    assert K.backend() == "tensorflow"


def test_moving_average_update_zero_debiases_as_tf():
    mv = tf.Variable(np.float32([1, 2]), name="mv")
    u = K.moving_average_update(mv, C([3., 4.]), 0.9)
    assert u.name == "AssignMovingAvg:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(u)
        np.testing.assert_allclose(sess.run(mv), [3.0, 4.0], rtol=1e-6)


def test_backend_settings_and_scopes():
    try:
        K.set_epsilon(1e-5)
        assert K.epsilon() == 1e-5
        K.set_floatx("float64")
        assert K.floatx() == "float64" and K.variable(1.0).dtype.base_dtype == tf.float64
        K.set_image_data_format("channels_first")
        assert K.image_data_format() == "channels_first"
    finally:
        K.set_epsilon(1e-7)
        K.set_floatx("float32")
        K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="Unknown `floatx` value: int3"):
        K.set_floatx("int3")
    with pytest.raises(ValueError, match="Unknown `data_format`: x"):
        K.set_image_data_format("x")
    with K.learning_phase_scope(1):
        assert K.learning_phase() == 1
    assert K.learning_phase().name == "keras_learning_phase:0"
    with pytest.raises(ValueError, match=r"Expected learning phase to be 0 or 1\."):
        K.learning_phase_scope(2)
    assert K.manual_variable_initialization(True) is None
    try:
        v = tf.Variable(3.0, name="manual")
        sess = K.get_session()
        assert not sess.run(tf.is_variable_initialized(v))
    finally:
        K.manual_variable_initialization(False)


@pytest.mark.parametrize("call, message", [
    (lambda: K.pool2d(C(X4), (2, 2), pool_mode="min"), "Invalid pooling mode: min"),
    (lambda: K.pool2d(C(X4), (2,)), "`pool_size` must be a tuple of 2 integers."),
    (lambda: K.conv2d(C(X4), tf.ones((2, 2, 3, 1)), padding="full"), "Invalid padding: full"),
    (lambda: K.conv2d(C(X4), tf.ones((2, 2, 3, 1)), data_format="nhwc"),
     "Unknown data_format: nhwc"),
    (lambda: K.resize_images(C(X4), 2, 2, "x"), "Invalid `data_format` argument: x"),
    (lambda: K.resize_images(C(X4), 2, 2, "channels_last", interpolation="cubic"),
     'Received: "cubic"'),
    (lambda: K.bias_add(C(X4), tf.ones((2, 2))),
     "Unexpected bias dimensions 2, expect to be 1 or 3 dimensions"),
    (lambda: K.rnn(lambda i, s: (i, s), tf.placeholder(tf.float32, [2, None, 3]),
                   [tf.zeros((2, 3))]), "number of timesteps must be known"),
])
def test_backend_errors_match_tf(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("`", ".")):
        call()


# -- losses ---------------------------------------------------------------------------------
def test_focal_loss_classes_match_tf():
    yt, yp = np.float32([[0, 1], [1, 0], [1, 1]]), np.float32([[.2, .7], [.6, .1], [.9, .4]])
    yc, pc = np.float32([[0, 1, 0], [1, 0, 0]]), np.float32([[.2, .7, .1], [.5, .3, .2]])
    bfc = L.BinaryFocalCrossentropy()
    bfc2 = L.BinaryFocalCrossentropy(apply_class_balancing=True, gamma=1., from_logits=True,
                                     label_smoothing=.1, reduction="sum")
    cfc = L.CategoricalFocalCrossentropy()
    cfc2 = L.CategoricalFocalCrossentropy(alpha=.5, gamma=1., label_smoothing=.1,
                                          reduction="none")
    got = _run([bfc(yt, yp), bfc(yt, yp, sample_weight=np.float32([1, 2, .5])),
                bfc2(yt, yp), bfc2(yt, yp, sample_weight=np.float32([1, 2, .5])),
                cfc(yc, pc), cfc(yc, pc, sample_weight=np.float32([1, 2])),
                cfc2(yc, pc), cfc2(yc, pc, sample_weight=np.float32([1, 2]))])
    expected = [0.07579, 0.06201, 0.38703, 0.52748, 0.02567, 0.04733, [0.10593, 0.19724],
                [0.10593, 0.39448]]
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, want, atol=1e-5)
    assert bfc.get_config() == {
        "reduction": "auto", "name": "binary_focal_crossentropy",
        "fn": "binary_focal_crossentropy", "apply_class_balancing": False, "alpha": 0.25,
        "gamma": 2.0, "from_logits": False, "label_smoothing": 0.0, "axis": -1}
    assert cfc2.get_config()["alpha"] == 0.5 and cfc2.get_config()["reduction"] == "none"


def test_losses_and_metrics_serialize_deserialize_as_tf():
    config = L.serialize(L.BinaryFocalCrossentropy())
    assert config["class_name"] == "BinaryFocalCrossentropy"
    assert config["config"]["gamma"] == 2.0
    assert L.serialize(L.mean_squared_error) == "mean_squared_error"
    assert L.deserialize("mse").__name__ == "mean_squared_error"
    assert L.deserialize("categorical_focal_crossentropy").__name__ == \
        "categorical_focal_crossentropy"
    loss = L.deserialize({"class_name": "CategoricalFocalCrossentropy",
                          "config": {"gamma": 1.0}})
    assert isinstance(loss, L.CategoricalFocalCrossentropy)
    assert loss.get_config()["gamma"] == 1.0
    with pytest.raises(ValueError, match="Unknown loss function: 'nope'"):
        L.deserialize("nope")
    assert M.serialize(M.Sum()) == {"class_name": "Sum",
                                    "config": {"name": "sum", "dtype": "float32"}}
    assert M.serialize(M.mse) == "mean_squared_error"
    m = M.deserialize({"class_name": "MeanIoU", "config": {"num_classes": 4, "name": "x"}})
    assert isinstance(m, M.MeanIoU) and m.name == "x" and m.num_classes == 4
    assert M.deserialize("mse") is M.mse
    assert isinstance(M.deserialize({"class_name": "F1Score", "config": {"average": "macro"}}),
                      M.F1Score)
    with pytest.raises(ValueError, match="Unknown metric function: 'binary_focal_crossentropy'"):
        M.deserialize("binary_focal_crossentropy")  # as TF: not a metric name


def test_gelu_by_name_as_tf():
    # TF 2.15: reachable by name only (no attribute in the v1 module), exact erf form
    assert not hasattr(tf.keras.activations, "gelu")
    x = tf.constant([-2.0, -0.5, 0.0, 0.7, 3.0])
    gelu = tf.keras.activations.get("gelu")
    assert gelu.__name__ == "gelu"
    np.testing.assert_allclose(_run(gelu(x)),
                               [-0.04550028, -0.1542688, 0.0, 0.5306255, 2.99595], rtol=1e-6)
    tanh_form = _run(gelu(x, approximate=True))
    ref = 0.5 * np.array([-2.0, -0.5, 0.0, 0.7, 3.0])
    xs = np.array([-2.0, -0.5, 0.0, 0.7, 3.0])
    ref = ref * (1 + np.tanh(0.7978845608028654 * (xs + 0.044715 * xs ** 3)))
    np.testing.assert_allclose(tanh_form, ref, rtol=1e-5, atol=1e-7)
    layer = tf.keras.layers.Dense(2, activation="gelu")
    assert layer.get_config()["activation"] == "gelu"


def test_dropout_noise_shape_with_none_takes_the_input_size():
    # TF 2.15: (None, 1, 1, 1) drops whole samples; the config keeps the None
    tf.set_random_seed(1)
    x = tf.ones([4, 2, 2, 3])
    layer = tf.keras.layers.Dropout(0.5, noise_shape=(None, 1, 1, 1), seed=3)
    y = layer(x, training=True)
    assert layer.get_config()["noise_shape"] == (None, 1, 1, 1)
    value = _run(y)
    assert y.shape.as_list() == [4, 2, 2, 3]
    assert all(len(np.unique(value[i])) == 1 for i in range(4))
    assert set(np.unique(value).tolist()) <= {0.0, 2.0}
