"""tf.constant / tf.convert_to_tensor conversion rules (checked with the TF oracle)."""

import numpy as np
import pytest

import flowgraph as tf


def _d(value, **kw):
    t = tf.convert_to_tensor(value, **kw)
    return t.dtype.name, t.shape.as_list(), t.op.type


@pytest.mark.parametrize(("value", "dtype", "shape"), [
    (1.0, "float32", []),
    (1, "int32", []),
    (2**31, "int64", []),
    (-(2**31), "int32", []),
    (2**63, "uint64", []),
    (True, "bool", []),
    ("abc", "string", []),
    (b"abc", "string", []),
    (["a", "bc"], "string", [2]),
    ([1, 2.0], "float32", [2]),
    ([1, True], "int32", [2]),
    ([], "float32", [0]),
    ([[], []], "float32", [2, 0]),
    (1 + 2j, "complex128", []),
    ((1, 2), "int32", [2]),
])
def test_python_values(value, dtype, shape):
    assert _d(value) == (dtype, shape, "Const")


@pytest.mark.parametrize("np_dtype", [np.float64, np.int64, np.uint8, np.float16, np.bool_])
def test_numpy_keeps_dtype(np_dtype):
    arr = np.zeros([2, 3], dtype=np_dtype)
    dtype, shape, _ = _d(arr)
    assert dtype == np.dtype(np_dtype).name
    assert shape == [2, 3]
    assert _d(np.float64(1))[0] == "float64"
    assert _d(np.array(["a", "b"]))[0] == "string"


def test_values_round_trip(sess):
    arr = np.arange(6, dtype=np.int64).reshape(2, 3)
    got = sess.run(tf.constant(arr))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, arr)
    s = sess.run(tf.constant(["a", "bc"]))
    assert list(s) == [b"a", b"bc"]


@pytest.mark.parametrize(("value", "dtype", "want"), [
    (1, tf.float32, "float32"),
    (np.float32(1), tf.float64, "float64"),
    (np.array([1.0]), tf.int32, "int32"),  # NumPy values are cast, as in TF
    (np.array([1.5]), tf.float32, "float32"),
    (np.array([1]), tf.int32, "int32"),
    (True, tf.int32, "int32"),
    (1, "float32", "float32"),
    (1, np.float64, "float64"),
    (1.5, tf.complex64, "complex64"),
    (2**40, tf.float32, "float32"),
])
def test_dtype_argument(value, dtype, want):
    assert _d(value, dtype=dtype)[0] == want


@pytest.mark.parametrize(("value", "dtype"), [
    (1.5, tf.int32),
    (1.0, tf.int32),
    (1, tf.bool),
    (1, tf.string),
    ("a", tf.float32),
    (1 + 1j, tf.float32),
    (300, tf.int8),  # TensorFlow wraps silently; flowgraph refuses
    (-1, tf.uint8),
])
def test_dtype_argument_type_errors(value, dtype):
    with pytest.raises(TypeError, match="Expected"):
        tf.constant(value, dtype=dtype)


def test_constant_int_dtype_message():
    with pytest.raises(TypeError, match=r"Expected int32, but got 1\.5 of type 'float'"):
        tf.constant(1.5, dtype=tf.int32)


def test_bad_values():
    with pytest.raises(ValueError, match="None values not supported"):
        tf.convert_to_tensor(None)
    with pytest.raises(TypeError):
        tf.convert_to_tensor([1, None])
    with pytest.raises(TypeError):
        tf.convert_to_tensor(["a", 1])
    with pytest.raises((TypeError, ValueError)):
        tf.convert_to_tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        tf.convert_to_tensor({"a": 1})
    with pytest.raises(TypeError):
        tf.convert_to_tensor(lambda: 1)
    with pytest.raises(TypeError):
        tf.convert_to_tensor(tf.float32)
    with pytest.raises(TypeError, match="Operation"):
        tf.convert_to_tensor(tf.no_op())
    with pytest.raises(TypeError):
        tf.constant(1, dtype="foo")


def test_tensor_passthrough_and_dtype_mismatch():
    c = tf.constant(1.0)
    assert tf.convert_to_tensor(c) is c
    assert tf.convert_to_tensor(c, dtype=tf.float32) is c
    with pytest.raises(ValueError, match="requested dtype int32 for Tensor with dtype float32"):
        tf.convert_to_tensor(c, dtype=tf.int32)
    with pytest.raises(TypeError, match=r"non-tensor|Python or NumPy value"):
        tf.constant(c)


def test_preferred_dtype_and_name():
    assert _d(1, preferred_dtype=tf.float32)[0] == "float32"
    assert _d(1.5, preferred_dtype=tf.int32)[0] == "float32"  # hint dropped
    assert tf.convert_to_tensor(1.0, name="myc").name == "myc:0"
    assert tf.constant(1, name="q").name == "q:0"
    assert tf.constant(1, name=None).name == "Const_2:0"  # two Consts made above


def test_shape_argument(sess):
    t = tf.constant(0.5, shape=[2, 3])
    assert t.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(t), np.full([2, 3], 0.5, np.float32))
    r = tf.constant([1, 2, 3, 4, 5, 6], shape=[2, 3])
    np.testing.assert_array_equal(sess.run(r), [[1, 2, 3], [4, 5, 6]])
    # TF1: a shorter list is padded with its last element
    p = tf.constant([1, 2], shape=[2, 3])
    np.testing.assert_array_equal(sess.run(p), [[1, 2, 2], [2, 2, 2]])
    assert tf.constant(1, shape=[]).shape.as_list() == []
    assert tf.constant([], shape=[2]).shape.as_list() == [2]
    with pytest.raises(ValueError, match="Too many elements"):
        tf.constant([1, 2, 3, 4, 5, 6, 7], shape=[2, 3])
    with pytest.raises(TypeError):
        tf.constant(1, shape=[None, 2])
    with pytest.raises(TypeError):
        tf.constant(1, shape=tf.constant([2]))


def test_verify_shape():
    assert tf.constant([1, 2, 3], shape=[3], verify_shape=True).shape.as_list() == [3]
    with pytest.raises(TypeError, match=r"Expected Tensor's shape: \(1, 3\), but got \(3,\)"):
        tf.constant([1, 2, 3], shape=[1, 3], verify_shape=True)
    with pytest.raises(TypeError):
        tf.constant(1, shape=[2], verify_shape=True)


def test_constant_value_is_frozen_copy():
    arr = np.array([1.0, 2.0], dtype=np.float32)
    t = tf.constant(arr)
    arr[0] = 9.0
    stored = t.op.attrs["value"]  # the held array (get_attr gives a TensorProto)
    assert stored[0] == 1.0
    with pytest.raises(ValueError):
        stored[0] = 5.0


def test_variable_converts_to_snapshot():
    v = tf.Variable([1.0, 2.0], name="v")
    t = tf.convert_to_tensor(v)
    assert t.name == "v/read:0" and t.op.type == "Identity"
    assert t is v.value()
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    assert tf.convert_to_tensor(v, as_ref=True) is v.op.outputs[0]


def test_tensor_shape_and_dimension_conversion(sess):
    t = tf.convert_to_tensor(tf.TensorShape([2, 3]))
    assert t.name == "shape_as_tensor:0" and t.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(t), [2, 3])
    with pytest.raises(ValueError, match="partially known"):
        tf.convert_to_tensor(tf.TensorShape([2, None]))
    assert tf.convert_to_tensor(tf.Dimension(3)).dtype == tf.int32


def _has_stack():
    from flowgraph.ops import array_ops

    return hasattr(array_ops, "stack")


def test_lists_mixing_tensors_are_packed(sess):
    if not _has_stack():
        pytest.skip("tf.stack is not available yet")
    x = tf.constant(1.0, name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    p = tf.convert_to_tensor([x, 2.0])
    assert (p.op.type, p.name, p.dtype) == ("Pack", "packed:0", tf.float32)
    assert tf.convert_to_tensor([x, 2]).dtype == tf.float32  # the tensor's dtype wins
    nested = tf.convert_to_tensor([[x, x], [1.0, 2.0]])
    assert nested.shape.as_list() == [2, 2]
    pv = tf.convert_to_tensor([v, v])
    assert pv.shape.as_list() == [2, 2]
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(nested), [[1.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(sess.run(pv), [[1.0, 2.0], [1.0, 2.0]])


def test_placeholder_with_default(sess):
    p = tf.placeholder_with_default([1.0, 2.0], shape=[None])
    assert (p.dtype, p.shape.as_list(), p.op.type) == (
        tf.float32, [None], "PlaceholderWithDefault")
    assert p.name == "PlaceholderWithDefault:0"
    np.testing.assert_array_equal(sess.run(p), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(p, feed_dict={p: [5.0, 6.0, 7.0]}), [5.0, 6.0, 7.0])
    assert tf.placeholder_with_default(1, shape=[], name="pw").name == "pw:0"
    assert tf.placeholder_with_default(1, shape=None).shape.ndims is None
    with pytest.raises(ValueError):
        tf.placeholder_with_default([1.0, 2.0], shape=[3])
