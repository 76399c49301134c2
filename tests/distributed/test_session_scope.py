"""What a grpc:// session leaves on its tasks: per-session resources, released at close.

TensorFlow's worker scopes a queue (reader, lookup table, iterator) created without
``shared_name`` to the session whose graph made it, and shares it by ``shared_name``
otherwise; variables are shared by name. Checked against TF 2.15 with
``tf.train.Server.create_local_server()`` and two sessions: a queue without
``shared_name`` filled in one session is empty in the other, a shared one is not, and
a variable assigned in one reads the same in the other.
"""

import gc
import tracemalloc

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.distributed import Server
from flowgraph.framework.resources import manager_for_target


@pytest.fixture
def server():
    server = Server.create_local_server()
    yield server
    server.stop()


def _service(server):
    return server._service


def test_a_queue_without_shared_name_is_per_session_and_a_shared_one_is_not(server):
    with tf.Graph().as_default():
        own = tf.FIFOQueue(10, tf.float32, name="q")
        shared = tf.FIFOQueue(10, tf.float32, shared_name="shared_q", name="qs")
        v = tf.Variable(1.0, name="v")
        fill = [own.enqueue([5.0]), shared.enqueue([7.0])]
        sizes = [own.size(), shared.size()]
        with tf.Session(server.target) as first, tf.Session(server.target) as second:
            first.run(v.initializer)
            first.run(fill)
            first.run(v.assign(3.0))
            assert first.run(sizes) == [1, 1]
            assert second.run(sizes) == [0, 1]  # TF 2.15: [0, 1]
            assert second.run(v) == 3.0  # variables are shared by name
            second.run(own.enqueue([9.0]))
            assert first.run(own.dequeue()) == 5.0  # each session its own elements
            assert second.run(own.dequeue()) == 9.0
        with tf.Session(server.target) as third:  # the shared queue outlives sessions
            assert third.run(sizes) == [0, 1]


def test_a_lookup_table_with_node_name_sharing_is_shared(server):
    with tf.Graph().as_default():
        keys, values = tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64)
        mine = tf.lookup.HashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1,
                                   name="mine")
        ask = mine.lookup(tf.constant([2], tf.int64))
        with tf.Session(server.target) as first, tf.Session(server.target) as second:
            first.run(mine.initializer)
            assert first.run(ask).tolist() == [20]
            with pytest.raises(tf.errors.FailedPreconditionError):
                second.run(ask)  # its own table, not initialized yet


def _session_cycle(server, graph, ops) -> None:
    element, take, fill = ops
    with graph.as_default(), tf.Session(server.target) as sess:
        assert sess.run(element) == 0  # a new session: a new iterator
        sess.run(fill)
        assert sess.run(take) == 1.0


@pytest.mark.parametrize("sessions", [40, pytest.param(200, marks=pytest.mark.slow)])
def test_closed_sessions_release_their_graphs_and_resources(server, sessions):
    """Many sessions against one server: registered graphs, resources and memory stay
    flat (each session's iterator and queue made its stage graphs distinct; before,
    each left ~23 KB and its graphs behind)."""
    service = _service(server)
    resources = manager_for_target(service.resource_target)
    with tf.Graph().as_default() as graph:
        element = tf.data.make_one_shot_iterator(tf.data.Dataset.range(5)).get_next()
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]])
        ops = (element, queue.dequeue(), queue.enqueue(1.0))
    for _ in range(5):  # warm caches (the process-wide plan cache, imports)
        _session_cycle(server, graph, ops)
    base_graphs, base_resources = len(service._graphs), len(resources.names())
    assert base_graphs == 0 and base_resources == 0
    gc.collect()
    tracemalloc.start()
    try:
        _session_cycle(server, graph, ops)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(sessions):
            _session_cycle(server, graph, ops)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(service._graphs) == base_graphs
    assert len(resources.names()) == base_resources
    assert end - start < sessions * 2_000, f"grew {end - start} bytes in {sessions} sessions"


def test_a_graph_two_sessions_registered_stays_until_both_close(server):
    service = _service(server)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 2.0
        first, second = tf.Session(server.target), tf.Session(server.target)
        np.testing.assert_allclose(first.run(y, {x: [1, 2]}), [2, 4])
        np.testing.assert_allclose(second.run(y, {x: [1, 2]}), [2, 4])
        assert len(service._graphs) == 1
        first.close()
        assert len(service._graphs) == 1
        np.testing.assert_allclose(second.run(y, {x: [3, 4]}), [6, 8])
        second.close()
        assert len(service._graphs) == 0
