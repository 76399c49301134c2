"""The process-wide cache of plan fronts (flowgraph/runtime/plan_cache.py): a graph that
fingerprints the same reuses them, any difference that matters misses, results are those
of a fresh compile, and no entry keeps a graph alive."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.graph_release import release_graph
from flowgraph.runtime import plan_cache
from flowgraph.runtime.prune import needed_ops

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(autouse=True)
def _fresh_cache():
    plan_cache.clear()
    yield
    plan_cache.clear()


def _build(transpose=False, w_value=None, device="", shape=(None, 3), relu=True):
    """x (fed) @ w (+ b) -> relu: the knobs are what the fingerprint must see."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape, name="x")
        w_value = np.ones((3, 2), np.float32) if w_value is None else w_value
        w = tf.constant(w_value.T if transpose else w_value, name="w")
        with tf.device(device):
            y = tf.matmul(x, w, transpose_b=transpose, name="y")
        b = tf.add(tf.constant(1.0), tf.constant(2.0), name="b")  # folded at plan time
        out = tf.nn.relu(y + b, name="out") if relu else tf.identity(y + b, name="out")
    return g, x, out


def _key(g, x, out, fetch=None, feeds=None, config=None):
    with tf.Session(graph=g, config=config) as sess:
        fetches = [out] if fetch is None else fetch
        feeds = [x] if feeds is None else feeds
        ops = needed_ops(fetches, [], set(feeds))
        return plan_cache.plan_key(sess._compile_env, fetches, [], feeds, ops)


def _run(g, x, out, value=X):
    with tf.Session(graph=g) as sess:
        return sess.run(out, {x: value})


def test_second_identical_graph_hits_and_agrees():
    first = _run(*_build())
    assert plan_cache.stats()["misses"] == 1 and plan_cache.stats()["entries"] == 1
    second = _run(*_build())
    assert plan_cache.stats()["hits"] == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, np.maximum(X @ np.ones((3, 2)) + 3.0, 0))


@pytest.mark.parametrize("variant", [
    {"transpose": True},  # an attribute
    {"w_value": np.full((3, 2), 2.0, np.float32)},  # a constant's value, same shape
    {"device": "/cpu:0"},  # a requested device
    {"shape": (2, 3)},  # a static shape
    {"relu": False},  # an op type
])
def test_any_difference_misses(variant):
    base = _key(*_build())
    assert base is not None and base == _key(*_build())
    assert _key(*_build(**variant)) != base


def test_feeds_fetches_and_options_are_part_of_the_key():
    g, x, out = _build()
    base = _key(g, x, out)
    y = g.get_tensor_by_name("y:0")
    assert _key(g, x, out, fetch=[out, y]) != base
    assert _key(g, x, out, feeds=[x, y]) != base
    no_cse = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(do_common_subexpression_elimination=False)))
    assert _key(g, x, out, config=no_cse) != base


def test_a_hit_computes_the_new_graphs_values():
    """Graphs that differ only in a constant miss; each computes its own result."""
    for scale in (1.0, 2.0, 1.0):
        w = np.full((3, 2), scale, np.float32)
        np.testing.assert_allclose(_run(*_build(w_value=w)), np.maximum(X @ w + 3.0, 0))
    assert plan_cache.stats()["hits"] == 1  # the third graph equals the first


def test_stateful_ops_state_names_do_not_split_the_cache():
    """Two input sources differ only in the key naming their data: the front is shared,
    and each graph still reads its own data (kernels are bound from the new graph)."""
    results = []
    for data in (np.arange(4.0), np.arange(4.0) * 10):
        with tf.Graph().as_default():
            fn = tf.estimator.inputs.numpy_input_fn({"a": data}, batch_size=4, shuffle=False)
            features = fn()
            with tf.Session() as sess:
                results.append(sess.run(features["a"]))
    assert plan_cache.stats()["hits"] >= 1
    np.testing.assert_array_equal(results[0], np.arange(4.0))
    np.testing.assert_array_equal(results[1], np.arange(4.0) * 10)


def test_uncacheable_plans():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        # an attribute that is not plain data (a Python function) has no fingerprint
        y = g.create_op("Identity", [x], attrs={"_hook": lambda: None}).outputs[0]
    assert _key(g, x, y) is None
    g, x, out = _build()
    with tf.Session(graph=g) as sess:
        ops = needed_ops([out], [], {x})
        env = sess._compile_env
        assert plan_cache.plan_key(env, [out], [], [x], ops, memory_budget=1 << 20) is None
        assert plan_cache.plan_key(env, [out], [], [x], ops, shape_specialized=True) is None
        old = plan_cache.MAX_ENTRIES
        plan_cache.MAX_ENTRIES = 0  # the switch
        try:
            assert plan_cache.plan_key(env, [out], [], [x], ops) is None
        finally:
            plan_cache.MAX_ENTRIES = old


def test_fronts_with_ops_the_graph_does_not_hold_are_not_stored():
    g, x, out = _build()
    _, _, stranger = _build()
    with tf.Session(graph=g) as sess:
        env = sess._compile_env
        ops = needed_ops([out], [], {x})
        key = plan_cache.plan_key(env, [out], [], [x], ops)
        front = plan_cache.restore(key, env)
        assert front is None
        from flowgraph.runtime.plan import _front_passes

        host = env.devices[0]
        front = _front_passes(env, [out], [], [x], {x}, ops, host, None, None, False)
        front.ops.append(stranger.op)  # as a rewrite that made an op of its own would
        plan_cache.store(key, g, front)
    assert plan_cache.stats()["entries"] == 0


def test_entries_keep_no_graph_alive():
    _run(*_build())
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        g, x, out = _build()
        _run(g, x, out)
        assert plan_cache.stats()["hits"] == 1
        ref = weakref.ref(g)
        release_graph(g)
        del g, x, out
        assert ref() is None
    finally:
        if was:
            gc.enable()


def test_entries_are_bounded(monkeypatch):
    monkeypatch.setattr(plan_cache, "MAX_ENTRIES", 2)
    for scale in (1.0, 2.0, 3.0):
        _run(*_build(w_value=np.full((3, 2), scale, np.float32)))
    assert plan_cache.stats()["entries"] == 2


def test_entries_are_bounded_in_constant_bytes(monkeypatch):
    monkeypatch.setattr(plan_cache, "MAX_BYTES", 800)  # four plans of a 6x8 float32 constant
    for scale in (1.0, 2.0, 3.0, 4.0, 5.0):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None, 6], name="x")
            out = tf.matmul(x, tf.constant(np.full((6, 8), scale, np.float32)))
        _run(g, x, out, np.ones((1, 6), np.float32))
    stats = plan_cache.stats()
    assert stats["entries"] == 4 and stats["bytes"] == 4 * 6 * 8 * 4
    big = np.ones((64, 8), np.float32)  # over a quarter of the budget: not stored
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        out = tf.matmul(x, tf.constant(big))
    _run(g, x, out, np.ones((1, 64), np.float32))
    assert plan_cache.stats()["entries"] == 4
