"""`tf.TypeSpec` members a TF1 program uses: the read-only `dtype`/`shape`/`name`
properties, `is_subtype_of`, `most_specific_common_supertype`, `is_compatible_with` and
`from_tensor`; expectations are TensorFlow 2.15's (tf.compat.v1)."""

import pytest

import flowgraph as tf


def test_spec_fields_are_read_only_class_properties():
    for cls, fields in [(tf.TensorSpec, ("dtype", "shape", "name")),
                        (tf.SparseTensorSpec, ("dtype", "shape")),
                        (tf.RaggedTensorSpec, ("dtype", "shape", "ragged_rank",
                                               "row_splits_dtype", "flat_values_spec"))]:
        for field in fields:
            assert isinstance(getattr(cls, field), property), (cls, field)
    spec = tf.TensorSpec([2, 3], tf.float32, name="a")
    with pytest.raises(AttributeError, match="no setter"):
        spec.dtype = tf.int32
    assert (spec.shape.as_list(), spec.dtype, spec.name) == ([2, 3], tf.float32, "a")


def test_is_subtype_of():
    a = tf.TensorSpec([2, 3], tf.float32, name="a")
    b = tf.TensorSpec([None, 3], tf.float32)
    assert [a.is_subtype_of(b), b.is_subtype_of(a),
            a.is_subtype_of(tf.TensorSpec([2, 3], tf.int32)),
            a.is_subtype_of(tf.TensorSpec(None, tf.float32, name="a")),
            a.is_subtype_of(tf.TensorSpec([2, 3]))] == [False, False, False, True, False]
    assert tf.TensorSpec([2, 3]).is_subtype_of(tf.TensorSpec([None, 3]))
    assert tf.SparseTensorSpec([2, 3]).is_subtype_of(tf.SparseTensorSpec([None, 3]))
    assert tf.RaggedTensorSpec([2, None], tf.int32).is_subtype_of(
        tf.RaggedTensorSpec([None, None], tf.int32))
    assert tf.IndexedSlicesSpec([2]).is_subtype_of(tf.IndexedSlicesSpec([None]))
    assert not tf.OptionalSpec(a).is_subtype_of(tf.OptionalSpec(b))


def test_most_specific_common_supertype():
    a = tf.TensorSpec([2, 3], tf.float32, name="a")
    assert a.most_specific_common_supertype([tf.TensorSpec([None, 3])]) is None
    assert repr(a.most_specific_common_supertype([tf.TensorSpec([2, 4], name="a")])) == \
        "TensorSpec(shape=(2, ?), dtype=tf.float32, name='a')"
    assert a.most_specific_common_supertype([tf.TensorSpec([2, 3], tf.int32)]) is None
    assert a.most_specific_common_supertype([]) == a
    assert a.most_specific_common_supertype([tf.TensorSpec([2], name="a")]) is None
    sparse = tf.SparseTensorSpec([2, 3]).most_specific_common_supertype(
        [tf.SparseTensorSpec([4, 3])])
    assert sparse.shape.as_list() == [None, 3]
    ragged = tf.RaggedTensorSpec([2, None], tf.int32).most_specific_common_supertype(
        [tf.RaggedTensorSpec([3, None], tf.int32)])
    assert repr(ragged) == ("RaggedTensorSpec(TensorShape([Dimension(None), "
                            "Dimension(None)]), tf.int32, 1, tf.int64)")


def test_compatible_with_values_and_from_tensor():
    with tf.Graph().as_default():
        assert tf.TensorSpec([None, 3]).is_compatible_with(tf.zeros([5, 3]))
        assert repr(tf.TensorSpec.from_tensor(tf.zeros([5, 3], name="zz"))) == \
            "TensorSpec(shape=(5, 3), dtype=tf.float32, name='zz')"


def test_nested_and_composite_specs():
    named = tf.TensorSpec([2, 3], name="x")
    assert tf.TensorSpec([2, 3]).most_specific_common_supertype([named]) is None
    assert tf.TensorSpec([2, 3]).most_specific_common_supertype(
        [tf.SparseTensorSpec([2, 3])]) is None
    assert not tf.TensorSpec([2, 3]).is_subtype_of(tf.SparseTensorSpec([2, 3]))
    # TensorArraySpec compares dtype and dynamic_size only, as TensorFlow's
    ta = tf.TensorArraySpec([2], tf.float32)
    assert ta.is_subtype_of(tf.TensorArraySpec([3], tf.float32))
    assert not ta.is_subtype_of(tf.TensorArraySpec([2], tf.float32, dynamic_size=True))
    merged = ta.most_specific_common_supertype(
        [tf.TensorArraySpec([2], tf.float32, infer_shape=False)])
    assert (merged.element_shape.as_list(), merged.infer_shape) == ([2], False)
    pair = tf.data.DatasetSpec((tf.TensorSpec([2]), tf.TensorSpec([3])))
    wider = tf.data.DatasetSpec((tf.TensorSpec([None]), tf.TensorSpec([3])))
    assert pair.is_subtype_of(wider) and not wider.is_subtype_of(pair)
    common = pair.most_specific_common_supertype(
        [tf.data.DatasetSpec((tf.TensorSpec([4]), tf.TensorSpec([3])))])
    assert [s.shape.as_list() for s in common.element_spec] == [[None], [3]]
    assert not tf.RaggedTensorSpec([2, None, None], tf.int32, ragged_rank=1).is_subtype_of(
        tf.RaggedTensorSpec([2, None, None], tf.int32))
    slices = tf.IndexedSlicesSpec([2, 3]).most_specific_common_supertype(
        [tf.IndexedSlicesSpec([4, 3])])
    assert (slices.shape.as_list(), slices.indices_shape.as_list()) == ([None, 3], [None])
    optional = tf.OptionalSpec(tf.TensorSpec([2])).most_specific_common_supertype(
        [tf.OptionalSpec(tf.TensorSpec([3]))])
    assert optional.element_spec == tf.TensorSpec([None])
    assert tf.TensorSpec([2], name="a").is_compatible_with(tf.TensorSpec([2], name="b"))
    assert repr(tf.TensorSpec.from_spec(tf.TensorSpec([2], tf.int32, name="q"))) == \
        "TensorSpec(shape=(2,), dtype=tf.int32, name='q')"


def test_from_value():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2, dynamic_size=True, element_shape=[3])
        spec = tf.TensorArraySpec.from_value(ta)
        assert (spec.element_shape.as_list(), spec.dtype, spec.dynamic_size,
                spec.infer_shape) == ([3], tf.float32, True, True)
        spec = tf.TensorArraySpec.from_value(tf.TensorArray(tf.int32, size=2,
                                                            infer_shape=False))
        assert (spec.element_shape.ndims, spec.infer_shape) == (None, False)
        with pytest.raises(TypeError, match="Expected value to be a TensorArray"):
            tf.TensorArraySpec.from_value(tf.zeros([2]))
        optional = tf.data.experimental.Optional.from_value(tf.zeros([2]))
        assert tf.OptionalSpec.from_value(optional) == \
            tf.OptionalSpec(tf.TensorSpec([2], tf.float32))
        with pytest.raises(AttributeError, match="element_spec"):
            tf.OptionalSpec.from_value(tf.zeros([2]))
