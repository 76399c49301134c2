"""`tf.io.parse_single_sequence_example`: one serialized `tf.train.SequenceExample` into
its context features and its per-step sequence features.

The context is the SequenceExample's field 1, a `Features` message, which is also field 1
of an `Example`: it is parsed by the ``ParseExample`` op of `parsing_ops`. The sequence
features (``feature_lists``) are parsed by ``ParseSequenceFeatures`` below: a
`FixedLenSequenceFeature` gives a dense ``[steps, *shape]`` tensor, a `VarLenFeature` a
`tf.SparseTensor` with indices ``[step, i]`` and dense shape ``[steps, longest]``.
Kernel: `flowgraph/backends/cpu/kernels_parsing.py`.

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
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import make_op
from flowgraph.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    _example_dtype,
    parse_example,
    parsed_dtypes,
    parsed_features,
)

__all__ = ["parse_single_sequence_example"]


@register_op("ParseSequenceFeatures",
             attrs={"sparse_keys": [], "sparse_types": [], "dense_keys": [],
                    "dense_types": [], "dense_shapes": [], "dense_allow_missing": []},
             num_outputs=lambda op: 3 * len(op.attrs["sparse_keys"])
             + len(op.attrs["dense_keys"]), dtype_fn=parsed_dtypes)
def _parse_sequence_shape(op, serialized):
    if serialized.ndims not in (None, 0):
        raise op.shape_error(f"serialized must be a scalar (one SequenceExample), got shape "
                             f"{serialized}")
    n = len(op.attrs["sparse_keys"])
    out = [TensorShape([None, 2])] * n + [TensorShape([None])] * n + [TensorShape([2])] * n
    for shape in op.attrs["dense_shapes"]:
        out.append(TensorShape([None, *as_shape(shape).as_list()]))
    return out


def parse_single_sequence_example(serialized, context_features: dict | None = None,
                                  sequence_features: dict | None = None,
                                  example_name=None, name: str | None = None):
    """Parse one serialized `tf.train.SequenceExample`.

    Parameters
    ----------
    serialized : scalar string Tensor
        A binary SequenceExample proto.
    context_features : dict, optional
        Name -> `FixedLenFeature` or `VarLenFeature` of the context.
    sequence_features : dict, optional
        Name -> `FixedLenSequenceFeature` (dense ``[steps, *shape]``; a missing feature
        list is an error unless ``allow_missing=True``, then it has 0 steps) or
        `VarLenFeature` (a `tf.SparseTensor` of dense shape ``[steps, longest]``).

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
    with name_scope(name, "ParseSingleSequenceExample", [serialized]) as scope:
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError(f"parse_single_sequence_example: serialized must be a scalar, "
                             f"got shape {serialized.shape}")
        context = parse_context(serialized, context_features)
        sequence = {}
        if sequence_features:
            sequence = _parse_sequence(serialized, sequence_features, scope)
    return context, sequence


def parse_context(serialized, context_features: dict) -> dict:
    """The context features of `serialized` (a scalar or a vector of SequenceExamples),
    parsed as `parse_example` parses Examples; {} when there are none."""
    if not context_features:
        return {}
    for key, f in context_features.items():
        if not isinstance(f, FixedLenFeature | VarLenFeature):
            raise ValueError(f"Context feature '{key}': must be a FixedLenFeature or "
                             f"VarLenFeature, got {type(f).__name__}")
    return parse_example(serialized, context_features, name="context")


def sequence_feature_specs(features: dict, refuse_defaults: bool = False):
    """``(sparse, dense)`` specs of sequence `features`, sorted by key: ``(key, dtype)``
    for each `VarLenFeature`, ``(key, dtype, shape, allow_missing)`` for each
    `FixedLenSequenceFeature` (whose `default_value` must be None when
    `refuse_defaults`)."""
    sparse, dense = [], []
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
        else:
            raise ValueError(f"Sequence feature '{key}': must be a FixedLenSequenceFeature or "
                             f"VarLenFeature, got {type(f).__name__}")
    return sparse, dense


def _parse_sequence(serialized, features: dict, scope: str) -> dict:
    sparse, dense = sequence_feature_specs(features)
    op = make_op("ParseSequenceFeatures", [serialized], {
        "sparse_keys": [k for k, _ in sparse], "sparse_types": [d for _, d in sparse],
        "dense_keys": [d[0] for d in dense], "dense_types": [d[1] for d in dense],
        "dense_shapes": [d[2] for d in dense], "dense_allow_missing": [d[3] for d in dense]},
        name="sequence")
    return parsed_features(op, [k for k, _ in sparse], [d[0] for d in dense])


not_differentiable("ParseSequenceFeatures")
