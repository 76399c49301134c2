"""TF1 programs "from the wild", round 4 (training utilities, tf.test, losses, metrics,
optimizers): the classes of discrepancy a fourth fidelity sweep found and fixed.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed (rounded to 4 decimals there).
Covered: `tf.test.TestCase`'s assertion helpers and `tf.test`'s module functions
(``compute_gradient`` Jacobians, device queries, ``mock``, ``StubOutForTesting``,
``Benchmark``); ``ExponentialMovingAverage(zero_debias=True)`` on tensors;
``make_template(create_scope_now_=True)`` op names; the variable names of the top-k
metrics, ``average_precision_at_k`` and ``mean_cosine_distance``; the name scope of
``natural_exp_decay``; the losses' weight-broadcast error; optimizers with non-default
arguments over three steps.
"""

from __future__ import annotations

import io
import os
import unittest

import numpy as np
import pytest

import flowgraph as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- tf.test -----------------------------------------------------------------------------
def _suite_results(case_cls):
    suite = unittest.TestLoader().loadTestsFromTestCase(case_cls)
    res = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    out = {t.id().split(".")[-1]: "F" for t, _ in res.failures}
    out.update({t.id().split(".")[-1]: "E" for t, _ in res.errors})
    return {n: out.get(n, "ok") for n in unittest.TestLoader().getTestCaseNames(case_cls)}


def test_test_case_assertion_helpers_pass_and_fail_as_in_tensorflow():
    class Wild(tf.test.TestCase):
        def test_range(self):
            self.assertAllInRange(np.array([0.1, 0.5]), 0.0, 1.0)

        def test_range_fail(self):
            self.assertAllInRange(np.array([0.1, 1.5]), 0.0, 1.0)

        def test_range_open(self):
            self.assertAllInRange(np.array([0.0, 0.5]), 0.0, 1.0, open_lower_bound=True)

        def test_dtype(self):
            self.assertDTypeEqual(np.zeros(2, np.float32), np.float32)

        def test_dtype_fail(self):
            self.assertDTypeEqual(np.zeros(2, np.float32), np.int32)

        def test_op_error(self):
            with self.cached_session() as s:
                with self.assertRaisesOpError("Condition x"):
                    s.run(tf.assert_positive(tf.constant([-1.0])))

        def test_op_error_fail(self):
            with self.assertRaisesOpError("zzz"):
                pass

        def test_pred(self):
            with self.assertRaisesWithPredicateMatch(ValueError, lambda e: "bad" in str(e)):
                raise ValueError("bad thing")

        def test_less(self):
            self.assertAllLess([1, 2], 3)
            self.assertAllGreater([1, 2], 0)
            self.assertAllLessEqual([1, 3], 3)
            self.assertAllGreaterEqual([1, 2], 1)

        def test_proto(self):
            self.assertProtoEquals("dim { size: 2 }", tf.TensorShape([2]).as_proto())

        def test_items(self):
            self.assertItemsEqual([1, 2], [2, 1])
            self.assertStartsWith("hello", "he")

        def test_thread(self):
            out = []
            t = self.checkedThread(target=lambda: out.append(1))
            t.start()
            t.join()
            self.assertEqual(out, [1])

        def test_by_type(self):
            self.assertAllCloseAccordingToType(np.array([1.0], np.float16),
                                               np.array([1.0005], np.float16))

        def test_not_close(self):
            self.assertNotAllClose([1.0], [2.0])

        def test_no_all_true(self):  # TF 2.15's TestCase has no assertAllTrue
            self.assertAllTrue([True])

    assert _suite_results(Wild) == {
        "test_by_type": "ok", "test_dtype": "ok", "test_dtype_fail": "F", "test_items": "ok",
        "test_less": "ok", "test_no_all_true": "E", "test_not_close": "ok",
        "test_op_error": "ok", "test_op_error_fail": "F", "test_pred": "ok",
        "test_proto": "ok", "test_range": "ok", "test_range_fail": "F",
        "test_range_open": "F", "test_thread": "ok",
        "test_session": "ok"}  # unittest collects the helper; it skips itself, as in TF


def test_compute_gradient_returns_tensorflows_jacobians():
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        y = tf.matmul(x, x)
        x0 = np.array([[1.0, 2.0], [3.0, 4.0]])
        theoretical, numerical = tf.test.compute_gradient(x, [2, 2], y, [2, 2],
                                                          x_init_value=x0)
        assert theoretical.shape == numerical.shape == (4, 4)
        np.testing.assert_allclose(theoretical, [[2, 2, 3, 0], [3, 5, 0, 3],
                                                 [2, 0, 5, 2], [0, 2, 3, 8]])
        np.testing.assert_allclose(numerical, theoretical, atol=1e-2)
        assert tf.test.compute_gradient_error(x, [2, 2], tf.reduce_sum(y), [],
                                              x_init_value=x0) < 1e-2
        listed = tf.test.compute_gradient([x], [[2, 2]], tf.reduce_sum(y, 1), [2],
                                          x_init_value=[x0])
        assert isinstance(listed, list) and len(listed) == 1 and isinstance(listed[0], tuple)
        assert listed[0][0].shape == (4, 2)


def test_tf_test_module_functions():
    assert tf.test.is_gpu_available() is False and tf.test.gpu_device_name() == ""
    assert tf.test.is_built_with_cuda() in (True, False)
    assert tf.test.mock.MagicMock is unittest.mock.MagicMock
    stubs = tf.test.StubOutForTesting()
    stubs.Set(np, "pi", 3.0)
    assert np.pi == 3.0
    stubs.CleanUp()
    assert np.pi != 3.0
    g1, g2 = tf.Graph(), tf.Graph()
    for g in (g1, g2):
        with g.as_default():
            tf.constant(1.0, name="c")
    tf.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())
    with g2.as_default():
        tf.constant(2.0, name="d")
    with pytest.raises(AssertionError):
        tf.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())
    assert issubclass(tf.test.Benchmark, object)


# -- training utilities --------------------------------------------------------------------
def test_ema_zero_debias_on_tensors():
    p = tf.placeholder(tf.float32, [2])
    t = p * 1.0
    ema = tf.train.ExponentialMovingAverage(0.8, zero_debias=True)
    up = ema.apply([t])
    got = []
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for v in ([1.0, 2.0], [3.0, -1.0], [0.0, 5.0]):
            s.run(up, {p: v})
            got.append(s.run(ema.average(t)))
    np.testing.assert_allclose(got, [[1.0, 2.0], [2.1111, 0.3333], [1.2459, 2.2459]],
                               atol=1e-4)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "mul/ExponentialMovingAverage", "mul/ExponentialMovingAverage/biased",
        "mul/ExponentialMovingAverage/local_step"]
    assert tf.trainable_variables() == []


def test_ema_variables_to_restore_lists_the_debias_variables():
    x = tf.get_variable("x", initializer=tf.constant([1.0, 2.0]))
    y = tf.get_variable("y", initializer=tf.constant(5.0))
    step = tf.Variable(0, trainable=False, name="gstep")
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    ema2 = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="EMA2")
    t = tf.constant(2.0) * y
    ema.apply([x, y])
    ema2.apply([t])
    assert sorted(ema.variables_to_restore()) == [
        "gstep", "mul/EMA2", "mul/EMA2/biased", "mul/EMA2/local_step",
        "x/ExponentialMovingAverage", "y/ExponentialMovingAverage"]
    assert ema2.average_name(t) == "mul/EMA2"


def test_make_template_create_scope_now_names_first_call_ops_in_its_scope():
    def fn(x):
        return x * tf.get_variable("w", [], initializer=tf.constant_initializer(3.0))

    t2 = tf.make_template("tm2", fn, create_scope_now_=True)
    c = t2(tf.constant(1.0))
    assert (t2.variable_scope.name, c.name, t2.variable_scope_name) == \
        ("tm2", "tm2/mul:0", "tm2/")
    d = t2(tf.constant(2.0))
    assert d.name == "tm2_1/mul:0"


def test_natural_exp_decay_uses_tensorflows_scope_name():
    gs = tf.placeholder(tf.int64, [])
    a = tf.train.natural_exp_decay(0.1, gs, 3, 0.5)
    b = tf.train.natural_exp_decay(0.1, gs, 3, 0.5, staircase=True)
    assert (a.op.name, b.op.name) == ("ExponentialDecay", "ExponentialDecay_1")
    with tf.Session() as s:
        vals = [s.run(b, {gs: i}) for i in (0, 3, 12)]
    np.testing.assert_allclose(vals, [0.1, 0.0607, 0.0135], atol=1e-4)


_OPTS = {
    "rms_c": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.5,
                                                epsilon=1e-6, centered=True),
              [[0.4566, -1.0014], [1.4402, 0.1338], [-0.3699, 0.7171]], [0.0681, -0.2585]),
    "ftrl_shr": (lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                                l2_regularization_strength=0.02,
                                                l2_shrinkage_regularization_strength=0.05),
                 [[0.1746, -0.1502], [1.0676, -0.0421], [-0.3571, 0.5358]],
                 [-0.0173, -0.335]),
    "adagrad_da": (lambda: tf.train.AdagradDAOptimizer(
        0.1, tf.train.get_global_step(), initial_gradient_squared_accumulator_value=0.2,
        l1_regularization_strength=0.01, l2_regularization_strength=0.02),
        [[0.0156, -0.1096], [0.0384, -0.0196], [0.0462, -0.0029]], [0.0475, 0.0032]),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
                 [[0.203, -0.9303], [1.1946, -0.0673], [-0.6139, 0.1958]],
                 [0.0339, -0.4556]),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 [[0.4903, -1.0088], [1.4904, 0.1904], [-0.3096, 0.7903]],
                 [0.0904, -0.2097]),
}


@pytest.mark.parametrize("which", sorted(_OPTS))
def test_optimizers_with_non_default_arguments_match_tensorflow(which):
    make, want_w, want_b = _OPTS[which]
    w = tf.get_variable("w", initializer=tf.constant([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]))
    b = tf.get_variable("b", initializer=tf.constant([0.1, -0.2]))
    y = tf.matmul(tf.constant([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]), w) + b
    loss = tf.reduce_mean(tf.square(y - tf.constant([[1.0, 0.0], [0.0, 1.0]])))
    gs = tf.train.get_or_create_global_step()
    op = make().minimize(loss, global_step=gs)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(3):
            s.run(op)
        np.testing.assert_allclose(s.run(w), want_w, atol=1e-4)
        np.testing.assert_allclose(s.run(b), want_b, atol=1e-4)


# -- metrics and losses --------------------------------------------------------------------
def test_top_k_metric_variable_names_follow_tensorflow():
    logits = tf.constant([[0.1, 0.5, 0.3, 0.9], [0.8, 0.2, 0.4, 0.05], [0.3, 0.3, 0.6, 0.1]])
    ml = tf.constant([[3, 1], [2, -1], [0, 2]], tf.int64)
    m = tf.metrics
    ups = [m.average_precision_at_k(ml, logits, 3)[1],
           m.precision_at_top_k(ml, tf.nn.top_k(logits, 2).indices)[1],
           m.precision_at_k(ml, logits, 2, class_id=2)[1],
           m.recall_at_top_k(ml, tf.nn.top_k(logits, 2).indices)[1]]
    assert sorted(v.op.name for v in tf.local_variables()) == [
        "average_precision_at_3/max_1", "average_precision_at_3/total",
        "precision_at_2_class2/false_positive_at_2_class2",
        "precision_at_2_class2/true_positive_at_2_class2",
        "precision_at_k/false_positive_at_k", "precision_at_k/true_positive_at_k",
        "recall_at_k/false_negative_at_k", "recall_at_k/true_positive_at_k"]
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        np.testing.assert_allclose(s.run(ups)[1:], [0.8333, 1.0, 0.8333], atol=1e-4)


def test_mean_cosine_distance_variables_and_values():
    lab = tf.placeholder(tf.float32, [None, 2])
    pred = tf.placeholder(tf.float32, [None, 2])
    value, update = tf.metrics.mean_cosine_distance(lab, pred, dim=1)
    assert sorted(v.op.name for v in tf.local_variables()) == [
        "mean_cosine_distance/count", "mean_cosine_distance/total"]
    labels = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.float32).reshape(-1, 2)
    preds = np.array([0.9, 0.4, 0.65, 0.3, 0.2, 0.7, 0.8, 0.1], np.float32).reshape(-1, 2)
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        ups = [s.run(update, {lab: labels[i:i + 2], pred: preds[i:i + 2]}) for i in (0, 2)]
        np.testing.assert_allclose([*ups, s.run(value)], [0.075, 0.3375, 0.3375], atol=1e-4)


def test_loss_weights_that_do_not_broadcast_raise_tensorflows_message():
    lab = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"^weights can not be broadcast to values\. "
                                         r"values\.rank=1\. weights\.rank=2"):
        tf.losses.softmax_cross_entropy(lab, lab, weights=np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match=r"^weights can not be broadcast to values\. "
                                         r"Mismatch at dim 0"):
        tf.losses.mean_squared_error(lab, lab, weights=np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="You must specify argument `axis`"):
        tf.losses.cosine_distance(lab, lab)


def test_compute_gradient_jacobians_have_the_dtype_of_x_and_need_a_dependency():
    with tf.Graph().as_default(), tf.Session() as s:
        v = tf.Variable([[1.0, 2.0]])
        y = tf.reduce_sum(tf.exp(v) * 2.0)
        s.run(v.initializer)
        th, nu = tf.test.compute_gradient(v, [1, 2], y, [], delta=1e-2,
                                          x_init_value=np.array([[0.5, -0.5]]))
        assert th.dtype == nu.dtype == np.float32 and th.shape == (2, 1)
        np.testing.assert_allclose(th, [[3.297], [1.213]], atol=1e-3)
        np.testing.assert_allclose(nu, [[3.30], [1.21]], atol=1e-2)
        a, b = tf.constant([1.0, 2.0]), tf.constant([3.0])
        with pytest.raises(AssertionError, match="dx = None"):
            tf.test.compute_gradient(a, [2], b * 2.0, [1], x_init_value=np.array([1.0, 2.0]))


def test_clip_by_global_norm_output_names_repeat_the_scope_as_tensorflow_does():
    x = tf.constant([1.0, 2.0])
    assert [t.name for t in tf.clip_by_global_norm([x, x], 1.0)[0]] == [
        "clip_by_global_norm/clip_by_global_norm/_0:0",
        "clip_by_global_norm/clip_by_global_norm/_1:0"]
    with tf.name_scope("outer"):
        assert tf.clip_by_global_norm([x], 1.0)[0][0].name == \
            "outer/clip_by_global_norm/outer/clip_by_global_norm/_0:0"


def test_each_test_gets_its_own_temp_dir_inside_the_module_one():
    seen = {}

    class Dirs(tf.test.TestCase):
        def test_a(self):
            seen["a"] = self.get_temp_dir()
            assert self.get_temp_dir() == seen["a"]
            open(f"{seen['a']}/f.txt", "w").close()

        def test_b(self):
            seen["b"] = self.get_temp_dir()
            assert not os.listdir(seen["b"])

    assert set(_suite_results(Dirs).values()) == {"ok"}
    assert seen["a"] != seen["b"]
    assert os.path.dirname(seen["a"]) == tf.test.get_temp_dir()


def test_gradients_unconnected_gradients_and_aggregation_method_checks():
    x = tf.constant([1.0, 2.0])
    z = x * x
    u = tf.constant(5.0)
    assert tf.gradients(z, u) == [None]
    zero = tf.gradients(z, u, unconnected_gradients="zero")
    zero_enum = tf.gradients(z, u, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert _run(zero + zero_enum) == [0.0, 0.0]
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'bogus'"):
        tf.gradients(z, u, unconnected_gradients="bogus")
    with pytest.raises(ValueError, match="Invalid `aggregation_method` specified 99"):
        tf.gradients(z, x, aggregation_method=99)
    tree = tf.gradients(z + x, x, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    np.testing.assert_allclose(_run(tree)[0], [3.0, 5.0])


def test_assert_all_close_and_equal_edge_cases_follow_tensorflow():
    import collections

    pair = collections.namedtuple("pair", "a b")

    class Edges(tf.test.TestCase):
        def test_nt(self):
            self.assertAllClose(pair(1.0, [2.0]), pair(1.0, [2.0]))

        def test_nt_vs_tuple(self):  # TF: ValueError, "Can't compare dict to non-dict"
            self.assertAllClose(pair(1.0, 2.0), (1.0, 2.0))

        def test_str_vs_bytes(self):
            self.assertAllEqual(["a"], [b"a"])

        def test_device(self):
            self.assertDeviceEqual("/cpu:0", "/device:CPU:0")

        def test_incompatible(self):
            with self.cached_session() as s:
                with self.assertRaisesIncompatibleShapesError():
                    a = tf.placeholder(tf.float32, [None])
                    s.run(a + tf.ones([3]), {a: [1.0, 2.0]})

        def test_in_set_fail(self):
            self.assertAllInSet([1, 3], [1, 2])

    assert _suite_results(Edges) == {
        "test_device": "ok", "test_in_set_fail": "F", "test_incompatible": "ok",
        "test_nt": "ok", "test_nt_vs_tuple": "E", "test_session": "ok",
        "test_str_vs_bytes": "ok"}


def test_warm_start_reads_a_partitioned_variable_from_its_full_checkpoint_entry(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("dense/bias", initializer=tf.constant([0.5, -0.5]))
        tf.get_variable("emb", [4, 2], initializer=tf.constant_initializer(7.0),
                        partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(s, str(tmp_path / "m"))
    with tf.Graph().as_default():
        b = tf.get_variable("dense/bias", [2], initializer=tf.zeros_initializer())
        p = tf.get_variable("emb", [4, 2], initializer=tf.zeros_initializer(),
                            partitioner=tf.fixed_size_partitioner(2))
        tf.train.warm_start(path)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_allclose(s.run(b), [0.5, -0.5])
            np.testing.assert_allclose(s.run(tf.convert_to_tensor(p)), np.full((4, 2), 7.0))
