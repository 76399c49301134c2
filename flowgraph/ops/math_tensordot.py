"""``tf.tensordot`` built as TensorFlow builds it: each operand transposed so that its
contracted axes are last (for `a`) or first (for `b`), reshaped to a matrix, one
``MatMul``, and the product reshaped to ``free(a) + free(b)``.

What is known when the graph is built decides how much of that is graph:

- an operand of fully defined shape with Python axes: nothing but the ``Transpose`` and
  ``Reshape`` it needs (none when it is already the matrix), sizes in constants;
- a known rank with Python axes: ``axes``/``free`` constants, then ``Shape``,
  ``GatherV2`` of the free and contracted sizes, their ``Prod``s, ``ConcatV2`` of the
  permutation and ``Pack`` of the matrix shape;
- an unknown rank, or axes given as a tensor: negative axes wrapped with a ``Select``,
  the free axes found with ``ListDiff`` over ``Range(rank)``, then as above.

The ``MatMul`` does the work, so a 3-D input to a dense layer costs one BLAS call; the
shape arithmetic around it is folded by the planner when the input's shape is known.
(The ``Tensordot`` op of `flowgraph.ops.math_ops` remains for graphs that hold it.)

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 5, 3])
>>> y = tf.tensordot(x, tf.ones([3, 4]), [[2], [0]])
>>> y.op.type, y.shape.as_list()
('Reshape', [None, 5, 4])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_extra_ops import setdiff1d
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.array_index_ops import gather, where
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import rank as _rank
from flowgraph.ops.array_shape_ops import reshape, shape, transpose
from flowgraph.ops.math_reduce import reduce_prod

__all__ = ["tensordot"]


def _is_int(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _split_axes(a: Tensor, axes):
    """(a_axes, b_axes): Python lists when `axes` allows it, else int32 tensors."""
    if _is_int(axes):
        axes = int(axes)
        if axes < 0:
            raise ValueError(f"tensordot: 'axes' must be at least 0, got {axes}.")
        ndims = a.shape.ndims
        if ndims is not None:
            if axes > ndims:
                raise ValueError(f"tensordot: 'axes' must not be larger than the number of "
                                 f"dimensions of tensor {a.name}: got axes={axes}, "
                                 f"rank {ndims}.")
            return list(range(ndims - axes, ndims)), list(range(axes))
        rank_a = _rank(a)
        return (_range(rank_a - axes, rank_a, dtype=_dtypes.int32),
                _range(axes, dtype=_dtypes.int32))
    if isinstance(axes, list | tuple):
        if len(axes) != 2:
            raise ValueError(f"tensordot: 'axes' must be an int or a pair [a_axes, b_axes], "
                             f"got {len(axes)} entries: {axes!r}.")
        a_axes, b_axes = axes
        if _is_int(a_axes) and _is_int(b_axes):
            a_axes, b_axes = [a_axes], [b_axes]
        if isinstance(a_axes, list | tuple) and isinstance(b_axes, list | tuple):
            if len(a_axes) != len(b_axes):
                raise ValueError(f"tensordot: different number of contraction axes for a "
                                 f"and b: {len(a_axes)} ({list(a_axes)}) vs {len(b_axes)} "
                                 f"({list(b_axes)}).")
            return [int(i) for i in a_axes], [int(j) for j in b_axes]
        return a_axes, b_axes
    pair = convert_to_tensor(axes, dtype=_dtypes.int32, name="axes")
    return pair[0], pair[1]


def _as_matrix(x: Tensor, axes, axes_first: bool):
    """`x` as a matrix with the `axes` dimensions on one side (rows when `axes_first`),
    its free dimensions (a list or an int32 tensor), and their static list or None."""
    static = x.shape
    if isinstance(axes, list) and static.is_fully_defined():
        dims = static.as_list()
        axes = [i + len(dims) if i < 0 else i for i in axes]
        free = [i for i in range(len(dims)) if i not in axes]
        free_dims = [dims[i] for i in free]
        n_free = int(np.prod(free_dims, dtype=np.int64))
        n_axes = int(np.prod([dims[i] for i in axes], dtype=np.int64))
        perm = axes + free if axes_first else free + axes
        matrix = [n_axes, n_free] if axes_first else [n_free, n_axes]
        if perm != list(range(len(dims))):
            x = transpose(x, perm)
        if x.shape.as_list() != matrix:
            x = reshape(x, matrix)
        return x, free_dims, free_dims
    if isinstance(axes, list) and static.ndims is not None:
        dims = static.as_list()
        axes = [i + len(dims) if i < 0 else i for i in axes]
        free = [i for i in range(len(dims)) if i not in axes]
        free_static = [dims[i] for i in free]
        axes = convert_to_tensor(axes, dtype=_dtypes.int32, name="axes")
        free = convert_to_tensor(free, dtype=_dtypes.int32, name="free")
        sizes = shape(x)
    else:
        free_static = None
        sizes = shape(x)
        rank_x = _rank(x)
        axes = convert_to_tensor(axes, dtype=_dtypes.int32, name="axes")
        axes = where(axes >= 0, axes, axes + rank_x)
        free, _ = setdiff1d(_range(rank_x), axes, _dtypes.int32)
    free_dims = gather(sizes, free)
    axes_dims = gather(sizes, axes)
    n_free, n_axes = reduce_prod(free_dims), reduce_prod(axes_dims)
    if axes_first:
        perm, matrix = concat([axes, free], 0), stack([n_axes, n_free])
    else:
        perm, matrix = concat([free, axes], 0), stack([n_free, n_axes])
    return reshape(transpose(x, perm), matrix), free_dims, free_static


def tensordot(a, b, axes, name=None):
    """Sum of products of `a` and `b` over `axes`: an int N (the last N axes of `a` with
    the first N of `b`), a pair ``[a_axes, b_axes]`` of axis lists (or of single axes),
    or an int32 tensor of shape ``[2, k]``.

    The result has the free axes of `a` followed by those of `b`. It is computed as one
    matrix product between reshapes (see the module docstring for the graph it builds).

    Example
    -------
    >>> import flowgraph as tf
    >>> x, y = tf.ones([2, 3, 4]), tf.ones([4, 3, 5])
    >>> z = tf.tensordot(x, y, [[1, 2], [1, 0]])
    >>> z.shape.as_list(), float(tf.Session().run(z)[0, 0])
    ([2, 5], 12.0)
    """
    with name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        _m.check_dtype(a, _m._MATMUL, "Tensordot", "a")
        if b.dtype.base_dtype != a.dtype.base_dtype:
            raise TypeError(f"tensordot: a and b must have the same dtype, got "
                            f"{a.dtype.base_dtype.name} ({a.name}) and "
                            f"{b.dtype.base_dtype.name} ({b.name}) (op 'Tensordot').")
        a_axes, b_axes = _split_axes(a, axes)
        a_mat, a_free, a_static = _as_matrix(a, a_axes, axes_first=False)
        b_mat, b_free, b_static = _as_matrix(b, b_axes, axes_first=True)
        product = _m.matmul(a_mat, b_mat)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if product.shape.is_fully_defined() and product.shape.as_list() == a_free + b_free:
                return product
            return reshape(product, a_free + b_free, name=scope)
        a_free = convert_to_tensor(a_free, dtype=_dtypes.int32)
        b_free = convert_to_tensor(b_free, dtype=_dtypes.int32)
        out = reshape(product, concat([a_free, b_free], 0), name=scope)
        if a_static is not None and b_static is not None:
            out.set_shape(a_static + b_static)
        return out
