"""More of ``tf.ragged``: `range` (op ``RaggedRange``), `boolean_mask`, `stack`,
`stack_dynamic_partitions`, `cross` / `cross_hashed` and `placeholder`, composed from
graph ops on a `RaggedTensor`'s values and row splits (ragged rank 1 unless noted).

``RaggedRange(starts, limits, deltas)`` gives ``(row_splits, values)``: row ``i`` is
``range(starts[i], limits[i], deltas[i])`` (scalars broadcast). It is also how rows are
gathered here: the value positions of rows ``idx`` are the ragged range of their
starts and limits.

Example
-------
>>> import flowgraph as tf
>>> rt = tf.ragged.range([3, 0, 2])
>>> tf.Session().run(rt).to_list()
[[0, 1, 2], [], [0, 1]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.math_reduce import cumsum
from flowgraph.ops.op_util import make_op
from flowgraph.ops.ragged_tensor import RaggedTensor

__all__ = ["boolean_mask", "cross", "cross_hashed", "placeholder", "range", "stack",
           "stack_dynamic_partitions"]

_builtin_range = range


# -- RaggedRange --------------------------------------------------------------------------------
def _ragged_range_dtypes(op):
    return [_dtypes.as_dtype(op.attrs["Tsplits"]), _dtypes.as_dtype(op.attrs["T"])]


@register_op("RaggedRange", attrs={"T": _dtypes.int32, "Tsplits": _dtypes.int64},
             num_outputs=2, dtype_fn=_ragged_range_dtypes)
def _ragged_range_shape(op, starts, limits, deltas):
    nrows = None
    for s in (starts, limits, deltas):
        if s.ndims is not None and s.ndims > 1:
            raise op.shape_error(f"starts, limits and deltas must be scalars or vectors, "
                                 f"got rank {s.ndims}")
        if s.ndims == 1 and s[0].value is not None:
            nrows = s[0].value
    scalars = all(s.ndims == 0 for s in (starts, limits, deltas))
    splits = TensorShape([2 if scalars else (None if nrows is None else nrows + 1)])
    return [splits, TensorShape([None])]


not_differentiable("RaggedRange")


def range(starts, limits=None, deltas=1, dtype=None, name=None,
          row_splits_dtype=_dtypes.int64):
    """A ragged tensor whose row ``i`` is ``range(starts[i], limits[i], deltas[i])``
    (with `limits` omitted, ``range(0, starts[i])``); scalar arguments broadcast.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.ragged.range([1, 2], [4, 6], 2)).to_list()
    [[1, 3], [2, 4]]
    """
    with name_scope(name, "RaggedRange") as scope:
        if limits is None:
            starts, limits = 0, starts
        ts = [convert_to_tensor(v, dtype=dtype, name=n) if dtype is not None or
              _is_tensor(v) else None for v, n in ((starts, "starts"), (limits, "limits"),
                                                   (deltas, "deltas"))]
        if dtype is None:  # the widest of the arguments' dtypes, as TensorFlow infers
            conv = [t if t is not None else convert_to_tensor(v) for t, v in
                    zip(ts, (starts, limits, deltas))]
            order = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]
            dtype = max((c.dtype.base_dtype for c in conv),
                        key=lambda d: order.index(d) if d in order else -1)
            ts = [_m.cast(c, dtype) if c.dtype.base_dtype != dtype else c for c in conv]
        splits, values = make_op("RaggedRange", ts,
                                 {"T": _dtypes.as_dtype(dtype),
                                  "Tsplits": _dtypes.as_dtype(row_splits_dtype)},
                                 name=scope).outputs
        return RaggedTensor.from_row_splits(values, splits, validate=False)


def _is_tensor(v) -> bool:
    from flowgraph.framework.operation import Tensor

    return isinstance(v, Tensor)


def _ragged_range_values(starts, limits, splits_dtype):
    splits, values = make_op("RaggedRange", [starts, limits, _a.ones_like(starts)],
                             {"T": starts.dtype.base_dtype, "Tsplits": splits_dtype},
                             name="RaggedRange").outputs
    return splits, values


def _gather_rows(rt: RaggedTensor, indices) -> RaggedTensor:
    """Rows `indices` of `rt` (any ragged rank)."""
    idx = _m.cast(indices, rt.row_splits.dtype)
    starts = _a.gather(rt.row_starts(), idx)
    limits = _a.gather(rt.row_limits(), idx)
    splits, positions = _ragged_range_values(starts, limits, rt.row_splits.dtype)
    values = rt.values
    inner = _gather_rows(values, positions) if isinstance(values, RaggedTensor) else \
        _a.gather(values, positions)
    return RaggedTensor.from_row_splits(inner, splits, validate=False)


# -- boolean_mask ----------------------------------------------------------------------------
def _mask_rows(data, mask):
    """Rows of `data` (dense or ragged) where the 1-D bool `mask` is True."""
    if isinstance(data, RaggedTensor):
        return _gather_rows(data, _a.reshape(_a.where(mask), [-1]))
    return _a.boolean_mask(data, mask)


def boolean_mask(data, mask, name=None):
    """The entries of `data` where `mask` is True, keeping the rows: a 1-D mask keeps
    whole rows; a mask of `data`'s ragged shape keeps values within their rows (each
    row shrinks); a dense 2-D mask of dense data gives a ragged result.

    Example
    -------
    >>> import flowgraph as tf
    >>> rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    >>> m = tf.ragged.constant([[True, False, True], [False], [True, True]])
    >>> tf.Session().run(tf.ragged.boolean_mask(rt, m)).to_list()
    [[1, 3], [], [5, 6]]
    """
    with name_scope(name, "RaggedMask"):
        if not isinstance(mask, RaggedTensor):
            mask = convert_to_tensor(mask, name="mask")
            if mask.dtype.base_dtype != _dtypes.bool:
                raise TypeError(f"tf.ragged.boolean_mask: mask must be bool, got "
                                f"{mask.dtype.name}")
        if not isinstance(data, RaggedTensor):
            data = convert_to_tensor(data, name="data")
        rank = mask.shape.ndims
        if not isinstance(mask, RaggedTensor) and rank == 1:
            return _mask_rows(data, mask)
        if isinstance(mask, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                data = RaggedTensor.from_row_splits(
                    _a.reshape(data, [-1]), mask.row_splits, validate=False)
            values = boolean_mask(data.values, mask.values)
        else:
            if rank != 2:
                raise ValueError(f"tf.ragged.boolean_mask: a dense mask must have rank 1 or "
                                 f"2, got shape {mask.shape}")
            values = _a.boolean_mask(data, mask)
            mask = RaggedTensor.from_tensor(mask)
        kept = _m.cast(mask.values if not isinstance(mask.values, RaggedTensor)
                       else mask.values.flat_values, mask.row_splits.dtype)
        from flowgraph.ops.segment_ops import unsorted_segment_sum

        lengths = unsorted_segment_sum(kept, mask.value_rowids(), mask.nrows())
        return RaggedTensor.from_row_lengths(values, lengths, validate=False)


# -- stack ------------------------------------------------------------------------------------
def _as_ragged(v) -> RaggedTensor:
    if isinstance(v, RaggedTensor):
        return v
    t = convert_to_tensor(v)
    if t.shape.ndims is None or t.shape.ndims < 2:
        raise ValueError(f"tf.ragged.stack: a dense input stacked with ragged ones must "
                         f"have rank >= 2, got shape {t.shape}")
    return RaggedTensor.from_tensor(t)


def _concat_rows(rts: list) -> RaggedTensor:
    """The rows of every ragged tensor of `rts`, one after another."""
    values = [rt.values for rt in rts]
    if any(isinstance(v, RaggedTensor) for v in values):
        inner = _concat_rows([_as_ragged(v) for v in values])
    else:
        inner = _a.concat(values, 0)
    splits, offset = [rts[0].row_splits], rts[0].row_splits[-1]
    for rt in rts[1:]:
        splits.append(rt.row_splits[1:] + offset)
        offset = offset + rt.row_splits[-1]
    return RaggedTensor.from_row_splits(inner, _a.concat(splits, 0), validate=False)


def stack(values, axis=0, name=None):
    """Stack ragged (or dense) tensors of one rank along a new dimension `axis` (0 or 1
    for ragged inputs): the result's rows are the inputs (axis 0) or the inputs' rows
    interleaved (axis 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[4], []])
    >>> tf.Session().run(tf.ragged.stack([a, b], axis=1)).to_list()
    [[[1, 2], [4]], [[3], []]]
    """
    with name_scope(name, "RaggedConcat"):
        values = list(values)
        if not values:
            raise ValueError("tf.ragged.stack: values must not be empty")
        if not any(isinstance(v, RaggedTensor) for v in values):
            # as TensorFlow: dense inputs give a ragged tensor (ragged rank 1)
            return RaggedTensor.from_tensor(
                _a.stack([convert_to_tensor(v) for v in values], axis=axis))
        rts = [_as_ragged(v) for v in values]
        k = len(rts)
        rows = _concat_rows(rts)
        splits_dtype = rows.row_splits.dtype
        if axis == 0:
            outer = _a.concat([_a.zeros([1], splits_dtype),
                               cumsum(_a.stack([rt.nrows() for rt in rts]))], 0)
            return RaggedTensor.from_row_splits(rows, outer, validate=False)
        if axis != 1:
            raise ValueError(f"tf.ragged.stack: axis must be 0 or 1 for ragged inputs here, "
                             f"got {axis}")
        n = rts[0].nrows()
        order = _a.reshape(_a.transpose(_a.reshape(
            _m.cast(_a.range(_m.cast(n, _dtypes.int32) * k), splits_dtype),
            _a.stack([k, _m.cast(n, _dtypes.int32)]))), [-1])
        interleaved = _gather_rows(rows, order)
        outer = _m.cast(_a.range(_m.cast(n, _dtypes.int32) + 1), splits_dtype) * k
        return RaggedTensor.from_row_splits(interleaved, outer, validate=False)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row ``p`` of the result holds the entries of `data` whose partition is ``p``, in
    their original order (`num_partitions` rows).

    Example
    -------
    >>> import flowgraph as tf
    >>> rt = tf.ragged.stack_dynamic_partitions([1, 2, 3, 4, 5], [2, 0, 2, 1, 0], 3)
    >>> tf.Session().run(rt).to_list()
    [[2, 5], [4], [1, 3]]
    """
    from flowgraph.ops.math_reduce import bincount
    from flowgraph.ops.sort_ops import argsort

    with name_scope(name, "SegmentStack"):
        data = convert_to_tensor(data, name="data")
        parts = convert_to_tensor(partitions, name="partitions")
        if not parts.dtype.is_integer:
            raise TypeError(f"tf.ragged.stack_dynamic_partitions: partitions must be "
                            f"integers, got {parts.dtype.name}")
        from flowgraph.ops.check_ops import assert_less, assert_non_negative

        checks = [assert_non_negative(parts, message="partitions must be non-negative"),
                  assert_less(parts, _m.cast(num_partitions, parts.dtype),
                              message="partitions must be less than num_partitions")]
        with _deps(checks):
            order = argsort(parts, stable=True)
        lengths = bincount(_m.cast(parts, _dtypes.int32), minlength=num_partitions,
                           maxlength=num_partitions, dtype=_dtypes.int64)
        return RaggedTensor.from_row_lengths(_a.gather(data, order), lengths,
                                             validate=False)


def _deps(ops):
    from flowgraph.framework.graph import get_default_graph

    return get_default_graph().control_dependencies(ops)


# -- cross ------------------------------------------------------------------------------------
def _cross_inputs(inputs, what: str) -> list:
    out = []
    for x in inputs:
        if isinstance(x, RaggedTensor):
            if isinstance(x.values, RaggedTensor):
                raise ValueError(f"tf.ragged.{what}: ragged inputs must have ragged rank 1")
            out.append(x.to_sparse())
        elif isinstance(x, SparseTensor):
            out.append(x)
        else:
            t = convert_to_tensor(x)
            if t.shape.ndims not in (None, 2):
                raise ValueError(f"tf.ragged.{what}: dense inputs must have rank 2, got "
                                 f"shape {t.shape}")
            out.append(t)
    return [(_m.cast(x, _dtypes.int64) if not isinstance(x, SparseTensor) and
             x.dtype.is_integer else x) for x in out]


def _sparse_to_ragged(sp: SparseTensor) -> RaggedTensor:
    rowids = sp.indices[:, 0]
    return RaggedTensor.from_value_rowids(sp.values, rowids, nrows=sp.dense_shape[0],
                                          validate=False)


def _int64_values(sp: SparseTensor) -> SparseTensor:
    if sp.values.dtype.is_integer and sp.values.dtype.base_dtype != _dtypes.int64:
        return SparseTensor(sp.indices, _m.cast(sp.values, _dtypes.int64), sp.dense_shape)
    return sp


def _ragged_cross(inputs, what: str, hashed: bool, num_buckets: int, hash_key: int, name):
    """``RaggedCross`` of `inputs` in their order (ragged rank 1, sparse or dense 2-D,
    int64 or string values)."""
    from flowgraph.ops.op_util import make_op

    with name_scope(name, "RaggedCross"):
        order, ragged, sparse, dense = [], [], [], []
        splits_dtype = None
        for x in inputs:
            if isinstance(x, RaggedTensor):
                if isinstance(x.values, RaggedTensor):
                    raise ValueError(f"tf.ragged.{what}: ragged inputs must have ragged "
                                     "rank 1")
                order.append("R")
                ragged.append(x)
                splits_dtype = splits_dtype or x.row_splits.dtype.base_dtype
            elif isinstance(x, SparseTensor):
                order.append("S")
                sparse.append(_int64_values(x))
            else:
                t = convert_to_tensor(x)
                if t.shape.ndims not in (None, 2):
                    raise ValueError(f"tf.ragged.{what}: dense inputs must have rank 2, got "
                                     f"shape {t.shape}")
                order.append("D")
                dense.append(_m.cast(t, _dtypes.int64) if t.dtype.is_integer else t)
        r_values = [_m.cast(r.values, _dtypes.int64) if r.values.dtype.is_integer
                    else r.values for r in ragged]
        for t in r_values + [s.values for s in sparse] + dense:
            if t.dtype.base_dtype not in (_dtypes.string, _dtypes.int64):
                raise TypeError(f"tf.ragged.{what}: inputs must hold integers or strings, "
                                f"got {t.dtype.name} ({t.name})")
        splits_dtype = splits_dtype or _dtypes.int64
        op = make_op("RaggedCross", [*r_values, *[r.row_splits for r in ragged],
                                     *[s.indices for s in sparse], *[s.values for s in sparse],
                                     *[s.dense_shape for s in sparse], *dense], {
            "Nsparse": len(sparse), "input_order": "".join(order), "hashed_output": hashed,
            "num_buckets": int(num_buckets), "hash_key": int(hash_key),
            "ragged_values_types": [t.dtype.base_dtype for t in r_values],
            "ragged_splits_types": [r.row_splits.dtype.base_dtype for r in ragged],
            "sparse_values_types": [s.values.dtype.base_dtype for s in sparse],
            "dense_types": [t.dtype.base_dtype for t in dense],
            "out_values_type": _dtypes.int64 if hashed else _dtypes.string,
            "out_row_splits_type": splits_dtype}, name="RaggedCross")
        return RaggedTensor.from_row_splits(op.outputs[0], op.outputs[1], validate=False)


def cross(inputs, name=None):
    """Per row, every combination of one value of each input (in the order given),
    joined with ``"_X_"`` (ragged, sparse or dense 2-D inputs of strings or integers):
    TensorFlow's ``RaggedCross``.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.ragged.cross([tf.ragged.constant([["a"], ["b", "c"]]),
    ...                      tf.constant([["x"], ["y"]])])
    >>> tf.Session().run(c).to_list()
    [[b'a_X_x'], [b'b_X_y', b'c_X_y']]
    """
    return _ragged_cross(inputs, "cross", False, 0, 0, name)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Like `cross`, each combination fingerprinted (FarmHash, as TensorFlow) and taken
    modulo `num_buckets` when it is positive: int64 values."""
    from flowgraph.ops.sparse_ops import DEFAULT_HASH_KEY

    key = DEFAULT_HASH_KEY if hash_key is None else hash_key
    return _ragged_cross(inputs, "cross_hashed", True, num_buckets, key, name)


# -- placeholder ------------------------------------------------------------------------------
def placeholder(dtype, ragged_rank, value_shape=None, name=None):
    """A ragged placeholder: a flat-values placeholder of shape ``[None, *value_shape]``
    and ``ragged_rank`` int64 row-splits placeholders; feed it a `RaggedTensorValue`.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.ragged.placeholder(tf.float32, 1, [3])
    >>> p.shape.as_list(), p.flat_values.name
    ([None, None, 3], 'RaggedPlaceholder/flat_values:0')
    """
    from flowgraph.ops.array_ops import placeholder as _placeholder

    if int(ragged_rank) < 1:
        raise ValueError(f"tf.ragged.placeholder: ragged_rank must be at least 1, got "
                         f"{ragged_rank}")
    with name_scope(name, "RaggedPlaceholder"):
        inner = [] if value_shape is None else TensorShape(value_shape).as_list()
        flat = _placeholder(dtype, [None, *inner], name="flat_values")
        splits = [_placeholder(_dtypes.int64, [None], name=f"row_splits_{i}")
                  for i in _builtin_range(int(ragged_rank))]
        return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)
