"""Declarations of the ``tf.data.experimental.Optional`` ops and of the iterator-state
ops behind ``make_saveable_from_iterator``. `flowgraph.data.dataset_ops_optional`
builds them; kernels: `flowgraph/backends/cpu/kernels_data_experimental.py`.

=================================  =================================================
op type                            what it does
=================================  =================================================
``OptionalFromValue(*components)``  a variant holding the components
``OptionalNone()``                 a variant holding nothing
``OptionalHasValue(optional)``     bool scalar
``OptionalGetValue(optional)``     the components; InvalidArgumentError when empty
``IteratorGetNextAsOptional(h)``   the next element as an optional (empty at the end)
``SerializeIterator(h)``           the iterator's position (a JSON string)
``DeserializeIterator(h, state)``  restarts the iterator at a saved position
``DatasetToTFRecord(*captured, filename, compression_type)``  writes a dataset's records
``SaveDataset(*captured, path, compression)``  writes TF's saved-dataset directory
``DatasetVariant(*captured)``      a dataset as a variant (``to_variant``)
=================================  =================================================

An optional travels between kernels as a scalar object array holding a tuple of arrays
(or None when empty). An iterator's state holds the count of elements it has produced
since its initialization; restoring re-runs its dataset from the start and skips that
many (so a restored pipeline replays the same elements when its dataset is
deterministic: a seeded shuffle, no ``sloppy`` interleave).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_tensor
>>> opt = make_tensor("OptionalNone", [])
>>> tf.Session().run(make_tensor("OptionalHasValue", [opt]))
False
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import fixed_dtype

__all__: list[str] = []


def _scalar_shape(op, *inputs):
    return [TensorShape([])]


def _typed_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["output_types"]]


_TYPED = {"output_types": [], "output_shapes": []}

register_op("OptionalFromValue", attrs={"Toutput_types": []},
            dtype_fn=fixed_dtype(_dtypes.variant))(_scalar_shape)
register_op("OptionalNone", dtype_fn=fixed_dtype(_dtypes.variant))(_scalar_shape)
register_op("OptionalHasValue", dtype_fn=fixed_dtype(_dtypes.bool))(_scalar_shape)
register_op("IteratorGetNextAsOptional", attrs=dict(_TYPED),
            dtype_fn=fixed_dtype(_dtypes.variant), stateful=True)(_scalar_shape)
# The state is a string here (TensorFlow's is a variant), so that a Saver can write it.
register_op("SerializeIterator", attrs={"external_state_policy": 0},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(_scalar_shape)


@register_op("OptionalGetValue", attrs=dict(_TYPED),
             num_outputs=lambda op: len(op.attrs["output_types"]), dtype_fn=_typed_dtypes)
def _optional_get_value_shape(op, optional):
    return [as_shape(s) for s in op.attrs["output_shapes"]]


@register_op("DeserializeIterator", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _deserialize_iterator_shape(op, handle, state):
    return []


@register_op("DatasetToTFRecord", attrs={"dataset_id": ""}, num_outputs=0,
             dtype_fn=lambda op: [], stateful=True)
def _dataset_to_tfrecord_shape(op, *inputs):
    return []


@register_op("SaveDataset", attrs={"dataset_id": ""}, num_outputs=0,
             dtype_fn=lambda op: [], stateful=True)
def _save_dataset_shape(op, *inputs):
    return []


register_op("DatasetVariant", attrs={"dataset_id": ""},
            dtype_fn=fixed_dtype(_dtypes.variant), stateful=True)(_scalar_shape)

not_differentiable("DatasetVariant", "DatasetToTFRecord", "SaveDataset", "OptionalFromValue",
                   "OptionalNone", "OptionalHasValue", "OptionalGetValue",
                   "IteratorGetNextAsOptional", "SerializeIterator", "DeserializeIterator")
