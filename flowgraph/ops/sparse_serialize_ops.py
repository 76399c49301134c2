"""Minibatches of SparseTensors as strings, with TensorFlow's ``SerializeManySparse`` and
``DeserializeManySparse`` ops, and ``DecodeJSONExample`` (a `tf.train.Example` in
protobuf's JSON form to its binary form).

`serialize_many_sparse` turns a SparseTensor ``[N, ...]`` into ``[N, 3]`` strings: for
each minibatch entry the serialized TensorProtos of its indices, values and shape (the
format of `serialize_sparse`); `deserialize_many_sparse` stacks such rows back into one
SparseTensor whose dense shape is the largest of theirs.

Example
-------
>>> import flowgraph as tf
>>> sp = tf.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 4])
>>> rows = tf.serialize_many_sparse(sp)
>>> back = tf.deserialize_many_sparse(rows, tf.float32)
>>> tf.Session().run([back.indices, back.dense_shape])
[array([[0, 1],
       [2, 0]]), array([3, 4])]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["decode_json_example", "deserialize_many_sparse", "serialize_many_sparse"]


@register_op("SerializeManySparse", attrs={"out_type": _dtypes.string},
             dtype_fn=fixed_dtype(_dtypes.string))
def _serialize_many_shape(op, indices, values, shape):
    return [TensorShape([None, 3])]


@register_op("DeserializeManySparse", attrs={"dtype": None}, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, _dtypes.as_dtype(op.attrs["dtype"]),
                                  _dtypes.int64])
def _deserialize_many_shape(op, serialized):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


@register_op("DecodeJSONExample", dtype_fn=fixed_dtype(_dtypes.string))
def _decode_json_shape(op, x):
    return [x]


not_differentiable("SerializeManySparse", "DeserializeManySparse", "DecodeJSONExample")


def serialize_many_sparse(sp_input, name=None, out_type=_dtypes.string):
    """``[N, 3]`` strings: each minibatch entry of the SparseTensor `sp_input` (rank >= 2)
    serialized as `serialize_sparse` would."""
    from flowgraph.ops.sparse_ops import _sp

    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise TypeError("tf.serialize_many_sparse: only out_type=tf.string is supported")
    sp = _sp(sp_input)
    return make_tensor("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape],
                       name=name or "SerializeManySparse")


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor ``[N, ...]`` of `serialize_many_sparse`'s rows (each entry's
    values must be `dtype`)."""
    s = convert_to_tensor(serialized_sparse, dtype=_dtypes.string, name="serialized_sparse")
    op = make_op("DeserializeManySparse", [s], {"dtype": _dtypes.as_dtype(dtype)},
                 name=name or "DeserializeManySparse")
    out = SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])
    if rank is not None:
        out.indices.set_shape([None, rank])
        out.dense_shape.set_shape([rank])
    return out


def decode_json_example(json_examples, name=None):
    """The binary `tf.train.Example` of each JSON string in protobuf's JSON mapping
    (``{"features": {"feature": {"x": {"floatList": {"value": [1.5]}}}}}``; bytes values
    are base64, int64 values may be strings).

    Example
    -------
    >>> import flowgraph as tf
    >>> js = '{"features": {"feature": {"n": {"int64List": {"value": ["7"]}}}}}'
    >>> ex = tf.train.Example.FromString(tf.Session().run(tf.decode_json_example(js)))
    >>> list(ex.features.feature["n"].int64_list.value)
    [7]
    """
    return make_tensor("DecodeJSONExample",
                       [convert_to_tensor(json_examples, dtype=_dtypes.string,
                                          name="json_examples")],
                       name=name or "DecodeJSONExample")
