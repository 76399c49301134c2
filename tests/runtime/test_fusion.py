"""Elementwise fusion (`flowgraph/runtime/fusion.py`, `backends/cpu/fused.py`).

Every test compares a fused run with the same graph run with fusion off
(``RewriterConfig.remapping = OFF``): the fused kernels call NumPy's own inner loops in
the unfused order, so results must be bitwise equal.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.backends.cpu import kernel_pool
from flowgraph.backends.cpu import kernels_fused as cpu_fused
from flowgraph.runtime.config import RewriterConfig

# The algebraic rewrites (`rewrite_arith.py`) are off in both, so that each test sees
# the graph as built.
OFF = tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=RewriterConfig(
    remapping=RewriterConfig.OFF, arithmetic_optimization=RewriterConfig.OFF)))
ON = tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=RewriterConfig(
    arithmetic_optimization=RewriterConfig.OFF)))


def _run(fetches, feeds, config):
    with tf.Session(config=config) as sess:
        values = sess.run(fetches, feeds)
        plans = {id(cp): cp for cp in sess._plans.values()}.values()
        fused = [n for cp in plans for n in cp.nodes if n.fused]
    return values, fused


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # NaNs compare equal here


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_a_dense_layers_tail_and_its_gradient_fuse_bitwise(dtype):
    rng = np.random.default_rng(0)
    x = tf.placeholder(dtype, [None, 8])
    w = tf.constant(rng.standard_normal((8, 6)), dtype=dtype)
    b = tf.constant(rng.standard_normal(6), dtype=dtype)
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    y = tf.sigmoid(h) * tf.rsqrt(tf.square(h) + 1.0) - tf.tanh(h)
    loss = tf.reduce_sum(tf.math.squared_difference(y, 0.5))
    grads = tf.gradients(loss, [x, w, b])
    feed = {x: rng.standard_normal((5, 8)).astype(dtype.as_numpy_dtype)}
    want, none = _run([loss, y, *grads], feed, OFF)
    got, fused = _run([loss, y, *grads], feed, ON)
    assert not none and fused
    assert any({"BiasAdd", "Relu"} <= {op.type for op in n.fused} for n in fused)
    for a, b_ in zip(got, want):
        _same(a, b_)


def test_fetched_intermediates_stay_materialized():
    x = tf.placeholder(tf.float32, [4])
    a = tf.sin(x, name="a")
    b = tf.cos(a, name="b")
    c = tf.exp(b, name="c")
    feed = {x: np.linspace(-1, 1, 4, dtype=np.float32)}
    got, fused = _run([c, a], feed, ON)
    want, _ = _run([c, a], feed, OFF)
    assert [[op.name for op in n.fused] for n in fused] == [["b", "c"]]
    _same(got[0], want[0])
    _same(got[1], want[1])


def test_a_value_read_outside_the_group_is_not_absorbed():
    x = tf.placeholder(tf.float64, [3])
    a = tf.square(tf.sin(x, name="s"), name="a")  # read by b and by a reduction
    b = tf.negative(a, name="b") * 2.0
    c = tf.reduce_sum(a) + tf.reduce_sum(b)
    feed = {x: np.array([1.0, 2.0, 3.0])}
    got, fused = _run(c, feed, ON)
    s = np.sin(feed[x]) ** 2
    assert got == np.sum(s) + np.sum(-s * 2.0)
    # a ends a group of its own; b's group starts after it
    assert sorted([op.name for op in n.fused] for n in fused) == [["b", b.op.name],
                                                                  ["s", "a"]]


def test_the_switch_turns_fusion_off_and_step_stats_name_the_members():
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.nn.relu(x * 2.0 + 1.0, name="y")
    _, none = _run(y, {x: np.ones((2, 3), np.float32)}, OFF)
    assert none == []
    with tf.Session(config=ON) as sess:
        md = tf.RunMetadata()
        sess.run(y, {x: np.ones((2, 3), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
    labels = [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
    assert "y = Fused(mul:Mul, add:AddV2, y:Relu)" in labels


def test_shapes_that_do_not_broadcast_raise_the_members_error():
    x = tf.placeholder(tf.float32, [None])
    z = tf.placeholder(tf.float32, [None])
    y = tf.exp(tf.add(tf.sin(x), z, name="bad_add"))
    with tf.Session(config=ON) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_add"):
            sess.run(y, {x: np.ones(3, np.float32), z: np.ones(4, np.float32)})


def test_broadcasts_transposed_inputs_zero_d_and_empty_results():
    rng = np.random.default_rng(1)
    a = tf.placeholder(tf.float64, [None, None, None])
    b = tf.placeholder(tf.float64, [None, 1, None])
    s = tf.placeholder(tf.float64, [])
    y = tf.maximum(tf.sin(a) * b, s) - tf.abs(b)
    big = rng.standard_normal((3, 5, 4, 2)).transpose(3, 1, 2, 0)[..., 0]  # strided
    cases = [
        {a: big, b: rng.standard_normal((2, 1, 4)), s: np.float64(0.1)},
        {a: rng.standard_normal((1, 6, 1)), b: rng.standard_normal((3, 1, 2)), s: 0.0},
        {a: np.zeros((0, 3, 2)), b: np.ones((1, 1, 2)), s: 1.0},
    ]
    for feed in cases:
        _same(_run(y, feed, ON)[0], _run(y, feed, OFF)[0])
    u = tf.placeholder(tf.float64, [])
    v = tf.cos(tf.sin(u)) + 1.0
    got, fused = _run(v, {u: 0.25}, ON)
    assert fused and got == np.cos(np.sin(0.25)) + 1.0


def test_large_results_split_over_threads_bitwise(monkeypatch):
    calls = []
    original = kernel_pool.parallel_for
    monkeypatch.setattr(kernel_pool, "parallel_for",
                        lambda n, chunk, **kw: (calls.append(n), original(n, chunk, **kw)))
    n = cpu_fused.PARALLEL_MIN_WORK + 17
    x = tf.placeholder(tf.float32, [None])
    y = tf.tanh(tf.exp(x * 0.5) - 1.0)
    feed = {x: np.random.default_rng(2).standard_normal(n).astype(np.float32)}
    monkeypatch.setattr(kernel_pool, "threads", lambda: 2)  # even on a busy host
    got = _run(y, feed, ON)[0]
    _same(got, _run(y, feed, OFF)[0])
    assert calls  # the split path ran


def test_a_wide_sum_of_constants_becomes_one_node():
    x = tf.placeholder(tf.float32, [16])
    total = tf.add_n([x + tf.constant(np.float32(1 + i / 100)) for i in range(200)])
    feed = {x: np.linspace(0, 1, 16, dtype=np.float32)}
    got, fused = _run(total, feed, ON)
    assert len(fused) == 1 and len(fused[0].fused) == 201
    _same(got, _run(total, feed, OFF)[0])


# -- random graphs -----------------------------------------------------------------------
UNARY = [tf.sin, tf.tanh, tf.negative, tf.abs, tf.square, tf.nn.relu, tf.sigmoid,
         lambda v: tf.exp(tf.minimum(v, 3.0))]
BINARY = [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.minimum]
SHAPES = [(4, 3), (3,), (1, 3), (4, 1), ()]
CONST_SHAPES = [(), (1,), (1, 1), (3,), (1, 1, 1)]  # one-element ones become program consts


@st.composite
def _graphs(draw):
    n_in = draw(st.integers(1, 3))
    shapes = [(4, 3)] + [draw(st.sampled_from(SHAPES)) for _ in range(n_in - 1)]
    steps = []
    for i in range(draw(st.integers(1, 10))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)),
                          draw(st.integers(0, n_in + i - 1))))
        elif draw(st.booleans()):
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, n_in + i - 1)),
                          draw(st.integers(0, n_in + i - 1))))
        else:
            steps.append(("c", draw(st.integers(0, len(BINARY) - 1)),
                          draw(st.integers(0, n_in + i - 1)),
                          draw(st.sampled_from(CONST_SHAPES)),
                          draw(st.floats(-2.0, 2.0, width=32))))
    fetched = draw(st.sets(st.integers(0, len(steps) - 1), max_size=3))
    dtype = draw(st.sampled_from([tf.float32, tf.float64]))
    seed = draw(st.integers(0, 2**16))
    static = draw(st.booleans())  # placeholders with known shapes, or all dims unknown
    return shapes, steps, sorted(fetched | {len(steps) - 1}), dtype, seed, static


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs())
def test_random_elementwise_graphs_fuse_bitwise_with_gradients(case):
    shapes, steps, fetched, dtype, seed, static = case
    rng = np.random.default_rng(seed)
    with tf.Graph().as_default():
        xs = [tf.placeholder(dtype, s if static else [None] * len(s)) for s in shapes]
        values = list(xs)
        for step in steps:
            if step[0] == "u":
                values.append(UNARY[step[1]](values[step[2]]))
            elif step[0] == "b":
                values.append(BINARY[step[1]](values[step[2]], values[step[3]]))
            else:
                const = tf.constant(np.full(step[3], step[4]), dtype=dtype)
                values.append(BINARY[step[1]](values[step[2]], const))
        outs = [values[len(xs) + k] for k in fetched]
        loss = tf.add_n([tf.reduce_sum(o) for o in outs])
        grads = [g for g in tf.gradients(loss, xs) if g is not None]
        feed = {x: rng.standard_normal(s).astype(dtype.as_numpy_dtype)
                for x, s in zip(xs, shapes)}
        want, _ = _run(outs + grads, feed, OFF)
        got, _ = _run(outs + grads, feed, ON)
    for a, b in zip(got, want):
        _same(a, b)


def test_a_fused_node_writes_in_place_only_into_a_value_nobody_else_holds():
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 6])
    mm = tf.matmul(x, tf.constant(rng.standard_normal((6, 5)), dtype=tf.float32))
    y = tf.nn.relu(tf.nn.bias_add(mm, tf.constant(rng.standard_normal(5),
                                                  dtype=tf.float32)) * 0.5)
    feed = {x: rng.standard_normal((4, 6)).astype(np.float32)}
    with tf.Session(config=ON) as sess:
        alone = sess.run(y, feed)
        both = sess.run([y, mm], feed)
        marks = {len(cp.fetch_slots): [n.in_place for n in cp.nodes if n.fused]
                 for cp in sess._plans.values()}
    assert marks == {1: [True], 2: [False]}
    _same(alone, both[0])
    _same(both[0], np.maximum((both[1] + _bias_of(y)) * np.float32(0.5), 0))


def _bias_of(y):
    """The constant bias of `y`'s BiasAdd, read without a session."""
    bias_add = y.op.inputs[0].op.inputs[0].op
    return bias_add.inputs[1].op.attrs["value"]


def test_a_one_element_constant_of_higher_rank_widens_the_result():
    x = tf.placeholder(tf.float32, [None])
    y = tf.add(x, tf.constant([[1.0]]))
    z = tf.sin(x) * tf.constant([[[2.0]]]) + 1.0
    feed = {x: np.array([0.5], np.float32)}
    for fetch, shape in ((y, (1, 1)), (z, (1, 1, 1))):
        got = _run(fetch, feed, ON)[0]
        assert got.shape == shape
        _same(got, _run(fetch, feed, OFF)[0])


def test_relu_and_its_gradient_take_numpy_scalars_from_0d_kernels():
    # A ufunc kernel returns a NumPy scalar for a 0-d result; the Cython Relu kernels
    # took only ndarrays (found by the random-graph test above).
    x = tf.placeholder(tf.float32, None)
    y = tf.nn.relu(tf.sin(x))
    (g,) = tf.gradients(tf.sin(y), [x])
    for config in (ON, OFF):
        with tf.Session(config=config) as sess:
            got = sess.run([y, g], {x: np.float32(0.5)})
        want_y = np.maximum(np.sin(np.float32(0.5)), 0)
        assert got[0] == want_y
        assert np.isclose(got[1], np.cos(want_y) * np.cos(np.float32(0.5)))
