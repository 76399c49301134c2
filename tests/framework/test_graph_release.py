"""A discarded graph is freed by reference counting alone (flowgraph/framework/graph_release.py):
no full garbage collection is needed after `release_graph`, nor after an Estimator call."""

from __future__ import annotations

import contextlib
import gc
import weakref

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import estimators
from flowgraph.framework.graph_release import release_graph
from flowgraph.runtime.config import RewriterConfig

# The planner's rewrites (flowgraph/runtime/rewrite*.py, specialize.py) make ops of their
# own for a plan, released with it; some tests run without them, to check the graph's own
# cycles alone.
NO_PLAN_OPS = tf.ConfigProto(graph_options=tf.GraphOptions(
    rewrite_options=RewriterConfig(disable_meta_optimizer=True)))


@contextlib.contextmanager
def _no_collection():
    """Collections off: whatever is freed inside is freed by reference counting."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _train_graph(run_error: bool = False):
    """A graph with variables, an optimizer, a while loop and a session that ran it."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 2], initializer=tf.ones_initializer())
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        i = tf.constant(0)
        loop = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i])
        with tf.Session(config=NO_PLAN_OPS) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([train, loss], {x: np.ones((4, 3), np.float32)})
            assert sess.run(loop) == 3
            if run_error:
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(tf.debugging.check_numerics(x, "bad"), {x: [[np.nan] * 3]})
    return g, loss


@pytest.mark.parametrize("run_error", [False, True], ids=["ran", "step_failed"])
def test_released_graph_is_freed_by_refcounting(run_error):
    with _no_collection():
        g, loss = _train_graph(run_error)
        graph_ref, op_ref = weakref.ref(g), weakref.ref(loss.op)
        release_graph(g)
        del g, loss
        assert graph_ref() is None, "the released graph was kept alive by a reference cycle"
        assert op_ref() is None


@pytest.mark.slow
def test_without_release_the_graph_waits_for_a_collection():
    """What `release_graph` is for: a graph's own cycles outlive its last reference."""
    with _no_collection():
        g, loss = _train_graph()
        graph_ref = weakref.ref(g)
        del g, loss
        assert graph_ref() is not None
    gc.collect()
    assert graph_ref() is None


def test_handles_keep_what_they_describe():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        b = tf.multiply(a, 2.0, name="b")
        with tf.control_dependencies([b]):
            c = tf.identity(a, name="c")
    release_graph(g)
    assert (b.name, b.dtype, b.shape.as_list(), b.op.type) == ("b:0", tf.float32, [None, 2], "Mul")
    assert b.graph is g and b.op.graph is g
    assert [t.name for t in b.op.inputs] == ["a:0", "b/y:0"]  # TensorFlow's name
    assert [op.name for op in c.op.control_inputs] == ["b"]
    assert g.get_operations() == [] and g.finalized
    with pytest.raises(RuntimeError, match="finalized"):
        with g.as_default():
            tf.constant(1.0)


def _model_fn(features, labels, mode):
    logits = tf.layers.dense(features, 3)
    if mode == estimators.ModeKeys.PREDICT:
        return estimators.EstimatorSpec(mode, predictions={"class": tf.argmax(logits, 1)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return estimators.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


@pytest.mark.parametrize("session_config", [NO_PLAN_OPS, None], ids=["no_rewrites", "default"])
def test_estimator_graphs_are_freed_by_refcounting(tmp_path, session_config):
    """`train`, `evaluate` and `predict` each build a graph; none outlives its call."""
    graphs = []

    class Grab(tf.train.SessionRunHook):
        def begin(self):
            graphs.append(weakref.ref(tf.get_default_graph()))

    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    config = estimators.RunConfig(model_dir=str(tmp_path), save_checkpoints_secs=600,
                                  save_checkpoints_steps=None, session_config=session_config)
    est = estimators.Estimator(_model_fn, config=config)
    train_fn = estimators.inputs.numpy_input_fn(x, y, batch_size=16, num_epochs=None,
                                                shuffle=True)
    eval_fn = estimators.inputs.numpy_input_fn(x, y, batch_size=16, shuffle=False)
    est.train(train_fn, steps=2)  # the first call loads modules and creates caches
    with _no_collection():
        est.train(train_fn, steps=3, hooks=[Grab()])
        assert graphs[-1]() is None, "Estimator.train left its graph to the collector"
        est.evaluate(eval_fn, hooks=[Grab()])
        assert graphs[-1]() is None, "Estimator.evaluate left its graph to the collector"
        predictions = list(est.predict(eval_fn, hooks=[Grab()]))
        assert graphs[-1]() is None, "Estimator.predict left its graph to the collector"
    assert len(predictions) == 64


@pytest.mark.parametrize("batch", [4, None], ids=["static", "shape_variants"])
def test_with_the_planners_rewrites_the_graph_is_freed_too(batch):
    """Plans whose rewrites made ops of their own (folded shapes, collapsed chains, a
    plan specialized to the fed shape) free them with the plan, and the graph with it."""
    with _no_collection():
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [batch, 3], name="x")
            loss = tf.reduce_sum(tf.square(x + 1.0 + 2.0))
            (grad,) = tf.gradients(loss, [x])
            with tf.Session() as sess:
                for _ in range(2):
                    sess.run(grad, {x: np.ones((4, 3), np.float32)})
                nodes = [n for cp in sess._plans.values() for n in cp.nodes]
                made = [n.op for n in nodes if n.op is not None and n.op not in
                        g.get_operations()]
                assert made, "the rewrites made no op of their own: nothing is tested"
            del nodes, made
        ref = weakref.ref(g)
        release_graph(g)
        del g, x, loss, grad, sess  # a session refers to its graph, as in TensorFlow
        assert ref() is None
