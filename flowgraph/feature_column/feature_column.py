"""Feature columns (TF 1.15's ``tf.feature_column``): declarative descriptions of how raw
features become model inputs, and the two functions that build them.

A column is an immutable value (a namedtuple) naming its input feature(s) and how to
transform them. There are two kinds, and some columns are both:

    dense columns        -> a float tensor [batch, d]       numeric, bucketized, indicator,
                                                            embedding, shared embedding
    categorical columns  -> a SparseTensor of int64 ids      hash bucket, vocabulary list /
                            in [0, num_buckets), optional   file, identity, weighted,
                            per-id weights                  crossed, bucketized

`input_layer(features, columns)` concatenates the dense columns (in sorted name order, as
TensorFlow does) into one [batch, sum(d)] tensor for a DNN; `linear_model` multiplies
each column by a weight variable (categorical ones by looking the ids up in it, which
keeps gradients sparse) and sums. Both create their variables with TensorFlow's names
(``input_layer/<column>_embedding/embedding_weights``, ``linear_model/<column>/weights``,
``linear_model/bias_weights``) so checkpoints and code port unchanged.

Feature values may be tensors, NumPy arrays or Python lists (dense), ragged Python lists
(one list of values per example: converted to a SparseTensor), or SparseTensors /
SparseTensorValues (e.g. `tf.io.parse_example`'s ``VarLenFeature`` output). A rank-1
dense feature is treated as [batch, 1]. Each transformation runs once per call, through
`_LazyBuilder`, so columns sharing a source share its ops.

Example
-------
>>> import flowgraph as tf
>>> fc = tf.feature_column
>>> price = fc.numeric_column("price")
>>> color = fc.categorical_column_with_vocabulary_list("color", ["red", "blue"])
>>> net = fc.input_layer({"price": [[2.0], [5.0]], "color": [["blue"], ["red"]]},
...                      [price, fc.indicator_column(color)])
>>> with tf.Session() as sess:
...     print(sess.run(net))
[[0. 1. 2.]
 [1. 0. 5.]]
"""

from __future__ import annotations

import abc
import collections
from collections.abc import Iterator, Mapping

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, get_collection, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce, nn_ops, sparse_ops
from flowgraph.ops.embedding_ops import safe_embedding_lookup_sparse
from flowgraph.ops.init_ops import zeros_initializer
from flowgraph.ops.variable_scope import get_variable, get_variable_scope, variable_scope

__all__ = ["input_layer", "linear_model", "make_parse_example_spec"]


# -- base classes -------------------------------------------------------------------------
class _FeatureColumn(abc.ABC):
    """A feature column: `name`, `_transform_feature(builder)`, `_parse_example_spec`."""

    @property
    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    def _var_scope_name(self) -> str:
        return self.name

    @abc.abstractmethod
    def _transform_feature(self, inputs: _LazyBuilder): ...

    @property
    @abc.abstractmethod
    def _parse_example_spec(self) -> dict: ...

    @property
    def parse_example_spec(self) -> dict:
        return self._parse_example_spec

    def _where(self) -> str:
        return f"feature column '{self.name}'"


class _DenseColumn(_FeatureColumn):
    """A column giving a float tensor [batch, *_variable_shape]."""

    @property
    @abc.abstractmethod
    def _variable_shape(self) -> TensorShape: ...

    @property
    def variable_shape(self) -> TensorShape:
        return self._variable_shape

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None): ...


IdWeightPair = collections.namedtuple("IdWeightPair", ("id_tensor", "weight_tensor"))


class _CategoricalColumn(_FeatureColumn):
    """A column giving a SparseTensor of int64 ids in [0, _num_buckets) (and weights)."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self) -> int: ...

    @property
    def num_buckets(self) -> int:
        return self._num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return IdWeightPair(inputs.get(self), None)


# -- feature conversion -------------------------------------------------------------------
class _LazyBuilder:
    """Gives each column's transformed feature, computing it once (``get(column)``), and
    the raw features by key (``get("key")``) as Tensors (rank >= 2) or SparseTensors."""

    def __init__(self, features) -> None:
        if not isinstance(features, Mapping):
            raise ValueError(f"features should be a dictionary of Tensors (feature name -> "
                             f"value), got {type(features).__name__}")
        self._features = dict(features)
        self._cache: dict = {}
        self._columns: list = []  # columns being transformed, innermost last

    def _context(self) -> str:
        if not self._columns:
            return ""
        outer = "".join(f" used by '{c.name}'" for c in reversed(self._columns[:-1]))
        return f" (needed by {self._columns[-1]._where()}{outer})"

    def get(self, key):
        cache_key = key if isinstance(key, str) else (type(key), key)
        if cache_key in self._cache:
            return self._cache[cache_key]
        if isinstance(key, str):
            value = self._raw(key)
        elif isinstance(key, _FeatureColumn):
            self._columns.append(key)
            try:
                value = key._transform_feature(self)
            finally:
                self._columns.pop()
            if value is None:
                raise ValueError(f"Column {key.name} is not supported.")
        else:
            raise TypeError(f'"key" must be either a "str" or a feature column. Provided: '
                            f"{key!r}")
        self._cache[cache_key] = value
        return value

    def _raw(self, key: str):
        if key not in self._features:
            raise ValueError(f"The feature (key: {key}) is not in features dictionary"
                             f"{self._context()}; the dictionary has "
                             f"{sorted(map(str, self._features))}.")
        value = to_tensor_or_sparse(self._features[key], key, self._context())
        if isinstance(value, SparseTensor):
            rank = value.shape.ndims
            if rank == 1:
                value = sparse_ops.sparse_reshape(value, [-1, 1])
            return value
        rank = value.shape.ndims
        if rank == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0{self._context()}. "
                             f"Give one value per example, shape [batch] or [batch, n]. "
                             f"Given: {value}")
        if rank == 1:
            value = array_ops.expand_dims(value, -1)
        return value


def _is_ragged(value) -> bool:
    if isinstance(value, np.ndarray):
        if value.dtype != object or value.ndim != 1:
            return False
        value = list(value)
    if not isinstance(value, list | tuple) or not value:
        return False
    rows = [isinstance(v, list | tuple | np.ndarray) for v in value]
    if not any(rows):
        return False
    if not all(rows):
        return True  # a mix of scalars and lists
    return len({len(v) for v in value}) > 1


def _ragged_to_sparse(value, key: str, context: str) -> SparseTensor:
    indices, values = [], []
    width = 0
    for i, row in enumerate(value):
        row = list(row) if isinstance(row, list | tuple | np.ndarray) else [row]
        for j, v in enumerate(row):
            if isinstance(v, list | tuple | np.ndarray):
                raise ValueError(f"Feature (key: {key}){context}: ragged input must be one "
                                 f"list of values per example; example {i} has a nested "
                                 f"list {row!r}.")
            indices.append((i, j))
            values.append(v)
        width = max(width, len(row))
    kinds = {type(v) for v in values}
    if kinds and all(issubclass(k, str | bytes | np.str_ | np.bytes_) for k in kinds):
        dtype = _dtypes.string
    elif kinds and all(issubclass(k, int | np.integer) and not issubclass(k, bool)
                       for k in kinds):
        dtype = _dtypes.int64
    elif kinds and all(issubclass(k, int | float | np.integer | np.floating) for k in kinds):
        dtype = _dtypes.float32
    elif not kinds:
        dtype = _dtypes.string
    else:
        raise ValueError(f"Feature (key: {key}){context}: ragged input mixes value types "
                         f"{sorted(k.__name__ for k in kinds)}; use one type per feature.")
    return SparseTensor(constant(np.asarray(indices, np.int64).reshape(-1, 2)),
                        constant(values, dtype=dtype, shape=[len(values)]),
                        constant(np.asarray([len(value), width], np.int64)))


def to_tensor_or_sparse(value, key: str = "?", context: str = ""):
    """A feature value as a Tensor or SparseTensor (ragged lists become SparseTensors)."""
    if isinstance(value, SparseTensor):
        return value
    if all(hasattr(value, a) for a in ("indices", "values", "dense_shape")):
        return SparseTensor(value.indices, value.values, value.dense_shape)
    if _is_ragged(value):
        return _ragged_to_sparse(value, key, context)
    if hasattr(value, "row_splits"):
        # TF1's columns do not take tf.RaggedTensor values (its conversion is a TypeError)
        raise TypeError(f"Feature (key: {key}){context} is a tf.RaggedTensor, which feature "
                        "columns do not accept; pass value.to_sparse() instead.")
    try:
        return convert_to_tensor(value, name=key if isinstance(key, str) else None)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Feature (key: {key}){context} cannot be converted to a Tensor: "
                         f"{e}") from None


def to_sparse_input(value, ignore_value=None) -> SparseTensor:
    """A dense feature as a SparseTensor without its `ignore_value` entries ('' for
    strings, -1 for integers, 0 for floats); a SparseTensor is returned unchanged."""
    if isinstance(value, SparseTensor):
        return value
    t = convert_to_tensor(value)
    if ignore_value is None:
        if t.dtype.base_dtype == _dtypes.string:
            ignore_value = b""
        elif t.dtype.is_integer:
            ignore_value = -1
        else:
            ignore_value = 0
    # TensorFlow's op names: to_sparse_input/{ignore_value/x, NotEqual, indices, values,
    # dense_shape}.
    with name_scope(None, "to_sparse_input", [t]):
        with name_scope("ignore_value"):
            ignore = constant(ignore_value, t.dtype.base_dtype, name="x")
        indices = array_ops.where(math_ops.not_equal(t, ignore), name="indices")
        return SparseTensor(indices, array_ops.gather_nd(t, indices, name="values"),
                            array_ops.shape(t, out_type=_dtypes.int64, name="dense_shape"))


# -- input_layer ----------------------------------------------------------------------------
def _normalize_feature_columns(feature_columns) -> list:
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, Mapping) or not isinstance(feature_columns, list | tuple):
        raise ValueError(f"Expected feature_columns to be iterable, found "
                         f"{type(feature_columns).__name__}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    seen: dict[str, _FeatureColumn] = {}
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"Items of feature_columns must be feature columns (made with "
                             f"tf.feature_column.*). Given (type {type(column).__name__}): "
                             f"{column!r}")
        if column.name in seen:
            raise ValueError(f"Duplicate feature column name found for columns: "
                             f"{seen[column.name]} and {column}. This usually means that "
                             f"these columns refer to same base feature. Either one must be "
                             f"discarded or a duplicated but renamed item must be inserted "
                             f"in features dict.")
        seen[column.name] = column
    return list(feature_columns)


def _collections(weight_collections) -> list:
    out = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in out:
            out.append(key)
    return out


def _verify_batch_sizes(tensors, columns) -> None:
    expected, first = None, None
    for t, c in zip(tensors, columns):
        dim = t.shape[0].value if t.shape.ndims else None
        if dim is None:
            continue
        if expected is None:
            expected, first = dim, c
        elif dim != expected:
            raise ValueError(f"Batch size (first dimension) of each feature must be same. "
                             f"Batch size of columns ({first.name}, {c.name}): "
                             f"({expected}, {dim})")


def input_layer(features, feature_columns, weight_collections=None, trainable: bool = True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """The dense input tensor [batch, sum of column widths] of `feature_columns`.

    Columns are built in order of their names (TensorFlow's order, whatever the order of
    `feature_columns`), each under a variable scope named after it: an embedding column
    ``x_embedding`` creates ``input_layer/x_embedding/embedding_weights``.

    Parameters
    ----------
    features : dict
        Feature name -> Tensor, array, list (ragged lists allowed) or SparseTensor.
    feature_columns : iterable of dense columns
        numeric, bucketized, indicator, embedding or shared embedding columns.
    weight_collections : list of str, optional
        Extra collections for the variables (GLOBAL_VARIABLES and MODEL_VARIABLES always).
    trainable : bool
        False makes the variables non-trainable.
    cols_to_vars, cols_to_output_tensors : dict, optional
        Filled with column -> list of its variables / column -> its [batch, d] tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> cols = [tf.feature_column.numeric_column("b"), tf.feature_column.numeric_column("a")]
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.feature_column.input_layer({"a": [1.0], "b": [2.0]}, cols)))
    [[1. 2.]]
    """
    columns = _normalize_feature_columns(feature_columns)
    for column in columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError(f"Items of feature_columns must be a _DenseColumn (a dense "
                             f"column: numeric, bucketized, embedding or indicator). You "
                             f"can wrap a "
                             f"categorical column with an embedding_column or "
                             f"indicator_column. Given: {column}")
    collections_ = _collections(weight_collections)
    with variable_scope(None, default_name="input_layer", values=_tensor_values(features)):
        return dense_columns_tensor(features, columns, collections_, trainable, cols_to_vars,
                                    cols_to_output_tensors)


def dense_columns_tensor(features, columns, collections_, trainable: bool = True,
                         cols_to_vars=None, cols_to_output_tensors=None):
    """`input_layer`'s work inside the current variable scope: each dense column (in
    name order) under a scope named after it, reshaped to [batch, width], concatenated
    (Keras's `DenseFeatures` calls it under the layer's name)."""
    builder = _LazyBuilder(features)
    outputs, ordered = [], []
    for column in sorted(columns, key=lambda c: c.name):
        ordered.append(column)
        with variable_scope(None, default_name=column._var_scope_name):
            tensor = column._get_dense_tensor(builder, weight_collections=collections_,
                                              trainable=trainable)
            n = column._variable_shape.num_elements()
            batch = array_ops.shape(tensor)[0]
            out = array_ops.reshape(tensor, [batch, n])  # packs `Reshape/shape`, as TF
            out.set_shape(TensorShape([tensor.shape[0] if tensor.shape.ndims else None, n]))
            outputs.append(out)
            if cols_to_vars is not None:
                cols_to_vars[column] = get_collection(
                    GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name + "/")
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[column] = out
    _verify_batch_sizes(outputs, ordered)
    return array_ops.concat(outputs, 1)


def _tensor_values(features):
    if not isinstance(features, Mapping):
        return None
    return [v for v in features.values() if isinstance(v, Tensor)]


# -- linear_model ---------------------------------------------------------------------------
def linear_model(features, feature_columns, units: int = 1, sparse_combiner: str = "sum",
                 weight_collections=None, trainable: bool = True, cols_to_vars=None):
    """A linear model ``sum_c weights_c . column_c + bias`` of shape [batch, units].

    Categorical columns (including bucketized ones) look their ids up in
    ``linear_model/<column>/weights`` [num_buckets, units] and combine them per example
    with `sparse_combiner` ('sum', 'mean' or 'sqrtn'); dense columns are multiplied by
    ``linear_model/<column>/weights`` [width, units]. The bias is
    ``linear_model/bias_weights`` [units]. All start at zero.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> out = fc.linear_model({"x": [[1.0], [2.0]]}, [fc.numeric_column("x")], units=3)
    >>> out.shape.as_list()
    [2, 3]
    """
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"linear_model: sparse_combiner must be one of 'sum', 'mean' or "
                         f"'sqrtn', got {sparse_combiner!r}")
    columns = _normalize_feature_columns(feature_columns)
    for column in columns:
        if not isinstance(column, _DenseColumn | _CategoricalColumn):
            raise ValueError(f"Items of feature_columns must be either a dense column or a "
                             f"categorical column. Given: {column}")
    collections_ = _collections(weight_collections)
    # TensorFlow's scopes (its linear model is a layer): the model's and each column's
    # variable scope names are picked first, each opened and closed once where the
    # call is made (`linear_model`, `c`, ...); the layer then runs in a new name scope
    # named after the model (`linear_model_1`), reopening the model's variable scope
    # inside it. Variables: `linear_model/c/weights`; ops:
    # `linear_model_1/linear_model/c/weighted_sum`, `linear_model_1/linear_model/weighted_sum`.
    with variable_scope(None, default_name="linear_model",
                        values=_tensor_values(features)) as vs:
        model_name = vs.name.rsplit("/", 1)[-1]
    ordered = sorted(columns, key=lambda c: c.name)
    scope_names = []
    for column in ordered:
        with variable_scope(None, default_name=column._var_scope_name) as vs:
            scope_names.append(vs.name.rsplit("/", 1)[-1])
    with name_scope(model_name, values=_tensor_values(features)), \
            variable_scope(model_name):
        builder = _LazyBuilder(features)
        sums = []
        for column, scope_name in zip(ordered, scope_names, strict=True):
            with variable_scope(scope_name):
                var, weighted = _weighted_sum(column, builder, units, sparse_combiner,
                                              collections_, trainable)
                sums.append(weighted)
                if cols_to_vars is not None:
                    cols_to_vars[column] = _variable_list(var)
        _verify_batch_sizes(sums, ordered)
        no_bias = math_reduce.add_n(sums, name="weighted_sum_no_bias") if len(sums) > 1 \
            else array_ops.identity(sums[0], name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], initializer=zeros_initializer(),
                            trainable=trainable, collections=collections_)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = _variable_list(bias)
        return nn_ops.bias_add(no_bias, bias, name="weighted_sum")


def _variable_list(var) -> list:
    """A variable as TF's `cols_to_vars` lists it: the parts of a partitioned one."""
    return list(var) if hasattr(var, "_get_variable_list") else [var]


def _weighted_sum(column, builder, units, sparse_combiner, collections_, trainable):
    if isinstance(column, _CategoricalColumn):
        var = get_variable("weights", shape=[column._num_buckets, units],
                           initializer=zeros_initializer(), trainable=trainable,
                           collections=collections_)
        pair = column._get_sparse_tensors(builder, weight_collections=collections_,
                                          trainable=trainable)
        ids = pair.id_tensor
        batch = ids.dense_shape[0]
        ids = sparse_ops.sparse_reshape(ids, array_ops.stack([batch, -1]))
        weights = pair.weight_tensor
        if weights is not None:
            weights = sparse_ops.sparse_reshape(weights, array_ops.stack([batch, -1]))
        out = safe_embedding_lookup_sparse(var, ids, sparse_weights=weights,
                                           combiner=sparse_combiner, name="weighted_sum")
        return var, out
    tensor = column._get_dense_tensor(builder, weight_collections=collections_,
                                      trainable=trainable)
    n = column._variable_shape.num_elements()
    var = get_variable("weights", shape=[n, units], initializer=zeros_initializer(),
                       trainable=trainable, collections=collections_)
    flat = array_ops.reshape(tensor, [array_ops.shape(tensor)[0], n])
    flat.set_shape(TensorShape([tensor.shape[0] if tensor.shape.ndims else None, n]))
    return var, math_ops.matmul(flat, var, name="weighted_sum")


# -- parse spec ---------------------------------------------------------------------------
def make_parse_example_spec(feature_columns) -> dict:
    """The `tf.io.parse_example` spec (feature name -> FixedLenFeature / VarLenFeature)
    that the columns need.

    Example
    -------
    >>> import flowgraph as tf
    >>> fc = tf.feature_column
    >>> spec = fc.make_parse_example_spec([fc.numeric_column("x", shape=[2])])
    >>> spec["x"].shape
    (2,)
    """
    result: dict = {}
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"All feature_columns must be feature column instances. "
                             f"Given: {column!r}")
        for key, value in column._parse_example_spec.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key "
                                 f"{key}. Given {result[key]} and {value}")
        result.update(column._parse_example_spec)
    return result
