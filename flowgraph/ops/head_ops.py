"""Declarations of the estimator heads' label ops; the heads build them through
`flowgraph.estimators.head.vocab_ops` and `flowgraph/backends/cpu/kernels_head.py`
computes them.

=====================  ==============================  ==================================
op type                inputs -> outputs               attrs
=====================  ==============================  ==================================
``LabelVocabLookup``   string labels -> int64 ids      vocabulary, head_name
``ClassIdToString``    int ids -> strings              vocabulary
``HeadAssertShape``    x, logits -> (none)             last_dims, what, message
``HeadAssertRange``    x -> (none)                     low, high, message
=====================  ==============================  ==================================

None is differentiable: the checks run as control dependencies of an identity.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_tensor
>>> make_tensor("LabelVocabLookup", [tf.constant(["a"])], {"vocabulary": ["a"]}).dtype.name
'int64'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import fixed_dtype


@register_op("LabelVocabLookup", attrs={"vocabulary": [], "head_name": ""},
             dtype_fn=fixed_dtype(_dtypes.int64))
def _label_vocab_lookup_shape(op, labels):
    if op.inputs[0].dtype.base_dtype != _dtypes.string:
        raise op.shape_error(f"labels must be a string tensor, got {op.inputs[0].dtype.name}")
    return [labels]


@register_op("ClassIdToString", attrs={"vocabulary": []},
             dtype_fn=fixed_dtype(_dtypes.string))
def _class_id_to_string_shape(op, ids):
    if not op.inputs[0].dtype.base_dtype.is_integer:
        raise op.shape_error(f"class ids must be integers, got {op.inputs[0].dtype.name}")
    return [ids]


@register_op("HeadAssertShape", attrs={"last_dims": [], "what": "labels", "message": ""},
             num_outputs=0, dtype_fn=lambda op: [])
def _head_assert_shape_shape(op, x, logits):
    return []


@register_op("HeadAssertRange", attrs={"low": 0.0, "high": 1.0, "message": ""},
             num_outputs=0, dtype_fn=lambda op: [])
def _head_assert_range_shape(op, x):
    return []


not_differentiable("LabelVocabLookup", "ClassIdToString", "HeadAssertShape",
                   "HeadAssertRange")
