"""TensorFlow's Example-parsing op types, with TensorFlow's inputs and attributes.

``tf.io.parse_example`` and ``parse_single_example`` build ``ParseExampleV2``;
``tf.io.parse_sequence_example`` and ``parse_single_sequence_example`` build
``ParseSequenceExampleV2`` (as TensorFlow 2.15 does, also under ``tf.compat.v1``). The
older ``ParseSingleExample``, ``ParseSequenceExample`` and ``ParseSingleSequenceExample``
are registered for graphs TensorFlow 1.x wrote. Where each op keeps what it parses::

    ParseExampleV2             serialized, names, sparse_keys, dense_keys, ragged_keys
                               (string vectors), dense_defaults...    -- inputs
    ParseSingleExample         serialized (scalar), dense_defaults...; keys are attributes
    ParseSequenceExampleV2     serialized, debug_name, 6 key vectors, the missing-allowed
                               key vector, context_dense_defaults...
    ParseSequenceExample       serialized, debug_name, context_dense_defaults...; keys
                               are attributes
    ParseSingleSequenceExample serialized (scalar), missing-allowed keys, one scalar
                               input per key, context_dense_defaults..., debug_name

Outputs, per kind of feature in that order: a sparse feature is ``indices`` int64
``[n, rank]``, ``values`` and ``dense_shape`` int64 ``[rank]`` (all indices first, then
all values, then all shapes); a dense feature one tensor of ``[batch] + shape``, where a
dense shape whose first dimension is unknown is a ``FixedLenSequenceFeature`` padded
with its default; a ragged feature (the V2 ops) its flat values then its row splits.
A sequence op's feature lists add a step dimension (and, for dense ones, the int64
lengths). An empty dense default means "required". Kernels:
`flowgraph/backends/cpu/kernels_parsing_v2.py`.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> ex = tf.train.Example()
>>> ex.features.feature["x"].float_list.value.extend([1.0, 2.0])
>>> out = tf.raw_ops.ParseExampleV2(
...     serialized=[ex.SerializeToString()], names=[], sparse_keys=[], dense_keys=["x"],
...     ragged_keys=[], dense_defaults=[np.zeros([0], np.float32)], num_sparse=0,
...     sparse_types=[], ragged_value_types=[], ragged_split_types=[], dense_shapes=[[2]])
>>> tf.Session().run(out.dense_values[0]).tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape

__all__ = ["dense_spec", "is_v1_layout", "v1_dtypes", "v1_output_count", "v1_shapes"]

_I64 = _dtypes.int64


def _types(op, key: str) -> list:
    return [_dtypes.as_dtype(t).base_dtype for t in op.attrs.get(key) or []]


def _dense_types(op, key: str, first: int, count: int) -> list:
    """The dense outputs' dtypes: the attribute, else the dtypes of the default inputs
    (`tf.raw_ops` leaves the inferred type list to the inputs, as TensorFlow's wrapper
    infers it)."""
    given = _types(op, key)
    if given or not count:
        return given
    return [t.dtype.base_dtype for t in op.inputs[first:first + count]]


def dense_spec(shape) -> tuple[TensorShape, bool]:
    """``(item shape, is_sequence)`` of a dense shape attribute: a shape whose first
    dimension is unknown (-1) is a sequence of items of the rest.

    >>> dense_spec([-1, 2])
    (TensorShape([Dimension(2)]), True)
    """
    dims = as_shape(shape).as_list() if not isinstance(shape, list | tuple) else [
        None if d is None or int(d) < 0 else int(d) for d in shape]
    if dims and dims[0] is None:
        return TensorShape(dims[1:]), True
    return TensorShape(dims), False


def _sparse_shapes(n: int, rank) -> list:
    return ([TensorShape([None, rank])] * n + [TensorShape([None])] * n
            + [TensorShape([rank])] * n)


def _dense_out(shapes, batch: list) -> list:
    out = []
    for shape in shapes:
        item, seq = dense_spec(shape)
        out.append(TensorShape(batch + ([None] if seq else []) + item.as_list()))
    return out


def _check_rank(op, serialized, ranks, what: str) -> None:
    if serialized.ndims is not None and serialized.ndims not in ranks:
        raise op.shape_error(f"serialized must be {what}, got shape {serialized}")


# -- ParseExample (V1) with TensorFlow's inputs ----------------------------------------------
# ``ParseExample`` is registered once (`flowgraph/ops/parsing_ops.py`) with two layouts:
# flowgraph's own (one input; keys, types and defaults as attributes: what an imported
# TF 1.x graph is read into) and TensorFlow's, which `tf.raw_ops.ParseExample` builds::
#
#     serialized, names, sparse_keys_0..Nsparse-1, dense_keys_0..Ndense-1,
#     dense_defaults_0..Ndense-1      attrs Nsparse, Ndense, sparse_types, Tdense,
#                                     dense_shapes
_V1_TYPES = (_dtypes.float32, _dtypes.int64, _dtypes.string)


def is_v1_layout(op) -> bool:
    """Whether a ``ParseExample`` op has TensorFlow's inputs (more than `serialized`)."""
    return len(getattr(op, "inputs", ())) > 1


def v1_output_count(op) -> int:
    """The outputs of TensorFlow's ``ParseExample``, after checking its attributes against
    its inputs as TensorFlow's shape function does."""
    a = op.attrs
    n_sparse, n_dense = int(a["Nsparse"]), int(a["Ndense"])
    dense_types = _dense_types(op, "Tdense", 2 + n_sparse + n_dense, n_dense)
    checks = (("len(sparse_keys) != len(sparse_types)", n_sparse, len(a["sparse_types"])),
              ("len(dense_keys) != len(dense_shapes)", n_dense, len(a["dense_shapes"])),
              ("len(dense_keys) != len(dense_types)", n_dense, len(dense_types)))
    for what, want, got in checks:
        if want != got:
            raise op.shape_error(f"{what} ({want} keys, {got} given)")
    if len(op.inputs) != 2 + n_sparse + 2 * n_dense:
        raise op.shape_error(f"ParseExample takes 2 + Nsparse + 2 * Ndense inputs "
                             f"(serialized, names, {n_sparse} sparse_keys, {n_dense} "
                             f"dense_keys, {n_dense} dense_defaults); got {len(op.inputs)}")
    for attr, types in (("sparse_types", _types(op, "sparse_types")),
                        ("Tdense", dense_types)):
        for t in types:
            if t not in _V1_TYPES:
                raise TypeError(f"Value passed to parameter '{attr}' has DataType {t.name} "
                                f"not in list of allowed values: float32, int64, string "
                                f"(op '{op.name}', ParseExample)")
    return 3 * n_sparse + n_dense


def v1_dtypes(op) -> list:
    n_sparse, n_dense = int(op.attrs["Nsparse"]), int(op.attrs["Ndense"])
    return ([_I64] * n_sparse + _types(op, "sparse_types") + [_I64] * n_sparse
            + _dense_types(op, "Tdense", 2 + n_sparse + n_dense, n_dense))


def v1_shapes(op, serialized, names, *keys_and_defaults) -> list:
    _check_rank(op, serialized, (0, 1), "a vector (or a scalar for one Example)")
    if names.ndims not in (None, 1):
        raise op.shape_error(f"names must be a vector of strings, got shape {names}")
    n_sparse, n_dense = int(op.attrs["Nsparse"]), int(op.attrs["Ndense"])
    for i, key in enumerate(keys_and_defaults[:n_sparse + n_dense]):
        if key.ndims not in (None, 0):
            raise op.shape_error(f"key input {i} must be a scalar string, got shape {key}")
    if serialized.ndims is None:
        return _sparse_shapes(n_sparse, None) + [TensorShape(None)] * n_dense
    batch = [] if serialized.ndims == 0 else [serialized[0].value]
    return (_sparse_shapes(n_sparse, serialized.ndims + 1)
            + _dense_out(op.attrs["dense_shapes"], batch))


# -- ParseExampleV2 and ParseSingleExample --------------------------------------------------
def _example_v2_count(op) -> int:
    n_dense = len(op.attrs.get("Tdense") or []) or len(op.attrs.get("dense_shapes") or [])
    return (3 * int(op.attrs["num_sparse"]) + n_dense
            + 2 * len(op.attrs["ragged_value_types"]))


def _example_v2_dtypes(op) -> list:
    n = int(op.attrs["num_sparse"])
    dense = _dense_types(op, "Tdense", 5, len(op.inputs) - 5)
    return ([_I64] * n + _types(op, "sparse_types") + [_I64] * n + dense
            + _types(op, "ragged_value_types") + _types(op, "ragged_split_types"))


@register_op("ParseExampleV2", attrs={"Tdense": [], "num_sparse": 0, "sparse_types": [],
                                      "ragged_value_types": [], "ragged_split_types": [],
                                      "dense_shapes": []},
             num_outputs=_example_v2_count, dtype_fn=_example_v2_dtypes)
def _parse_example_v2_shape(op, serialized, names, sparse_keys, dense_keys, ragged_keys,
                            *defaults):
    _check_rank(op, serialized, (0, 1), "a vector (or a scalar for one Example)")
    for what, keys in (("sparse_keys", sparse_keys), ("dense_keys", dense_keys),
                       ("ragged_keys", ragged_keys)):
        if keys.ndims not in (None, 1):
            raise op.shape_error(f"{what} must be a vector of strings, got shape {keys}")
    n = int(op.attrs["num_sparse"])
    n_ragged = len(op.attrs["ragged_value_types"])
    if len(op.attrs["ragged_split_types"]) != n_ragged:
        raise op.shape_error(f"ragged_value_types has {n_ragged} types but "
                             f"ragged_split_types {len(op.attrs['ragged_split_types'])}")
    if len(op.attrs["dense_shapes"]) != len(defaults):
        raise op.shape_error(f"{len(defaults)} dense_defaults but "
                             f"{len(op.attrs['dense_shapes'])} dense_shapes")
    if serialized.ndims is None:
        rank, batch = None, None
    else:
        rank = serialized.ndims + 1
        batch = [] if serialized.ndims == 0 else [serialized[0].value]
    dense = ([TensorShape(None)] * len(defaults) if batch is None
             else _dense_out(op.attrs["dense_shapes"], batch))
    return (_sparse_shapes(n, rank) + dense + [TensorShape([None])] * (2 * n_ragged))


def _single_example_dtypes(op) -> list:
    n = int(op.attrs["num_sparse"])
    return ([_I64] * n + _types(op, "sparse_types") + [_I64] * n
            + _dense_types(op, "Tdense", 1, len(op.inputs) - 1))


@register_op("ParseSingleExample", attrs={"num_sparse": 0, "sparse_keys": [],
                                          "dense_keys": [], "sparse_types": [], "Tdense": [],
                                          "dense_shapes": []},
             num_outputs=lambda op: 3 * int(op.attrs["num_sparse"])
             + len(op.attrs["dense_keys"]), dtype_fn=_single_example_dtypes)
def _parse_single_example_shape(op, serialized, *defaults):
    _check_rank(op, serialized, (0,), "a scalar (one serialized Example)")
    n = int(op.attrs["num_sparse"])
    if len(op.attrs["sparse_keys"]) != n:
        raise op.shape_error(f"num_sparse is {n} but {len(op.attrs['sparse_keys'])} "
                             "sparse_keys are given")
    if not len(op.attrs["dense_keys"]) == len(op.attrs["dense_shapes"]) == len(defaults):
        raise op.shape_error(f"{len(op.attrs['dense_keys'])} dense_keys, "
                             f"{len(op.attrs['dense_shapes'])} dense_shapes and "
                             f"{len(defaults)} dense_defaults must match")
    return _sparse_shapes(n, 1) + _dense_out(op.attrs["dense_shapes"], [])


# -- the SequenceExample ops ------------------------------------------------------------------
def _seq_counts(op) -> tuple[int, int, int, int, int, int]:
    """(context sparse, context dense, context ragged, list sparse, list dense, list
    ragged) counts of a sequence-parsing op."""
    a = op.attrs
    return (int(a["Ncontext_sparse"]),
            len(a.get("Tcontext_dense") or []) or len(a.get("context_dense_shapes") or []),
            len(a.get("context_ragged_value_types") or []),
            int(a["Nfeature_list_sparse"]), int(a["Nfeature_list_dense"]),
            len(a.get("feature_list_ragged_value_types") or []))


def _seq_count(op, lengths: bool) -> int:
    cs, cd, cr, fs, fd, fr = _seq_counts(op)
    return 3 * cs + cd + 2 * cr + 3 * fs + (2 if lengths else 1) * fd + 3 * fr


def _seq_dtypes(op, first_default: int, n_defaults: int, lengths: bool) -> list:
    cs, _, _, fs, fd, _ = _seq_counts(op)
    return ([_I64] * cs + _types(op, "context_sparse_types") + [_I64] * cs
           + _dense_types(op, "Tcontext_dense", first_default, n_defaults)
           + _types(op, "context_ragged_value_types") + _types(op, "context_ragged_split_types")
           + [_I64] * fs + _types(op, "feature_list_sparse_types") + [_I64] * fs
           + _types(op, "feature_list_dense_types") + ([_I64] * fd if lengths else [])
           + _types(op, "feature_list_ragged_value_types")
           + _types(op, "feature_list_ragged_split_types")
           + _types(op, "feature_list_ragged_split_types"))


def _seq_shapes(op, serialized, lengths: bool) -> list:
    cs, _, cr, fs, fd, fr = _seq_counts(op)
    a = op.attrs
    if serialized.ndims is None:
        return [TensorShape(None)] * _seq_count(op, lengths)
    batch = [] if serialized.ndims == 0 else [serialized[0].value]
    rank = serialized.ndims + 1
    out = _sparse_shapes(cs, rank) + _dense_out(a["context_dense_shapes"], batch)
    out += [TensorShape([None])] * (2 * cr)
    out += _sparse_shapes(fs, rank + 1)
    out += [TensorShape([*batch, None, *as_shape(s).as_list()])
            for s in a["feature_list_dense_shapes"]]
    if lengths:
        out += [TensorShape(batch)] * fd
    outer = [None if not batch or batch[0] is None else batch[0] + 1]
    return (out + [TensorShape([None])] * fr + [TensorShape(outer)] * fr
            + [TensorShape([None])] * fr)


_SEQ_ATTRS = {"Ncontext_sparse": 0, "Tcontext_dense": [], "Nfeature_list_sparse": 0,
              "Nfeature_list_dense": 0, "context_sparse_types": [],
              "feature_list_dense_types": [], "context_dense_shapes": [],
              "feature_list_sparse_types": [], "feature_list_dense_shapes": []}
_RAGGED_ATTRS = {"context_ragged_value_types": [], "context_ragged_split_types": [],
                 "feature_list_ragged_value_types": [], "feature_list_ragged_split_types": []}


@register_op("ParseSequenceExampleV2", attrs={**_SEQ_ATTRS, **_RAGGED_ATTRS},
             num_outputs=lambda op: _seq_count(op, True),
             dtype_fn=lambda op: _seq_dtypes(op, 9, len(op.inputs) - 9, True))
def _parse_sequence_v2_shape(op, serialized, debug_name, *rest):
    _check_rank(op, serialized, (0, 1), "a vector (or a scalar for one SequenceExample)")
    for i, keys in enumerate(rest[:7]):
        if keys.ndims not in (None, 1):
            raise op.shape_error(f"key input {i + 2} must be a vector of strings, got "
                                 f"shape {keys}")
    return _seq_shapes(op, serialized, True)


@register_op("ParseSequenceExample",
             attrs={**_SEQ_ATTRS, "feature_list_dense_missing_assumed_empty": [],
                    "context_sparse_keys": [], "context_dense_keys": [],
                    "feature_list_sparse_keys": [], "feature_list_dense_keys": [],
                    "Ncontext_dense": 0},
             num_outputs=lambda op: _seq_count(op, True),
             dtype_fn=lambda op: _seq_dtypes(op, 2, len(op.inputs) - 2, True))
def _parse_sequence_v1_shape(op, serialized, debug_name, *defaults):
    _check_rank(op, serialized, (1,), "a vector of serialized SequenceExamples")
    return _seq_shapes(op, serialized, True)


def _single_sequence_defaults(op) -> tuple[int, int]:
    a = op.attrs
    first = 2 + int(a["Ncontext_sparse"]) + int(a.get("Ncontext_dense") or 0) \
        + int(a["Nfeature_list_sparse"]) + int(a["Nfeature_list_dense"])
    return first, len(op.inputs) - first - 1


@register_op("ParseSingleSequenceExample", attrs={**_SEQ_ATTRS, "Ncontext_dense": 0},
             num_outputs=lambda op: _seq_count(op, False),
             dtype_fn=lambda op: _seq_dtypes(op, *_single_sequence_defaults(op), False))
def _parse_single_sequence_shape(op, serialized, *rest):
    _check_rank(op, serialized, (0,), "a scalar (one serialized SequenceExample)")
    return _seq_shapes(op, serialized, False)


not_differentiable("ParseExampleV2", "ParseSingleExample", "ParseSequenceExampleV2",
                   "ParseSequenceExample", "ParseSingleSequenceExample")
