"""The `Head` interface and what every head shares.

A head sits on top of a model's logits and knows how to turn them into predictions,
a training loss, evaluation metrics, a train op and export outputs. A `model_fn` that
computes ``logits`` ends with ``return head.create_estimator_spec(...)``; canned
estimators are exactly that.

`create_estimator_spec` follows the same plan for every head (one flow, no per-head
copies)::

    predictions = head.predictions(logits)
    PREDICT -> EstimatorSpec(predictions, export_outputs=head._export_outputs(...))
    loss = head.loss(labels, logits, features, mode, regularization_losses)
    EVAL    -> EstimatorSpec(predictions, loss, eval_metric_ops from
               head.update_metrics(head.metrics(...), ...))
    TRAIN   -> EstimatorSpec(predictions, loss, train_op = optimizer.minimize(loss) or
               train_op_fn(loss), grouped with update_ops)

Metrics are `HeadMetric` objects (``update_state`` / ``result``, as Keras metric objects),
backed by the streaming `tf.metrics` functions; the spec holds ``(value, update_op)``
pairs. The label, logits and weight checks live with the heads' label ops in
`flowgraph.estimators.head.vocab_ops`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import RegressionHead
>>> head = RegressionHead()
>>> loss = head.loss(labels=[[1.0], [3.0]], logits=tf.constant([[2.0], [2.0]]))
>>> with tf.Session() as sess:
...     print(sess.run(loss))
1.0
"""

from __future__ import annotations

import abc
import contextlib

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.ops import array_ops, control_flow_ops, math_ops, math_reduce

__all__ = ["Head"]

DEFAULT_SERVING_KEY = "serving_default"
CLASSIFY_SERVING_KEY = "classification"
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"


class PredictionKeys:
    """Keys of the prediction dicts the heads return."""

    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"
    TOP_K = "top_k"


class MetricKeys:
    """Keys of the metric dicts the heads return (a head's name is appended as '/name')."""

    LOSS = "loss"
    LOSS_MEAN = "average_loss"
    LOSS_REGULARIZATION = "regularization_loss"
    ACCURACY = "accuracy"
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = "label/mean"
    PREDICTION_MEAN = "prediction/mean"
    ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
    PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
    RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"
    PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
    AUC_AT_CLASS = "auc/class%d"
    AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
    PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
    AUC_AT_NAME = "auc/%s"
    AUC_PR_AT_NAME = "auc_precision_recall/%s"


# -- loss reduction -----------------------------------------------------------------------
# The values of `tf.losses.Reduction` (TF1); the Keras spellings that tensorflow_estimator
# 2.x heads take are accepted as aliases.
SUM = "weighted_sum"
SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
MEAN = "weighted_mean"
SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
NONE = "none"
# The heads' default, spelled as `tf.estimator.*Head` report it (tf.keras's name for
# SUM_OVER_BATCH_SIZE).
KERAS_SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
_REDUCTIONS = {
    SUM: SUM, SUM_OVER_BATCH_SIZE: SUM_OVER_BATCH_SIZE, MEAN: MEAN,
    SUM_BY_NONZERO_WEIGHTS: SUM_BY_NONZERO_WEIGHTS,
    "sum": SUM, "sum_over_batch_size": SUM_OVER_BATCH_SIZE, "auto": SUM_OVER_BATCH_SIZE,
}


def validate_loss_reduction(loss_reduction) -> None:
    if loss_reduction not in _REDUCTIONS:
        raise ValueError(
            f"Invalid loss_reduction: {loss_reduction}. See `tf.losses.Reduction` for valid "
            f"options (any except NONE): {sorted(set(_REDUCTIONS.values()))}."
        )


def _safe_div(num, den):
    ok = math_ops.greater(den, 0.0)
    return array_ops.where(ok, num / array_ops.where(ok, den, array_ops.ones_like(den)),
                           array_ops.zeros_like(num))


def compute_weighted_loss(unweighted_loss, weights, reduction: str):
    """Reduce ``unweighted_loss * weights`` to a float32 scalar by `reduction`:
    SUM (weighted sum), SUM_OVER_BATCH_SIZE (weighted sum / number of loss elements),
    MEAN (weighted sum / sum of weights), SUM_BY_NONZERO_WEIGHTS (weighted sum / number
    of non-zero weights)."""
    reduction = _REDUCTIONS[reduction]
    # read by tf.distribute's optimizer, as TF's losses record it (docs/distributed.md)
    get_default_graph().__dict__["_last_loss_reduction"] = reduction
    with name_scope(None, "weighted_loss", [unweighted_loss]):
        losses = math_ops.cast(unweighted_loss, _dtypes.float32)
        w = math_ops.cast(weights, _dtypes.float32) * array_ops.ones_like(losses)
        total = math_reduce.reduce_sum(losses * w)
        if reduction == SUM:
            return total
        if reduction == SUM_OVER_BATCH_SIZE:
            count = math_ops.cast(array_ops.size(losses), _dtypes.float32)
            return total / math_ops.maximum(count, 1.0)
        if reduction == MEAN:
            return _safe_div(total, math_reduce.reduce_sum(w))
        nonzero = math_ops.cast(math_ops.not_equal(w, 0.0), _dtypes.float32)
        return _safe_div(total, math_reduce.reduce_sum(nonzero))


def add_regularization(training_loss, regularization_losses):
    if regularization_losses is None:
        return training_loss
    return training_loss + math_reduce.add_n(list(regularization_losses))


# -- streaming metrics --------------------------------------------------------------------
def _as_float(x):
    return math_ops.cast(convert_to_tensor(x), _dtypes.float32)


def _broadcast_weights(weights, values):
    if weights is None:
        return None
    return _as_float(weights) * array_ops.ones_like(values)


def _build_mean(tfm, m, values, y_true, y_pred, w):
    values = _as_float(values)
    return tfm.mean(values, weights=_broadcast_weights(w, values), name=m.name)


def _build_accuracy(tfm, m, values, y_true, y_pred, w):
    y_true = _as_float(y_true)
    if m.threshold is not None:
        y_pred = math_ops.greater(_as_float(y_pred), m.threshold)
    return tfm.accuracy(labels=y_true, predictions=_as_float(y_pred),
                        weights=_broadcast_weights(w, y_true), name=m.name)


def _build_precision_recall(tfm, m, values, y_true, y_pred, w):
    y_true = math_ops.greater(_as_float(y_true), 0.5)
    y_pred = math_ops.greater(_as_float(y_pred), 0.5 if m.threshold is None else m.threshold)
    fn = tfm.precision if m.kind == "precision" else tfm.recall
    return fn(labels=y_true, predictions=y_pred,
              weights=_broadcast_weights(w, _as_float(y_true)), name=m.name)


def _build_auc(tfm, m, values, y_true, y_pred, w):
    y_pred = _as_float(y_pred)
    # ROC: trapezoids; PR: Davis & Goadrich interpolation (Keras AUC's "interpolation").
    curve, method = ("PR", "careful_interpolation") if m.kind == "auc_pr" else ("ROC",
                                                                              "trapezoidal")
    method = m.summation_method or method
    return tfm.auc(labels=math_ops.greater(_as_float(y_true), 0.5), predictions=y_pred,
                   weights=_broadcast_weights(w, y_pred), num_thresholds=200, curve=curve,
                   summation_method=method, name=m.name)


_METRIC_RULES = {
    "mean": _build_mean,
    "accuracy": _build_accuracy,
    "precision": _build_precision_recall,
    "recall": _build_precision_recall,
    "auc": _build_auc,
    "auc_pr": _build_auc,
}


class HeadMetric:
    """One streaming metric of a head, used like a Keras metric object.

    ``update_state(values=..., sample_weight=...)`` (mean) or ``update_state(y_true=...,
    y_pred=..., sample_weight=...)`` (accuracy, precision, recall, auc, auc_pr) creates
    the metric's local variables and returns its update op; ``result()`` is the value
    tensor. `threshold` binarizes ``y_pred`` (accuracy, precision, recall);
    `summation_method` overrides how an AUC integrates its curve. A metric
    is updated once per graph; `as_metric_op()` gives the ``(value, update_op)`` pair
    of `EstimatorSpec.eval_metric_ops`.

    Example
    -------
    >>> import flowgraph as tf
    >>> m = HeadMetric("mean", "average_loss")
    >>> _ = m.update_state(values=tf.constant([1.0, 3.0]))
    >>> m.name, m.result().dtype.name
    ('average_loss', 'float32')
    """

    def __init__(self, kind: str, name: str, threshold: float | None = None,
                 summation_method: str | None = None):
        if kind not in _METRIC_RULES and kind != "baseline":
            raise ValueError(f"unknown metric kind {kind!r}; known: {sorted(_METRIC_RULES)}")
        self.kind = kind
        self.name = name
        self.threshold = threshold
        self.summation_method = summation_method
        self._value = None
        self._update_op = None

    def update_state(self, values=None, y_true=None, y_pred=None, sample_weight=None):
        if self._update_op is not None:
            raise ValueError(
                f"metric {self.name!r} was already updated in this graph; create a new "
                f"metric (head.metrics()) for another update."
            )
        from flowgraph import metrics as tfm

        self._value, self._update_op = _METRIC_RULES[self.kind](
            tfm, self, values, y_true, y_pred, sample_weight)
        return self._update_op

    def update_as_baseline(self, label_mean: HeadMetric):
        """Accuracy of always predicting the majority class: ``max(m, 1 - m)`` of the
        label mean `label_mean` (already updated); shares its update op."""
        m = label_mean.result()
        self._value = math_ops.maximum(m, 1.0 - m)
        self._update_op = label_mean._update_op
        return self._update_op

    def result(self):
        if self._value is None:
            raise ValueError(f"metric {self.name!r} has no value: call update_state first.")
        return self._value

    def as_metric_op(self):
        return (self.result(), self._update_op)

    def __repr__(self) -> str:
        return f"HeadMetric({self.kind!r}, {self.name!r})"


def metric_ops(eval_metrics: dict) -> dict:
    """``{key: (value, update_op)}`` from a dict of updated metrics (pairs pass through)."""
    return {k: (m.as_metric_op() if isinstance(m, HeadMetric) else m)
            for k, m in eval_metrics.items()}


# -- train op -----------------------------------------------------------------------------
def validate_update_ops(update_ops=None) -> None:
    if update_ops is not None and not isinstance(update_ops, list | tuple):
        raise ValueError(
            f"update_ops should be a list or a tuple. Given type: {type(update_ops)}.")


def validate_trainable_variables(trainable_variables=None) -> None:
    if trainable_variables is not None and not isinstance(trainable_variables, list | tuple):
        raise ValueError(
            f"trainable_variables should be a list or a tuple. Given type: "
            f"{type(trainable_variables)}.")


def create_estimator_spec_train_op(head_name, optimizer=None, trainable_variables=None,
                                   train_op_fn=None, update_ops=None,
                                   regularized_training_loss=None, in_head_scope=False):
    """The TRAIN op: ``optimizer.minimize(loss, global_step)`` (on `trainable_variables`
    when given) or ``train_op_fn(loss)``, grouped with `update_ops`.

    Built under the root name scope ``training`` (TF 2's heads), or with `in_head_scope`
    in the caller's scope, as the v1 heads of TF1's canned estimators build it (their
    gradients are ``dnn/head/gradients/...``, Adam's ``dnn/head/beta1_power``)."""
    validate_update_ops(update_ops)
    with contextlib.ExitStack() as scopes:
        if not in_head_scope:
            scopes.enter_context(name_scope(""))
            scopes.enter_context(name_scope("training"))
        if optimizer is not None:
            if train_op_fn is not None:
                raise ValueError("train_op_fn and optimizer cannot both be set.")
            keras_optimizer = not hasattr(optimizer, "minimize") and hasattr(optimizer,
                                                                             "_make")
            if not (keras_optimizer or hasattr(optimizer, "minimize")):
                raise ValueError(
                    f"The given optimizer is not an optimizer (it has no minimize method). "
                    f"Received optimizer of type {type(optimizer)}.")
            validate_trainable_variables(trainable_variables)
            if keras_optimizer:
                # a tf.keras optimizer (TF 2's heads take only those) updates the
                # variables it is given, counting steps in the global step
                if trainable_variables is None:
                    raise ValueError(f"trainable_variables cannot be None. Given "
                                     f"{trainable_variables}")
                optimizer = optimizer._make()
            from flowgraph.train.training_util import get_global_step

            kwargs = {"global_step": get_global_step()}
            if trainable_variables is not None:
                kwargs["var_list"] = list(trainable_variables)
            train_op = optimizer.minimize(regularized_training_loss, **kwargs)
        elif train_op_fn is not None:
            train_op = train_op_fn(regularized_training_loss)
        else:
            raise ValueError("train_op_fn and optimizer cannot both be None.")
        if update_ops:
            train_op = control_flow_ops.group(train_op, *update_ops)
        return train_op


def create_estimator_spec_summary(regularized_training_loss, regularization_losses=None,
                                  summary_key_fn=None) -> None:
    from flowgraph.summary import scalar

    key = summary_key_fn or (lambda k: k)
    with name_scope(""):
        scalar(key(MetricKeys.LOSS), regularized_training_loss)
        if regularization_losses is not None:
            scalar(key(MetricKeys.LOSS_REGULARIZATION),
                   math_reduce.add_n(list(regularization_losses)))


def _mode_keys():
    from flowgraph.estimators.model_fn import ModeKeys

    return ModeKeys


def _estimator_spec(**kwargs):
    from flowgraph.estimators.model_fn import EstimatorSpec

    return EstimatorSpec(**kwargs)


# -- Head ---------------------------------------------------------------------------------
class Head(abc.ABC):
    """Interface for the top of a model: logits in; predictions, loss, metrics, train op
    and export outputs out.

    Subclasses define `name`, `logits_dimension`, `loss_reduction`, `loss`,
    `predictions`, `metrics` and `update_metrics`; `create_estimator_spec` then works
    as for the built-in heads (override `_export_outputs` to choose the serving
    signatures; the default serves all predictions).

    Example
    -------
    >>> from flowgraph.estimators.head import MultiClassHead
    >>> head = MultiClassHead(n_classes=3, name="species")
    >>> head.name, head.logits_dimension
    ('species', 3)
    """

    @property
    @abc.abstractmethod
    def name(self):
        """The head's name (None for an unnamed head); suffixes its metric keys."""

    @property
    @abc.abstractmethod
    def logits_dimension(self):
        """Size of the last dimension of the logits."""

    @property
    @abc.abstractmethod
    def loss_reduction(self):
        """How the training loss is reduced over the batch (a `tf.losses.Reduction`)."""

    @abc.abstractmethod
    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Scalar regularized training loss."""

    @abc.abstractmethod
    def predictions(self, logits, keys=None):
        """Dict of prediction tensors keyed by `PredictionKeys`."""

    @abc.abstractmethod
    def metrics(self, regularization_losses=None):
        """Dict of fresh `HeadMetric` objects keyed by metric key."""

    @abc.abstractmethod
    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` from a batch; returns the dict of updated metrics."""

    def _summary_key(self, key: str) -> str:
        return f"{key}/{self.name}" if self.name else key

    def _export_outputs(self, predictions) -> dict:
        from flowgraph.estimators import export

        out = export.PredictOutput(predictions)
        return {DEFAULT_SERVING_KEY: out, PREDICT_SERVING_KEY: out}

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The `EstimatorSpec` for `mode` ('train', 'eval' or 'infer') from `logits`.

        TRAIN needs exactly one of `optimizer` (its ``minimize(loss,
        global_step=tf.train.get_global_step())`` is the train op) and `train_op_fn`
        (called with the loss); `update_ops` run with the train op, and
        `regularization_losses` are added to the loss.
        """
        mode_keys = _mode_keys()
        if mode not in (mode_keys.TRAIN, mode_keys.EVAL, mode_keys.PREDICT):
            raise ValueError(f"mode={mode} unrecognized; expected one of "
                             f"{mode_keys.TRAIN!r}, {mode_keys.EVAL!r}, {mode_keys.PREDICT!r}.")
        with name_scope(self.name, "head"):
            predictions = self.predictions(logits)
            if mode == mode_keys.PREDICT:
                return _estimator_spec(mode=mode, predictions=predictions,
                                       export_outputs=self._export_outputs(predictions))
            loss = self.loss(labels=labels, logits=logits, features=features, mode=mode,
                             regularization_losses=regularization_losses)
            if mode == mode_keys.EVAL:
                updated = self.update_metrics(
                    self.metrics(regularization_losses=regularization_losses), features,
                    logits, labels, regularization_losses=regularization_losses)
                return _estimator_spec(mode=mode, predictions=predictions, loss=loss,
                                       eval_metric_ops=metric_ops(updated))
            train_op = create_estimator_spec_train_op(
                self.name, optimizer=optimizer, trainable_variables=trainable_variables,
                train_op_fn=train_op_fn, update_ops=update_ops,
                regularized_training_loss=loss,
                in_head_scope=getattr(self, "_train_op_in_head_scope", False))
            mean_loss = (self._mean_loss(labels, logits, features)
                         if getattr(self, "_train_mean_loss_summary", False) else None)
        create_estimator_spec_summary(loss, regularization_losses, self._summary_key)
        if mean_loss is not None:
            from flowgraph.summary import scalar

            with name_scope(""):
                scalar(self._summary_key(MetricKeys.LOSS_MEAN), mean_loss)
        return _estimator_spec(mode=mode, predictions=predictions, loss=loss,
                               train_op=train_op)

    def _mean_loss(self, labels, logits, features):
        """The weighted mean of the batch's losses: TF1's canned estimators (their v1
        heads) summarize it as ``average_loss`` while training."""
        from flowgraph.estimators.head import vocab_ops

        with name_scope(None, "losses", [logits, labels]):
            logits = vocab_ops.check_logits_final_dim(logits, self.logits_dimension,
                                                      self._name)
            processed = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, processed,
                                                                    features)
            return compute_weighted_loss(unweighted, weights, MEAN)


def check_prediction_keys(pred_keys, valid_keys) -> None:
    for key in pred_keys:
        if key not in valid_keys:
            raise ValueError(f"Prediction key must be in PredictionKeys, given: {key}. "
                             f"Valid prediction keys include {valid_keys}.")
