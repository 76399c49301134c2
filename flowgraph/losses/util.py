"""Loss reduction and the loss collections: `Reduction`, `compute_weighted_loss`,
`add_loss`, `get_losses`, `get_regularization_losses`, `get_regularization_loss` and
`get_total_loss`.

Every ``tf.losses`` function computes an elementwise loss, multiplies it by `weights`
(a scalar, or a tensor of the loss's rank whose dimensions are 1 or the loss's) and
reduces it by `reduction`:

    NONE                    the weighted elementwise losses
    SUM                     sum(w * l)
    MEAN                    sum(w * l) / sum(w)                   (0 when sum(w) == 0)
    SUM_OVER_BATCH_SIZE     sum(w * l) / number of loss elements
    SUM_BY_NONZERO_WEIGHTS  sum(w * l) / number of non-zero weights (the default;
                            SUM_OVER_NONZERO_WEIGHTS is the same value)

The result is added to the ``GraphKeys.LOSSES`` collection (or `loss_collection`), and
`get_total_loss` sums that collection with ``GraphKeys.REGULARIZATION_LOSSES``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.losses.util import compute_weighted_loss
>>> loss = compute_weighted_loss([1.0, 2.0, 6.0], weights=[1.0, 1.0, 0.0])
>>> float(tf.Session().run(loss))
1.5
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
    name_scope,
)
from flowgraph.framework.operation import Tensor
from flowgraph.ops import array_ops, math_ops, math_reduce

__all__ = [
    "Reduction",
    "add_loss",
    "compute_weighted_loss",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
]


class Reduction:
    """How a ``tf.losses`` function reduces its weighted elementwise losses.

    Example
    -------
    >>> Reduction.SUM_BY_NONZERO_WEIGHTS
    'weighted_sum_by_nonzero_weights'
    >>> Reduction.validate("weighted_mean")
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of "
                             f"{cls.all()}.")


# -- helpers shared with losses_impl and metrics -----------------------------------------------
def check_broadcastable(weights: Tensor, values: Tensor, what: str = "values") -> None:
    """Raise ValueError unless `weights` (a scalar, or of the rank of `values` with each
    dimension 1 or equal to the values' one) broadcasts to `values`. Unknown dimensions
    pass (they are checked when the product runs)."""
    ws, vs = weights.shape, values.shape
    if ws.ndims == 0 or ws.ndims is None or vs.ndims is None:
        return
    if ws.ndims != vs.ndims:
        raise ValueError(f"weights can not be broadcast to values. values.rank={vs.ndims}. "
                         f"weights.rank={ws.ndims}. values.shape={vs}. weights.shape={ws}. "
                         f"Give weights of rank 0 or {vs.ndims} (the rank of the {what}).")
    for dim, (w, v) in enumerate(zip(ws.as_list(), vs.as_list(), strict=True)):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(f"weights can not be broadcast to values. Mismatch at dim {dim}. "
                             f"values.shape={vs.as_list()}, weights.shape={ws.as_list()}. "
                             f"Each weights dimension must be 1 or equal to the {what}' one.")


def safe_div(numerator, denominator, name: str = "value") -> Tensor:
    """``numerator / denominator``, 0 where `denominator` is 0 (one ``DivNoNan`` op)."""
    return math_ops.div_no_nan(numerator, denominator, name=name)


def num_elements(losses: Tensor) -> Tensor:
    """The number of elements of `losses`, in its dtype."""
    with name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype.base_dtype)


def _broadcast_to_losses(weights: Tensor, losses: Tensor) -> Tensor:
    """`weights` times ones of the shape of `losses` (one ``broadcast_weights`` Mul, as
    TensorFlow builds it); `weights` itself when both static shapes already agree."""
    with name_scope(None, "broadcast_weights", [weights, losses]) as scope:
        if (weights.shape.is_fully_defined() and losses.shape.is_fully_defined()
                and weights.shape.is_compatible_with(losses.shape)):
            return weights
        check_broadcastable(weights, losses, "losses")
        return math_ops.multiply(weights, array_ops.ones_like(losses), name=scope)


def num_present(losses: Tensor, weights, per_batch: bool = False) -> Tensor:
    """The number of elements of `losses` whose (broadcast) weight is non-zero; with
    `per_batch`, per example (summed over every dimension but the first, kept as 1s).

    A non-zero Python float weight counts every element (``num_elements``); any other
    weight builds the ``num_present`` subgraph (``Equal``, ``Select``, ``broadcast_weights``
    and a ``Sum`` named ``num_present``).
    """
    if isinstance(weights, float) and weights != 0.0 and not per_batch:
        return num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]) as scope:
        weights = math_ops.cast(weights, _dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0),
                                  array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = _broadcast_to_losses(present, losses)
        if per_batch:
            axes = array_ops.range(1, array_ops.rank(present))
            return math_reduce.reduce_sum(present, axis=axes, keepdims=True, name=scope)
        return math_reduce.reduce_sum(present, name=scope)


def _safe_mean(total: Tensor, count: Tensor) -> Tensor:
    """``sum(total) / count`` (0 when `count` is 0), named ``value``."""
    return safe_div(math_reduce.reduce_sum(total), count)


# -- public API --------------------------------------------------------------------------------
def compute_weighted_loss(losses, weights=1.0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Multiply `losses` by `weights` and reduce them by `reduction`.

    Parameters
    ----------
    losses : Tensor
        Elementwise losses, any shape.
    weights : scalar or Tensor
        Of rank 0 or the rank of `losses`, each dimension 1 or equal to the losses' one.
    scope : str, optional
        Name scope of the ops (default ``weighted_loss``).
    loss_collection : str or None
        Collection the result is added to.
    reduction : str
        A `Reduction` value.

    Returns
    -------
    Tensor
        The loss in the dtype of `losses`: a scalar, or the shape of `losses` for NONE.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import Reduction, compute_weighted_loss
    >>> s = compute_weighted_loss([1.0, 3.0], weights=2.0, reduction=Reduction.SUM)
    >>> float(tf.Session().run(s))
    8.0
    """
    Reduction.validate(reduction)
    # tf.distribute's optimizer reads the last reduction (a mean loss is averaged over
    # replicas in an Estimator's distributed training, a summed one is not).
    get_default_graph().__dict__["_last_loss_reduction"] = reduction
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype.base_dtype
        losses = math_ops.cast(losses, _dtypes.float32)
        # A Python weight becomes a tensor here (``Cast/x``), so the default reduction
        # always counts the present elements with a ``num_present`` subgraph, as TF does.
        w = math_ops.cast(weights, _dtypes.float32)
        check_broadcastable(w, losses, "losses")
        weighted = math_ops.multiply(losses, w)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_reduce.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, math_reduce.reduce_sum(array_ops.ones_like(losses) * w))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, num_present(losses, w))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, num_elements(losses))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def add_loss(loss, loss_collection=GraphKeys.LOSSES) -> None:
    """Add `loss` to the collection `loss_collection` (nothing when it is None/empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import add_loss, get_losses
    >>> with tf.Graph().as_default():
    ...     add_loss(tf.constant(1.0))
    ...     print(len(get_losses()))
    1
    """
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES) -> list:
    """The losses in `loss_collection`, filtered by the name-scope regex `scope`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import get_losses
    >>> with tf.Graph().as_default():
    ...     print(get_losses())
    []
    """
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None) -> list:
    """The tensors of ``GraphKeys.REGULARIZATION_LOSSES`` (filtered by `scope`).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import get_regularization_losses
    >>> with tf.Graph().as_default():
    ...     print(get_regularization_losses())
    []
    """
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss") -> Tensor:
    """The sum of the regularization losses, or a constant 0.0 when there are none.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import get_regularization_loss
    >>> with tf.Graph().as_default():
    ...     print(tf.Session().run(get_regularization_loss()))
    0.0
    """
    losses = get_regularization_losses(scope)
    if losses:
        return math_reduce.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None) -> Tensor:
    """The sum of ``GraphKeys.LOSSES`` and (by default) of the regularization losses.

    Raises ValueError when both collections are empty.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.losses.util import add_loss, get_total_loss
    >>> with tf.Graph().as_default():
    ...     add_loss(tf.constant(1.5))
    ...     tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    ...     print(tf.Session().run(get_total_loss()))
    2.0
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError(
            "get_total_loss: no losses found in the collections "
            f"'{GraphKeys.LOSSES}'"
            + (f" and '{GraphKeys.REGULARIZATION_LOSSES}'" if add_regularization_losses
               else "")
            + (f" under scope {scope!r}" if scope else "")
            + ". Create losses with tf.losses.* (or add them with tf.losses.add_loss) first.")
    first = losses[0].shape
    if any(not t.shape.is_compatible_with(first) for t in losses[1:]):
        raise ValueError(
            "get_total_loss: the losses must all have one shape to be summed, got "
            f"{', '.join(f'{t.name} {t.shape}' for t in losses)}. A loss built with "
            "reduction=Reduction.NONE is not a scalar; pass loss_collection=None for it.")
    return math_reduce.add_n(losses, name=name)
