"""`tf.keras.losses`: per-example loss functions ``fn(y_true, y_pred)``.

Each function reduces only the last axis (the classes or features), so it returns one
value per example; `Model.compile` averages them over the batch. Labels one rank lower
than the predictions (``(batch,)`` against ``(batch, 1)``) get a trailing axis first, as
Keras does. With ``from_logits=False`` a prediction made by a ``Softmax`` (``Sigmoid``)
op is traced back to its logits for a numerically stable cross-entropy; other
probabilities are clipped to ``[epsilon, 1 - epsilon]``.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> from flowgraph.keras import losses
>>> with tf.Graph().as_default():
...     loss = losses.get("mse")([[1.0, 2.0]], [[1.0, 4.0]])
...     print(tf.Session().run(loss))
[2.]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend
from flowgraph.ops import array_shape_ops, math_ops, math_reduce, nn_loss_ops

__all__ = [
    "MAE",
    "MSE",
    "base_function",
    "binary_crossentropy",
    "categorical_crossentropy",
    "get",
    "mae",
    "mean_absolute_error",
    "mean_squared_error",
    "mse",
    "per_example",
    "sparse_categorical_crossentropy",
]


def _prepare(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.dtype.base_dtype != y_pred.dtype.base_dtype:
        y_true = math_ops.cast(y_true, y_pred.dtype.base_dtype)
    rt, rp = y_true.shape.ndims, y_pred.shape.ndims
    if rt is not None and rp is not None and rt == rp - 1:
        y_true = array_shape_ops.expand_dims(y_true, -1)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """``mean(square(y_pred - y_true), axis=-1)``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return math_reduce.reduce_mean(math_ops.squared_difference(y_pred, y_true), -1)


def mean_absolute_error(y_true, y_pred):
    """``mean(abs(y_pred - y_true), axis=-1)``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return math_reduce.reduce_mean(math_ops.abs(math_ops.subtract(y_pred, y_true)), -1)


def _clip(p):
    eps = backend.epsilon()
    return math_ops.clip_by_value(p, eps, 1.0 - eps)


def _logits_of(y_pred, op_type: str):
    return y_pred.op.inputs[0] if y_pred.op.type == op_type else None


def categorical_crossentropy(y_true, y_pred, from_logits: bool = False):
    """``-sum(y_true * log(y_pred), axis=-1)`` for one-hot (or soft) targets."""
    y_true, y_pred = _prepare(y_true, y_pred)
    logits = y_pred if from_logits else _logits_of(y_pred, "Softmax")
    if logits is not None:
        return nn_loss_ops.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=logits)
    p = math_ops.truediv(y_pred, math_reduce.reduce_sum(y_pred, -1, keepdims=True))
    return math_ops.negative(math_reduce.reduce_sum(
        math_ops.multiply(y_true, math_ops.log(_clip(p))), -1))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits: bool = False):
    """Categorical cross-entropy with integer class targets (``(batch,)`` or
    ``(batch, 1)``)."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    labels = array_shape_ops.reshape(y_true, array_shape_ops.shape(y_pred)[:-1])
    labels = math_ops.cast(labels, "int64")
    logits = y_pred if from_logits else _logits_of(y_pred, "Softmax")
    if logits is None:
        # As Keras: log of the clipped probabilities taken as logits, so probabilities
        # that do not sum to 1 are normalized by the softmax.
        logits = math_ops.log(_clip(y_pred))
    return nn_loss_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def binary_crossentropy(y_true, y_pred, from_logits: bool = False):
    """Mean over the last axis of ``-(y log p + (1 - y) log(1 - p))``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    logits = y_pred if from_logits else _logits_of(y_pred, "Sigmoid")
    if logits is not None:
        per = nn_loss_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=logits)
    else:
        p = _clip(y_pred)
        eps = backend.epsilon()  # as Keras: epsilon inside the logs too, after clipping
        per = math_ops.negative(math_ops.add(
            math_ops.multiply(y_true, math_ops.log(math_ops.add(p, eps))),
            math_ops.multiply(math_ops.subtract(1.0, y_true),
                              math_ops.log(math_ops.add(math_ops.subtract(1.0, p), eps)))))
    return math_reduce.reduce_mean(per, -1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

_BY_NAME = {
    "mean_squared_error": mean_squared_error, "mse": mse, "MSE": mse,
    "mean_absolute_error": mean_absolute_error, "mae": mae, "MAE": mae,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_crossentropy": binary_crossentropy,
}


def base_function(loss):
    """The plain loss function behind `loss` (a function, or a loss object wrapping one)."""
    return getattr(loss, "base_fn", None) or getattr(loss, "fn", loss)


def per_example(loss):
    """``fn(y_true, y_pred)`` giving per-example values: `loss` itself for a function,
    the wrapped function (with its arguments) for a loss object."""
    return getattr(loss, "per_example", loss)


def get(identifier):
    """The loss function for a name (``'mse'``, ``'categorical_crossentropy'``, ...) or a
    callable ``fn(y_true, y_pred)``."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"Unknown loss function: {identifier!r}. Known: {sorted(_BY_NAME)}, or "
                     f"pass a callable fn(y_true, y_pred).")
