"""Regression heads: `RegressionHead` (squared error) and its generalized-linear-model
variants `PoissonRegressionHead` (log-Poisson loss, ``exp`` link) and
`LogisticRegressionHead` (sigmoid cross-entropy, ``sigmoid`` link).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import RegressionHead
>>> head = RegressionHead(label_dimension=2)
>>> logits = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
>>> loss = head.loss(labels=np.array([[1.0, 0.0], [3.0, 6.0]]), logits=logits)
>>> with tf.Session() as sess:
...     print(sess.run(loss))   # (0 + 4 + 0 + 4) / 4
2.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.ops import math_ops, math_reduce
from flowgraph.ops.nn_loss_ops import log_poisson_loss, sigmoid_cross_entropy_with_logits

from . import vocab_ops
from .base_head import (
    DEFAULT_SERVING_KEY,
    KERAS_SUM_OVER_BATCH_SIZE,
    PREDICT_SERVING_KEY,
    REGRESS_SERVING_KEY,
    Head,
    HeadMetric,
    MetricKeys,
    PredictionKeys,
    add_regularization,
    check_prediction_keys,
    compute_weighted_loss,
    validate_loss_reduction,
)

__all__ = ["LogisticRegressionHead", "PoissonRegressionHead", "RegressionHead"]


class RegressionHead(Head):
    """A head for regression: `label_dimension` real values per example, squared error.

    Logits and labels have shape ``[D0, ... DN, label_dimension]`` (labels may drop the
    last dimension when it is 1). Weights from `weight_column` have shape
    ``[D0, ... DN]``, ``[D0, ... DN, 1]`` or ``[D0, ... DN, label_dimension]``. The loss
    is reduced by `loss_reduction` over the batch and the label dimension (default:
    weighted sum / number of values). `loss_fn(labels, logits[, features])` replaces
    the squared error and returns a loss shaped like the logits. `inverse_link_fn`
    maps logits to predictions (then ``logits`` are predicted too).

    Predictions: ``predictions`` (and ``logits`` with an `inverse_link_fn`). Eval
    metrics: ``average_loss``, ``label/mean``, ``prediction/mean``.

    Example
    -------
    >>> import flowgraph as tf
    >>> head = RegressionHead(inverse_link_fn=tf.exp)
    >>> sorted(head.predictions(tf.zeros([4, 1])))
    ['logits', 'predictions']
    """

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, loss_fn=None, inverse_link_fn=None,
                 name=None):
        if label_dimension is None or label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        validate_loss_reduction(loss_reduction)
        if loss_fn:
            vocab_ops.validate_loss_fn_args(loss_fn)
        self._logits_dimension = int(label_dimension)
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._inverse_link_fn = inverse_link_fn
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def logits_dimension(self):
        return self._logits_dimension

    @property
    def loss_reduction(self):
        return self._loss_reduction

    def _processed_labels(self, logits, labels):
        labels = vocab_ops.check_dense_labels_match_logits_and_reshape(
            labels, logits, self._logits_dimension, self._name)
        if not (labels.dtype.is_floating or labels.dtype.is_integer):
            raise ValueError(f"Regression labels must be numeric, got {labels.dtype.name} "
                             f"({labels.name}, head {self._name!r}).")
        return math_ops.cast(labels, _dtypes.float32)

    def _unweighted_loss_and_weights(self, logits, labels, features):
        if self._loss_fn:
            loss = vocab_ops.call_loss_fn(self._loss_fn, labels, logits, features,
                                          self._logits_dimension, self._name)
        else:
            loss = math_ops.squared_difference(logits, labels)
        weights = vocab_ops.get_weights_and_check_match_logits(
            features, self._weight_column, logits, allow_per_logit_weights=True,
            head_name=self._name)
        return loss, weights

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Weighted loss reduced by `loss_reduction`, plus the sum of
        `regularization_losses`."""
        del mode
        with name_scope(None, "losses", [logits, labels]):
            logits = vocab_ops.check_logits_final_dim(logits, self._logits_dimension,
                                                      self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            loss = compute_weighted_loss(unweighted, weights, self._loss_reduction)
            return add_regularization(loss, regularization_losses)

    def predictions(self, logits, keys=None):
        """``{'predictions': inverse_link_fn(logits), 'logits': logits}``, or
        ``{'predictions': logits}`` without an inverse link (restricted to `keys`)."""
        valid = ((PredictionKeys.PREDICTIONS, PredictionKeys.LOGITS)
                 if self._inverse_link_fn else (PredictionKeys.PREDICTIONS,))
        if keys:
            check_prediction_keys(keys, valid)
        logits = vocab_ops.check_logits_final_dim(logits, self._logits_dimension, self._name)
        with name_scope(None, "predictions", [logits]):
            if self._inverse_link_fn:
                out = {PredictionKeys.PREDICTIONS: self._inverse_link_fn(logits),
                       PredictionKeys.LOGITS: logits}
            else:
                out = {PredictionKeys.PREDICTIONS: logits}
        return {k: v for k, v in out.items() if not keys or k in keys}

    def _export_outputs(self, predictions):
        from flowgraph.estimators import export

        regression = export.RegressionOutput(value=predictions[PredictionKeys.PREDICTIONS])
        return {DEFAULT_SERVING_KEY: regression, REGRESS_SERVING_KEY: regression,
                PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def metrics(self, regularization_losses=None):
        """Fresh metric objects keyed by metric key."""
        k, key = MetricKeys, self._summary_key
        m = {key(k.LOSS_MEAN): HeadMetric("mean", k.LOSS_MEAN),
             key(k.PREDICTION_MEAN): HeadMetric("mean", k.PREDICTION_MEAN),
             key(k.LABEL_MEAN): HeadMetric("mean", k.LABEL_MEAN)}
        if regularization_losses is not None:
            m[key(k.LOSS_REGULARIZATION)] = HeadMetric("mean", k.LOSS_REGULARIZATION)
        return m

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` (from `metrics()`) with one batch."""
        del mode
        k, key = MetricKeys, self._summary_key
        with name_scope(None, "metrics", [logits]):
            predicted = self.predictions(logits)[PredictionKeys.PREDICTIONS]
            logits = vocab_ops.check_logits_final_dim(logits, self._logits_dimension,
                                                      self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            w = None if isinstance(weights, float) else weights
            eval_metrics[key(k.LOSS_MEAN)].update_state(values=unweighted, sample_weight=w)
            eval_metrics[key(k.LABEL_MEAN)].update_state(values=labels, sample_weight=w)
            eval_metrics[key(k.PREDICTION_MEAN)].update_state(values=predicted,
                                                              sample_weight=w)
            if regularization_losses is not None:
                eval_metrics[key(k.LOSS_REGULARIZATION)].update_state(
                    values=math_reduce.add_n(list(regularization_losses)))
        return eval_metrics


class PoissonRegressionHead(RegressionHead):
    """A regression head for counts: log-Poisson loss on ``logits = log(rate)``;
    predictions are ``exp(logits)``. `compute_full_loss` adds the Stirling
    approximation of ``log(z!)`` to the loss (the gradient does not change).

    Example
    -------
    >>> import flowgraph as tf
    >>> head = PoissonRegressionHead()
    >>> loss = head.loss(labels=[[1.0]], logits=tf.constant([[0.0]]))
    >>> with tf.Session() as sess:
    ...     print(sess.run(loss))   # exp(0) - 1 * 0
    1.0
    """

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, compute_full_loss=True, name=None):
        self._compute_full_loss = compute_full_loss
        super().__init__(label_dimension=label_dimension, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=self._poisson_loss,
                         inverse_link_fn=math_ops.exp, name=name)

    def _poisson_loss(self, labels, logits):
        return log_poisson_loss(labels, logits, compute_full_loss=self._compute_full_loss)


class LogisticRegressionHead(RegressionHead):
    """A regression head for values in ``[0, 1]``: sigmoid cross-entropy on the logits;
    predictions are ``sigmoid(logits)``. Unlike `BinaryClassHead` it takes no label
    vocabulary, computes no classification metrics and serves a `RegressionOutput`.

    Example
    -------
    >>> import flowgraph as tf
    >>> head = LogisticRegressionHead()
    >>> p = head.predictions(tf.constant([[0.0]]))["predictions"]
    >>> with tf.Session() as sess:
    ...     print(sess.run(p))
    [[0.5]]
    """

    def __init__(self, weight_column=None, loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, name=None):
        super().__init__(label_dimension=1, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=self._logistic_loss,
                         inverse_link_fn=math_ops.sigmoid, name=name)

    def _logistic_loss(self, labels, logits):
        labels = vocab_ops.check_label_range(labels, 2, message="Labels must be in range "
                                             f"[0, 1] (head {self._name!r})")

        return sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
