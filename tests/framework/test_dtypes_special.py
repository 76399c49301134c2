"""Quantized, bfloat16, resource and variant dtypes: TensorFlow 1.x's names, enums and
properties (recorded from TensorFlow 2.15's tf.compat.v1 with the oracle)."""

import numpy as np
import pytest

import flowgraph as tf

# name -> (DataType enum, is_quantized, size, NumPy storage type)
QUANTIZED = {
    "qint8": (11, 1, np.int8),
    "quint8": (12, 1, np.uint8),
    "qint32": (13, 4, np.int32),
    "qint16": (15, 2, np.int16),
    "quint16": (16, 2, np.uint16),
}


@pytest.mark.parametrize("name", sorted(QUANTIZED))
def test_quantized_dtype_matches_tensorflow(name):
    enum, size, storage = QUANTIZED[name]
    d = getattr(tf, name)
    assert d is getattr(tf.dtypes, name) is tf.as_dtype(name) is tf.as_dtype(enum)
    assert (d.name, repr(d), str(d)) == (name, f"tf.{name}", f"<dtype: '{name}'>")
    assert d.as_datatype_enum == enum and d._as_ref.as_datatype_enum == enum + 100
    assert d.is_quantized and d.is_numpy_compatible and d.size == size
    assert not (d.is_integer or d.is_floating or d.is_unsigned or d.is_bool)
    assert d.as_numpy_dtype == np.dtype([(name, storage)])
    assert tf.as_dtype(d.as_numpy_dtype) is d  # the structured dtype maps back
    assert tf.as_dtype(storage) is not d  # but plain integers stay integers
    assert d == name and d != storage and not d.is_compatible_with(tf.as_dtype(storage))
    assert tf.as_dtype(name + "_ref").base_dtype is d
    assert d in tf.dtypes.QUANTIZED_DTYPES and d._as_ref in tf.dtypes.QUANTIZED_DTYPES
    with pytest.raises(TypeError, match="quantized"):
        d.min  # noqa: B018


def test_bfloat16_resource_variant():
    assert (tf.bfloat16.as_datatype_enum, tf.resource.as_datatype_enum,
            tf.variant.as_datatype_enum) == (14, 20, 21)
    assert tf.bfloat16.is_floating and not tf.bfloat16.is_quantized
    assert tf.bfloat16.size == 2 and tf.resource.size == 0 and tf.variant.size == 0
    assert tf.bfloat16.max == pytest.approx(3.38953e38, rel=1e-5)
    assert tf.bfloat16.min == -tf.bfloat16.max
    for d in (tf.resource, tf.variant):
        assert not d.is_numpy_compatible and not d.is_quantized
        with pytest.raises(KeyError, match="handles"):
            d.as_numpy_dtype  # noqa: B018
        with pytest.raises(TypeError):
            d.max  # noqa: B018
    assert tf.as_dtype("resource_ref").base_dtype is tf.resource
    assert 13 not in {d.as_datatype_enum for d in tf.dtypes.NUMERIC}  # no kernels use them


def test_bfloat16_numpy_type_from_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert tf.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16
    assert tf.as_dtype(ml_dtypes.bfloat16) is tf.bfloat16
    assert float(tf.bfloat16.max) == pytest.approx(3.38953e38, rel=1e-5)
    c = tf.constant([1.5, 2.0], dtype=tf.bfloat16)
    with tf.Session() as sess:
        out = sess.run(tf.cast(c, tf.float32))
    np.testing.assert_array_equal(out, [1.5, 2.0])


def test_quantized_placeholders_and_constants():
    p = tf.placeholder(tf.qint8, [2])
    c = tf.constant(np.array([1, 2], np.int8), dtype=tf.quint8)
    assert (p.dtype, c.dtype) == (tf.qint8, tf.quint8)
    with pytest.raises(TypeError, match="Expected qint8"):
        tf.constant([1, 2], dtype=tf.qint8)  # TensorFlow accepts NumPy values only
    with tf.Session() as sess:
        fed, computed, const, as_float = sess.run(
            [p, tf.identity(p), c, tf.cast(p, tf.float32)], {p: np.array([3, -4], np.int8)})
    # As TF 2.15 (oracle): a computed quantized value comes back as its plain integer
    # type, a fed one in the structured type it was fed as.
    assert fed.dtype == tf.qint8.as_numpy_dtype
    np.testing.assert_array_equal(fed.view(np.int8), [3, -4])
    assert computed.dtype == np.int8 and const.dtype == np.uint8
    np.testing.assert_array_equal(computed, [3, -4])
    np.testing.assert_array_equal(const, [1, 2])
    np.testing.assert_array_equal(as_float, [3.0, -4.0])


def test_quantized_fetches_on_the_fast_path_and_as_scalars():
    q = tf.quantize(tf.constant([0.0, 0.5, 1.0]), 0.0, 1.0, tf.quint8)
    scalar = tf.quantize(1.0, 0.0, 1.0, tf.quint8).output
    with tf.Session() as sess:
        runs = [sess.run([q.output, scalar]) for _ in range(3)]  # later runs: the fast path
    for codes, one in runs:
        assert codes.dtype == np.uint8 and codes.tolist() == [0, 128, 255]
        assert type(one) is np.uint8 and one == 255


def test_ops_without_quantized_kernels_say_so():
    p = tf.placeholder(tf.qint8, [2])
    with pytest.raises(TypeError, match=r"'AddV2' has DataType qint8 not in list"):
        tf.add(p, p)
    h = tf.placeholder(tf.resource, [])
    assert h.dtype is tf.resource
