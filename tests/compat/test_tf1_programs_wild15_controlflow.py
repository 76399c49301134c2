"""TF1 control-flow programs, sweep 15 (area ``controlflow``), run under TensorFlow 2.15
and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a sequence accumulator whose ``tf.while_loop`` carries a
namedtuple state and a growing ``concat`` under ``shape_invariants`` (with
``parallel_iterations``/``swap_memory``, ``maximum_iterations``, ``back_prop=False``, a
single loop variable, and the shape/structure/predicate errors); a ``TensorArray`` RNN
(``unstack``/``read``/``write``/``stack`` in the loop, gradients through it) with
``dynamic_size``, ``gather``, ``concat``, ``scatter``, ``split``, ``clear_after_read``
and the run-time read-twice/out-of-bounds errors; ``tf.cond`` for dropout under an
``is_training`` flag, tuple/dict/singleton results, nested conds and the branch errors,
and ``tf.case`` (list and dict forms, ``exclusive``, ``default``); ``map_fn``/``scan``/
``foldl``/``foldr`` with ``dtype=`` structures, ``initializer``, ``reverse`` and
gradients; a counter loop of ``assign_add`` under ``control_dependencies`` with
``tf.group``/``tf.tuple``; a greedy GRU decoder (TensorArrays and a ``finished`` mask in
the loop), a beam-search loop with ``top_k`` and a nested while; a while-loop RNN with a
dropout ``cond`` in the body, ``map_fn``/``scan`` pooling, clipped Adam, summaries and a
Saver (gradient checked against finite differences); a learning-rate schedule of conds
over assign ops and ``tf.case`` vs ``piecewise_constant``; dict loop variables with a
cond in the body, a loop inside a cond and a TensorArray returned by a cond; a
``map_fn`` of per-row conds slicing by a length (``row[:n]``), ``infer_shape=False``,
``return_same_structure`` and TensorArray ``identity``/``close``/``size``; embeddings
looked up inside a while loop and a cond, trained with SGD.

Left as is: the gradient of a while loop is built as flowgraph's own backward loop, so
the names of ops inside it differ (an ``AddN`` inside ``scan``'s gradient is
``gradients/scan/while_grad/AddN``, TensorFlow's ``gradients/AddN``, which shifts the
numbering of later ``gradients/AddN_k``); values match. A TensorArray ``write`` or a
``map_fn`` result of the wrong dtype raises a TypeError when built (TensorFlow logs an
error and fails at run time). A ref variable's snapshot used in a while body that
assigns the variable sees the value from before the loop (TensorFlow's snapshot aliases
the buffer, so what each iteration reads depends on the executor's scheduling).
``while_loop`` takes a dict as ``loop_vars`` (TensorFlow 1.x unpacks its keys into
``cond`` and fails). The zeros standing for an untaken branch's gradient are named
``zeros_like_k`` (TensorFlow's ``zeros_k``, a Fill after a Switch). A resource variable
gathered in a loop body still gets a dense gradient. ``GradientDescentOptimizer``
applies a sparse gradient to a ref variable with ``SparseApplyGradientDescent``
(TensorFlow: ``ScatterSub``; outside this area, same values).

Classes of discrepancy found and fixed (one focused test each below):

* ``tf.case`` without ``default`` built its checks in another order and skipped the
  at-most-zero check when there is one predicate; TensorFlow stacks all predicates first
  (``preds_c``), then always checks the others (an empty float32 ``preds_c_1``), so the
  names after it (``Assert_1``, ``Const_1``) match; ``exclusive=True`` checks even with
  one predicate. ``tf.stack([])`` is TensorFlow's empty float32 constant.
* A cond nested in a cond branch, whose predicate comes from outside, had its Switch
  gated lazily by whatever used the predicate first (``preds_c/Switch_2``); TensorFlow
  gates it at the inner cond's Switch (``cond/cond/Switch/Switch``).
* The Enter of a ref input (``assign_add`` on a variable in a loop) was named ``Enter``;
  TensorFlow names it after its type, ``RefEnter``.
* ``tf.cond`` could not return a ``TensorArray``; it now passes through as its flow.
* A body returning a dict for a list of loop variables raised a TypeError; TensorFlow
  compares ``list()`` of the result (the keys) and raises a ValueError.
* Gradients through a loop invariant's Enter and a cond's Switch were made dense;
  TensorFlow keeps a ``gather``/``embedding_lookup`` gradient an ``IndexedSlices``: a
  loop accumulates indices, values and dense shape (``Enter_grad/b_acc_6/7/8``,
  starting from one zero row at index 0), a cond merges them one by one
  (``cond_grad/Merge``, ``Merge_1``, ``Merge_2``, a dense side joining as all its rows).
  So ``minimize`` applies a sparse update, and momentum's values after a loop match.
* Slicing with a tensor bound (``x[:n]``, ``row[:n]`` in a loop or cond): TensorFlow
  makes each missing bound a constant of the tensors' dtype before the op's scope
  (``Const``, ``Const_1``) and packs it (``strided_slice/stack`` is a ``Pack``), which
  shifts the numbering of later constants; flowgraph packed plain ints as a constant.
* Argument errors of ``while_loop``, ``cond`` and ``group`` now start with TensorFlow's
  words (``'cond' must be callable.``, ``'loop_vars' must be provided.``,
  ``'maximum_iterations' must be a scalar. Received shape: (2,)``, ``'true_fn' must have a
  return value.``, ``'pred' must not be a Python bool.``, ``'inputs' should be zero or
  more (nested) Tensors.``).
"""

from __future__ import annotations

import collections
import os

import numpy as np
import pytest

import flowgraph as tf


def _ops(prefix, types=None):
    return [op.name for op in tf.get_default_graph().get_operations()
            if op.name.startswith(prefix) and (types is None or op.type in types)]


_LOOP_TYPES = ("Enter", "Merge", "Exit", "Switch", "NextIteration", "LoopCond")


# -- program 1: sequence accumulator -------------------------------------------------------
def test_sequence_accumulator_namedtuple_state_invariants_and_loop_errors():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    State = collections.namedtuple("State", ["h", "c"])
    s0 = State(h=tf.zeros([2, 3]), c=tf.ones([2, 3]))

    def body(i, acc, st):
        row = tf.reduce_sum(x, 0, keepdims=True) * tf.cast(i, tf.float32)
        return i + 1, tf.concat([acc, row], 0), State(h=tf.tanh(st.h + st.c), c=st.c * 0.5)

    out = tf.while_loop(lambda i, acc, st: i < 4, body, [tf.constant(0), tf.zeros([0, 3]), s0],
                        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3]),
                                          State(tf.TensorShape([2, 3]), tf.TensorShape([2, 3]))],
                        parallel_iterations=4, swap_memory=True, name="loop")
    assert (type(out).__name__, type(out[2]).__name__) == ("tuple", "State")
    flat = (out[0], out[1], out[2].h, out[2].c)
    assert [t.name for t in flat] == ["loop/Exit:0", "loop/Exit_1:0", "loop/Exit_2:0",
                                      "loop/Exit_3:0"]
    assert [str(t.shape) for t in flat] == ["()", "(?, 3)", "(2, 3)", "(2, 3)"]
    assert _ops("loop/", _LOOP_TYPES)[:20] == [
        "loop/Enter", "loop/Enter_1", "loop/Enter_2", "loop/Enter_3", "loop/Merge",
        "loop/Merge_1", "loop/Merge_2", "loop/Merge_3", "loop/LoopCond", "loop/Switch",
        "loop/Switch_1", "loop/Switch_2", "loop/Switch_3", "loop/Sum/Enter",
        "loop/NextIteration", "loop/NextIteration_1", "loop/NextIteration_2",
        "loop/NextIteration_3", "loop/Exit", "loop/Exit_1"]
    with pytest.raises(ValueError, match=r"enters the loop with shape \(1, 2\), but has shape "
                                         r"\(2, 2\) after one iteration"):
        tf.while_loop(lambda a: tf.shape(a)[0] < 5, lambda a: tf.concat([a, a], 0),
                      [tf.zeros([1, 2])])
    k = tf.while_loop(lambda a, b: a < 100, lambda a, b: (a + 1, b * 2.0),
                      (tf.constant(0), tf.constant(1.0)), maximum_iterations=7, name="capped")
    assert [t.name for t in k] == ["capped/Exit_1:0", "capped/Exit_2:0"]
    single = tf.while_loop(lambda a: a < 10, lambda a: a + 3, [tf.constant(1)])
    assert isinstance(single, tf.Tensor) and single.name == "while_1/Exit:0"
    assert isinstance(tf.while_loop(lambda a: a < 10, lambda a: (a + 3,), (tf.constant(1),)),
                      tf.Tensor)
    v = tf.get_variable("v", [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    r = tf.while_loop(lambda j, t: j < 3, lambda j, t: (j + 1, t * v), [0, tf.ones([3])],
                      back_prop=False)
    assert r[1].name == "while_3/Exit_1:0" and tf.gradients(r[1], v) == [None]
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,),
                      [tf.constant(0), tf.constant(1.0)])
    with pytest.raises(TypeError):
        tf.while_loop(lambda a: a, lambda a: a + 1, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o = sess.run(out, {x: np.arange(6, dtype=np.float32).reshape(2, 3)})
        assert o[0] == 4
        np.testing.assert_allclose(o[1], [[0, 0, 0], [3, 5, 7], [6, 10, 14], [9, 15, 21]])
        np.testing.assert_allclose(o[2].h, np.full([2, 3], 0.72874), atol=1e-5)
        np.testing.assert_allclose(o[2].c, np.full([2, 3], 0.0625))
        assert sess.run(k) == (7, 128.0) and sess.run(single) == 10
        np.testing.assert_allclose(sess.run(r[1]), [1, 8, 27])


# -- program 2: TensorArray RNN ------------------------------------------------------------
def test_tensor_array_rnn_loop_gradients_and_array_ops():
    seq = tf.placeholder(tf.float32, [None, 4, 2], name="seq")
    xs = tf.transpose(seq, [1, 0, 2])
    n = tf.shape(xs)[0]
    in_ta = tf.TensorArray(tf.float32, size=n, name="inputs").unstack(xs)
    out_ta = tf.TensorArray(tf.float32, size=n, element_shape=tf.TensorShape([None, 2]),
                            name="outputs")
    assert (in_ta.handle.name, in_ta.flow.name, out_ta.handle.name) == (
        "inputs:0", "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3:0",
        "outputs:0")
    with tf.variable_scope("rnn"):
        W = tf.get_variable("W", [2, 2],
                            initializer=tf.constant_initializer([[0.5, -0.2], [0.1, 0.3]]))

    def body(t, h, ta):
        h = tf.tanh(tf.matmul(in_ta.read(t), W) + h)
        return t + 1, h, ta.write(t, h)

    t_f, h_f, out_ta_f = tf.while_loop(lambda t, h, ta: t < n, body,
                                       [tf.constant(0), tf.zeros_like(seq[:, 0, :]), out_ta])
    stacked = out_ta_f.stack(name="outs")
    assert (stacked.name, str(stacked.shape), str(h_f.shape)) == ("outs/outs:0", "(4, ?, 2)",
                                                                  "(?, 2)")
    assert sorted(op.name for op in tf.get_default_graph().get_operations()
                  if "TensorArray" in op.type) == [
        "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3", "inputs", "outputs",
        "outs/outs", "while/TensorArrayReadV3", "while/TensorArrayWrite/TensorArrayWriteV3"]
    gW = tf.gradients(tf.reduce_sum(stacked ** 2), W)[0]
    assert gW.name == "gradients/while/MatMul/Enter_grad/b_acc_3:0"

    def b2(i, ta):
        return i + 1, ta.write(i, tf.fill([3], i * i))
    _, dyn_f = tf.while_loop(lambda i, ta: i < 5, b2,
                             [0, tf.TensorArray(tf.int32, size=0, dynamic_size=True)])
    dstack = dyn_f.stack()
    size = dyn_f.size()
    gath, cat = dyn_f.gather([4, 1]), dyn_f.concat()
    assert [str(t.shape) for t in (dstack, gath, cat)] == ["(?, 3)", "(?, 3)", "(?,)"]
    assert (size.name, gath.name, cat.name) == (
        "TensorArraySizeV3:0", "TensorArrayGatherV3:0", "TensorArrayConcatV3:0")
    ta3 = tf.TensorArray(tf.float32, size=3).scatter(
        [2, 0, 1], tf.constant([[1., 2.], [3., 4.], [5., 6.]]))
    ta4 = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(
        tf.range(6, dtype=tf.float32), [1, 2, 3])
    assert str(ta4.read(2).shape) == "<unknown>" and str(ta4.element_shape) == "<unknown>"
    ta5 = tf.TensorArray(tf.float32, size=2).unstack(tf.constant([[1., 2.], [3., 4.]]))
    r1, r2 = ta5.read(0), ta5.read(0)
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected"):
        tf.TensorArray(tf.float32, size=2).write(0, tf.zeros([2])).write(1, tf.zeros([3]))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        data = np.linspace(-1, 1, 16).reshape(2, 4, 2).astype(np.float32)
        o, g, tt = s.run([stacked, gW, t_f], {seq: data})
        assert tt == 4
        np.testing.assert_allclose(o[:, 0], [[-0.52749, -0.05993], [-0.74166, -0.09299],
                                             [-0.76507, -0.09933], [-0.70226, -0.07916]],
                                   atol=1e-5)
        np.testing.assert_allclose(o[3, 1], [0.79833, 0.3298], atol=1e-5)
        np.testing.assert_allclose(g, [[4.75456, 2.81505], [4.85045, 3.12745]], atol=1e-4)
        assert s.run(gath).tolist() == [[16, 16, 16], [1, 1, 1]]
        assert s.run(cat).tolist() == [0, 0, 0, 1, 1, 1, 4, 4, 4, 9, 9, 9, 16, 16, 16]
        assert s.run(ta3.stack()).tolist() == [[3.0, 4.0], [5.0, 6.0], [1.0, 2.0]]
        assert s.run(ta4.concat()).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run([r1, r2])
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(tf.TensorArray(tf.float32, size=2).write(5, 1.0).stack())
        assert s.run(tf.TensorArray(tf.float32, size=2).write(0, 1.0).stack()).tolist() == [
            1.0, 0.0]


# -- program 3: cond and case --------------------------------------------------------------
def test_dropout_cond_structures_nested_conds_and_case_forms():
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    mode = tf.placeholder(tf.int32, [], name="mode")
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("net"):
        w = tf.get_variable("w", [4, 2], initializer=tf.constant_initializer(0.25))
        h = tf.matmul(x, w)
        out = tf.cond(is_training, lambda: tf.nn.dropout(h, keep_prob=0.5, seed=3), lambda: h,
                      name="drop")
        t = tf.cond(mode > 0, lambda: (h * 2, tf.constant(1)), lambda: (h, tf.constant(0)))
        d = tf.cond(mode > 1, lambda: {"a": h + 1., "b": tf.reduce_sum(h)},
                    lambda: {"a": h - 1., "b": tf.reduce_mean(h)})
        s1 = tf.cond(mode > 0, lambda: [h], lambda: [h * 3])
        s2 = tf.cond(mode > 0, lambda: [h], lambda: [h * 3], strict=True)
        nested = tf.cond(mode > 0, lambda: tf.cond(mode > 5, lambda: tf.constant(100.),
                                                   lambda: tf.constant(50.)),
                         lambda: tf.constant(-1.))
        sm = tf.cond(mode > 0, lambda: tf.zeros([2, 3]), lambda: tf.zeros([4, 3]))
    assert (out.name, str(out.shape)) == ("net/drop/Merge:0", "(?, 2)")
    assert [a.name for a in t] == ["net/cond/Merge:0", "net/cond/Merge_1:0"]
    assert sorted((k, v.name) for k, v in d.items()) == [("a", "net/cond_1/Merge:0"),
                                                         ("b", "net/cond_1/Merge_1:0")]
    assert isinstance(s1, tf.Tensor) and isinstance(s2, list)
    assert nested.name == "net/cond_4/Merge:0" and str(sm.shape) == "(?, 3)"
    assert _ops("net/drop/")[:10] == [
        "net/drop/Switch", "net/drop/switch_t", "net/drop/switch_f", "net/drop/pred_id",
        "net/drop/dropout/Const", "net/drop/dropout/Mul", "net/drop/dropout/Mul/Switch",
        "net/drop/dropout/Shape", "net/drop/dropout/random_uniform/RandomUniform",
        "net/drop/dropout/GreaterEqual/y"]
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.cond(mode > 0, lambda: (h, h), lambda: h)
    with pytest.raises(ValueError, match="must have the same type"):
        tf.cond(mode > 0, lambda: tf.constant(1), lambda: tf.constant(1.0))
    with pytest.raises(TypeError):
        tf.cond(mode, lambda: h, lambda: h)
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.cond(mode > 0, lambda: {"a": h}, lambda: {"b": h})
    c1 = tf.case([(tf.equal(mode, 0), lambda: tf.constant(10)),
                  (tf.equal(mode, 1), lambda: tf.constant(20))],
                 default=lambda: tf.constant(-1), name="sel")
    c2 = tf.case({tf.less(mode, 2): lambda: tf.constant(1.),
                  tf.greater(mode, 0): lambda: tf.constant(2.)},
                 default=lambda: tf.constant(0.), exclusive=True, name="excl")
    c3 = tf.case([(tf.equal(mode, 0), lambda: (tf.constant(1), tf.constant(2.)))],
                 default=lambda: (tf.constant(3), tf.constant(4.)))
    c4 = tf.case([(tf.equal(mode, 0), lambda: tf.constant(5))], name="nodefault")
    assert [c1.name, c2.name, c3[0].name, c3[1].name, c4.name] == [
        "sel/cond/Merge:0", "excl/cond/Merge:0", "case/cond/Merge:0", "case/cond/Merge_1:0",
        "nodefault/Const_1:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xv = np.arange(8, dtype=np.float32).reshape(2, 4)
        assert s.run(out, {x: xv, is_training: True}).tolist() == [[0.0, 0.0], [11.0, 0.0]]
        rt, rd, rs1, rn = s.run([t, d, s1, nested], {x: xv, mode: 2})
        assert rt[0].tolist() == [[3., 3.], [11., 11.]] and rt[1] == 1
        assert rd["a"].tolist() == [[2.5, 2.5], [6.5, 6.5]] and rd["b"] == 14.0
        assert rs1.tolist() == [[1.5, 1.5], [5.5, 5.5]] and rn == 50.0
        assert (s.run(nested, {mode: 7}), s.run(nested, {mode: 0})) == (100.0, -1.0)
        assert [s.run(c1, {mode: m}) for m in range(4)] == [10, 20, -1, -1]
        assert [s.run(c3, {mode: m}) for m in range(2)] == [(1, 2.0), (3, 4.0)]
        assert s.run(c2, {mode: 5}) == 2.0 and s.run(c4, {mode: 0}) == 5
        with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive=True"):
            s.run(c2, {mode: 1})
        with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
            s.run(c4, {mode: 3})


# -- program 4: map_fn / scan / folds ------------------------------------------------------
def test_map_fn_scan_folds_structures_names_and_gradients():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("feat"):
        w = tf.get_variable("w", [3], initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
        m1 = tf.map_fn(lambda r: tf.reduce_sum(r * w), x)
        m2 = tf.map_fn(lambda r: (r * 2., tf.argmax(r)), x, dtype=(tf.float32, tf.int64),
                       name="pair")
        m3 = tf.map_fn(lambda t: t[0] + tf.cast(t[1], tf.float32),
                       (x, tf.range(tf.shape(x)[0])), dtype=tf.float32)
        m4 = tf.map_fn(lambda r: {"s": tf.reduce_sum(r), "m": tf.reduce_max(r)}, x,
                       dtype={"s": tf.float32, "m": tf.float32})
    c = tf.scan(lambda a, r: a + r, x, name="cumsum")
    c2 = tf.scan(lambda a, r: a * r, x, initializer=tf.ones([3]), reverse=True)
    c3 = tf.scan(lambda a, r: (a[0] + r, a[1] + 1), x,
                 initializer=(tf.zeros([3]), tf.constant(0)))
    f1 = tf.foldl(lambda a, r: a + tf.reduce_sum(r), x, initializer=tf.constant(0.))
    f2 = tf.foldr(lambda a, r: a * 2. + r, x)
    f3 = tf.foldl(lambda a, r: (a[0] + r[0], a[1] * r[1]),
                  (tf.constant([1., 2.]), tf.constant([3., 4.])))
    assert (m1.name, str(m1.shape)) == ("feat/map/TensorArrayStack/TensorArrayGatherV3:0", "(?,)")
    assert [t.name for t in m2] == ["feat/pair/TensorArrayStack/TensorArrayGatherV3:0",
                                    "feat/pair/TensorArrayStack_1/TensorArrayGatherV3:0"]
    assert [str(t.shape) for t in m2] == ["(?, 3)", "(?,)"] and str(m3.shape) == "(?, 3)"
    assert sorted((k, v.name) for k, v in m4.items()) == [
        ("m", "feat/map_2/TensorArrayStack/TensorArrayGatherV3:0"),
        ("s", "feat/map_2/TensorArrayStack_1/TensorArrayGatherV3:0")]
    assert [c.name, c2.name, c3[0].name, c3[1].name] == [
        "cumsum/TensorArrayStack/TensorArrayGatherV3:0",
        "scan/TensorArrayStack/TensorArrayGatherV3:0",
        "scan_1/TensorArrayStack/TensorArrayGatherV3:0",
        "scan_1/TensorArrayStack_1/TensorArrayGatherV3:0"]
    assert [f1.name, str(f1.shape), f2.name, str(f2.shape)] == [
        "foldl/while/Exit_2:0", "()", "foldr/while/Exit_2:0", "(3,)"]
    assert [t.name for t in f3] == ["foldl_1/while/Exit_2:0", "foldl_1/while/Exit_3:0"]
    ta_types = ("TensorArrayV3", "TensorArrayScatterV3", "TensorArrayGatherV3",
                "TensorArrayWriteV3", "TensorArrayReadV3", "Exit", "Enter", "TensorArraySizeV3")
    assert sorted(_ops("cumsum/", ta_types)) == [
        "cumsum/TensorArray", "cumsum/TensorArrayReadV3",
        "cumsum/TensorArrayStack/TensorArrayGatherV3",
        "cumsum/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3",
        "cumsum/TensorArrayWrite/TensorArrayWriteV3", "cumsum/TensorArray_1",
        "cumsum/while/Enter", "cumsum/while/Enter_1", "cumsum/while/Enter_2",
        "cumsum/while/Enter_3", "cumsum/while/Exit", "cumsum/while/Exit_1",
        "cumsum/while/Exit_2", "cumsum/while/Exit_3", "cumsum/while/Less/Enter",
        "cumsum/while/TensorArrayReadV3", "cumsum/while/TensorArrayReadV3/Enter",
        "cumsum/while/TensorArrayReadV3/Enter_1",
        "cumsum/while/TensorArrayWrite/TensorArrayWriteV3",
        "cumsum/while/TensorArrayWrite/TensorArrayWriteV3/Enter"]
    gw = tf.gradients(tf.reduce_sum(m1 ** 2) + tf.reduce_sum(c2), [w, x])
    assert gw[0].name == "gradients/feat/map/while/mul/Enter_grad/b_acc_3:0"
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.map_fn(lambda r: (r, r), x)
    with pytest.raises(ValueError):
        tf.map_fn(lambda r: r, tf.constant(3.0))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xv = np.array([[1., 2., 3.], [4., -5., 6.], [0.5, 0.25, -1.]], np.float32)
        r = s.run([m1, m2, m3, m4, c, c2, c3, f1, f2, f3, gw], {x: xv})
        np.testing.assert_allclose(r[0], [4.5, 19.0, -2.0])
        assert r[1][1].tolist() == [2, 2, 0]
        np.testing.assert_allclose(r[2], [[1, 2, 3], [5, -4, 7], [2.5, 2.25, 1]])
        np.testing.assert_allclose(r[3]["s"], [6, 5, -0.25])
        np.testing.assert_allclose(r[4], [[1, 2, 3], [5, -3, 9], [5.5, -2.75, 8]])
        np.testing.assert_allclose(r[5], [[2, -2.5, -18], [2, -1.25, -6], [0.5, 0.25, -1]])
        assert r[6][1].tolist() == [1, 2, 3]
        assert (r[7], r[8].tolist(), r[9]) == (10.75, [11.0, -7.0, 11.0], (3.0, 12.0))
        np.testing.assert_allclose(r[10][0], [159., -173., 259.])
        np.testing.assert_allclose(r[10][1], [[6.5, -10.25, 12], [20, -37.25, 72],
                                              [7, -10, 17]])
        assert s.run(m1, {x: np.zeros([0, 3], np.float32)}).shape == (0,)
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(f2, {x: np.zeros([0, 3], np.float32)})


# -- program 5: loops over variables, group and tuple --------------------------------------
def test_counter_loop_with_assigns_group_tuple_and_control_dependencies():
    with tf.variable_scope("counter"):
        total = tf.get_variable("total", [], initializer=tf.zeros_initializer())
        steps = tf.get_variable("steps", [], dtype=tf.int32, initializer=tf.zeros_initializer(),
                                trainable=False)

    def body(i):
        with tf.control_dependencies([tf.assign_add(total, tf.cast(i, tf.float32))]):
            upd = tf.assign_add(steps, 1)
        with tf.control_dependencies([upd]):
            return tf.identity(i + 1)

    loop = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)], name="acc_loop")
    assert loop.name == "acc_loop/Exit:0"
    assert _ops("acc_loop/", ("AssignAdd", "Identity", "Enter")) == [
        "acc_loop/Enter", "acc_loop/Identity", "acc_loop/AssignAdd", "acc_loop/AssignAdd_1",
        "acc_loop/Identity_1"]
    a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
    grp = tf.group(tf.assign_add(total, 1.0), tf.assign_add(steps, 10), name="bump")
    assert (grp.name, grp.type) == ("bump", "NoOp")
    assert sorted(c.name for c in grp.control_inputs) == ["AssignAdd", "AssignAdd_1"]
    grp2 = tf.group(*[tf.no_op(name=f"n{k}") for k in range(3)])
    assert (grp2.name, [c.name for c in grp2.control_inputs]) == ("group_deps",
                                                                  ["n0", "n1", "n2"])
    assert sorted(c.name for c in tf.group([a.op, [b.op]], name="nested").control_inputs) == [
        "a", "b"]
    assert tf.group().name == "group_deps_1"
    tup = tf.tuple([a * 2, b * 3], control_inputs=[grp], name="tup")
    assert [t.name for t in tup] == ["tup/control_dependency:0", "tup/control_dependency_1:0"]
    assert [[c.name for c in t.op.control_inputs] for t in tup] == [["tup/group_deps"]] * 2
    tup2 = tf.tuple([a, None, b])
    assert [getattr(t, "name", t) for t in tup2] == [
        "tuple/control_dependency:0", None, "tuple/control_dependency_1:0"]
    with tf.control_dependencies([grp]):
        after = tf.identity(total, name="after")
        c_in = tf.constant(3.0, name="c_in")
    assert [c.name for c in after.op.control_inputs] == ["bump"]
    assert [c.name for c in c_in.op.control_inputs] == ["bump"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(loop) == 5 and s.run([total, steps]) == [10.0, 5]
        assert s.run(grp) is None and s.run([total, steps]) == [11.0, 15]
        assert s.run(after) == 12.0 and s.run(tup) == [2.0, 6.0]


# -- program 6: greedy and beam decoding ---------------------------------------------------
def test_greedy_gru_decoder_beam_loop_and_nested_while():
    V, E, H, T = 6, 4, 5, 5
    tf.set_random_seed(42)
    with tf.variable_scope("decoder"):
        emb = tf.get_variable("embedding", [V, E],
                              initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=1))
        cell = tf.nn.rnn_cell.GRUCell(H, name="gru",
                                      kernel_initializer=tf.glorot_uniform_initializer(seed=2))
        proj = tf.layers.Dense(V, name="proj",
                               kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    batch = tf.placeholder(tf.int32, [], name="batch")

    def body(t, tok, state, finished, ta, lps):
        out, new_state = cell(tf.nn.embedding_lookup(emb, tok), state)
        logits = proj(out)
        nxt = tf.argmax(logits, axis=-1, output_type=tf.int32)
        lp = tf.reduce_max(tf.nn.log_softmax(logits), -1)
        nxt = tf.where(finished, tf.zeros_like(nxt), nxt)
        return (t + 1, nxt, new_state, tf.logical_or(finished, tf.equal(nxt, 0)),
                ta.write(t, nxt), lps.write(t, lp))

    loop_vars = (tf.constant(0), tf.fill([batch], 1), cell.zero_state(batch, tf.float32),
                 tf.zeros([batch], tf.bool),
                 tf.TensorArray(tf.int32, size=0, dynamic_size=True, name="tokens"),
                 tf.TensorArray(tf.float32, size=T, name="logps"))
    steps, last_tok, last_state, fin, toks_ta, lps_ta = tf.while_loop(
        lambda t, tok, st, f, ta, lps: tf.logical_and(t < T,
                                                      tf.logical_not(tf.reduce_all(f))),
        body, loop_vars, name="greedy")
    tokens = tf.transpose(toks_ta.stack(), name="tokens_bt")
    assert [steps.name, tokens.name] == ["greedy/Exit:0", "tokens_bt:0"]
    assert [str(t.shape) for t in (last_tok, last_state, fin, tokens)] == [
        "(?,)", "(?, 5)", "(?,)", "(?, ?)"]
    assert sorted(v.name for v in tf.trainable_variables()) == [
        "decoder/embedding:0", "gru/candidate/bias:0", "gru/candidate/kernel:0",
        "gru/gates/bias:0", "gru/gates/kernel:0", "proj/bias:0", "proj/kernel:0"]
    assert tf.nest.pack_sequence_as({"a": 1, "b": [2, 3]}, [10, 20, 30]) == {"a": 10,
                                                                             "b": [20, 30]}
    beam = 3
    logp = tf.placeholder(tf.float32, [1, beam, V], name="logp")

    def bbody(i, sc, hist):
        total = tf.reshape(sc[:, :, None] + logp * tf.cast(i + 1, tf.float32), [1, -1])
        top, idx = tf.nn.top_k(total, k=beam)
        hist = tf.concat([tf.gather(hist, (idx // V)[0], axis=1), (idx % V)[:, :, None]],
                         axis=2)
        return i + 1, top, hist
    _, bsc, bhist = tf.while_loop(
        lambda i, s, h: i < 3, bbody,
        [0, tf.constant([[0.0, -1e9, -1e9]]), tf.zeros([1, beam, 0], tf.int32)],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([1, beam]),
                          tf.TensorShape([1, beam, None])])
    assert (str(bsc.shape), str(bhist.shape)) == ("(1, 3)", "(1, 3, ?)")

    def outer(i, acc):
        inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), [0, 0])[1]
        return i + 1, acc + inner
    nested = tf.while_loop(lambda i, a: i < 4, outer, [0, 0], name="outer")
    assert nested[1].name == "outer/Exit_1:0"
    assert _ops("outer/while/", ("Enter", "Exit")) == [
        "outer/while/Enter", "outer/while/Enter_1", "outer/while/Less/Enter",
        "outer/while/Exit", "outer/while/Exit_1"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        n_steps, toks, f, lps = s.run([steps, tokens, fin, lps_ta.stack()], {batch: 2})
        assert n_steps == 5 and toks.tolist() == [[2, 3, 3, 5, 5]] * 2
        assert f.tolist() == [False, False]
        np.testing.assert_allclose(lps[:, 0], [-1.7356, -1.7098, -1.7511, -1.7234, -1.6749],
                                   atol=1e-4)
        lv = np.log(np.random.RandomState(0).dirichlet(np.ones(V), size=(1, beam)))
        b1, b2 = s.run([bsc, bhist], {logp: lv.astype(np.float32)})
        np.testing.assert_allclose(b1, [[-6.1728, -6.5888, -7.2949]], atol=1e-4)
        assert b2.tolist() == [[[2, 5, 1], [5, 2, 2], [2, 5, 5]]]
        assert s.run(nested) == (4, 4)


# -- program 7: while-loop RNN training ----------------------------------------------------
def test_while_rnn_with_dropout_cond_pooling_adam_and_saver(tmp_path):
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    keep = tf.placeholder_with_default(1.0, [], name="keep")
    with tf.variable_scope("model"):
        Wx = tf.get_variable("Wx", [3, 4],
                             initializer=tf.random_normal_initializer(stddev=0.3, seed=1))
        Wh = tf.get_variable("Wh", [4, 4], initializer=tf.orthogonal_initializer(seed=2))
        b = tf.get_variable("b", [4], initializer=tf.zeros_initializer())
        Wo = tf.get_variable("Wo", [4, 1],
                             initializer=tf.random_normal_initializer(stddev=0.3, seed=3))
    n = tf.shape(x)[1]
    x_ta = tf.TensorArray(tf.float32, size=5).unstack(tf.transpose(x, [1, 0, 2]))

    def step(t, h, maxh):
        h = tf.tanh(tf.matmul(x_ta.read(t), Wx) + tf.matmul(h, Wh) + b)
        h = tf.cond(keep < 1.0, lambda: tf.nn.dropout(h, keep_prob=keep, seed=5), lambda: h)
        return t + 1, h, tf.maximum(maxh, h)

    h0 = tf.zeros([tf.shape(x)[0], 4])
    # a list of loop variables and a tuple from the body: with maximum_iterations the
    # inner structures differ, a TypeError in TensorFlow too
    with pytest.raises(TypeError, match="don't have the same nested structure"):
        tf.while_loop(lambda t, h, m: t < n, step, [0, h0, h0 - 10.0], maximum_iterations=5)
    _, h_last, h_max = tf.while_loop(lambda t, h, m: t < n, step, (0, h0, h0 - 10.0),
                                     maximum_iterations=5)
    pooled = tf.map_fn(lambda r: tf.reduce_mean(r) * r, h_max)
    run = tf.scan(lambda a, r: 0.5 * a + r, pooled)
    pred = tf.matmul(h_last + run, Wo, name="pred")
    loss = tf.losses.mean_squared_error(y, pred)
    tf.summary.scalar("loss", loss)
    opt = tf.train.AdamOptimizer(0.05)
    gvs = opt.compute_gradients(loss)
    assert [(g.name, v.op.name) for g, v in gvs] == [
        ("gradients/while_1/MatMul/Enter_grad/b_acc_3:0", "model/Wx"),
        ("gradients/while_1/MatMul_1/Enter_grad/b_acc_3:0", "model/Wh"),
        ("gradients/while_1/add_2/Enter_grad/b_acc_3:0", "model/b"),
        ("gradients/pred_grad/tuple/control_dependency_1:0", "model/Wo")]
    gs = tf.train.get_or_create_global_step()
    train = opt.apply_gradients([(tf.clip_by_norm(g, 1.0), v) for g, v in gvs],
                                global_step=gs)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver(max_to_keep=2)
    rng = np.random.RandomState(0)
    xv = rng.randn(6, 5, 3).astype(np.float32)
    yv = rng.randn(6, 1).astype(np.float32)
    feed = {x: xv, y: yv}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        gval = s.run(gvs[0][0], feed)
        np.testing.assert_allclose(gval, [[0.0422, 0.1082, -0.009, 0.2082],
                                          [-0.624, 0.0244, -0.4024, -0.3185],
                                          [-0.3185, -0.0356, -0.239, 0.0904]], atol=1e-4)
        base = s.run(Wx)
        eps = 1e-2
        pert = base.copy()
        pert[0, 0] += eps
        s.run(Wx.assign(pert))
        lp = s.run(loss, feed)
        pert[0, 0] -= 2 * eps
        s.run(Wx.assign(pert))
        lm = s.run(loss, feed)
        s.run(Wx.assign(base))
        assert round(float((lp - lm) / (2 * eps)), 3) == 0.042
        losses = [float(s.run([train, loss, merged], feed)[1]) for _ in range(4)]
        np.testing.assert_allclose(losses, [0.40672, 0.16691, 0.09427, 0.09655], atol=2e-5)
        assert s.run(gs) == 4
        assert round(float(s.run(loss, {**feed, keep: 0.7})), 5) == 0.19299
        p = saver.save(s, str(tmp_path / "m"), global_step=gs)
        assert os.path.basename(p) == "m-4"
        assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-4.data-00000-of-00001",
                                                "m-4.index", "m-4.meta"]
        assert [nm for nm, _ in tf.train.list_variables(p)] == [
            "beta1_power", "beta2_power", "global_step", "model/Wh", "model/Wh/Adam",
            "model/Wh/Adam_1", "model/Wo", "model/Wo/Adam", "model/Wo/Adam_1", "model/Wx",
            "model/Wx/Adam", "model/Wx/Adam_1", "model/b", "model/b/Adam", "model/b/Adam_1"]


# -- program 8: schedules of conds over assigns -------------------------------------------
def test_lr_schedule_conds_over_assigns_case_vs_piecewise_and_loop_shapes():
    step = tf.placeholder(tf.int32, [], name="step")
    with tf.variable_scope("sched"):
        lr = tf.get_variable("lr", [], initializer=tf.constant_initializer(0.1),
                             trainable=False)
        best = tf.get_variable("best", [], initializer=tf.constant_initializer(1e9),
                               trainable=False)
    metric = tf.placeholder(tf.float32, [], name="metric")
    upd = tf.cond(metric < best, lambda: tf.assign(best, metric), lambda: tf.identity(best),
                  name="track")
    decay = tf.cond(tf.equal(step % 3, 0), lambda: tf.assign(lr, lr * 0.5).op,
                    lambda: tf.no_op(), name="decay")
    assert (upd.name, decay.name, decay.dtype) == ("track/Merge:0", "decay/Merge:0", tf.bool)
    mix = tf.cond(metric > 0, lambda: (tf.no_op(), metric * 2), lambda: (tf.no_op(), metric))
    assert [m.name for m in mix] == ["cond/Merge:0", "cond/Merge_1:0"]
    pw = tf.case([(step < 10, lambda: tf.constant(1.0)), (step < 20, lambda: tf.constant(0.5))],
                 default=lambda: tf.constant(0.1), name="piecewise")
    tpw = tf.train.piecewise_constant(step, [10, 20], [1.0, 0.5, 0.1])
    assert (pw.name, tpw.name) == ("piecewise/cond/Merge:0",
                                   "PiecewiseConstant/case/cond/Merge:0")
    w1 = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, tf.ones([2, 3])])
    w2 = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v[:, :1] * 2.0),
                       [0, tf.ones([2, 1])])
    w3 = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + 1.0),
                       [0, tf.placeholder(tf.float32, [None, 3])])
    assert [str(w[1].shape) for w in (w1, w2, w3)] == ["(2, 3)", "(2, 1)", "(?, 3)"]
    with pytest.raises(ValueError, match="is not compatible with the initial shape"):
        tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v), [0, tf.ones([2, 3])],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([2])])
    v = tf.get_variable("v", [4], initializer=tf.constant_initializer([1., 2., 3., 4.]))
    ta = tf.TensorArray(tf.float32, size=4).unstack(v)
    _, acc = tf.while_loop(lambda i, a: i < 4,
                           lambda i, a: (i + 1, a.write(i, ta.read(i) * tf.cast(i + 1,
                                                                                tf.float32))),
                           [0, tf.TensorArray(tf.float32, size=4)])
    gv = tf.gradients(tf.reduce_sum(acc.stack() ** 2), v)[0]
    assert gv.name == ("gradients/TensorArrayUnstack/TensorArrayScatter/"
                       "TensorArrayScatterV3_grad/TensorArrayGatherV3:0")
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        seen = []
        for st, m in [(0, 0.5), (1, 0.7), (3, 0.2), (4, 0.9)]:
            s.run([upd, decay], {step: st, metric: m})
            seen.append((round(float(s.run(best)), 4), round(float(s.run(lr)), 4)))
        assert seen == [(0.5, 0.05), (0.5, 0.05), (0.2, 0.025), (0.2, 0.025)]
        assert s.run(mix[1], {metric: -2.0}) == -2.0
        assert [round(float(s.run(pw, {step: k})), 2) for k in (0, 10, 15, 25)] == [
            1.0, 0.5, 0.5, 0.1]
        assert [round(float(s.run(tpw, {step: k})), 2) for k in (0, 10, 11, 25)] == [
            1.0, 1.0, 0.5, 0.1]
        assert s.run(w2[1]).tolist() == [[8.0], [8.0]]
        assert s.run(gv).tolist() == [2.0, 16.0, 54.0, 128.0]
        assert s.run(tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0],
                                   maximum_iterations=-1)) == 0


# -- program 9: dict loop variables, loops in conds ----------------------------------------
def test_dict_loop_vars_with_cond_body_loop_in_cond_and_cond_gradient():
    x = tf.placeholder(tf.float32, [None], name="x")
    flag = tf.placeholder(tf.bool, [], name="flag")

    def body(d):
        v = tf.cond(tf.equal(d["i"] % 2, 0), lambda: d["v"] * 2.0, lambda: d["v"] + 1.0)
        return [{"i": d["i"] + 1, "v": v}]
    res = tf.while_loop(lambda d: d["i"] < 5, body, [{"i": tf.constant(0), "v": x}])
    assert isinstance(res, list)
    assert sorted((k, t.name) for k, t in res[0].items()) == [("i", "while/Exit:0"),
                                                              ("v", "while/Exit_1:0")]
    assert _ops("while/cond/") == [
        "while/cond/Switch", "while/cond/switch_t", "while/cond/switch_f", "while/cond/pred_id",
        "while/cond/mul/y", "while/cond/mul", "while/cond/mul/Switch", "while/cond/add/y",
        "while/cond/add", "while/cond/add/Switch", "while/cond/Merge"]

    def loop_branch():
        return tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x),
                             [0, tf.zeros_like(x)])[1]
    c = tf.cond(flag, loop_branch, lambda: -x, name="branchy")
    assert (c.name, str(c.shape)) == ("branchy/Merge:0", "(?,)")
    assert _ops("branchy/while/", ("Enter", "Exit")) == [
        "branchy/while/Enter", "branchy/while/Enter_1", "branchy/while/add_1/Enter",
        "branchy/while/Exit", "branchy/while/Exit_1"]
    w = tf.get_variable("w", [], initializer=tf.constant_initializer(1.5))
    gw = tf.gradients(tf.cond(flag, lambda: w * tf.reduce_sum(x), lambda: tf.square(w)), w)[0]
    assert gw.name == "gradients/AddN:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        xv = np.array([1.0, 2.0, 3.0], np.float32)
        r = s.run(res, {x: xv})
        assert r[0]["i"] == 5 and r[0]["v"].tolist() == [14.0, 22.0, 30.0]
        assert s.run(c, {x: xv, flag: True}).tolist() == [3.0, 6.0, 9.0]
        assert s.run(c, {x: xv, flag: False}).tolist() == [-1.0, -2.0, -3.0]
        assert (s.run(gw, {x: xv, flag: True}), s.run(gw, {x: xv, flag: False})) == (6.0, 3.0)


# -- focused tests: one per fixed class ----------------------------------------------------
def test_case_without_default_builds_tensorflows_checks_in_order():
    mode = tf.placeholder(tf.int32, [], name="mode")
    c = tf.case([(tf.equal(mode, 0), lambda: tf.constant(5) * 2)], name="nodefault")
    ops = {op.name: op for op in tf.get_default_graph().get_operations()
           if op.name.startswith("nodefault/") and "AssertGuard/" not in op.name}
    assert list(ops) == [
        "nodefault/preds_c", "nodefault/preds_c_1", "nodefault/Cast", "nodefault/Const",
        "nodefault/num_true_conds", "nodefault/n_true_conds", "nodefault/LessEqual",
        "nodefault/Assert/Const", "nodefault/Assert_1/Const", "nodefault/Const_1",
        "nodefault/mul/y", "nodefault/mul"]
    empty = ops["nodefault/preds_c_1"]
    assert (empty.type, empty.outputs[0].dtype, str(empty.outputs[0].shape)) == (
        "Const", tf.float32, "(0,)")
    assert [c_.name for c_ in ops["nodefault/Const_1"].control_inputs] == [
        "nodefault/Assert/AssertGuard/Merge", "nodefault/Assert_1/AssertGuard/Merge"]
    one = tf.case([(tf.equal(mode, 0), lambda: tf.constant(5) * 2)], exclusive=True,
                  name="one")
    assert one.name == "one/mul:0"
    assert [op.name for op in tf.get_default_graph().get_operations()
            if op.name.startswith("one/preds_c")] == ["one/preds_c", "one/preds_c_1",
                                                      "one/preds_c_2"]
    s_ = tf.stack([], name="nothing")
    assert (s_.op.type, s_.dtype, str(s_.shape)) == ("Const", tf.float32, "(0,)")
    with tf.Session() as s:
        assert s.run(c, {mode: 0}) == 10 and s.run(one, {mode: 0}) == 10
        with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
            s.run(c, {mode: 1})


def test_nested_cond_gates_an_outside_predicate_at_its_own_switch():
    mode = tf.placeholder(tf.int32, [], name="mode")
    c = tf.case([(tf.equal(mode, 0), lambda: tf.constant(5)),
                 (tf.equal(mode, 1), lambda: tf.constant(6)),
                 (tf.equal(mode, 2), lambda: tf.constant(7))], exclusive=True)
    g = tf.get_default_graph()
    inner = g.get_operation_by_name("case/cond/cond/Switch")
    assert [t.name for t in inner.inputs] == ["case/cond/cond/Switch/Switch:0"] * 2
    assert [t.name for t in g.get_operation_by_name("case/cond/cond/Switch/Switch").inputs] == [
        "Equal_1:0", "case/cond/pred_id:0"]
    assert [t.name for t in g.get_operation_by_name("case/cond/cond/pred_id").inputs] == [
        "case/cond/cond/Switch/Switch:0"]
    assert [t.name for t in g.get_operation_by_name("case/cond/cond/preds_c").inputs] == [
        "case/cond/cond/preds_c/Switch_1:0", "case/cond/cond/preds_c/Switch_2:0",
        "case/cond/cond/preds_c/Switch_4:0"]
    with tf.Session() as s:
        assert [s.run(c, {mode: m}) for m in range(3)] == [5, 6, 7]


def test_ref_input_enters_a_loop_through_a_op_named_ref_enter():
    u = tf.Variable([1.0, 2.0], name="u")

    def body(i, s):
        with tf.control_dependencies([u.assign_add([1.0, 1.0])]):
            return i + 1, s + 1.0
    out = tf.while_loop(lambda i, s: i < 3, body, [0, tf.zeros([2])])
    assert [op.name + ":" + op.type for op in tf.get_default_graph().get_operations()
            if op.name.startswith("while/") and "Enter" in op.type] == [
        "while/Enter:Enter", "while/Enter_1:Enter", "while/AssignAdd/RefEnter:RefEnter"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(out)[1].tolist() == [3.0, 3.0] and s.run(u).tolist() == [4.0, 5.0]


def test_cond_returns_a_tensor_array():
    x = tf.placeholder(tf.float32, [None], name="x")
    flag = tf.placeholder(tf.bool, [], name="flag")
    ta = tf.TensorArray(tf.float32, size=2)
    ta2 = tf.cond(flag, lambda: ta.write(0, x[0]).write(1, x[1]),
                  lambda: ta.write(0, x[1]).write(1, x[0]))
    st = ta2.stack()
    assert type(ta2).__name__ == "TensorArray" and ta2.handle is ta.handle
    assert ta2.flow.name == "cond/Merge:0"
    assert (st.name, str(st.shape)) == ("TensorArrayStack/TensorArrayGatherV3:0", "(2,)")
    with tf.Session() as s:
        xv = np.array([1.0, 2.0, 3.0], np.float32)
        assert s.run(st, {x: xv, flag: True}).tolist() == [1.0, 2.0]
        assert s.run(st, {x: xv, flag: False}).tolist() == [2.0, 1.0]


def test_body_dict_for_a_list_of_loop_vars_is_a_value_error():
    x = tf.placeholder(tf.float32, [None], name="x")
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.while_loop(lambda d: d["i"] < 5, lambda d: {"i": d["i"] + 1, "v": d["v"]},
                      [{"i": tf.constant(0), "v": x}])


def test_control_flow_argument_errors_start_with_tensorflows_words():
    mode = tf.placeholder(tf.int32, [], name="mode")
    with pytest.raises(TypeError, match=r"^'cond' must be callable\."):
        tf.while_loop(3, lambda i: i, [0])
    with pytest.raises(TypeError, match=r"^'body' must be callable\."):
        tf.while_loop(lambda i: i < 1, None, [0])
    with pytest.raises(ValueError, match=r"^'loop_vars' must be provided\."):
        tf.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(ValueError, match=r"^'maximum_iterations' must be a scalar\. Received "
                                         r"shape: \(2,\)"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0],
                      maximum_iterations=tf.constant([1, 2]))
    with pytest.raises(TypeError, match=r"^'true_fn' must be callable\."):
        tf.cond(mode > 0, tf.constant(1), lambda: tf.constant(2))
    with pytest.raises(ValueError, match=r"^'true_fn' must have a return value\."):
        tf.cond(mode > 0, lambda: None, lambda: None)
    with pytest.raises(TypeError, match=r"^'pred' must not be a Python bool\."):
        tf.cond(mode == 0, lambda: mode, lambda: mode)
    with pytest.raises(TypeError, match=r"^'inputs' should be zero or more \(nested\) Tensors\. "
                                        r"Received '3\.0' with type '<class 'float'>'"):
        tf.group(tf.no_op(), 3.0)


# -- program 10: per-row conds in map_fn, TensorArray odds and ends -----------------------
def test_map_fn_cond_over_lengths_infer_shape_and_tensor_array_utilities():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    lens = tf.placeholder(tf.int32, [None], name="lens")

    def per_row(t):
        row, n = t
        return tf.cond(n > 2, lambda: tf.reduce_sum(row[:n]), lambda: tf.reduce_max(row))
    m = tf.map_fn(per_row, (x, lens), dtype=tf.float32, name="rowwise")
    assert (m.name, str(m.shape)) == ("rowwise/TensorArrayStack/TensorArrayGatherV3:0", "(?,)")
    assert _ops("rowwise/while/cond/")[:8] == [
        "rowwise/while/cond/Switch", "rowwise/while/cond/switch_t",
        "rowwise/while/cond/switch_f", "rowwise/while/cond/pred_id", "rowwise/while/cond/Const",
        "rowwise/while/cond/Const_1", "rowwise/while/cond/strided_slice/stack",
        "rowwise/while/cond/strided_slice/stack_1"]
    m2 = tf.map_fn(lambda r: r[:2], x, infer_shape=False)
    s1 = tf.scan(lambda a, r: a + r[:2], x, initializer=tf.zeros([2]), infer_shape=False)
    assert (str(m2.shape), str(s1.shape)) == ("<unknown>", "<unknown>")
    r = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)],
                      return_same_structure=True)
    assert isinstance(r, list) and [t.name for t in r] == ["while/Exit:0"]
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    ta = ta.write(0, [1., 2.]).write(1, [3., 4.]).write(2, [5., 6.])
    assert (str(ta.stack().shape), ta.identity().flow.name, ta.size().name) == (
        "(3, 2)", "Identity:0", "Const_1:0")
    assert ta.close().type == "TensorArrayCloseV3"
    ta_unk = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    ta_unk = ta_unk.write(0, tf.zeros([2])).write(1, tf.zeros([3]))
    assert str(ta_unk.concat().shape) == "<unknown>"
    ta_dyn = tf.TensorArray(tf.float32, size=0, dynamic_size=True,
                            element_shape=tf.TensorShape([None, 3]))
    assert str(ta_dyn.element_shape) == "(?, 3)"
    with tf.Session() as s:
        xv = np.array([[1., 2., 3., 4.], [5., -1., 0., 2.], [0., 0., 9., 1.]], np.float32)
        assert s.run(m, {x: xv, lens: [3, 1, 4]}).tolist() == [6.0, 5.0, 10.0]
        assert s.run(m2, {x: xv}).tolist() == [[1.0, 2.0], [5.0, -1.0], [0.0, 0.0]]
        assert s.run(s1, {x: xv}).tolist() == [[1.0, 2.0], [6.0, 1.0], [6.0, 1.0]]
        assert s.run(r) == [3]
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(ta.gather([0, 5]))
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(tf.TensorArray(tf.float32, size=2).split(tf.zeros([3, 2]), [1, 1]).concat())


def test_slice_with_a_tensor_bound_makes_its_missing_bounds_constants():
    x = tf.placeholder(tf.float32, [4], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    n64 = tf.placeholder(tf.int64, [], name="n64")
    y = x[:n]
    assert [(op.name, op.type) for op in tf.get_default_graph().get_operations()][3:] == [
        ("Const", "Const"), ("Const_1", "Const"), ("strided_slice/stack", "Pack"),
        ("strided_slice/stack_1", "Pack"), ("strided_slice/stack_2", "Pack"),
        ("strided_slice", "StridedSlice")]
    z = x[1:n:2]  # every bound given: the plain ints pack as constants in the scope
    assert [i.op.type for i in z.op.inputs[1:]] == ["Const", "Pack", "Const"]
    w = x[n64:]
    assert [i.dtype for i in w.op.inputs[1:]] == [tf.int64] * 3
    c = tf.cond(n > 2, lambda: tf.reduce_sum(x[:n]), lambda: tf.reduce_max(x))
    g = tf.get_default_graph()
    assert [op.name for op in g.get_operations() if op.name.startswith("cond/Const")] == [
        "cond/Const", "cond/Const_1", "cond/Const_2", "cond/Const_3"]
    assert [t.name for t in g.get_operation_by_name("cond/strided_slice/stack").inputs] == [
        "cond/Const:0"]
    with tf.Session() as s:
        xv = np.array([1., 2., 3., 4.], np.float32)
        assert s.run(y, {x: xv, n: 3}).tolist() == [1.0, 2.0, 3.0]
        assert s.run(w, {x: xv, n64: 2}).tolist() == [3.0, 4.0]
        assert s.run(c, {x: xv, n: 3}) == 6.0 and s.run(c, {x: xv, n: 1}) == 4.0


# -- program 11: embeddings looked up in a loop and in a cond -------------------------------
def _as_dense(g, rows):
    if hasattr(g, "indices"):  # TensorFlow's IndexedSlices (flowgraph gives a dense Tensor)
        out = np.zeros([rows, g.values.shape[1]], np.float32)
        np.add.at(out, g.indices, g.values)
        return out
    return g


def test_embedding_lookups_in_a_loop_and_a_cond_train_with_sgd():
    tf.set_random_seed(3)
    ids = tf.placeholder(tf.int32, [None, 4], name="ids")
    flag = tf.placeholder(tf.bool, [], name="flag")
    with tf.variable_scope("emb"):
        E = tf.get_variable("E", [7, 3], initializer=tf.random_uniform_initializer(-1, 1, seed=4))
        W = tf.get_variable("W", [3, 3], initializer=tf.glorot_uniform_initializer(seed=5))

    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, W) + tf.nn.embedding_lookup(E, ids[:, t]))
    _, h = tf.while_loop(lambda t, h: t < 4, body, [0, tf.zeros([tf.shape(ids)[0], 3])])
    picked = tf.cond(flag, lambda: tf.gather(E, [1, 2]), lambda: tf.gather(E, [3, 3]))
    loss = tf.reduce_sum(h ** 2) + tf.reduce_sum(picked)
    grads = tf.gradients(loss, [E, W])
    assert grads[1].name == "gradients/while/MatMul/Enter_grad/b_acc_3:0"
    sg = tf.while_loop(lambda i, a: i < 3,
                       lambda i, a: (i + 1, a + tf.stop_gradient(a) * 0.5 + W),
                       [0, tf.zeros([3, 3])])[1]
    gsg = tf.gradients(tf.reduce_sum(sg), W)[0]
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    assert train.name == "GradientDescent"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        feed = {ids: [[1, 2, 3, 4], [0, 6, 5, 1]], flag: True}
        gE, gW = s.run(grads, feed)
        np.testing.assert_allclose(_as_dense(gE, 7), [
            [0.032, -0.0627, -0.059], [1.7818, 0.0008, 1.2602], [0.9372, 0.9713, 0.6547],
            [-1.0458, -0.0767, 0.2365], [0.4584, -0.763, 0.4973], [-0.2255, -0.1151, 0.1299],
            [-0.113, -0.0215, -0.0531]], atol=1e-4)
        np.testing.assert_allclose(gW, [[-0.444, 0.798, -0.7177], [-0.9942, -0.1934, 0.2906],
                                        [0.5272, 0.2422, -0.5414]], atol=1e-4)
        assert s.run(gsg).tolist() == [[3.0] * 3] * 3
        losses = [float(s.run([train, loss], feed)[1]) for _ in range(3)]
        np.testing.assert_allclose(losses, [3.70994, 2.47543, 1.18488], atol=2e-5)


def test_gather_in_a_loop_body_gives_an_indexed_slices_gradient():
    ids = tf.placeholder(tf.int64, [None, 2], name="ids")
    E = tf.get_variable("E", [5, 2], initializer=tf.constant_initializer(
        np.arange(10).reshape(5, 2) / 10.0))

    def body(t, h):
        return t + 1, h + tf.nn.embedding_lookup(E, ids[:, t]) * tf.gather(E, ids[:, 0])
    _, h = tf.while_loop(lambda t, h: t < 2, body, [0, tf.zeros([tf.shape(ids)[0], 2])])
    g = tf.gradients(tf.reduce_sum(h ** 2), E)[0]
    assert isinstance(g, tf.IndexedSlices)
    prefix = "gradients/while/embedding_lookup/Enter_grad/"
    assert (g.indices.name, g.values.name, g.dense_shape.name) == (
        prefix + "b_acc_6:0", prefix + "b_acc_7:0", prefix + "b_acc_8:0")
    assert (g.indices.dtype, str(g.values.shape)) == (tf.int64, "(?, 2)")
    # momentum's sparse update: after a step on rows 2, 3 only those (and row 0, which
    # TensorFlow's accumulator always holds) move
    ids32 = tf.placeholder(tf.int32, [None, 2], name="ids32")
    E2 = tf.get_variable("E2", [5, 2], initializer=tf.constant_initializer(
        np.arange(10).reshape(5, 2) / 10.0))
    _, h2 = tf.while_loop(lambda t, h: t < 2,
                          lambda t, h: (t + 1, h + tf.nn.embedding_lookup(E2, ids32[:, t])),
                          [0, tf.zeros([tf.shape(ids32)[0], 2])])
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(h2 ** 2),
                                                          var_list=[E2])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        r = s.run(g, {ids: [[0, 1], [3, 1]]})
        assert r.indices.tolist() == [0, 0, 3, 1, 1, 0, 3, 0, 3]
        np.testing.assert_allclose(r.values[1:5], [[0.0, 0.024], [0.192, 0.42], [0.0, 0.008],
                                                   [0.576, 0.98]], atol=1e-6)
        assert r.dense_shape.tolist() == [5, 2]
        s.run(train, {ids32: [[0, 1]]})
        s.run(train, {ids32: [[2, 3]]})
        np.testing.assert_allclose(s.run(E2), [[-0.076, -0.052], [0.16, 0.22], [0.2, 0.26],
                                               [0.4, 0.46], [0.8, 0.9]], atol=1e-6)


def test_gather_in_a_cond_branch_gives_an_indexed_slices_gradient():
    flag = tf.placeholder(tf.bool, [], name="flag")
    E = tf.get_variable("E", [7, 3], initializer=tf.ones_initializer())
    c = tf.cond(flag, lambda: tf.gather(E, [1, 2]), lambda: tf.gather(E, [3, 3]))
    g = tf.gradients(c * 2.0, E)[0]
    assert isinstance(g, tf.IndexedSlices)
    assert (g.values.name, g.indices.name, g.dense_shape.name) == (
        "gradients/concat:0", "gradients/concat_1:0",
        "gradients/cond/GatherV2_1/Switch_grad/cond_grad/Merge_2:0")
    merges = [op for op in tf.get_default_graph().get_operations()
              if op.name.startswith("gradients/cond/GatherV2/Switch_grad/cond_grad/Merge")]
    assert [(op.name, op.inputs[1].name) for op in merges] == [
        ("gradients/cond/GatherV2/Switch_grad/cond_grad/Merge",
         "gradients/cond/GatherV2_grad/Reshape:0"),
        ("gradients/cond/GatherV2/Switch_grad/cond_grad/Merge_1",
         "gradients/cond/GatherV2_grad/Reshape_1:0"),
        ("gradients/cond/GatherV2/Switch_grad/cond_grad/Merge_2",
         "gradients/cond/GatherV2_grad/Cast:0")]
    mixed = tf.gradients(tf.cond(flag, lambda: tf.gather(E, [1, 2]), lambda: E[:2] * 2.0), E)[0]
    assert isinstance(mixed, tf.Tensor) and mixed.name == "gradients_1/AddN:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        r = s.run(g, {flag: False})
        assert r.indices.tolist() == [3, 3, 0, 1, 2, 3, 4, 5, 6]
        assert r.values[:, 0].tolist() == [2.0, 2.0] + [0.0] * 7
        r = s.run(g, {flag: True})
        assert r.indices.tolist() == [0, 1, 2, 3, 4, 5, 6, 1, 2]
        assert r.dense_shape.tolist() == [7, 3]
        assert s.run(mixed, {flag: True})[:, 0].tolist() == [0.0, 1.0, 1.0, 0, 0, 0, 0]
