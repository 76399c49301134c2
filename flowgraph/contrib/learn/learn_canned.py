"""contrib.learn's canned estimators: `tf.estimator`'s DNN / linear models with
contrib.learn's arguments and defaults.

What differs from `tf.estimator` (and is kept here):

- ``optimizer=None`` means Adagrad at learning rate 0.05 for the DNN part and FTRL at
  ``min(0.2, 1/sqrt(len(feature_columns)))`` for the linear part; an optimizer name
  ("Adagrad", "Adam", "SGD", ...) gets that same rate; a callable is called.
- The training loss is the batch mean (contrib.learn's heads averaged).
- ``weight_column_name``, ``label_keys`` (classifiers' ``label_vocabulary``),
  ``gradient_clip_norm``.
- A classifier's ``predict`` yields class ids (``predict_classes``), ``predict_proba``
  the class probabilities; a regressor's ``predict`` yields scores (``predict_scores``).

Example
-------
>>> import numpy as np, tempfile, flowgraph as tf
>>> x = np.linspace(0, 1, 40, dtype=np.float32).reshape(-1, 1)
>>> cols = tf.contrib.learn.infer_real_valued_columns_from_input(x)
>>> est = tf.contrib.learn.LinearRegressor(feature_columns=cols, optimizer="SGD",
...                                        model_dir=tempfile.mkdtemp())
>>> _ = est.fit(x=x, y=3 * x[:, 0], steps=300)
>>> [round(v, 2) for v in est.predict(x=x[-2:], as_iterable=False).tolist()]
[2.92, 3.0]
"""

from __future__ import annotations

import math
import re

import numpy as np

from flowgraph import estimators as _core
from flowgraph.contrib.estimator import clip_gradients_by_norm
from flowgraph.contrib.learn.learn_estimator import _LearnEstimatorBase
from flowgraph.estimators.head.base_head import SUM_OVER_BATCH_SIZE
from flowgraph.nn import relu
from flowgraph.train import adagrad, adam, ftrl, gradient_descent, momentum, rmsprop
from flowgraph.train.optimizer import Optimizer

__all__ = [
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
]

_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2

# contrib.layers.optimize_loss's optimizer names (momentum 0.9 for "Momentum")
_OPTIMIZERS = {
    "Adagrad": adagrad.AdagradOptimizer,
    "Adam": adam.AdamOptimizer,
    "Ftrl": ftrl.FtrlOptimizer,
    "Momentum": lambda lr: momentum.MomentumOptimizer(lr, momentum=0.9),
    "RMSProp": rmsprop.RMSPropOptimizer,
    "SGD": gradient_descent.GradientDescentOptimizer,
}



def _optimizer(spec, learning_rate, clip_norm, who):
    """contrib.learn's reading of an optimizer argument, then optional clipping."""
    if spec is None:
        spec = "Adagrad" if who == "dnn" else "Ftrl"
    if isinstance(spec, str):
        if spec not in _OPTIMIZERS:
            raise ValueError(f"{who} optimizer: unknown name {spec!r}; expected one of "
                             f"{sorted(_OPTIMIZERS)}, an Optimizer or a callable")
        opt = _OPTIMIZERS[spec](learning_rate)
    elif callable(spec) and not isinstance(spec, Optimizer):
        opt = spec()
    else:
        opt = spec
    if not isinstance(opt, Optimizer):
        raise ValueError(f"{who} optimizer must be an Optimizer, its name or a callable "
                         f"returning one; got {type(opt).__name__}")
    return clip_gradients_by_norm(opt, clip_norm) if clip_norm is not None else opt


def _linear_rate(feature_columns) -> float:
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(max(len(feature_columns), 1)))


def _check_unsupported(cls, enable_centered_bias, embedding_lr_multipliers):
    if enable_centered_bias:
        raise ValueError(f"{cls}: enable_centered_bias=True is not supported (TF removed "
                         f"it from tf.estimator); the logits layer's bias does its work")
    if embedding_lr_multipliers:
        raise ValueError(f"{cls}: embedding_lr_multipliers is not supported; scale the "
                         f"embedding gradients with an optimizer wrapper instead")


def _columns(feature_columns, cls, what="feature_columns"):
    if feature_columns is None:
        return None
    columns = list(feature_columns)
    if not columns:
        raise ValueError(f"{cls}: {what} must be a non-empty list of feature columns")
    return columns


# contrib.learn's variable names -> tf.estimator's, so `get_variable_value` takes both.
_CONTRIB_NAMES = (
    (re.compile(r"^(dnn/(?:hiddenlayer_\d+|logits))/weights$"), r"\1/kernel"),
    (re.compile(r"^(dnn/(?:hiddenlayer_\d+|logits))/biases$"), r"\1/bias"),
    (re.compile(r"^linear/bias_weight$"), "linear/linear_model/bias_weights"),
    (re.compile(r"^linear/(.*)/weight$"), r"linear/linear_model/\1/weights"),
)


def _core_name(name: str, names) -> str:
    if name in names:
        return name
    for pattern, repl in _CONTRIB_NAMES:
        core = pattern.sub(repl, name)
        if core != name and core in names:
            return core
    return name


# Constructor arguments contrib.learn's base classes keep privately (``self._config``).
_PRIVATE_ARGUMENTS = frozenset({"model_dir", "n_classes", "label_dimension", "config",
                                "feature_engineering_fn"})


class _Canned(_LearnEstimatorBase):
    def _keep_arguments(self, arguments: dict) -> None:
        """Stores each constructor argument (`arguments` is the constructor's
        ``locals()``) as an attribute: the private ones as ``_name``, the rest under their
        own names, as contrib.learn's estimators expose them; ``_``-prefixed (ignored)
        arguments are dropped."""
        for name, value in arguments.items():
            if name != "self" and not name.startswith("_"):
                setattr(self, f"_{name}" if name in _PRIVATE_ARGUMENTS else name, value)

    def get_variable_value(self, name: str):
        """The value of `name`; contrib.learn's names (``dnn/hiddenlayer_0/weights``,
        ``linear/bias_weight``) are read as tf.estimator's (``.../kernel``, ...)."""
        return super().get_variable_value(_core_name(name, self.get_variable_names()))


class _Classifier(_Canned):
    """predict / predict_classes / predict_proba over the head's outputs."""

    def _metric_prediction(self, predictions):
        return predictions["class_ids"][:, 0]

    def predict_classes(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        """Class ids (int64) per example, or their array when ``as_iterable=False``;
        with `label_keys`, the labels themselves."""
        out = self._predict_raw(x, input_fn, batch_size, ["class_ids"], as_iterable)
        keys = getattr(self, "label_keys", None)
        if as_iterable:
            ids = (int(row["class_ids"][0]) for row in out)
            return ids if keys is None else (keys[i] for i in ids)
        ids = np.asarray(out["class_ids"] if out else [], np.int64).reshape(-1)
        return ids if keys is None else np.asarray(list(keys))[ids]

    def predict_proba(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        """Class probabilities per example ([n_classes] each)."""
        out = self._predict_raw(x, input_fn, batch_size, ["probabilities"], as_iterable)
        if as_iterable:
            return (row["probabilities"] for row in out)
        return out["probabilities"] if out else np.zeros((0, self._n_classes), np.float32)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None,
                as_iterable=True):
        """Class ids, as `predict_classes` (contrib.learn's default meaning)."""
        if outputs is not None:
            return super().predict(x=x, input_fn=input_fn, batch_size=batch_size,
                                   outputs=outputs, as_iterable=as_iterable)
        return self.predict_classes(x=x, input_fn=input_fn, batch_size=batch_size,
                                    as_iterable=as_iterable)


class _Regressor(_Canned):
    """predict / predict_scores: one score (or label_dimension scores) per example."""

    def _metric_prediction(self, predictions):
        p = predictions["predictions"]
        return p[:, 0] if self._label_dimension == 1 else p

    def predict_scores(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        out = self._predict_raw(x, input_fn, batch_size, ["predictions"], as_iterable)
        squeeze = self._label_dimension == 1
        if as_iterable:
            return ((float(row["predictions"][0]) if squeeze else row["predictions"])
                    for row in out)
        if not out:
            return np.zeros((0,) if squeeze else (0, self._label_dimension), np.float32)
        p = out["predictions"]
        return p.reshape(-1) if squeeze else p

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None,
                as_iterable=True):
        if outputs is not None:
            return super().predict(x=x, input_fn=input_fn, batch_size=batch_size,
                                   outputs=outputs, as_iterable=as_iterable)
        return self.predict_scores(x=x, input_fn=input_fn, batch_size=batch_size,
                                   as_iterable=as_iterable)


def _vocabulary(label_keys):
    return None if label_keys is None else list(label_keys)


class DNNClassifier(_Classifier):
    """A feed-forward classifier (contrib.learn defaults: Adagrad 0.05, mean loss)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column_name=None, optimizer=None, activation_fn=relu, dropout=None,
                 gradient_clip_norm=None, enable_centered_bias=False, config=None,
                 feature_engineering_fn=None, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None, label_keys=None):
        self._keep_arguments(locals())

    def _build(self):
        _check_unsupported("DNNClassifier", self.enable_centered_bias,
                           self.embedding_lr_multipliers)
        return _core.DNNClassifier(
            hidden_units=self.hidden_units,
            feature_columns=_columns(self.feature_columns, "DNNClassifier"),
            model_dir=self._model_dir, n_classes=self._n_classes,
            weight_column=self.weight_column_name,
            label_vocabulary=_vocabulary(self.label_keys),
            optimizer=_optimizer(self.optimizer, _DNN_LEARNING_RATE,
                                 self.gradient_clip_norm, "dnn"),
            activation_fn=self.activation_fn, dropout=self.dropout, config=self._config,
            loss_reduction=SUM_OVER_BATCH_SIZE)


class DNNRegressor(_Regressor):
    """A feed-forward regressor (contrib.learn defaults: Adagrad 0.05, mean loss)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, weight_column_name=None,
                 optimizer=None, activation_fn=relu, dropout=None, gradient_clip_norm=None,
                 enable_centered_bias=False, config=None, feature_engineering_fn=None,
                 label_dimension=1, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None):
        self._keep_arguments(locals())

    def _build(self):
        _check_unsupported("DNNRegressor", self.enable_centered_bias,
                           self.embedding_lr_multipliers)
        return _core.DNNRegressor(
            hidden_units=self.hidden_units,
            feature_columns=_columns(self.feature_columns, "DNNRegressor"),
            model_dir=self._model_dir, label_dimension=self._label_dimension,
            weight_column=self.weight_column_name,
            optimizer=_optimizer(self.optimizer, _DNN_LEARNING_RATE,
                                 self.gradient_clip_norm, "dnn"),
            activation_fn=self.activation_fn, dropout=self.dropout, config=self._config,
            loss_reduction=SUM_OVER_BATCH_SIZE)


class LinearClassifier(_Classifier):
    """A linear classifier (contrib.learn defaults: FTRL at min(0.2, 1/sqrt(#columns)))."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column_name=None,
                 optimizer=None, gradient_clip_norm=None, enable_centered_bias=False,
                 _joint_weight=False, config=None, feature_engineering_fn=None,
                 label_keys=None):
        self._keep_arguments(locals())

    def _build(self):
        _check_unsupported("LinearClassifier", self.enable_centered_bias, None)
        columns = _columns(self.feature_columns, "LinearClassifier")
        return _core.LinearClassifier(
            feature_columns=columns, model_dir=self._model_dir, n_classes=self._n_classes,
            weight_column=self.weight_column_name,
            label_vocabulary=_vocabulary(self.label_keys),
            optimizer=_optimizer(self.optimizer, _linear_rate(columns),
                                 self.gradient_clip_norm, "linear"),
            config=self._config, loss_reduction=SUM_OVER_BATCH_SIZE)


class LinearRegressor(_Regressor):
    """A linear regressor (contrib.learn defaults: FTRL at min(0.2, 1/sqrt(#columns)))."""

    def __init__(self, feature_columns, model_dir=None, weight_column_name=None,
                 optimizer=None, gradient_clip_norm=None, enable_centered_bias=False,
                 label_dimension=1, _joint_weights=False, config=None,
                 feature_engineering_fn=None):
        self._keep_arguments(locals())

    def _build(self):
        _check_unsupported("LinearRegressor", self.enable_centered_bias, None)
        columns = _columns(self.feature_columns, "LinearRegressor")
        return _core.LinearRegressor(
            feature_columns=columns, model_dir=self._model_dir,
            label_dimension=self._label_dimension, weight_column=self.weight_column_name,
            optimizer=_optimizer(self.optimizer, _linear_rate(columns),
                                 self.gradient_clip_norm, "linear"),
            config=self._config, loss_reduction=SUM_OVER_BATCH_SIZE)


class _Combined:
    """The wide & deep arguments both combined estimators share."""

    def _common(self) -> dict:
        cls = type(self).__name__
        _check_unsupported(cls, self.enable_centered_bias, self.embedding_lr_multipliers)
        linear = _columns(self.linear_feature_columns, cls, "linear_feature_columns")
        dnn = _columns(self.dnn_feature_columns, cls, "dnn_feature_columns")
        if not linear and not dnn:
            raise ValueError(f"{cls}: Either linear_feature_columns or dnn_feature_columns "
                             f"must be defined.")
        if dnn and not self.dnn_hidden_units:
            raise ValueError(f"{cls}: dnn_hidden_units must be defined when "
                             f"dnn_feature_columns is specified.")
        clip = self.gradient_clip_norm
        return dict(
            model_dir=self._model_dir, linear_feature_columns=linear,
            linear_optimizer=_optimizer(self.linear_optimizer, _linear_rate(linear or []),
                                        clip, "linear"),
            dnn_feature_columns=dnn,
            dnn_optimizer=_optimizer(self.dnn_optimizer, _DNN_LEARNING_RATE, clip, "dnn"),
            dnn_hidden_units=self.dnn_hidden_units, dnn_activation_fn=self.dnn_activation_fn,
            dnn_dropout=self.dnn_dropout, weight_column=self.weight_column_name,
            config=self._config, loss_reduction=SUM_OVER_BATCH_SIZE)


class DNNLinearCombinedClassifier(_Combined, _Classifier):
    """Wide & deep classifier with contrib.learn's arguments and defaults."""

    def __init__(self, model_dir=None, n_classes=2, weight_column_name=None,
                 linear_feature_columns=None, linear_optimizer=None,
                 _joint_linear_weights=False, dnn_feature_columns=None, dnn_optimizer=None,
                 dnn_hidden_units=None, dnn_activation_fn=relu, dnn_dropout=None,
                 gradient_clip_norm=None, enable_centered_bias=False, config=None,
                 feature_engineering_fn=None, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None, label_keys=None,
                 fix_global_step_increment_bug=False):
        self._keep_arguments(locals())

    def _build(self):
        return _core.DNNLinearCombinedClassifier(
            n_classes=self._n_classes, label_vocabulary=_vocabulary(self.label_keys),
            **self._common())


class DNNLinearCombinedRegressor(_Combined, _Regressor):
    """Wide & deep regressor with contrib.learn's arguments and defaults."""

    def __init__(self, model_dir=None, weight_column_name=None, linear_feature_columns=None,
                 linear_optimizer=None, _joint_linear_weights=False, dnn_feature_columns=None,
                 dnn_optimizer=None, dnn_hidden_units=None, dnn_activation_fn=relu,
                 dnn_dropout=None, gradient_clip_norm=None, enable_centered_bias=False,
                 label_dimension=1, config=None, feature_engineering_fn=None,
                 embedding_lr_multipliers=None, input_layer_min_slice_size=None,
                 fix_global_step_increment_bug=False):
        self._keep_arguments(locals())

    def _build(self):
        return _core.DNNLinearCombinedRegressor(label_dimension=self._label_dimension,
                                                **self._common())
