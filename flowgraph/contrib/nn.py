"""`tf.contrib.nn`: TF 1.x's extra neural-network functions.

`alpha_dropout` (SELU-preserving dropout), `scaled_softplus`,
`sampled_sparse_softmax_loss`, `conv1d_transpose` (= `tf.nn.conv1d_transpose`) and the
``deprecated_flipped_*`` cross entropies, which take ``(logits, labels)`` positionally as
TensorFlow 0.x did.

Example
-------
>>> import flowgraph as tf
>>> y = tf.contrib.nn.scaled_softplus(tf.constant([0.0, 10.0]), 0.5)
>>> with tf.Session() as sess:
...     [round(float(v), 4) for v in sess.run(y)]
[0.3466, 10.0]
"""

from __future__ import annotations

import numbers

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import math_ops
from flowgraph.ops.array_shape_ops import shape, zeros
from flowgraph.ops.nn_extra_ops import conv1d_transpose
from flowgraph.ops.nn_loss_ops import (
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from flowgraph.ops.nn_ops import softplus
from flowgraph.ops.nn_sampled_loss import _sampled_logits
from flowgraph.ops.random_ops import random_uniform

__all__ = [
    "alpha_dropout",
    "conv1d_transpose",
    "deprecated_flipped_sigmoid_cross_entropy_with_logits",
    "deprecated_flipped_softmax_cross_entropy_with_logits",
    "deprecated_flipped_sparse_softmax_cross_entropy_with_logits",
    "sampled_sparse_softmax_loss",
    "scaled_softplus",
]

# -lambda * alpha of SELU: the value a dropped unit is set to.
_ALPHA_PRIME = -1.7580993408473766


def alpha_dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Dropout for self-normalizing networks (Klambauer et al., 2017): each unit is kept
    with probability `keep_prob`, else set to SELU's negative saturation value, and the
    result is rescaled so that a zero-mean, unit-variance input keeps those moments.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.ones([3])
    >>> tf.contrib.nn.alpha_dropout(x, 1.0) is x
    True
    """
    with name_scope(name, "alpha_dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"alpha_dropout: keep_prob must be a scalar tensor or a float in "
                             f"the range (0, 1], got {keep_prob}")
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        if keep_prob.shape.ndims not in (None, 0):
            raise ValueError(f"alpha_dropout: keep_prob must be a scalar, got shape "
                             f"{keep_prob.shape}")
        if constant_value(keep_prob) == 1:
            return x
        if noise_shape is None:
            noise_shape = shape(x)
        noise = random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        kept = math_ops.cast(math_ops.greater_equal(noise, 1 - keep_prob), x.dtype)
        x = x * kept + _ALPHA_PRIME * (1 - kept)
        a = (keep_prob + keep_prob * (1 - keep_prob) * _ALPHA_PRIME ** 2) ** -0.5
        b = -a * _ALPHA_PRIME * (1 - keep_prob)
        return a * x + b


def scaled_softplus(x, alpha, clip=None, name=None):
    """``alpha * softplus(x / alpha)``, a smooth ReLU whose smoothness is `alpha` (> 0;
    it broadcasts against `x`); with `clip`, the result is capped at `clip`.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.contrib.nn.scaled_softplus(tf.constant([2.0]), 1.0, clip=1.0)
    >>> with tf.Session() as sess:
    ...     sess.run(y).tolist()
    [1.0]
    """
    with name_scope(name, "scaled_softplus", [x, alpha]):
        x = convert_to_tensor(x, name="x")
        alpha = convert_to_tensor(alpha, dtype=x.dtype, name="alpha")
        y = alpha * softplus(x / alpha)
        if clip is None:
            return y
        clip = convert_to_tensor(clip, dtype=x.dtype, name="clip")
        return math_ops.minimum(y, clip)


def sampled_sparse_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                                sampled_values=None, remove_accidental_hits=True,
                                partition_strategy="mod",
                                name="sampled_sparse_softmax_loss"):
    """`tf.nn.sampled_softmax_loss` with one true class per example (`labels` ``[batch,
    1]``), computed with a sparse softmax cross entropy: ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.get_variable("ssl_w", [20, 3])
    >>> loss = tf.contrib.nn.sampled_sparse_softmax_loss(
    ...     w, tf.zeros([20]), [[4]], tf.ones([1, 3]), num_sampled=5, num_classes=20)
    >>> loss.shape.as_list()
    [1]
    """
    with name_scope(name, "sampled_sparse_softmax_loss", [weights, biases, labels, inputs]):
        logits, _ = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                    num_classes, 1, sampled_values, True,
                                    remove_accidental_hits, partition_strategy, None)
        # The true class's logit is column 0 of each row.
        first = zeros(shape(logits)[:1], dtype=_dtypes.int64)
        return sparse_softmax_cross_entropy_with_logits(labels=first, logits=logits)


def deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels, dim=-1, name=None):
    """`tf.nn.softmax_cross_entropy_with_logits` taking ``(logits, labels)`` in that order.

    Example
    -------
    >>> import flowgraph as tf
    >>> f = tf.contrib.nn.deprecated_flipped_softmax_cross_entropy_with_logits
    >>> f(tf.zeros([1, 2]), tf.constant([[0.0, 1.0]])).shape.as_list()
    [1]
    """
    return softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=dim, name=name)


def deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, labels, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits` taking ``(logits, labels)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> f = tf.contrib.nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits
    >>> f(tf.zeros([1, 2]), tf.constant([1])).shape.as_list()
    [1]
    """
    return sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name=name)


def deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, targets, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits` taking ``(logits, targets)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> f = tf.contrib.nn.deprecated_flipped_sigmoid_cross_entropy_with_logits
    >>> f(tf.zeros([2]), tf.ones([2])).shape.as_list()
    [2]
    """
    return sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name=name)
