"""The `tf.losses` namespace (TF1): loss functions, `Reduction` and the loss collections.

Re-exports only; see `flowgraph.losses.losses_impl` and `flowgraph.losses.util`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import losses
>>> with tf.Graph().as_default():
...     loss = losses.mean_squared_error([1.0, 2.0], [1.0, 4.0])
...     print(loss.name, tf.Session().run(losses.get_total_loss()))
mean_squared_error/value:0 2.0
"""

from flowgraph.losses.losses_impl import (
    absolute_difference,
    cosine_distance,
    hinge_loss,
    huber_loss,
    log_loss,
    mean_pairwise_squared_error,
    mean_squared_error,
    sigmoid_cross_entropy,
    softmax_cross_entropy,
    sparse_softmax_cross_entropy,
)
from flowgraph.losses.util import (
    Reduction,
    add_loss,
    compute_weighted_loss,
    get_losses,
    get_regularization_loss,
    get_regularization_losses,
    get_total_loss,
)

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]
