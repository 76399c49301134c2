"""The features of the boosted-trees estimators: which columns they take, the bucket id
of every example for every split feature, and the column name of each split feature.

Columns are taken in the order of their names. A ``bucketized_column`` gives one split
feature per dimension (its bucket ids), an ``indicator_column`` one 0/1 feature per
category.

Example
-------
>>> import flowgraph as tf
>>> fc = tf.feature_column
>>> cols = sorted_columns([fc.indicator_column(
...     fc.categorical_column_with_vocabulary_list("c", ["a", "b"])),
...     fc.bucketized_column(fc.numeric_column("x"), [0.0, 1.0])])
>>> feature_names(cols), num_buckets(cols)
(['c', 'c', 'x_bucketized'], 3)
"""

from __future__ import annotations

import collections

import numpy as np

__all__ = ["bucket_ids", "feature_names", "num_buckets", "sorted_columns", "sum_by_name"]


def sorted_columns(feature_columns):
    from flowgraph.feature_column.feature_column_dense import (
        BucketizedColumn,
        IndicatorColumn,
    )

    columns = list(feature_columns or ())
    if not columns:
        raise ValueError("BoostedTrees: feature_columns must not be empty; give "
                         "bucketized_column or indicator_column columns.")
    for fc in columns:
        if not isinstance(fc, (BucketizedColumn, IndicatorColumn)):
            raise ValueError(
                f"BoostedTrees supports only bucketized_column and indicator_column "
                f"feature columns; got {type(fc).__name__} {getattr(fc, 'name', fc)!r}. "
                f"Bucketize a numeric column with tf.feature_column.bucketized_column.")
    return sorted(columns, key=lambda c: c.name)


def _column_width(fc) -> int:
    from flowgraph.feature_column.feature_column_dense import BucketizedColumn

    if isinstance(fc, BucketizedColumn):
        return int(np.prod(fc.source_column.shape))
    return int(fc.categorical_column._num_buckets)


def feature_names(columns) -> list[str]:
    """The column name of each split feature, as TF names importances and
    contributions: a bucketized column's name for each of its dimensions, the
    categorical column's name for each category of an indicator column."""
    from flowgraph.feature_column.feature_column_dense import BucketizedColumn

    names = []
    for fc in columns:
        name = fc.name if isinstance(fc, BucketizedColumn) else fc.categorical_column.name
        names += [name] * _column_width(fc)
    return names


def sum_by_name(names, values) -> collections.OrderedDict:
    """Values summed per name, largest magnitude first (ties keep the columns' order)."""
    summed: dict = {}
    for name, v in zip(names, values):
        summed[name] = summed.get(name, 0.0) + float(v)
    return collections.OrderedDict(sorted(summed.items(), key=lambda kv: -abs(kv[1])))


def num_buckets(columns) -> int:
    from flowgraph.feature_column.feature_column_dense import BucketizedColumn

    return max([len(fc.boundaries) + 1 for fc in columns if isinstance(fc, BucketizedColumn)]
               + [2])


def bucket_ids(features, columns):
    """An int32 [batch, num_features] tensor of bucket ids."""
    from flowgraph.feature_column.feature_column import _LazyBuilder
    from flowgraph.framework import dtypes
    from flowgraph.ops import array_join_ops, array_shape_ops, math_ops

    builder = _LazyBuilder(features)
    parts = []
    for fc in columns:
        value = math_ops.cast(builder.get(fc), dtypes.int32)
        parts.append(array_shape_ops.reshape(value, [-1, _column_width(fc)]))
    return parts[0] if len(parts) == 1 else array_join_ops.concat(parts, axis=1)
