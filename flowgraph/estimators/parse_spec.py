"""``tf.estimator.classifier_parse_example_spec`` and ``regressor_parse_example_spec``:
the ``tf.io.parse_example`` spec of a canned estimator's features plus its label (and
weight) feature, for input functions that read ``tf.train.Example`` records.

Example
-------
>>> import flowgraph as tf
>>> x = tf.feature_column.numeric_column("x")
>>> spec = tf.estimator.regressor_parse_example_spec([x], label_key="y")
>>> sorted(spec), spec["y"].shape, spec["y"].dtype.name
(['x', 'y'], (1,), 'float32')
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.ops.parsing_ops import FixedLenFeature

__all__ = ["classifier_parse_example_spec", "regressor_parse_example_spec"]


def _with_label_and_weight(spec: dict, label_key: str, label_spec, weight_column) -> dict:
    from flowgraph.feature_column.feature_column import make_parse_example_spec
    from flowgraph.feature_column.feature_column_dense import numeric_column

    if label_key in spec:
        raise ValueError(f"label should not be used as feature. label_key: {label_key}, "
                         f"features: {spec.keys()}")
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = numeric_column(weight_column)
    for key, feature in make_parse_example_spec([weight_column]).items():
        if key in spec:
            raise ValueError(f"weight_column should not be used as feature. weight_column: "
                             f"{key}, features: {spec.keys()}")
        spec[key] = feature
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=_dtypes.int64,
                                  label_default=None, weight_column=None) -> dict:
    """The parse spec of `feature_columns` plus the label, a ``FixedLenFeature((1,),
    label_dtype, label_default)`` under `label_key`, and `weight_column` (a key or a
    numeric column) if given. A label or weight key that is also a feature is a
    ValueError.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.feature_column.numeric_column("x")
    >>> spec = tf.estimator.classifier_parse_example_spec([x], "y", weight_column="w")
    >>> sorted(spec), spec["y"].dtype.name
    (['w', 'x', 'y'], 'int64')
    """
    from flowgraph.feature_column.feature_column import make_parse_example_spec

    label = FixedLenFeature((1,), _dtypes.as_dtype(label_dtype), label_default)
    return _with_label_and_weight(make_parse_example_spec(feature_columns), label_key, label,
                                  weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=_dtypes.float32,
                                 label_default=None, label_dimension=1,
                                 weight_column=None) -> dict:
    """Like `classifier_parse_example_spec`; the label is ``FixedLenFeature(
    (label_dimension,), label_dtype, label_default)`` (float32 by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.feature_column.numeric_column("x")
    >>> tf.estimator.regressor_parse_example_spec([x], "y", label_dimension=2)["y"].shape
    (2,)
    """
    from flowgraph.feature_column.feature_column import make_parse_example_spec

    label = FixedLenFeature((label_dimension,), _dtypes.as_dtype(label_dtype), label_default)
    return _with_label_and_weight(make_parse_example_spec(feature_columns), label_key, label,
                                  weight_column)
