"""Sampled losses for large output vocabularies: `nce_loss` (noise-contrastive
estimation) and `sampled_softmax_loss`, as in TensorFlow 1.x.

Both score the true classes and `num_sampled` classes drawn by a candidate sampler
(default: log-uniform, unique) with ``inputs @ weights[ids].T + biases[ids]``, subtract
the log of each class's expected count (the sampling correction), and then apply a
sigmoid cross-entropy per logit (NCE, summed over the row) or a softmax cross-entropy
over the row (sampled softmax). Gradients reach `weights`, `biases` and `inputs` through
the gathers and the matmul (the sampled ids and counts are constants of the step).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> w = tf.constant(np.ones((50, 4), np.float32))
>>> b = tf.zeros([50])
>>> x = tf.ones([3, 4])
>>> loss = tf.nn.nce_loss(w, b, [[1], [2], [3]], x, num_sampled=5, num_classes=50)
>>> loss.shape.as_list()
[3]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_identity_ops import stop_gradient
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import (
    expand_dims,
    ones,
    ones_like,
    reshape,
    shape,
    zeros_like,
)
from flowgraph.ops.candidate_sampling_ops import (
    compute_accidental_hits,
    log_uniform_candidate_sampler,
)
from flowgraph.ops.embedding_ops import embedding_lookup
from flowgraph.ops.math_ops import cast, log, matmul, multiply
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.scatter_ops import tensor_scatter_nd_add

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, subtract_log_q, remove_accidental_hits,
                    partition_strategy, seed):
    from flowgraph.ops.array_index_ops import slice as _slice

    if not isinstance(weights, list | tuple):
        weights = [weights]
    inputs = convert_to_tensor(inputs, name="inputs")
    labels = cast(convert_to_tensor(labels, name="labels"), _dtypes.int64)
    if labels.shape.ndims == 1:
        labels = reshape(labels, [-1, num_true])
    labels_flat = reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                       num_classes, seed=seed)
    sampled, true_count, sampled_count = (stop_gradient(s) for s in sampled_values)
    sampled = cast(sampled, _dtypes.int64)
    all_ids = concat([labels_flat, sampled], 0)
    all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
    all_w = cast(all_w, inputs.dtype.base_dtype)
    n_true = shape(labels_flat)[0]
    true_w = _slice(all_w, [0, 0], stack([n_true, -1]))
    sampled_w = _slice(all_w, stack([n_true, 0]), [-1, -1])
    sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
    all_b = cast(embedding_lookup(biases, all_ids, partition_strategy=partition_strategy),
                 inputs.dtype.base_dtype)
    true_b = _slice(all_b, [0], reshape(n_true, [1]))
    sampled_b = _slice(all_b, reshape(n_true, [1]), [-1])
    dim = shape(true_w)[1:2]
    rows = multiply(expand_dims(inputs, 1), reshape(true_w, concat([[-1, num_true], dim], 0)))
    true_logits = reshape(reduce_sum(rows, -1), [-1, num_true]) + reshape(true_b,
                                                                           [-1, num_true])
    sampled_logits = sampled_logits + sampled_b
    if remove_accidental_hits:
        rows_hit, cols_hit, hit_weights = compute_accidental_hits(labels, sampled, num_true)
        index = stack([cast(rows_hit, _dtypes.int64), cols_hit], axis=1)
        sampled_logits = tensor_scatter_nd_add(
            sampled_logits, index, cast(hit_weights, sampled_logits.dtype.base_dtype))
    if subtract_log_q:
        true_logits = true_logits - log(cast(true_count, true_logits.dtype.base_dtype))
        sampled_logits = sampled_logits - log(cast(sampled_count,
                                                   sampled_logits.dtype.base_dtype))
    logits = concat([true_logits, sampled_logits], 1)
    targets = concat([ones_like(true_logits) / float(num_true), zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """The noise-contrastive estimation loss of each example (Gutmann & Hyvarinen;
    Mnih & Teh), the training loss of word2vec: ``[batch]``.

    Parameters
    ----------
    weights : Tensor or list of Tensor
        ``[num_classes, dim]`` class embeddings (a list is a partitioned variable).
    biases : Tensor
        ``[num_classes]``.
    labels : int Tensor
        ``[batch, num_true]`` target classes.
    inputs : Tensor
        ``[batch, dim]`` activations.
    num_sampled, num_classes : int
    sampled_values : tuple, optional
        ``(sampled, true_expected_count, sampled_expected_count)`` from a sampler
        (default: ``log_uniform_candidate_sampler`` with ``unique=True``).
    remove_accidental_hits : bool
        Mask sampled classes that equal a true class (default False, as in TensorFlow).
    """
    from flowgraph.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits

    # As in TF, only the logits are built inside the scope; the per-logit losses
    # ("sampled_losses") and the row sums are top-level ops.
    with name_scope(name, "nce_loss", [weights, biases, labels, inputs]):
        logits, targets = _sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true,
            sampled_values, True, remove_accidental_hits, partition_strategy, None)
    losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits,
                                               name="sampled_losses")
    return _sum_rows(losses)


def _sum_rows(x):
    """Row sums as TF computes them (``x @ ones([cols, 1])``, flattened)."""
    cols = shape(x)[1]
    ones_col = ones(stack([cols, 1]), x.dtype.base_dtype)
    return reshape(matmul(x, ones_col), [-1])


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """The softmax cross-entropy of each example over its true class and `num_sampled`
    sampled classes (Jean et al.), an estimate of the full softmax loss: ``[batch]``.
    Arguments as for `nce_loss`; accidental hits are removed by default.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.get_variable("sm_w", [20, 3])
    >>> loss = tf.nn.sampled_softmax_loss(w, tf.zeros([20]), [[4]], tf.ones([1, 3]),
    ...                                   num_sampled=5, num_classes=20)
    >>> loss.shape.as_list()
    [1]
    """
    from flowgraph.ops.nn_loss_ops import softmax_cross_entropy_with_logits_v2

    with name_scope(name, "sampled_softmax_loss", [weights, biases, labels, inputs]):
        logits, targets = _sampled_logits(
            weights, biases, labels, inputs, num_sampled, num_classes, num_true,
            sampled_values, True, remove_accidental_hits, partition_strategy, seed)
    targets = stop_gradient(targets, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=targets, logits=logits)
