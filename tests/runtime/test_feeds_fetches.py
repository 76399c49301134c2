"""Session.run fetch structures and feed handling (TF1 semantics)."""

from __future__ import annotations

import collections
import types

import numpy as np
import pytest

import flowgraph as tf

Pair = collections.namedtuple("Pair", ["first", "second"])


@pytest.fixture
def graph_xy():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.multiply(x, 2.0, name="y")
    return x, y


def test_nested_fetch_structures(sess, graph_xy):
    x, y = graph_xy
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    noop = tf.no_op()
    fetches = {"a": [y, (x, noop)], "b": Pair(y, {"c": "y:0"}),
               "o": collections.OrderedDict([("z", y), ("w", x)])}
    out = sess.run(fetches, {x: v})
    assert set(out) == {"a", "b", "o"}
    np.testing.assert_array_equal(out["a"][0], v * 2)
    assert isinstance(out["a"][1], tuple) and out["a"][1][1] is None
    np.testing.assert_array_equal(out["a"][1][0], v)
    assert isinstance(out["b"], Pair)
    np.testing.assert_array_equal(out["b"].second["c"], v * 2)
    assert isinstance(out["o"], collections.OrderedDict) and list(out["o"]) == ["z", "w"]
    assert out["o"]["z"].dtype == np.float32


def test_fetch_by_names_ops_and_variables(sess, graph_xy):
    _x, y = graph_xy
    var = tf.Variable([1.0, 2.0], name="var")
    assert sess.run(var.initializer) is None
    assert sess.run("var/Assign") is None
    np.testing.assert_array_equal(sess.run(var), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run("var:0"), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(var.value()), [1.0, 2.0])
    got = sess.run(["y:0", y.op, "y"], {"x:0": np.ones((1, 3))})
    np.testing.assert_array_equal(got[0], np.full((1, 3), 2.0))
    assert got[1] is None and got[2] is None
    assert sess.run([]) == [] and sess.run({}) == {} and sess.run(()) == ()


def test_fetched_arrays_are_private_copies(sess):
    c = tf.constant([1.0, 2.0, 3.0])
    a = sess.run(c)
    a[0] = 99.0
    np.testing.assert_array_equal(sess.run(c), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("bad, exc", [
    (None, TypeError),
    (3, TypeError),
    (object(), TypeError),
    ("nope:0", ValueError),
    ("nope", ValueError),
    ("y:7", ValueError),
    ([1.5], TypeError),
])
def test_bad_fetches(sess, graph_xy, bad, exc):
    with pytest.raises(exc, match=r"Fetch argument|invalid type"):
        sess.run(bad)


def test_fetch_from_other_graph_is_value_error(sess):
    tf.constant(0.0)  # an empty session graph would fail first (RuntimeError, as in TF)
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="not an element of this graph"):
        sess.run(other)


def test_feed_conversion_and_scalars(sess):
    i = tf.placeholder(tf.int32, [], name="i")
    f = tf.placeholder(tf.float64, [2], name="f")
    assert sess.run(i + 1, {i: 4}) == 5
    assert sess.run(i, {i: np.int64(7)}).dtype == np.int32
    out = sess.run(f * 1.0, {f: [1, 2]})
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="not compatible"):
        sess.run(i, {i: 2**40})


def test_feed_any_tensor_and_cut_producer(sess, graph_xy, testops):
    x, _y = graph_xy
    mid = testops.stateful(x, name="mid")
    out = mid * 3.0
    # Feeding the intermediate: its producer (and the placeholder) never run.
    res = sess.run(out, {mid: np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(res, np.full((2, 3), 3.0))
    assert testops.counts["mid"] == 0
    # Feeding a constant overrides it.
    c = tf.constant(5.0)
    assert sess.run(c * 2.0, {c: 1.0}) == 2.0


def test_feed_shape_mismatch_message(sess, graph_xy):
    x, y = graph_xy
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 2\) for Tensor "
                                         r"'x:0', which has shape '\(\?, 3\)'"):
        sess.run(y, {x: np.zeros((2, 2))})


def test_feed_tensor_value_is_type_error(sess, graph_xy):
    x, y = graph_xy
    with pytest.raises(TypeError, match=r"cannot be a tf\.Tensor"):
        sess.run(y, {x: y})


def test_feed_bad_key(sess, graph_xy):
    _x, y = graph_xy
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
        sess.run(y, {"nope:0": 1.0})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
        sess.run(y, {3: 1.0})


def test_prevent_feeding_and_fetching(sess, graph_xy):
    x, y = graph_xy
    g = tf.get_default_graph()
    z = y + 1.0
    g.prevent_feeding(y)
    with pytest.raises(ValueError, match="may not be fed"):
        sess.run(z, {y: np.zeros((1, 3))})
    g.prevent_fetching(z.op)
    with pytest.raises(ValueError, match="not fetchable"):
        sess.run(z, {x: np.zeros((1, 3))})
    with pytest.raises(ValueError, match="not fetchable"):
        sess.run(z.op, {x: np.zeros((1, 3))})


def test_missing_placeholder_feed(sess, graph_xy):
    _x, y = graph_xy
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
        sess.run(y)


def test_make_callable(sess, graph_xy):
    x, y = graph_xy
    fn = sess.make_callable([y], feed_list=[x])
    out = fn(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(out[0], np.full((1, 3), 2.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
        fn()  # as in TF: values pair with feed_list positionally; x is left unfed


@pytest.mark.parametrize("bad", [[1.0], 3, "x", ()])
def test_a_feed_dict_that_is_not_a_mapping_is_a_type_error_naming_it(bad):
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="feed_dict must be a dictionary"):
            sess.run(x * 2.0, feed_dict=bad)
        assert sess.run(x * 2.0, feed_dict=types.MappingProxyType({x: 1.5})) == 3.0
