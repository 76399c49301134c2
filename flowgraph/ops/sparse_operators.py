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
from flowgraph.ops.op_util import make_tensor

__all__ = ["sparse_dense_cwise_div", "sparse_dense_cwise_mul"]


def _cwise(sp, dense, op_type: str, name=None) -> SparseTensor:
    with name_scope(name, op_type, [sp.values, dense]) as scope:
        dense = convert_to_tensor(dense, dtype=sp.dtype.base_dtype, name="dense")
        values = make_tensor(op_type, [sp.indices, sp.values, sp.dense_shape, dense],
                             name=scope)
        out = SparseTensor(sp.indices, values, sp.dense_shape)
        out._shape_hint = sp._shape_hint
        return out


def sparse_dense_cwise_mul(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input * dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, "SparseDenseCwiseMul", name)


def sparse_dense_cwise_div(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input / dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, "SparseDenseCwiseDiv", name)


def _install() -> None:
    SparseTensor.__mul__ = lambda self, other: sparse_dense_cwise_mul(self, other)
    SparseTensor.__truediv__ = lambda self, other: sparse_dense_cwise_div(self, other)
    SparseTensor.__div__ = SparseTensor.__truediv__


_install()
