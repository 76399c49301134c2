"""`numpy_input_fn`'s source key is stable for the same arrays, whichever other graphs are
alive, so an Estimator's repeated `train` calls build the same graph by content (and hit
the `.meta`, graph-event and ``graph.pbtxt`` caches)."""

from __future__ import annotations

import gc

import numpy as np

import flowgraph as tf
from flowgraph.framework.content_cache import graph_def_digest
from flowgraph.ops import input_ops


def _graph_digest(x, y):
    with tf.Graph().as_default() as graph:
        tf.estimator.inputs.numpy_input_fn(x, y, batch_size=4, shuffle=False)()
        return graph_def_digest(graph.as_graph_def()).digest(), graph


def test_same_arrays_same_key_while_other_graphs_live():
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6)
    other = np.ones((6, 2))
    first, _ = _graph_digest(x, y)
    gc.collect()
    # another input graph over other arrays is alive while the second is built
    _, keep = _graph_digest(other, y)
    second, _ = _graph_digest(x, y)
    assert first == second
    del keep


def test_two_live_graphs_share_the_arrays_and_the_key():
    x = np.arange(8.0).reshape(4, 2)
    g1, g2 = tf.Graph(), tf.Graph()
    k1 = input_ops.register_arrays(g1, (x,))
    k2 = input_ops.register_arrays(g2, (x,))
    assert k1 == k2
    del g1
    gc.collect()
    assert input_ops.lookup_arrays(k1)[0] is x  # g2 still reads them
    del g2
    gc.collect()
    assert input_ops.lookup_arrays(k1) is None


def test_different_arrays_different_keys_and_freed_arrays_free_the_key():
    a, b = np.zeros(3), np.zeros(3)
    g = tf.Graph()
    ka, kb = input_ops.register_arrays(g, (a,)), input_ops.register_arrays(g, (b,))
    assert ka != kb
    del g
    gc.collect()
    del a
    gc.collect()
    assert all(key != ka for key, _ in input_ops._KEYS.values())


def test_graph_reads_the_registered_values():
    x = np.arange(10.0).reshape(5, 2).astype(np.float32)
    for _ in range(2):  # the second graph reuses the key of the first's arrays
        with tf.Graph().as_default():
            feats = tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=5,
                                                       shuffle=False)()
            with tf.Session() as sess:
                np.testing.assert_array_equal(sess.run(feats["x"]), x)
