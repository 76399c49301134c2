"""More of TF1's SparseTensor functions, composed from dense ops on the components:
`sparse_add` (sparse + sparse, sparse + dense), `sparse_maximum`/`sparse_minimum`,
`sparse_reduce_max` (and the ``_sparse`` forms of the max and sum reductions),
`sparse_slice`, `sparse_split`, `sparse_softmax`, `sparse_transpose`,
`sparse_reset_shape`, `sparse_to_indicator`, `sparse_merge`, `sparse_mask` (of
IndexedSlices) and `serialize_sparse`.

Entries are matched by their row-major linear index (``indices @ strides``); results are
in canonical (row-major) order. Gradients reach the values through the gathers and
segment sums they are built from.

Example
-------
>>> import flowgraph as tf
>>> a = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
>>> b = tf.SparseTensor([[1, 2], [1, 0]], [10.0, 5.0], [2, 3])
>>> s = tf.sparse_add(a, b)
>>> with tf.Session() as sess:
...     print(sess.run(s.indices).tolist(), sess.run(s.values).tolist())
[[0, 0], [1, 0], [1, 2]] [1.0, 5.0, 12.0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_extra_ops import setdiff1d, unravel_index
from flowgraph.ops.array_gen_ops import unique
from flowgraph.ops.array_index_ops import boolean_mask, gather, gather_nd, where
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import expand_dims, reshape, shape, size, transpose
from flowgraph.ops.math_ops import (
    abs as _abs,
)
from flowgraph.ops.math_ops import (
    cast,
    exp,
    greater,
    greater_equal,
    less,
    logical_and,
    maximum,
    minimum,
)
from flowgraph.ops.math_reduce import cumprod, reduce_all, reduce_max, reduce_sum
from flowgraph.ops.segment_ops import unsorted_segment_max, unsorted_segment_sum
from flowgraph.ops.sort_ops import argsort
from flowgraph.ops.sparse_ops import _sp, sparse_reorder, sparse_to_dense

__all__ = ["serialize_sparse", "sparse_add", "sparse_mask", "sparse_maximum", "sparse_merge",
           "sparse_minimum", "sparse_reduce_max", "sparse_reduce_max_sparse",
           "sparse_reduce_sum_sparse", "sparse_reset_shape", "sparse_slice",
           "sparse_softmax", "sparse_split", "sparse_to_indicator", "sparse_transpose"]

_I64 = _dtypes.int64


def _linear(indices, dense_shape):
    strides = cumprod(dense_shape, exclusive=True, reverse=True)
    return reduce_sum(indices * strides, axis=1)


def _union(a: SparseTensor, b: SparseTensor):
    """Sorted distinct linear indices of both, and each entry's position among them."""
    lin = _linear(concat([a.indices, b.indices], 0), a.dense_shape)
    uniq, pos = unique(lin, out_idx=_I64)
    order = argsort(uniq)
    rank = unsorted_segment_sum(cast(reshape(_range_like(order), [-1]), _I64), order,
                                size(order, out_type=_I64))
    # rank[u] is the sorted position of distinct index u
    return gather(uniq, order), gather(rank, pos), size(uniq, out_type=_I64)


def _range_like(t):
    from flowgraph.ops.array_gen_ops import range as _range

    return _range(size(t, out_type=_I64), dtype=_I64)


def _unlinear(lin, dense_shape):
    return transpose(unravel_index(lin, dense_shape))


def sparse_add(a, b, threshold=0, thresh=None, name=None):
    """`a + b`: two SparseTensors (their union; entries whose sum has magnitude below
    `threshold` are dropped), or a SparseTensor and a dense tensor (a dense result).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 1]], [3.0], [2, 2])
    >>> tf.Session().run(tf.sparse_add(sp, tf.ones([2, 2]))).tolist()
    [[1.0, 4.0], [1.0, 1.0]]
    """
    from flowgraph.ops.scatter_ops import tensor_scatter_nd_add

    threshold = thresh if thresh is not None else threshold
    with name_scope(name, "SparseAdd", []):
        if not isinstance(a, SparseTensor) and not hasattr(a, "dense_shape"):
            a, b = b, a
        a = _sp(a, "a")
        if not isinstance(b, SparseTensor) and not hasattr(b, "indices"):
            dense = convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
            return tensor_scatter_nd_add(dense, a.indices, a.values)
        b = _sp(b, "b")
        lin, pos, n = _union(a, b)
        values = unsorted_segment_sum(concat([a.values, b.values], 0), pos, n)
        indices = _unlinear(lin, a.dense_shape)
        keep = greater_equal(_abs(values), cast(threshold, values.dtype.base_dtype.real_dtype
                                               if values.dtype.is_complex else
                                               values.dtype.base_dtype))
        return SparseTensor(boolean_mask(indices, keep), boolean_mask(values, keep),
                            a.dense_shape)


def _elementwise(a, b, fn, what, name):
    with name_scope(name, what, []):
        a, b = _sp(a, "sp_a"), _sp(b, "sp_b")
        lin, pos, n = _union(a, b)
        na = size(a.values, out_type=_I64)
        pos_a, pos_b = pos[:na], pos[na:]
        va = unsorted_segment_sum(a.values, pos_a, n)  # missing entries count as zero
        vb = unsorted_segment_sum(b.values, pos_b, n)
        return SparseTensor(_unlinear(lin, a.dense_shape), fn(va, vb), a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """The element-wise maximum of two SparseTensors of one shape (missing entries are
    zeros), on the union of their indices."""
    return _elementwise(sp_a, sp_b, maximum, "SparseSparseMaximum", name)


def sparse_minimum(sp_a, sp_b, name=None):
    """The element-wise minimum of two SparseTensors of one shape (missing entries are
    zeros), on the union of their indices."""
    return _elementwise(sp_a, sp_b, minimum, "SparseSparseMinimum", name)


def _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims):
    axis = reduction_axes if axis is None else axis
    keep = bool(keep_dims if keepdims is None else keepdims)
    return axis, keep


def _dense_with(sp, fill):
    return sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value=fill,
                           validate_indices=False)


def _lowest(dtype):
    import numpy as np

    np_dtype = np.dtype(dtype.as_numpy_dtype)
    return np.finfo(np_dtype).min if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None):
    """The maximum of the present entries along `axis` (all axes when None); a slice
    without entries gives 0, as in TensorFlow.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 3.0, -2.0], [2, 3])
    >>> tf.Session().run(tf.sparse_reduce_max(sp, axis=1)).tolist()
    [3.0, -2.0]
    """
    sp = _sp(sp_input)
    axis, keep = _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims)
    dense = _dense_with(sp, cast(_lowest(sp.dtype.base_dtype), sp.dtype.base_dtype))
    peak = reduce_max(dense, axis=axis, keepdims=keep)
    from flowgraph.ops.array_shape_ops import zeros_like

    return where(greater(_present(sp, axis, keep), 0), peak, zeros_like(peak))


def _sparse_result(dense, present):
    idx = where(greater(present, 0))
    return SparseTensor(idx, gather_nd(dense, idx), shape(dense, out_type=_I64))


def _present(sp, axis, keep):
    ones = SparseTensor(sp.indices, cast(sp.values * 0, _dtypes.int32) + 1, sp.dense_shape)
    return reduce_sum(_dense_with(ones, 0), axis=axis, keepdims=keep)


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`sparse_reduce_max` as a SparseTensor holding only the slices with entries."""
    sp = _sp(sp_input)
    axis, keep = _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims)
    dense = sparse_reduce_max(sp, axis, keep)
    return _sparse_result(dense, _present(sp, axis, keep))


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`tf.sparse_reduce_sum` as a SparseTensor holding only the slices with entries.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 2]], [1.0, 3.0], [2, 3])
    >>> s = tf.sparse_reduce_sum_sparse(sp, axis=1)
    >>> tf.Session().run([s.indices, s.values])
    [array([[0]]), array([4.], dtype=float32)]
    """
    sp = _sp(sp_input)
    axis, keep = _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims)
    dense = reduce_sum(_dense_with(sp, cast(0, sp.dtype.base_dtype)), axis=axis,
                       keepdims=keep)
    return _sparse_result(dense, _present(sp, axis, keep))


def sparse_slice(sp_input, start, size, name=None):
    """The entries of `sp_input` inside the box ``[start, start + size)``, re-indexed from
    `start`; the dense shape is the box clipped to the input's shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 1], [1, 3], [2, 0]], [1, 2, 3], [3, 4])
    >>> s = tf.sparse_slice(sp, [1, 1], [2, 3])
    >>> tf.Session().run([s.indices, s.values, s.dense_shape])
    [array([[0, 2]]), array([2], dtype=int32), array([2, 3])]
    """
    with name_scope(name, "SparseSlice", []):
        sp = _sp(sp_input)
        start = convert_to_tensor(start, dtype=_I64, name="start")
        size_t = convert_to_tensor(size, dtype=_I64, name="size")
        inside = reduce_all(logical_and(greater_equal(sp.indices, start),
                                        less(sp.indices, start + size_t)), axis=1)
        shape_out = maximum(minimum(size_t, sp.dense_shape - start), 0)
        return SparseTensor(boolean_mask(sp.indices, inside) - start,
                            boolean_mask(sp.values, inside), shape_out)


def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None,
                 split_dim=None):
    """Split `sp_input` into `num_split` SparseTensors along `axis`; the first
    ``size % num_split`` parts are one longer.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 4], [1, 2]], [1, 2, 3], [2, 5])
    >>> parts = tf.sparse_split(sp_input=sp, num_split=2, axis=1)
    >>> tf.Session().run([p.dense_shape for p in parts])
    [array([2, 3]), array([2, 2])]
    """
    if keyword_required is not None:
        raise ValueError("tf.sparse_split: pass sp_input, num_split and axis as keywords")
    axis = split_dim if axis is None else axis
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("tf.sparse_split needs sp_input, num_split and axis")
    with name_scope(name, "SparseSplit", []):
        sp = _sp(sp_input)
        rank = sp.indices.shape[1].value
        if rank is None:
            raise ValueError("tf.sparse_split: the rank of sp_input must be known")
        axis = int(axis) % rank
        dim = sp.dense_shape[axis]
        base, extra = dim // num_split, dim % num_split
        parts = []
        for i in range(int(num_split)):
            i_t = cast(i, _I64)
            begin = i_t * base + minimum(i_t, extra)
            length = base + cast(less(i_t, extra), _I64)
            starts = [cast(0, _I64)] * rank
            starts[axis] = begin
            sizes = [sp.dense_shape[d] for d in range(rank)]
            sizes[axis] = length
            parts.append(sparse_slice(sp, stack(starts), stack(sizes)))
        return parts


def sparse_softmax(sp_input, name=None):
    """Softmax over the present entries of each innermost row (missing entries take no
    part and stay missing).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 1.0, 5.0], [2, 3])
    >>> tf.Session().run(tf.sparse_softmax(sp).values).tolist()
    [0.5, 0.5, 1.0]
    """
    with name_scope(name, "SparseSoftmax", []):
        sp = _sp(sp_input)
        rows = _linear(sp.indices[:, :-1], sp.dense_shape[:-1])
        _, pos = unique(rows, out_idx=_I64)
        n = reduce_max(concat([pos, [-1]], 0)) + 1
        peak = gather(unsorted_segment_max(sp.values, pos, n), pos)
        e = exp(sp.values - peak)
        total = gather(unsorted_segment_sum(e, pos, n), pos)
        return SparseTensor(sp.indices, e / total, sp.dense_shape)


def sparse_transpose(sp_input, perm=None, name=None):
    """Permute the dimensions of a SparseTensor (reversed when `perm` is None); the result
    is reordered canonically.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 2]], [7], [1, 3])
    >>> t = tf.sparse_transpose(sp)
    >>> tf.Session().run([t.indices, t.dense_shape])
    [array([[2, 0]]), array([3, 1])]
    """
    with name_scope(name, "SparseTranspose", []):
        sp = _sp(sp_input)
        rank = sp.indices.shape[1].value
        if perm is None:
            if rank is None:
                raise ValueError("tf.sparse_transpose: perm is required for unknown rank")
            perm = list(range(rank - 1, -1, -1))
        perm_t = convert_to_tensor(perm, dtype=_dtypes.int32, name="perm")
        dense_shape = gather(sp.dense_shape, perm_t)
        known = sp.shape
        if known.is_fully_defined() and not isinstance(perm, Tensor):
            dims = known.as_list()
            dense_shape = convert_to_tensor([dims[int(p)] for p in perm], dtype=_dtypes.int64)
        out = SparseTensor(gather(sp.indices, perm_t, axis=1), sp.values, dense_shape)
        return sparse_reorder(out)


def sparse_reset_shape(sp_input, new_shape=None):
    """`sp_input` with dense shape `new_shape` (at least the old one, checked when the op
    runs), or the tight bounding box of its indices when None."""
    from flowgraph.framework.graph import control_dependencies
    from flowgraph.ops.check_ops import Assert

    sp = _sp(sp_input)
    if new_shape is None:
        tight = reduce_max(concat([sp.indices, -expand_dims(sp.dense_shape * 0 + 1, 0)], 0),
                           axis=0) + 1
        return SparseTensor(sp.indices, sp.values, tight)
    new = convert_to_tensor(new_shape, dtype=_I64, name="new_shape")
    check = Assert(reduce_all(greater_equal(new, sp.dense_shape)),
                   ["tf.sparse_reset_shape: new_shape must be at least the old shape",
                    sp.dense_shape, new])
    with control_dependencies([check]):
        from flowgraph.ops.array_identity_ops import identity

        return SparseTensor(sp.indices, sp.values, identity(new))


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor ``[..., vocab_size]``: True at each id in the last dimension's
    values of `sp_input` (int ids in ``[0, vocab_size)``).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([2, 0, 1], tf.int64), [2, 2])
    >>> tf.Session().run(tf.sparse_to_indicator(sp, 3)).astype(int).tolist()
    [[1, 0, 1], [0, 1, 0]]
    """
    with name_scope(name, "SparseToIndicator", []):
        sp = _sp(sp_input)
        ids = expand_dims(cast(sp.values, _I64), 1)
        indices = concat([sp.indices[:, :-1], ids], 1)
        dense_shape = concat([sp.dense_shape[:-1], [cast(vocab_size, _I64)]], 0)
        from flowgraph.ops.array_shape_ops import ones_like

        return sparse_to_dense(indices, dense_shape, cast(ones_like(sp.values), _dtypes.bool),
                               default_value=False, validate_indices=False)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor ``[..., vocab_size]`` with ``sp_values`` at the ids of ``sp_ids`` (the
    sparse form of a bag of weighted ids).

    Example
    -------
    >>> import flowgraph as tf
    >>> ids = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([4, 1], tf.int64), [1, 2])
    >>> weights = tf.SparseTensor([[0, 0], [0, 1]], [0.5, 2.0], [1, 2])
    >>> m = tf.sparse_merge(ids, weights, 5)
    >>> tf.Session().run([m.indices, m.values])
    [array([[0, 1],
           [0, 4]]), array([2. , 0.5], dtype=float32)]
    """
    with name_scope(name, "SparseMerge", []):
        ids, values = _sp(sp_ids, "sp_ids"), _sp(sp_values, "sp_values")
        indices = concat([ids.indices[:, :-1], expand_dims(cast(ids.values, _I64), 1)], 1)
        dense_shape = concat([ids.dense_shape[:-1], [cast(vocab_size, _I64)]], 0)
        out = SparseTensor(indices, values.values, dense_shape)
        return out if already_sorted else sparse_reorder(out)


def sparse_mask(a, mask_indices, name=None):
    """The slices of IndexedSlices `a` whose indices are not in `mask_indices`.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([0, 4, 7]))
    >>> m = tf.sparse_mask(a, [4])
    >>> tf.Session().run([m.indices, m.values])
    [array([0, 7], dtype=int32), array([[1.],
           [3.]], dtype=float32)]
    """
    with name_scope(name, "sparse_mask", []):
        kept, positions = setdiff1d(a.indices, mask_indices)
        return IndexedSlices(gather(a.values, positions), kept, a.dense_shape)


def serialize_sparse(sp_input, name=None, out_type=_dtypes.string):
    """A string vector of 3: the serialized TensorProtos of the indices, values and dense
    shape of `sp_input` (TensorFlow's ``SerializeSparse`` format).

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.serialize_sparse(tf.SparseTensor([[0]], [1.0], [2]))
    >>> s.shape.as_list()
    [3]
    """
    from flowgraph.ops.string_extra_ops import serialize_tensor

    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise TypeError("tf.serialize_sparse: only out_type=tf.string is supported")
    with name_scope(name, "SerializeSparse", []):
        sp = _sp(sp_input)
        return stack([serialize_tensor(sp.indices), serialize_tensor(sp.values),
                      serialize_tensor(sp.dense_shape)])
