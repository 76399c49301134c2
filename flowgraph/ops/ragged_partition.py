"""Row partitions of `tf.RaggedTensor` beyond plain row splits: checking a partition
tensor, uniform row lengths, rows from a `tf.SparseTensor`, and merging dimensions.

Every ragged level is a ``row_splits`` vector over its values (see
`flowgraph.ops.ragged_tensor`); these helpers build or rewrite those vectors with
ordinary graph ops. They take the RaggedTensor class as an argument (``cls``) so that
this module does not import the one that defines it::

    from_uniform_row_length([1, 2, 3, 4, 5, 6], 2)   splits = range(3 + 1) * 2 = [0, 2, 4, 6]
    merge_dims(1, 2) of [[[1], [2, 3]], [], [[4]]]   splits = inner_splits[outer_splits]
                                                     = [0, 1, 3, 4][[0, 2, 2, 3]] = [0, 3, 3, 4]

Example
-------
>>> import flowgraph as tf
>>> rt = tf.RaggedTensor.from_nested_row_lengths([1, 2, 3, 4], [[2, 0, 1], [1, 2, 1]])
>>> with tf.Session() as sess:
...     print(sess.run(rt.merge_dims(1, 2)).to_list())
[[1, 2, 3], [], [4]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.check_ops import Assert
from flowgraph.ops.control_flow_ops import with_dependencies
from flowgraph.ops.math_reduce import reduce_all, reduce_prod

__all__ = ["check_partition", "merge_dims", "nvals", "range_like", "sparse_rows",
           "uniform_rows"]

def check_partition(row_splits, what: str = "row_splits", rank: int = 1):
    """`row_splits` (or another row partition tensor, named `what`) if it is an int32 or
    int64 tensor of rank `rank` (a vector; a scalar for a uniform row length)."""
    dtype = row_splits.dtype.base_dtype
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise ValueError(f"RaggedTensor: {what} must have dtype int32 or int64, got "
                         f"{dtype.name}")
    if row_splits.shape.ndims not in (None, rank):
        raise ValueError(f"RaggedTensor: {what} must have rank {rank}: Shape "
                         f"{row_splits.shape} must have rank {rank}")
    return row_splits


def _check(ok, message: str, data) -> object:
    return Assert(reduce_all(ok), [message, *data], summarize=3)


def validated_splits(splits, values, factory: str, lengths=None, rowids=None, nrows=None):
    """`splits` once TensorFlow's run-time checks of the arguments of ``factory`` (an
    InvalidArgumentError when run): lengths and rowids non-negative, rowids sorted and
    below `nrows`, splits starting at 0 and non-decreasing, and the last split equal to
    the number of values. The result is ``<scope>/control_dependency``."""
    bad = f"Arguments to {factory} do not form a valid RaggedTensor"
    checks = []
    if lengths is not None:
        checks.append(_check(math_ops.greater_equal(lengths, 0),
                             f"Arguments to {factory} do not form a valid RowPartition.",
                             ["row_lengths =", lengths]))
    if rowids is not None:
        part = f"Arguments to {factory} do not form a valid RowPartition."
        checks.append(_check(math_ops.greater_equal(rowids, 0), part,
                             ["value_rowids =", rowids]))
        checks.append(_check(math_ops.greater_equal(rowids[1:] - rowids[:-1], 0), part,
                             ["value_rowids must be sorted:", rowids]))
        if nrows is not None:
            checks.append(_check(math_ops.less(rowids, nrows), part,
                                 ["value_rowids must be less than nrows =", nrows]))
    if lengths is None and rowids is None:
        checks.append(_check(math_ops.equal(splits[:1], 0), f"{bad}:zero",
                             ["row_splits =", splits]))
        checks.append(_check(math_ops.greater_equal(splits[1:] - splits[:-1], 0),
                             f"{bad}:monotonic", ["row_splits =", splits]))
    count = nvals(values, splits.dtype.base_dtype)
    checks.append(_check(math_ops.equal(splits[-1:], count),
                         "Arguments to _from_row_partition do not form a valid RaggedTensor",
                         ["last row split", splits[-1:], "nvals", count]))
    return with_dependencies(checks, splits)


def nvals(values, dtype):
    """The number of rows of `values` (a RaggedTensor or a dense tensor), as `dtype`."""
    if isinstance(values, Tensor):
        return array_ops.shape(values, out_type=dtype)[0]
    return values.nrows(out_type=dtype)


def _static_nvals(values):
    return values.shape.dims[0].value if values.shape.ndims else None


def uniform_rows(cls, values, uniform_row_length, nrows, validate: bool):
    """`RaggedTensor.from_uniform_row_length` (inside its name scope)."""
    values = cls._as_values(values)
    length = check_partition(convert_to_tensor(
        uniform_row_length, dtype_hint=_dtypes.int64, name="uniform_row_length"),
        "uniform_row_length", rank=0)
    dtype = length.dtype.base_dtype
    count, static_len, static_count = nvals(values, dtype), constant_value(length), \
        _static_nvals(values)
    # As TensorFlow: `nrows` given (or a length of 0) is checked here when all is static;
    # a derived ``len // length`` is checked when run.
    checked_here = nrows is not None or (static_len is not None and static_len == 0)
    static_nrows = None
    if nrows is None:
        if static_len is not None and static_len == 0:
            nrows = constant(0, dtype)
        else:  # len // length (0 for a length of 0)
            nrows = (math_ops.floordiv(count, math_ops.maximum(length, 1))
                     * math_ops.minimum(length, 1))
            if static_len is not None and static_count is not None:
                static_nrows = static_count // int(static_len)
    nrows = math_ops.cast(convert_to_tensor(nrows, dtype_hint=dtype), dtype)
    if static_nrows is None:
        static_nrows = constant_value(nrows)
    known = None not in (static_len, static_nrows, static_count)
    if checked_here and known and int(static_len) * int(static_nrows) != static_count:
        raise ValueError(f"uniform_row_length={int(static_len)} times "
                         f"nrows={int(static_nrows)} must equal nvals={static_count}")
    splits = math_ops.multiply(range_like(nrows + 1, dtype), length)
    if static_nrows is not None:
        splits.set_shape([int(static_nrows) + 1])
    if validate and not (checked_here and known):
        check = Assert(math_ops.equal(length * nrows, count),
                       ["uniform_row_length", length, "times nrows", nrows,
                        "must equal nvals", count])
        splits = with_dependencies([check], splits)
    return cls(values, splits, internal=True,
               uniform_row_length=array_ops.identity(length, "UniformRowLength"))


def sparse_rows(cls, st_input, name, row_splits_dtype):
    """`RaggedTensor.from_sparse`."""
    from flowgraph.framework.sparse_tensor import SparseTensor

    if not isinstance(st_input, SparseTensor):
        raise TypeError(f"Argument `st_input` must be of type SparseTensor, but is of "
                        f"type {type(st_input).__name__}.")
    rank = st_input.dense_shape.shape
    if rank.ndims == 1 and rank.dims[0].value not in (None, 2):
        raise ValueError("rank(st_input) must be 2.")
    dtype = _dtypes.as_dtype(row_splits_dtype)
    with name_scope(name, "RaggedFromSparse"):
        indices = math_ops.cast(st_input.indices, dtype)
        rowids, cols = indices[:, 0], indices[:, 1]
        nrows = math_ops.cast(st_input.dense_shape, dtype)[0]
        rt = cls.from_value_rowids(st_input.values, rowids, nrows, validate=False)
        # Packed left: each value's column is its place in its row.
        place = range_like(array_ops.shape(rowids)[0], dtype) - array_ops.gather(
            rt.row_splits, rowids)
        check = Assert(reduce_all(math_ops.equal(cols, place)),
                       ["SparseTensor is not right-ragged", "SparseTensor.indices =",
                        st_input.indices])
        return cls(with_dependencies([check], rt.values), rt.row_splits, internal=True)


def merge_dims(cls, x, outer: int, inner: int):
    """`x` (a RaggedTensor or a dense tensor) with dimensions outer..inner (outer < inner,
    both non-negative) merged."""
    if isinstance(x, Tensor):
        shape = array_ops.shape(x)
        size = reduce_prod(shape[outer:inner + 1], keepdims=True)
        return array_ops.reshape(x, array_ops.concat([shape[:outer], size, shape[inner + 1:]],
                                                     0))
    if outer == 0:  # the rows vanish: their values, with what remains merged into them
        return x.values if inner == 1 else merge_dims(cls, x.values, 0, inner - 1)
    if outer > 1:  # below this level: the row partition stays
        return x.with_values(merge_dims(cls, x.values, outer - 1, inner - 1))
    # outer == 1: each row takes everything below it down to `inner`.
    splits, level, steps = x.row_splits, x.values, inner - 1
    while steps and not isinstance(level, Tensor):
        splits, level, steps = array_ops.gather(level.row_splits, splits), level.values, steps - 1
    if steps:  # the rest are dense dimensions 1..steps of `level`
        shape = array_ops.shape(level, out_type=splits.dtype)
        splits = splits * reduce_prod(shape[1:steps + 1])
        level = merge_dims(cls, level, 0, steps)
    return cls(level, splits, internal=True)


def range_like(n, dtype):
    """``range(n)`` as `dtype`."""
    return math_ops.cast(_range(math_ops.cast(n, _dtypes.int32)), dtype)
