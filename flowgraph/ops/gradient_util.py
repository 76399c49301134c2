"""Helpers of gradient construction shared by `gradients` (the `tf.gradients` pass) and
`control_flow_grad` (the backward while loop): summing contributions and zero gradients.

They live apart from `gradients`, which imports `control_flow_grad` to register the
control-flow gradients, so that `control_flow_grad` needs no import of `gradients`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.gradient_util import aggregate
>>> with tf.Session() as sess:
...     print(sess.run(aggregate([tf.constant(1.0), tf.constant(2.0)])))
3.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops as _array
from flowgraph.ops import math_ops as _math

__all__: list[str] = []


def is_differentiable_dtype(dtype) -> bool:
    """Floating and complex tensors carry gradients, and so do variants (a TensorList's
    gradient is a list: `flowgraph/ops/list_ops.py`); integers, bools and strings do not."""
    base = _dtypes.as_dtype(dtype).base_dtype
    return base.is_floating or base.is_complex or base == _dtypes.variant


def add_n_or_add(tensors: list[Tensor], name: str | None = None) -> Tensor:
    """The sum of `tensors` (same dtype) as one AddN op (pairwise Add if AddN is absent)."""
    if len(tensors) == 1:
        return tensors[0]
    from flowgraph.framework.registry import has_op_def

    if has_op_def("AddN"):
        from flowgraph.ops.op_util import make_tensor

        return make_tensor("AddN", tensors, {"N": len(tensors)}, name=name or "AddN")
    total = tensors[0]
    for t in tensors[1:]:
        total = _math.add(total, t)
    return total


def _dense(g) -> Tensor:
    return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g


def aggregate(contributions: list, name: str | None = None):
    """Sum gradient contributions: Tensors with AddN, IndexedSlices by concatenation;
    a mix is densified first. Returns None for an empty list."""
    contributions = [g for g in contributions if g is not None]
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    if all(isinstance(g, IndexedSlices) for g in contributions):
        dense_shape = next((g.dense_shape for g in contributions
                            if g.dense_shape is not None), None)
        indices = [g.indices for g in contributions]
        if len({t.dtype.base_dtype for t in indices}) > 1:
            indices = [_math.cast(t, _dtypes.int64) for t in indices]
        return IndexedSlices(_array.concat([g.values for g in contributions], 0),
                             _array.concat(indices, 0), dense_shape)
    return add_n_or_add([_dense(g) for g in contributions], name=name)


def _zeros_for(t: Tensor) -> Tensor:
    return _array.zeros_like(convert_to_tensor(t) if t.dtype.is_ref_dtype else t,
                             optimize=False)
