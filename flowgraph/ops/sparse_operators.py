"""`SparseTensor` arithmetic with dense tensors: ``sp * dense``, ``sp / dense`` (as
TensorFlow's ``SparseDenseCwiseMul``/``Div``): the dense operand is broadcast to the
sparse tensor's dense shape and read at its entries; the result keeps the sparse
tensor's indices. Installed as `SparseTensor` operators when the op library loads.

Example
-------
>>> import flowgraph as tf
>>> sp = tf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
>>> tf.Session().run((sp * tf.constant([[1.0, 10.0], [100.0, 1000.0]])).values).tolist()
[20.0, 300.0]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import math_ops
from flowgraph.ops.array_index_ops import gather_nd
from flowgraph.ops.sort_ops import broadcast_to

__all__ = ["sparse_dense_cwise_div", "sparse_dense_cwise_mul"]


def _at_entries(sp: SparseTensor, dense, what: str):
    dense = convert_to_tensor(dense, dtype=sp.dtype.base_dtype, name="dense")
    if dense.shape.ndims == 0:
        return dense
    return gather_nd(broadcast_to(dense, sp.dense_shape), sp.indices)


def _cwise(sp, dense, fn, what: str, name=None) -> SparseTensor:
    with name_scope(name, what, [sp.values, dense]):
        out = SparseTensor(sp.indices, fn(sp.values, _at_entries(sp, dense, what)),
                           sp.dense_shape)
        out._shape_hint = sp._shape_hint
        return out


def sparse_dense_cwise_mul(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input * dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, math_ops.multiply, "SparseDenseCwiseMul", name)


def sparse_dense_cwise_div(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input / dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, math_ops.truediv, "SparseDenseCwiseDiv", name)


def _install() -> None:
    SparseTensor.__mul__ = lambda self, other: sparse_dense_cwise_mul(self, other)
    SparseTensor.__truediv__ = lambda self, other: sparse_dense_cwise_div(self, other)
    SparseTensor.__div__ = SparseTensor.__truediv__


_install()
