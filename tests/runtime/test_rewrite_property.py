"""Property: random elementwise graphs give the same outputs and gradients with the
algebraic rewrites and shape specialization on as with them off.

Graphs are DAGs over a fed ``x`` of shape (None, 3) (fed (2, 3) or (4, 3)): unary math,
binary ops between nodes, constants of broadcastable shapes on either side, identity
elements, double negations and transposes; a random subset of nodes is fetched.
Folding constants reassociates float arithmetic, so values agree within a few ulps per
folded op (float64 here), not bitwise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flowgraph as tf
from flowgraph.runtime.config import RewriterConfig

ON = RewriterConfig(remapping=RewriterConfig.OFF)
OFF = RewriterConfig(remapping=RewriterConfig.OFF, disable_meta_optimizer=True)
CONST_SHAPES = [(), (3,), (1, 3), (1, 1)]
UNARY = {
    "sin": tf.sin, "tanh": tf.tanh, "neg": tf.negative, "square": lambda t: t * t,
    "negneg": lambda t: tf.negative(tf.negative(t)), "ident": tf.identity,
    "transpose2": lambda t: tf.transpose(tf.transpose(t)),
}
BINARY = {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply}

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 99)),
    st.tuples(st.just("const"), st.sampled_from(sorted(BINARY)), st.integers(0, 99),
              st.sampled_from(range(len(CONST_SHAPES))), st.booleans(),
              st.sampled_from([0.0, 1.0, 0.5, -1.25, 2.0])),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 99),
              st.integers(0, 99)),
)


def _build(steps, fetch_mask):
    x = tf.placeholder(tf.float64, [None, 3], name="x")
    nodes = [x]
    for s in steps:
        kind, name, i = s[0], s[1], s[2] % len(nodes)
        if kind == "unary":
            nodes.append(UNARY[name](nodes[i]))
        elif kind == "const":
            shape, left, value = CONST_SHAPES[s[3]], s[4], s[5]
            c = tf.constant(np.full(shape, value), tf.float64)
            nodes.append(BINARY[name](c, nodes[i]) if left else BINARY[name](nodes[i], c))
        else:
            nodes.append(BINARY[name](nodes[i], nodes[s[3] % len(nodes)]))
        # keep values bounded so that the ulp tolerance below stays meaningful
        if len(nodes) % 4 == 0:
            nodes[-1] = tf.tanh(nodes[-1])
    fetched = [t for t, keep in zip(nodes[1:], fetch_mask) if keep] or [nodes[-1]]
    if nodes[-1] not in fetched:
        fetched.append(nodes[-1])
    (grad,) = tf.gradients(tf.add_n([tf.reduce_sum(t) for t in fetched]), [x])
    return x, fetched, grad


def _run(rewrites, steps, fetch_mask, feeds):
    with tf.Graph().as_default():
        x, fetched, grad = _build(steps, fetch_mask)
        config = tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rewrites))
        with tf.Session(config=config) as sess:
            return [sess.run([fetched, grad], {x: v}) for v in feeds]


GRAPHS = dict(steps=st.lists(step, min_size=1, max_size=14),
              fetch_mask=st.lists(st.booleans(), min_size=14, max_size=14),
              seed=st.integers(0, 2**16))
QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]


def _check(steps, fetch_mask, seed):
    rng = np.random.default_rng(seed)
    feeds = [rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (4, 3))]
    got = _run(ON, steps, fetch_mask, feeds)
    want = _run(OFF, steps, fetch_mask, feeds)
    for (g_vals, g_grad), (w_vals, w_grad) in zip(got, want):
        for g, w in zip([*g_vals, g_grad], [*w_vals, w_grad]):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype
            scale = np.maximum(np.abs(w), 1.0)
            np.testing.assert_array_less(np.abs(g - w), 64 * np.finfo(np.float64).eps * scale
                                         + 1e-300)


@settings(max_examples=10, deadline=None, suppress_health_check=QUIET)
@given(**GRAPHS)
def test_rewritten_graphs_match_unrewritten(steps, fetch_mask, seed):
    _check(steps, fetch_mask, seed)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=QUIET)
@given(**GRAPHS)
def test_rewritten_graphs_match_unrewritten_many(steps, fetch_mask, seed):
    _check(steps, fetch_mask, seed)
