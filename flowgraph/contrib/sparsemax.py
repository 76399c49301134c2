"""`tf.contrib.sparsemax`: the sparsemax activation and its loss (Martins & Astudillo, 2016).

Sparsemax maps a row of logits to the probability vector closest to it in Euclidean
distance, so small logits get exactly zero probability (softmax never gives zero).
`sparsemax_loss` is the matching convex loss, whose gradient with respect to the logits
is ``sparsemax(logits) - labels``. Both take ``[batch, classes]`` tensors, as TF 1.x's
``tf.contrib.sparsemax`` did; rows whose logits hold NaN or infinities give NaN rows.

Example
-------
>>> import flowgraph as tf
>>> probs = tf.contrib.sparsemax.sparsemax(tf.constant([[3.0, 1.0, -1.0]]))
>>> with tf.Session() as sess:
...     sess.run(probs).tolist()
[[1.0, 0.0, 0.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.nn_loss_ops import top_k

__all__ = ["sparsemax", "sparsemax_loss"]


def _centered(logits):
    # Shifting a row changes neither result; centring keeps the cumulative sums small.
    return logits - math_reduce.reduce_mean(logits, axis=1, keepdims=True)


def sparsemax(logits, name=None):
    """Sparsemax of each row of `logits` (``[batch, classes]``, float).

    The threshold ``tau`` of a row is found from its sorted values: the support holds the
    ``k`` largest logits for the largest ``k`` with ``1 + k * z_(k) > z_(1) + ... + z_(k)``,
    and the output is ``max(z - tau, 0)`` with ``tau = (z_(1) + ... + z_(k) - 1) / k``.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.contrib.sparsemax.sparsemax(tf.constant([[1.0, 0.6, -1.0]]))
    >>> with tf.Session() as sess:
    ...     [round(float(v), 4) for v in sess.run(p)[0]]
    [0.7, 0.3, 0.0]
    """
    with name_scope(name, "sparsemax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        if logits.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
            raise TypeError(f"sparsemax: logits must be float16, float32 or float64; "
                            f"found {logits.dtype.name}. Cast them first.")
        logits.shape.with_rank(2)
        z = _centered(logits)
        num_classes = array_ops.shape(z)[1]
        num_rows = array_ops.shape(z)[0]
        z_sorted = top_k(z, k=num_classes).values
        running_sum = math_reduce.cumsum(z_sorted, axis=1)
        ranks = math_ops.cast(_range(1, num_classes + 1), logits.dtype)
        in_support = 1 + ranks * z_sorted > running_sum
        support_size = math_reduce.reduce_sum(math_ops.cast(in_support, dtypes.int32), axis=1)
        # A row of NaN/inf has an empty support; read position 0 and give NaN below.
        safe_size = math_ops.maximum(support_size, 1)
        last = array_ops.stack([_range(0, num_rows), safe_size - 1], axis=1)
        tau = (array_ops.gather_nd(running_sum, last) - 1) / math_ops.cast(safe_size, logits.dtype)
        probs = math_ops.maximum(math_ops.cast(0, logits.dtype), z - tau[:, None])
        broken = math_ops.logical_or(math_ops.equal(support_size, 0),
                                     math_ops.is_nan(running_sum[:, -1]))
        nan_value = math_ops.cast(float("nan"), logits.dtype)
        return array_ops.where_v2(broken[:, None], nan_value, probs)


def sparsemax_loss(logits, sparsemax, labels, name=None):
    """The sparsemax loss of each row: one value per example (``[batch]``).

    `sparsemax` is ``sparsemax(logits)`` and `labels` a probability row per example (one-hot
    for classification). The loss is zero exactly when the sparsemax equals the labels.

    Example
    -------
    >>> import flowgraph as tf
    >>> z = tf.constant([[3.0, 0.0, -1.0]])
    >>> loss = tf.contrib.sparsemax.sparsemax_loss(
    ...     z, tf.contrib.sparsemax.sparsemax(z), tf.constant([[1.0, 0.0, 0.0]]))
    >>> with tf.Session() as sess:
    ...     sess.run(loss).tolist()
    [0.0]
    """
    with name_scope(name, "sparsemax_loss", [logits, sparsemax, labels]):
        logits = convert_to_tensor(logits, name="logits")
        sparsemax = convert_to_tensor(sparsemax, name="sparsemax", dtype=logits.dtype)
        labels = convert_to_tensor(labels, name="labels", dtype=logits.dtype)
        z = _centered(logits)
        on_support = math_ops.cast(sparsemax > 0, logits.dtype)
        support_part = on_support * sparsemax * (z - 0.5 * sparsemax)
        label_part = labels * (0.5 * labels - z)
        return math_reduce.reduce_sum(support_part + label_part, axis=1)
