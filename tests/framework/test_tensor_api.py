"""Operation and Tensor API (names, attrs, shapes, Python protocol; checked with the TF
oracle)."""


import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture
def graph_xs():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    a = tf.constant([[1.0, 2.0, 3.0]], name="a")
    s = tf.add(x, a, name="s")
    return x, a, s


def test_operation_basics(graph_xs):
    x, _, s = graph_xs
    op = s.op
    assert op.name == "s"
    assert op.type == "AddV2"
    assert [t.name for t in op.inputs] == ["x:0", "a:0"]
    assert [t.name for t in op.outputs] == ["s:0"]
    assert op.values() == (s,)
    assert op.control_inputs == []
    assert op.device == ""
    assert op.graph is tf.get_default_graph()
    assert repr(x.op) == "<tf.Operation 'x' type=Placeholder>"


def test_get_attr(graph_xs):
    x, a, s = graph_xs
    assert a.op.get_attr("dtype") == tf.float32
    assert tf.TensorShape(x.op.get_attr("shape")).as_list() == [None, 3]  # TF: a proto
    assert s.op.get_attr("T") == tf.float32  # TF's type attribute
    with pytest.raises(ValueError, match="has no attr named 'zz'"):
        s.op.get_attr("zz")


def test_node_def(graph_xs):
    _, _, s = graph_xs
    nd = s.op.node_def
    assert nd.name == "s" and nd.op == "AddV2"
    assert list(nd.input) == ["x", "a"]  # TF's NodeDef: no ":0"
    assert nd.device == ""


def test_traceback_points_at_this_file(graph_xs):
    _, _, s = graph_xs
    filename, lineno, _, _ = s.op.traceback[-1]
    assert filename.endswith("test_tensor_api.py")
    assert lineno > 0


def test_tensor_basics(graph_xs):
    x, _, s = graph_xs
    assert s.value_index == 0
    assert s.dtype == tf.float32
    assert s.shape.as_list() == [None, 3]
    assert s.get_shape() is s.shape
    assert s.device == ""
    assert s.op.outputs[0] is s
    assert [op.name for op in x.consumers()] == ["s"]
    assert repr(s) == "<tf.Tensor 's:0' shape=(?, 3) dtype=float32>"
    assert str(s) == 'Tensor("s:0", shape=(?, 3), dtype=float32)'


def test_tensor_hash_and_eq_are_identity(graph_xs):
    x, _, s = graph_xs
    assert x == x and x != s
    d = {x: 1, s: 2}
    assert d[x] == 1 and d[s] == 2
    assert x.ref() == x.ref() and x.ref().deref() is x
    assert x.experimental_ref() != s.ref()


def test_set_shape_merges():
    y = tf.placeholder(tf.float32, None, name="y")
    y.set_shape([None, 3])
    assert y.shape.as_list() == [None, 3]
    y.set_shape([2, None])
    assert y.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        y.set_shape([3, 3])
    with pytest.raises(ValueError, match="not compatible"):
        y.set_shape([2])
    assert y.shape.as_list() == [2, 3]
    with pytest.raises(AttributeError):
        y.shape = [2, 3]


def test_bool_len_array_are_errors(graph_xs):
    x, _, _ = graph_xs
    with pytest.raises(TypeError, match="bool"):
        bool(x)
    with pytest.raises(TypeError, match="bool"):
        if x:
            pass
    with pytest.raises(TypeError, match="len is not well defined"):
        len(x)
    with pytest.raises(NotImplementedError, match="symbolic Tensor"):
        np.asarray(x)


def test_iteration_errors(graph_xs):
    # TF 2.15's graph mode (and TF 1.x) refuse to iterate any symbolic tensor, even one of
    # known first dimension; tf.unstack makes the rows
    x, _, _ = graph_xs
    for t in (x, tf.constant(1.0), tf.placeholder(tf.float32),
              tf.constant([[1, 2], [3, 4], [5, 6]])):
        with pytest.raises(TypeError, match="Iterating over a symbolic Tensor"):
            iter(t)
    with pytest.raises(TypeError):
        _a, _b, _c = tf.constant([1, 2, 3])


def test_eval_and_run(graph_xs, sess):
    x, a, s = graph_xs
    with sess.as_default():
        np.testing.assert_array_equal(s.eval(feed_dict={x: [[1.0, 1.0, 1.0]]}),
                                      [[2.0, 3.0, 4.0]])
        assert s.op.run(feed_dict={x: [[1.0, 1.0, 1.0]]}) is None
    np.testing.assert_array_equal(a.eval(session=sess), [[1.0, 2.0, 3.0]])


def test_eval_without_session(graph_xs):
    _, _, s = graph_xs
    with pytest.raises(ValueError, match=r"[Nn]o default session"):
        s.eval()
    with pytest.raises(ValueError, match="no default session"):
        s.op.run()


def test_eval_with_session_of_another_graph(graph_xs):
    _, a, _ = graph_xs
    other = tf.Session(graph=tf.Graph())
    with pytest.raises(ValueError, match="graph is different"):
        a.eval(session=other)
    with other.as_default(), pytest.raises(ValueError, match="default session"):
        a.eval()
    other.close()


def test_eval_with_closed_session(graph_xs):
    _, a, _ = graph_xs
    s = tf.Session()
    s.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        a.eval(session=s)


def test_multi_output_and_no_output_ops():
    op = tf.no_op()
    assert op.outputs == [] and op.values() == ()
