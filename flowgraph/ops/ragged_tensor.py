"""``tf.RaggedTensor``: rows of different lengths, as flat values plus row partitions.

A ragged tensor of ragged rank 1 is two tensors::

    [[1, 2], [3], []]   values     = [1, 2, 3]
                        row_splits = [0, 2, 3, 3]    row i is values[splits[i]:splits[i+1]]

Higher ragged ranks nest: ``values`` is itself a `RaggedTensor`; the innermost
``flat_values`` is a dense tensor (its dimensions after the first are uniform). Every
method builds ordinary graph ops on these tensors (``to_tensor`` scatters the values
into a padded dense tensor, ``to_sparse`` computes their indices), so gradients flow
through ``flat_values`` as through any op. Fetching a `RaggedTensor` in ``Session.run``
gives a `RaggedTensorValue` (NumPy values and splits, ``to_list()``).

Example
-------
>>> import flowgraph as tf
>>> rt = tf.RaggedTensor.from_row_splits([1, 2, 3], row_splits=[0, 2, 3, 3])
>>> with tf.Session() as sess:
...     print(sess.run(rt).to_list(), sess.run(rt.to_tensor()).tolist())
[[1, 2], [3], []] [[1, 2], [3, 0], [0, 0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.array_extra_ops import repeat
from flowgraph.ops.array_gen_ops import sequence_mask
from flowgraph.ops.array_index_ops import boolean_mask
from flowgraph.ops.math_reduce import bincount, cumsum, reduce_any, reduce_max
from flowgraph.ops.ragged_partition import (
    check_partition,
    merge_dims,
    nvals,
    range_like,
    sparse_rows,
    uniform_rows,
    validated_splits,
)

__all__ = ["RaggedTensor", "RaggedTensorValue"]


class _Nesting:
    """What a ragged tensor and its fetched value share: the walk down the nested
    ``values`` of the same class to the flat values and every level's row splits."""

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, type(self)):
            v = v.values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out, v = [self._row_splits], self._values
        while isinstance(v, type(self)):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype


class RaggedTensorValue(_Nesting):
    """A fetched `RaggedTensor`: NumPy ``values`` (or a nested value) and ``row_splits``."""

    def __init__(self, values, row_splits) -> None:
        self._values = values
        self._row_splits = np.asarray(row_splits)

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)


    @property
    def shape(self) -> tuple:
        inner = self.flat_values.shape[1:]
        return (len(self._row_splits) - 1,) + (None,) * self.ragged_rank + tuple(inner)

    def to_list(self) -> list:
        """The rows as nested Python lists."""
        values = self._values.to_list() if isinstance(self._values, RaggedTensorValue) \
            else self._values.tolist()
        s = self._row_splits
        return [values[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def __repr__(self) -> str:  # TensorFlow's form: the components
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"

    def __str__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()!r}>"


class RaggedTensor(_Nesting):
    """A tensor whose rows have different lengths (TensorFlow's ``tf.RaggedTensor``).

    Build one with the ``from_*`` class methods or `tf.ragged.constant`; do not call the
    constructor.
    """

    def __init__(self, values, row_splits, internal: bool = False,
                 uniform_row_length=None) -> None:
        if not internal:
            raise ValueError("RaggedTensor constructor is private; use a factory method "
                             "such as RaggedTensor.from_row_splits() or tf.ragged.constant()")
        self._values = values
        self._row_splits = row_splits
        self._uniform_row_length = uniform_row_length

    # -- factories ---------------------------------------------------------------------
    @staticmethod
    def _as_values(values):
        return values if isinstance(values, RaggedTensor) else convert_to_tensor(values)

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate: bool = True):
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``."""
        with name_scope(name, "RaggedFromRowSplits"):
            values = cls._as_values(values)
            splits = check_partition(convert_to_tensor(row_splits, dtype_hint=_dtypes.int64))
            if validate:
                splits = validated_splits(splits, values, "from_row_splits")
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate: bool = True):
        """Row ``i`` starts at ``values[row_starts[i]]`` and ends where the next starts
        (the last, at the end of `values`).

        Example
        -------
        >>> import flowgraph as tf
        >>> rt = tf.RaggedTensor.from_row_starts([1, 2, 3, 4, 5], row_starts=[0, 2, 2, 4])
        >>> with tf.Session() as sess:
        ...     print(sess.run(rt).to_list())
        [[1, 2], [], [3, 4], [5]]
        """
        with name_scope(name, "RaggedFromRowStarts"):
            values = cls._as_values(values)
            starts = check_partition(convert_to_tensor(row_starts, dtype_hint=_dtypes.int64),
                                   "row_starts")
            end = array_ops.reshape(nvals(values, starts.dtype), [1])
            splits = array_ops.concat([starts, end], 0)
            if validate:
                splits = validated_splits(splits, values, "from_row_starts")
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate: bool = True):
        """Row ``i`` ends before ``values[row_limits[i]]`` and starts where the previous
        one ended (the first, at 0)."""
        with name_scope(name, "RaggedFromRowLimits"):
            values = cls._as_values(values)
            limits = check_partition(convert_to_tensor(row_limits, dtype_hint=_dtypes.int64),
                                   "row_limits")
            zero = array_ops.zeros([1], limits.dtype)
            splits = array_ops.concat([zero, limits], 0)
            if validate:
                splits = validated_splits(splits, values, "from_row_limits")
            return cls(values, splits, internal=True)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None,
                                validate: bool = True, name=None):
        """Rows of ``uniform_row_length`` values each: a uniform (not ragged) dimension,
        which the static shape shows when the length is a constant. `nrows` defaults to
        ``len(values) // uniform_row_length`` (0 for a length of 0); their product must
        be ``len(values)`` (checked here when all three are static, else when run if
        `validate`).

        Example
        -------
        >>> import flowgraph as tf
        >>> rt = tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 2)
        >>> rt.shape.as_list()
        [3, 2]
        >>> with tf.Session() as sess:
        ...     print(sess.run(rt).to_list())
        [[1, 2], [3, 4], [5, 6]]
        """
        with name_scope(name, "RaggedFromUniformRowLength"):
            return uniform_rows(cls, values, uniform_row_length, nrows, validate)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate: bool = True):
        """Rows of the given lengths, in order."""

        with name_scope(name, "RaggedFromRowLengths"):
            lengths = check_partition(convert_to_tensor(row_lengths, dtype_hint=_dtypes.int64),
                                    "row_lengths")
            zero = array_ops.zeros([1], lengths.dtype)
            splits = array_ops.concat([zero, cumsum(lengths)], 0)
            values = cls._as_values(values)
            if validate:
                splits = validated_splits(splits, values, "from_row_lengths", lengths=lengths)
            return cls(values, splits, internal=True)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None,
                          validate: bool = True):
        """Row ``value_rowids[j]`` holds ``values[j]`` (rowids sorted, ascending);
        `nrows` (default: last rowid + 1) adds empty rows at the end."""

        with name_scope(name, "RaggedFromValueRowIds"):
            rowids = check_partition(convert_to_tensor(value_rowids, dtype_hint=_dtypes.int64),
                                   "value_rowids")
            if nrows is None:
                nrows = reduce_max(array_ops.concat(
                    [rowids, constant([-1], rowids.dtype)], 0)) + 1
            nrows = math_ops.cast(convert_to_tensor(nrows), rowids.dtype)
            counts = bincount(math_ops.cast(rowids, _dtypes.int32),
                                       minlength=math_ops.cast(nrows, _dtypes.int32),
                                       maxlength=math_ops.cast(nrows, _dtypes.int32))
            zero = array_ops.zeros([1], rowids.dtype)
            splits = array_ops.concat(
                [zero, cumsum(math_ops.cast(counts, rowids.dtype))], 0)
            values = cls._as_values(values)
            if validate:
                splits = validated_splits(splits, values, "from_value_rowids", rowids=rowids,
                                          nrows=nrows)
            return cls(values, splits, internal=True)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None,
                               validate: bool = True):
        """Nested rows: the first splits partition the outermost dimension."""
        with name_scope(name, "RaggedFromNestedRowSplits"):
            result = flat_values
            for splits in reversed(list(nested_row_splits)):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None,
                                validate: bool = True):
        """Nested rows from each level's row lengths, outermost first."""
        with name_scope(name, "RaggedFromNestedRowLengths"):
            result = flat_values
            for lengths in reversed(list(nested_row_lengths)):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None,
                                 name=None, validate: bool = True):
        """Nested rows from each level's value rowids (and row counts), outermost first.

        Example
        -------
        >>> import flowgraph as tf
        >>> rt = tf.RaggedTensor.from_nested_value_rowids(
        ...     [1, 2, 3, 4, 5, 6], [[0, 0, 2], [0, 1, 1, 2, 2, 2]], nested_nrows=[4, 3])
        >>> with tf.Session() as sess:
        ...     print(sess.run(rt).to_list())
        [[[1], [2, 3]], [], [[4, 5, 6]], []]
        """
        rowids = list(nested_value_rowids)
        nrows = [None] * len(rowids) if nested_nrows is None else list(nested_nrows)
        if len(nrows) != len(rowids):
            raise ValueError(f"Argument `nested_nrows` must have the same length as argument "
                             f"`nested_value_rowids`. len(nested_nrows) = {len(nrows)} vs. "
                             f"len(nested_values_rowids) = {len(rowids)}.")
        with name_scope(name, "RaggedFromNestedValueRowIds"):
            result = flat_values
            for ids, n in reversed(list(zip(rowids, nrows, strict=True))):
                result = cls.from_value_rowids(result, ids, n, validate=validate)
            return result

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=_dtypes.int64):
        """The rows of a 2-D `tf.SparseTensor` whose values are packed to the left of
        each row (indices in row-major order, columns ``0, 1, ...``; checked when run:
        "SparseTensor is not right-ragged" otherwise). Trailing empty rows are kept.

        Example
        -------
        >>> import flowgraph as tf
        >>> st = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 2.0, 3.0], [4, 5])
        >>> with tf.Session() as sess:
        ...     print(sess.run(tf.RaggedTensor.from_sparse(st)).to_list())
        [[1.0, 2.0], [], [3.0], []]
        """
        return sparse_rows(cls, st_input, name, row_splits_dtype)

    # -- structure ---------------------------------------------------------------------
    values = property(lambda self: self._values, doc="The concatenated rows.")
    row_splits = property(lambda self: self._row_splits,
                          doc="Where each row starts in `values`, then the end.")


    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def uniform_row_length(self):
        """The length of every row (a scalar tensor) when this level was built with
        `from_uniform_row_length`, else None."""
        return self._uniform_row_length

    @property
    def shape(self) -> TensorShape:
        """``[nrows, None (per ragged dimension), inner dimensions...]``."""
        from flowgraph.framework.constant_op import constant_value

        n = self._row_splits.shape.dims[0].value if self._row_splits.shape.ndims else None
        inner = self.flat_values.shape
        rest = inner.as_list()[1:] if inner.ndims is not None else None
        if rest is None:
            return TensorShape(None)
        dims, level = [None if n is None else n - 1], self
        while isinstance(level, RaggedTensor):  # a uniform level's static length, or None
            length = level._uniform_row_length
            length = None if length is None else constant_value(length)
            dims.append(None if length is None else int(length))
            level = level._values
        return TensorShape(dims + rest)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def graph(self):
        return self._row_splits.graph

    def nrows(self, out_type=None, name=None):
        """The number of rows (a scalar tensor)."""

        with name_scope(name, "RaggedNRows"):
            n = array_ops.shape(self._row_splits, out_type=self._row_splits.dtype)[0] - 1
            return n if out_type is None else math_ops.cast(n, out_type)

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def row_lengths(self, axis: int = 1, name=None):
        """The length of each row."""
        if axis != 1:
            raise NotImplementedError("RaggedTensor.row_lengths: only axis=1 is supported")
        with name_scope(name, "RaggedRowLengths"):
            return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self, name=None):
        """The row of each value (a vector as long as `values`)."""

        with name_scope(name, "RaggedValueRowIds"):
            rows = range_like(self.nrows(), self._row_splits.dtype)
            return repeat(rows, self.row_lengths())

    def with_values(self, new_values):
        """The same row partition over `new_values`."""
        return RaggedTensor(self._as_values(new_values), self._row_splits, internal=True,
                            uniform_row_length=self._uniform_row_length)

    def with_row_splits_dtype(self, dtype):
        """This ragged tensor with every row partition cast to `dtype` (int32 or int64);
        itself when they already are."""
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in (_dtypes.int32, _dtypes.int64):
            raise ValueError(f"Argument `row_splits` dtype must be int32 or int64. "
                             f"Received {dtype}.")
        if self._row_splits.dtype.base_dtype == dtype:
            return self
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        length = self._uniform_row_length
        return RaggedTensor(values, math_ops.cast(self._row_splits, dtype), internal=True,
                            uniform_row_length=None if length is None
                            else math_ops.cast(length, dtype))

    def nested_row_lengths(self, name=None) -> tuple:
        """The row lengths of every ragged level, outermost first."""
        with name_scope(name, "RaggedNestedRowLengths"):
            return tuple(level.row_lengths() for level in self._levels())

    def nested_value_rowids(self, name=None) -> tuple:
        """The value rowids of every ragged level, outermost first."""
        with name_scope(name, "RaggedNestedValueRowIds"):
            return tuple(level.value_rowids() for level in self._levels())

    def _levels(self) -> list:
        out, level = [], self
        while isinstance(level, RaggedTensor):
            out.append(level)
            level = level._values
        return out

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The shape of the smallest dense box holding every row: the number of rows,
        the longest row of each ragged level (0 when none), then the inner dimensions;
        `axis` (an int or a list) picks some of them.

        Example
        -------
        >>> import flowgraph as tf
        >>> rt = tf.RaggedTensor.from_row_splits([1, 2, 3], row_splits=[0, 2, 3, 3])
        >>> with tf.Session() as sess:
        ...     print(sess.run(rt.bounding_shape()).tolist())
        [3, 2]
        """
        with name_scope(name, "RaggedBoundingBox"):
            dtype = self._row_splits.dtype if out_type is None else _dtypes.as_dtype(out_type)
            dims = [self.nrows(out_type=dtype)]
            for level in self._levels():
                lengths = math_ops.cast(level.row_lengths(), dtype)
                dims.append(reduce_max(array_ops.concat(
                    [lengths, array_ops.zeros([1], dtype)], 0)))
            inner = array_ops.shape(self.flat_values, out_type=dtype)[1:]
            box = array_ops.concat([array_ops.stack(dims), inner], 0)
            return box if axis is None else array_ops.gather(box, axis)

    def merge_dims(self, outer_axis: int, inner_axis: int):
        """Dimensions `outer_axis` to `inner_axis` (inclusive) merged into one: a ragged
        tensor of lower rank, or a dense tensor when every ragged dimension is merged
        with the first.

        Example
        -------
        >>> import flowgraph as tf
        >>> rt = tf.RaggedTensor.from_nested_row_lengths([1, 2, 3, 4], [[2, 1], [1, 2, 1]])
        >>> with tf.Session() as sess:
        ...     print(sess.run(rt.merge_dims(1, 2)).to_list(), sess.run(rt.merge_dims(0, 2)))
        [[1, 2, 3], [4]] [1 2 3 4]
        """
        rank = self.shape.ndims
        axes = []
        for what, axis in (("outer_axis", outer_axis), ("inner_axis", inner_axis)):
            if rank is None:
                if axis < 0:
                    raise ValueError(f"merge_dims: {what}={axis} is negative but the rank "
                                     f"of the RaggedTensor is unknown")
            elif not -rank <= axis < rank:
                raise ValueError(f"{what}={axis} out of bounds: expected "
                                 f"{-rank}<={what}<{rank}")
            axes.append(axis % rank if rank is not None else axis)
        outer, inner = axes
        if outer > inner:
            raise ValueError(f"Expected outer_axis ({outer_axis}) to be less than or equal to "
                             f"inner_axis ({inner_axis}).")
        return self if outer == inner else merge_dims(RaggedTensor, self, outer, inner)

    def consumers(self) -> list:
        """The ops that read any of this ragged tensor's component tensors."""
        out: list = []
        parts = [*self.nested_row_splits, self.flat_values]
        for level in self._levels():
            if level._uniform_row_length is not None:
                parts.append(level._uniform_row_length)
        for t in parts:
            out.extend(op for op in t.consumers() if op not in out)
        return out

    def to_list(self):
        """Eager only: fetch the ragged tensor with ``Session.run`` and call ``to_list()``
        on the `RaggedTensorValue` it gives."""
        raise ValueError("to_list can only be used in eager mode. In a graph, run the "
                         "RaggedTensor with Session.run and call to_list() on the "
                         "RaggedTensorValue it returns.")

    def numpy(self):
        """Eager only (see `to_list`)."""
        raise ValueError("RaggedTensor.numpy() is only supported in eager mode. In a graph, "
                         "run the RaggedTensor with Session.run.")

    def with_flat_values(self, new_values):
        """The same nested row partitions over `new_values`."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # -- conversions -------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None, shape=None):
        """A dense tensor, each row padded with `default_value` (zero by default) to the
        longest row, or padded and cut to `shape` (``RaggedTensorToTensor``)."""
        from flowgraph.ops.op_util import make_tensor

        with name_scope(name, "RaggedToTensor"):
            values = self.flat_values
            splits = self.nested_row_splits
            dtype = self._row_splits.dtype.base_dtype
            shape_t = constant(-1, dtype) if shape is None else \
                convert_to_tensor(shape, dtype=dtype, name="shape")
            fill = array_ops.zeros([], values.dtype) if default_value is None else \
                convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
            return make_tensor("RaggedTensorToTensor", [shape_t, values, fill, *splits], {
                "row_partition_types": ["ROW_SPLITS"] * len(splits),
                "num_row_partition_tensors": len(splits)}, name="RaggedTensorToTensor")

    def gather_rows(self, indices, name=None):
        """The rows `indices` (any shape; ``tf.gather(rt, indices)``): a ragged tensor
        with one more ragged dimension per extra dimension of `indices`
        (``RaggedGather``)."""
        from flowgraph.ops.op_util import make_op

        with name_scope(name, "RaggedGather"):
            idx = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
            if idx.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
                raise TypeError(f"tf.gather: indices of a RaggedTensor must be int32 or "
                                f"int64, got {idx.dtype.name}")
            if idx.shape.ndims is None:
                raise ValueError("tf.gather: the rank of the indices into a RaggedTensor "
                                 "must be known")
            splits = self.nested_row_splits
            out_rank = len(splits) + idx.shape.ndims - 1
            op = make_op("RaggedGather", [*splits, self.flat_values, idx], {
                "PARAMS_RAGGED_RANK": len(splits), "OUTPUT_RAGGED_RANK": out_rank},
                name="RaggedGather")
            if out_rank == 0:  # a scalar index: one row, its values
                return op.outputs[-1]
            return RaggedTensor.from_nested_row_splits(op.outputs[-1], op.outputs[:-1],
                                                       validate=False)

    def to_sparse(self, name=None):
        """A `tf.SparseTensor` with the same values (``RaggedTensorToSparse``; inner
        uniform dimensions become sparse dimensions too)."""
        from flowgraph.framework.sparse_tensor import SparseTensor
        from flowgraph.ops.op_util import make_op

        with name_scope(name, "RaggedToSparse"):
            splits = self.nested_row_splits
            op = make_op("RaggedTensorToSparse", [*splits, self.flat_values],
                         {"RAGGED_RANK": len(splits)}, name="RaggedTensorToSparse")
            return SparseTensor(*op.outputs)

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank: int = 1,
                    name=None, row_splits_dtype=_dtypes.int64):
        """Rows of a dense tensor: all of each row (a uniform dimension, as the static
        shape shows), its first ``lengths[i]`` values, or the values before its trailing
        `padding` values. With ``ragged_rank=k`` the first ``k`` dimensions become row
        partitions, the innermost of them ragged by `padding` (`lengths`: k=1 only).

        Example
        -------
        >>> import flowgraph as tf
        >>> tf.RaggedTensor.from_tensor(tf.zeros([2, 3, 4]), ragged_rank=2).shape.as_list()
        [2, 3, 4]
        """
        if not isinstance(ragged_rank, int) or ragged_rank < 1:
            raise ValueError(f"ragged_rank must be greater than 0; got {ragged_rank}")
        if lengths is not None and padding is not None:
            raise ValueError("Specify argument `lengths` or `padding`, but not both.")
        with name_scope(name, "RaggedFromTensor"):
            tensor = convert_to_tensor(tensor, name="tensor")
            rank = tensor.shape.ndims
            if rank is not None and rank <= ragged_rank:
                raise ValueError(f"The rank of a RaggedTensor must be greater than 1, i.e., "
                                 f"a list of scalars won't have ragged dimensions; "
                                 f"RaggedTensor.from_tensor: rank {rank} tensor with "
                                 f"ragged_rank={ragged_rank}")
            shape = array_ops.shape(tensor, out_type=row_splits_dtype)
            dims = [d.value for d in tensor.shape] if rank is not None else [None, None]
            if ragged_rank > 1:  # the outer row partitions are uniform
                if lengths is not None:
                    raise NotImplementedError("RaggedTensor.from_tensor: lengths with "
                                              "ragged_rank > 1 is not supported")
                merged = array_ops.reshape(tensor, array_ops.concat(
                    [constant([-1], row_splits_dtype), shape[2:]], 0))
                inner = cls.from_tensor(merged, padding=padding,
                                        ragged_rank=ragged_rank - 1,
                                        row_splits_dtype=row_splits_dtype)
                return cls.from_uniform_row_length(
                    inner, dims[1] if dims[1] is not None else shape[1],
                    nrows=dims[0] if dims[0] is not None else shape[0], validate=False)
            if lengths is None and padding is None:
                values = array_ops.reshape(tensor, array_ops.concat(
                    [constant([-1], row_splits_dtype), shape[2:]], 0))
                return cls.from_uniform_row_length(
                    values, dims[1] if dims[1] is not None else shape[1],
                    nrows=dims[0] if dims[0] is not None else shape[0], validate=False)
            if padding is not None:
                pad = math_ops.cast(convert_to_tensor(padding), tensor.dtype)
                is_value = math_ops.not_equal(tensor, pad)
                while is_value.shape.ndims is not None and is_value.shape.ndims > 2:
                    is_value = reduce_any(is_value, axis=-1)
                idx = range_like(shape[1], row_splits_dtype) + 1
                lengths = reduce_max(
                    math_ops.cast(is_value, row_splits_dtype) * idx, axis=1)
            lengths = math_ops.cast(convert_to_tensor(lengths), row_splits_dtype)
            mask = sequence_mask(lengths, shape[1])
            values = boolean_mask(tensor, mask)
            return cls.from_row_lengths(values, lengths, validate=False)

    # -- Session.run -------------------------------------------------------------------
    def _feed_components(self, value) -> list:
        """``(tensor, array)`` pairs feeding this ragged tensor (e.g. a
        ``tf.ragged.placeholder``) from a `RaggedTensorValue` of the same ragged rank."""
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(f"A RaggedTensor must be fed a tf.ragged.RaggedTensorValue (see "
                            f"tf.ragged.constant_value), got {type(value).__name__}")
        pairs, mine, theirs = [], self, value
        while isinstance(mine, RaggedTensor):
            if not isinstance(theirs, RaggedTensorValue):
                raise ValueError("The fed RaggedTensorValue has a lower ragged rank than "
                                 "the RaggedTensor it feeds")
            pairs.append((mine._row_splits, theirs.row_splits))
            mine, theirs = mine._values, theirs.values
        if isinstance(theirs, RaggedTensorValue):
            raise ValueError("The fed RaggedTensorValue has a higher ragged rank than the "
                             "RaggedTensor it feeds")
        pairs.append((mine, theirs))
        return pairs

    def _fetch_components(self):
        if isinstance(self._values, RaggedTensor):
            inner, build_inner = self._values._fetch_components()
            return ([*inner, self._row_splits],
                    lambda parts: RaggedTensorValue(build_inner(parts[:-1]), parts[-1]))
        return ([self._values, self._row_splits],
                lambda parts: RaggedTensorValue(parts[0], parts[1]))

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"
