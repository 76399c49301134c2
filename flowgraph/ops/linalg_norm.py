"""`tf.norm` / `tf.linalg.norm`: vector and matrix norms from reductions.

A vector norm reduces one axis (or, with ``axis=None``, every element as one vector);
a matrix norm reduces a pair of axes. The result is computed with the reduced axes kept
and squeezed at the end unless `keepdims`, so its gradient is the reductions' gradients.

| ord | vector (axis: int or None) | matrix (axis: a pair) |
| --- | --- | --- |
| 'euclidean' (default) | ``sqrt(sum x**2)`` | Frobenius |
| 'fro' | not allowed | ``sqrt(sum x**2)`` |
| 1 | ``sum |x|`` | largest column sum of ``|x|`` |
| np.inf | ``max |x|`` | largest row sum of ``|x|`` |
| p > 0 | ``(sum |x|**p) ** (1/p)`` | not allowed (as in TF 1.x; 2 needs an SVD) |

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.norm([[3.0, 4.0], [0.0, 0.0]], axis=1))
array([5., 0.], dtype=float32)
"""

from __future__ import annotations

import numbers

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_shape_ops, math_ops, math_reduce

__all__ = ["norm"]

_MATRIX_ORDS = ("euclidean", "fro", 1, np.inf)


def _is_positive_number(ord) -> bool:
    return isinstance(ord, numbers.Real) and not isinstance(ord, bool) and ord > 0


def _check_axis(axis):
    if axis is None:
        return None, False
    if isinstance(axis, numbers.Integral):
        return [int(axis)], False
    try:
        axes = [int(a) for a in axis]
    except (TypeError, ValueError):
        raise ValueError(f"norm: 'axis' must be None, an integer, or a tuple of 2 unique "
                         f"integers, got {axis!r}") from None
    if len(axes) == 1:
        return axes, False
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"norm: 'axis' must be None, an integer, or a tuple of 2 unique "
                         f"integers, got {axis!r}")
    return axes, True


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """The norm of `tensor` over `axis` (see the table in the module docstring).

    Parameters
    ----------
    tensor : Tensor
        Float, or complex for the euclidean norm (whose result is then complex, as in TF).
    ord : 'euclidean', 'fro', 1, 2, np.inf or a positive number
    axis : None, int, or pair of ints
        None: all elements as one vector; an int: vector norms along that axis; a pair:
        matrix norms over those two axes.
    keepdims : bool, default False
        Keep the reduced axes with length 1; `keep_dims` is the deprecated alias.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> m = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    >>> [float(v) for v in tf.Session().run([tf.norm(m, ord=1, axis=(0, 1)),
    ...                                      tf.norm(m, ord=np.inf)])]
    [6.0, 4.0]
    """
    if keepdims is not None and keep_dims is not None and bool(keepdims) != bool(keep_dims):
        raise ValueError("norm: keepdims and keep_dims (deprecated) disagree; pass keepdims")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axes, is_matrix = _check_axis(axis)
    if is_matrix:
        if ord not in _MATRIX_ORDS:
            raise ValueError(f"norm: 'ord' must be a supported matrix norm in "
                             f"{list(_MATRIX_ORDS)}, got {ord!r}")
    elif ord == "fro" or not (ord == "euclidean" or _is_positive_number(ord)):
        raise ValueError(f"norm: 'ord' must be a supported vector norm ('euclidean', 1, 2, "
                         f"np.inf or any positive real number), got {ord!r}"
                         + ("; 'fro' needs a pair of axes" if ord == "fro" else ""))
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        rank = x.shape.ndims
        if axes is not None and rank is not None:
            for a in axes:
                if not -rank <= a < rank:
                    raise ValueError(f"norm: axis {a} is out of range for a tensor of rank "
                                     f"{rank} (shape {x.shape})")
            axes = [a % rank for a in axes]
            if is_matrix and axes[0] == axes[1]:
                raise ValueError(f"norm: the two axes {axis!r} name the same dimension")
        if ord in ("euclidean", "fro") or ord == 2:
            # x * conj(x) as TensorFlow builds it: a complex input keeps its dtype
            sq = x * math_ops.conj(x)
            result = math_ops.sqrt(math_reduce.reduce_sum(sq, axes, keepdims=True))
        elif is_matrix:
            inner, outer = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = math_reduce.reduce_sum(math_ops.abs(x), inner, keepdims=True)
            result = math_reduce.reduce_max(sums, outer, keepdims=True)
        elif ord == np.inf:
            result = math_reduce.reduce_max(math_ops.abs(x), axes, keepdims=True)
        elif ord == 1:
            result = math_reduce.reduce_sum(math_ops.abs(x), axes, keepdims=True)
        else:
            p = float(ord)
            total = math_reduce.reduce_sum(math_ops.pow(math_ops.abs(x), p), axes,
                                           keepdims=True)
            result = math_ops.pow(total, 1.0 / p)
        # TensorFlow's result is the last op of the formula (keepdims) or a `Squeeze`
        # inside the scope, never an op named after the scope itself
        if keepdims:
            return result
        return array_shape_ops.squeeze(result, axes)
