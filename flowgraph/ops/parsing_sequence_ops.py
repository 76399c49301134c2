"""`tf.io.parse_single_sequence_example`: one serialized `tf.train.SequenceExample` into
its context features and its per-step sequence features.

Both this and `tf.io.parse_sequence_example` (`parsing_sequence_batch_ops`) build one
``ParseSequenceExampleV2`` op (`flowgraph/ops/parsing_v2_ops.py`), as TensorFlow 2.15
does: the context is parsed as an `Example`'s features are, the feature lists per step.
A `FixedLenSequenceFeature` gives a dense ``[steps, *shape]`` tensor, a `VarLenFeature`
a `tf.SparseTensor` with indices ``[step, i]`` and dense shape ``[steps, longest]``, a
`RaggedFeature` (without partitions) a `tf.RaggedTensor` ``[steps, (values)]``.

Example
-------
>>> import flowgraph as tf
>>> se = tf.train.SequenceExample()
>>> se.context.feature["n"].int64_list.value.append(2)
>>> for t in (3, 4):
...     se.feature_lists.feature_list["t"].feature.add().int64_list.value.append(t)
>>> ctx, seq = tf.io.parse_single_sequence_example(
...     se.SerializeToString(), {"n": tf.io.FixedLenFeature([], tf.int64)},
...     {"t": tf.io.FixedLenSequenceFeature([], tf.int64)})
>>> with tf.Session() as sess:
...     print(sess.run(seq["t"]), sess.run(ctx["n"]))
[3 4] 2
>>> seq["t"].op.type
'ParseSequenceExampleV2'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import as_shape
from flowgraph.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    _default_input,
    _example_dtype,
    _split_features,
    _strings,
)
from flowgraph.ops.parsing_ragged_feature import (
    RaggedFeature,
    RaggedPart,
    expand_ragged_features,
)
from flowgraph.ops.raw_ops import _raw_op

__all__ = ["parse_single_sequence_example"]


def parse_single_sequence_example(serialized, context_features: dict | None = None,
                                  sequence_features: dict | None = None,
                                  example_name=None, name: str | None = None):
    """Parse one serialized `tf.train.SequenceExample`.

    Parameters
    ----------
    serialized : scalar string Tensor
        A binary SequenceExample proto.
    context_features : dict, optional
        Name -> `FixedLenFeature`, `VarLenFeature` or `RaggedFeature` of the context.
    sequence_features : dict, optional
        Name -> `FixedLenSequenceFeature` (dense ``[steps, *shape]``; a missing feature
        list is an error unless ``allow_missing=True``, then it has 0 steps) or
        `VarLenFeature` (a `tf.SparseTensor` of dense shape ``[steps, longest]``) or
        `RaggedFeature` (a `tf.RaggedTensor`).

    Returns
    -------
    (dict, dict): the context tensors and the sequence tensors.

    Example
    -------
    >>> import flowgraph as tf
    >>> _, seq = tf.io.parse_single_sequence_example(
    ...     b"", sequence_features={"w": tf.io.VarLenFeature(tf.string)})
    >>> seq["w"].dense_shape.dtype
    tf.int64
    """
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    if not context_features and not sequence_features:
        raise ValueError("parse_single_sequence_example: give context_features or "
                         "sequence_features (both are empty)")
    with name_scope(name, "ParseSingleSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError(f"parse_single_sequence_example: serialized must be a scalar, "
                             f"got shape {serialized.shape}")
        context, sequence, _ = build_sequence_parse(
            serialized, context_features, sequence_features, example_name, batched=False)
    return context, sequence


def _context_specs(context_features: dict):
    """Context (sparse, dense, ragged parts) and the function that builds the requested
    dict from the parsed one."""
    for key, f in context_features.items():
        if not isinstance(f, FixedLenFeature | VarLenFeature | RaggedFeature):
            raise ValueError(f"Context feature '{key}': must be a FixedLenFeature, "
                             f"VarLenFeature or RaggedFeature, got {type(f).__name__}")
    features, combine = expand_ragged_features(context_features)
    ragged = {k: f for k, f in features.items() if isinstance(f, RaggedPart)}
    sparse, dense = _split_features({k: f for k, f in features.items() if k not in ragged},
                                    allow_empty=True)
    return sparse, dense, ragged, combine


def build_sequence_parse(serialized, context_features: dict, sequence_features: dict,
                         example_names, batched: bool):
    """``(context, sequence, lengths)`` dicts of one ``ParseSequenceExampleV2`` op over
    `serialized` (a scalar, or a vector when `batched`), named as TensorFlow names it."""
    sparse, dense, ragged, combine = _context_specs(context_features)
    ragged_keys = sorted(ragged)
    fl_sparse, fl_dense, fl_ragged = sequence_feature_specs(sequence_features,
                                                            refuse_defaults=batched)
    names = [] if example_names is None else example_names
    with name_scope(None, "ParseSequenceExample", [serialized]):
        defaults = [_default_input(*d) for d in dense]
        out = _raw_op("ParseSequenceExampleV2")(
            serialized=serialized,
            debug_name=_strings(names if isinstance(names, list | tuple) else [names]),
            context_sparse_keys=_strings([k for k, _ in sparse]),
            context_dense_keys=_strings([d[0] for d in dense]),
            context_ragged_keys=_strings(ragged_keys),
            feature_list_sparse_keys=_strings([k for k, _ in fl_sparse]),
            feature_list_dense_keys=_strings([d[0] for d in fl_dense]),
            feature_list_ragged_keys=_strings([k for k, _, _ in fl_ragged]),
            feature_list_dense_missing_assumed_empty=_strings(
                [d[0] for d in fl_dense if d[3]]),
            context_dense_defaults=defaults,
            Ncontext_sparse=len(sparse), context_sparse_types=[t for _, t in sparse],
            context_ragged_value_types=[ragged[k].dtype for k in ragged_keys],
            context_ragged_split_types=[ragged[k].row_splits_dtype for k in ragged_keys],
            context_dense_shapes=[d[2] for d in dense],
            Nfeature_list_sparse=len(fl_sparse), Nfeature_list_dense=len(fl_dense),
            feature_list_dense_types=[d[1] for d in fl_dense],
            feature_list_sparse_types=[t for _, t in fl_sparse],
            feature_list_ragged_value_types=[t for _, t, _ in fl_ragged],
            feature_list_ragged_split_types=[sd for _, _, sd in fl_ragged],
            feature_list_dense_shapes=[d[2] for d in fl_dense])
    parsed = {}
    for i, (key, _) in enumerate(sparse):
        parsed[key] = SparseTensor(out.context_sparse_indices[i],
                                   out.context_sparse_values[i], out.context_sparse_shapes[i])
    for j, d in enumerate(dense):
        parsed[d[0]] = out.context_dense_values[j]
    for j, key in enumerate(ragged_keys):
        parsed[key] = (out.context_ragged_values[j], out.context_ragged_row_splits[j])
    context = combine(parsed, serialized.shape) if context_features else {}
    sequence, lengths = {}, {}
    for i, (key, _) in enumerate(fl_sparse):
        sequence[key] = SparseTensor(out.feature_list_sparse_indices[i],
                                     out.feature_list_sparse_values[i],
                                     out.feature_list_sparse_shapes[i])
    for j, d in enumerate(fl_dense):
        sequence[d[0]] = out.feature_list_dense_values[j]
        lengths[d[0]] = out.feature_list_dense_lengths[j]
    for j, (key, _, _) in enumerate(fl_ragged):
        sequence[key] = _ragged_list(out, j, batched)
    return context, sequence, lengths


def _ragged_list(out, j: int, batched: bool):
    from flowgraph.ops.ragged_tensor import RaggedTensor

    steps = RaggedTensor.from_row_splits(out.feature_list_ragged_values[j],
                                         out.feature_list_ragged_inner_splits[j],
                                         validate=False)
    if not batched:
        return steps
    return RaggedTensor.from_row_splits(steps, out.feature_list_ragged_outer_splits[j],
                                        validate=False)


def sequence_feature_specs(features: dict, refuse_defaults: bool = False):
    """``(sparse, dense, ragged)`` specs of sequence `features`, sorted by key: ``(key,
    dtype)`` for each `VarLenFeature`, ``(key, dtype, shape, allow_missing)`` for each
    `FixedLenSequenceFeature` (whose `default_value` must be None when
    `refuse_defaults`), ``(key, dtype, row splits dtype)`` for each `RaggedFeature`
    (without partitions)."""
    sparse, dense, ragged = [], [], []
    for key in sorted(features):
        f = features[key]
        if isinstance(f, VarLenFeature):
            sparse.append((key, _example_dtype(f.dtype, key)))
        elif isinstance(f, FixedLenSequenceFeature):
            if refuse_defaults and f.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            shape = as_shape(f.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"Sequence feature '{key}': shape must be fully defined, "
                                 f"got {shape}")
            dense.append((key, _example_dtype(f.dtype, key), shape, bool(f.allow_missing)))
        elif isinstance(f, RaggedFeature):
            if f.partitions or (f.value_key or key) != key:
                raise ValueError(f"Sequence feature '{key}': flowgraph parses a "
                                 "RaggedFeature of a feature list without partitions or "
                                 "another value_key only")
            ragged.append((key, f.dtype, f.row_splits_dtype))
        else:
            raise ValueError(f"Sequence feature '{key}': must be a FixedLenSequenceFeature, "
                             f"VarLenFeature or RaggedFeature, got {type(f).__name__}")
    return sparse, dense, ragged
