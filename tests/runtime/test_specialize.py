"""Shape-specialized plans (flowgraph/runtime/specialize.py): shapes of fed tensors and
what derives from them fold to constants, per fed-shape signature, with a bound."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime import session as session_mod
from flowgraph.runtime.config import RewriterConfig
from flowgraph.runtime.specialize import (
    MAX_SHAPE_VARIANTS,
    DeferredPlan,
    ShapeVariants,
    infer_shapes,
)

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
NO_FUSION = RewriterConfig(remapping=RewriterConfig.OFF)
GENERIC = RewriterConfig(remapping=RewriterConfig.OFF,
                         shape_optimization=RewriterConfig.OFF)



def _ran(md):
    """The nodes a traced step ran (TF lists each device's ``_SOURCE`` first)."""
    return [n for d in md.step_stats.dev_stats for n in d.node_stats
            if n.node_name != "_SOURCE"]

def config(rewrites):
    return tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rewrites))


def _model(seed=0):
    """A small softmax classifier fed batches of any size, trained by SGD."""
    rng = np.random.default_rng(seed)
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    w = tf.Variable(rng.standard_normal((5, 4)).astype(np.float32), name="w")
    b = tf.Variable(np.zeros(4, np.float32), name="b")
    logits = tf.matmul(tf.nn.relu(tf.reshape(tf.reshape(x, [-1]), [-1, 5])), w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits)) * tf.cast(tf.shape(x)[0], tf.float32) / 8.0
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, labels, loss, train, [w, b]


def _batches(sizes, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((n, 5)).astype(np.float32),
             rng.integers(0, 4, n).astype(np.int64)) for n in sizes]


def _train(rewrites, sizes):
    """Losses, final weights and per-step node names of SGD steps on `sizes` batches."""
    with tf.Graph().as_default():
        x, labels, loss, train, params = _model()
        with tf.Session(config=config(rewrites)) as sess:
            sess.run(tf.global_variables_initializer())
            losses, names = [], []
            for xv, yv in _batches(sizes):
                md = tf.RunMetadata()
                losses.append(sess.run([loss, train], {x: xv, labels: yv}, options=FULL,
                                       run_metadata=md)[0])
                names.append([n.node_name for d in md.step_stats.dev_stats
                              for n in d.node_stats
            if n.node_name != "_SOURCE"])
            graph_names = {op.name for op in tf.get_default_graph().get_operations()}
            return losses, sess.run(params), names, graph_names


def test_two_batch_sizes_give_the_generic_plans_results_with_fewer_nodes():
    sizes = [8, 3, 8, 3]
    losses, params, names, graph_names = _train(NO_FUSION, sizes)
    want_losses, want_params, generic_names, _ = _train(GENERIC, sizes)
    np.testing.assert_array_equal(losses, want_losses)
    for p, q in zip(params, want_params):
        np.testing.assert_array_equal(p, q)
    for mine, generic in zip(names, generic_names):
        assert len(mine) < len(generic) - 5, (mine, generic)
        assert not [n for n in mine if "Shape" in n or "BroadcastGradientArgs" in n]
        assert set(mine) <= graph_names  # step stats name the user's ops
    assert [n for n in generic_names[0] if "Shape" in n]


def test_variants_are_bounded_per_fetch_set(monkeypatch):
    calls = _count_compiles(monkeypatch)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None], name="x")
        y = tf.reduce_sum(x) / tf.cast(tf.size(x), tf.float64)
        sizes = list(range(1, MAX_SHAPE_VARIANTS + 4))
        with tf.Session(config=config(NO_FUSION)) as sess:
            for _ in range(2):
                for n in sizes:
                    v = np.arange(n, dtype=np.float64)
                    assert sess.run(y, {x: v}) == pytest.approx(v.mean())
            # One variant per shape up to the bound (the first run compiles its variant
            # only), then the generic plan, once, when a shape beyond the bound runs.
            assert calls == [True] * MAX_SHAPE_VARIANTS + [False]
            # Beyond the bound the generic plan runs: it still has its Size op.
            md = tf.RunMetadata()
            sess.run(y, {x: np.ones(sizes[-1])}, options=FULL, run_metadata=md)
            names = [n.node_name for n in _ran(md)]
            assert "Size" in names
            md = tf.RunMetadata()
            sess.run(y, {x: np.ones(2)}, options=FULL, run_metadata=md)
            names = [n.node_name for n in _ran(md)]
            assert "Size" not in names


def test_plans_without_shape_ops_are_not_specialized():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.sin(x) * 2.0
        with tf.Session() as sess:
            for n in (1, 2, 3):
                sess.run(y, {x: np.ones(n)})
            assert all(getattr(cp, "shape_variants", None) is None
                       for cp in sess._plans.values())


def test_fully_known_shapes_fold_in_the_generic_plan():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        y = x * tf.cast(tf.size(x), tf.float32) + tf.cast(tf.rank(x), tf.float32)
        md = tf.RunMetadata()
        with tf.Session(config=config(NO_FUSION)) as sess:
            out = sess.run(y, {x: np.ones((2, 3))}, options=FULL, run_metadata=md)
        np.testing.assert_array_equal(out, np.full((2, 3), 8.0, np.float32))
        names = [n.node_name for n in _ran(md)]
        assert len(names) == 2 and "Size" not in names and "Rank" not in names


def test_switch_off_keeps_shape_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.reshape(x, [tf.shape(x)[0] * 3])
        with tf.Session(config=config(GENERIC)) as sess:
            md = tf.RunMetadata()
            out = sess.run(y, {x: np.ones((4, 3))}, options=FULL, run_metadata=md)
        assert out.shape == (12,)
        names = [n.node_name for n in _ran(md)]
        assert "Shape" in names


def test_infer_shapes_and_variants_helpers():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.matmul(x, tf.ones([3, 7]))
        z = tf.reduce_sum(y, axis=1)
        shapes = infer_shapes([y.op.inputs[1].op, y.op, z.op.inputs[1].op, z.op], {x: (5, 3)})
        assert shapes[y].as_list() == [5, 7] and shapes[z].as_list() == [5]
    v = ShapeVariants(limit=2)
    made = []
    for n in (1, 2, 1, 3):
        v.pick("generic", [np.zeros(n), np.zeros((n, 2))], lambda n=n: made.append(n) or n)
    assert made == [1, 2] and len(v.plans) == 2


def test_a_folded_size_still_waits_for_its_source():
    """
        it.get_next() ─> values ─> Size ─> AssignAdd(count)     (count's update must not
                                                                 run once input is over)
    """
    with tf.Graph().as_default():
        it = tf.data.Dataset.from_tensor_slices(np.arange(4.0)).batch(2) \
            .make_one_shot_iterator()
        values = tf.reshape(it.get_next(), [2])
        count = tf.Variable(0.0)
        # a Size op (tf.size folds a static shape into a Const at build time, as TF
        # does; then nothing waits, in TF too): the plan's folding keeps its edge
        update = tf.assign_add(count, tf.cast(tf.size(values, optimize=False), tf.float32))
        with tf.Session(config=config(NO_FUSION)) as sess:
            sess.run(count.initializer)
            for _ in range(2):
                sess.run(update)
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(update)
            assert sess.run(count) == 4.0


def _count_compiles(monkeypatch):
    calls = []
    real = session_mod.compile_plan

    def counting(*args, **kwargs):
        calls.append(kwargs.get("shape_specialized", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(session_mod, "compile_plan", counting)
    return calls


def test_the_first_run_compiles_only_its_variant(monkeypatch):
    """A plan that wants shape variants compiles the one for the first run's shapes,
    not the generic plan too; the generic plan compiles when something needs it."""
    calls = _count_compiles(monkeypatch)
    with tf.Graph().as_default():
        x, labels, loss, _, _ = _model()
        with tf.Session(config=config(NO_FUSION)) as sess:
            sess.run(tf.global_variables_initializer())
            calls.clear()
            (xv, yv), = _batches([6])
            first = sess.run(loss, {x: xv, labels: yv})
            assert calls == [True]
            assert sess.run(loss, {x: xv, labels: yv}) == first and calls == [True]
            deferred = {id(cp): cp for cp in sess._plans.values()
                        if isinstance(cp, DeferredPlan)}
            (plan,) = deferred.values()
            assert any(n.op_type in ("Shape", "Size") for n in plan.nodes)
            assert calls == [True, False]  # reading the generic plan compiled it
    generic_losses, _, _, _ = _train(GENERIC, [6])
    assert first == generic_losses[0]


@pytest.mark.parametrize("case", ["static_shapes", "no_shape_ops", "control_flow", "off"])
def test_plans_that_want_no_variants_compile_the_generic_plan(monkeypatch, case):
    calls = _count_compiles(monkeypatch)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4] if case == "static_shapes" else [None], name="x")
        if case == "no_shape_ops":
            y = tf.sin(x) * 2.0
        elif case == "control_flow":
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.size(x), lambda: tf.size(x) + 1)
        else:
            y = tf.reduce_sum(x) / tf.cast(tf.size(x), tf.float32)
        rewrites = GENERIC if case == "off" else NO_FUSION
        with tf.Session(config=config(rewrites)) as sess:
            sess.run(y, {x: np.ones(4, np.float32)})
            assert not any(isinstance(cp, DeferredPlan) for cp in sess._plans.values())
    assert calls == [False]
