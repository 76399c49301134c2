"""CPU kernels of TensorFlow's Example-parsing op types (`flowgraph/ops/parsing_v2_ops.py`).

All of them reuse two decoders: the Example kernel of `kernels_data` (``parse_example``:
sparse and dense features of a batch of Examples, or of SequenceExamples' contexts, which
are field 1 of the message as an Example's features are) and the feature-list kernels of
`kernels_parsing` / `kernels_parsing_batch`. A ragged feature is parsed as a sparse one
and its row ids become row splits::

    Examples [{r: 7 8}, {}, {r: 9}]  -> sparse indices [[0 0] [0 1] [2 0]], values [7 8 9]
                                    -> ragged values [7 8 9], row splits [0 2 2 3]
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_data import parse_example
from flowgraph.backends.cpu.kernels_parsing import parse_sequence_features
from flowgraph.backends.cpu.kernels_parsing_batch import parse_sequence_features_batch
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.parsing_v2_ops import dense_spec


def _keys(value) -> list[str]:
    return [k.decode("utf-8", "surrogateescape") if isinstance(k, bytes) else str(k)
            for k in np.asarray(value, dtype=object).reshape(-1)]


def _dtype_of(array) -> _dtypes.DType:
    array = np.asarray(array)
    return _dtypes.string if array.dtype.kind in "OSU" else _dtypes.as_dtype(array.dtype)


def _as_list(outs) -> list:
    return list(outs) if isinstance(outs, tuple) else [outs]


def _dense_specs(op_name: str, keys, shapes, defaults) -> list:
    """(key, dtype, item shape, default or None, is_sequence) per dense feature."""
    if not len(keys) == len(shapes) == len(defaults):
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: {len(keys)} dense keys, {len(shapes)} dense shapes "
            f"and {len(defaults)} dense defaults; they must match")
    out = []
    for key, shape, default in zip(keys, shapes, defaults):
        item, seq = dense_spec(shape)
        default = np.asarray(default)
        dtype = _dtype_of(default)
        if default.size == 0:
            value = None
        elif seq:
            if default.size != 1:
                raise errors.InvalidArgumentError(
                    None, None, f"{op_name}: the padding value of sequence feature '{key}' "
                    f"must be a scalar, got shape {list(default.shape)}")
            value = default.reshape(())
        else:
            if default.size != int(np.prod(item.as_list())):
                raise errors.InvalidArgumentError(
                    None, None, f"{op_name}: the default of dense feature '{key}' has shape "
                    f"{list(default.shape)} but the feature's shape is {item.as_list()}")
            value = default.reshape(item.as_list())
        out.append((key, dtype, item, value, seq))
    return out


def _split_np(dtype) -> type:
    return np.int64 if _dtypes.as_dtype(dtype).base_dtype == _dtypes.int64 else np.int32


def parse_examples(serialized, sparse, dense, ragged) -> list:
    """The outputs of an Example parse of `serialized` (a scalar or a vector): sparse
    (indices, values, shapes), dense values, ragged (values, row splits), for specs
    ``(key, dtype)``, ``(key, dtype, shape, default, is_seq)`` and ``(key, dtype,
    split dtype)``."""
    keys = [k for k, _ in sparse] + [k for k, _, _ in ragged]
    types = [t for _, t in sparse] + [t for _, t, _ in ragged]
    outs = []
    if keys or dense:
        outs = _as_list(parse_example(
            serialized, sparse_keys=keys, sparse_types=types,
            dense_keys=[d[0] for d in dense], dense_types=[d[1] for d in dense],
            dense_shapes=[d[2] for d in dense], dense_defaults=[d[3] for d in dense],
            dense_is_sequence=[d[4] for d in dense]))
    n, r = len(sparse), len(ragged)
    total = n + r
    idx, val, shp = outs[:total], outs[total:2 * total], outs[2 * total:3 * total]
    result = idx[:n] + val[:n] + shp[:n] + outs[3 * total:]
    single = np.ndim(serialized) == 0
    batch = 1 if single else int(np.size(serialized))
    splits = []
    for j, (_, _, split) in enumerate(ragged):
        if single:
            splits.append(np.zeros([0], _split_np(split)))
            continue
        counts = np.bincount(idx[n + j][:, 0], minlength=batch) if batch else np.zeros(0)
        splits.append(np.concatenate([[0], np.cumsum(counts)]).astype(_split_np(split)))
    return result + val[n:] + splits


@cpu_kernel("ParseExampleV2")
def parse_example_v2(serialized, names, sparse_keys, dense_keys, ragged_keys, *dense_defaults,
                     num_sparse, sparse_types, ragged_value_types, ragged_split_types,
                     dense_shapes, Tdense=()):
    sparse_keys, ragged_keys = _keys(sparse_keys), _keys(ragged_keys)
    if len(sparse_keys) != int(num_sparse) or len(ragged_keys) != len(ragged_value_types):
        raise errors.InvalidArgumentError(
            None, None, f"ParseExampleV2: got {len(sparse_keys)} sparse keys and "
            f"{len(ragged_keys)} ragged keys, but the attributes say {num_sparse} and "
            f"{len(ragged_value_types)}")
    if np.ndim(serialized) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"ParseExampleV2: serialized must be a scalar or a vector, got shape "
            f"{list(np.shape(serialized))}")
    sparse = list(zip(sparse_keys, [_dtypes.as_dtype(t) for t in sparse_types]))
    dense = _dense_specs("ParseExampleV2", _keys(dense_keys), dense_shapes, dense_defaults)
    ragged = list(zip(ragged_keys, [_dtypes.as_dtype(t) for t in ragged_value_types],
                      ragged_split_types))
    outs = parse_examples(serialized, sparse, dense, ragged)
    return outs[0] if len(outs) == 1 else tuple(outs)


@cpu_kernel("ParseExample")
def parse_example_kernel(serialized, *v1_inputs, sparse_keys, sparse_types, dense_keys,
                         dense_types, dense_shapes, dense_defaults, dense_is_sequence,
                         Nsparse=0, Ndense=0, Tdense=()):
    """``ParseExample`` in either layout (`flowgraph/ops/parsing_ops.py`)."""
    if v1_inputs:  # TensorFlow's: keys and defaults are inputs
        return parse_example_v1(serialized, v1_inputs, int(Nsparse), int(Ndense),
                                sparse_types, dense_shapes)
    return parse_example(serialized, sparse_keys=sparse_keys, sparse_types=sparse_types,
                         dense_keys=dense_keys, dense_types=dense_types,
                         dense_shapes=dense_shapes, dense_defaults=dense_defaults,
                         dense_is_sequence=dense_is_sequence)


def parse_example_v1(serialized, inputs, n_sparse: int, n_dense: int, sparse_types,
                     dense_shapes):
    """``ParseExample`` with TensorFlow's inputs: `inputs` are ``names``, the sparse keys,
    the dense keys and the dense defaults (scalar strings and arrays)."""
    if np.ndim(serialized) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"ParseExample: serialized must be a scalar or a vector, got shape "
            f"{list(np.shape(serialized))}")
    keys = [_keys(k) for k in inputs[1:1 + n_sparse + n_dense]]
    for k in keys:
        if len(k) != 1:
            raise errors.InvalidArgumentError(
                None, None, f"ParseExample: each sparse and dense key must be a scalar "
                f"string; got {len(k)} strings")
    sparse = list(zip([k[0] for k in keys[:n_sparse]],
                      [_dtypes.as_dtype(t) for t in sparse_types]))
    dense = _dense_specs("ParseExample", [k[0] for k in keys[n_sparse:]], dense_shapes,
                         inputs[1 + n_sparse + n_dense:])
    outs = parse_examples(serialized, sparse, dense, [])
    return outs[0] if len(outs) == 1 else tuple(outs)


@cpu_kernel("ParseSingleExample")
def parse_single_example(serialized, *dense_defaults, num_sparse, sparse_keys, dense_keys,
                         sparse_types, dense_shapes, Tdense=()):
    if np.ndim(serialized) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"ParseSingleExample: serialized must be a scalar, got shape "
            f"{list(np.shape(serialized))}")
    sparse = list(zip(list(sparse_keys), [_dtypes.as_dtype(t) for t in sparse_types]))
    dense = _dense_specs("ParseSingleExample", list(dense_keys), dense_shapes, dense_defaults)
    outs = parse_examples(serialized, sparse, dense, [])
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- SequenceExamples ---------------------------------------------------------------------------
def _list_outputs(serialized, sparse, dense, allowed: set[str], lengths: bool) -> list:
    """Feature-list outputs: sparse (indices, values, shapes), dense values, and with
    `lengths` the dense features' step counts."""
    attrs = {"sparse_keys": [k for k, _ in sparse], "sparse_types": [t for _, t in sparse],
             "dense_keys": [k for k, _, _ in dense], "dense_types": [t for _, t, _ in dense],
             "dense_shapes": [s for _, _, s in dense],
             "dense_allow_missing": [k in allowed for k, _, _ in dense]}
    if not sparse and not dense:
        return []
    single = np.ndim(serialized) == 0
    if single:
        outs = _as_list(parse_sequence_features(serialized, **attrs))
        steps = [np.int64(len(d)) for d in outs[3 * len(sparse):]]
        return outs + (steps if lengths else [])
    outs = _as_list(parse_sequence_features_batch(serialized, **attrs))
    return outs if lengths else outs[:3 * len(sparse) + len(dense)]


def _ragged_lists(serialized, ragged) -> list:
    """Per ragged feature list: its values, outer splits (steps per example) and inner
    splits (values per step); a scalar `serialized` has no outer splits."""
    single = np.ndim(serialized) == 0
    records = np.asarray(serialized, dtype=object).reshape(-1)
    values, outer, inner = [], [], []
    for key, dtype, split in ragged:
        vals, steps, counts = [], [], []
        for rec in records:
            out = _as_list(parse_sequence_features(
                np.array(rec, dtype=object), sparse_keys=[key], sparse_types=[dtype],
                dense_keys=[], dense_types=[], dense_shapes=[], dense_allow_missing=[]))
            idx, val, shape = out
            vals.append(val)
            steps.append(int(shape[0]))
            counts.append(np.bincount(idx[:, 0], minlength=int(shape[0])))
        np_split = _split_np(split)
        np_type = object if dtype == _dtypes.string else dtype.as_numpy_dtype
        values.append(np.concatenate(vals).astype(np_type) if vals else np.zeros(0, np_type))
        outer.append(np.zeros(0, np_split) if single else
                     np.concatenate([[0], np.cumsum(steps)]).astype(np_split))
        flat = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        inner.append(np.concatenate([[0], np.cumsum(flat)]).astype(np_split))
    return values + outer + inner


def parse_sequences(op_name: str, serialized, context: tuple, lists: tuple,
                    allowed: set[str], lengths: bool) -> tuple:
    """All outputs of a SequenceExample parse. `context` is (sparse, dense, ragged) specs
    as `parse_examples` takes them; `lists` is (sparse ``(key, dtype)``, dense ``(key,
    dtype, shape)``, ragged ``(key, dtype, split dtype)``)."""
    if np.ndim(serialized) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: serialized must be a scalar or a vector, got shape "
            f"{list(np.shape(serialized))}")
    for key, _, _, _, seq in context[1]:
        if seq:
            raise errors.InvalidArgumentError(
                None, None, f"{op_name}: context feature '{key}' has a variable-length "
                "shape; context features are FixedLenFeatures")
    outs = parse_examples(serialized, *context)
    outs += _list_outputs(serialized, lists[0], lists[1], allowed, lengths)
    outs += _ragged_lists(serialized, lists[2])
    return outs[0] if len(outs) == 1 else tuple(outs)


def _typed(keys, types) -> list:
    return list(zip(keys, [_dtypes.as_dtype(t).base_dtype for t in types]))


def _list_dense(keys, types, shapes) -> list:
    return [(k, _dtypes.as_dtype(t).base_dtype, TensorShape(s)) for k, t, s in
            zip(keys, types, shapes)]


@cpu_kernel("ParseSequenceExampleV2")
def parse_sequence_example_v2(
        serialized, debug_name, context_sparse_keys, context_dense_keys, context_ragged_keys,
        feature_list_sparse_keys, feature_list_dense_keys, feature_list_ragged_keys,
        feature_list_dense_missing_assumed_empty, *context_dense_defaults, Ncontext_sparse,
        Nfeature_list_sparse, Nfeature_list_dense, context_sparse_types,
        feature_list_dense_types, context_dense_shapes, feature_list_sparse_types,
        feature_list_dense_shapes, context_ragged_value_types, context_ragged_split_types,
        feature_list_ragged_value_types, feature_list_ragged_split_types, Tcontext_dense=()):
    name = "ParseSequenceExampleV2"
    context = (_typed(_keys(context_sparse_keys), context_sparse_types),
               _dense_specs(name, _keys(context_dense_keys), context_dense_shapes,
                            context_dense_defaults),
               [(k, _dtypes.as_dtype(t), s) for k, t, s in zip(
                   _keys(context_ragged_keys), context_ragged_value_types,
                   context_ragged_split_types)])
    lists = (_typed(_keys(feature_list_sparse_keys), feature_list_sparse_types),
             _list_dense(_keys(feature_list_dense_keys), feature_list_dense_types,
                         feature_list_dense_shapes),
             [(k, _dtypes.as_dtype(t), s) for k, t, s in zip(
                 _keys(feature_list_ragged_keys), feature_list_ragged_value_types,
                 feature_list_ragged_split_types)])
    return parse_sequences(name, serialized, context, lists,
                           set(_keys(feature_list_dense_missing_assumed_empty)), True)


@cpu_kernel("ParseSequenceExample")
def parse_sequence_example_v1(
        serialized, debug_name, *context_dense_defaults,
        feature_list_dense_missing_assumed_empty, context_sparse_keys, context_dense_keys,
        feature_list_sparse_keys, feature_list_dense_keys, Ncontext_sparse, Ncontext_dense,
        Nfeature_list_sparse, Nfeature_list_dense, context_sparse_types,
        feature_list_dense_types, context_dense_shapes, feature_list_sparse_types,
        feature_list_dense_shapes, Tcontext_dense=()):
    name = "ParseSequenceExample"
    context = (_typed(list(context_sparse_keys), context_sparse_types),
               _dense_specs(name, list(context_dense_keys), context_dense_shapes,
                            context_dense_defaults), [])
    lists = (_typed(list(feature_list_sparse_keys), feature_list_sparse_types),
             _list_dense(list(feature_list_dense_keys), feature_list_dense_types,
                         feature_list_dense_shapes), [])
    return parse_sequences(name, serialized, context, lists,
                           set(feature_list_dense_missing_assumed_empty), True)


@cpu_kernel("ParseSingleSequenceExample")
def parse_single_sequence_example(
        serialized, missing_assumed_empty, *rest, Ncontext_sparse, Ncontext_dense,
        Nfeature_list_sparse, Nfeature_list_dense, context_sparse_types,
        feature_list_dense_types, context_dense_shapes, feature_list_sparse_types,
        feature_list_dense_shapes, Tcontext_dense=()):
    name = "ParseSingleSequenceExample"
    counts = [int(Ncontext_sparse), int(Ncontext_dense), int(Nfeature_list_sparse),
              int(Nfeature_list_dense)]
    groups, at = [], 0
    for c in counts:
        groups.append([k for item in rest[at:at + c] for k in _keys(item)])
        at += c
    defaults, _debug_name = rest[at:-1], rest[-1]
    context = (_typed(groups[0], context_sparse_types),
               _dense_specs(name, groups[1], context_dense_shapes, defaults), [])
    lists = (_typed(groups[2], feature_list_sparse_types),
             _list_dense(groups[3], feature_list_dense_types, feature_list_dense_shapes), [])
    return parse_sequences(name, serialized, context, lists,
                           set(_keys(missing_assumed_empty)), False)
