"""The focal cross-entropies of `tf.keras.losses` (Lin et al., 2017): functions and the
`BinaryFocalCrossentropy` / `CategoricalFocalCrossentropy` classes, which down-weight
well-classified examples by ``(1 - p_t) ** gamma``. Re-exported by
`flowgraph.keras.losses` and `flowgraph.keras.metrics` (the functions).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     loss = tf.keras.losses.BinaryFocalCrossentropy(gamma=2.0)
...     value = loss([[0.0, 1.0]], [[0.2, 0.7]])
...     print(round(float(tf.Session().run(value)), 4))
0.0205
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.keras import backend_nn
from flowgraph.keras.losses_extra import LossFunctionWrapper, Reduction
from flowgraph.ops import array_shape_ops, math_ops, math_reduce

__all__ = ["BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
           "binary_focal_crossentropy", "categorical_focal_crossentropy"]


def _prepare(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(convert_to_tensor(y_true), y_pred.dtype.base_dtype), y_pred


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """The mean along `axis` of the element-wise binary focal cross-entropy
    (`tf.keras.backend.binary_focal_crossentropy`), labels smoothed towards 0.5."""
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        y_true = math_ops.add(math_ops.multiply(y_true, 1.0 - label_smoothing),
                              0.5 * label_smoothing)
    values = backend_nn.binary_focal_crossentropy(
        y_true, y_pred, apply_class_balancing=apply_class_balancing, alpha=alpha,
        gamma=gamma, from_logits=from_logits)
    return math_reduce.reduce_mean(values, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """The categorical focal cross-entropy along `axis`, one-hot labels smoothed
    towards ``1 / classes``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        n = math_ops.cast(array_shape_ops.shape(y_true)[-1], y_pred.dtype.base_dtype)
        y_true = math_ops.add(math_ops.multiply(y_true, 1.0 - label_smoothing),
                              math_ops.divide(label_smoothing, n))
    return backend_nn.categorical_focal_crossentropy(y_true, y_pred, alpha=alpha, gamma=gamma,
                                                     from_logits=from_logits, axis=axis)


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """`binary_focal_crossentropy` as a loss object (weighted and reduced)."""

    base_fn = staticmethod(binary_focal_crossentropy)

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                 label_smoothing=0.0, axis=-1, reduction=Reduction.AUTO,
                 name="binary_focal_crossentropy"):
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name,
                         apply_class_balancing=apply_class_balancing, alpha=alpha,
                         gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """`categorical_focal_crossentropy` as a loss object (weighted and reduced)."""

    base_fn = staticmethod(categorical_focal_crossentropy)

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction=Reduction.AUTO, name="categorical_focal_crossentropy"):
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name,
                         alpha=alpha, gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
