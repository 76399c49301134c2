"""More of `tf.keras.losses`: the hinge, divergence and regression losses, and the loss
*classes* (``tf.keras.losses.MeanSquaredError()``, ...) that wrap a loss function with
its arguments, a name and a reduction.

A loss object called as ``loss(y_true, y_pred, sample_weight=None)`` returns the
weighted per-example losses reduced by its `reduction`: ``'sum_over_batch_size'`` (the
default, ``'auto'``: the weighted sum divided by the number of values), ``'sum'`` or
``'none'``. `Model.compile` accepts the objects like the functions.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     mse = tf.keras.losses.MeanSquaredError()
...     print(mse.name, tf.Session().run(mse([[0.0], [1.0]], [[1.0], [1.0]])))
mean_squared_error 0.5
"""

from __future__ import annotations

import functools

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.keras import backend
from flowgraph.keras import losses as _base
from flowgraph.ops import array_index_ops, array_shape_ops, math_ops, math_reduce, nn_ops

__all__ = [
    "KLD",
    "MAPE",
    "MSLE",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Loss",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "SparseCategoricalCrossentropy",
    "SquaredHinge",
    "categorical_hinge",
    "cosine",
    "cosine_proximity",
    "cosine_similarity",
    "hinge",
    "kl_divergence",
    "kld",
    "kullback_leibler_divergence",
    "log_cosh",
    "logcosh",
    "mape",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "msle",
    "poisson",
    "squared_hinge",
]

_mean_last = functools.partial(math_reduce.reduce_mean, axis=-1)


def _signed(y_true):
    """0/1 labels as -1/+1 (hinge losses); other labels unchanged."""
    is_binary = math_reduce.reduce_all(math_ops.logical_or(
        math_ops.equal(y_true, 0.0), math_ops.equal(y_true, 1.0)))
    return array_index_ops.where(is_binary, math_ops.subtract(math_ops.multiply(2.0, y_true),
                                                              1.0), y_true)


def hinge(y_true, y_pred):
    """Mean over the last axis of ``max(1 - y_true * y_pred, 0)`` (0/1 labels as -1/1)."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    margin = math_ops.subtract(1.0, math_ops.multiply(_signed(y_true), y_pred))
    return _mean_last(math_ops.maximum(margin, 0.0))


def squared_hinge(y_true, y_pred):
    """Mean over the last axis of ``max(1 - y_true * y_pred, 0) ** 2``."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    margin = math_ops.subtract(1.0, math_ops.multiply(_signed(y_true), y_pred))
    return _mean_last(math_ops.square(math_ops.maximum(margin, 0.0)))


def categorical_hinge(y_true, y_pred):
    """``max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)``."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    pos = math_reduce.reduce_sum(math_ops.multiply(y_true, y_pred), -1)
    neg = math_reduce.reduce_max(math_ops.multiply(math_ops.subtract(1.0, y_true), y_pred), -1)
    return math_ops.maximum(math_ops.add(math_ops.subtract(neg, pos), 1.0), 0.0)


def huber(y_true, y_pred, delta=1.0):
    """Mean over the last axis of the Huber loss: quadratic within `delta`, then linear."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    err = math_ops.abs(math_ops.subtract(y_pred, y_true))
    quad = math_ops.multiply(0.5, math_ops.square(err))
    lin = math_ops.subtract(math_ops.multiply(delta, err), 0.5 * delta * delta)
    return _mean_last(array_index_ops.where(math_ops.less_equal(err, delta), quad, lin))


def log_cosh(y_true, y_pred):
    """Mean over the last axis of ``log(cosh(y_pred - y_true))``, computed stably."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    x = math_ops.subtract(y_pred, y_true)
    return _mean_last(math_ops.subtract(
        math_ops.add(x, nn_ops.softplus(math_ops.multiply(-2.0, x))), 0.6931471805599453))


def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to
    ``[epsilon, 1]``."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    eps = backend.epsilon()
    y_true = math_ops.clip_by_value(y_true, eps, 1.0)
    y_pred = math_ops.clip_by_value(y_pred, eps, 1.0)
    return math_reduce.reduce_sum(
        math_ops.multiply(y_true, math_ops.log(math_ops.divide(y_true, y_pred))), -1)


def poisson(y_true, y_pred):
    """Mean over the last axis of ``y_pred - y_true * log(y_pred + epsilon)``."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    return _mean_last(math_ops.subtract(y_pred, math_ops.multiply(
        y_true, math_ops.log(math_ops.add(y_pred, backend.epsilon())))))


def cosine_similarity(y_true, y_pred, axis=-1):
    """Minus the cosine similarity of `y_true` and `y_pred` along `axis`."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    return math_ops.negative(math_reduce.reduce_sum(math_ops.multiply(
        nn_ops.l2_normalize(y_true, axis=axis), nn_ops.l2_normalize(y_pred, axis=axis)), axis))


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(|y_true - y_pred| / max(|y_true|, epsilon))`` over the last axis."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    diff = math_ops.divide(math_ops.abs(math_ops.subtract(y_true, y_pred)),
                           math_ops.maximum(math_ops.abs(y_true), backend.epsilon()))
    return 100.0 * _mean_last(diff)  # the operator: TF's op is named "mul"


def mean_squared_logarithmic_error(y_true, y_pred):
    """Mean over the last axis of ``(log(y_pred + 1) - log(y_true + 1)) ** 2``
    (both floored at epsilon)."""
    y_true, y_pred = _base._prepare(y_true, y_pred)
    eps = backend.epsilon()
    first = math_ops.log(math_ops.add(math_ops.maximum(y_pred, eps), 1.0))
    second = math_ops.log(math_ops.add(math_ops.maximum(y_true, eps), 1.0))
    return _mean_last(math_ops.square(math_ops.subtract(first, second)))


kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
cosine = cosine_proximity = cosine_similarity

_base._BY_NAME.update({
    "hinge": hinge, "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
    "huber": huber, "huber_loss": huber, "logcosh": log_cosh, "log_cosh": log_cosh,
    "kld": kl_divergence, "KLD": kl_divergence, "kl_divergence": kl_divergence,
    "kullback_leibler_divergence": kl_divergence, "poisson": poisson,
    "cosine_similarity": cosine_similarity, "cosine_proximity": cosine_similarity,
    "cosine": cosine_similarity, "mape": mape, "MAPE": mape,
    "mean_absolute_percentage_error": mape, "msle": msle, "MSLE": msle,
    "mean_squared_logarithmic_error": msle,
})


# -- loss classes ------------------------------------------------------------------------------
class Reduction:
    """How a loss object reduces the weighted per-example losses (TF 1.x's tf.keras.losses
    does not export it; the strings work the same)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


class Loss:
    """Base of the loss classes: subclasses define ``call(y_true, y_pred)`` (per-example
    losses); calling the object weights and reduces them."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name

    def call(self, y_true, y_pred):
        raise NotImplementedError("Loss subclasses must implement call(y_true, y_pred).")

    def per_example(self, y_true, y_pred):
        """The unweighted, unreduced losses (what `Model.compile` weights and averages)."""
        return self.call(y_true, y_pred)

    def __call__(self, y_true, y_pred, sample_weight=None):
        # As Keras: ops under the loss's name scope, the weighting and reduction under
        # ``weighted_loss`` (the mean is named ``<name>/weighted_loss/value``).
        with name_scope(None, self.name or type(self).__name__):
            values = self.call(y_true, y_pred)
            with name_scope(None, "weighted_loss"):
                return self._weighted(values, 1.0 if sample_weight is None else sample_weight)

    def _weighted(self, values, sample_weight):
        weights = math_ops.cast(convert_to_tensor(sample_weight), values.dtype.base_dtype)
        vr, wr = values.shape.ndims, weights.shape.ndims
        if vr is not None and wr is not None and wr == vr + 1 and \
                weights.shape[-1].is_compatible_with(1):
            weights = array_shape_ops.squeeze(weights, [-1])
        elif vr is not None and wr not in (None, 0) and vr == wr + 1:
            weights = array_shape_ops.expand_dims(weights, -1)
        values = math_ops.multiply(values, weights)
        if self.reduction == Reduction.NONE:
            return values
        total = math_reduce.reduce_sum(values)
        if self.reduction == Reduction.SUM:
            return total
        with name_scope(None, "num_elements", [values]) as scope:
            count = math_ops.cast(array_shape_ops.size(values, name=scope),
                                  values.dtype.base_dtype)
        return math_ops.div_no_nan(math_reduce.reduce_sum(total), count, name="value")

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("fn", None)
        return cls(**config)


def _shape(values):
    return array_shape_ops.shape(values)


class LossFunctionWrapper(Loss):
    """A `Loss` computing ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        fn = _base.base_function(self)
        return {**super().get_config(), "fn": getattr(fn, "__name__", str(fn)),
                **self._fn_kwargs}


def _wrapper(class_name, fn, default_name, doc, base=None, **defaults):
    def __init__(self, reduction=Reduction.AUTO, name=default_name, **kwargs):
        unknown = sorted(set(kwargs) - set(defaults))
        if unknown:
            raise TypeError(f"{class_name}.__init__() got unexpected keyword argument(s) "
                            f"{unknown}")
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name,
                                     **{**defaults, **kwargs})

    return type(class_name, (LossFunctionWrapper,), {
        "__init__": __init__, "__doc__": doc, "base_fn": staticmethod(base or fn)})


def _smoothed_binary(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if label_smoothing:
        y_true, y_pred = _base._prepare(y_true, y_pred)
        y_true = math_ops.add(math_ops.multiply(y_true, 1.0 - label_smoothing),
                              0.5 * label_smoothing)
    return _base.binary_crossentropy(y_true, y_pred, from_logits=from_logits)


def _smoothed_categorical(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if label_smoothing:
        y_true, y_pred = _base._prepare(y_true, y_pred)
        n = math_ops.cast(_shape(y_true)[-1], y_pred.dtype.base_dtype)
        y_true = math_ops.add(math_ops.multiply(y_true, 1.0 - label_smoothing),
                              math_ops.divide(label_smoothing, n))
    return _base.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def _sparse(y_true, y_pred, from_logits=False, ignore_class=None):
    return _base.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


MeanSquaredError = _wrapper("MeanSquaredError", _base.mean_squared_error,
                            "mean_squared_error", "Mean of squares of errors.")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _base.mean_absolute_error,
                             "mean_absolute_error", "Mean of absolute errors.")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "Mean absolute percentage error.")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "Mean squared logarithmic error.")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", _smoothed_binary, "binary_crossentropy",
                              "Binary cross-entropy.", _base.binary_crossentropy,
                              from_logits=False,
                              label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _smoothed_categorical,
                                   "categorical_crossentropy", "Categorical cross-entropy.",
                                   _base.categorical_crossentropy, from_logits=False,
                                   label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", _sparse, "sparse_categorical_crossentropy",
    "Cross-entropy of integer class ids.", _base.sparse_categorical_crossentropy,
    from_logits=False, ignore_class=None)
Hinge = _wrapper("Hinge", hinge, "hinge", "Hinge loss.")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge", "Squared hinge loss.")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge",
                            "Categorical hinge loss.")
Huber = _wrapper("Huber", huber, "huber_loss", "Huber loss.", delta=1.0)
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh", "Log-cosh loss.")
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence",
                        "Kullback-Leibler divergence.")
Poisson = _wrapper("Poisson", poisson, "poisson", "Poisson loss.")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            "Minus the cosine similarity.", axis=-1)
