"""TF1 mixed-precision and float16 programs, sweep 14 (area ``mixed``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2017-2019 style): float16 dtype facts (``tf.float16.max``/``min``, the
float16 epsilon, ``as_dtype`` spellings, enums, ``limits``) with float16 placeholders fed
``np.float16``, overflow to inf, ``tf.cast`` chains, ``is_finite``/``reduce_all`` guards and
``saturate_cast``; float16 reductions, ``matmul`` with K=1000, softmax/log-softmax,
``moments`` and the cross-entropies; NVIDIA's float32-storage custom getter under a
``variable_scope`` with ``tf.layers.dense``, manual loss scaling with a finite-gradient
``tf.cond`` guard, Momentum and a Saver (float16 and float32 variables in one
checkpoint); ``MixedPrecisionLossScaleOptimizer`` with ``DynamicLossScale`` over steps
that overflow, and with a fixed scale; ``enable_mixed_precision_graph_rewrite``; fused
and non-fused batch normalization, ``conv2d`` and pooling on float16 images with
float32 scale; the contrib ``LossScaleOptimizer`` with a ``FixedLossScaleManager``; float16
variables with seeded random ops and initializers, ``np.float16`` feeds and an
``ExponentialMovingAverage`` of a float16 variable.

Left as is (TensorFlow's Eigen CPU kernels, not portable NumPy arithmetic):
float16 ``MatMul`` accumulates in float16, rounding after every multiply and every add
(for K <= 64 TensorFlow equals a sequential float16 sum bit for bit), with a k-blocking
that depends on the shapes and threads (8x1000x5 splits K at 504); float16 ``Sum``,
``Mean``, ``AvgPool`` and the batch statistics of ``FusedBatchNormV3`` reduce with Eigen's
packet/tree order in float16. flowgraph accumulates those in float32 and rounds once, so
such values can differ from TensorFlow's in the last float16 bit (1 ulp), and a few
float16 training steps drift accordingly. ``tf.bfloat16`` needs the optional
``ml_dtypes`` package for its NumPy type, as documented. ``Cast`` of out-of-range
float16 to int16 (TensorFlow: -32768) and of out-of-range float64 to uint32
(TensorFlow: 2147483648) follow Eigen's x86 conversions; flowgraph gives 0.

Classes of discrepancy found and fixed (one focused test each below):

* ``saturate_cast`` built its bounds as float32 constants cast to the input type, so
  float64 -> int32 clamped at 2**31 and wrapped to -2**31; TensorFlow 2.15 clamps with
  one ``ClipByValue`` named ``clamp`` between two constants of the input type, each
  bound moved one step toward zero when the input type cannot hold it.
* The softmax cross-entropies run float16 logits in float32 as TensorFlow does
  (``softmax_cross_entropy_with_logits/Cast_2`` and
  ``SparseSoftmaxCrossEntropyWithLogits/Cast_1`` are the losses).
* ``MixedPrecisionLossScaleOptimizer`` advanced the global step on skipped
  (non-finite) steps and named its train op ``group_deps``; TensorFlow leaves the step
  alone, names the op after the wrapped optimizer, builds the loss-scale update as a
  ``cond`` first (the wrapped optimizer's slots are ``cond_1/beta1_power``), applies a
  fixed scale without any cond, and lists the loss-scale variables in ``variables()``.
  ``enable_mixed_precision_graph_rewrite`` refuses an already wrapped optimizer.
* The non-fused ``tf.layers.batch_normalization`` computed float16 inputs in float16;
  TensorFlow normalizes them in float32 and casts back (the output is
  ``<layer>/Cast_3`` when training, ``Cast_5`` when not).
* ``ExponentialMovingAverage`` cast the decay to a float16 shadow's type before taking
  ``1 - decay`` (0.10009766 instead of TensorFlow's float32 ``1 - 0.9`` cast to float16,
  0.09997559), so float16 moving averages drifted by an ulp per update.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf


def _hex(x) -> str:
    return np.asarray(x).tobytes().hex()


# -- float16 dtype facts, feeds, overflow and casts --------------------------------------
def test_float16_dtype_facts_and_as_dtype_spellings():
    assert [(float(d.max), float(d.min)) for d in (tf.float16, tf.float32)] == [
        (65504.0, -65504.0), (3.4028234663852886e+38, -3.4028234663852886e+38)]
    assert float(tf.bfloat16.max) == 3.3895313892515355e+38
    assert all(d.is_floating and not d.is_integer and d.size == s
               for d, s in ((tf.float16, 2), (tf.bfloat16, 2), (tf.float32, 4)))
    assert float(np.finfo(tf.float16.as_numpy_dtype).eps) == 0.0009765625
    assert {tf.as_dtype("float16"), tf.as_dtype(np.float16), tf.as_dtype("half")} == {
        tf.float16}
    assert tf.as_dtype("bfloat16") == tf.bfloat16
    assert tf.float16 == np.float16 and tf.float16.real_dtype == tf.float16
    assert (tf.float16.as_datatype_enum, tf.bfloat16.as_datatype_enum) == (19, 14)
    with pytest.raises(ValueError, match="does not have defined limits"):
        _ = tf.float16.limits
    with pytest.raises(TypeError, match="float8"):
        tf.as_dtype("float8")
    with pytest.raises(TypeError, match="float32 that does not match type float16"):
        tf.constant(1.0, tf.float16) + tf.constant(1.0, tf.float32)


def test_float16_feeds_overflow_to_inf_and_finite_guards():
    x = tf.placeholder(tf.float16, [None, 3], name="x")
    assert (x.name, x.dtype, x.shape.as_list()) == ("x:0", tf.float16, [None, 3])
    y = x * tf.constant(1000.0, tf.float16)
    z = tf.cast(y, tf.float32, name="z")
    h = tf.cast(tf.constant([0.1, 65519.0, 65520.0, 1e-8, 6e-8, 3e-5], tf.float32),
                tf.float16)
    fin = tf.is_finite(y)
    allfin = tf.reduce_all(fin)
    assert (fin.dtype, allfin.name) == (tf.bool, "All:0")
    with tf.Session() as sess:
        feed = {x: np.array([[1, 2, 70], [0.5, -80, 3]], np.float16)}
        yv, zv, hv, fv, av = sess.run([y, z, h, fin, allfin], feed)
        assert (yv.dtype, zv.dtype, hv.dtype) == (np.float16, np.float32, np.float16)
        assert _hex(yv) == "d063d067007cd05f00fcdc69"
        assert _hex(zv) == "00007a440000fa440000807f0000fa43000080ff00803b45"
        assert _hex(hv) == "662eff7b007c00000100f701"
        assert _hex(fv) == "010100010001" and not av
        big = tf.constant(65504, tf.float16)
        assert np.isinf(sess.run(big + tf.constant(32, tf.float16)))
        assert np.isinf(sess.run(big + tf.constant(16, tf.float16)))
        assert sess.run(tf.cast(tf.constant([1.7, -1.7, 2.5], tf.float16),
                                tf.int32)).tolist() == [1, -1, 2]
        assert _hex(sess.run(tf.cast(tf.constant([1.0001, 255.5], tf.float64),
                                     tf.float16))) == "003cfc5b"


def test_saturate_cast_clamps_with_bounds_in_the_input_type():
    x = tf.placeholder(tf.float32, [None, 2])
    a = tf.saturate_cast(x, tf.uint8)
    b = tf.saturate_cast(x, tf.float64, name="wide")
    c = tf.saturate_cast(tf.constant([1, 70000], tf.int32), tf.float16)
    d = tf.saturate_cast(tf.constant([1e10, -1e10, np.nan], tf.float64), tf.int32)
    ops = [(o.name, o.type, [i.name for i in o.inputs])
           for o in tf.get_default_graph().get_operations()]
    assert ops[:6] == [
        ("Placeholder", "Placeholder", []),
        ("saturate_cast/Const", "Const", []), ("saturate_cast/Const_1", "Const", []),
        ("saturate_cast/clamp", "ClipByValue",
         ["Placeholder:0", "saturate_cast/Const:0", "saturate_cast/Const_1:0"]),
        ("saturate_cast", "Cast", ["saturate_cast/clamp:0"]),
        ("wide", "Cast", ["Placeholder:0"])]
    with tf.Session() as s:
        av, bv, cv, dv = s.run([a, b, c, d], {x: [[300, -4], [1.5, 2.5]]})
    assert av.tolist() == [[255, 0], [1, 2]] and bv.dtype == np.float64
    assert cv.dtype == np.float16 and cv.tolist() == [1.0, 65504.0]
    assert dv.tolist() == [2147483647, -2147483648, -2147483648]


def test_saturate_cast_moves_unrepresentable_bounds_toward_zero():
    x = tf.constant([1e10, -1e10, 2147483647.0, np.inf, -np.inf, 300.7, -3.7], tf.float64)
    with tf.Session() as s:
        out = s.run([tf.saturate_cast(x, tf.int32),
                     tf.saturate_cast(tf.cast(x, tf.float32), tf.int32),
                     tf.saturate_cast(x, tf.uint8),
                     tf.saturate_cast(tf.cast(x, tf.float16), tf.int16),
                     tf.saturate_cast(x, tf.int64)])
    assert out[0].tolist() == [2147483647, -2147483648, 2147483647, 2147483647,
                               -2147483648, 300, -3]
    assert out[1].tolist() == [2147483520, -2147483648, 2147483520, 2147483520,
                               -2147483648, 300, -3]
    assert out[2].tolist() == [255, 0, 255, 255, 0, 255, 0]
    assert out[3].tolist() == [32752, -32768, 32752, 32752, -32768, 300, -3]
    # int64's max rounds to 2**63 in float64, so TensorFlow's +inf wraps to int64's min
    assert out[4].tolist() == [10000000000, -10000000000, 2147483647,
                               -9223372036854775808, -9223372036854775808, 300, -3]
    with pytest.raises(TypeError):
        tf.saturate_cast(tf.constant([3.5]), tf.bool)


# -- float16 math: reductions, matmul, softmax, losses -----------------------------------
def test_float16_reductions_matmul_and_losses_keep_float16():
    rng = np.random.RandomState(0)
    a = rng.uniform(0, 1, (4, 3000)).astype(np.float16)
    w = (rng.randn(1000, 8) * 0.05).astype(np.float16)
    xin = rng.randn(16, 1000).astype(np.float16)
    x = tf.placeholder(tf.float16, [None, 3000])
    xm = tf.placeholder(tf.float16, [None, 1000])
    mm = tf.matmul(xm, tf.constant(w))
    labels = tf.constant(np.arange(16) % 8, tf.int32)
    mom = tf.nn.moments(mm, axes=[0])
    ts = [tf.reduce_sum(x), tf.reduce_sum(x, axis=1), tf.reduce_mean(x, axis=1),
          tf.reduce_max(x, axis=1), tf.nn.l2_loss(x), tf.norm(x, axis=1), mm,
          tf.reduce_logsumexp(mm, axis=1), tf.nn.softmax(mm), tf.nn.log_softmax(mm),
          tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=mm),
          tf.nn.softmax_cross_entropy_with_logits_v2(
              labels=tf.one_hot(labels, 8, dtype=tf.float16), logits=mm),
          tf.nn.sigmoid_cross_entropy_with_logits(
              labels=tf.cast(mm > 0, tf.float16), logits=mm), mom[0], mom[1],
          tf.cumsum(x[:, :50], axis=1)]
    assert [(t.name, str(t.shape)) for t in ts] == [
        ("Sum:0", "()"), ("Sum_1:0", "(?,)"), ("Mean:0", "(?,)"), ("Max:0", "(?,)"),
        ("L2Loss:0", "()"), ("norm/Squeeze:0", "(?,)"), ("MatMul:0", "(?, 8)"),
        ("ReduceLogSumExp:0", "(?,)"), ("Softmax:0", "(?, 8)"), ("LogSoftmax:0", "(?, 8)"),
        ("SparseSoftmaxCrossEntropyWithLogits/Cast_1:0", "(16,)"),
        ("softmax_cross_entropy_with_logits/Cast_2:0", "(16,)"),
        ("logistic_loss:0", "(?, 8)"), ("moments/Cast_1:0", "(8,)"),
        ("moments/Cast_2:0", "(8,)"), ("Cumsum:0", "(?, 50)")]
    assert all(t.dtype == tf.float16 for t in ts)
    with tf.Session() as sess:
        out = sess.run(ts, {x: a, xm: xin})
    assert all(o.dtype == np.float16 for o in out)
    # TensorFlow's float16 bits (equal here, or within one float16 ulp: see the docstring)
    assert _hex(out[0]) == "cf6d" and _hex(out[3]) == "003c003c003c003c"
    assert _hex(out[4]) == "b867"
    tf_bits = {1: "e865ba65ca65d065", 2: "0838d237e737f037", 5: "fb4fc04fd64fde4f"}
    for i, bits in tf_bits.items():
        want = np.frombuffer(bytes.fromhex(bits), np.float16)
        np.testing.assert_allclose(out[i], want, rtol=2e-3)
    np.testing.assert_array_equal(out[10], out[11])


def test_float16_cross_entropies_run_in_float32():
    lg = np.array([[2.5, -1.25, 0.3], [10.0, 9.5, -3.0], [0.1, 0.2, 0.3],
                   [-7.0, 8.0, 1.0]], np.float16)
    logits = tf.placeholder(tf.float16, [None, 3])
    labels = tf.constant([0, 1, 2, 1])
    a = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    b = tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.one_hot(labels, 3, dtype=tf.float16), logits=logits)
    c = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(labels, [2, 2]), logits=tf.reshape(logits, [2, 2, 3]))
    d = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    g = tf.gradients(tf.reduce_sum(a), logits)[0]
    assert [(t.name, t.dtype, str(t.shape)) for t in (a, b, c, d, g)] == [
        ("SparseSoftmaxCrossEntropyWithLogits/Cast_1:0", tf.float16, "(4,)"),
        ("softmax_cross_entropy_with_logits/Cast_2:0", tf.float16, "(4,)"),
        ("SparseSoftmaxCrossEntropyWithLogits_1/Cast_1:0", tf.float16, "(2, 2)"),
        ("sparse_softmax_cross_entropy_loss/Cast_1:0", tf.float16, "()"),
        ("gradients/SparseSoftmaxCrossEntropyWithLogits/Cast_grad/Cast:0", tf.float16,
         "(4, 3)")]
    casts = [o.name for o in tf.get_default_graph().get_operations() if o.type == "Cast"]
    assert casts[:7] == [
        "SparseSoftmaxCrossEntropyWithLogits/Cast", "SparseSoftmaxCrossEntropyWithLogits/Cast_1",
        "softmax_cross_entropy_with_logits/Cast", "softmax_cross_entropy_with_logits/Cast_1",
        "softmax_cross_entropy_with_logits/Cast_2", "SparseSoftmaxCrossEntropyWithLogits_1/Cast",
        "SparseSoftmaxCrossEntropyWithLogits_1/Cast_1"]
    with tf.Session() as s:
        out = s.run([a, b, c, d, g], {logits: lg})
    assert [_hex(o) for o in out] == [
        "0930cb3b023c7813", "0930cb3b023c7813", "0930cb3b023c7813", "3538",
        "94af4f25402efb38fbb81800cf34513510b9050077937713"]


# -- NVIDIA's float32 storage getter with manual loss scaling ----------------------------
def _float32_variable_storage_getter(getter, name, shape=None, dtype=None, initializer=None,
                                     regularizer=None, trainable=True, *args, **kwargs):
    storage_dtype = tf.float32 if trainable else dtype
    variable = getter(name, shape, *args, dtype=storage_dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, **kwargs)
    if trainable and dtype != tf.float32:
        variable = tf.cast(variable, dtype)
    return variable


def test_custom_getter_master_weights_loss_scaling_and_checkpoint(tmp_path):
    tf.set_random_seed(42)
    x = tf.placeholder(tf.float16, [None, 6], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    with tf.variable_scope("fp32_storage", custom_getter=_float32_variable_storage_getter):
        h = tf.layers.dense(x, 5, activation=tf.nn.relu, name="fc1")
        w2 = tf.get_variable("w2", [5, 3], tf.float16,
                             initializer=tf.glorot_uniform_initializer())
        b2 = tf.get_variable("b2", [3], tf.float16, initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
        cnt = tf.get_variable("counter", [], tf.float16, initializer=tf.zeros_initializer(),
                              trainable=False)
    assert (h.dtype, logits.dtype, w2.name, w2.op.type) == (
        tf.float16, tf.float16, "Cast_2:0", "Cast")
    assert [(v.name, v.dtype.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("fp32_storage/fc1/kernel:0", "float32_ref", [6, 5]),
        ("fp32_storage/fc1/bias:0", "float32_ref", [5]),
        ("fp32_storage/w2:0", "float32_ref", [5, 3]),
        ("fp32_storage/b2:0", "float32_ref", [3]),
        ("fp32_storage/counter:0", "float16_ref", [])]
    loss = tf.losses.sparse_softmax_cross_entropy(y, tf.cast(logits, tf.float32))
    assert (loss.name, loss.dtype) == ("sparse_softmax_cross_entropy_loss/value:0",
                                       tf.float32)
    scale = 128.0
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    gvs = opt.compute_gradients(loss * scale)
    assert [(g.name, g.dtype.name) for g, _ in gvs] == [
        (f"gradients/Cast{s}_grad/Cast:0", "float32") for s in ("", "_1", "_2", "_3")]
    unscaled = [(g / scale, v) for g, v in gvs]
    finite = tf.reduce_all([tf.reduce_all(tf.is_finite(g)) for g, _ in unscaled])
    gstep = tf.train.get_or_create_global_step()
    train = tf.cond(finite, lambda: opt.apply_gradients(unscaled, global_step=gstep),
                    lambda: tf.no_op())
    assert train.name == "cond/Merge:0" and train.dtype == tf.bool
    inc = tf.assign_add(cnt, tf.constant(1.5, tf.float16))
    rng = np.random.RandomState(1)
    X = rng.randn(8, 6).astype(np.float16)
    Y = rng.randint(0, 3, 8)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        rows = [sess.run([loss, train, inc], {x: X, y: Y}) for _ in range(4)]
        # TensorFlow: 1.7509 1.5689 1.2974 1.0292 (its float16 matmul rounds per add)
        np.testing.assert_allclose([r[0] for r in rows], [1.7509, 1.5689, 1.2974, 1.0292],
                                   atol=5e-4)
        assert [(float(r[2]), type(r[2])) for r in rows] == [
            (1.5, np.float16), (3.0, np.float16), (4.5, np.float16), (6.0, np.float16)]
        np.testing.assert_allclose(sess.run(b2).astype(np.float32),
                                   [0.3673, -0.1251, -0.2421], atol=2e-3)
        assert sess.run(gstep) == 4 and sess.run(logits, {x: X}).dtype == np.float16
        path = saver.save(sess, os.path.join(str(tmp_path), "m"), global_step=gstep)
    assert os.path.basename(path) == "m-4"
    assert [n for n, _ in tf.train.list_variables(str(tmp_path))] == [
        "fp32_storage/b2", "fp32_storage/b2/Momentum", "fp32_storage/counter",
        "fp32_storage/fc1/bias", "fp32_storage/fc1/bias/Momentum", "fp32_storage/fc1/kernel",
        "fp32_storage/fc1/kernel/Momentum", "fp32_storage/w2", "fp32_storage/w2/Momentum",
        "global_step"]
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_dtype_map()["fp32_storage/counter"] == tf.float16
    assert reader.get_variable_to_dtype_map()["fp32_storage/w2"] == tf.float32
    counter = reader.get_tensor("fp32_storage/counter")
    assert counter.dtype == np.float16 and float(counter) == 6.0


# -- loss-scale optimizers --------------------------------------------------------------
def test_dynamic_loss_scale_skips_overflowing_steps_without_advancing_the_step():
    x = tf.placeholder(tf.float32, [None, 4])
    bad = tf.placeholder(tf.bool, [])
    w = tf.get_variable("w", [4, 2], initializer=tf.ones_initializer())
    logits = tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16))
    loss = tf.reduce_mean(tf.cast(logits, tf.float32) ** 2)
    loss = tf.cond(bad, lambda: loss * np.inf, lambda: loss)
    ls = tf.train.experimental.DynamicLossScale(initial_loss_scale=2.0 ** 4,
                                                increment_period=2, multiplier=2.0)
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(
        tf.train.GradientDescentOptimizer(0.01), ls)
    gs = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=gs)
    assert (type(opt).__name__, train.name, train.type) == (
        "MixedPrecisionLossScaleOptimizer", "GradientDescent", "NoOp")
    assert sorted(v.name for v in tf.global_variables()) == [
        "current_loss_scale:0", "global_step:0", "good_steps:0", "w:0"]
    X = np.arange(8, dtype=np.float32).reshape(2, 4) / 10
    rows = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for b in [False, False, True, False, True, True, False, False]:
            sess.run(train, {x: X, bad: b})
            rows.append((float(sess.run(ls())), int(sess.run(gs)), sess.run(w).ravel()[:3]))
        assert tf.local_variables() == []
    assert [r[:2] for r in rows] == [(16.0, 1), (32.0, 2), (16.0, 2), (16.0, 3), (8.0, 3),
                                     (4.0, 3), (4.0, 4), (8.0, 5)]
    np.testing.assert_allclose([r[2] for r in rows], [
        [0.9956, 0.9956, 0.9942], [0.99123, 0.99123, 0.98844], [0.99123, 0.99123, 0.98844],
        [0.98689, 0.98689, 0.98272], [0.98689, 0.98689, 0.98272], [0.98689, 0.98689, 0.98272],
        [0.98258, 0.98258, 0.97704], [0.9783, 0.9783, 0.97139]], atol=2e-5)


def test_loss_scale_optimizer_names_follow_the_wrapped_optimizer():
    w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    x = tf.placeholder(tf.float32, [])
    loss = tf.reduce_sum(w * w) * x
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.AdamOptimizer(0.1),
                                                                 "dynamic")
    gs = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=gs)
    assert (train.name, train.type) == ("Adam", "NoOp")
    assert [v.name for v in tf.global_variables()] == [
        "w:0", "current_loss_scale:0", "good_steps:0", "global_step:0",
        "cond_1/beta1_power:0", "cond_1/beta2_power:0", "w/Adam:0", "w/Adam_1:0"]
    assert [v.name for v in opt.variables()] == [
        "cond_1/beta1_power:0", "cond_1/beta2_power:0", "w/Adam:0", "w/Adam_1:0",
        "current_loss_scale:0", "good_steps:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        rows = []
        for xv in [1.0, np.inf, 2.0]:
            s.run(train, {x: xv})
            rows.append((s.run(w).tolist(), int(s.run(gs))))
    assert rows == [([0.9000000357627869] * 2, 1), ([0.9000000357627869] * 2, 1),
                    ([0.8024149537086487] * 2, 2)]


def test_fixed_loss_scale_applies_the_wrapped_optimizer_directly():
    w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
    loss = tf.reduce_sum(w * w)
    opt = tf.train.experimental.MixedPrecisionLossScaleOptimizer(tf.train.AdamOptimizer(0.1),
                                                                 128.0)
    gs = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=gs)
    assert (train.name, list(train.control_inputs)) == ("Adam", [])
    assert not [o for o in tf.get_default_graph().get_operations()
                if o.name.startswith("cond")]
    assert type(tf.train.experimental.FixedLossScale(128)).__name__ == "FixedLossScale"


def test_enable_mixed_precision_graph_rewrite_wraps_once():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        tf.train.MomentumOptimizer(0.1, 0.9))
    assert (type(opt).__name__, type(opt._loss_scale).__name__) == (
        "MixedPrecisionLossScaleOptimizer", "DynamicLossScale")
    assert (opt._loss_scale.initial_loss_scale, opt._loss_scale.increment_period) == (
        32768.0, 2000)
    train = opt.minimize(loss)
    assert train.name == "Momentum"
    assert sorted(v.name for v in tf.global_variables()) == [
        "current_loss_scale:0", "good_steps:0", "w/Momentum:0", "w:0"]
    with pytest.raises(ValueError, match="must not already be an instance of a "
                                         "MixedPrecisionLossScaleOptimizer"):
        tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
    tf.train.experimental.disable_mixed_precision_graph_rewrite()
    with pytest.raises(ValueError, match="Could not interpret loss scale identifier: bogus"):
        tf.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(0.1), "bogus")
    with pytest.raises(ValueError, match="must be an instance of Optimizer, but got: "
                                         "<class 'str'>"):
        tf.train.experimental.MixedPrecisionLossScaleOptimizer("sgd", "dynamic")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        losses = [s.run([loss, train], {x: [[1, 2, 3], [0.5, 0, 1]]})[0] for _ in range(3)]
        np.testing.assert_allclose(losses, [2.03125, 0.67588, 2.35168], atol=1e-5)
        assert s.run(opt._loss_scale()) == 32768.0
        np.testing.assert_allclose(s.run(w).ravel(), [0.45582, 0.05369, 0.18848], atol=1e-5)


def test_contrib_loss_scale_optimizer_with_a_fixed_manager():
    # TF 1.x documented behaviour: the loss is multiplied by the scale, the gradients
    # divided by it, and a step with a non-finite gradient applies nothing.
    M = tf.contrib.mixed_precision
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.placeholder(tf.float32, [2])
    gs = tf.train.get_or_create_global_step()
    mgr = M.FixedLossScaleManager(256.0)
    opt = M.LossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), mgr)
    train = opt.minimize(tf.reduce_sum(w * w * x), global_step=gs)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        rows = []
        for xv in ([1.0, 0.5], [np.inf, 0.5], [1.0, 1.0]):
            s.run(train, {x: xv})
            rows.append((s.run(w).tolist(), int(s.run(gs)), float(s.run(mgr.get_loss_scale()))))
    assert rows == [([0.800000011920929, 1.7999999523162842], 1, 256.0),
                    ([0.800000011920929, 1.7999999523162842], 1, 256.0),
                    ([0.6399999856948853, 1.4399999380111694], 2, 256.0)]


# -- batch normalization, conv and pooling on float16 images ------------------------------
def test_layers_batch_norm_normalizes_float16_inputs_in_float32():
    inputs = np.array([[1, 2, 3], [4, 5.5, 6.1], [0.3, -1, 2]], np.float16)
    expected = {True: ("bn_nf/Cast_3:0", "a4b704ac6bb6913d053d803d4fbbc5bccabb"),
                False: ("bn_nf/Cast_5:0", "ff3bff3fff41ff437f451946cc34ffbbff3f")}
    for training, (name, bits) in expected.items():
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float16, [None, 3])
            out = tf.layers.batch_normalization(x, training=training, name="bn_nf")
            casts = [(o.name, [i.name for i in o.inputs])
                     for o in tf.get_default_graph().get_operations() if o.type == "Cast"]
            assert (out.name, out.dtype) == (name, tf.float16)
            assert casts == [("bn_nf/Cast", ["Placeholder:0"]),
                             (name[:-2], ["bn_nf/batchnorm/add_1:0"])]
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                assert _hex(s.run(out, {x: inputs})) == bits


def test_fused_and_unfused_batch_norm_conv_and_pool_on_float16_images():
    rng = np.random.RandomState(0)
    X = rng.randn(4, 5, 5, 3).astype(np.float16)
    x = tf.placeholder(tf.float16, [None, 5, 5, 3])
    scale, offset = tf.constant([1.0, 0.5, 2.0]), tf.constant([0.0, 0.1, -0.1])
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset, is_training=True)
    assert (y.dtype, m.dtype, v.dtype, y.name, m.name) == (
        tf.float16, tf.float32, tf.float32, "FusedBatchNormV3:0", "FusedBatchNormV3:1")
    y2, _, _ = tf.nn.fused_batch_norm(x, scale, offset, mean=tf.constant([0.1, 0.0, 0.2]),
                                      variance=tf.constant([1.0, 2.0, 0.5]),
                                      is_training=False)
    mean, var = tf.nn.moments(x, axes=[0, 1, 2])
    assert (mean.dtype, mean.name, var.name) == (tf.float16, "moments/Cast_1:0",
                                                 "moments/Cast_2:0")
    bn = tf.nn.batch_normalization(x, mean, var, tf.cast(offset, tf.float16),
                                   tf.cast(scale, tf.float16), 1e-3)
    training = tf.placeholder_with_default(True, [])
    with tf.variable_scope("net"):
        fused = tf.layers.batch_normalization(x, training=training, fused=True)
        plain = tf.layers.batch_normalization(x, training=training, fused=False, name="bn_nf")
    assert (fused.dtype, fused.name, plain.dtype, plain.name) == (
        tf.float16, "net/batch_normalization/cond/Merge:0", tf.float16, "net/bn_nf/Cast_3:0")
    assert all(v.dtype.name == "float32_ref" for v in tf.global_variables())
    assert [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
        "net/batch_normalization/AssignMovingAvg", "net/batch_normalization/AssignMovingAvg_1",
        "net/bn_nf/cond_2/Merge", "net/bn_nf/cond_3/Merge"]
    c = tf.nn.conv2d(x, tf.constant((rng.randn(3, 3, 3, 4) * 0.2).astype(np.float16)),
                     [1, 1, 1, 1], "SAME")
    mp = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    assert (c.dtype, c.shape.as_list(), mp.shape.as_list()) == (
        tf.float16, [None, 5, 5, 4], [None, 2, 2, 4])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out = s.run([y, v, y2, mean, var, bn, fused, plain, c, mp], {x: X})
        assert [_hex(o)[:32] for o in out] == [
            "7b3efc3351402b40f83b63bf9f3af6a7", "921b883fb361793f2951763f",
            "a73eba3333404740143adac2cc3af429", "6f2ecd2ef2af", "363cb73b9f3b",
            "7b3efc3351402b40f83b64bfa03af8a7", "7b3ec934843c2b402b3ffdba9f3a32b4",
            "7b3ec934843c2b402b3ffdba9f3a32b4", "863f7a356ab765b68e3c963149b7e337",
            "863f303c443bad3cf03d833aca3c9334"]
        s.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {x: X})
        moving = {v.name: [round(float(f), 5) for f in s.run(v)]
                  for v in tf.global_variables() if "moving" in v.name}
    assert moving == {
        "net/batch_normalization/moving_mean:0": [0.00101, 0.00106, -0.00124],
        "net/batch_normalization/moving_variance:0": [1.00063, 0.99974, 0.99962],
        "net/bn_nf/moving_mean:0": [0.00101, 0.00106, -0.00124],
        "net/bn_nf/moving_variance:0": [1.00053, 0.99964, 0.99953]}


# -- float16 variables: initializers, seeded random ops, moving averages ------------------
def test_float16_variables_seeded_random_ops_and_feeds():
    a = tf.constant(np.float16(1.5))
    b = tf.convert_to_tensor(np.array([1, 2], np.float16))
    v = tf.Variable(np.array([0.1, 0.2], np.float16), name="v16")
    z, o = tf.zeros([2], dtype="half"), tf.ones_like(v)
    assert [t.dtype.name for t in (a, b, v, z, o)] == ["float16"] * 2 + ["float16_ref"] + [
        "float16"] * 2
    p32, p16 = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float16, [2])
    ts = [tf.random_normal([3], dtype=tf.float16, seed=1),
          tf.random_uniform([3], dtype=tf.float16, seed=2),
          tf.truncated_normal([3], dtype=tf.float16, seed=3),
          tf.get_variable("g16", [2, 2], tf.float16,
                          initializer=tf.glorot_uniform_initializer(seed=4)),
          tf.get_variable("vs16", [3], tf.float16,
                          initializer=tf.variance_scaling_initializer(seed=5))]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(p32 * 2, {p32: np.array([1.5, 2.5], np.float16)}).dtype == np.float32
        with np.errstate(over="ignore"):  # NumPy warns as the feed overflows, as in TF
            out = s.run(p16 + 1, {p16: [0.1, 70000.0]})
        assert out.dtype == np.float16 and _hex(out) == "663c007c"
        assert [_hex(t) for t in s.run(ts)] == [
            "7ebaf03d2e2c", "ac343035ec39", "3f3c07bb292f", "28b73038803c6030", "2fba74b797bc"]
        # float16 sums stay in float16 range: two maxima overflow, also in a mean
        assert np.isinf(s.run(tf.reduce_mean(p16), {p16: np.array([65504, 65504],
                                                                   np.float16)}))


def test_moving_average_of_a_float16_variable_takes_one_minus_decay_in_float32():
    v = tf.Variable(np.array([0.1, 0.2], np.float16), name="v16")
    ema = tf.train.ExponentialMovingAverage(0.9)
    upd = ema.apply([v])
    avg = ema.average(v)
    assert (avg.name, avg.dtype.name) == ("v16/ExponentialMovingAverage:0", "float16_ref")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(upd)
        s.run(tf.assign(v, [1.0, 2.0]))
        s.run(upd)
        # TensorFlow: (1 - 0.9) in float32, cast to float16 (0x2e66), then the update
        assert _hex(s.run(avg)) == "14321436" and v.eval().dtype == np.float16
