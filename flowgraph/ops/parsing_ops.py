"""Parsing ops: CSV records (`decode_csv`) and serialized `tf.train.Example` protos
(`parse_example`, `parse_single_example`, with `FixedLenFeature`, `VarLenFeature`,
`FixedLenSequenceFeature`).

A `VarLenFeature` parses into a `tf.SparseTensor` (``indices`` int64 [N, rank],
``values`` [N], ``dense_shape`` int64 [rank]); fetching it gives a `SparseTensorValue`
of arrays.
Kernels: `flowgraph/backends/cpu/kernels_data.py`.

Example
-------
>>> import flowgraph as tf
>>> a, b = decode_csv(["1,x", "2,"], record_defaults=[[0], ["none"]])
>>> with tf.Session() as sess:
...     print(sess.run([a, b]))
[array([1, 2], dtype=int32), array([b'x', b'none'], dtype=object)]
"""

from __future__ import annotations

import itertools
import re
from collections import namedtuple

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import _to_numpy, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import make_op
from flowgraph.ops.parsing_ragged_feature import RaggedPart, expand_ragged_features
from flowgraph.ops.parsing_sparse_feature import (
    SparseFeature,
    check_sparse_feature,
    sparse_from_parts,
)
from flowgraph.ops.parsing_v2_ops import is_v1_layout, v1_dtypes, v1_output_count, v1_shapes
from flowgraph.ops.raw_ops import _raw_op

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_csv",
    "parse_example",
    "parse_single_example",
]

_CSV_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)
_EXAMPLE_TYPES = (_dtypes.float32, _dtypes.int64, _dtypes.string)



# -- DecodeCSV ----------------------------------------------------------------------------------
@register_op("DecodeCSV", attrs={"OUT_TYPE": [], "field_delim": ",", "use_quote_delim": True,
                                 "na_value": "", "select_cols": []},
             num_outputs=lambda op: len(op.attrs["OUT_TYPE"]),
             dtype_fn=lambda op: [_dtypes.as_dtype(d) for d in op.attrs["OUT_TYPE"]])
def _decode_csv_shape(op, records, *defaults):
    for i, d in enumerate(defaults):
        if d.ndims is not None and d.ndims > 1:
            raise op.shape_error(f"record_defaults[{i}] must be a scalar or a vector of at "
                                 f"most one element, got shape {d}")
        if d.ndims == 1 and d[0].value is not None and d[0].value > 1:
            raise op.shape_error(f"record_defaults[{i}] must have at most one element, got "
                                 f"shape {d}")
    return [records] * len(defaults)


def decode_csv(records, record_defaults, field_delim: str = ",", use_quote_delim: bool = True,
               name: str | None = None, na_value: str = "", select_cols=None):
    """Split CSV `records` (a string tensor of any shape) into one tensor per column.

    Parameters
    ----------
    records : string Tensor
        One CSV line per element.
    record_defaults : list
        One entry per output column: a one-element list/tensor giving the column's dtype
        (float32, float64, int32, int64 or string) and the value of an empty field, or an
        empty list/tensor (``[]``, float32 unless a typed empty tensor) marking a required
        column — an empty field there is an `InvalidArgumentError` naming the record and
        column.
    field_delim : str
        The one-character field separator.
    use_quote_delim : bool
        Treat double quotes as field quoting (``"a,b"`` is one field, ``""`` a quote).
    na_value : str
        A field equal to this string counts as empty.
    select_cols : list of int, optional
        The (sorted) column indices to keep; `record_defaults` then has one entry per
        selected column.

    Returns
    -------
    list of Tensor, each of the shape of `records`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x, y = tf.io.decode_csv(tf.constant(["1.5,a", ",b"]), [[0.0], ["?"]])
    >>> with tf.Session() as sess:
    ...     print(sess.run(x))
    [1.5 0. ]
    """
    if not isinstance(field_delim, str) or len(field_delim.encode("utf-8")) != 1:
        raise ValueError(f"decode_csv: field_delim must be one character, got {field_delim!r}")
    if not isinstance(record_defaults, list | tuple) or not record_defaults:
        raise ValueError("decode_csv: record_defaults must be a non-empty list with one entry "
                         "per column")
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(c < 0 for c in select_cols) or any(
                b <= a for a, b in itertools.pairwise(select_cols)):
            raise ValueError(f"decode_csv: select_cols must be non-negative and strictly "
                             f"increasing, got {select_cols}")
        if len(select_cols) != len(record_defaults):
            raise ValueError(f"decode_csv: {len(select_cols)} select_cols but "
                             f"{len(record_defaults)} record_defaults; they must match")
    with name_scope(name, "DecodeCSV", [records]) as scope:
        records = convert_to_tensor(records, dtype=_dtypes.string, name="records")
        defaults = [_csv_default(d, i) for i, d in enumerate(record_defaults)]
        op = make_op("DecodeCSV", [records, *defaults], {
            "OUT_TYPE": [d.dtype.base_dtype for d in defaults],
            "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
            "na_value": na_value, "select_cols": list(select_cols or [])}, name=scope)
        return list(op.outputs)


def _csv_default(value, i: int) -> Tensor:
    if isinstance(value, list | tuple) and len(value) == 0:
        t = convert_to_tensor(np.zeros([0], np.float32), name=f"record_default_{i}")
    else:
        t = convert_to_tensor(value, name=f"record_default_{i}")
    if t.dtype.base_dtype not in _CSV_TYPES:
        raise TypeError(f"decode_csv: record_defaults[{i}] has dtype {t.dtype.name}; "
                        f"supported are {[d.name for d in _CSV_TYPES]}")
    return t


# -- Example features ----------------------------------------------------------------------------
class FixedLenFeature(namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values: parsed into a dense tensor of `shape`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.io.FixedLenFeature([2], tf.float32).shape
    [2]
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A variable number of items of `shape`, parsed into a dense [batch, max_items, *shape]
    tensor padded with `default_value` (0 / empty string by default)."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed into a `tf.SparseTensor`."""

    __slots__ = ()


def _example_dtype(dtype, key: str):
    d = _dtypes.as_dtype(dtype).base_dtype
    if d not in _EXAMPLE_TYPES:
        raise ValueError(f"Feature '{key}': dtype {d.name} is not supported; use float32, "
                         "int64 or string")
    return d


def _dense_default(key: str, feature, shape: TensorShape, dtype):
    if feature.default_value is None:
        return None
    value = _to_numpy(feature.default_value, dtype)
    if isinstance(feature, FixedLenSequenceFeature):
        if value.ndim != 0:
            raise ValueError(f"Feature '{key}': a FixedLenSequenceFeature default_value must "
                             f"be a scalar, got shape {value.shape}")
        return value
    full = shape.as_list()
    if value.size == 1:
        return np.broadcast_to(value.reshape(()), full).copy()
    if value.size != int(np.prod(full)):
        raise ValueError(f"Feature '{key}': default_value has {value.size} elements but shape "
                         f"{full} needs {int(np.prod(full))}")
    return value.reshape(full)


def _check_fixed_len_shape(key: str, feature) -> None:
    # TensorFlow's messages for a FixedLenFeature whose shape is not fully known
    if feature.shape is None:
        raise ValueError(f"Missing shape for feature {key}. Received feature={feature!r}.")
    dims = as_shape(feature.shape).as_list()
    if dims and dims[0] is None:
        raise ValueError(f"First dimension of shape for feature {key} unknown. Consider "
                         f"using FixedLenSequenceFeature. Received feature={feature!r}.")
    if None in dims:
        raise ValueError(f"All dimensions of shape for feature {key} need to be known but "
                         f"received {list(feature.shape)}.")


def _split_features(features: dict, allow_empty: bool = False):
    if not isinstance(features, dict) or (not features and not allow_empty):
        raise ValueError("features must be a non-empty dict of feature name -> "
                         "FixedLenFeature / VarLenFeature / FixedLenSequenceFeature")
    sparse, dense = [], []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            sparse.append((key, _example_dtype(f.dtype, key)))
        elif isinstance(f, FixedLenFeature | FixedLenSequenceFeature):
            dtype = _example_dtype(f.dtype, key)
            is_seq = isinstance(f, FixedLenSequenceFeature)
            if is_seq and not f.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires "
                                 "allow_missing to be True.")
            if not is_seq:
                _check_fixed_len_shape(key, f)
            shape = as_shape(f.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"Feature '{key}': shape must be fully defined, got {shape}")
            dense.append((key, dtype, shape, _dense_default(key, f, shape, dtype), is_seq))
        else:
            raise ValueError(f"Feature '{key}': unsupported feature type {type(f).__name__}")
    return sparse, dense


def parsed_dtypes(op) -> list:
    """The output dtypes of flowgraph's attribute-keyed ``ParseExample``:
    per sparse key its indices (int64), then values, then dense shapes (int64); then one
    tensor per dense key (TensorFlow's layout: `parsing_v2_ops.v1_dtypes`).

    >>> from types import SimpleNamespace as Op
    >>> parsed_dtypes(Op(attrs={"sparse_keys": ["s"], "sparse_types": ["float"],
    ...                         "dense_types": ["int64"]}))
    [tf.int64, tf.float32, tf.int64, tf.int64]
    """
    if is_v1_layout(op):
        return v1_dtypes(op)
    a = op.attrs
    n = len(a["sparse_keys"])
    return ([_dtypes.int64] * n + [_dtypes.as_dtype(d) for d in a["sparse_types"]]
            + [_dtypes.int64] * n + [_dtypes.as_dtype(d) for d in a["dense_types"]])


def _parse_example_count(op) -> int:
    if is_v1_layout(op):
        return v1_output_count(op)
    return 3 * len(op.attrs["sparse_keys"]) + len(op.attrs["dense_keys"])


# ParseExample has two layouts. flowgraph's, attribute-keyed: what a TensorFlow 1.x
# graph's ParseExample (keys as inputs) is read into (`tf_formats.parse_example`).
# TensorFlow's (keys and defaults as inputs, attrs Nsparse, Ndense, sparse_types, Tdense,
# dense_shapes): what `tf.raw_ops.ParseExample` builds (`parsing_v2_ops`, "ParseExample
# (V1)"). `parse_example` itself builds TensorFlow's ParseExampleV2.
@register_op("ParseExample", attrs={"sparse_keys": [], "sparse_types": [], "dense_keys": [],
                                    "dense_types": [], "dense_shapes": [], "dense_defaults": [],
                                    "dense_is_sequence": [], "Nsparse": 0, "Ndense": 0,
                                    "Tdense": []},
             num_outputs=_parse_example_count, dtype_fn=parsed_dtypes)
def _parse_example_shape(op, serialized, *v1_inputs):
    if v1_inputs:
        return v1_shapes(op, serialized, *v1_inputs)
    if serialized.ndims is not None and serialized.ndims > 1:
        raise op.shape_error(f"serialized must be a vector (or a scalar for one example), "
                             f"got shape {serialized}")
    n = len(op.attrs["sparse_keys"])
    rank = None if serialized.ndims is None else serialized.ndims + 1
    batch = [] if serialized.ndims == 0 else [
        None if serialized.ndims is None else serialized[0].value]
    out = ([TensorShape([None, rank])] * n + [TensorShape([None])] * n
           + [TensorShape([rank])] * n)
    for shape, is_seq in zip(op.attrs["dense_shapes"], op.attrs["dense_is_sequence"]):
        inner = ([None] if is_seq else []) + as_shape(shape).as_list()
        out.append(TensorShape(None) if serialized.ndims is None
                   else TensorShape(batch + inner))
    return out


def parse_example(serialized, features: dict, name: str | None = None,
                  example_names=None) -> dict:
    """Parse a batch of serialized `tf.train.Example` protos into a dict of tensors.

    Builds one ``ParseExampleV2`` op, as TensorFlow 2.15 does (also under
    ``tf.compat.v1``).

    Parameters
    ----------
    serialized : string Tensor of shape [batch]
        Binary `Example` protos.
    features : dict
        Feature name -> `FixedLenFeature` (dense [batch, *shape]; missing without default is
        an error), `FixedLenSequenceFeature` (dense [batch, max_items, *shape], needs
        ``allow_missing=True``), `VarLenFeature` (a `tf.SparseTensor`), `SparseFeature`
        or `RaggedFeature`.

    Example
    -------
    >>> import flowgraph as tf
    >>> ex = b"\\n\\x0f\\n\\r\\n\\x01x\\x12\\x08\\x1a\\x06\\n\\x04\\x01\\x02\\x03\\x04"
    >>> out = tf.io.parse_example([ex], {"x": tf.io.FixedLenFeature([4], tf.int64)})
    >>> with tf.Session() as sess:
    ...     print(sess.run(out["x"]))
    [[1 2 3 4]]
    >>> out["x"].op.type
    'ParseExampleV2'
    """
    features, combine_ragged = expand_ragged_features(features)
    features, combine = _expand_sparse_features(features)
    ragged = {k: f for k, f in features.items() if isinstance(f, RaggedPart)}
    sparse, dense = _split_features({k: f for k, f in features.items() if k not in ragged}
                                    if ragged else features, allow_empty=bool(ragged))
    ragged_keys = sorted(ragged)
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        names = _strings([] if example_names is None else example_names)
        defaults = [_default_input(*d) for d in dense]
        out = _raw_op("ParseExampleV2")(
            serialized=serialized, names=names, sparse_keys=_strings([k for k, _ in sparse]),
            dense_keys=_strings([d[0] for d in dense]), ragged_keys=_strings(ragged_keys),
            dense_defaults=defaults, num_sparse=len(sparse),
            sparse_types=[d for _, d in sparse],
            ragged_value_types=[ragged[k].dtype for k in ragged_keys],
            ragged_split_types=[ragged[k].row_splits_dtype for k in ragged_keys],
            dense_shapes=[TensorShape([None]).concatenate(d[2]) if d[4] else d[2]
                          for d in dense])
        parsed = {}
        for i, (key, _) in enumerate(sparse):
            parsed[key] = SparseTensor(out.sparse_indices[i], out.sparse_values[i],
                                       out.sparse_shapes[i])
        for j, d in enumerate(dense):
            parsed[d[0]] = out.dense_values[j]
        for j, key in enumerate(ragged_keys):
            parsed[key] = (out.ragged_values[j], out.ragged_row_splits[j])
    # As TensorFlow, sparse and ragged features are assembled after the parse's name scope
    # (a SparseFeature is a "SparseMerge" where parse_example is called).
    return combine_ragged(combine(parsed), serialized.shape)


def _strings(items):
    """A string vector constant (TensorFlow's key inputs), even when empty."""
    values = items.tolist() if isinstance(items, np.ndarray) else list(items)
    if values and isinstance(values[0], Tensor):
        return items
    out = np.empty(len(values), dtype=object)
    out[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in values]
    return out


def _default_input(key: str, dtype, shape: TensorShape, default, is_seq: bool) -> Tensor:
    """A dense feature's default input as TensorFlow builds it: the value reshaped to the
    feature's shape (a scalar padding value for a sequence feature), or an empty
    constant ("required"; a zero / empty-string padding value for a sequence)."""
    from flowgraph.ops.array_ops import reshape

    safe = re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
    if default is None:
        value = ((b"" if dtype == _dtypes.string else 0) if is_seq
                 else np.zeros([0], dtype=object if dtype == _dtypes.string
                               else dtype.as_numpy_dtype))
        return convert_to_tensor(value, dtype=dtype, name="Const")
    if is_seq:
        return reshape(convert_to_tensor(default, dtype=dtype, name=f"padding_{safe}"), [])
    return reshape(convert_to_tensor(default, dtype=dtype, name=f"key_{safe}"),
                   shape.as_list())


def _expand_sparse_features(features: dict):
    """`features` with each `SparseFeature` replaced by `VarLenFeature`s of its index and
    value keys, and the function that builds the requested dict from the parsed one."""
    if not isinstance(features, dict) or not any(
            isinstance(f, SparseFeature) for f in features.values()):
        return features, lambda parsed: parsed
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    wanted = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    expanded = dict(plain)
    for key, f in wanted.items():
        check_sparse_feature(key, f)
        for part, dtype in [(i, _dtypes.int64) for i in f.index_keys] + [(f.value_key,
                                                                           f.dtype)]:
            have = expanded.get(part)
            if have is not None and not (isinstance(have, VarLenFeature)
                                         and _dtypes.as_dtype(have.dtype) == dtype):
                raise ValueError(f"Feature '{key}': SparseFeature key '{part}' is also "
                                 f"requested as {have}; request it as VarLenFeature({dtype.name})"
                                 " or not at all")
            expanded[part] = VarLenFeature(dtype)

    def combine(parsed: dict) -> dict:
        # TensorFlow's order: the parsed sparse then dense keys (each sorted), then the
        # SparseFeatures by sorted key
        out = {k: v for k, v in parsed.items() if k in plain}
        for key, f in sorted(wanted.items()):
            out[key] = sparse_from_parts(f, [parsed[i] for i in f.index_keys],
                                         parsed[f.value_key])
        return out

    return expanded, combine


def parse_single_example(serialized, features: dict, name: str | None = None,
                         example_names=None) -> dict:
    """`parse_example` for one scalar serialized Example: no batch dimension.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.io.parse_single_example(b"", {"x": tf.io.FixedLenFeature([], tf.float32, 0.5)})
    >>> out["x"].shape.as_list()
    []
    """
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError(f"parse_single_example: serialized must be a scalar, got shape "
                             f"{serialized.shape}")
        return parse_example(serialized, features, example_names=example_names)


not_differentiable("DecodeCSV", "ParseExample")
