"""The metric classes of `tf.keras.metrics` (``MeanAbsoluteError()``, ``BinaryAccuracy()``,
``Mean()``, ...), and the top-k accuracies.

Each object wraps a per-example function (`fn`) and names it (`name`): in
`Model.compile(metrics=[...])` it is averaged over the data like a function, and
reported under its name. Used on its own, in graph mode, it is a streaming mean:
`update_state` returns an op adding to two variables (weighted total and count),
`result` their ratio, `reset_states` zeroes them in the Keras session.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     m = tf.keras.metrics.MeanAbsoluteError()
...     up = m.update_state([[1.0], [2.0]], [[1.5], [2.0]])
...     sess = tf.keras.backend.get_session()
...     _ = sess.run(up)
...     print(m.name, sess.run(m.result()))
mean_absolute_error 0.25
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies
from flowgraph.keras import backend
from flowgraph.keras import losses as _losses
from flowgraph.keras import losses_extra as _lx
from flowgraph.keras import metrics as _m
from flowgraph.ops import (
    array_identity_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_loss_ops,
    state_ops,
)
from flowgraph.ops import variables as _variables
from flowgraph.ops.control_flow_ops import group

__all__ = [
    "Accuracy", "BinaryAccuracy", "BinaryCrossentropy", "CategoricalAccuracy",
    "CategoricalCrossentropy", "CategoricalHinge", "CosineSimilarity", "Hinge",
    "KLDivergence", "LogCoshError", "Mean", "MeanAbsoluteError",
    "MeanAbsolutePercentageError", "MeanMetricWrapper", "MeanSquaredError",
    "MeanSquaredLogarithmicError", "Metric", "Poisson", "SparseCategoricalAccuracy",
    "SparseCategoricalCrossentropy", "SparseTopKCategoricalAccuracy", "SquaredHinge",
    "TopKCategoricalAccuracy", "accuracy", "sparse_top_k_categorical_accuracy",
    "top_k_categorical_accuracy",
]


def accuracy(y_true, y_pred):
    """1.0 where ``y_true == y_pred`` else 0.0."""
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype.base_dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), _dtypes.float32)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the true class (argmax of one-hot `y_true`) is in the top `k`."""
    labels = math_ops.cast(math_reduce.argmax(y_true, -1), _dtypes.int32)
    return math_ops.cast(nn_loss_ops.in_top_k(y_pred, labels, k), _dtypes.float32)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the integer class `y_true` is in the top `k` of `y_pred`."""
    y_pred = convert_to_tensor(y_pred)
    labels = array_shape_ops.reshape(math_ops.cast(convert_to_tensor(y_true), _dtypes.int32),
                                     [-1])
    return math_ops.cast(nn_loss_ops.in_top_k(y_pred, labels, k), _dtypes.float32)


class Metric:
    """Base of the metric objects: a name, a dtype and streaming-mean state."""

    def __init__(self, name=None, dtype=None, **kwargs):
        self.name = name or type(self).__name__.lower()
        self.dtype = _dtypes.as_dtype(dtype or "float32")
        self._state = None

    def _variables(self):
        if self._state is None:
            def make(suffix):
                # as TF 2.15's graph-mode Keras: resource variables in no collection
                # (outside `global_variables`, so a Saver leaves them out), initialized
                # by `backend.get_session`
                var = _variables.Variable(0.0, dtype=self.dtype, trainable=False,
                                          name=suffix, collections=[], use_resource=True)
                backend.track_variable(var)
                return var
            self._state = (make("total"), make("count"))
        return self._state

    @property
    def variables(self) -> list:
        return list(self._state or ())

    def _values(self, *args):
        raise NotImplementedError

    def update_state(self, *args, sample_weight=None):
        """An op adding this batch's (weighted) values to the running mean."""
        values = math_ops.cast(self._values(*args), self.dtype)
        weights = array_shape_ops.ones_like(values) if sample_weight is None else \
            math_ops.multiply(array_shape_ops.ones_like(values),
                              math_ops.cast(convert_to_tensor(sample_weight), self.dtype))
        total, count = self._variables()
        return group(
            state_ops.assign_add(total, math_reduce.reduce_sum(math_ops.multiply(values,
                                                                                 weights))),
            state_ops.assign_add(count, math_reduce.reduce_sum(weights)))

    def result(self):
        total, count = self._variables()
        return math_ops.div_no_nan(total, count)

    def reset_states(self) -> None:
        if self._state is not None:
            backend.batch_set_value([(v, 0.0) for v in self._state])

    reset_state = reset_states

    def __call__(self, *args, sample_weight=None):
        """Update the state and return the result (run it to get the value)."""
        with control_dependencies([self.update_state(*args, sample_weight=sample_weight)]):
            return array_identity_ops.identity(self.result())

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype.name}


class Mean(Metric):
    """The (weighted) mean of the values given to `update_state`."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _values(self, values):
        return convert_to_tensor(values)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)``; in `compile` it is averaged like
    the function itself."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "metric"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def fn(self, y_true, y_pred):
        return self._fn(y_true, y_pred, **self._fn_kwargs)

    def _values(self, y_true, y_pred):
        return self.fn(y_true, y_pred)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(class_name, fn, default_name, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = sorted(set(kwargs) - set(defaults))
        if unknown:
            raise TypeError(f"{class_name}.__init__() got unexpected keyword argument(s) "
                            f"{unknown}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **{**defaults, **kwargs})

    return type(class_name, (MeanMetricWrapper,), {
        "__init__": __init__, "__doc__": f"Streaming mean of `{fn.__name__}`."})


def _binary_ce(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    return _lx._smoothed_binary(y_true, y_pred, from_logits, label_smoothing)


def _categorical_ce(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    return _lx._smoothed_categorical(y_true, y_pred, from_logits, label_smoothing)


def _sparse_ce(y_true, y_pred, from_logits=False, axis=-1):
    return _losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


Accuracy = _wrapper("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper("BinaryAccuracy", _m.binary_accuracy, "binary_accuracy",
                          threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", _m.categorical_accuracy,
                               "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy",
                                     _m.sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy", k=5)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy", k=5)
MeanSquaredError = _wrapper("MeanSquaredError", _losses.mean_squared_error,
                            "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _losses.mean_absolute_error,
                             "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError",
                                       _lx.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError",
                                       _lx.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", _binary_ce, "binary_crossentropy",
                              from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _categorical_ce,
                                   "categorical_crossentropy", from_logits=False,
                                   label_smoothing=0.0)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", _sparse_ce,
                                         "sparse_categorical_crossentropy",
                                         from_logits=False, axis=-1)
Hinge = _wrapper("Hinge", _lx.hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", _lx.squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", _lx.categorical_hinge, "categorical_hinge")
KLDivergence = _wrapper("KLDivergence", _lx.kl_divergence, "kullback_leibler_divergence")
Poisson = _wrapper("Poisson", _lx.poisson, "poisson")
LogCoshError = _wrapper("LogCoshError", _lx.log_cosh, "logcosh")
CosineSimilarity = _wrapper("CosineSimilarity", lambda t, p, axis=-1: math_ops.negative(
    _lx.cosine_similarity(t, p, axis)), "cosine_similarity", axis=-1)

_m._BY_NAME.update({
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "hinge": _lx.hinge, "squared_hinge": _lx.squared_hinge,
    "categorical_hinge": _lx.categorical_hinge,
    "kld": _lx.kl_divergence, "kullback_leibler_divergence": _lx.kl_divergence,
    "poisson": _lx.poisson, "logcosh": _lx.log_cosh, "cosine_proximity": _lx.cosine_similarity,
    "mape": _lx.mape, "mean_absolute_percentage_error": _lx.mape,
    "msle": _lx.msle, "mean_squared_logarithmic_error": _lx.msle,
})
