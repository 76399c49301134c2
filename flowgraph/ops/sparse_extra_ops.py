"""More of TF1's SparseTensor functions: `sparse_add` (sparse + sparse, sparse + dense),
`sparse_maximum`/`sparse_minimum`, `sparse_reduce_max` (and the ``_sparse`` forms of the
max and sum reductions), `sparse_slice`, `sparse_split`, `sparse_softmax` and
`serialize_sparse` emit TensorFlow's op types (`flowgraph/ops/sparse_raw_ops.py`, with
their gradients); `sparse_transpose`, `sparse_reset_shape`, `sparse_to_indicator`,
`sparse_merge` and `sparse_mask` (of IndexedSlices) are composed from other ops, as in
TensorFlow.

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
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_extra_ops import setdiff1d
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.array_shape_ops import expand_dims, size, transpose
from flowgraph.ops.math_ops import (
    cast,
    greater_equal,
)
from flowgraph.ops.math_reduce import reduce_all, reduce_max
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.sparse_ops import _sp, sparse_reorder, sparse_tensor_to_dense

__all__ = ["serialize_sparse", "sparse_add", "sparse_mask", "sparse_maximum", "sparse_merge",
           "sparse_minimum", "sparse_reduce_max", "sparse_reduce_max_sparse",
           "sparse_reduce_sum_sparse", "sparse_reset_shape", "sparse_slice",
           "sparse_softmax", "sparse_split", "sparse_to_indicator", "sparse_transpose"]

_I64 = _dtypes.int64


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

    threshold = thresh if thresh is not None else threshold
    # As TensorFlow: no name scope (the threshold is converted at the call site) and,
    # for two sparse operands, a constant dense shape when the static shapes fix it.
    if not isinstance(a, SparseTensor) and not hasattr(a, "dense_shape"):
        a, b = b, a
    a = _sp(a, "a")
    if not isinstance(b, SparseTensor) and not hasattr(b, "indices"):
        dense = convert_to_tensor(b, dtype=a.dtype.base_dtype, name="b")
        return make_tensor("SparseTensorDenseAdd", [a.indices, a.values, a.dense_shape,
                                                    dense], name=name or "SparseTensorDenseAdd")
    b = _sp(b, "b")
    real = a.dtype.base_dtype.real_dtype if a.dtype.is_complex else a.dtype.base_dtype
    thresh_t = convert_to_tensor(threshold, dtype=real, name="threshold")
    op = make_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                               b.dense_shape, thresh_t], name=name or "SparseAdd")
    static = a.shape.merge_with(b.shape)
    if static.is_fully_defined():
        return SparseTensor(op.outputs[0], op.outputs[1], static.as_list())
    return SparseTensor(*op.outputs)


def _elementwise(a, b, op_type, name):
    with name_scope(name, op_type, []) as scope:
        a, b = _sp(a, "sp_a"), _sp(b, "sp_b")
        op = make_op(op_type, [a.indices, a.values, a.dense_shape, b.indices, b.values,
                               b.dense_shape], name=scope)
        return SparseTensor(op.outputs[0], op.outputs[1], a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """The element-wise maximum of two SparseTensors of one shape (missing entries are
    zeros), on the union of their indices."""
    return _elementwise(sp_a, sp_b, "SparseSparseMaximum", name)


def sparse_minimum(sp_a, sp_b, name=None):
    """The element-wise minimum of two SparseTensors of one shape (missing entries are
    zeros), on the union of their indices."""
    return _elementwise(sp_a, sp_b, "SparseSparseMinimum", name)


def _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims):
    axis = reduction_axes if axis is None else axis
    keep = bool(keep_dims if keepdims is None else keepdims)
    return axis, keep


def _reduce(op_type, sp_input, axis, keepdims, reduction_axes, keep_dims, name):
    sp = _sp(sp_input)
    axis, keep = _axes_and_keep(sp, axis, keepdims, reduction_axes, keep_dims)
    if axis is None:
        from flowgraph.ops.array_gen_ops import range as _range

        rank = sp.shape.ndims
        axes = cast(_range(size(sp.dense_shape)), _dtypes.int32) if rank is None else \
            convert_to_tensor(list(range(rank)), dtype=_dtypes.int32)
    else:
        axes = convert_to_tensor(axis, dtype=_dtypes.int32, name="reduction_axes")
    op = make_op(op_type, [sp.indices, sp.values, sp.dense_shape, axes], {"keep_dims": keep},
                 name=name or op_type)
    return op.outputs[0] if len(op.outputs) == 1 else SparseTensor(*op.outputs)


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
    return _reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes, keep_dims,
                   None)


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`sparse_reduce_max` as a SparseTensor holding only the slices with entries."""
    return _reduce("SparseReduceMaxSparse", sp_input, axis, keepdims, reduction_axes,
                   keep_dims, None)


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
    return _reduce("SparseReduceSumSparse", sp_input, axis, keepdims, reduction_axes,
                   keep_dims, None)


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
    with name_scope(name, "SparseSlice", []) as scope:
        sp = _sp(sp_input)
        start = convert_to_tensor(start, dtype=_I64, name="start")
        size_t = convert_to_tensor(size, dtype=_I64, name="size")
        op = make_op("SparseSlice", [sp.indices, sp.values, sp.dense_shape, start, size_t],
                     name=scope)
        return SparseTensor(*op.outputs)


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
    with name_scope(name, "SparseSplit", []) as scope:
        sp = _sp(sp_input)
        k = int(num_split)
        op = make_op("SparseSplit", [convert_to_tensor(axis, dtype=_I64, name="split_dim"),
                                     sp.indices, sp.values, sp.dense_shape],
                     {"num_split": k}, name=scope)
        outs = op.outputs
        return [SparseTensor(outs[i], outs[k + i], outs[2 * k + i]) for i in range(k)]


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
        # TensorFlow names the op inside its scope after its type.
        values = make_tensor("SparseSoftmax", [sp.indices, sp.values, sp.dense_shape],
                             name="SparseSoftmax")
        return SparseTensor(sp.indices, values, sp.dense_shape)


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
    sp = _sp(sp_input)
    with name_scope(name, "SparseTranspose", [sp.values]):
        rank = sp.shape.ndims
        if perm is None:
            if rank is None:
                raise ValueError("tf.sparse_transpose: perm is required for unknown rank")
            perm = list(range(rank - 1, -1, -1))
        # TensorFlow's layout: transpose(gather(transpose(indices), perm)), then a constant
        # dense shape when the permutation and the input's shape are known.
        indices = transpose(gather(transpose(sp.indices), perm))
        perm_value = constant_value(convert_to_tensor(perm))
        known = sp.shape
        if perm_value is not None and known.is_fully_defined():
            dims = known.as_list()
            dense_shape = [dims[int(p)] for p in perm_value]
        else:
            dense_shape = gather(sp.dense_shape, perm)
        out = SparseTensor(indices, sp.values, dense_shape)
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
    from flowgraph.ops.array_shape_ops import fill, shape

    sp = _sp(sp_input)
    with name_scope(name, "SparseToIndicator", [sp.values]) as scope:
        # TensorFlow's layout: True values, a sparse_merge in this scope, and the dense
        # result named after the scope (duplicate ids are simply True)
        count = shape(sp.indices)[0]
        flags = SparseTensor(sp.indices, fill(expand_dims(count, 0), True), sp.dense_shape)
        merged = sparse_merge(sp, flags, vocab_size, name=scope)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False,
                                      name=scope)


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
    import numbers

    if isinstance(sp_ids, SparseTensor) or hasattr(sp_ids, "dense_shape"):
        if not isinstance(vocab_size, Tensor | numbers.Integral):
            raise TypeError(f"tf.sparse_merge: vocab_size has to be a Tensor or Python int, "
                            f"got {type(vocab_size).__name__}")
        sp_ids, vocab_size = [sp_ids], [vocab_size]
    else:  # one id tensor per trailing dimension of the result
        if not isinstance(sp_ids, list | tuple) or not isinstance(vocab_size, list | tuple):
            raise TypeError("tf.sparse_merge: sp_ids and vocab_size must both be one value or "
                            f"both lists, got {type(sp_ids).__name__} and "
                            f"{type(vocab_size).__name__}")
        for dim in vocab_size:
            if not isinstance(dim, Tensor | numbers.Integral):
                raise TypeError(f"tf.sparse_merge: vocab_size has to be a list of Tensors or "
                                f"Python ints, got {type(dim).__name__}")
    if len(sp_ids) != len(vocab_size):
        raise ValueError(f"tf.sparse_merge: sp_ids and vocab_size have to have equal lengths, "
                         f"got {len(sp_ids)} and {len(vocab_size)}")
    with name_scope(name, "SparseMerge", []):
        ids = [_sp(s, "sp_ids") for s in sp_ids]
        values = _sp(sp_values, "sp_values")
        columns = [expand_dims(s.values if s.dtype.base_dtype == _I64 else cast(s.values, _I64),
                               axis=1) for s in ids]
        sizes = [cast(v, _I64) for v in vocab_size]
        # TensorFlow's layout: the ids replace the last index column; the dense shape's
        # last dimension becomes the vocabulary sizes; reorder unless already sorted.
        indices = concat([ids[0].indices[:, :-1], *columns], 1)
        dense_shape = concat([ids[0].dense_shape[:-1], sizes], 0)
        out = SparseTensor(indices, values.values, dense_shape)
        if already_sorted:
            return out
        ordered = sparse_reorder(out)
        return SparseTensor(ordered.indices, ordered.values, dense_shape)


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
    with name_scope(name, "sparse_mask", []) as scope:
        kept, positions = setdiff1d(a.indices, mask_indices)
        # TensorFlow names the gather after the scope.
        return IndexedSlices(gather(a.values, positions, name=scope), kept, a.dense_shape)


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
    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise TypeError("tf.serialize_sparse: only out_type=tf.string is supported")
    with name_scope(name, "SerializeSparse", []) as scope:
        sp = _sp(sp_input)
        return make_tensor("SerializeSparse", [sp.indices, sp.values, sp.dense_shape],
                           {"out_type": _dtypes.string}, name=scope)
