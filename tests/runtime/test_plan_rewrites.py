"""Plan compilation: pruning, plan caching, CSE and constant folding."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime import session as session_mod


def _no_rewrites(**kw):
    return tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(
        do_common_subexpression_elimination=False, do_constant_folding=False)), **kw)


def test_unneeded_stateful_op_does_not_run(sess, testops):
    """
        x ──> used ──> fetch
        x ──> unused            (stateful, never fetched: must not run)
    """
    x = tf.placeholder(tf.float32, [2])
    used = testops.stateful(x, name="used")
    testops.stateful(x, name="unused")
    for _ in range(3):
        sess.run(used, {x: [1.0, 2.0]})
    assert testops.counts["used"] == 3
    assert testops.counts["unused"] == 0


def test_control_dependencies_run(sess, testops):
    x = tf.placeholder(tf.float32, [2])
    side = testops.stateful(x, name="side")
    with tf.control_dependencies([side]):
        y = tf.identity(x)
    sess.run(y, {x: [1.0, 2.0]})
    assert testops.counts["side"] == 1
    # tf.group as a target runs its inputs.
    sess.run(tf.group(side), {x: [0.0, 0.0]})
    assert testops.counts["side"] == 2


def test_plans_are_cached_per_signature(sess, monkeypatch):
    calls = []
    real = session_mod.compile_plan

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compile_plan", counting)
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.sin(x) + 1.0
    v = np.arange(3, dtype=np.float32)
    for _ in range(5):
        sess.run(y, {x: v})
    assert len(calls) == 1
    for _ in range(3):
        # Nested: no cheap key, but the same flattened elements share the plan.
        sess.run({"a": [y], "b": (y,)}, {x: v})
    assert len(calls) == 1
    sess.run(y, {"x:0": v})  # the same tensor fed by name: same signature
    assert len(calls) == 1
    for _ in range(3):
        sess.run({"a": [y, x]}, {x: v})  # new signature, compiled once
    assert len(calls) == 2


def test_cse_runs_duplicate_subgraph_once(testops):
    """
        x ──> count_a ──┐
        x ──> count_b ──┴─> add          (count_b merged into count_a)
    """
    x = tf.placeholder(tf.float64, [2, 3])
    a = testops.count(x, name="count_a")
    b = testops.count(x, name="count_b")
    total = a + b
    v = np.arange(6.0).reshape(2, 3)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(total, {x: v}), 2 * (v + 1))
    assert testops.counts["count_a"] + testops.counts["count_b"] == 1
    testops.counts.clear()
    with tf.Session(config=_no_rewrites()) as s:
        np.testing.assert_allclose(s.run(total, {x: v}), 2 * (v + 1))
    assert testops.counts["count_a"] == 1 and testops.counts["count_b"] == 1


def test_cse_never_merges_stateful(sess, testops):
    x = tf.placeholder(tf.float32, [2])
    a = testops.stateful(x, name="s_a")
    b = testops.stateful(x, name="s_b")
    sess.run(a + b, {x: [1.0, 2.0]})
    assert testops.counts["s_a"] == 1 and testops.counts["s_b"] == 1


def test_constant_folding(testops):
    """
        const ──> fold_me ──> mul <── x        (fold_me is computed once, at plan time)
    """
    c = tf.constant([[1.0, 2.0, 3.0]], dtype=tf.float64)
    folded = testops.count(c, name="fold_me")
    x = tf.placeholder(tf.float64, [1, 3])
    y = folded * x
    v = np.array([[2.0, 3.0, 4.0]])
    with tf.Session() as s:
        for _ in range(4):
            np.testing.assert_allclose(s.run(y, {x: v}), [[4.0, 9.0, 16.0]])
    assert testops.counts["fold_me"] == 1
    testops.counts.clear()
    with tf.Session(config=_no_rewrites()) as s:
        for _ in range(4):
            np.testing.assert_allclose(s.run(y, {x: v}), [[4.0, 9.0, 16.0]])
    assert testops.counts["fold_me"] == 4


def test_constant_folding_skips_stateful(sess, testops):
    c = tf.constant([1.0, 2.0])
    s = testops.stateful(c, name="st")
    for _ in range(3):
        np.testing.assert_allclose(sess.run(s), [2.0, 3.0])
    assert testops.counts["st"] == 3


def test_folded_errors_surface_at_run_time(sess, testops):
    bad = testops.fail(tf.constant([-1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        sess.run(bad)


def test_folded_fetch_is_writable_copy(sess):
    y = tf.sin(tf.constant([0.0, 1.0]))
    a = sess.run(y)
    a[0] = 5.0
    assert sess.run(y)[0] == 0.0


def test_results_same_with_and_without_rewrites(testops):
    x = tf.placeholder(tf.float64, [2, 3])
    c = tf.constant(np.arange(6.0).reshape(3, 2))
    y = tf.matmul(tf.sin(x) + tf.sin(x), c) - tf.matmul(tf.sin(x), c * 2.0)
    z = testops.count(y) * tf.sin(tf.constant(1.0, tf.float64))
    v = np.linspace(0, 1, 6).reshape(2, 3)
    with tf.Session() as s:
        a = s.run([y, z], {x: v})
    with tf.Session(config=_no_rewrites()) as s:
        b = s.run([y, z], {x: v})
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q, atol=1e-12)
