"""The helpers TF 1.x's `tf.contrib.layers` kept beside its first feature columns:
parsing `tf.Example`s by columns, inferring real-valued columns from tensors, making one
placeholder per base feature, and checking a column list for duplicate names.

They accept the columns of `tf.contrib.layers` (which are `tf.feature_column`'s columns
here) and `tf.feature_column`'s own.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     columns = tf.contrib.layers.infer_real_valued_columns(
...         {"age": tf.zeros([4, 1]), "pos": tf.zeros([4, 2])})
...     print([(c.key, c.shape) for c in columns])
[('age', (1,)), ('pos', (2,))]
"""

from __future__ import annotations

from collections.abc import Mapping

from flowgraph.contrib.learn.learn_feature_columns import (
    create_feature_spec_for_parsing,
    real_valued_column,
)
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops
from flowgraph.ops.parsing_ops import FixedLenFeature, VarLenFeature, parse_example

__all__ = ["check_feature_columns", "infer_real_valued_columns",
           "make_place_holder_tensors_for_base_features",
           "parse_feature_columns_from_examples"]


def _column_name(column) -> str:
    return getattr(column, "name", None) or getattr(column, "key", "")


def check_feature_columns(feature_columns) -> None:
    """Raise ValueError when two of `feature_columns` have the same name (one of them
    would shadow the other's input and variables).

    Example
    -------
    >>> import flowgraph as tf
    >>> age = tf.contrib.layers.real_valued_column("age")
    >>> check_feature_columns([age, tf.contrib.layers.real_valued_column("height")])
    >>> try:
    ...     check_feature_columns([age, age])
    ... except ValueError as e:
    ...     print(str(e).split(".")[0])
    Duplicate feature column key found for column: age
    """
    seen: set[str] = set()
    for column in feature_columns:
        name = _column_name(column)
        if name in seen:
            raise ValueError(f"Duplicate feature column key found for column: {name}. Two "
                             f"columns of the same name would share their input and "
                             f"variables: drop or rename one.")
        seen.add(name)


def parse_feature_columns_from_examples(serialized, feature_columns, name=None,
                                        example_names=None) -> dict:
    """`tf.parse_example` of the serialized `tf.Example` protos with the spec the columns
    need: a dict of feature name to Tensor (fixed-length) or SparseTensor (var-length),
    ready for `input_from_feature_columns` or an estimator's `input_fn`.

    Example
    -------
    >>> import flowgraph as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "age": tf.train.Feature(float_list=tf.train.FloatList(value=[42.0]))}))
    >>> with tf.Graph().as_default():
    ...     parsed = parse_feature_columns_from_examples(
    ...         tf.constant([ex.SerializeToString()]),
    ...         [tf.contrib.layers.real_valued_column("age")])
    ...     print(tf.Session().run(parsed["age"]).tolist())
    [[42.0]]
    """
    feature_columns = list(feature_columns)
    check_feature_columns(feature_columns)
    return parse_example(serialized, create_feature_spec_for_parsing(feature_columns),
                         name=name, example_names=example_names)


def infer_real_valued_columns(features) -> list:
    """One real-valued column per numeric feature, as wide as the feature's values per
    example: `features` is a Tensor (its column is named ``''``, the key contrib.learn's
    estimators feed ``x`` under) or a dict of name to Tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     [col] = infer_real_valued_columns(tf.zeros([8, 3, 2]))
    >>> col.key, col.shape
    ('', (6,))
    """
    if not isinstance(features, Mapping):
        return [_infer_column("", features)]
    return [_infer_column(key, value) for key, value in sorted(features.items())]


def _infer_column(name: str, tensor):
    if not isinstance(tensor, Tensor):
        raise ValueError(f"infer_real_valued_columns: feature {name!r} must be a Tensor, "
                         f"got {type(tensor).__name__}; sparse features need a sparse "
                         f"column (sparse_column_with_*)")
    dtype = tensor.dtype.base_dtype
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError(f"infer_real_valued_columns: feature {name!r} has dtype "
                         f"{dtype.name}; only numeric features make real-valued columns")
    per_example = tensor.shape[1:].num_elements() if tensor.shape.ndims else None
    if tensor.shape.ndims is not None and tensor.shape.ndims < 2:
        per_example = 1
    if per_example is None:
        raise ValueError(f"infer_real_valued_columns: feature {name!r} has shape "
                         f"{tensor.shape}; the values per example must be known")
    return real_valued_column(name, dimension=per_example, dtype=dtype)


def make_place_holder_tensors_for_base_features(feature_columns) -> dict:
    """A placeholder for each base feature the columns read, by feature name: a
    ``[None, width]`` placeholder for a fixed-length feature, a sparse placeholder for a
    var-length one, each named ``Placeholder_<feature>``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     ph = make_place_holder_tensors_for_base_features(
    ...         [tf.contrib.layers.real_valued_column("age", dimension=2)])
    ...     print(ph["age"].name, ph["age"].shape.as_list())
    Placeholder_age:0 [None, 2]
    """
    placeholders = {}
    for key, spec in sorted(create_feature_spec_for_parsing(list(feature_columns)).items()):
        if isinstance(spec, VarLenFeature):
            placeholders[key] = array_ops.sparse_placeholder(spec.dtype,
                                                             name=f"Placeholder_{key}")
        elif isinstance(spec, FixedLenFeature):
            width = 1
            for d in spec.shape:
                width *= int(d)
            placeholders[key] = array_ops.placeholder(spec.dtype, shape=(None, width),
                                                      name=f"Placeholder_{key}")
        else:
            raise ValueError(f"make_place_holder_tensors_for_base_features: feature {key!r} "
                             f"has a {type(spec).__name__} spec; only fixed- and var-length "
                             f"features get placeholders")
    return placeholders
