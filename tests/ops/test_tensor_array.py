"""`tf.TensorArray` (tensor_array.py, tensor_array_ops.py, kernels_tensor_array.py):
values against NumPy, TensorFlow 1.x's errors and static shapes, gradients (also through
`tf.while_loop`) against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf

R = np.random.RandomState(5)


def test_write_read_stack_values(sess):
    x = tf.placeholder(tf.float32, [2, 3])
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, x[0]).write(2, x[1] * 2.0).write(1, x[0] + x[1])
    X = R.uniform(size=(2, 3)).astype(np.float32)
    stacked, size = sess.run([ta.stack(), ta.size()], {x: X})
    np.testing.assert_allclose(stacked, [X[0], X[0] + X[1], 2 * X[1]], rtol=1e-6)
    assert size == 3
    assert ta.stack().shape.as_list() == [3, 3]


def test_unstack_read_gather_and_static_shapes(sess):
    x = tf.placeholder(tf.float64, [4, 2])
    ta = tf.TensorArray(tf.float64, size=4, clear_after_read=False).unstack(x)
    r = ta.read(3)
    g = ta.gather([1, 3])
    # TF 2.15: (?, 2) -- the gather count joins the element shape known at creation
    assert r.shape.as_list() == [2] and g.shape.as_list() == [None, 2]
    X = R.normal(size=(4, 2))
    a, b, again = sess.run([r, g, ta.read(3)], {x: X})
    np.testing.assert_array_equal(a, X[3])
    np.testing.assert_array_equal(b, X[[1, 3]])
    np.testing.assert_array_equal(again, X[3])  # clear_after_read=False: read twice


def test_scatter_concat_split(sess):
    ta = tf.TensorArray(tf.int32, size=3).scatter([2, 0, 1], [[1, 2], [3, 4], [5, 6]])
    assert sess.run(ta.stack()).tolist() == [[3, 4], [5, 6], [1, 2]]
    parts = tf.TensorArray(tf.int32, size=2, infer_shape=False).split([1, 2, 3, 4, 5], [2, 3])
    assert sess.run(parts.read(1)).tolist() == [3, 4, 5]
    joined = tf.TensorArray(tf.int32, size=2, infer_shape=False)
    joined = joined.write(0, [1]).write(1, [2, 3])
    assert sess.run(joined.concat()).tolist() == [1, 2, 3]


def test_dynamic_size_grows_and_fixed_size_does_not(sess):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(4, 1.5)
    assert sess.run(ta.size()) == 5
    fixed = tf.TensorArray(tf.float32, size=1).write(2, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"out of bounds.*dynamic_size"):
        sess.run(fixed.flow)


def test_unwritten_elements_are_zeros_once_the_shape_is_known(sess):
    ta = tf.TensorArray(tf.float32, size=3).write(1, [1.0, 2.0])
    assert sess.run(ta.stack()).tolist() == [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
    known = tf.TensorArray(tf.float32, size=2, element_shape=[2])
    assert sess.run(known.read(0)).tolist() == [0.0, 0.0]
    unknown = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="never written"):
        sess.run(unknown.read(0))


def test_errors_match_tensorflow(sess):
    ta = tf.TensorArray(tf.float32, size=2).unstack([[1.0], [2.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="read index 0 twice"):
        sess.run([ta.read(0), ta.read(0)])
    twice = tf.TensorArray(tf.float32, size=2).write(1, [1.0]).write(1, [2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="already written"):
        sess.run(twice.stack())
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(2,\) but expected"):
        tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [2.0, 3.0])
    with pytest.raises(TypeError, match="holds float32"):
        tf.TensorArray(tf.float32, size=2).write(0, tf.constant([1], tf.int32))
    with pytest.raises(ValueError, match="size"):
        tf.TensorArray(tf.float32)


def test_each_run_gets_a_fresh_array(sess):
    v = tf.placeholder(tf.float32, [])
    ta = tf.TensorArray(tf.float32, size=1).write(0, v)
    assert sess.run(ta.read(0), {v: 1.0}) == 1.0
    assert sess.run(ta.read(0), {v: 2.0}) == 2.0  # no "already written" across runs


def test_identity_and_close(sess):
    ta = tf.TensorArray(tf.float32, size=1).write(0, 3.0)
    same = ta.identity()
    assert same.handle is ta.handle and same.flow is not ta.flow
    assert sess.run(same.read(0)) == 3.0
    assert same.close().type == "TensorArrayCloseV3"


def _loop_squares(x):
    """x[i] ** 2 + i, written inside a while loop with the flow as a loop variable."""
    n = tf.shape(x)[0]
    inp = tf.TensorArray(x.dtype, size=n).unstack(x)
    out = tf.TensorArray(x.dtype, size=n)

    def body(i, flow):
        v = inp.read(i)
        step = out._derive(flow).write(i, v * v + tf.cast(i, x.dtype))
        return i + 1, step.flow

    _, flow = tf.while_loop(lambda i, f: i < n, body, [0, out.flow])
    return out._derive(flow).stack()


def test_loop_values(sess):
    x = tf.placeholder(tf.float64, [None, 2])
    X = R.normal(size=(5, 2))
    np.testing.assert_allclose(sess.run(_loop_squares(x), {x: X}),
                               X * X + np.arange(5)[:, None])


def test_gradients_through_a_loop_match_finite_differences():
    check_gradient(lambda x: _loop_squares(x) * 3.0, [R.normal(size=(4, 3))])
    check_gradient(lambda x: _loop_squares(tf.sin(x)), [R.normal(size=(3, 2))],
                   dtype=np.float32)


@pytest.mark.parametrize("method", ["read", "gather", "concat", "split"])
def test_gradients_of_each_method(method):
    def build(x):
        ta = tf.TensorArray(x.dtype, size=3)
        if method == "split":
            return ta.split(x * x, [1, 1, 1]).read(2)
        ta = ta.unstack(tf.tanh(x))
        if method == "read":
            return ta.read(0) * ta.read(2)
        if method == "gather":
            return ta.gather([2, 1]) * 2.0
        return ta.concat()
    check_gradient(build, [R.normal(size=(3, 2))])


def test_two_gradient_passes_use_separate_gradient_arrays(sess):
    x = tf.constant([1.0, 2.0, 3.0])
    ta = tf.TensorArray(tf.float32, size=3).unstack(x)
    y = ta.gather([0, 1, 2])
    (g1,) = tf.gradients(y * 2.0, x)
    (g2,) = tf.gradients(y * 5.0, x)
    a, b = sess.run([g1, g2])
    assert a.tolist() == [2.0, 2.0, 2.0] and b.tolist() == [5.0, 5.0, 5.0]


def test_a_tensor_array_in_while_loop_vars_with_gradient():
    """TF1 code passes TensorArrays through `tf.while_loop` directly."""
    x = tf.constant(np.arange(1.0, 5.0, dtype=np.float32))
    ta = tf.TensorArray(tf.float32, size=4)

    def body(i, acc):
        return i + 1, acc.write(i, x[i] * x[i])

    _, out = tf.while_loop(lambda i, acc: i < 4, body, (tf.constant(0), ta))
    assert isinstance(out, tf.TensorArray)
    squares = out.stack()
    grad = tf.gradients(tf.reduce_sum(squares), x)[0]
    with tf.Session() as sess:
        got, g = sess.run([squares, grad])
    np.testing.assert_allclose(got, np.arange(1.0, 5.0) ** 2)
    np.testing.assert_allclose(g, 2 * np.arange(1.0, 5.0))
