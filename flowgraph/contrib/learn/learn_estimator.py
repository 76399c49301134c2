"""`tf.contrib.learn.Estimator` (TF 1.0-1.4): the scikit-learn flavoured Estimator API.

contrib.learn estimators take NumPy data directly (``fit(x=, y=, steps=, batch_size=)``)
or an ``input_fn``; ``predict`` yields one prediction per example (``as_iterable=True``)
or returns stacked arrays. Each one here drives a `tf.estimator` Estimator built on
first use (``__init__`` only stores): the old ``model_fn(features, targets, mode)``
returning `ModelFnOps` or ``(predictions, loss, train_op)`` is adapted to an
`EstimatorSpec`; the canned classes (`learn_canned`) preset contrib.learn's defaults.

A features array (``x`` rather than a dict) reaches the model under the key ``''``,
the name `infer_real_valued_columns_from_input` gives its column.

Example
-------
>>> import numpy as np, tempfile, flowgraph as tf
>>> def model_fn(features, targets, mode):
...     w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
...     pred = w * features[""]
...     loss = tf.reduce_mean(tf.square(pred - targets))
...     step = tf.train.GradientDescentOptimizer(0.1).minimize(
...         loss, global_step=tf.train.get_global_step())
...     return pred, loss, step
>>> est = tf.contrib.learn.Estimator(model_fn=model_fn, model_dir=tempfile.mkdtemp())
>>> x = np.arange(1, 5, dtype=np.float32); _ = est.fit(x=x, y=2 * x, steps=50)
>>> round(float(est.get_variable_value("w")), 2)
2.0
"""

from __future__ import annotations

import collections
import os

import numpy as np

from flowgraph.estimators import Estimator as _CoreEstimator
from flowgraph.estimators import EstimatorSpec, add_metrics
from flowgraph.estimators.estimator_util import fn_args, taken_kwargs
from flowgraph.estimators.export import ServingInputReceiver
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.feature_column.feature_column_dense import NumericColumn
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor
from flowgraph.train import checkpoint_state as _ckpt

__all__ = [
    "Estimator",
    "InputFnOps",
    "MetricSpec",
    "ModeKeys",
    "ModelFnOps",
    "NotFittedError",
    "SKCompat",
    "infer_real_valued_columns_from_input",
]

_DEFAULT_BATCH_SIZE = 32  # contrib.learn's feeder batch when `batch_size` is not given


class ModeKeys:
    """contrib.learn's mode names: ``INFER`` is `tf.estimator.ModeKeys.PREDICT`."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


class NotFittedError(ValueError, AttributeError):
    """Raised by evaluate/predict on an estimator with no checkpoint yet."""


class ModelFnOps(collections.namedtuple("ModelFnOps", [
        "predictions", "loss", "train_op", "eval_metric_ops", "output_alternatives",
        "training_chief_hooks", "training_hooks", "scaffold", "mode"])):
    """What an old-style ``model_fn`` returns; checked for `mode` as contrib.learn did.

    Example
    -------
    >>> ModelFnOps(ModeKeys.TRAIN, loss=1.0)
    Traceback (most recent call last):
    ...
    ValueError: Missing train_op: ModelFnOps in mode='train' needs a train_op.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                output_alternatives=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.INFER):
            raise ValueError(f"ModelFnOps: mode must be one of 'train', 'eval', 'infer'; "
                             f"got {mode!r}")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError(f"Missing train_op: ModelFnOps in mode={mode!r} needs a "
                             f"train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError(f"Missing loss: ModelFnOps in mode={mode!r} needs a loss.")
        if mode == ModeKeys.INFER and predictions is None:
            raise ValueError(f"Missing predictions: ModelFnOps in mode={mode!r} needs "
                             f"predictions.")
        return super().__new__(cls, predictions, loss, train_op, eval_metric_ops or {},
                               output_alternatives, training_chief_hooks or [],
                               training_hooks or [], scaffold, mode)

    def estimator_spec(self) -> EstimatorSpec:
        """The `tf.estimator.EstimatorSpec` saying the same."""
        return EstimatorSpec(mode=self.mode, predictions=self.predictions, loss=self.loss,
                             train_op=self.train_op, eval_metric_ops=self.eval_metric_ops,
                             training_chief_hooks=self.training_chief_hooks,
                             training_hooks=self.training_hooks, scaffold=self.scaffold)


class MetricSpec:
    """A metric function plus which prediction/label/weight keys it reads.

    ``metric_fn(predictions, labels[, weights])`` returns ``(value, update_op)``.
    """

    def __init__(self, metric_fn, prediction_key=None, label_key=None, weight_key=None):
        self.metric_fn = metric_fn
        self.prediction_key = prediction_key
        self.label_key = label_key
        self.weight_key = weight_key

    def create_metric_ops(self, inputs, labels, predictions):
        def pick(value, key, what):
            if key is None:
                if isinstance(value, dict):
                    if len(value) != 1:
                        raise ValueError(
                            f"MetricSpec({self.metric_fn}): {what} is a dict with keys "
                            f"{sorted(value)}; set {what[:-1]}_key to choose one.")
                    return next(iter(value.values()))
                return value
            if not isinstance(value, dict) or key not in value:
                found = sorted(value) if isinstance(value, dict) else type(value).__name__
                raise KeyError(f"MetricSpec: {what[:-1]}_key {key!r} not in {what} "
                               f"({found})")
            return value[key]

        kwargs = {}
        if self.weight_key is not None:
            kwargs["weights"] = inputs[self.weight_key]
        return self.metric_fn(pick(predictions, self.prediction_key, "predictions"),
                              pick(labels, self.label_key, "labels"), **kwargs)


class InputFnOps(collections.namedtuple("InputFnOps",
                                        ["features", "labels", "default_inputs"])):
    """What a contrib.learn serving input function returns (labels are ignored)."""


def infer_real_valued_columns_from_input(x):
    """One real-valued column per feature of `x` (an array or a dict of arrays).

    An array (or a DataFrame, taken as one matrix) gets the single column ``''`` of its
    per-example shape, the key under which contrib.learn's estimators pass `x` to the model.

    Example
    -------
    >>> import numpy as np
    >>> [(c.key, c.shape) for c in infer_real_valued_columns_from_input(np.zeros((5, 4)))]
    [('', (4,))]
    """
    items = sorted(x.items()) if isinstance(x, dict) else [("", x)]
    columns = []
    for key, value in items:
        if isinstance(value, Tensor):
            raise ValueError("infer_real_valued_columns_from_input: x must be NumPy data, "
                             f"got the Tensor {value.name}; use an input_fn instead")
        arr = np.asarray(value)
        if arr.ndim == 0:
            raise ValueError(f"infer_real_valued_columns_from_input: feature {key!r} needs "
                             f"a leading batch dimension; got a scalar")
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"infer_real_valued_columns_from_input: feature {key!r} has "
                             f"dtype {arr.dtype}; only int and float data are real-valued")
        dtype = _dtypes.float32 if arr.dtype.kind == "f" and arr.itemsize <= 4 else (
            _dtypes.float64 if arr.dtype.kind == "f" else _dtypes.int64)
        shape = tuple(arr.shape[1:]) or (1,)
        columns.append(NumericColumn(key, shape, None, dtype, None))
    return columns


def _check_input_args(x, y, input_fn, batch_size):
    if input_fn is None:
        if x is None:
            raise ValueError("Either x or input_fn must be provided.")
        if isinstance(x, Tensor) or isinstance(y, Tensor):
            raise ValueError("Inputs cannot be tensors. Please provide input_fn.")
    else:
        if x is not None or y is not None:
            raise ValueError("Can not provide both input_fn and x or y.")
        if batch_size is not None:
            raise ValueError("Can not provide both input_fn and batch_size.")


def _as_feature_dict(input_fn):
    """`input_fn` with a single features Tensor passed on as ``{'': tensor}``."""
    def wrapped():
        out = input_fn()
        features, labels = out if isinstance(out, tuple) else (out, None)
        if isinstance(features, Tensor):
            features = {"": features}
        return features if labels is None and not isinstance(out, tuple) else (
            features, labels)
    return wrapped


def _data_input_fn(x, y, batch_size, *, train: bool):
    batch_size = _DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1; got {batch_size}")
    if y is not None and not isinstance(y, dict):
        y = np.asarray(y)
    if not isinstance(x, dict):
        x = np.asarray(x)  # a DataFrame is one matrix, as contrib.learn's feeder took it
    return numpy_input_fn(x, y, batch_size=batch_size, num_epochs=None if train else 1,
                          shuffle=train)


class _LearnEstimatorBase:
    """fit/evaluate/predict over the `tf.estimator` Estimator that `_build` returns."""

    _inner = None
    _feature_engineering_fn = None

    def _build(self) -> _CoreEstimator:
        raise NotImplementedError

    @property
    def _core(self) -> _CoreEstimator:
        if self._inner is None:
            core = self._build()
            if self._feature_engineering_fn is not None:
                core = _CoreEstimator(model_fn=self._engineered(core.model_fn),
                                      model_dir=core.model_dir, config=core.config)
            self._inner = core
        return self._inner

    def _engineered(self, model_fn):
        """`model_fn` seeing `feature_engineering_fn(features, labels)` (in every mode,
        so exported models apply it too)."""
        def engineered_model_fn(features, labels, mode, config):
            features, labels = self._feature_engineering_fn(features, labels)
            return model_fn(features, labels, mode, config)
        return engineered_model_fn

    @property
    def model_dir(self) -> str:
        return self._core.model_dir

    @property
    def config(self):
        return self._core.config

    def _input_fn(self, x, y, input_fn, batch_size, *, train: bool):
        _check_input_args(x, y, input_fn, batch_size)
        if input_fn is None:
            input_fn = _data_input_fn(x, y, batch_size, train=train)
        return _as_feature_dict(input_fn)

    def _require_fitted(self) -> None:
        if _ckpt.latest_checkpoint(self.model_dir) is None:
            raise NotFittedError(f"Couldn't find trained model at {self.model_dir}.")

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        """Train on `x`/`y` (shuffled, repeated) or `input_fn`; returns self."""
        fn = self._input_fn(x, y, input_fn, batch_size, train=True)
        for monitor in monitors or []:
            if hasattr(monitor, "set_estimator"):
                monitor.set_estimator(self)
        self._core.train(fn, hooks=monitors, steps=steps, max_steps=max_steps)
        return self

    def partial_fit(self, x=None, y=None, input_fn=None, steps=1, batch_size=None,
                    monitors=None):
        """`fit` for `steps` (default 1) more steps."""
        return self.fit(x=x, y=y, input_fn=input_fn, steps=steps, batch_size=batch_size,
                        monitors=monitors)

    def _metric_prediction(self, predictions):
        return predictions

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                 steps=None, metrics=None, name=None, checkpoint_path=None, hooks=None):
        """Metrics over one pass of `x`/`y` (or `steps` batches of `input_fn`): a dict
        with at least ``loss`` and ``global_step``."""
        if feed_fn is not None:
            raise ValueError("evaluate: feed_fn is not supported (there are no feed "
                             "dicts in flowgraph's input pipeline); pass an input_fn")
        fn = self._input_fn(x, y, input_fn, batch_size, train=False)
        if checkpoint_path is None:
            self._require_fitted()
        core = self._core
        if metrics:
            core = add_metrics(core, self._metrics_fn(metrics))
        return core.evaluate(fn, steps=steps, hooks=hooks, checkpoint_path=checkpoint_path,
                             name=name)

    def _metrics_fn(self, metrics):
        if not isinstance(metrics, dict):
            raise ValueError(f"metrics must be a dict of name -> metric_fn or MetricSpec; "
                             f"got {type(metrics).__name__}")

        def metric_fn(features, labels, predictions):
            ops = {}
            for key, spec in metrics.items():
                name, pred_key = key if isinstance(key, tuple) else (key, None)
                if isinstance(spec, MetricSpec):
                    ops[name] = spec.create_metric_ops(features, labels, predictions)
                elif callable(spec):
                    if pred_key is not None:
                        preds = predictions[pred_key]
                    else:
                        preds = self._metric_prediction(predictions)
                        if isinstance(preds, dict):
                            raise ValueError(
                                f"metric {name!r}: predictions are a dict with keys "
                                f"{sorted(preds)}; name one with the key ({name!r}, "
                                f"PREDICTION_KEY) or a MetricSpec(prediction_key=)")
                    ops[name] = spec(preds, labels)
                else:
                    raise ValueError(f"metric {name!r}: expected a metric function or "
                                     f"MetricSpec, got {type(spec).__name__}")
            return ops
        return metric_fn

    def _predict_raw(self, x, input_fn, batch_size, outputs, as_iterable):
        fn = self._input_fn(x, None, input_fn, batch_size, train=False)
        self._require_fitted()
        keys = None if outputs is None else list(outputs)
        results = self._core.predict(fn, predict_keys=keys)
        if as_iterable:
            return results
        rows = list(results)
        if not rows:
            return rows
        if isinstance(rows[0], dict):
            return {k: np.stack([r[k] for r in rows]) for k in rows[0]}
        return np.stack(rows)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None,
                as_iterable=True, iterate_batches=False):
        """Predictions per example (a generator), or stacked when ``as_iterable=False``."""
        if iterate_batches:
            raise ValueError("predict: iterate_batches=True is not supported; iterate "
                             "the per-example generator instead")
        return self._predict_raw(x, input_fn, batch_size, outputs, as_iterable)

    def get_variable_names(self) -> list[str]:
        return self._core.get_variable_names()

    def get_variable_value(self, name: str):
        return self._core.get_variable_value(name)

    def export_savedmodel(self, export_dir_base, serving_input_fn,
                          default_output_alternative_key=None, assets_extra=None,
                          as_text=False, checkpoint_path=None):
        """Export a SavedModel; `serving_input_fn` may return `InputFnOps` or a
        `ServingInputReceiver`. Returns the export directory."""
        del default_output_alternative_key

        def receiver_fn():
            out = serving_input_fn()
            if isinstance(out, InputFnOps):
                features = out.features
                if isinstance(features, Tensor):
                    features = {"": features}
                return ServingInputReceiver(features, out.default_inputs)
            return out
        return self._core.export_saved_model(export_dir_base, receiver_fn,
                                             assets_extra=assets_extra, as_text=as_text,
                                             checkpoint_path=checkpoint_path)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_dir={self._core.model_dir!r})"


class Estimator(_LearnEstimatorBase):
    """contrib.learn's Estimator: ``model_fn(features, targets[, mode][, params][, config])``
    returning `ModelFnOps` or ``(predictions, loss, train_op)``."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None,
                 feature_engineering_fn=None):
        self._model_fn = model_fn
        self._model_dir = model_dir
        self._config = config
        self.params = params
        self._feature_engineering_fn = feature_engineering_fn

    def _build(self) -> _CoreEstimator:
        if not callable(self._model_fn):
            raise ValueError(f"contrib.learn.Estimator: model_fn must be callable; got "
                             f"{self._model_fn!r}")
        args = fn_args(self._model_fn)
        if len(args) < 2 and "features" not in args:
            raise ValueError(f"model_fn {self._model_fn} must take (features, targets, ...); "
                             f"it takes {args}")
        if self.params is not None and "params" not in args:
            raise ValueError(f"Estimator's model_fn ({self._model_fn}) does not have a "
                             f"params argument, but params ({self.params}) were passed "
                             f"to the Estimator's constructor.")
        return _CoreEstimator(model_fn=self._adapted_model_fn, model_dir=self._model_dir,
                              config=self._config)

    def _adapted_model_fn(self, features, labels, mode, config):
        args = fn_args(self._model_fn)
        kwargs = taken_kwargs(self._model_fn, mode=mode, params=self.params, config=config)
        if "model_dir" in args:
            kwargs["model_dir"] = os.fspath(config.model_dir)
        out = self._model_fn(features, labels, **kwargs)
        if isinstance(out, ModelFnOps):
            return out.estimator_spec()
        if isinstance(out, EstimatorSpec):
            return out
        if isinstance(out, tuple | list) and len(out) == 3:
            predictions, loss, train_op = out
            if mode == ModeKeys.TRAIN and train_op is None:
                raise ValueError(f"Missing train_op: model_fn {self._model_fn.__name__} "
                                 f"returned (predictions, loss, None) in mode='train'.")
            return EstimatorSpec(mode=mode, predictions=predictions, loss=loss,
                                 train_op=train_op if mode == ModeKeys.TRAIN else None)
        raise ValueError(f"model_fn {getattr(self._model_fn, '__name__', self._model_fn)} "
                         f"must return ModelFnOps or (predictions, loss, train_op); got "
                         f"{type(out).__name__}")


class SKCompat:
    """A scikit-learn style face on a contrib.learn estimator: ``fit(x, y)``,
    ``score(x, y)`` and ``predict(x)`` returning arrays (batch size 128)."""

    def __init__(self, estimator):
        self._estimator = estimator

    def fit(self, x, y, batch_size=128, steps=None, max_steps=None, monitors=None):
        self._estimator.fit(x=x, y=y, batch_size=batch_size, steps=steps,
                            max_steps=max_steps, monitors=monitors)
        return self

    def score(self, x, y, batch_size=128, steps=None, metrics=None, name=None):
        return self._estimator.evaluate(x=x, y=y, batch_size=batch_size, steps=steps,
                                        metrics=metrics, name=name)

    def predict(self, x, batch_size=128, outputs=None):
        return _LearnEstimatorBase._predict_raw(self._estimator, x, None, batch_size,
                                                outputs, as_iterable=False)

    def __getattr__(self, name):
        return getattr(self._estimator, name)
