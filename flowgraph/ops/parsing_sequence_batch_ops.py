"""`tf.io.parse_sequence_example`: a vector of serialized `tf.train.SequenceExample`s
into batched context features, batched sequence features and the sequence lengths.

One ``ParseSequenceExampleV2`` op (as `parsing_sequence_ops` builds for one example):
per sparse feature list indices ``[n, 3]`` (example, step, position), values and dense
shape ``[batch, steps, longest]``; per dense one a ``[batch, longest_steps, *shape]``
tensor zero-padded after each example's last step, and its int64 lengths ``[batch]``.
Kernel: `flowgraph/backends/cpu/kernels_parsing_v2.py`.

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
from flowgraph.ops.parsing_sequence_ops import build_sequence_parse

__all__ = ["parse_sequence_example"]


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
        return build_sequence_parse(serialized, context_features, sequence_features,
                                    example_names, batched=True)
