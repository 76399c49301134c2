"""tf.Graph: default graph, finalize, lookups by name, graph elements.

Expected behaviour was checked against TensorFlow 2.15 ``tf.compat.v1``.
"""

import threading

import pytest

import flowgraph as tf


def test_as_default_and_get_default_graph():
    g = tf.Graph()
    assert tf.get_default_graph() is not g
    with g.as_default() as entered:
        assert entered is g
        assert tf.get_default_graph() is g
        c = tf.constant(1.0)
    assert c.graph is g
    assert tf.get_default_graph() is not g


def test_nested_as_default_restores_outer():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        with g2.as_default():
            assert tf.get_default_graph() is g2
        assert tf.get_default_graph() is g1


def test_default_graph_is_per_thread():
    g = tf.Graph()
    seen = []
    with g.as_default():
        t = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        t.start()
        t.join()
    assert seen[0] is not g


def test_reset_default_graph_replaces_global_graph():
    before = tf.get_default_graph()
    tf.constant(1.0)
    tf.reset_default_graph()
    after = tf.get_default_graph()
    assert after is not before
    assert after.get_operations() == []


def test_reset_default_graph_inside_graph_context_raises():
    with tf.Graph().as_default(), pytest.raises(AssertionError, match="nested graphs"):
        tf.reset_default_graph()


def test_reset_default_graph_inside_session_context_raises():
    with tf.Session(), pytest.raises(AssertionError):
        tf.reset_default_graph()


def test_finalize_blocks_new_ops_and_collections():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="a")
        assert not g.finalized
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)
        with pytest.raises(RuntimeError, match="finalized"):
            tf.add_to_collection("k", 1)
        # reading still works
        assert tf.get_collection("k") == []
        assert [op.name for op in g.get_operations()] == ["a"]


def test_cross_graph_input_is_value_error_even_if_other_graph_finalized():
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0, name="a")
    g1.finalize()
    g2 = tf.Graph()
    with g2.as_default():
        b = tf.constant(1.0, name="b")
        with pytest.raises(ValueError, match="same graph"):
            tf.add(a, b)


def test_get_operations_in_creation_order_and_is_a_copy():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="x")
        tf.constant(2.0, name="y")
    ops = g.get_operations()
    assert [o.name for o in ops] == ["x", "y"]
    ops.clear()
    assert len(g.get_operations()) == 2
    assert g.version == 2


def test_get_operation_by_name():
    a = tf.constant(1.0, name="a")
    g = tf.get_default_graph()
    assert g.get_operation_by_name("a") is a.op
    with pytest.raises(KeyError, match="refers to an Operation not in the graph"):
        g.get_operation_by_name("b")
    with pytest.raises(ValueError, match="appears to refer to a Tensor"):
        g.get_operation_by_name("a:0")
    with pytest.raises(TypeError, match="strings"):
        g.get_operation_by_name(3)


def test_get_tensor_by_name():
    a = tf.constant(1.0, name="a")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("a:0") is a
    with pytest.raises(ValueError, match="refers to an Operation, not a Tensor"):
        g.get_tensor_by_name("a")
    with pytest.raises(KeyError, match="exists but only has 1 outputs"):
        g.get_tensor_by_name("a:1")
    with pytest.raises(KeyError, match="does not exist in the graph"):
        g.get_tensor_by_name("b:0")
    with pytest.raises(ValueError, match="not a valid one"):
        g.get_tensor_by_name("a:x")
    with pytest.raises(TypeError, match="strings"):
        g.get_tensor_by_name(3)


def test_as_graph_element():
    a = tf.constant(1.0, name="a")
    g = tf.get_default_graph()
    assert g.as_graph_element("a") is a.op
    assert g.as_graph_element("a:0") is a
    assert g.as_graph_element(a) is a
    with pytest.raises(ValueError):
        g.as_graph_element("a", allow_operation=False)
    with pytest.raises(ValueError):
        g.as_graph_element("a:0", allow_tensor=False)
    with pytest.raises(TypeError, match="Can not convert a int"):
        g.as_graph_element(3)
    other = tf.Graph()
    with pytest.raises(ValueError, match="not an element of this graph"):
        other.as_graph_element(a)
    with pytest.raises(ValueError, match="not an element of this graph"):
        other.as_graph_element(a.op)


def test_variable_as_graph_element_is_its_ref():
    v = tf.Variable(1.0, name="v")
    assert tf.get_default_graph().as_graph_element(v) is v.op.outputs[0]


def test_graph_properties():
    g = tf.Graph()
    assert g.building_function is False
    assert g.seed is None
    assert g.graph_def_versions.producer >= 1
    with g.as_default():
        tf.constant(1.0, name="a")
    assert "a" in g
    assert "zz" not in g


def test_create_op_rejects_non_tensor_inputs():
    g = tf.get_default_graph()
    with pytest.raises(TypeError, match="must be a Tensor"):
        g.create_op("Identity", [1.0])


def test_operation_creation_is_fast():
    import gc
    import time

    g = tf.get_default_graph()
    a = tf.constant(1.0)
    n = 2000
    gc.disable()  # the cost of creating ops, not of collecting what earlier tests left
    try:
        start = time.perf_counter()
        for _ in range(n):
            g.create_op("Identity", [a])
        per_op = (time.perf_counter() - start) / n
    finally:
        gc.enable()
    assert per_op < 200e-6  # ~15 us here; generous for slow CI machines
