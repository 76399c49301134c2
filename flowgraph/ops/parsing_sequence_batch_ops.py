"""`tf.io.parse_sequence_example`: a vector of serialized `tf.train.SequenceExample`s
into batched context features, batched sequence features and the sequence lengths.

Contexts go through ``ParseExample`` (a context is an `Example`'s `Features`). The
feature lists go through ``ParseSequenceFeaturesBatch``: per sparse key indices
``[n, 3]`` (example, step, position), values and dense shape ``[batch, steps, longest]``;
per dense key a ``[batch, longest_steps, *shape]`` tensor zero-padded after each
example's last step, and its int64 lengths ``[batch]``. Kernel:
`flowgraph/backends/cpu/kernels_parsing_batch.py`.

Example
-------
>>> import flowgraph as tf
>>> se = tf.train.SequenceExample()
>>> for t in (3, 4):
...     se.feature_lists.feature_list["t"].feature.add().int64_list.value.append(t)
>>> _, seq, lengths = tf.io.parse_sequence_example(
...     [se.SerializeToString(), b""],
...     sequence_features={"t": tf.io.FixedLenSequenceFeature([], tf.int64,
...                                                           allow_missing=True)})
>>> with tf.Session() as sess:
...     print(sess.run(seq["t"]).tolist(), sess.run(lengths["t"]).tolist())
[[3, 4], [0, 0]] [2, 0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import make_op
from flowgraph.ops.parsing_ops import (
    parsed_dtypes,
    parsed_features,
)
from flowgraph.ops.parsing_sequence_ops import parse_context, sequence_feature_specs

__all__ = ["parse_sequence_example"]


def _batch_dtypes(op) -> list:
    return parsed_dtypes(op) + [_dtypes.int64] * len(op.attrs["dense_keys"])


@register_op("ParseSequenceFeaturesBatch",
             attrs={"sparse_keys": [], "sparse_types": [], "dense_keys": [],
                    "dense_types": [], "dense_shapes": [], "dense_allow_missing": []},
             num_outputs=lambda op: 3 * len(op.attrs["sparse_keys"])
             + 2 * len(op.attrs["dense_keys"]), dtype_fn=_batch_dtypes)
def _parse_batch_shape(op, serialized):
    if serialized.ndims is not None and serialized.ndims != 1:
        raise op.shape_error(f"serialized must be a vector of SequenceExamples, got shape "
                             f"{serialized}")
    batch = serialized[0].value if serialized.ndims is not None else None
    n = len(op.attrs["sparse_keys"])
    out = [TensorShape([None, 3])] * n + [TensorShape([None])] * n + [TensorShape([3])] * n
    for shape in op.attrs["dense_shapes"]:
        out.append(TensorShape([batch, None, *as_shape(shape).as_list()]))
    out += [TensorShape([batch])] * len(op.attrs["dense_keys"])
    return out


not_differentiable("ParseSequenceFeaturesBatch")


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parse a vector of serialized `tf.train.SequenceExample`s.

    Returns ``(context, feature_lists, lengths)``: dicts of batched context features
    (as `parse_example` gives them), of sequence features (`FixedLenSequenceFeature`:
    ``[batch, longest, *shape]`` zero-padded; `VarLenFeature`: a `tf.SparseTensor` of
    dense shape ``[batch, steps, longest]``) and of the int64 step counts ``[batch]`` of
    each `FixedLenSequenceFeature`.

    Example
    -------
    >>> import flowgraph as tf
    >>> ctx, seq, lengths = tf.io.parse_sequence_example(
    ...     [b"", b""], sequence_features={"w": tf.io.VarLenFeature(tf.string)})
    >>> seq["w"].dense_shape.shape.as_list(), lengths
    ([3], {})
    """
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    if not context_features and not sequence_features:
        raise ValueError("parse_sequence_example: give context_features or "
                         "sequence_features (both are empty)")
    with name_scope(name, "ParseSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 1):
            raise ValueError(f"parse_sequence_example: serialized must be a vector, got "
                             f"shape {serialized.shape}")
        context = parse_context(serialized, context_features)
        sequence, lengths = {}, {}
        if sequence_features:
            sequence, lengths = _parse_lists(serialized, sequence_features)
    return context, sequence, lengths


def _parse_lists(serialized, features: dict):
    sparse, dense = sequence_feature_specs(features, refuse_defaults=True)
    op = make_op("ParseSequenceFeaturesBatch", [serialized], {
        "sparse_keys": [k for k, _ in sparse], "sparse_types": [d for _, d in sparse],
        "dense_keys": [d[0] for d in dense], "dense_types": [d[1] for d in dense],
        "dense_shapes": [d[2] for d in dense], "dense_allow_missing": [d[3] for d in dense]},
        name="feature_lists")
    dense_keys = [d[0] for d in dense]
    parsed = parsed_features(op, [k for k, _ in sparse], dense_keys)
    first_length = 3 * len(sparse) + len(dense)
    lengths = {k: op.outputs[first_length + j] for j, k in enumerate(dense_keys)}
    return parsed, lengths
