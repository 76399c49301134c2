"""`tf.keras.metrics`: per-example metric functions ``fn(y_true, y_pred)``.

`Model.compile(metrics=[...])` takes names or callables. ``'accuracy'`` (or ``'acc'``)
means the accuracy that fits the loss and the output, as in Keras: binary accuracy for
``binary_crossentropy`` or a one-unit output, sparse categorical accuracy for
``sparse_categorical_crossentropy``, categorical accuracy otherwise (likewise
``'crossentropy'``/``'ce'``). As in TF1's graph-mode Keras, either spelling is reported
under the name ``acc`` (``ce`` for the crossentropy) in `metrics_names`, the `fit`
history, `evaluate` and `model_to_estimator`'s eval metrics. `fit`/`evaluate` average
the per-example values over the data; `model_to_estimator` turns each into a
streaming ``tf.metrics.mean``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.keras import metrics
>>> with tf.Graph().as_default():
...     acc = metrics.sparse_categorical_accuracy([2, 0], [[0.1, 0.2, 0.7], [0.3, 0.6, 0.1]])
...     print(tf.Session().run(acc))
[1. 0.]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import losses
from flowgraph.ops import array_shape_ops, math_ops, math_reduce

__all__ = [
    "binary_accuracy",
    "categorical_accuracy",
    "get",
    "resolve",
    "sparse_categorical_accuracy",
]


def binary_accuracy(y_true, y_pred, threshold: float = 0.5):
    """Mean over the last axis of ``y_true == (y_pred > threshold)``."""
    y_true, y_pred = losses._prepare(y_true, y_pred)
    hit = math_ops.equal(y_true, math_ops.cast(math_ops.greater(y_pred, threshold),
                                               y_pred.dtype.base_dtype))
    return math_reduce.reduce_mean(math_ops.cast(hit, y_pred.dtype.base_dtype), -1)


def categorical_accuracy(y_true, y_pred):
    """``argmax(y_true) == argmax(y_pred)`` on the last axis, as 0/1 floats."""
    y_pred = convert_to_tensor(y_pred)
    hit = math_ops.equal(math_reduce.argmax(y_true, -1), math_reduce.argmax(y_pred, -1))
    return math_ops.cast(hit, y_pred.dtype.base_dtype)


def sparse_categorical_accuracy(y_true, y_pred):
    """``y_true == argmax(y_pred)`` for integer class targets (``(batch,)`` or
    ``(batch, 1)``), as 0/1 floats."""
    y_pred = convert_to_tensor(y_pred)
    labels = array_shape_ops.reshape(convert_to_tensor(y_true),
                                     array_shape_ops.shape(y_pred)[:-1])
    hit = math_ops.equal(math_ops.cast(labels, "int64"), math_reduce.argmax(y_pred, -1))
    return math_ops.cast(hit, y_pred.dtype.base_dtype)


_BY_NAME = {
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "mean_squared_error": losses.mse, "mse": losses.mse,
    "mean_absolute_error": losses.mae, "mae": losses.mae,
    "categorical_crossentropy": losses.categorical_crossentropy,
    "sparse_categorical_crossentropy": losses.sparse_categorical_crossentropy,
    "binary_crossentropy": losses.binary_crossentropy,
}


def get(identifier):
    """The metric function for a name or a callable (``'accuracy'`` needs `resolve`)."""
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"Unknown metric function: {identifier!r}. Known: "
                     f"{sorted([*_BY_NAME, 'accuracy', 'acc', 'crossentropy', 'ce'])}, or "
                     f"pass a callable fn(y_true, y_pred).")


def resolve(identifier, loss_fn, output) -> tuple[str, object]:
    """``(name, fn)`` of a compile() metric for an output computed with `loss_fn`."""
    if identifier in ("accuracy", "acc", "crossentropy", "ce"):
        units = output.shape[-1].value if output.shape.ndims else None
        base_loss = losses.base_function(loss_fn)
        if base_loss is losses.binary_crossentropy or units == 1:
            kind = "binary"
        elif base_loss is losses.sparse_categorical_crossentropy:
            kind = "sparse_categorical"
        else:
            kind = "categorical"
        is_acc = identifier in ("accuracy", "acc")
        suffix = "accuracy" if is_acc else "crossentropy"
        # TF1's graph-mode tf.keras reports these as ``acc`` / ``ce`` whichever
        # spelling was passed (checked against TF 2.15's compat.v1 graph mode; eager TF2
        # says ``accuracy``).
        return ("acc" if is_acc else "ce"), get(f"{kind}_{suffix}")
    if getattr(identifier, "_stateful", False):  # Precision, AUC, ...: the object itself
        return identifier.name, identifier
    fn = get(identifier)
    if hasattr(fn, "fn") and isinstance(getattr(fn, "name", None), str):  # a metric object
        return fn.name, fn.fn
    # TF1's graph-mode Keras names a metric after its function: 'mse' is reported as
    # 'mean_squared_error'.
    return getattr(fn, "__name__", "metric"), fn
