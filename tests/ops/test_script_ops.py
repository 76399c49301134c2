"""tf.py_func / tf.numpy_function: values and dtypes, TF's strict result checks, error
mapping, per-graph registry, and refusal to load a graph def that contains one."""

from __future__ import annotations

import gc
import json
import weakref

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.ops import script_ops
from flowgraph.ops.script_ops import numpy_function, py_func


def test_single_output_value_dtype_and_unknown_shape(sess):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = py_func(lambda a: (a * 2).T.copy(), [x], tf.float32)
    assert isinstance(y, tf.Tensor)
    assert y.op.type == "PyFunc" and y.dtype == tf.float32
    assert y.shape.ndims is None
    out = sess.run(y)
    np.testing.assert_array_equal(out, (np.arange(6, dtype=np.float32).reshape(2, 3) * 2).T)
    assert out.dtype == np.float32


def test_list_tout_returns_list_and_empty_tout_returns_operation(sess):
    x = tf.constant([3, 1, 2])
    outs = py_func(lambda a: (np.sort(a), np.int64(a.sum())), [x], [tf.int32, tf.int64])
    assert isinstance(outs, list) and [t.dtype for t in outs] == [tf.int32, tf.int64]
    one = py_func(lambda a: [a], [x], [tf.int32])
    assert isinstance(one, list) and len(one) == 1
    calls = []
    op = py_func(lambda a: calls.append(a.tolist()), [x], [])
    assert isinstance(op, tf.Operation)
    sorted_, total = sess.run(outs)
    assert sorted_.tolist() == [1, 2, 3] and total == 6
    assert sess.run(op) is None and calls == [[3, 1, 2]]


def test_arguments_are_numpy_scalars_bytes_and_writable_copies(sess):
    seen = {}

    def f(scalar, strings, arr):
        seen.update(scalar=type(scalar), strings=strings.tolist(), writable=arr.flags.writeable)
        arr += 100  # must not change the graph's constant
        return arr

    c = tf.constant([1, 2])
    y = py_func(f, [tf.constant(2.5), tf.constant(["ab", "c"]), c], tf.int32)
    assert sess.run(y).tolist() == [101, 102]
    assert seen == {"scalar": np.float32, "strings": [b"ab", b"c"], "writable": True}
    assert sess.run(c).tolist() == [1, 2]


def test_placeholder_inputs_and_set_shape(sess):
    x = tf.placeholder(tf.float64, [None, 4])
    y = py_func(np.cumsum, [x], tf.float64)
    y.set_shape([None])
    assert y.shape.as_list() == [None]
    assert sess.run(y, {x: np.ones((2, 4))}).tolist() == list(range(1, 9))


def test_string_outputs_become_bytes(sess):
    x = tf.constant(1)
    a = py_func(lambda v: np.array(["x", "yz"]), [x], tf.string)
    b = py_func(lambda v: "abc", [x], tf.string)
    c = py_func(lambda v: [b"p", b"q"], [x], [tf.string, tf.string])
    out_a, out_b, out_c = sess.run([a, b, c])
    assert out_a.dtype == object and out_a.tolist() == [b"x", b"yz"]
    assert out_b == b"abc"
    assert out_c == [b"p", b"q"]


@pytest.mark.parametrize("value, tout, got", [
    (3.0, tf.float32, "float64"),          # a Python float is float64, as in TensorFlow
    (np.int64(3), tf.int32, "int64"),
    (np.zeros(2, np.float32), tf.float64, "float32"),
])
def test_wrong_result_dtype_is_invalid_argument(sess, value, tout, got):
    y = py_func(lambda a: value, [tf.constant(1.0)], tout, name="bad")
    with pytest.raises(errors.InvalidArgumentError,
                       match=rf"0-th value returned by pyfunc_\d+ is {got}, but expects "
                             rf"{tout.name}") as info:
        sess.run(y)
    assert "bad" in str(info.value)


def test_wrong_number_of_results(sess):
    y = py_func(lambda a: [1.0, 2.0], [tf.constant(1.0)], tf.float64)
    with pytest.raises(errors.InvalidArgumentError, match="returns 2 values, but expects to see 1"):
        sess.run(y)


@pytest.mark.parametrize("raised, expected", [
    (ValueError, errors.InvalidArgumentError),
    (TypeError, errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (NotImplementedError, errors.UnimplementedError),
    (MemoryError, errors.ResourceExhaustedError),
    (KeyError, errors.UnknownError),
    (IndexError, errors.UnknownError),
    (RuntimeError, errors.UnknownError),
])
def test_python_exceptions_map_to_tf_errors(sess, raised, expected):
    def fail(a):
        raise raised("boom from user code")

    y = py_func(fail, [tf.constant(1.0)], tf.float32, name="user_fn")
    with pytest.raises(expected, match="boom from user code") as info:
        sess.run(y)
    assert type(info.value) is expected
    text = str(info.value)
    assert raised.__name__ in text and "user_fn" in text and "in fail" in text


def test_stateful_runs_every_time_and_stateless_type(sess):
    calls = []

    def count(a):
        calls.append(1)
        return np.int32(len(calls))

    x = tf.constant(0)
    a = py_func(count, [x], tf.int32)
    b = py_func(count, [x], tf.int32)
    assert sess.run([a, b]) in ([1, 2], [2, 1])
    assert sess.run(a) == 3
    s = py_func(lambda v: v, [x], tf.int32, stateful=False)
    assert s.op.type == "PyFuncStateless" and a.op.type == "PyFunc"
    assert sess.run(s) == 0


def test_numpy_function_alias(sess):
    y = numpy_function(lambda a: a[::-1].copy(), [tf.constant([1, 2, 3])], tf.int32)
    assert y.op.type == "PyFunc"
    assert sess.run(y).tolist() == [3, 2, 1]


def test_not_differentiable():
    x = tf.constant([1.0, 2.0])
    y = py_func(np.square, [x], tf.float32)
    assert tf.gradients(y, x) == [None]


def test_runs_inside_dataset_map(sess):
    ds = tf.data.Dataset.range(3).map(
        lambda i: py_func(lambda v: np.int64(v * 10), [i], tf.int64))
    nxt = ds.make_one_shot_iterator().get_next()
    assert [int(sess.run(nxt)) for _ in range(3)] == [0, 10, 20]


def test_graph_def_with_py_func_refuses_to_load():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, name="x")
        py_func(np.negative, [x], tf.float32, name="negate")
    graph_def = json.loads(json.dumps(g.as_graph_def()))  # serializes: only a token
    node = next(n for n in graph_def["node"] if n["op"] == "PyFunc")
    assert set(node["attr"]) == {"token", "Tout"}
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"'negate' \(PyFunc\).*never carry Python code"):
            tf.import_graph_def(graph_def, name="")
    with g.as_default():  # not even back into the graph that holds the function
        with pytest.raises(ValueError, match="negate"):
            tf.import_graph_def(graph_def, name="again")


@pytest.mark.slow
def test_registry_is_per_graph_and_released_with_it():
    g = tf.Graph()
    with g.as_default():
        y = py_func(np.negative, [tf.constant(1.0)], tf.float32)
    token = y.op.get_attr("token").decode()  # TF: string attrs are bytes
    assert script_ops.lookup(g, token) is not None
    assert script_ops.lookup(tf.get_default_graph(), token) is None
    with g.as_default():  # a function that refers back to its graph does not pin it
        py_func(lambda a, _keep=y: a, [y], tf.float32)
    ref = weakref.ref(g)
    del y, g
    gc.collect()
    assert ref() is None


def test_argument_errors():
    with pytest.raises(ValueError, match="callable"):  # TF's type
        py_func("not a function", [tf.constant(1)], tf.int32)
    with pytest.raises(TypeError, match="Tout"):
        py_func(abs, [tf.constant(1)], "no_such_dtype")
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1)
    with pytest.raises(ValueError, match="same graph"):
        py_func(lambda a, b: a, [tf.constant(1), foreign], tf.int32)
