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


@pytest.mark.slow
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


# -- plans with ops of their own (the rewrites' plan ops) ----------------------------------
def _chain(step=2.0, batch=2):
    """x + 1 + step, and its gradient: the rewrites fold the chain into one plan op."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [batch, 3], name="x")
        y = tf.add(x + 1.0, step, name="y")
        loss = tf.reduce_mean(tf.square(y), name="loss")
        (grad,) = tf.gradients(loss, [x])
    return g, x, [y, grad]


def _plan_ops(sess, g):
    """The ops of `sess`'s plans that `g` does not hold (made by the rewrites)."""
    held = set(g.get_operations())
    return [n.op for cp in sess._plans.values() for n in cp.nodes
            if n.op is not None and n.op not in held]


def test_plans_with_plan_ops_hit_and_agree():
    results = []
    for _ in range(2):
        g, x, fetches = _chain()
        with tf.Session(graph=g) as sess:
            results.append(sess.run(fetches, {x: X}))
            made = _plan_ops(sess, g)
            assert made and all(op.graph is g for op in made)  # rebuilt on the new graph
    assert plan_cache.stats()["hits"] == 1 and plan_cache.stats()["misses"] == 1
    for first, second in zip(*results):
        np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(results[1][0], X + 3.0)
    np.testing.assert_allclose(results[1][1], 2.0 * (X + 3.0) / X.size, rtol=1e-6)


def test_a_difference_behind_a_plan_op_misses():
    """Graphs that differ in a constant the rewrites fold into a plan op miss, and each
    computes its own value."""
    for step in (2.0, 5.0):
        g, x, fetches = _chain(step)
        with tf.Session(graph=g) as sess:
            np.testing.assert_array_equal(sess.run(fetches[0], {x: X}), X + 1.0 + step)
    assert plan_cache.stats()["hits"] == 0 and plan_cache.stats()["misses"] == 2


@pytest.mark.slow
def test_entries_with_plan_ops_keep_no_graph_alive():
    g, x, fetches = _chain()
    with tf.Session(graph=g) as sess:
        sess.run(fetches, {x: X})
    del g, x, fetches, sess
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        g, x, fetches = _chain()
        with tf.Session(graph=g) as sess:
            sess.run(fetches, {x: X})
        assert plan_cache.stats()["hits"] == 1
        ref = weakref.ref(g)
        release_graph(g)
        del g, x, fetches, sess
        assert ref() is None
    finally:
        if was:
            gc.enable()


def test_plans_specialized_to_fed_shapes_are_keyed_by_them():
    """A graph with an unknown batch gets a plan specialized to each fed shape
    (specialize.py); the cache keeps one entry per shape."""
    for batch in (2, 2, 4):
        g, x, fetches = _chain(batch=None)
        value = np.ones((batch, 3), np.float32)
        with tf.Session(graph=g) as sess:
            for _ in range(2):  # the first run compiles the variant for its shape only
                got = sess.run(fetches, {x: value})
        np.testing.assert_allclose(got[1], 2.0 * (value + 3.0) / value.size, rtol=1e-6)
    stats = plan_cache.stats()
    # batch 2's variant misses, then hits; batch 4's misses (no generic plan is needed)
    assert (stats["hits"], stats["misses"], stats["entries"]) == (1, 2, 2), stats
    with tf.Session(graph=g) as sess:
        env = sess._compile_env
        ops = needed_ops(fetches, [], {x})
        keys = [plan_cache.plan_key(env, fetches, [], [x], ops, shape_specialized=True,
                                    feed_shapes={x: shape}) for shape in [(2, 3), (4, 3)]]
    assert None not in keys and keys[0] != keys[1]


# -- an Estimator's train step ------------------------------------------------------------
def _estimator_model_fn(features, labels, mode, params):
    logits = tf.layers.dense(tf.layers.dense(features, 8, activation=tf.nn.relu), 3)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.train.AdamOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _train(model_dir, learning_rate=0.01, calls=3):
    """Per `train` call, the cache's (hits, misses); then the trained variables."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    tf.set_random_seed(0)
    config = tf.estimator.RunConfig(model_dir=str(model_dir), tf_random_seed=7,
                                    save_checkpoints_secs=None, save_checkpoints_steps=1000,
                                    log_step_count_steps=None)
    est = tf.estimator.Estimator(_estimator_model_fn, config=config,
                                 params={"learning_rate": learning_rate})
    fn = tf.estimator.inputs.numpy_input_fn(x, y, batch_size=16, num_epochs=None,
                                            shuffle=False)
    counts = []
    for _ in range(calls):
        before = plan_cache.stats()
        est.train(fn, steps=5)
        after = plan_cache.stats()
        counts.append((after["hits"] - before["hits"], after["misses"] - before["misses"]))
    return counts, {name: est.get_variable_value(name) for name in est.get_variable_names()}


def test_a_second_estimator_train_call_hits_for_every_plan(tmp_path, monkeypatch):
    counts, trained = _train(tmp_path / "cached")
    # The second call restores a checkpoint (a plan the first did not run); the train
    # step, with the ops the rewrites made for it, hits from the second call on.
    assert counts[1][1] == 1 and counts[2] == (counts[1][0] + 1, 0), counts
    monkeypatch.setattr(plan_cache, "MAX_ENTRIES", 0)
    _, fresh = _train(tmp_path / "fresh")
    assert sorted(trained) == sorted(fresh)
    for name in trained:  # the replayed plans compute what fresh compiles compute
        np.testing.assert_array_equal(trained[name], fresh[name], err_msg=name)


def test_a_different_estimator_graph_misses(tmp_path):
    _train(tmp_path / "a", calls=2)
    counts, _ = _train(tmp_path / "b", learning_rate=0.02, calls=2)  # one constant differs
    assert counts[0][1] >= 2 and counts[1][1] == 0, counts  # two train-step plans miss


@pytest.mark.parametrize("module", [
    "flowgraph.runtime.plan_cache", "flowgraph.framework.graph_release",
    "flowgraph.runtime.rewrite_arith", "flowgraph.runtime.specialize",
    "flowgraph.runtime.step", "flowgraph.runtime.memory_schedule", "flowgraph.runtime.config"])
def test_module_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
