"""Diagonals and bands of (batches of) matrices, and the vector cross product:
``MatrixBandPart``, ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``, ``Diag``,
``DiagPart`` and ``Cross``, with TensorFlow 1.x's op types and gradients, and `trace`
built from them. `matrix_diag`, `matrix_diag_part` and `matrix_set_diag` emit the V3 op
types, as TensorFlow 2.x does (`flowgraph/ops/linalg_diag_v3.py`); the V1 op types stay for
graphs that hold them.

The matrix ops act on the last two axes; leading axes are a batch. ``MatrixDiagPart``
of an ``m x n`` matrix has ``min(m, n)`` entries. ``Diag``/``DiagPart`` are the tensor
forms: ``Diag`` of a rank-k tensor has rank 2k.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
>>> with tf.Session() as sess:
...     print(sess.run(tf.matrix_band_part(x, 0, 1)))
[[1. 2. 0.]
 [0. 5. 6.]
 [0. 0. 9.]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.linalg_diag_v3 import matrix_diag, matrix_diag_part, matrix_set_diag
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import make_tensor, op_scope

__all__ = ["cross", "diag", "diag_part", "matrix_band_part", "matrix_diag",
           "matrix_diag_part", "matrix_set_diag", "trace"]


def _need_matrix(op, x, what="input"):
    if x.ndims is not None and x.ndims < 2:
        raise op.shape_error(f"{what} must be a matrix or a batch of matrices (rank >= 2), "
                             f"got shape {x}")


@register_op("MatrixBandPart")
def _band_part_shape(op, x, num_lower, num_upper):
    _need_matrix(op, x)
    return [x]


@register_op("MatrixDiag")
def _matrix_diag_shape(op, d):
    if d.ndims is None:
        return [TensorShape(None)]
    if d.ndims < 1:
        raise op.shape_error(f"diagonal must have rank >= 1, got shape {d}")
    return [TensorShape(d.dims + d.dims[-1:])]


def _min_dim(a: Dimension, b: Dimension) -> Dimension:
    if a.value is None or b.value is None:
        return Dimension(None)
    return Dimension(min(a.value, b.value))


@register_op("MatrixDiagPart")
def _matrix_diag_part_shape(op, x):
    if x.ndims is None:
        return [TensorShape(None)]
    _need_matrix(op, x)
    return [TensorShape([*x.dims[:-2], _min_dim(x.dims[-2], x.dims[-1])])]


@register_op("MatrixSetDiag")
def _matrix_set_diag_shape(op, x, d):
    _need_matrix(op, x)
    if x.ndims is not None and d.ndims is not None:
        want = TensorShape([*x.dims[:-2], _min_dim(x.dims[-2], x.dims[-1])])
        if not d.is_compatible_with(want):
            raise op.shape_error(f"diagonal has shape {d} but a matrix of shape {x} needs "
                                 f"a diagonal of shape {want}")
    return [x]


@register_op("Diag")
def _diag_shape(op, d):
    if d.ndims is None:
        return [TensorShape(None)]
    if d.ndims < 1:
        raise op.shape_error(f"diagonal must have rank >= 1, got shape {d}")
    return [TensorShape(d.dims + d.dims)]


@register_op("DiagPart")
def _diag_part_shape(op, x):
    if x.ndims is None:
        return [TensorShape(None)]
    if x.ndims % 2 or x.ndims == 0:
        raise op.shape_error(f"input must have an even rank >= 2, got shape {x}")
    k = x.ndims // 2
    for a, b in zip(x.dims[:k], x.dims[k:]):
        if not a.is_compatible_with(b):
            raise op.shape_error(f"input of shape {x}: the first half of the dimensions "
                                 "must equal the second half")
    return [TensorShape([a.merge_with(b) for a, b in zip(x.dims[:k], x.dims[k:])])]


@register_op("Cross")
def _cross_shape(op, a, b):
    if not a.is_compatible_with(b):
        raise op.shape_error(f"a and b must have the same shape, got {a} and {b}")
    out = a.merge_with(b)
    if out.ndims is not None and (out.ndims == 0 or not out.dims[-1].is_compatible_with(3)):
        raise op.shape_error(f"the last dimension must be 3 (3-vectors), got shape {out}")
    return [out]


def matrix_band_part(input, num_lower, num_upper, name=None):
    """Keep a band of each matrix: entry ``(i, j)`` stays when ``i - j <= num_lower`` and
    ``j - i <= num_upper`` (a negative count keeps that whole triangle), else 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.matrix_band_part(tf.ones([2, 2]), -1, 0)).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    x = convert_to_tensor(input, name="input")
    lo = convert_to_tensor(num_lower, dtype=_dtypes.int64, name="num_lower")
    up = convert_to_tensor(num_upper, dtype=_dtypes.int64, name="num_upper")
    return make_tensor("MatrixBandPart", [x, lo, up], name=name or "MatrixBandPart")


def diag(diagonal, name=None):
    """The rank-2k tensor with `diagonal` (rank k) on its diagonal:
    ``out[i1..ik, i1..ik] = diagonal[i1..ik]``, zero elsewhere.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.diag([1, 2])).tolist()
    [[1, 0], [0, 2]]
    """
    with op_scope(name, "Diag", (diagonal,)) as scope:
        return make_tensor("Diag", [convert_to_tensor(diagonal, name="diagonal")],
                           name=scope)


def diag_part(input, name=None):
    """The inverse of `diag`: ``out[i1..ik] = input[i1..ik, i1..ik]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.diag_part([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    return make_tensor("DiagPart", [convert_to_tensor(input, name="input")],
                       name=name or "DiagPart")


def trace(x, name=None):
    """The sum of each matrix's main diagonal (``[...]`` for ``[..., m, n]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.trace([[1, 2], [3, 4]])).tolist()
    5
    """
    with name_scope(name, "Trace", [x]) as scope:
        return reduce_sum(matrix_diag_part(x), -1, name=scope)


def cross(a, b, name=None):
    """The cross product of the 3-vectors along the last axis of `a` and `b`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
    return make_tensor("Cross", [a, b], name=name or "Cross")


# -- gradients ----------------------------------------------------------------------------

@register_gradient("MatrixBandPart")
def _band_part_grad(op, grad):
    return [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


@register_gradient("MatrixDiag")
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad)]


@register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    return [matrix_set_diag(zeros_like(x), grad)]


@register_gradient("MatrixSetDiag")
def _matrix_set_diag_grad(op, grad):
    return [matrix_set_diag(grad, zeros_like(op.inputs[1])), matrix_diag_part(grad)]


@register_gradient("Diag")
def _diag_grad(op, grad):
    return [diag_part(grad)]


@register_gradient("DiagPart")
def _diag_part_grad(op, grad):
    return [diag(grad)]


@register_gradient("Cross")
def _cross_grad(op, grad):
    a, b = op.inputs
    return [cross(b, grad), cross(grad, a)]
