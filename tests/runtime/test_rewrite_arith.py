"""Algebraic rewrites (flowgraph/runtime/rewrite_arith.py): every rule against the plan
with ``arithmetic_optimization=OFF``, node counts from traced step statistics.

Fusion (``remapping``) is off on both sides, so that only the rewrites differ.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime.config import RewriterConfig, switches
from flowgraph.runtime.rewrite_arith import COMPOSED, plan_op

ON = RewriterConfig(remapping=RewriterConfig.OFF)
OFF = RewriterConfig(remapping=RewriterConfig.OFF,
                     arithmetic_optimization=RewriterConfig.OFF)
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)



def _ran(md):
    """The nodes a traced step ran (TF lists each device's ``_SOURCE`` first)."""
    return [n for d in md.step_stats.dev_stats for n in d.node_stats
            if n.node_name != "_SOURCE"]

def config(rewrites: RewriterConfig, **kw) -> tf.ConfigProto:
    return tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rewrites), **kw)


def run_traced(fetches, feed, rewrites=ON):
    """(values, [(node name, op type)]) of one traced run in a fresh session."""
    with tf.Session(config=config(rewrites)) as sess:
        md = tf.RunMetadata()
        out = sess.run(fetches, feed, options=FULL, run_metadata=md)
    nodes = [(n.node_name, n.op_type) for n in _ran(md)]
    return out, nodes


def on_and_off(fetches, feed):
    """Values and nodes with the rewrites on, then off."""
    return run_traced(fetches, feed, ON), run_traced(fetches, feed, OFF)


def assert_same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


# -- chains -----------------------------------------------------------------------------
def test_chain_of_1000_adds_becomes_one_node_within_one_ulp_per_folded_op():
    """
        x ─> +1 ─> +1 ─> ... ─> +1        x ─> AddV2(x, 1000.0), named add_999
    """
    x = tf.placeholder(tf.float64, [3], name="x")
    y = x
    for _ in range(1000):
        y = y + 1.0
    v = np.array([0.5, -1e3, 1e-3])
    (got, nodes), (want, off_nodes) = on_and_off(y, {x: v})
    assert nodes == [(y.op.name, "AddV2")]
    assert len(off_nodes) == 1000
    np.testing.assert_array_equal(got, v + 1000.0)
    assert np.all(np.abs(got - want) <= 1000 * np.spacing(np.abs(want)))


def test_chain_of_sin_is_one_composed_node_with_the_same_bits():
    """The benchmarks' chain_1000: 1,000 dependent Sin on a float64 scalar."""
    x = tf.placeholder(tf.float64, [], name="x")
    y = x
    for _ in range(1000):
        y = tf.sin(y)
    (got, nodes), (want, off_nodes) = on_and_off(y, {x: 0.5})
    assert nodes == [(y.op.name, COMPOSED)] and len(off_nodes) == 1000
    assert_same_bits(got, want)
    ref = np.float64(0.5)
    for _ in range(1000):
        ref = np.sin(ref)
    assert_same_bits(got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_composed_unary_chain_on_arrays_and_special_values(dtype):
    x = tf.placeholder(dtype, [None], name="x")
    y = tf.sqrt(tf.exp(tf.tanh(tf.cos(tf.sin(tf.abs(tf.negative(x)))))))
    v = np.array([0.0, -0.0, 1.5, -2.0, np.inf, np.nan, 1e30], dtype=dtype)
    (got, nodes), (want, _) = on_and_off(y, {x: v})
    assert [t for _, t in nodes] == [COMPOSED]
    assert_same_bits(got, want)
    # A float64 scalar takes Python's math twins where they give the kernels' bits.
    for s in (0.0, 700.0, -1e-300, np.inf, np.nan):
        x0 = tf.placeholder(tf.float64, [])
        z = tf.log(tf.exp(tf.sqrt(tf.abs(x0))))
        (got, _), (want, _) = on_and_off(z, {x0: s})
        assert_same_bits(got, want)


def test_a_fetched_or_shared_intermediate_keeps_its_value():
    """
        x ─> +1 ─> ... ─> +1 (a, fetched) ─> +1 ... ─> +1 (b, fetched)
                                        └──> sin (c, fetched)
    """
    x = tf.placeholder(tf.float32, [2], name="x")
    a = x
    for _ in range(10):
        a = a + 2.0
    b = a
    for _ in range(5):
        b = b - 3.0
    c = tf.sin(a)
    v = np.array([1.0, -4.0], np.float32)
    (got, nodes), (want, _) = on_and_off([a, b, c], {x: v})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=15 * np.spacing(np.float32(40)))
    assert {n for n, _ in nodes} == {a.op.name, b.op.name, c.op.name}


def test_feeding_an_intermediate_starts_the_chain_there():
    x = tf.placeholder(tf.float64, [], name="x")
    mid = x
    for _ in range(3):
        mid = mid * 2.0
    y = mid
    for _ in range(3):
        y = y * 3.0
    with tf.Session(config=config(ON)) as sess:
        assert sess.run(y, {x: 1.0}) == 8.0 * 27.0
        assert sess.run(y, {mid: 1.0}) == 27.0


def test_integer_chains_wrap_like_the_ops():
    x = tf.placeholder(tf.int32, [3], name="x")
    y = x
    for _ in range(40):
        y = y * 3
    z = x
    for c in (2**30, 2**30, -7, 2**31 - 1):
        z = z + c
    v = np.array([1, -5, 2**30], np.int32)
    (got, nodes), (want, _) = on_and_off([y, z], {x: v})
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    assert len(nodes) == 2


def test_subtraction_chains_keep_signs():
    """``5 - (x + 1) - 2`` is ``2 - x``; ``-(x - 4) * 1`` is ``4 - x``."""
    x = tf.placeholder(tf.float64, [4], name="x")
    y = 5.0 - (x + 1.0) - 2.0
    z = 10.0 - (3.0 - (x - 4.0))
    v = np.array([0.0, 1.5, -2.0, 1e10])
    (got, nodes), (want, _) = on_and_off([y, z], {x: v})
    np.testing.assert_allclose(got[0], 2.0 - v, rtol=1e-15)
    np.testing.assert_allclose(got[1], v + 3.0, rtol=1e-15)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
    assert sorted(t for _, t in nodes) == ["AddV2", "Sub"]


def test_broadcasting_constants_fold_to_the_broadcast_shape():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = (x + tf.constant([[1.0], [2.0]])) + tf.constant([10.0, 20.0, 30.0])
    v = np.ones((2, 3), np.float32)
    (got, nodes), (want, _) = on_and_off(y, {x: v})
    assert_same_bits(got, want)
    assert len(nodes) == 1


def test_constants_are_hoisted_out_of_sums():
    """``(x + 1) + (sin(x) + 2) + 3`` -> ``(x + sin(x)) + 6``."""
    x = tf.placeholder(tf.float64, [3], name="x")
    s = tf.sin(x, name="s")
    y = (x + 1.0) + (s + 2.0) + 3.0
    v = np.array([0.1, 0.2, -3.0])
    (got, nodes), (want, off) = on_and_off(y, {x: v})
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(np.float64).eps)
    assert sorted(t for _, t in nodes) == ["AddV2", "AddV2", "Sin"]
    assert len(off) == 5


def test_add_n_folds_its_constants_into_one():
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    y = tf.add_n([x, tf.ones([2, 2]), tf.sin(x), tf.fill([2, 2], 2.5)], name="total")
    v = np.arange(4, dtype=np.float32).reshape(2, 2)
    (got, nodes), (want, _) = on_and_off(y, {x: v})
    np.testing.assert_allclose(got, want, rtol=2 * np.finfo(np.float32).eps)
    assert ("total", "AddN") in nodes and len(nodes) == 2


# -- identities -------------------------------------------------------------------------
IDENTITIES = {
    "mul_one": lambda x: x * 1.0,
    "one_mul": lambda x: tf.ones([3]) * x,
    "add_zero": lambda x: x + tf.zeros([1, 3]),
    "zero_add": lambda x: 0.0 + x,
    "sub_zero": lambda x: x - 0.0,
    "div_one": lambda x: x / 1.0,
    "neg_neg": lambda x: tf.negative(tf.negative(x)),
    "identities": lambda x: tf.identity(tf.stop_gradient(tf.identity(x))),
    "transposes": lambda x: tf.transpose(tf.transpose(x, [1, 0]), [1, 0]),
    "reshapes": lambda x: tf.reshape(tf.reshape(x, [-1]), [2, 3]),
}


@pytest.mark.parametrize("name", sorted(IDENTITIES))
def test_identity_rules_leave_the_input(name):
    """Each rule on a computed tensor (nothing runs after it) and on a fed one (one
    plan Identity reads the feed)."""
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    base = tf.sin(x, name="base")
    v = np.array([[0.0, -0.0, 1.0], [np.inf, -2.5, np.nan]], np.float32)
    for source, expect in ((base, [("base", "Sin")]), (x, None)):
        y = IDENTITIES[name](source)
        (got, nodes), (want, off) = on_and_off(y, {x: v})
        assert_same_bits(np.abs(got), np.abs(want))  # x + 0: -0.0 stays -0.0
        assert np.array_equal(np.signbit(got), np.signbit(want)) or "add" in name
        if expect is not None:
            assert nodes == expect, nodes
            assert len(off) > len(nodes)
        else:
            assert [t for _, t in nodes] == ["Identity"], nodes


def test_identity_element_that_broadcasts_is_kept():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = x * tf.ones([2, 1])  # shape (2, 3): not x
    z = x + tf.zeros([2, 3])
    v = np.array([1.0, 2.0, 3.0], np.float32)
    (got, _), (want, _) = on_and_off([y, z], {x: v})
    assert got[0].shape == got[1].shape == (2, 3)
    assert_same_bits(got[0], want[0])


def test_transposes_that_do_not_cancel_become_one():
    x = tf.placeholder(tf.float64, [2, 3, 4], name="x")
    y = tf.transpose(tf.transpose(x, [1, 2, 0]), [2, 0, 1])  # cancels
    z = tf.transpose(tf.transpose(x, [1, 2, 0]), [1, 2, 0])  # one [2, 0, 1]
    v = np.arange(24.0).reshape(2, 3, 4)
    (got, nodes), (want, _) = on_and_off([y, z], {x: v})
    assert_same_bits(got[0], v)
    assert_same_bits(got[1], np.transpose(v, [2, 0, 1]))
    assert_same_bits(got[1], want[1])
    assert sorted(t for _, t in nodes) == ["Identity", "Transpose"]


def test_reshape_of_reshape_with_unknown_shapes():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.reshape(tf.reshape(tf.sin(x), [-1]), [-1, 2])
    v = np.ones((3, 4), np.float32)
    (got, nodes), (want, _) = on_and_off(y, {x: v})
    assert_same_bits(got, want)
    assert sorted(t for _, t in nodes) == ["Reshape", "Sin"]


# -- CSE over the whole plan ------------------------------------------------------------
def test_commutative_ops_merge_whatever_their_input_order():
    x = tf.placeholder(tf.float64, [3], name="x")
    s, c = tf.sin(x), tf.cos(x)
    a, b = tf.add(s, c, name="a"), tf.add(c, s, name="b")
    m, n = tf.maximum(s, c), tf.maximum(c, s)
    (got, nodes), (want, _) = on_and_off([a, b, m, n], {x: np.array([0.1, 2.0, -1.0])})
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    names = {name for name, _ in nodes}
    assert "a" in names and "b" not in names and n.op.name not in names


# -- gradients, errors, switches --------------------------------------------------------
def test_gradients_through_rewritten_graphs_match():
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    y = tf.tanh(tf.negative(tf.negative(x)) * 2.0 * 3.0 + 1.0 - 4.0)
    y = tf.reduce_sum(tf.transpose(tf.transpose(y)) * tf.constant([1.0, 2.0, 3.0], tf.float64))
    (g,) = tf.gradients(y, [x])
    v = np.linspace(-1, 1, 6).reshape(2, 3)
    (got, _), (want, _) = on_and_off(g, {x: v})
    np.testing.assert_allclose(got, want, rtol=1e-14)
    eps = 1e-6
    d = np.random.default_rng(0).standard_normal(v.shape)
    with tf.Session() as sess:
        fd = (sess.run(y, {x: v + eps * d}) - sess.run(y, {x: v - eps * d})) / (2 * eps)
    np.testing.assert_allclose(np.sum(got * d), fd, rtol=1e-6)


def test_an_error_inside_a_composed_chain_names_the_failing_op(monkeypatch):
    x = tf.placeholder(tf.float64, [2], name="x")
    y = tf.cos(tf.sin(x, name="first"), name="second")
    import flowgraph.runtime.rewrite_arith as arith

    real = arith._composed_kernel

    def failing(links):
        def boom(v):
            raise ValueError("kaputt")

        links[0].kernel = boom
        return real(links)

    monkeypatch.setattr(arith, "_composed_kernel", failing)
    with tf.Session(config=config(ON)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"node first \(Sin\)"):
            sess.run(y, {x: [1.0, 2.0]})


def test_switches_follow_both_messages():
    opts = tf.OptimizerOptions
    assert switches(opts()) == (True, True, True, True)
    assert switches(opts(opt_level=opts.L0)) == (False, False, True, True)
    assert switches(opts(), RewriterConfig(disable_meta_optimizer=True)) == \
        (False, False, False, False)
    assert switches(opts(), RewriterConfig(constant_folding=RewriterConfig.OFF,
                                           shape_optimization=RewriterConfig.OFF)) == \
        (True, False, True, False)
    cfg = tf.ConfigProto(graph_options=tf.GraphOptions(
        rewrite_options=RewriterConfig(arithmetic_optimization=RewriterConfig.OFF)))
    assert cfg.graph_options.rewrite_options.arithmetic_optimization == RewriterConfig.OFF
    assert tf.GraphOptions().rewrite_options == RewriterConfig()
    with pytest.raises(ValueError, match='has no "arithmetic" field'):  # protobuf's
        RewriterConfig(arithmetic=1)


def test_meta_optimizer_off_runs_every_node():
    x = tf.placeholder(tf.float64, [], name="x")
    y = tf.sin(tf.sin(x)) * 1.0 + 1.0 + 2.0
    off = RewriterConfig(disable_meta_optimizer=True)
    with tf.Session(config=tf.ConfigProto(graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
            rewrite_options=off))) as sess:
        md = tf.RunMetadata()
        sess.run(y, {x: 0.3}, options=FULL, run_metadata=md)
    names = [n.node_name for n in _ran(md)]
    assert len(names) == 5


@pytest.mark.slow
def test_plan_ops_stay_out_of_the_graph_and_do_not_keep_it_alive():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = x + 1.0 + 2.0
        before = len(g.get_operations())
        cache: dict = {}
        a = plan_op(y.op, "AddV2", [x, x], cache=cache)
        assert plan_op(y.op, "AddV2", [x, x], cache=cache) is a
        assert plan_op(y.op, "AddV2", [x, x]) is not a
        with tf.Session(config=config(ON)) as sess:
            for _ in range(2):
                np.testing.assert_allclose(sess.run(y, {x: [0.0, 1.0]}), [3.0, 4.0])
        assert len(g.get_operations()) == before
    ref = weakref.ref(g)
    del g, x, y, a, cache, sess
    gc.collect()
    assert ref() is None


def test_aliases_never_cross_devices():
    cfg = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(
        rewrite_options=ON))
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        a = tf.sin(x, name="a")
    with tf.device("/cpu:1"):
        b = tf.identity(a * 1.0, name="b")
    with tf.Session(config=cfg) as sess:
        md = tf.RunMetadata()
        sess.run(b, {x: [1.0, 2.0, 3.0]}, options=FULL, run_metadata=md)
    cpu1 = [n.node_name for d in md.step_stats.dev_stats if d.device.endswith("CPU:1")
            for n in d.node_stats
            if n.node_name != "_SOURCE"]
    assert cpu1 and not {"a"} & set(cpu1)
