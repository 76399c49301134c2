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

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import make_tensor

_TRUEDIV = {_dtypes.int8: _dtypes.float32, _dtypes.uint8: _dtypes.float32,
            _dtypes.int16: _dtypes.float32, _dtypes.uint16: _dtypes.float32,
            _dtypes.int32: _dtypes.float64, _dtypes.int64: _dtypes.float64}

__all__ = ["sparse_dense_cwise_div", "sparse_dense_cwise_mul"]


def _cwise(sp, dense, op_type: str, name=None, default_name=None) -> SparseTensor:
    # As TensorFlow: the result's static shape comes from its dense-shape tensor alone
    # (a placeholder's ``set_shape`` does not carry over).
    with name_scope(name, default_name or op_type, [sp.values, dense]) as scope:
        dense = convert_to_tensor(dense, dtype=sp.dtype.base_dtype,
                                  name="y" if default_name else "dense")
        values = sp.values
        if default_name == "truediv" and values.dtype.base_dtype in _TRUEDIV:
            # ``sp / y`` of integers divides in floating point, as dense ``/`` does.
            to = _TRUEDIV[values.dtype.base_dtype]
            values, dense = cast(values, to), cast(dense, to)
        values = make_tensor(op_type, [sp.indices, values, sp.dense_shape, dense],
                             name=scope)
        return SparseTensor(sp.indices, values, sp.dense_shape)


def sparse_dense_cwise_mul(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input * dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, "SparseDenseCwiseMul", name)


def sparse_dense_cwise_div(sp_input: SparseTensor, dense, name=None) -> SparseTensor:
    """``sp_input / dense`` at the entries of `sp_input` (dense broadcast to its shape)."""
    return _cwise(sp_input, dense, "SparseDenseCwiseDiv", name)


def _install() -> None:
    # The operators open TensorFlow's ``mul``/``truediv``/``div`` scopes, convert the
    # dense operand there as ``y`` and name the op after the scope.
    SparseTensor.__mul__ = lambda self, other: _cwise(
        self, other, "SparseDenseCwiseMul", default_name="mul")
    SparseTensor.__truediv__ = lambda self, other: _cwise(
        self, other, "SparseDenseCwiseDiv", default_name="truediv")
    SparseTensor.__div__ = lambda self, other: _cwise(
        self, other, "SparseDenseCwiseDiv", default_name="div")


_install()
