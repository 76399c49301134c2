"""The graph def digest the graph event and `.meta` caches key their bytes by
(framework/content_cache.py): equal for a graph built again, different for any change
of what the graph def holds."""

import doctest

import numpy as np

import flowgraph as tf
from flowgraph.framework import content_cache
from flowgraph.framework.content_cache import graph_def_digest


def _digest(build):
    with tf.Graph().as_default() as g:
        build()
    return graph_def_digest(g.as_graph_def()).digest()


def _model(value=1.0, shape=None, device="", flag=True, name="c"):
    def build():
        with tf.device(device):
            c = tf.constant(np.full(3, value, np.float32), name=name)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        if shape is not None:
            x.set_shape(shape)
        y = tf.nn.l2_normalize(x + c, axis=1)
        tf.reduce_sum(y, keepdims=flag)
    return build


def test_a_graph_built_again_has_the_same_digest():
    assert _digest(_model()) == _digest(_model())


def test_every_change_of_the_graph_def_changes_the_digest():
    base = _digest(_model())
    changed = [_model(value=2.0), _model(shape=[4, 3]), _model(device="/cpu:0"),
               _model(flag=False), _model(name="d"), _model(value=1.0 + 1e-7)]
    digests = [_digest(build) for build in changed]
    assert base not in digests
    assert len(set(digests)) == len(digests)


def test_values_of_different_types_stay_apart():
    """1 and 1.0, True and 1 are different graph def values (the key is exact)."""
    a = {"node": [{"attr": {"k": {"i": 1}}}]}
    b = {"node": [{"attr": {"k": {"i": 1.0}}}]}
    c = {"node": [{"attr": {"k": {"i": True}}}]}
    assert len({graph_def_digest(d).digest() for d in (a, b, c)}) == 3


def test_docstring_examples():
    result = doctest.testmod(content_cache)
    assert result.failed == 0 and result.attempted > 0


def _finalized_model():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.identity(x * 2.0, name="y")
    g.finalize()
    return g, x, y


def test_a_finalized_graph_is_exported_once():
    g, _, _ = _finalized_model()
    first = content_cache.graph_def_snapshot(g, add_shapes=True)
    assert content_cache.graph_def_snapshot(g, add_shapes=True) is first
    graph_def, digest = first
    assert graph_def == g.as_graph_def(add_shapes=True)
    assert digest == graph_def_digest(graph_def).digest()
    # the other form is its own snapshot
    assert content_cache.graph_def_snapshot(g) is not first


def test_a_snapshot_follows_shape_device_and_edge_changes():
    g, x, y = _finalized_model()
    first = content_cache.graph_def_snapshot(g)
    x.set_shape([2, 3])  # allowed on a finalized graph: the def's shapes change
    second = content_cache.graph_def_snapshot(g)
    assert second is not first and second[1] != first[1]
    assert second[0] == g.as_graph_def()
    y.op._set_device("/cpu:0")
    third = content_cache.graph_def_snapshot(g)
    assert third[1] != second[1] and third[0] == g.as_graph_def()
    g._unsafe_unfinalize()
    with g.as_default():
        tf.no_op(name="late")
    g.finalize()
    fourth = content_cache.graph_def_snapshot(g)
    assert "late" in [n["name"] for n in fourth[0]["node"]] and fourth[1] != third[1]


def test_a_graph_being_built_is_exported_on_each_call():
    with tf.Graph().as_default() as g:
        tf.constant(1.0, name="c")
        first = content_cache.graph_def_snapshot(g)
        tf.constant(2.0, name="d")
        second = content_cache.graph_def_snapshot(g)
    assert second[1] != first[1] and len(second[0]["node"]) == 2
