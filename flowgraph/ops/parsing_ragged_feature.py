"""``tf.io.RaggedFeature``: a feature parsed into a `RaggedTensor`, for
``tf.io.parse_example`` and ``parse_single_example`` (`flowgraph/ops/parsing_ops.py`).

The values and every partition key are parsed as ragged keys of ``ParseExampleV2`` (one
flat list per example, concatenated over the batch, and its row splits); the partitions
then nest the flat values,
innermost first, and the batch dimension goes outermost::

    example 1: v = [1, 2, 3], lens = [2, 1]      RaggedFeature(int64, value_key="v",
    example 2: v = [4],       lens = [0, 1]          partitions=[RowLengths("lens")])
      values [1, 2, 3, 4] -> rows by lens [2, 1, 0, 1] -> [[1, 2], [3], [], [4]]
      -> per example (2 and 2 rows)       -> [[[1, 2], [3]], [[], [4]]]

``RowLengths(key)``, ``RowSplits(key)`` and ``UniformRowLength(n)`` partitions are
supported (a uniform partition makes the flat values ``[-1, n]``). Without partitions
``parse_single_example`` gives a plain vector, as TensorFlow does.

Example
-------
>>> import flowgraph as tf
>>> feature = {"v": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}
>>> ex = tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
>>> out = tf.io.parse_example([ex, b""], {"v": tf.io.RaggedFeature(tf.int64)})
>>> tf.Session().run(out["v"]).to_list()
[[1, 2], []]
"""

from __future__ import annotations

from collections import namedtuple

from flowgraph.framework import dtypes as _dtypes

__all__ = ["RaggedFeature", "RaggedPart", "expand_ragged_features"]

# A key a RaggedFeature reads (its values or a partition): parsed by ``ParseExampleV2``'s
# ragged outputs into (flat values, row splits over the batch).
RaggedPart = namedtuple("RaggedPart", ["dtype", "row_splits_dtype"])

_RowLengths = namedtuple("RowLengths", ["key"])
_RowSplits = namedtuple("RowSplits", ["key"])
_UniformRowLength = namedtuple("UniformRowLength", ["length"])
_ValueRowIds = namedtuple("ValueRowIds", ["key"])
_RowStarts = namedtuple("RowStarts", ["key"])
_RowLimits = namedtuple("RowLimits", ["key"])
_SUPPORTED = (_RowLengths, _RowSplits, _UniformRowLength)


class RaggedFeature(namedtuple("RaggedFeature", ["dtype", "value_key", "partitions",
                                                 "row_splits_dtype", "validate"])):
    """A feature parsed into a `RaggedTensor` (see the module docstring): `dtype`
    (int64, float32 or string), `value_key` (default: the feature's key), `partitions`
    (``RaggedFeature.RowLengths(key)``, ``RowSplits(key)``, ``UniformRowLength(n)``,
    outermost first) and `row_splits_dtype` (int32 by default, as in TF1).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.io.RaggedFeature(tf.int64, partitions=[tf.io.RaggedFeature.RowLengths("n")])
    RaggedFeature(dtype=tf.int64, value_key=None, partitions=[RowLengths(key='n')], \
row_splits_dtype=tf.int32, validate=False)
    """

    RowLengths = _RowLengths
    RowSplits = _RowSplits
    UniformRowLength = _UniformRowLength
    ValueRowIds = _ValueRowIds
    RowStarts = _RowStarts
    RowLimits = _RowLimits

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int32,
                validate=False):
        dtype = _dtypes.as_dtype(dtype).base_dtype
        if dtype not in (_dtypes.int64, _dtypes.float32, _dtypes.string):
            raise ValueError(f"Argument `dtype` must be int64, float32, or bytes; got {dtype!r}")
        row_splits_dtype = _dtypes.as_dtype(row_splits_dtype).base_dtype
        if row_splits_dtype not in (_dtypes.int32, _dtypes.int64):
            raise ValueError(f"Argument `row_splits_dtype` must be int32 or int64; got "
                             f"{row_splits_dtype!r}")
        if value_key is not None and (not isinstance(value_key, str) or not value_key):
            raise ValueError(f"Argument `value_key` must be a non-empty string; got "
                             f"{value_key!r}")
        for p in partitions:
            if not isinstance(p, _SUPPORTED):
                raise ValueError(f"RaggedFeature: partition {p!r} is not supported by "
                                 "flowgraph; use RowLengths, RowSplits or UniformRowLength")
        return super().__new__(cls, dtype, value_key, partitions, row_splits_dtype, validate)


def expand_ragged_features(features: dict):
    """`features` with each `RaggedFeature` replaced by the `RaggedPart` s of its value
    and partition keys, and
    ``combine(parsed, serialized_shape)``, which builds the requested dict from the
    parsed one."""
    if not isinstance(features, dict) or not any(
            isinstance(f, RaggedFeature) for f in features.values()):
        return features, lambda parsed, serialized_shape: parsed
    wanted = {k: f for k, f in features.items() if isinstance(f, RaggedFeature)}
    expanded = {k: f for k, f in features.items() if not isinstance(f, RaggedFeature)}
    for key, f in wanted.items():
        parts = [(f.value_key or key, f.dtype)] + [
            (p.key, _dtypes.int64) for p in f.partitions if not isinstance(p, _UniformRowLength)]
        for part, dtype in parts:
            have = expanded.get(part)
            if have is not None and not (isinstance(have, RaggedPart)
                                         and _dtypes.as_dtype(have.dtype) == dtype):
                raise ValueError(f"Feature '{key}': RaggedFeature key '{part}' is also "
                                 f"requested as {have}; request it with one dtype "
                                 f"({dtype.name}) in RaggedFeatures only")
            expanded[part] = RaggedPart(dtype, f.row_splits_dtype)

    def combine(parsed: dict, serialized_shape) -> dict:
        out = {k: v for k, v in parsed.items() if k in features}
        batched = serialized_shape.ndims != 0
        batch = serialized_shape.dims[0].value if serialized_shape.ndims == 1 else None
        for key, f in wanted.items():
            out[key] = _ragged(f, key, parsed, batched, batch)
        return out

    return expanded, combine


def _per_example(part, splits_dtype, batched: bool, batch=None):
    """(flat values, items per example) of a parsed ragged key: ``(values, row
    splits)``."""
    from flowgraph.ops import array_ops as _a
    from flowgraph.ops import math_ops as _m

    values, splits = part
    if not batched:
        return values, None
    counts = splits[1:] - splits[:-1]
    return values, _m.cast(_a.reshape(counts, [-1 if batch is None else batch]),
                           splits_dtype)


def _ragged(f: RaggedFeature, key: str, parsed: dict, batched: bool, batch):
    from flowgraph.ops import array_ops as _a
    from flowgraph.ops import math_ops as _m
    from flowgraph.ops.array_index_ops import boolean_mask
    from flowgraph.ops.ragged_tensor import RaggedTensor

    sd = f.row_splits_dtype
    result, counts = _per_example(parsed[f.value_key or key], sd, batched, batch)
    for p in reversed(list(f.partitions)):
        if isinstance(p, _UniformRowLength):
            width = int(p.length)
            if isinstance(result, RaggedTensor):
                lengths = _a.fill(_a.reshape(result.nrows(out_type=sd) // width, [1]),
                                  _m.cast(width, sd))
                result = RaggedTensor.from_row_lengths(result, lengths, validate=False)
            else:
                result = _a.reshape(result, _a.concat([[-1, width], _a.shape(result)[1:]], 0))
            if counts is not None:
                counts = counts // _m.cast(width, sd)
            continue
        part, part_counts = _per_example(parsed[p.key], sd, batched, batch)
        part = _m.cast(part, sd)
        if isinstance(p, _RowLengths):
            lengths, counts = part, part_counts
        else:  # RowSplits: differences within each example's splits
            if part_counts is None:
                lengths = part[1:] - part[:-1]
            else:
                owner = _owners(part_counts)
                same = _m.equal(owner[1:], owner[:-1])
                lengths = boolean_mask(part[1:] - part[:-1], same)
                counts = _m.maximum(part_counts - 1, _a.zeros_like(part_counts))
        result = RaggedTensor.from_row_lengths(result, lengths, validate=False)
    if counts is None:
        return result
    return RaggedTensor.from_row_lengths(result, counts, validate=False)


def _owners(counts):
    """The example index of each item, from the items per example."""
    from flowgraph.ops import array_ops as _a
    from flowgraph.ops.array_extra_ops import repeat

    return repeat(_a.range(_a.size(counts)), counts)
