"""tf.Assert, check_numerics, verify_tensor_all_finite, the assert_* family, and the
tf.debugging namespace."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import debugging
from flowgraph.backends.cpu.kernels_control_flow import summarize_value
from flowgraph.framework import errors
from flowgraph.ops import check_ops
from flowgraph.ops.check_ops import Assert


def test_assert_passes_and_fails_naming_the_op(sess):
    x = tf.placeholder(tf.int32, [])
    a = Assert(x > 0, ["x must be positive, got", x], name="check_x")
    assert isinstance(a, tf.Operation) and a.type == "Assert" and not a.outputs
    sess.run(a, {x: 3})
    with pytest.raises(errors.InvalidArgumentError) as info:
        sess.run(a, {x: -2})
    msg = str(info.value)
    assert "assertion failed: [x must be positive, got] [-2]" in msg
    assert "check_x/Assert" in msg


def test_assert_guards_dependent_ops(sess):
    x = tf.placeholder(tf.float32, [None])
    with tf.control_dependencies([Assert(tf.reduce_all(x >= 0.0), [x])]):
        y = tf.sqrt(x)
    np.testing.assert_allclose(sess.run(y, {x: [4.0, 9.0]}), [2.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError, match=r"assertion failed: \[4 -1\]"):
        sess.run(y, {x: [4.0, -1.0]})


def test_assert_summarize():
    v = np.arange(10)
    assert summarize_value(v, None) == "0 1 2..."
    assert summarize_value(v, 20) == "0 1 2 3 4 5 6 7 8 9"
    assert summarize_value(np.array([[1, 2], [3, 4]]), 4) == "[1 2][3 4]"  # Assert adds []
    assert summarize_value(np.array(b"text"), None) == "text"
    assert summarize_value(np.array(True), None) == "1"


def test_assert_condition_errors():
    with pytest.raises(TypeError, match="bool"):
        Assert(tf.constant(1), ["x"])
    with pytest.raises(ValueError, match="scalar"):
        Assert(tf.constant([True, False]), ["x"])


def test_check_numerics(sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.identity(check_ops.check_numerics(x, "bad activations", name="numerics"))
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError,
                       match="bad activations : Tensor had NaN values") as info:
        sess.run(y, {x: [1.0, np.nan, 3.0]})
    assert "numerics" in str(info.value)
    with pytest.raises(errors.InvalidArgumentError, match="Tensor had Inf values"):
        sess.run(y, {x: [1.0, np.inf, 3.0]})
    with pytest.raises(errors.InvalidArgumentError, match="Tensor had Inf and NaN values"):
        sess.run(y, {x: [-np.inf, np.nan, 3.0]})


def test_check_numerics_rejects_integers():
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        check_ops.check_numerics(tf.constant([1, 2]), "ints")


def test_verify_tensor_all_finite(sess):
    x = tf.placeholder(tf.float64, [2])
    y = check_ops.verify_tensor_all_finite(x, "x must be finite")
    assert y.dtype == tf.float64 and y.shape.as_list() == [2]
    assert sess.run(y, {x: [1.0, 2.0]}).tolist() == [1.0, 2.0]
    with pytest.raises(errors.InvalidArgumentError, match="x must be finite : Tensor had NaN"):
        sess.run(y, {x: [1.0, np.nan]})
    z = debugging.assert_all_finite(x, "alias")
    with pytest.raises(errors.InvalidArgumentError, match="alias"):
        sess.run(z, {x: [np.inf, 0.0]})


@pytest.mark.parametrize("fn, good, bad", [
    (check_ops.assert_equal, (2, 2), (2, 3)),
    (check_ops.assert_none_equal, (2, 3), (2, 2)),
    (check_ops.assert_less, (1, 2), (2, 2)),
    (check_ops.assert_less_equal, (2, 2), (3, 2)),
    (check_ops.assert_greater, (3, 2), (2, 2)),
    (check_ops.assert_greater_equal, (2, 2), (1, 2)),
])
def test_binary_asserts_at_run_time(sess, fn, good, bad):
    x = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int32, [])
    a = fn(x, y, message="custom message")
    assert a.type == "Assert"
    sess.run(a, {x: [good[0], good[0]], y: good[1]})
    with pytest.raises(errors.InvalidArgumentError, match=r"custom message.*did not hold"):
        sess.run(a, {x: [good[0], bad[0]], y: bad[1]})


def test_binary_assert_static_failure_raises_at_construction():
    with pytest.raises(errors.InvalidArgumentError, match="Condition x == y did not hold"):
        check_ops.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    assert check_ops.assert_equal(tf.constant(1), tf.constant(1)).type == "Assert"
    with pytest.raises(TypeError, match="same dtype"):
        check_ops.assert_equal(tf.constant(1), tf.constant(1.0))


@pytest.mark.parametrize("fn, ok, fail", [
    (check_ops.assert_positive, [1.0, 2.0], [1.0, 0.0]),
    (check_ops.assert_negative, [-1.0, -2.0], [-1.0, 0.0]),
    (check_ops.assert_non_negative, [0.0, 2.0], [0.0, -1.0]),
    (check_ops.assert_non_positive, [0.0, -2.0], [0.0, 1.0]),
])
def test_sign_asserts(sess, fn, ok, fail):
    x = tf.placeholder(tf.float32, [2])
    a = fn(x)
    sess.run(a, {x: ok})
    with pytest.raises(errors.InvalidArgumentError, match="did not hold element-wise"):
        sess.run(a, {x: fail})


def test_rank_type_integer_scalar_asserts(sess):
    x = tf.placeholder(tf.float32, [2, 3])
    assert check_ops.assert_rank(x, 2).type == "NoOp"
    with pytest.raises(ValueError, match=r"must have rank 3\.  Received rank 2"):  # TF: two spaces
        check_ops.assert_rank(x, 3)
    with pytest.raises(ValueError, match="must have rank at least 3"):
        check_ops.assert_rank_at_least(x, 3)
    u = tf.placeholder(tf.float32)
    a = check_ops.assert_rank(u, 1)
    sess.run(a, {u: [1.0, 2.0]})
    with pytest.raises(errors.InvalidArgumentError):
        sess.run(a, {u: [[1.0]]})
    with pytest.raises(TypeError, match=r"must be of type tf\.int32"):
        check_ops.assert_type(x, tf.int32)
    assert check_ops.assert_type(x, tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match="to be integer type"):
        check_ops.assert_integer(x)
    with pytest.raises(ValueError, match="Expected scalar shape"):
        check_ops.assert_scalar(x)
    s = tf.constant(1.0)
    assert check_ops.assert_scalar(s) is s
    assert check_ops.is_numeric_tensor(x) and not check_ops.is_numeric_tensor(3)


def test_add_check_numerics_ops(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.log(x)
    check = check_ops.add_check_numerics_ops()
    sess.run([y, check], {x: [1.0, 2.0]})
    with pytest.raises(errors.InvalidArgumentError, match="Tensor had"):
        sess.run([y, check], {x: [1.0, -1.0]})


def test_debugging_namespace():
    for name in debugging.__all__:
        assert hasattr(debugging, name), name
    assert debugging.check_numerics is check_ops.check_numerics
    assert debugging.Assert is Assert
    assert debugging.is_nan is tf.is_nan
