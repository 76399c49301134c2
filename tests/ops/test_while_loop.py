"""tf.while_loop: values, structures, shape invariants, nesting with cond, side effects,
errors, and overlap of iterations up to parallel_iterations."""

import collections
import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.ops.check_ops import Assert
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_loops import WhileContext, while_loop
from flowgraph.ops.op_util import make_tensor


# -- test ops: sleeping kernels whose iterations can overlap ----------------------------------
@register_op("TestLoopSleepAsync", attrs={"seconds": 0.0}, stateful=True)
def _sleep_async_shape(op, x):
    return [x]


@register_op("TestLoopSleep", attrs={"seconds": 0.0}, stateful=True, cost=OpCost.EXPENSIVE)
def _sleep_shape(op, x):
    return [x]


@cpu_kernel("TestLoopSleepAsync", is_async=True)
def _sleep_async(step, done, x, *, seconds):
    t = threading.Timer(seconds, lambda: done(x))
    t.daemon = True
    t.start()


@cpu_kernel("TestLoopSleep")
def _sleep(x, *, seconds):
    time.sleep(seconds)
    return x


def _sleep_loop(op_type, n, seconds, parallel_iterations):
    def body(i, acc):
        s = make_tensor(op_type, [i], {"seconds": seconds})
        return i + 1, acc + s

    return while_loop(lambda i, acc: i < n, body, [tf.constant(0), tf.constant(0)],
                      parallel_iterations=parallel_iterations)[1]


# -- values -------------------------------------------------------------------------------------
def test_counts_to_ten(sess):
    i = while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert isinstance(i, tf.Tensor) and i.op.type == "Exit"
    assert sess.run(i) == 10


def test_values_against_python(sess):
    n = tf.placeholder(tf.int32, [])
    i, a, b = while_loop(lambda i, a, b: i < n,
                         lambda i, a, b: (i + 1, b, a + b),
                         [tf.constant(0), tf.constant(0), tf.constant(1)])
    for nv in (0, 1, 2, 10, 30):
        x, y = 0, 1
        for _ in range(nv):
            x, y = y, x + y
        got = sess.run([i, a, b], {n: nv})
        assert got == [nv, x, y]


def test_zero_iterations_returns_initial_values(sess):
    x = tf.placeholder(tf.float32, [2])
    out = while_loop(lambda v: tf.reduce_sum(v) > 100.0, lambda v: v * 2.0, [x])
    np.testing.assert_array_equal(sess.run(out, {x: [1.0, 2.0]}), [1.0, 2.0])


def test_float_loop_and_dtype(sess):
    x = tf.placeholder(tf.float64, [3])
    out = while_loop(lambda v: tf.reduce_max(v) < 100.0, lambda v: v * 3.0, [x])
    got = sess.run(out, {x: [1.0, 2.0, 0.5]})
    v = np.array([1.0, 2.0, 0.5])
    while v.max() < 100.0:
        v = v * 3.0
    np.testing.assert_allclose(got, v)
    assert got.dtype == np.float64


def test_ten_thousand_iterations(sess):
    i = while_loop(lambda i: i < 10000, lambda i: i + 1, [tf.constant(0)])
    assert sess.run(i) == 10000


def test_loop_invariants_from_outside(sess):
    step = tf.placeholder(tf.int32, [])
    limit = tf.placeholder(tf.int32, [])
    scale = tf.constant(3)
    i, acc = while_loop(lambda i, acc: i < limit,
                        lambda i, acc: (i + step, acc + i * scale),
                        [tf.constant(0), tf.constant(0)])
    enters = [op for op in tf.get_default_graph().get_operations() if op.type == "Enter"]
    assert sum(op.get_attr("is_constant") for op in enters) == 3  # step, limit, scale
    got = sess.run([i, acc], {step: 2, limit: 9})
    assert got == [10, 3 * (0 + 2 + 4 + 6 + 8)]


def test_python_values_as_loop_vars(sess):
    i, s = while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + 0.5), [0, 0.0])
    assert i.dtype == tf.int32 and s.dtype == tf.float32
    assert sess.run([i, s]) == [4, 2.0]


def test_nested_structure_loop_vars(sess):
    State = collections.namedtuple("State", ["count", "values"])
    init = [tf.constant(0), State(tf.constant(1.0), {"a": tf.constant(2), "b": tf.constant(3)})]

    def body(i, st):
        return [i + 1, State(st.count * 2.0, {"a": st.values["a"] + 1,
                                             "b": st.values["b"] * 2})]

    i, st = while_loop(lambda i, st: i < 3, body, init)
    assert isinstance(st, State) and set(st.values) == {"a", "b"}
    got = sess.run([i, st])
    assert got[0] == 3 and got[1].count == 8.0
    assert got[1].values["a"] == 5 and got[1].values["b"] == 24


def test_return_same_structure(sess):
    out = while_loop(lambda i: i < 3, lambda i: [i + 1], [tf.constant(0)],
                     return_same_structure=True)
    assert isinstance(out, list) and sess.run(out) == [3]


def test_maximum_iterations(sess):
    m = tf.placeholder(tf.int32, [])
    i = while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=m)
    assert sess.run(i, {m: 7}) == 7
    assert sess.run(i, {m: 1000}) == 100
    a, b = while_loop(lambda a, b: a < 50, lambda a, b: [a + 1, b * 2], [0, 1],
                      maximum_iterations=5)
    assert sess.run([a, b]) == [5, 32]
    # As TF 2.15 (tf-oracle): with maximum_iterations the loop variables sit one level
    # down, so a tuple returned for a list of them (or a one-element list for a single
    # tensor) is a structure error there, while a plain loop accepts either.
    with pytest.raises(TypeError, match="The two structures don't have the same nested"):
        while_loop(lambda a, b: a < 50, lambda a, b: (a + 1, b * 2), [0, 1],
                   maximum_iterations=5)
    with pytest.raises(ValueError, match="The two structures don't have the same nested"):
        while_loop(lambda a: a < 50, lambda a: [a + 1], [0], maximum_iterations=5)
    a, b = while_loop(lambda a, b: a < 5, lambda a, b: (a + 1, b * 2), [0, 1])
    assert sess.run([a, b]) == [5, 32]


# -- shapes ---------------------------------------------------------------------------------------
def test_shape_change_without_invariant_is_an_error():
    x = tf.constant([1.0])
    # TF 2.15's words (tf-oracle), then the suggested invariant
    with pytest.raises(ValueError, match=r"^Input tensor 'Const:0' enters the loop with shape "
                                         r"\(1,\), but has shape \(2,\) after one iteration\. "
                                         r"To allow the shape to vary .*TensorShape\(\[None\]\)"):
        while_loop(lambda v: tf.size(v) < 10, lambda v: tf.concat([v, v], 0), [x])


def test_shape_invariants_allow_growth(sess):
    x = tf.constant([1.0])
    out = while_loop(lambda v: tf.size(v) < 10, lambda v: tf.concat([v, v], 0), [x],
                     shape_invariants=[tf.TensorShape([None])])
    assert out.shape.as_list() == [None]
    assert sess.run(out).shape == (16,)


def test_incompatible_shape_invariant_is_an_error():
    with pytest.raises(ValueError, match="not compatible with the initial shape of the loop "
                                         "variable\\. It enters the loop with shape"):
        while_loop(lambda v: tf.size(v) < 10, lambda v: v, [tf.constant([1.0, 2.0])],
                   shape_invariants=[tf.TensorShape([3])])


def test_loop_var_shapes_are_kept():
    x = tf.placeholder(tf.float32, [None, 3])
    out = while_loop(lambda v: tf.reduce_sum(v) < 10.0, lambda v: v + 1.0, [x])
    assert out.shape.as_list() == [None, 3]


# -- errors ---------------------------------------------------------------------------------------
def test_argument_errors():
    x = tf.constant(0)
    with pytest.raises(TypeError, match="'cond' must be callable"):
        while_loop(True, lambda i: i, [x])
    with pytest.raises(TypeError, match="'body' must be callable"):
        while_loop(lambda i: i < 1, None, [x])
    with pytest.raises(TypeError, match="parallel_iterations"):
        while_loop(lambda i: i < 1, lambda i: i, [x], parallel_iterations=0)
    with pytest.raises(ValueError, match="'loop_vars' must be provided"):
        while_loop(lambda: True, lambda: (), [])


def test_body_errors_name_the_problem():
    x = tf.constant(0)
    with pytest.raises(ValueError, match=r"(?s)lengths.*loop_vars.*body returned"):
        while_loop(lambda i, j: i < 1, lambda i, j: (i,), [x, x])
    with pytest.raises(TypeError, match=r"dtype int32 before the loop.*float32"):
        while_loop(lambda i: i < 1, lambda i: tf.cast(i, tf.float32), [x])
    # Both the shape and the dtype change: TF 2.15 reports the shape (ValueError).
    with pytest.raises(ValueError, match="enters the loop with shape"):
        while_loop(lambda i: i < 1, lambda i: tf.ones([2]) * tf.cast(i, tf.float32), [x])
    with pytest.raises(TypeError, match="bool tensor"):
        while_loop(lambda i: i, lambda i: i + 1, [x])
    with pytest.raises(ValueError, match="body returned None"):
        while_loop(lambda i: i < 1, lambda i: None, [x])


def test_fetching_inside_the_loop_is_an_error(sess):
    inside = []

    def body(i):
        y = i * 2
        inside.append(y)
        return i + 1

    out = while_loop(lambda i: i < 3, body, [tf.constant(0)])
    assert sess.run(out) == 3
    with pytest.raises(ValueError, match=r"inside a tf.while_loop"):
        sess.run(inside[0])


def test_failing_kernel_inside_loop_ends_the_step(sess):
    n = tf.placeholder(tf.int32, [])

    def body(i):
        with tf.control_dependencies([Assert(i < 5, ["i reached", i])]):
            return i + 1

    out = while_loop(lambda i: i < n, body, [tf.constant(0)])
    assert sess.run(out, {n: 5}) == 5
    with pytest.raises(errors.InvalidArgumentError, match=r"assertion failed: \[i reached\] "
                                                          r"\[5\]"):
        sess.run(out, {n: 9})
    assert sess.run(out, {n: 3}) == 3  # the session still works


# -- side effects and control dependencies ------------------------------------------------------
def test_assign_in_body_runs_once_per_iteration(sess):
    v = tf.Variable(0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 10)]):
            return i + 1

    out = while_loop(lambda i: i < 4, body, [tf.constant(0)])
    sess.run(tf.global_variables_initializer())
    assert sess.run(out) == 4
    assert sess.run(v) == 40


def test_variable_reads_see_updates_between_iterations(sess):
    v = tf.Variable(1)

    def body_reading(i, acc):
        upd = tf.assign_add(v, 1)
        return i + 1, acc + upd

    _, acc = while_loop(lambda i, acc: i < 3, body_reading, [0, 0], parallel_iterations=1)
    sess.run(tf.global_variables_initializer())
    assert sess.run(acc) == 2 + 3 + 4


def test_external_control_dependency_reaches_into_the_body(sess):
    v = tf.Variable(0)
    sess.run(tf.global_variables_initializer())
    bump = tf.assign_add(v, 7)

    def body(i, acc):
        with tf.control_dependencies([bump]):
            return i + 1, acc + v.read_value()

    _, acc = while_loop(lambda i, acc: i < 3, body, [0, 0])
    assert sess.run(acc) == 21  # bump runs once, before the reads
    assert sess.run(v) == 7


def test_loop_under_outer_control_dependencies(sess):
    v = tf.Variable(0)
    sess.run(tf.global_variables_initializer())
    bump = tf.assign_add(v, 1)
    with tf.control_dependencies([bump]):
        out = while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    assert sess.run(out) == 3
    assert sess.run(v) == 1


# -- nesting --------------------------------------------------------------------------------
def test_nested_loops(sess):
    n = tf.placeholder(tf.int32, [])

    def outer(i, acc):
        _, inner = while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + j), [0, 0])
        return i + 1, acc + inner

    _, total = while_loop(lambda i, acc: i < n, outer, [0, 0])
    for nv in (0, 1, 4, 9):
        assert sess.run(total, {n: nv}) == sum(sum(range(i)) for i in range(nv))


def test_triple_nesting_with_invariants(sess):
    k = tf.constant(2)

    def level3(a):
        return while_loop(lambda j, s: j < 2, lambda j, s: (j + 1, s + k), [0, a])[1]

    def level2(a):
        return while_loop(lambda j, s: j < 2, lambda j, s: (j + 1, level3(s)), [0, a])[1]

    out = while_loop(lambda j, s: j < 2, lambda j, s: (j + 1, level2(s)), [0, 0])[1]
    assert sess.run(out) == 2 * 2 * 2 * 2


def test_loop_inside_cond(sess):
    x = tf.placeholder(tf.int32, [])
    y = cond(x > 3, lambda: while_loop(lambda k: k < x * 2, lambda k: k + 1, [x]),
             lambda: tf.constant(-1))
    assert sess.run(y, {x: 5}) == 10
    assert sess.run(y, {x: 1}) == -1


def test_cond_inside_loop(sess):
    n = tf.placeholder(tf.int32, [])

    def body(i, s):
        return i + 1, s + cond(tf.equal(i % 2, 0), lambda: i, lambda: -i)

    _, s = while_loop(lambda i, s: i < n, body, [0, 0])
    for nv in (0, 1, 6, 7):
        assert sess.run(s, {n: nv}) == sum(i if i % 2 == 0 else -i for i in range(nv))


def test_side_effects_in_cond_inside_loop(sess):
    v = tf.Variable(0)

    def body(i):
        upd = cond(i < 2, lambda: tf.assign_add(v, 1), lambda: tf.assign_add(v, 100))
        with tf.control_dependencies([upd]):
            return i + 1

    out = while_loop(lambda i: i < 4, body, [0], parallel_iterations=1)
    sess.run(tf.global_variables_initializer())
    assert sess.run(out) == 4
    assert sess.run(v) == 202


def test_while_context_bookkeeping():
    x = tf.constant(1.0)
    out = while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + x, [x], name="grow")
    contexts = tf.get_collection(tf.GraphKeys.WHILE_CONTEXT)
    assert len(contexts) == 1
    ctx = contexts[0]
    assert isinstance(ctx, WhileContext) and ctx.name == "grow"
    assert ctx.loop_exits == [out] and len(ctx.merges) == 1 and len(ctx.next_iterations) == 1
    assert x in ctx.external_values
    body_op = next(op for op in ctx.ops if op.type == "Mul")
    assert body_op._control_flow_context is ctx
    assert ctx.add_forward_value(body_op.outputs[0]) == 0
    with pytest.raises(ValueError, match="not computed inside"):
        ctx.add_forward_value(x)


# -- parallel iterations ------------------------------------------------------------------------
def _timed(sess, t, reps=2):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        got = sess.run(t)
        best = min(best, time.perf_counter() - t0)
    return got, best


def test_async_iterations_overlap_up_to_parallel_iterations(sess):
    n, secs = 20, 0.03
    par = _sleep_loop("TestLoopSleepAsync", n, secs, 10)
    ser = _sleep_loop("TestLoopSleepAsync", n, secs, 1)
    got_par, t_par = _timed(sess, par)
    got_ser, t_ser = _timed(sess, ser)
    assert got_par == got_ser == sum(range(n))
    assert t_ser >= n * secs * 0.9  # one at a time
    assert t_par < t_ser / 3  # ~10 in flight (ideal: 10x); generous margin


def test_expensive_iterations_overlap_on_pool_threads():
    n, secs = 12, 0.04
    config = tf.ConfigProto(inter_op_parallelism_threads=4)
    with tf.Session(config=config) as sess:
        par = _sleep_loop("TestLoopSleep", n, secs, 10)
        ser = _sleep_loop("TestLoopSleep", n, secs, 1)
        got_par, t_par = _timed(sess, par)
        got_ser, t_ser = _timed(sess, ser)
    assert got_par == got_ser == sum(range(n))
    assert t_par < t_ser * 0.7  # 4 threads sleep at once (ideal: 4x); generous margin


def test_loop_in_untaken_branch_has_no_side_effects(sess):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])

    def looping():
        def body(i):
            with tf.control_dependencies([tf.assign_add(v, 1)]):
                return i + 1

        return while_loop(lambda i: i < 3, body, [tf.constant(0)])

    y = cond(p, looping, lambda: tf.constant(-1))
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {p: False}) == -1
    assert sess.run(v) == 0
    assert sess.run(y, {p: True}) == 3
    assert sess.run(v) == 3


def test_tracing_a_loop_records_every_iteration(sess):
    x = tf.placeholder(tf.float32, [3])
    _, out = while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * 2.0), [0, x])
    md = tf.RunMetadata()
    got = sess.run(out, {x: [1.0, 2.0, 3.0]},
                   options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                   run_metadata=md)
    np.testing.assert_array_equal(got, [16.0, 32.0, 48.0])
    names = [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats]
    assert sum(name.endswith("while/mul") for name in names) == 4
