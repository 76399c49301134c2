"""What a session reuses between plans and from closed sessions (issue 17, harness
costs), from flowgraph/runtime/plan_cache.py: the op texts of a finalized graph's plan
keys, and whole finished plans of a graph that fingerprints like one compiled before
(session.py binds them). A changed graph never reuses a stale plan, no session's state
leaks into another's, and no entry keeps a graph alive."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime import plan_cache
from flowgraph.runtime.prune import needed_ops


@pytest.fixture(autouse=True)
def _fresh_cache():
    plan_cache.clear()
    yield
    plan_cache.clear()


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant(np.ones((3, 2), np.float32), name="w")
        y = tf.nn.relu(tf.matmul(x, w) + 1.0, name="y")
    return g, x, y


def _key(sess, fetches, feeds):
    ops = needed_ops(fetches, [], set(feeds))
    return plan_cache.plan_key(sess._compile_env, fetches, [], feeds, ops)


def test_a_finalized_graph_makes_each_op_text_once(monkeypatch):
    g, x, y = _graph()
    g.finalize()
    made = []
    real = plan_cache._op_text
    monkeypatch.setattr(plan_cache, "_op_text", lambda op: (made.append(op.name), real(op))[1])
    with tf.Session(graph=g) as sess:
        first = _key(sess, [y], [x])
        count = len(made)
        assert _key(sess, [y], [x]) == first and len(made) == count  # all from the memo
        assert "_plan_key_texts" in sess._compile_env.__dict__
    assert "_plan_key_texts" not in sess._compile_env.__dict__  # dropped on close


def test_a_shape_set_after_finalize_changes_the_key():
    g, x, y = _graph()
    g.finalize()
    with tf.Session(graph=g) as sess:
        before = _key(sess, [y], [x])
        y.set_shape([4, 2])  # replaces the TensorShape object the memo was made from
        after = _key(sess, [y], [x])
    assert before is not None and after is not None and before != after
    g2, x2, y2 = _graph()
    y2.set_shape([4, 2])
    g2.finalize()
    with tf.Session(graph=g2) as sess:
        assert _key(sess, [y2], [x2]) == after  # what a fresh text would give


def test_an_op_added_after_unfinalizing_is_seen():
    g, x, y = _graph()
    g.finalize()
    with tf.Session(graph=g) as sess:
        before = _key(sess, [y], [x])
        g._unsafe_unfinalize()
        with g.as_default():
            z = tf.negative(y, name="z")  # a new consumer of y: y's text changes
        g.finalize()
        assert _key(sess, [y], [x]) != before
        np.testing.assert_array_equal(sess.run(z, {x: np.ones((1, 3))}), [[-4.0, -4.0]])


def test_a_changed_graph_never_runs_a_stale_plan():
    """Two graphs that differ in one constant, run in turn: each computes its own."""
    results = []
    for scale in (1.0, 2.0, 1.0, 2.0):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            y = tf.multiply(x, scale, name="y") + 1.0
        g.finalize()
        with tf.Session(graph=g) as sess:
            results.append(float(sess.run(y, {x: [[1.0, 1.0]]})[0, 0]))
    assert results == [2.0, 3.0, 2.0, 3.0]
    assert plan_cache.stats()["hits"] == 2


# -- finished plans ---------------------------------------------------------------------------
def _model(scale=2.0, seed=1):
    """A finalized graph with a variable (a class kernel), a fused elementwise group and a
    folded constant: every kind of kernel a finished plan holds."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.full((3, 2), 0.5, np.float32), name="w")
        b = tf.add(tf.constant(1.0), tf.constant(2.0), name="b")
        h = tf.nn.relu(tf.matmul(x, w) * scale + b, name="h")
        y = tf.check_numerics(tf.sqrt(h), "sqrt", name="y")
        step = tf.assign_add(w, tf.fill([3, 2], 0.25), name="step")
        init = w.initializer
    g.finalize()
    return g, x, y, step, init


def _train_and_fetch(scale=2.0, value=None):
    g, x, y, step, init = _model(scale)
    value = np.arange(6, dtype=np.float32).reshape(2, 3) if value is None else value
    with tf.Session(graph=g) as sess:
        sess.run(init)
        sess.run(step)
        return sess.run(y, {x: value})


def test_an_identical_graph_takes_the_finished_plan_and_agrees(monkeypatch):
    first = _train_and_fetch()
    assert plan_cache.stats()["finished_hits"] == 0
    second = _train_and_fetch()
    assert plan_cache.stats()["finished_hits"] == 3  # init, step, the fetch
    np.testing.assert_array_equal(first, second)
    w = np.full((3, 2), 0.75, np.float32)
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(second, np.sqrt(np.maximum(value @ w * 2.0 + 3.0, 0)),
                               rtol=1e-6)
    plan_cache.clear()
    monkeypatch.setattr(plan_cache, "store_finished", lambda *args: None)
    np.testing.assert_array_equal(_train_and_fetch(), first)  # what a fresh compile gives


def test_a_changed_constant_never_takes_a_stale_finished_plan():
    a = _train_and_fetch(scale=2.0)
    b = _train_and_fetch(scale=3.0)  # inside the fused group
    assert plan_cache.stats()["finished_hits"] == 2  # init and step only
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(_train_and_fetch(scale=3.0), b)


def test_each_session_binds_its_own_variables():
    """Two open sessions of identical graphs: the finished plan of the second binds its
    own variable kernels, so one session's update is not seen by the other."""
    g1, x1, y1, step1, init1 = _model()
    g2, x2, y2, _step2, init2 = _model()
    value = np.ones((1, 3), np.float32)
    with tf.Session(graph=g1) as s1, tf.Session(graph=g2) as s2:
        s1.run(init1)
        s2.run(init2)
        for _ in range(3):
            s1.run(step1)
        assert plan_cache.stats()["finished_hits"] >= 1
        assert not np.array_equal(s1.run(y1, {x1: value}), s2.run(y2, {x2: value}))
        np.testing.assert_allclose(s2.run(y2, {x2: value}),
                                   np.sqrt(np.full((1, 2), 1.5 * 2 + 3.0)), rtol=1e-6)


def test_errors_of_a_finished_plan_name_the_new_graphs_op():
    _train_and_fetch()
    g, x, y, _step, init = _model()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: np.full((1, 3), np.nan, np.float32)})
        cp = list(sess._plans.values())[-1]
    assert plan_cache.stats()["finished_hits"] == 2
    assert info.value.op is not None and info.value.op.graph is g
    assert "Tensor had NaN values (op 'y')" in str(info.value)
    fused = [n for n in cp.nodes if n.fused]
    assert fused and [m.name for m in fused[0].fused] == ["mul", "add", "h", "Sqrt"]
    assert all(n.op.graph is g for n in cp.nodes)
    assert all(m.graph is g for n in fused for m in n.fused)
    members = fused[0].kernel.__closure__  # the fallback's members name the new ops too
    found = [c.cell_contents for c in members if callable(c.cell_contents)
             and c.cell_contents.__closure__]
    nodes = [c.cell_contents for f in found for c in f.__closure__
             if isinstance(c.cell_contents, list) and c.cell_contents
             and hasattr(c.cell_contents[0], "op")]
    assert nodes and all(info.op.graph is g for info in nodes[0])


@pytest.mark.slow
def test_finished_entries_keep_no_graph_alive():
    import gc
    import weakref

    def run_once():
        g, x, y, _step, init = _model()
        with tf.Session(graph=g) as sess:
            sess.run(init)
            sess.run(y, {x: np.ones((1, 3), np.float32)})
        return weakref.ref(g)

    refs = [run_once(), run_once()]
    assert plan_cache.stats()["finished_hits"] >= 2
    gc.collect()
    assert all(r() is None for r in refs)


_SEEN: list[str] = []


def _record_key_op(key: str):
    from flowgraph.backends.cpu import cpu_kernel
    from flowgraph.framework.registry import has_op_def, register_op
    from flowgraph.ops.op_util import make_op

    if not has_op_def("TestOnlyRecordKey"):
        @register_op("TestOnlyRecordKey", attrs={"key": ""}, num_outputs=0,
                     dtype_fn=lambda op: [], stateful=True)
        def _record_shape(op):
            return []

        @cpu_kernel("TestOnlyRecordKey")
        def _record(*, key):  # a function kernel that binds a string naming its state
            _SEEN.append(key)

    return make_op("TestOnlyRecordKey", [], {"key": key})


def test_a_stateful_ops_strings_are_bound_from_the_new_graph():
    """The key leaves out the strings of stateful ops (the state they name); a finished
    plan binds such an op's kernel again, so each graph's run sees its own strings."""
    _SEEN.clear()
    for key in ("first", "second", "first"):
        g = tf.Graph()
        with g.as_default():
            op = _record_key_op(key)
        g.finalize()
        with tf.Session(graph=g) as sess:
            sess.run(op)
    assert _SEEN == ["first", "second", "first"]
    assert plan_cache.stats()["finished_hits"] == 2
