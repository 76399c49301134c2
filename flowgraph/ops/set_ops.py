"""Set operations along the last dimension (``tf.sets``) and `edit_distance`, with
TensorFlow's op types: ``SparseToSparseSetOperation``, ``SetSize`` and ``EditDistance``.

Each row of the last dimension is a set (a dense row, or the present entries of a
SparseTensor row); `set_intersection`, `set_union` and `set_difference` return a
SparseTensor of each row's result in ascending order, `set_size` the number of distinct
values per row. `edit_distance` is the Levenshtein distance between the sequences of
two SparseTensors, per row, optionally divided by the truth's length.

Example
-------
>>> import flowgraph as tf
>>> u = tf.sets.union([[1, 2], [3, 3]], [[2, 5], [4, 3]])
>>> tf.Session().run(tf.sparse.to_dense(u)).tolist()
[[1, 2, 5], [3, 4, 0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["edit_distance", "set_difference", "set_intersection", "set_size", "set_union"]

_OPERATIONS = ("a-b", "b-a", "intersection", "union")


def _set_rank(shape, dense: bool):
    """The static rank of a set argument (a dense tensor's shape, or a SparseTensor's
    ``dense_shape`` vector), or None."""
    if dense:
        return shape.ndims
    return shape[0].value if shape.ndims == 1 else None


def _set_outputs(op, rank1, rank2, lead1=None, lead2=None):
    """TensorFlow's shapes: indices ``[?, rank]``, values ``[?]``, dense shape ``[rank]``;
    a set argument of rank < 2 or leading dimensions that differ are errors."""
    for r in (rank1, rank2):
        if r is not None and r < 2:
            raise op.shape_error(f"Shape must be at least rank 2 but is rank {r}")
    if rank1 is not None and rank2 is not None and rank1 != rank2:
        raise op.shape_error(f"Shape must be rank {rank1} but is rank {rank2}")
    if lead1 is not None and lead2 is not None:
        for i, (d1, d2) in enumerate(zip(lead1, lead2)):
            if d1.value is not None and d2.value is not None and d1.value != d2.value:
                raise op.shape_error(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{d1.value} and {d2.value}. Shapes are {lead1} and "
                                     f"{lead2}.")
    rank = rank1 if rank1 is not None else rank2
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


@register_op("SparseToSparseSetOperation",
             attrs={"set_operation": "union", "validate_indices": True}, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, op.inputs[1].dtype.base_dtype, _dtypes.int64])
def _set_op_shape(op, *shapes):
    return _set_outputs(op, _set_rank(shapes[2], False), _set_rank(shapes[5], False))


@register_op("DenseToDenseSetOperation",
             attrs={"set_operation": "union", "validate_indices": True}, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, op.inputs[0].dtype.base_dtype, _dtypes.int64])
def _dense_set_op_shape(op, set1, set2):
    lead = (set1[:-1], set2[:-1]) if None not in (set1.ndims, set2.ndims) else (None, None)
    return _set_outputs(op, set1.ndims, set2.ndims, *lead)


@register_op("DenseToSparseSetOperation",
             attrs={"set_operation": "union", "validate_indices": True}, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, op.inputs[0].dtype.base_dtype, _dtypes.int64])
def _dense_sparse_set_op_shape(op, set1, indices2, values2, shape2):
    return _set_outputs(op, set1.ndims, _set_rank(shape2, False))


@register_op("SetSize", attrs={"validate_indices": True}, dtype_fn=fixed_dtype(_dtypes.int32))
def _set_size_shape(op, indices, values, shape):
    return [TensorShape(None)]


@register_op("EditDistance", attrs={"normalize": True}, dtype_fn=fixed_dtype(_dtypes.float32))
def _edit_distance_shape(op, *shapes):
    # With both dense shapes known at graph construction, the result has their
    # elementwise maximum over every dimension but the last (TensorFlow's rule).
    h_shape, t_shape = constant_value(op.inputs[2]), constant_value(op.inputs[5])
    if h_shape is None or t_shape is None:
        return [TensorShape(None)]
    if len(h_shape) != len(t_shape):
        raise op.shape_error(f"Num elements of hypothesis_shape does not match truth_shape: "
                             f"{len(h_shape)} vs. {len(t_shape)} (the two SparseTensors "
                             "must have one rank)")
    return [TensorShape([max(int(a), int(b)) for a, b in zip(h_shape[:-1], t_shape[:-1])])]


not_differentiable("SparseToSparseSetOperation", "DenseToDenseSetOperation",
                   "DenseToSparseSetOperation", "SetSize", "EditDistance")


def _as_set_sparse(x, what):
    """A SparseTensor for a set argument: SparseTensors pass; a dense tensor keeps every
    entry (zeros too) as a set element."""
    from flowgraph.framework.sparse_tensor import SparseTensorValue
    from flowgraph.ops.array_index_ops import gather_nd, where
    from flowgraph.ops.array_shape_ops import ones_like, shape
    from flowgraph.ops.math_ops import cast, not_equal

    if isinstance(x, SparseTensorValue):
        x = SparseTensor(x.indices, x.values, x.dense_shape)
    if isinstance(x, SparseTensor):
        return x
    dense = convert_to_tensor(x, name=what)
    if dense.shape.ndims is not None and dense.shape.ndims < 2:
        raise ValueError(f"tf.sets: {what} must have rank >= 2 (sets along the last axis), "
                         f"got shape {dense.shape}")
    everything = where(not_equal(ones_like(dense, dtype=_dtypes.int32), 0))
    return SparseTensor(everything, gather_nd(dense, everything),
                        cast(shape(dense), _dtypes.int64))


_SET_DTYPES = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
               _dtypes.uint16, _dtypes.string)


def _set_args(a, b):
    """(a, b, flipped) as TensorFlow takes them: tensors or SparseTensors of one supported
    dtype, a dense `a` first when only one is dense (`flipped` when they were swapped)."""
    from flowgraph.framework.sparse_tensor import SparseTensorValue

    def conv(x, what):
        if isinstance(x, SparseTensorValue):
            return SparseTensor(x.indices, x.values, x.dense_shape)
        return x if isinstance(x, SparseTensor) else convert_to_tensor(x, name=what)

    a, b = conv(a, "a"), conv(b, "b")
    if a.dtype.base_dtype != b.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if a.dtype.base_dtype not in _SET_DTYPES:
        raise TypeError(f"'a' has invalid dtype `{a.dtype}` not in supported dtypes: "
                        f"`{', '.join(d.name for d in _SET_DTYPES)}`.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a, b, operation, validate_indices):
    """The op TensorFlow picks: ``DenseToDenseSetOperation``,
    ``DenseToSparseSetOperation`` or ``SparseToSparseSetOperation`` (no name scope)."""
    attrs = {"set_operation": operation, "validate_indices": bool(validate_indices)}
    if isinstance(b, SparseTensor):
        rest = [b.indices, b.values, b.dense_shape]
        if isinstance(a, SparseTensor):
            op = make_op("SparseToSparseSetOperation",
                         [a.indices, a.values, a.dense_shape, *rest], attrs)
        else:
            op = make_op("DenseToSparseSetOperation", [a, *rest], attrs)
    else:
        op = make_op("DenseToDenseSetOperation", [a, b], attrs)
    return SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])


def set_intersection(a, b, validate_indices=True):
    """Each row's values present in both `a` and `b`, ascending (a SparseTensor)."""
    a, b, _ = _set_args(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_union(a, b, validate_indices=True):
    """Each row's values present in `a` or `b`, ascending (a SparseTensor)."""
    a, b, _ = _set_args(a, b)
    return _set_operation(a, b, "union", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """Each row's values of `a` not in `b` (or, with ``aminusb=False``, of `b` not in
    `a`), ascending (a SparseTensor).

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.sets.difference([[1, 2, 3]], [[2]])
    >>> tf.Session().run(d.values).tolist()
    [1, 3]
    """
    a, b, flipped = _set_args(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_size(a, validate_indices=True):
    """The number of distinct values in each row of the last dimension of the
    SparseTensor `a` (int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [4, 4, 2], [2, 2])
    >>> tf.Session().run(tf.sets.size(sp)).tolist()
    [1, 1]
    """
    from flowgraph.framework.sparse_tensor import SparseTensorValue

    if not isinstance(a, SparseTensor | SparseTensorValue):
        raise TypeError(f"tf.sets.size: expected a SparseTensor, got {type(a).__name__}")
    sa = _as_set_sparse(a, "a")
    return make_tensor("SetSize", [sa.indices, sa.values, sa.dense_shape],
                       {"validate_indices": bool(validate_indices)}, name="SetSize")


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences (last dimension) of two
    SparseTensors, for each position of the leading dimensions; with `normalize`,
    divided by the truth sequence's length (inf for an empty truth and a non-empty
    hypothesis, 0 when both are empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> h = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    >>> t = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["a", "c", "b"], [1, 3])
    >>> tf.Session().run(tf.edit_distance(h, t, normalize=False)).tolist()
    [1.0]
    """
    for what, v in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(v, SparseTensor) and not hasattr(v, "indices"):
            raise TypeError(f"tf.edit_distance: {what} must be a SparseTensor, got "
                            f"{type(v).__name__}")
    h = _as_set_sparse(hypothesis, "hypothesis")
    t = _as_set_sparse(truth, "truth")
    return make_tensor("EditDistance", [h.indices, h.values, h.dense_shape, t.indices,
                                        t.values, t.dense_shape],
                       {"normalize": bool(normalize)}, name=name)
