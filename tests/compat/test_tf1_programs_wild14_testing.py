"""TF1 unit tests and debugging aids, sweep 14 (area ``testing``), run under TensorFlow 2.15
and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a ``tf.test.TestCase`` module exercising the session
helpers (``session``, ``cached_session``, ``test_session``, ``evaluate`` on nests and
variables) and the assertion family (``assertAllClose`` on nested dicts with rtol/atol,
``assertAllEqual``, ``assertAllInRange``/``InSet``, ``assertShapeEqual``,
``assertArrayNear``/``Near``/``NDArrayNear``, ``assertProtoEquals`` on GraphDef and
ConfigProto text, ``assertRaisesOpError``/``WithPredicateMatch``), run through
``unittest.main(exit=False)`` and compared test by test; a training graph instrumented
with ``tf.Print`` (``first_n``, ``summarize``, message) and ``tf.print`` to stdout behind a
control dependency; the ``tf.assert_*`` family with ``message``/``data``/``summarize``,
static failures at build time against run-time InvalidArgumentErrors (``error_code``,
``op``, ``node_def``, ``message``), ``tf.Assert`` in ``control_dependencies``,
``check_numerics``, ``verify_tensor_all_finite``, ``add_check_numerics_ops``; a gradient
check of a dense layer with ``tf.test.compute_gradient(_error)`` plus ``checkedThread``,
``tf.test.mock`` and the GPU queries; ``tf.logging`` (verbosity, ``log_every_n``,
``log_if``, ``vlog``); a model test module with ``absl.testing.parameterized`` run by
``tf.test.main()``; the seeds a TestCase sets; a NaN hunt through checked gradients
and ``tf.debugging.assert_near``; TestCase odds and ends (tensors passed to the
assertions, per-test temp dirs with a Saver, ``evaluate`` of a SparseTensor and of ops,
``assertDeviceEqual``, ``assertRaisesRegexp``); and ``tf.Print`` inside ``while_loop``/
``cond`` with ``tf.print`` to stdout and to a ``file://`` stream.

Classes of discrepancy found and fixed (one focused test each below):

* ``assertProtoEquals`` compared squashed text, so TensorFlow's own text (``DT_FLOAT``,
  ``float_val: 1.0``, an empty ``tensor_shape {}``, fields in any order) failed against a
  GraphDef, and a ConfigProto never matched; the text is now parsed into the message's
  class and compared as a message. ``assertAllInSet`` and ``checkedThread`` worded their
  failures their own way.
* ``assertShapeEqual`` took anything with a ``shape`` (a Variable included); TensorFlow
  takes NumPy arrays/scalars and Tensors and raises TypeError otherwise, for either side.
* A method named ``test_session`` (collected by unittest) ran the subclass's ``setUp`` and
  ``tearDown``; TensorFlow skips it ("Not a test.") in ``TestCase.setUp`` first. ``setUp``
  did not seed Python's ``random`` (TensorFlow seeds it, NumPy and the graph with
  87654321).
* Static assertion messages: ``assert_type``, ``assert_integer``, ``assert_scalar`` and
  ``assert_shapes`` used their own wording and no ``"message.  "`` prefix;
  ``assert_same_float_dtype`` named neither dtype as TensorFlow does. ``tf.debugging``'s
  ``assert_near``/``assert_same_float_dtype`` were a second implementation (``<=``, other
  data); in TF1 they are the very functions of ``tf.``.
* ``assert_equal`` opens a scope of its own first in TensorFlow (its checks land in
  ``assert_equal_1/...``; the same tensor twice is a ``NoOp``), and the binary asserts
  build their condition before a static check fails (the ops stay in the graph), so the
  names of later ops were shifted.
* ``verify_tensor_all_finite`` returned the CheckNumerics output; TensorFlow returns the
  input behind it (``VerifyFinite/control_dependency``).
* ``Assert`` printed a multi-dimensional tensor cut by ``summarize`` flat
  (``[-1 -1 -1...]``); TensorFlow nests it as ``tf.Print`` does (``[[-1 -1 -1...]...]``).
* The gradient of ``check_numerics`` shows the message as the bytes TensorFlow reads back
  (``... in gradient. b'pred'``).

Left as is (evidence from the oracle): ``tf.test.main`` runs plain unittest (TensorFlow's
absl runner also prints ``[ RUN      ]`` lines); an error raised by an Assert inside a cond
has ``op`` None in TensorFlow, flowgraph names the op; ``tf.logging.log_every_n``/
``log_first_n`` count per call line, while TensorFlow keys its counter on the first frame
outside the caller's file (all calls from one script share it: ``log_first_n`` after a
7-call ``log_every_n`` loop prints nothing there); ``tf.logging.flush`` raises
NotImplementedError in TensorFlow; ``repr`` of a user-built ``OpError`` is
``InvalidArgumentError()`` there; ``tf.losses.sparse_softmax_cross_entropy`` builds 35 ops
in TensorFlow and 9 here (the weights-broadcast checks and ``num_present``); ``tf.print``
is one fused ``PrintV2`` here (rewritten to TensorFlow's ``StringFormat`` + ``PrintV2`` on
export), so a later ``tf.strings.format`` is ``StringFormat`` where TensorFlow has
``StringFormat_3``; ``assert_shapes`` builds ``assert_rank``/``assert_rank_in`` ops where
flowgraph slices the shape, and TensorFlow checks a one-entry spec with ``assert_rank_in``
(its message prints ``(array(0, dtype=int32), array(1, dtype=int32))``); ``str`` of a
ConfigProto prints ``opt_level: -1`` where TensorFlow prints ``L0``;
``Session.run(None)`` words its TypeError its own way (TensorFlow: "Argument `fetch` =
None has invalid type "NoneType". Cannot be None").
"""

from __future__ import annotations

import io
import logging
import os
import random
import sys
import unittest

import numpy as np
import pytest

import flowgraph as tf


def _run_case(case_cls):
    """Run a TestCase class as ``unittest.main(exit=False)`` would; {name: outcome}."""
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case_cls)
    outcome = {t._testMethodName: "ok" for t in suite}
    result = unittest.TextTestRunner(stream=io.StringIO()).run(suite)
    for t, tb in result.failures:
        outcome[t._testMethodName] = ("fail", tb.strip().splitlines()[-1])
    for t, tb in result.errors:
        outcome[t._testMethodName] = ("error", tb.strip().splitlines()[-1])
    for t, _ in result.skipped:
        outcome[t._testMethodName] = "skip"
    return outcome


# -- program 1: a TestCase module over the session helpers and the assertions -----------
def test_testcase_module_outcomes_match_tensorflow():
    seen = {}

    class MathTest(tf.test.TestCase):
        def setUp(self):
            super().setUp()
            seen.setdefault("ops_at_setup", []).append(
                len(tf.get_default_graph().get_operations()))

        def test_a_session(self):
            y = tf.square(tf.constant([1.0, 2.0], name="x"), name="sq")
            with self.session() as sess:
                self.assertAllClose(sess.run(y), [1.0, 4.0])
            seen["a"] = [op.name for op in tf.get_default_graph().get_operations()]

        def test_b_cached(self):
            v = tf.Variable([[1., 2.], [3., 4.]], name="v")
            with self.cached_session() as sess:
                sess.run(tf.global_variables_initializer())
                first = sess
            with self.cached_session() as sess2:
                seen["same"] = first is sess2
                seen["eval"] = self.evaluate(v).tolist()
                seen["nest"] = self.evaluate({"a": v * 2, "b": [tf.constant(1),
                                                               (tf.constant("s"),)]})

        def test_c_test_session(self):
            with self.test_session() as sess:
                a = tf.placeholder(tf.float32, [None, 3], name="a")
                out = sess.run(tf.reduce_sum(a, 1), {a: np.ones((2, 3))})
                self.assertAllEqual(out, [3., 3.])
                self.assertShapeEqual(np.zeros((2, 3)), a)  # [2, 3] vs [None, 3]

        def test_d_asserts_pass(self):
            self.assertAllClose({"a": [1.0, 2.0], "b": (3.0, [4.0])},
                                {"a": np.array([1.0, 2.0 + 1e-7]), "b": (3.0, [4.0])})
            self.assertAllClose([1.0, 2.0], [1.01, 2.02], rtol=0.02)
            self.assertAllClose(1.0, 1.05, atol=0.1)
            self.assertAllInRange(np.array([1, 2, 3]), 1, 3)
            self.assertAllInSet([1, 2, 2], [1, 2, 3])
            self.assertArrayNear([1.0, 2.0], [1.001, 2.001], 0.01)
            self.assertNear(1.0, 1.001, 0.01)
            self.assertNDArrayNear(np.ones((2, 2)), np.ones((2, 2)) + 1e-4, 1e-3)
            self.assertAllEqual(np.array(["a", "b"]), [b"a", b"b"])

        def test_e_close_fails(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])

        def test_f_dict_fails(self):
            self.assertAllClose({"a": 1.0}, {"a": 1.0, "b": 2.0})

        def test_g_range_fails(self):
            self.assertAllInRange([1, 5], 0, 3)

        def test_h_range_open(self):
            self.assertAllInRange([0, 3], 0, 3, open_lower_bound=True)

        def test_i_set_fails(self):
            self.assertAllInSet([1, 4], [1, 2])

        def test_k_op_error(self):
            x = tf.placeholder(tf.float32)
            chk = tf.check_numerics(x, "bad value")
            with self.session() as sess:
                with self.assertRaisesOpError("bad value"):
                    sess.run(chk, {x: np.array([np.nan], np.float32)})

        def test_l_pred(self):
            with self.assertRaisesWithPredicateMatch(ValueError, lambda e: "Shapes" in str(e)):
                tf.constant([1, 2]) + tf.constant([1, 2, 3])

        def test_m_proto(self):
            g = tf.Graph()
            with g.as_default():
                tf.constant(1.0, name="c")
            self.assertProtoEquals("""
              node { name: "c" op: "Const"
                     attr { key: "dtype" value { type: DT_FLOAT } }
                     attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                                          float_val: 1.0 } } } }
              versions { producer: PRODUCER }
            """.replace("PRODUCER", str(g.graph_def_versions.producer)), g.as_graph_def())
            c = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False)
            c.gpu_options.allow_growth = True
            self.assertProtoEquals(
                "allow_soft_placement: true gpu_options { allow_growth: true }", c)

        def test_p_opfail_other_message(self):
            with self.session() as sess:
                with self.assertRaisesOpError("other message"):
                    sess.run(tf.check_numerics(tf.constant([np.inf]), "bad"))

    out = _run_case(MathTest)
    # TensorFlow: 14 run, 1 skipped (test_session), these 8 failing, no errors
    assert sorted(k for k, v in out.items() if v != "ok") == [
        "test_c_test_session", "test_e_close_fails", "test_f_dict_fails",
        "test_g_range_fails", "test_h_range_open", "test_i_set_fails", "test_l_pred",
        "test_p_opfail_other_message", "test_session"]
    assert all(v[0] == "fail" for k, v in out.items() if v not in ("ok", "skip"))
    assert out["test_session"] == "skip"
    assert out["test_i_set_fails"][1] == (
        "AssertionError: 1 unique element(s) are not in the set [1, 2]: [4]")
    assert seen["ops_at_setup"] == [0] * 13  # a fresh default graph for every test
    assert seen["a"] == ["x", "sq"]
    assert seen["same"] is True and seen["eval"] == [[1., 2.], [3., 4.]]
    assert seen["nest"]["a"].tolist() == [[2., 4.], [6., 8.]]
    assert seen["nest"]["b"] == [1, (b"s",)]


def test_assert_proto_equals_parses_tensorflow_text_into_the_message():
    class ProtoTest(tf.test.TestCase):
        def test_graph(self):
            g = tf.Graph()
            with g.as_default():
                tf.placeholder(tf.int32, name="p")
            # any field order, enum names, a message written as "{ }" or "<>"
            self.assertProtoEquals(
                f'versions < producer: {g.graph_def_versions.producer} > '
                'node { op: "Placeholder" name: "p" '
                'attr { key: "shape" value { shape { unknown_rank: true } } } '
                'attr { key: "dtype" value { type: DT_INT32 } } }', g.as_graph_def())

        def test_config(self):
            c = tf.ConfigProto(inter_op_parallelism_threads=2)
            c.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
            self.assertProtoEquals("graph_options { optimizer_options { opt_level: L0 } } "
                                   "inter_op_parallelism_threads: 2", c)

        def test_mismatch_fails(self):
            self.assertProtoEquals("inter_op_parallelism_threads: 3",
                                   tf.ConfigProto(inter_op_parallelism_threads=2))

    out = _run_case(ProtoTest)
    assert out["test_graph"] == "ok" and out["test_config"] == "ok"
    assert out["test_mismatch_fails"][0] == "fail"


def test_assert_shape_equal_type_checks_and_test_session_skips_before_setup():
    torn = []

    class ShapeTest(tf.test.TestCase):
        def tearDown(self):
            torn.append(self._testMethodName)
            super().tearDown()

        def test_variable_rejected(self):
            self.assertShapeEqual(np.zeros((3, 4)), tf.Variable(tf.zeros([3, 4])))

        def test_tensor_tensor(self):
            self.assertShapeEqual(tf.zeros([2, 1]), tf.ones([2, 1]))
            self.assertShapeEqual(np.float32(1.0), tf.constant(2.0))

    out = _run_case(ShapeTest)
    # TensorFlow: TypeError: input_b must be a Numpy ndarray, Numpy scalar, or a
    # Tensor.Instead received <class '...RefVariable'>
    kind, last = out["test_variable_rejected"]
    assert kind == "error" and last.startswith(
        "TypeError: input_b must be a Numpy ndarray, Numpy scalar, or a Tensor.Instead "
        "received <class")
    assert out["test_tensor_tensor"] == "ok" and out["test_session"] == "skip"
    assert sorted(torn) == ["test_tensor_tensor", "test_variable_rejected"]


def test_setup_seeds_python_numpy_and_graph_like_tensorflow():
    seen = {}

    class SeedTest(tf.test.TestCase):
        def test_seeds(self):
            seen["py"] = round(random.random(), 6)
            seen["np"] = np.round(np.random.rand(2), 6).tolist()
            seen["graph"] = tf.get_default_graph().seed
            r = tf.random_normal([3])
            u = tf.random_uniform([2], seed=5)
            d = tf.nn.dropout(tf.ones([6]), keep_prob=0.5)
            with self.cached_session() as sess:
                seen["vals"] = ([round(float(v), 5) for v in sess.run(r)],
                                [round(float(v), 5) for v in sess.run(u)], sess.run(d).tolist())

    assert _run_case(SeedTest) == {"test_seeds": "ok", "test_session": "skip"}
    assert seen["py"] == 0.349977 and seen["np"] == [0.184634, 0.774811]
    assert seen["graph"] == 87654321
    assert seen["vals"] == ([-0.39916, 2.10444, 0.17107], [0.38831, 0.66368],
                            [0.0, 2.0, 0.0, 0.0, 2.0, 0.0])


# -- program 2: tf.Print / tf.print in a training loop --------------------------------
def test_print_ops_in_a_training_loop(capfd):
    tf.set_random_seed(42)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [3, 2], initializer=tf.random_normal_initializer(seed=1))
        h = tf.matmul(x, w)
        h = tf.Print(h, [h, tf.shape(h)], message="h: ", first_n=2, summarize=4)
        y = tf.nn.relu(h, name="y")
    assert (h.op.name, h.op.type, h.shape.as_list()) == ("model/Print", "Print", [None, 2])
    loss = tf.reduce_mean(tf.square(y))
    pr = tf.print("loss is", loss, output_stream=sys.stdout)
    assert (pr.name, pr.type) == ("PrintV2", "PrintV2")
    pr2 = tf.print("tensor", tf.constant([[1, 2], [3, 4]]), {"a": tf.constant(1.5)},
                   output_stream=sys.stdout, summarize=1, sep="|")
    with tf.control_dependencies([pr]):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            losses.append(sess.run([loss, train],
                                   {x: np.arange(6, dtype=np.float32).reshape(2, 3) / 5})[0])
        sess.run(pr2)
        sess.run(tf.Print(tf.range(10), [tf.range(10)], summarize=3, message="z="))
        sess.run(tf.Print(tf.constant([[1., 2.], [3., 4.]]),
                          [tf.constant([[1., 2.], [3., 4.]]), tf.constant("s")]))
    out, err = capfd.readouterr()
    assert [round(float(v), 5) for v in losses] == [0.00156, 0.00153, 0.0015]
    assert out.splitlines() == ["loss is 0.00156031875", "loss is 0.00152926822",
                                "loss is 0.00149883574", "tensor|[[1 2]", " [3 4]]|{'a': 1.5}"]
    assert err.splitlines()[-4:] == [
        "h: [[0.0790017396 -0.0924972668][-0.545614421 -1.08411062]][2 2]",
        "h: [[0.0782117173 -0.0924972668][-0.547826469 -1.08411062]][2 2]",
        "z=[0 1 2...]", "[[1 2][3...]...][s]"]


# -- program 3: the assert family, static and at run time ------------------------------
def test_assertions_static_and_runtime_program():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int32, [None], name="labels")
    static = []
    for fn in [lambda: tf.assert_rank(tf.constant([1, 2]), 2, message="need matrix"),
               lambda: tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]),
                                       message="static eq"),
               lambda: tf.assert_positive(tf.constant([1, -1]), message="pos"),
               lambda: tf.debugging.assert_less(tf.constant([3]), tf.constant([2])),
               lambda: tf.assert_rank_at_least(tf.constant(1), 1)]:
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)) as info:
            fn()
        static.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert static == [
        ("ValueError", "need matrix.  Tensor Const:0 must have rank 2.  Received rank 1, "
                       "shape (2,)"),
        ("InvalidArgumentError", "static eq"),
        ("InvalidArgumentError", "pos.  "),
        ("InvalidArgumentError", "Condition x < y did not hold element-wise:"),
        ("ValueError", "Tensor Const_6:0 must have rank at least 1.  Received rank 0, "
                       "shape ()")]
    a1 = tf.assert_rank(x, 2, message="rank2")
    assert a1.name == "assert_rank_1/static_checks_determined_all_ok"
    a2 = tf.assert_equal(tf.shape(x)[0], tf.shape(y)[0], message="batch mismatch",
                         data=[tf.shape(x), tf.shape(y)], summarize=3)
    assert (a2.name, [i.name for i in a2.inputs]) == (
        "assert_equal_3/Assert/Assert",
        ["assert_equal_3/All:0", "assert_equal_3/Assert/Assert/data_0:0", "Shape_2:0",
         "Shape_3:0"])
    a3 = tf.assert_positive(x, message="x must be positive", summarize=2)
    a4 = tf.assert_non_negative(tf.cast(y, tf.float32))
    a5 = tf.debugging.assert_greater_equal(x, 0.0, name="ge")
    a6 = tf.assert_less(x, 10.0, data=[x], summarize=1)
    a7 = tf.Assert(tf.reduce_all(x > 0), [x, "hello", tf.shape(x)], summarize=2,
                   name="my_assert")
    assert [a.name for a in (a3, a4, a5, a6, a7)] == [
        "assert_positive_1/assert_less/Assert/AssertGuard/Merge",
        "assert_non_negative/assert_less_equal/Assert/AssertGuard/Merge",
        "ge/Assert/AssertGuard/Merge", "assert_less_1/Assert/AssertGuard/Merge",
        "my_assert/AssertGuard/Merge"]
    with tf.control_dependencies([a2, a7]):
        out = tf.identity(tf.reduce_sum(x, 1), name="out")
    ck = tf.check_numerics(out, "out has nan")
    v = tf.verify_tensor_all_finite(x, "x bad")
    assert (ck.name, v.name, v.op.type) == ("CheckNumerics:0",
                                            "VerifyFinite/control_dependency:0", "Identity")
    assert (tf.debugging.is_numeric_tensor(x), tf.debugging.is_numeric_tensor(
        tf.constant("a")), tf.is_numeric_tensor(y)) == (True, False, True)
    with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
        tf.add_check_numerics_ops()  # the asserts' conds are in the graph
    msgs = []
    with tf.Session() as sess:
        assert sess.run(ck, {x: np.ones((2, 4)), y: [1, 2]}).tolist() == [4., 4.]
        for feed, fetch in [({x: np.ones((2, 4)), y: [1, 2, 3]}, ck),
                            ({x: -np.ones((1, 4)), y: [1]}, a3),
                            ({x: np.ones((2, 4)) * 11, y: [1, 2]}, a6),
                            ({x: np.array([[np.nan, 1, 1, 1]]), y: [1]}, v),
                            ({x: -np.ones((1, 4)), y: [1]}, a5),
                            ({x: np.ones((1, 4)), y: [-1]}, a4),
                            ({x: -np.ones((2, 4)), y: [1, 2]}, a7)]:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(fetch, feed)
            e = info.value
            assert e.error_code == tf.errors.INVALID_ARGUMENT == 3
            msgs.append(next(line for line in e.message.split("\n")
                             if "assertion failed" in line or "Tensor had" in line))
        assert info.value.op.name == "my_assert/AssertGuard/Assert"
    assert [m.split(" (op '")[0] for m in msgs] == [
        "assertion failed: [batch mismatch] [2 4] [3]",
        "assertion failed: [x must be positive.  ] [Condition x > 0 did not hold "
        "element-wise:] [x (x:0) = ] [[-1 -1...]...]",
        "assertion failed: [[11...]...]",
        "x bad : Tensor had NaN values",
        "assertion failed: [Condition x >= y did not hold element-wise:] [x (x:0) = ] "
        "[[-1 -1 -1...]...] [y (ge/y:0) = ] [0]",
        "assertion failed: [] [Condition x >= 0 did not hold element-wise:] "
        "[x (Cast:0) = ] [-1]",
        "assertion failed: [[-1 -1...]...] [hello] [2 4]"]


def test_add_check_numerics_ops_in_a_graph_without_control_flow():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(tf.ones([4, 1]), name="w")
    loss = tf.reduce_sum(tf.matmul(x, w))
    chk = tf.add_check_numerics_ops()
    assert (chk.name, chk.type) == ("group_deps", "NoOp")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([loss, chk], {x: np.ones((2, 4))})[0] == 8.0
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run([loss, chk], {x: np.array([[np.inf, 1, 1, 1]])})
    assert info.value.op.name == "CheckNumerics"
    assert "x:0 : Tensor had Inf values" in info.value.message


def test_static_assert_messages_match_tensorflow():
    cases = [(lambda: tf.assert_type(tf.constant(1.0), tf.int32, message="need int"),
              TypeError, "need int.  Const:0 must be of type tf.int32; got tf.float32"),
             (lambda: tf.assert_type(tf.constant(1.0), tf.int32),
              TypeError, "Const_1:0 must be of type tf.int32; got tf.float32"),
             (lambda: tf.assert_integer(tf.constant(1.0), message="m"), TypeError,
              "m.  Expected \"x\" to be integer type.  Found: Const_2:0 of dtype "
              "<dtype: 'float32'>"),
             (lambda: tf.assert_scalar(tf.constant([1.0]), message="m"), ValueError,
              "m.  Expected scalar shape for Const_3:0, saw shape: (1,)."),
             (lambda: tf.assert_same_float_dtype([tf.constant(1.0),
                                                  tf.constant(1, tf.float64)]),
              ValueError, "Const_5:0, type=<dtype: 'float64'>, must be of the same type "
                          "(<dtype: 'float32'>) as Const_4:0."),
             (lambda: tf.debugging.assert_same_float_dtype([tf.constant(1)]), ValueError,
              "Expected floating point type, got <dtype: 'int32'>.")]
    for fn, kind, text in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == text


def test_assert_shapes_static_messages_match_tensorflow():
    cases = [([(tf.zeros([2, 3]), ("N", "D")), (tf.zeros([3]), ("N",))], "m",
              "m.  Specified by tensor zeros:0 dimension 0.  Tensor zeros_1:0 dimension 0 "
              "must have size 2.  Received size 3, shape (3,)"),
             ([(tf.zeros([2, 3]), ("N", "D")), (tf.zeros([4, 2]), ("N", "D"))], None,
              "Specified by tensor zeros_2:0 dimension 0.  Tensor zeros_3:0 dimension 0 "
              "must have size 2.  Received size 4, shape (4, 2)"),
             ([(tf.zeros([2, 3]), (2, 4))], None,
              "Specified explicitly.  Tensor zeros_4:0 dimension 1 must have size 4.  "
              "Received size 3, shape (2, 3)"),
             ([(tf.zeros([2, 3]), ("N", "D")), (tf.zeros([2, 3, 1]), ("N", "D"))], None,
              "Tensor zeros_6:0 must have rank 2.  Received rank 3, shape (2, 3, 1)")]
    for shapes, message, text in cases:
        with pytest.raises(ValueError) as info:
            tf.debugging.assert_shapes(shapes, message=message)
        assert str(info.value) == text


def test_assert_equal_scope_and_static_failure_ops_match_tensorflow():
    p = tf.placeholder(tf.int32)
    a = tf.assert_equal(p, 1)
    b = tf.assert_equal(p, p)
    c = tf.debugging.assert_equal(p, 2, name="chk")
    d = tf.assert_none_equal(p, 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    f = tf.compat.v1.assert_equal(p, 3)
    assert [a.name, b.name, b.type, c.name, d.name, f.name] == [
        "assert_equal_1/Assert/Assert", "assert_equal_2/NoOp", "NoOp", "chk_1/Assert/Assert",
        "assert_none_equal/Assert/Assert", "assert_equal_6/Assert/Assert"]
    # the failed static check keeps the ops built before it, as in TensorFlow
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert ["assert_equal_4/Equal", "assert_equal_4/Const", "assert_equal_4/All"] == [
        n for n in names if n.startswith("assert_equal_4/")]


def test_verify_tensor_all_finite_returns_the_input_behind_the_check():
    v = tf.verify_tensor_all_finite(tf.constant([1.0]), "m", name="vf")
    assert v.name == "vf/control_dependency:0"
    assert [i.name for i in v.op.control_inputs] == ["vf/CheckNumerics"]
    assert [o.name for o in tf.get_default_graph().get_operations()
            if o.name.startswith("vf")] == ["vf/CheckNumerics", "vf/control_dependency"]
    assert tf.debugging.assert_all_finite(tf.constant(2.0), "m").name == \
        "VerifyFinite/control_dependency:0"
    with tf.Session() as sess:
        assert sess.run(v).tolist() == [1.0]


def test_assert_summarizes_nested_tensors_like_print():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[\[1 2\]\[3 4\]\]"):
            sess.run(tf.Assert(tf.constant(False), [tf.constant([[1, 2], [3, 4]])],
                               summarize=4))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[\[1\.5 2\.5 3\.5\]\[4\.5\.\.\.\]\.\.\.\]"):
            sess.run(tf.Assert(tf.constant(False),
                               [tf.constant([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]])],
                               summarize=4))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[0 1 2\.\.\.\] \[\[\[1\]\]\]"):
            sess.run(tf.Assert(tf.constant(False), [tf.range(5), tf.ones([1, 1, 1],
                                                                          tf.int32)]))


# -- program 4: gradient checks and the TestCase utilities -----------------------------
def _dense(x, units, scope):
    with tf.variable_scope(scope):
        w = tf.get_variable("w", [x.shape[-1], units], tf.float64,
                            initializer=tf.random_normal_initializer(seed=3))
        b = tf.get_variable("b", [units], tf.float64, initializer=tf.constant_initializer(0.1))
        return tf.tanh(tf.matmul(x, w) + b)


def test_gradient_checker_and_testcase_utilities_program():
    seen = {}

    class GradTest(tf.test.TestCase):
        def testLayerGradient(self):
            with self.cached_session():
                x = tf.constant(np.linspace(-1, 1, 6).reshape(2, 3), tf.float64, name="x")
                y = _dense(x, 4, "dense")
                tf.global_variables_initializer().run()
                jt, jn = tf.test.compute_gradient(x, [2, 3], y, [2, 4], x_init_value=x.eval())
                seen["jac"] = (jt.shape, jn.shape, np.round(jt[0], 5).tolist())
                seen["err"] = tf.test.compute_gradient_error(x, [2, 3], y, [2, 4])
                w = tf.trainable_variables()[0]
                both = tf.test.compute_gradient([x, w], [[2, 3], [3, 4]], y, [2, 4])
                seen["list"] = [j[0].shape for j in both]

        def testFloat32(self):
            with self.session():
                x = tf.placeholder(tf.float32, [3], name="px")
                y = tf.reduce_sum(tf.square(x) * 2.0)
                jt, jn = tf.test.compute_gradient(
                    x, [3], y, [], x_init_value=np.array([1., 2., 3.], np.float32), delta=1e-2)
                seen["f32"] = (jt.dtype, jt.shape, np.round(jt, 3).ravel().tolist(),
                               np.round(jn, 2).ravel().tolist())

        def testMisc(self):
            seen["gpu"] = (tf.test.is_gpu_available(), tf.test.gpu_device_name(),
                           tf.test.is_built_with_cuda())
            m = tf.test.mock.MagicMock(return_value=3)
            seen["mock"] = (m(1), m.call_count)
            done = []
            threads = [self.checkedThread(target=lambda i=i: done.append(i * 2))
                       for i in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            seen["threads"] = sorted(done)

            def bad():
                raise ValueError("boom")

            t = self.checkedThread(target=bad)
            t.start()
            t.join()

        def testEvaluateVariables(self):
            v = tf.get_variable("v", initializer=tf.constant([1.5, 2.5]))
            with self.cached_session():
                self.evaluate(tf.global_variables_initializer())
                self.evaluate(v.assign_add([1.0, 1.0]))
                out = self.evaluate({"v": v, "sq": tf.square(v), "t": (v[0],)})
                seen["eval"] = (out["v"].tolist(), out["sq"].tolist(), out["t"])

    out = _run_case(GradTest)
    assert out["testLayerGradient"] == out["testFloat32"] == "ok"
    assert out["testEvaluateVariables"] == "ok"
    assert out["testMisc"] == ("fail", "AssertionError: Error in checkedThread: boom")
    shapes, shapes_n, row = seen["jac"]
    assert shapes == shapes_n == (6, 8)
    assert row == [-0.0572, 0.45079, -0.00485, -0.53415, 0.0, 0.0, 0.0, 0.0]
    assert seen["err"] == pytest.approx(3.68274e-06, rel=1e-3)
    assert seen["list"] == [(6, 8), (12, 8)]
    assert seen["f32"] == (np.float32, (3, 1), [4.0, 8.0, 12.0], [4.0, 8.0, 12.0])
    assert seen["gpu"] == (False, "", False)
    assert seen["mock"] == (3, 1) and seen["threads"] == [0, 2, 4]
    assert seen["eval"] == ([2.5, 3.5], [6.25, 12.25], (2.5,))


# -- program 5: tf.logging ------------------------------------------------------------
def test_logging_program():
    lines = []
    handler = logging.StreamHandler(io.StringIO())
    handler.emit = lambda record: lines.append(  # type: ignore[method-assign]
        f"{record.levelname}|{record.name}|{record.getMessage()}")
    old = tf.logging.get_verbosity()
    logger = tf.get_logger()
    logger.addHandler(handler)
    try:
        assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
                tf.logging.FATAL) == (10, 20, 30, 40, 50)
        tf.logging.set_verbosity(tf.logging.INFO)
        assert tf.logging.get_verbosity() == tf.compat.v1.logging.get_verbosity() == 20
        assert logger.name == "tensorflow"
        tf.logging.info("step %d loss %.3f", 10, 0.12345)
        tf.logging.warn("warn %s", "x")
        tf.logging.error("err")
        tf.logging.debug("hidden")
        for i in range(7):
            tf.logging.log_every_n(tf.logging.INFO, "every3 %d", 3, i)
        tf.logging.log_if(tf.logging.INFO, "cond %d", True, 5)
        tf.logging.log_if(tf.logging.INFO, "cond %d", False, 6)
        tf.logging.vlog(1, "vlog1")
        tf.logging.set_verbosity(tf.logging.DEBUG)
        tf.logging.debug("shown")
        tf.logging.log(tf.logging.INFO, "via log %s", "y")
        tf.logging.set_verbosity(tf.logging.ERROR)
        tf.logging.info("not shown")
    finally:
        logger.removeHandler(handler)
        tf.logging.set_verbosity(old)
    assert lines == ["INFO|tensorflow|step 10 loss 0.123", "WARNING|tensorflow|warn x",
                     "ERROR|tensorflow|err", "INFO|tensorflow|every3 0",
                     "INFO|tensorflow|every3 3", "INFO|tensorflow|every3 6",
                     "INFO|tensorflow|cond 5", "DEBUG|tensorflow|shown",
                     "INFO|tensorflow|via log y"]


# -- program 6: a model's test module with absl's parameterized --------------------------
def test_model_test_module_with_parameterized_cases():
    parameterized = pytest.importorskip("absl.testing.parameterized")
    losses = {}

    def build_mlp(x, hidden, reuse=None):
        with tf.variable_scope("mlp", reuse=reuse):
            h = tf.layers.dense(x, hidden, activation=tf.nn.relu, name="h1",
                                kernel_initializer=tf.glorot_uniform_initializer(seed=7))
            return tf.layers.dense(h, 2, name="logits",
                                   kernel_initializer=tf.glorot_uniform_initializer(seed=8))

    class MlpTest(tf.test.TestCase, parameterized.TestCase):
        def setUp(self):
            super().setUp()
            tf.set_random_seed(1234)
            self.x = tf.placeholder(tf.float32, [None, 3], name="x")

        @parameterized.parameters(4, 8)
        def test_shapes(self, hidden):
            logits = build_mlp(self.x, hidden)
            self.assertEqual(logits.shape.as_list(), [None, 2])
            self.assertEqual([v.name for v in tf.trainable_variables()],
                             ["mlp/h1/kernel:0", "mlp/h1/bias:0", "mlp/logits/kernel:0",
                              "mlp/logits/bias:0"])
            self.assertShapeEqual(np.zeros((3, hidden)), tf.trainable_variables()[0])

        @parameterized.named_parameters(("sgd", 0.1), ("big", 0.5))
        def test_train(self, lr):
            y = tf.placeholder(tf.int32, [None])
            logits = build_mlp(self.x, 4)
            loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
            step = tf.train.GradientDescentOptimizer(lr).minimize(loss)
            xs = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], np.float32)
            ys = np.array([0, 1, 0, 1])
            with self.cached_session() as sess:
                sess.run(tf.global_variables_initializer())
                before = sess.run(loss, {self.x: xs, y: ys})
                for _ in range(5):
                    sess.run(step, {self.x: xs, y: ys})
                after = sess.run(loss, {self.x: xs, y: ys})
                losses[self._testMethodName] = (round(float(before), 5), round(float(after), 5))
                self.assertLess(after, before)

        def test_reuse_error(self):
            build_mlp(self.x, 4)
            with self.assertRaisesRegex(ValueError, "already exists"):
                build_mlp(self.x, 4)
            self.assertEqual(build_mlp(self.x, 4, reuse=True).op.name, "mlp_2/logits/BiasAdd")

        def test_zzz_fails(self):
            self.assertAllClose([1.0], [1.5], msg="custom msg")

        @parameterized.parameters((1, 2, 3), (2, 2, 4))
        def test_add(self, a, b, c):
            with self.session():
                self.assertEqual(self.evaluate(tf.add(a, b)), c)

    out = _run_case(MlpTest)
    # TensorFlow: Ran 9 tests, FAILED (failures=1, errors=2, skipped=1): the shape tests
    # pass a Variable to assertShapeEqual
    assert {k: (v if isinstance(v, str) else v[0]) for k, v in out.items()} == {
        "test_add0": "ok", "test_add1": "ok", "test_reuse_error": "ok",
        "test_session": "skip", "test_shapes0": "error", "test_shapes1": "error",
        "test_train_big": "ok", "test_train_sgd": "ok", "test_zzz_fails": "fail"}
    assert losses == {"test_train_sgd": (0.58927, 0.49618),
                      "test_train_big": (0.58927, 0.24765)}


# -- program 8: hunting a NaN through checked gradients ---------------------------------
def test_nan_hunt_with_checked_gradients_program():
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    t = tf.placeholder(tf.float32, [None, 1], name="t")
    with tf.variable_scope("net"):
        w = tf.get_variable("w", [2, 1], initializer=tf.random_normal_initializer(seed=1))
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        pred = tf.debugging.check_numerics(tf.matmul(x, w) + b, "pred")
    assert pred.name == "net/CheckNumerics:0"
    loss = tf.reduce_mean(tf.log(tf.square(pred - t)), name="loss")
    opt = tf.train.AdamOptimizer(0.1)
    checked = [(tf.check_numerics(g, f"grad of {v.op.name}"), v)
               for g, v in opt.compute_gradients(loss)]
    assert [g.name for g, _ in checked] == ["CheckNumerics:0", "CheckNumerics_1:0"]
    train = opt.apply_gradients(checked, global_step=tf.train.get_or_create_global_step())
    near = tf.debugging.assert_near(pred, t, rtol=0.5, atol=0.1, message="not near")
    assert (near.name, near.type) == ("assert_near/Assert/AssertGuard/Merge", "Merge")
    assert tf.debugging.assert_near is tf.assert_near
    xs = np.array([[1., 2.], [3., 4.]], np.float32)
    ts = np.array([[1.], [2.]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        steps = [sess.run([loss, train], {x: xs, t: ts})[0] for _ in range(3)]
        assert [round(float(v), 4) for v in steps] == [2.4816, 2.1244, 1.6889]
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(near, {x: xs, t: ts})
        line = next(s for s in info.value.message.split("\n") if "not near" in s)
        assert line.startswith(
            'assertion failed: [not near.  ] [x and y not equal to tolerance rtol = '
            'Tensor(\\"assert_near/rtol:0\\", shape=(), dtype=float32), atol = '
            'Tensor(\\"assert_near/atol:0\\", shape=(), dtype=float32)] [x (net/')
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(train, {x: xs, t: sess.run(pred, {x: xs})})
        assert info.value.op.name == "gradients/net/CheckNumerics_grad/CheckNumerics"
        assert ("Not a number (NaN) or infinity (Inf) values detected in gradient. b'pred' "
                ": Tensor had NaN values") in info.value.message
        it = tf.data.Dataset.range(2).make_one_shot_iterator().get_next()
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            for _ in range(3):
                sess.run(it)
        assert info.value.error_code == tf.errors.OUT_OF_RANGE == 11
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices = 5 is not in \[0, 2\)") as info:
            sess.run(tf.gather(tf.constant([1, 2]), 5))
        assert info.value.op.type == "GatherV2"
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value uninit") as info:
            sess.run(tf.get_variable("uninit", [1]))
        assert info.value.error_code == 9
    e = tf.errors.NotFoundError(None, None, "missing thing")
    assert (str(e), e.error_code, e.message, e.op, e.node_def) == (
        "missing thing", 5, "missing thing", None, None)
    assert tf.errors.exception_type_from_error_code(9) is tf.errors.FailedPreconditionError
    assert tf.errors.error_code_from_exception_type(tf.errors.ResourceExhaustedError) == 8


# -- program 9: TestCase odds and ends users lean on --------------------------------------
def test_testcase_tensor_arguments_temp_dirs_and_sparse_evaluate():
    seen = {}

    class MiscTest(tf.test.TestCase):
        def test_a_tensor_args(self):
            with self.cached_session():
                c = tf.constant([1.0, 2.0])
                self.assertAllClose(c, [1.0, 2.0])
                self.assertAllEqual(tf.constant([[1, 2]]), np.array([[1, 2]]))
                self.assertAllInRange(c, 0.0, 2.0)
                self.assertAllGreater(c, 0.5)

        def test_b_tempdirs(self):
            d1 = self.get_temp_dir()
            seen["b"] = d1
            seen["temp"] = (d1 == self.get_temp_dir(), d1.startswith(tf.test.get_temp_dir()))
            v = tf.Variable(1.0, name="v")
            saver = tf.train.Saver()
            with self.session() as s:
                s.run(v.initializer)
                seen["saved"] = os.path.basename(saver.save(s, os.path.join(d1, "ckpt"),
                                                            global_step=3))
            seen["files"] = sorted(os.listdir(d1))

        def test_c_tempdirs(self):
            seen["differs"] = self.get_temp_dir() != seen.get("b")

        def test_d_device_and_sparse(self):
            self.assertDeviceEqual("/cpu:0", "/device:CPU:0")
            sp = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
            with self.cached_session():
                out = self.evaluate(sp)
                seen["sparse"] = (type(out).__name__, out.indices.tolist(), out.values.tolist(),
                                  out.dense_shape.tolist())

        def test_e_regexp_and_ops(self):
            with self.assertRaisesRegexp(ValueError, "must be"):  # noqa: UP005 (TF1 spelling)
                raise ValueError("x must be y")
            with self.assertRaisesWithLiteralMatch(ValueError, "exact"):
                raise ValueError("exact")
            v = tf.Variable(0)
            with self.cached_session():
                self.evaluate(v.initializer)
                seen["op"] = (self.evaluate(tf.assign_add(v, 2).op), self.evaluate(v),
                              self.evaluate([v.initializer, v]))

    assert set(_run_case(MiscTest).values()) == {"ok", "skip"}
    assert seen["temp"] == (True, True) and seen["differs"] is True
    assert seen["saved"] == "ckpt-3"
    assert seen["files"] == ["checkpoint", "ckpt-3.data-00000-of-00001", "ckpt-3.index",
                             "ckpt-3.meta"]
    assert seen["sparse"] == ("SparseTensorValue", [[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
    assert seen["op"] == (None, 2, [None, 0])


# -- program 10: printing from control flow and to a file ---------------------------------
def test_print_inside_while_and_cond_and_to_a_file(capfd, tmp_path):
    def body(i, acc):
        acc = tf.Print(acc, [i, acc], message="iter ")
        return i + 1, acc * 2.0

    _, out = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.constant(1.5)])
    p = tf.placeholder(tf.bool, [])
    c = tf.cond(p, lambda: tf.Print(tf.constant(1), [tf.constant("true branch")]),
                lambda: tf.constant(0))
    log = tmp_path / "log.txt"
    pr = tf.print("vals:", tf.constant([True, False]),
                  tf.constant(np.arange(12, dtype=np.int64).reshape(3, 4)),
                  tf.constant(["a", "b"]), output_stream=f"file://{log}", summarize=2)
    pr2 = tf.print(tf.constant(3.25, tf.float64), [1, tf.constant(2)],
                   output_stream=sys.stdout, end="!\n")
    pr3 = tf.print(tf.zeros([0, 3]), tf.constant(np.arange(30.).reshape(2, 15)),
                   output_stream=sys.stdout)
    assert (out.name, c.name) == ("while/Exit_1:0", "cond/Merge:0")
    with tf.Session() as sess:
        assert sess.run(out) == 12.0
        assert (sess.run(c, {p: True}), sess.run(c, {p: False})) == (1, 0)
        for op in (pr, pr2, pr3):
            sess.run(op)
    stdout, stderr = capfd.readouterr()
    assert stderr.splitlines()[-4:] == ["iter [0][1.5]", "iter [1][3]", "iter [2][6]",
                                        "[true branch]"]
    assert stdout.splitlines() == ["3.25 [1, 2]!", "[] [[0 1 2 ... 12 13 14]",
                                   " [15 16 17 ... 27 28 29]]"]
    assert log.read_text() == ('vals: [1 0] [[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]] ["a" "b"]\n')
