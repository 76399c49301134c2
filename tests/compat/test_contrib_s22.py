"""TF 1.x contrib modules added in session 22: ``deprecated``, ``stateless``, ``linalg``,
``nn``. Expected values were printed by TensorFlow 2.15 (``tf.compat.v1``, ``tf.raw_ops``
for TF 1.0's summary functions) on the same programs."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import flowgraph as tf


def _md5(b: bytes) -> str:
    return hashlib.md5(b).hexdigest()


# -- tf.contrib.deprecated ---------------------------------------------------------------------
def test_deprecated_summaries_names_types_and_bytes_match_tf():
    D = tf.contrib.deprecated
    with tf.Graph().as_default() as g:
        assert D.merge_all_summaries() is None
        with tf.name_scope("outer"):
            s1 = D.scalar_summary("loss", tf.constant(1.5))
            s2 = D.scalar_summary(["a", "b"], tf.constant([1.0, 2.0]), name="pair")
            h = D.histogram_summary("w", tf.constant([1.0, 2.0, 3.0]))
            im = D.image_summary("img", tf.reshape(tf.range(24, dtype=tf.float32), [2, 2, 2, 3]),
                                 max_images=1)
            au = D.audio_summary("snd", tf.constant([[0.1, -0.2, 0.3]]), 8000)
            m = D.merge_summary([s1, h], name="mm")
        ma = D.merge_all_summaries()
        got = [(t.op.name, t.op.type, [i.name for i in t.op.inputs])
               for t in [s1, s2, h, im, au, m, ma]]
        assert got == [
            ("outer/ScalarSummary", "ScalarSummary",
             ["outer/ScalarSummary/tags:0", "outer/Const:0"]),
            ("outer/pair", "ScalarSummary", ["outer/pair/tags:0", "outer/Const_1:0"]),
            ("outer/HistogramSummary", "HistogramSummary",
             ["outer/HistogramSummary/tag:0", "outer/Const_2:0"]),
            ("outer/ImageSummary", "ImageSummary", ["outer/ImageSummary/tag:0", "outer/Reshape:0"]),
            ("outer/AudioSummary", "AudioSummaryV2",
             ["outer/AudioSummary/tag:0", "outer/Const_3:0", "outer/AudioSummary/sample_rate:0"]),
            ("outer/mm/mm", "MergeSummary", ["outer/ScalarSummary:0", "outer/HistogramSummary:0"]),
            ("MergeSummary/MergeSummary", "MergeSummary",
             ["outer/ScalarSummary:0", "outer/pair:0", "outer/HistogramSummary:0",
              "outer/ImageSummary:0", "outer/AudioSummary:0"]),
        ]
        assert len(g.get_collection(tf.GraphKeys.SUMMARIES)) == 5
        with tf.Session() as sess:
            out = sess.run([s1, s2, h, im, au, m, ma])
    assert out[0] == b"\n\x0b\n\x04loss\x15\x00\x00\xc0?"
    assert out[1] == b"\n\x08\n\x01a\x15\x00\x00\x80?\n\x08\n\x01b\x15\x00\x00\x00@"
    assert [_md5(b) for b in out[2:]] == [
        "fbc29e4ecc20d15f7991c41aff789688", "75ff1fc5009e447af828074af2e9ca5c",
        "22bfc61510cb5f1c8b4cd12b99ba8cb3", "48f04efd3efea99ee5347a63c29a2d49",
        "c699f30fefa39499cf52518dcc282327"]


def test_deprecated_summaries_collections_and_bad_input():
    D = tf.contrib.deprecated
    with tf.Graph().as_default() as g:
        s = D.scalar_summary("x", tf.constant(1.0), collections=["mine"])
        assert g.get_collection("mine") == [s] and g.get_collection(tf.GraphKeys.SUMMARIES) == []
        assert D.merge_all_summaries("mine").op.type == "MergeSummary"
        with pytest.raises(TypeError, match="scalar_summary"):
            D.scalar_summary("x", tf.constant("s"))
        with pytest.raises(ValueError, match="max_images"):
            D.image_summary("x", tf.zeros([1, 2, 2, 3]), max_images=0)
        with pytest.raises(ValueError, match="merge_summary"):
            D.merge_summary([])


# -- tf.contrib.stateless ----------------------------------------------------------------------
def test_stateless_aliases_give_tf_values_and_names():
    S = tf.contrib.stateless
    assert S.stateless_random_uniform is tf.random.stateless_uniform
    with tf.Graph().as_default():
        a = S.stateless_random_uniform([2, 3], seed=[1, 2])
        b = S.stateless_random_normal([3], seed=[3, 4])
        c = S.stateless_truncated_normal([3], seed=[5, 6])
        d = S.stateless_multinomial(tf.math.log([[0.2, 0.3, 0.5]]), 5, seed=[7, 8])
        e = S.stateless_random_uniform([4], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
        assert [(x.op.name, x.dtype.name) for x in [a, b, c, d, e]] == [
            ("stateless_random_uniform", "float32"), ("stateless_random_normal", "float32"),
            ("stateless_truncated_normal", "float32"),
            ("stateless_multinomial/StatelessMultinomial", "int64"),
            ("stateless_random_uniform_1", "int32")]
        assert [i.name for i in d.op.inputs][1:] == [
            "stateless_multinomial/StatelessMultinomial/num_samples:0",
            "stateless_multinomial/StatelessMultinomial/seed:0"]
        with tf.Session() as sess:
            va, vb, vc, vd, ve = sess.run([a, b, c, d, e])
    np.testing.assert_array_equal(va, np.float32([[0.8440604, 0.19204533, 0.9962232],
                                                  [0.1603874, 0.27199018, 0.649346]]))
    np.testing.assert_array_equal(vb, np.float32([-0.17393383, 1.6723547, 0.34817016]))
    np.testing.assert_array_equal(vc, np.float32([1.0239844, -0.53878856, 1.2795534]))
    assert vd.tolist() == [[1, 1, 2, 1, 1]]
    assert ve.tolist() == [0, 9, 4, 9]


def test_stateless_categorical_op_named_like_tf():
    with tf.Graph().as_default():
        x = tf.random.stateless_categorical([[0.1, 0.2]], 2, [1, 2], name="c")
        assert x.op.name == "c/StatelessMultinomial"
        assert x.op.inputs[2].name == "c/StatelessMultinomial/seed:0"


# -- tf.contrib.linalg -------------------------------------------------------------------------
def test_linalg_classes_are_tf_linalg_objects():
    names = [n for n in dir(tf.linalg) if n.startswith("LinearOperator")]
    assert len(names) >= 15
    for n in names:
        assert getattr(tf.contrib.linalg, n) is getattr(tf.linalg, n)
    op = tf.contrib.linalg.LinearOperatorDiag([1.0, 2.0])
    with tf.Session() as sess:
        assert sess.run(op.matvec(tf.constant([3.0, 4.0]))).tolist() == [3.0, 8.0]


# -- tf.contrib.nn ----------------------------------------------------------------------------
def test_nn_alpha_dropout_and_scaled_softplus_match_tf():
    N = tf.contrib.nn
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.constant(np.linspace(-2, 2, 12).reshape(3, 4), tf.float32)
        d = N.alpha_dropout(x, 0.7, seed=5)
        d2 = N.alpha_dropout(x, 0.5, noise_shape=[1, 4], seed=9)
        p = N.scaled_softplus(tf.constant([-3.0, 0.0, 1.0, 5.0]),
                              tf.constant([0.5, 1.0, 2.0, 0.1]), clip=4.0)
        assert d.op.name == "alpha_dropout/add_2" and N.alpha_dropout(x, 1.0) is x
        with pytest.raises(ValueError, match="keep_prob"):
            N.alpha_dropout(x, 1.5)
        with tf.Session() as sess:
            vd, vd2, vp = sess.run([d, d2, p])
    np.testing.assert_allclose(vd, [[-1.2678132, -0.9547396, -1.0595481, -0.32859215],
                                    [-0.01551849, 0.2975552, 0.6106289, 0.9237026],
                                    [1.2367762, -1.0595481, 1.8629236, 2.1759973]], rtol=1e-6)
    np.testing.assert_allclose(vd2[:, 0], [-0.99361587, 0.2957003, 1.5850165], rtol=1e-6)
    np.testing.assert_allclose(vd2[:, 1:], np.full((3, 3), -0.7791939), rtol=1e-6)
    np.testing.assert_allclose(vp, [0.00123784, 0.6931472, 1.948154, 4.0], rtol=1e-5)


def test_nn_sampled_sparse_softmax_loss_and_flipped_losses_match_tf():
    N = tf.contrib.nn
    assert N.conv1d_transpose is tf.nn.conv1d_transpose
    with tf.Graph().as_default():
        w = tf.constant(np.arange(30, dtype=np.float32).reshape(10, 3) / 10)
        b = tf.constant(np.arange(10, dtype=np.float32) / 7)
        labels = tf.constant([[1], [4], [7]], tf.int64)
        inputs = tf.constant(np.linspace(-1, 1, 9).reshape(3, 3), tf.float32)
        sv = (tf.constant([0, 4, 2, 9], tf.int64), tf.constant([[0.3], [0.2], [0.1]]),
              tf.constant([0.5, 0.2, 0.25, 0.05]))
        loss = N.sampled_sparse_softmax_loss(w, b, labels, inputs, 4, 10, sampled_values=sv)
        lg, lb = tf.constant([[1.0, 2.0, 0.5]]), tf.constant([[0.2, 0.3, 0.5]])
        g1 = N.deprecated_flipped_softmax_cross_entropy_with_logits(lg, lb)
        g2 = N.deprecated_flipped_sparse_softmax_cross_entropy_with_logits(lg, tf.constant([2]))
        g3 = N.deprecated_flipped_sigmoid_cross_entropy_with_logits(lg, lb)
        with tf.Session() as sess:
            vl, v1, v2, v3 = sess.run([loss, g1, g2, g3])
    np.testing.assert_allclose(vl, [1.1363142, 2.302383, 2.4262698], rtol=1e-6)
    np.testing.assert_allclose(v1, [1.4143689], rtol=1e-6)
    np.testing.assert_allclose(v2, [1.9643688], rtol=1e-6)
    np.testing.assert_allclose(v3, [[1.1132617, 1.526928, 0.724077]], rtol=1e-6)


# -- tf.contrib.compiler ----------------------------------------------------------------------
def _xla_attrs(op):
    return {k: v for k, v in op._attrs.items() if k.startswith("_Xla")}


def test_jit_scope_records_tf_attrs_nested_and_callable():
    jit = tf.contrib.compiler.jit.experimental_jit_scope
    assert tf.xla.experimental.jit_scope is jit
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        with jit():
            b = tf.add(a, 1.0, name="b")
            with jit(compile_ops=False):
                c = tf.multiply(b, 2.0, name="c")
            tf.identity(c, name="d")
        with jit(separate_compiled_gradients=True):
            e = tf.square(c, name="e")
        with jit(compile_ops=lambda nd: nd.op == "Sqrt"):
            tf.abs(tf.sqrt(e, name="f"), name="h")
        got = {op.name: tuple(op.get_attr(k) for k in
                              ("_XlaCompile", "_XlaScope", "_XlaSeparateCompiledGradients"))
               for op in g.get_operations() if op.name != "a"}
        assert _xla_attrs(a.op) == {}
        with tf.Session() as sess:
            assert sess.run("h:0") == pytest.approx(4.0)
    # TensorFlow 2.15's tf.compat.v1.xla.experimental.jit_scope on the same program.
    assert got == {
        "b/y": (True, b"jit_scope_0", False), "b": (True, b"jit_scope_0", False),
        "c/y": (False, b"jit_scope_0", False), "c": (False, b"jit_scope_0", False),
        "d": (True, b"jit_scope_0", False),
        "e": (True, b"jit_scope_1", True), "f": (True, b"jit_scope_2", False),
        "h": (False, b"jit_scope_2", False)}


def test_xla_compile_outputs_like_tf():
    xc = tf.contrib.compiler.xla.compile
    assert tf.xla.experimental.compile is xc
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        n = len(g.get_operations())
        r = xc(lambda x, y: (x + y, x * y), [a, 2.0])
        assert isinstance(r, list) and [t.name for t in r] == ["output_0:0", "output_1:0"]
        names = [o.name for o in g.get_operations()[n:]]
        assert "add" in names and "mul" in names  # built in the caller's scope
        r3 = xc(lambda: (a * 2.0, tf.no_op(name="side")))
        assert [o.name for o in r3[0].op.control_inputs] == ["side"]
        r5 = xc(lambda x: None, [a])
        assert (r5.name, r5.type) == ("output_0_2", "NoOp")
        r6 = xc(lambda x: {"p": x, "q": [x + 1.0]}, [a])
        assert r6["q"][0].name == "output_1_1:0"
        with pytest.raises(ValueError, match="followed by"):
            xc(lambda: (tf.no_op(), a))
        with tf.Session() as sess:
            assert sess.run([r, r3, r6]) == [[3.0, 2.0], [2.0], {"p": 1.0, "q": [2.0]}]


# -- tf.contrib.mixed_precision ---------------------------------------------------------------
def _run_loss_scaled(mgr_fn, feeds):
    M = tf.contrib.mixed_precision
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        x = tf.placeholder(tf.float32, [2])
        gs = tf.train.get_or_create_global_step()
        mgr = mgr_fn(M)
        opt = M.LossScaleOptimizer(tf.train.GradientDescentOptimizer(0.1), mgr)
        gv = opt.compute_gradients(tf.reduce_sum(w * w * x), [w])
        train = opt.apply_gradients(gv, global_step=gs)
        rows = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for xv in feeds:
                g = sess.run(gv[0][0], {x: xv})
                sess.run(train, {x: xv})
                rows.append((g.tolist(), sess.run(w).tolist(),
                             float(sess.run(mgr.get_loss_scale())), int(sess.run(gs))))
    return rows


def test_mixed_precision_dynamic_scale_matches_tf():
    # TF 2.15: MixedPrecisionLossScaleOptimizer(GradientDescent(0.1),
    # DynamicLossScale(initial_loss_scale=4, increment_period=2, multiplier=2)).
    rows = _run_loss_scaled(
        lambda M: M.ExponentialUpdateLossScaleManager(4.0, 2, decr_every_n_nan_or_inf=1,
                                                      incr_ratio=2, decr_ratio=0.5),
        [[1.0, 0.5], [1.0, 0.5], [np.inf, 0.5], [1.0, 0.5], [1.0, 1.0], [np.nan, 1.0],
         [1.0, 1.0]])
    expected = [
        ([2.0, 2.0], [0.800000011920929, 1.7999999523162842], 4.0, 1),
        ([1.600000023841858, 1.7999999523162842], [0.6399999856948853, 1.6200000047683716],
         8.0, 2),
        ([np.inf, 1.6200000047683716], [0.6399999856948853, 1.6200000047683716], 4.0, 2),
        ([1.2799999713897705, 1.6200000047683716], [0.5119999647140503, 1.4579999446868896],
         4.0, 3),
        ([1.0239999294281006, 2.9159998893737793], [0.4095999598503113, 1.1663999557495117],
         8.0, 4),
        (None, [0.4095999598503113, 1.1663999557495117], 4.0, 4),
        ([0.8191999197006226, 2.3327999114990234], [0.32767996191978455, 0.9331199526786804],
         4.0, 5)]
    for (g, w, s, step), (eg, ew, es, estep) in zip(rows, expected, strict=True):
        if eg is None:
            assert np.isnan(g[0]) and g[1] == pytest.approx(2.3327999114990234)
        else:
            assert g == eg
        assert (w, s, step) == (ew, es, estep)


def test_mixed_precision_bad_step_counting_and_fixed_manager():
    # TF 1.x's default decr_every_n_nan_or_inf=2: the scale shrinks (x0.8) on the second
    # non-finite step since it last changed (a finite step in between does not reset the
    # bad-step count; a bad step resets the good-step count, so growth waits again).
    rows = _run_loss_scaled(
        lambda M: M.ExponentialUpdateLossScaleManager(10.0, 2),
        [[np.inf, 1.0], [1.0, 1.0], [np.inf, 1.0], [1.0, 1.0], [1.0, 1.0]])
    assert [r[2] for r in rows] == [10.0, 10.0, 8.0, 8.0, 16.0]
    assert [r[3] for r in rows] == [0, 1, 1, 2, 3]
    fixed = _run_loss_scaled(lambda M: M.FixedLossScaleManager(1024),
                             [[1.0, 1.0], [np.inf, 1.0]])
    assert fixed[0][:3] == ([2.0, 4.0], [0.800000011920929, 1.600000023841858], 1024.0)
    assert fixed[1][1:] == ([0.800000011920929, 1.600000023841858], 1024.0, 1)
    with pytest.raises(ValueError, match="at least 1"):
        tf.contrib.mixed_precision.FixedLossScaleManager(0.5)
