"""`tf.contrib.losses.metric_learning`: TF 1.x's losses for learning embeddings (FaceNet's
semi-hard triplets, lifted structure, N-pairs, contrastive pairs).

Each loss takes integer class `labels` (one per row of the embeddings) or, for the pair
losses, a batch of anchor rows with their positives. Distances come from
`pairwise_distance`, which clamps the small negative values rounding leaves and keeps
the gradient of a zero distance finite.

- `triplet_semihard_loss`: for each anchor-positive pair, the hinge ``margin + d(a, p) -
  d(a, n)`` on the nearest negative farther than the positive (the farthest negative
  when none is), averaged over the pairs; squared distances, as in TF 1.x.
- `lifted_struct_loss`: a smooth maximum over both members' negatives per positive pair.
- `npairs_loss` / `npairs_loss_multilabel`: softmax cross-entropy of anchor-positive
  similarities against the (normalized) label agreement, plus an L2 penalty.
- `contrastive_loss`: pulls labelled pairs together, pushes the others beyond `margin`.

TF 1.x's `cluster_loss` (a facility-location clustering score) is not provided.

Example
-------
>>> import flowgraph as tf
>>> ml = tf.contrib.losses.metric_learning
>>> with tf.Graph().as_default():
...     emb = tf.constant([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 1.0]])
...     loss = ml.triplet_semihard_loss(tf.constant([0, 0, 1, 1]), emb, margin=1.0)
...     print(round(float(tf.Session().run(loss)), 4))
0.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.linalg_diag_v3 import matrix_diag
from flowgraph.ops.logging_ops import Print
from flowgraph.ops.nn_loss_ops import softmax_cross_entropy_with_logits
from flowgraph.ops.sparse_ops import sparse_tensor_to_dense

__all__ = ["contrastive_loss", "lifted_struct_loss", "npairs_loss", "npairs_loss_multilabel",
           "pairwise_distance", "triplet_semihard_loss"]


def pairwise_distance(feature, squared=False):
    """The ``[n, n]`` Euclidean (or squared) distances between the rows of `feature`.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     d = pairwise_distance(tf.constant([[0.0, 0.0], [3.0, 4.0]]))
    ...     print(tf.Session().run(d).tolist())
    [[0.0, 5.0], [5.0, 0.0]]
    """
    feature = convert_to_tensor(feature, name="feature")
    norms = math_reduce.reduce_sum(math_ops.square(feature), 1, keepdims=True)
    squares = math_ops.subtract(
        math_ops.add(norms, array_ops.transpose(norms)),
        math_ops.multiply(2.0, math_ops.matmul(feature, feature, transpose_b=True)))
    squares = math_ops.maximum(squares, 0.0)  # rounding can leave tiny negatives
    not_positive = math_ops.cast(math_ops.less_equal(squares, 0.0), feature.dtype)
    if squared:
        distances = squares
    else:
        # a tiny offset under the root keeps d(sqrt)/dx finite where the distance is 0
        distances = math_ops.multiply(
            math_ops.sqrt(math_ops.add(squares, math_ops.multiply(not_positive, 1e-16))),
            math_ops.subtract(1.0, not_positive))
    count = array_ops.shape(feature)[0]
    off_diagonal = math_ops.subtract(
        array_ops.ones([count, count], dtype=feature.dtype),
        matrix_diag(array_ops.ones([count], dtype=feature.dtype)))
    return math_ops.multiply(distances, off_diagonal)


def _masked_max(data, mask, axis):
    """Per row, the largest `data` where `mask` is 1 (the row's minimum where none is)."""
    floor = math_reduce.reduce_min(data, axis, keepdims=True)
    return math_ops.add(math_reduce.reduce_max(
        math_ops.multiply(math_ops.subtract(data, floor), mask), axis, keepdims=True), floor)


def _masked_min(data, mask, axis):
    """Per row, the smallest `data` where `mask` is 1 (the row's maximum where none is)."""
    ceiling = math_reduce.reduce_max(data, axis, keepdims=True)
    return math_ops.add(math_reduce.reduce_min(
        math_ops.multiply(math_ops.subtract(data, ceiling), mask), axis, keepdims=True),
        ceiling)


def _same_class(labels):
    """``[n, n]`` bool: whether rows i and j share a label."""
    column = array_ops.reshape(labels, [-1, 1])
    return math_ops.equal(column, array_ops.transpose(column))


def _positive_pairs(same, dtype):
    """1.0 for each ordered pair i != j of one class."""
    count = array_ops.shape(same)[0]
    return math_ops.subtract(math_ops.cast(same, dtype),
                             matrix_diag(array_ops.ones([count], dtype=dtype)))


def triplet_semihard_loss(labels, embeddings, margin=1.0):
    """The mean semi-hard triplet hinge over every anchor-positive pair (FaceNet).

    For anchor ``a`` and positive ``p`` the negative is the one nearest to ``a`` among
    those farther from ``a`` than ``p`` (squared distances); when there is none, the
    farthest negative. Returns a float scalar named ``triplet_semihard_loss``.

    Memory: the search builds ``[batch, batch, batch]`` temporaries (as TF 1.x's tiled
    form did); each float32 one is 4 GB at a batch of 1,000 embeddings.
    """
    labels = convert_to_tensor(labels, name="labels")
    embeddings = convert_to_tensor(embeddings, name="embeddings")
    distances = pairwise_distance(embeddings, squared=True)
    dtype = distances.dtype
    same = _same_class(labels)
    negatives = math_ops.cast(math_ops.logical_not(same), dtype)
    # [anchor, positive, candidate]: candidates that are negatives farther than the positive
    rows = array_ops.expand_dims(distances, 1)
    beyond = math_ops.logical_and(
        math_ops.cast(array_ops.expand_dims(negatives, 1), dtypes.bool),
        math_ops.greater(rows, array_ops.expand_dims(distances, 2)))
    beyond_mask = math_ops.cast(beyond, dtype)
    nearest_beyond = array_ops.squeeze(_masked_min(rows, beyond_mask, 2), [2])
    farthest = _masked_max(distances, negatives, 1)  # [anchor, 1]
    hardest = array_ops.where(math_reduce.reduce_any(beyond, 2), nearest_beyond,
                              math_ops.add(farthest, array_ops.zeros_like(distances)))
    hinge = math_ops.add(margin, math_ops.subtract(distances, hardest))
    pairs = _positive_pairs(same, dtype)
    return math_ops.truediv(
        math_reduce.reduce_sum(math_ops.maximum(math_ops.multiply(hinge, pairs), 0.0)),
        math_reduce.reduce_sum(pairs), name="triplet_semihard_loss")


def lifted_struct_loss(labels, embeddings, margin=1.0):
    """The lifted structured embedding loss (Oh Song et al., 2016).

    For each positive pair (i, j): ``J = d(i, j) + log(sum over the negatives k of i of
    exp(margin - d(i, k)) + the same over the negatives of j)``, computed stably; the loss
    is ``0.25 * sum(max(J, 0) ** 2)`` over ordered pairs, divided by the unordered count.
    Memory: the sums over negatives build ``[batch, batch, batch]`` temporaries; each
    float32 one is 4 GB at a batch of 1,000 embeddings.
    """
    labels = convert_to_tensor(labels, name="labels")
    embeddings = convert_to_tensor(embeddings, name="embeddings")
    distances = pairwise_distance(embeddings)
    dtype = distances.dtype
    same = _same_class(labels)
    negatives = math_ops.cast(math_ops.logical_not(same), dtype)
    slack = math_ops.subtract(margin, distances)
    row_top = _masked_max(slack, negatives, 1)  # [n, 1]: each row's stabilizer
    pair_top = math_ops.maximum(row_top, array_ops.transpose(row_top))  # [n, n]
    # [i, j]: sum over the negatives k of i of exp(slack[i, k] - pair_top[i, j])
    shifted = math_ops.subtract(array_ops.expand_dims(slack, 1),
                                array_ops.expand_dims(pair_top, 2))
    one_side = math_reduce.reduce_sum(
        math_ops.multiply(math_ops.exp(shifted), array_ops.expand_dims(negatives, 1)), 2)
    smooth = math_ops.add(pair_top, math_ops.log(
        math_ops.add(one_side, array_ops.transpose(one_side))))
    objective = math_ops.add(smooth, distances)
    pairs = _positive_pairs(same, dtype)
    unordered = math_ops.truediv(math_reduce.reduce_sum(pairs), 2.0)
    return math_ops.truediv(
        math_ops.multiply(0.25, math_reduce.reduce_sum(math_ops.square(
            math_ops.maximum(math_ops.multiply(objective, pairs), 0.0)))),
        unordered, name="liftedstruct_loss")


def _npairs(agreement, embeddings_anchor, embeddings_positive, reg_lambda, print_losses):
    anchors = convert_to_tensor(embeddings_anchor, name="embeddings_anchor")
    positives = convert_to_tensor(embeddings_positive, name="embeddings_positive")
    penalty = math_ops.multiply(
        0.25 * reg_lambda,
        math_ops.add(
            math_reduce.reduce_mean(math_reduce.reduce_sum(math_ops.square(anchors), 1)),
            math_reduce.reduce_mean(math_reduce.reduce_sum(math_ops.square(positives), 1))),
        name="l2loss")
    similarity = math_ops.matmul(anchors, positives, transpose_b=True)
    agreement = math_ops.cast(agreement, similarity.dtype)
    targets = math_ops.truediv(agreement,
                               math_reduce.reduce_sum(agreement, 1, keepdims=True))
    xent = math_reduce.reduce_mean(
        softmax_cross_entropy_with_logits(labels=targets, logits=similarity),
        name="xentropy")
    if print_losses:
        xent = Print(xent, ["cross entropy:", xent, "l2loss:", penalty])
    return math_ops.add(penalty, xent, name="npairs_loss")


def npairs_loss(labels, embeddings_anchor, embeddings_positive, reg_lambda=0.002,
                print_losses=False):
    """N-pairs loss (Sohn, 2016): softmax cross-entropy of ``anchor @ positive.T`` against
    the row-normalized same-label matrix, plus ``0.25 * reg_lambda`` times the mean
    squared norms of both embeddings. `labels` holds one class per anchor-positive pair.
    """
    labels = convert_to_tensor(labels, name="labels")
    agreement = math_ops.cast(_same_class(labels), dtypes.float32)
    return _npairs(agreement, embeddings_anchor, embeddings_positive, reg_lambda,
                   print_losses)


def npairs_loss_multilabel(sparse_labels, embeddings_anchor, embeddings_positive,
                           reg_lambda=0.002, print_losses=False):
    """`npairs_loss` for pairs with several labels: `sparse_labels` is a list with one
    0/1 `SparseTensor` per pair (all of one dense shape); pairs agree by the number of
    labels they share."""
    if not isinstance(sparse_labels, list):
        raise TypeError(f"npairs_loss_multilabel: sparse_labels must be a list of "
                        f"SparseTensors, one per anchor-positive pair; got "
                        f"{type(sparse_labels).__name__}")
    rows = [math_ops.cast(array_ops.reshape(sparse_tensor_to_dense(s), [-1]), dtypes.float32)
            for s in sparse_labels]
    indicators = array_ops.stack(rows)  # [pairs, classes]
    # the sparse tensors' elementwise minimum summed: their dot product when 0/1
    agreement = math_reduce.reduce_sum(math_ops.minimum(
        array_ops.expand_dims(indicators, 1), array_ops.expand_dims(indicators, 0)), 2)
    return _npairs(agreement, embeddings_anchor, embeddings_positive, reg_lambda,
                   print_losses)


def contrastive_loss(labels, embeddings_anchor, embeddings_positive, margin=1.0):
    """Mean of ``y * d ** 2 + (1 - y) * max(margin - d, 0) ** 2`` over the pairs, with ``d``
    the Euclidean distance of each anchor row to its positive row and ``y`` 1 for pairs
    of one class (Hadsell et al., 2006)."""
    with name_scope(None, "contrastive_loss",
                    [labels, embeddings_anchor, embeddings_positive]):
        anchors = convert_to_tensor(embeddings_anchor, name="embeddings_anchor")
        positives = convert_to_tensor(embeddings_positive, name="embeddings_positive")
        distances = math_ops.sqrt(math_reduce.reduce_sum(
            math_ops.square(math_ops.subtract(anchors, positives)), 1))
        similar = math_ops.cast(convert_to_tensor(labels, name="labels"), anchors.dtype)
        terms = math_ops.add(
            math_ops.multiply(similar, math_ops.square(distances)),
            math_ops.multiply(math_ops.subtract(1.0, similar),
                              math_ops.square(math_ops.maximum(
                                  math_ops.subtract(margin, distances), 0.0))))
    return math_reduce.reduce_mean(terms, name="contrastive_loss")
