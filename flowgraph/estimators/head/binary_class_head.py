"""`BinaryClassHead`: two classes, one logit per example, sigmoid cross-entropy loss.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import BinaryClassHead
>>> head = BinaryClassHead()
>>> logits = np.array([[45.0], [-41.0]], dtype=np.float32)
>>> loss = head.loss(labels=np.array([[1], [1]]), logits=logits)
>>> with tf.Session() as sess:
...     print(round(float(sess.run(loss)), 2))
20.5
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits

from . import vocab_ops
from .base_head import (
    CLASSIFY_SERVING_KEY,
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

__all__ = ["BinaryClassHead"]

_VALID_KEYS = (PredictionKeys.LOGITS, PredictionKeys.LOGISTIC, PredictionKeys.PROBABILITIES,
               PredictionKeys.CLASS_IDS, PredictionKeys.CLASSES, PredictionKeys.ALL_CLASS_IDS,
               PredictionKeys.ALL_CLASSES)


def validate_thresholds(thresholds) -> tuple:
    thresholds = tuple(thresholds) if thresholds else ()
    for t in thresholds:
        if t <= 0.0 or t >= 1.0:
            raise ValueError(f"thresholds not in (0, 1): {thresholds}.")
    return thresholds


def validate_label_vocabulary(label_vocabulary, n_classes: int | None = None) -> None:
    if label_vocabulary is None:
        return
    if not isinstance(label_vocabulary, list | tuple):
        raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: "
                         f"{type(label_vocabulary)}")
    if len(set(label_vocabulary)) != len(label_vocabulary):
        raise ValueError(f"label_vocabulary has duplicate entries: {list(label_vocabulary)}")
    if n_classes is not None and len(label_vocabulary) != n_classes:
        raise ValueError(
            f'"label_vocabulary" does not have "n_classes" items. len(label_vocabulary)='
            f"{len(label_vocabulary)}, n_classes={n_classes}, label_vocabulary="
            f"{list(label_vocabulary)}")


class BinaryClassHead(Head):
    """A head for binary classification: one logit per example, sigmoid cross-entropy.

    Logits have shape ``[D0, ... DN, 1]`` (usually ``[batch_size, 1]``); labels
    ``[D0, ... DN, 1]`` or ``[D0, ... DN]``, floats in ``[0, 1]`` or, with
    `label_vocabulary`, strings from it (index 0 is the negative class). Weights from
    `weight_column` multiply each example's loss; the loss is reduced by
    `loss_reduction` (default: weighted sum / batch size). `thresholds` add accuracy,
    precision and recall metrics at each threshold. `loss_fn(labels, logits[, features])`
    replaces the loss; it gets float labels of shape ``[D0, ... DN, 1]`` and returns the
    per-example loss of that shape.

    Predictions: ``logits``, ``logistic``, ``probabilities``, ``class_ids``, ``classes``
    (bytes), ``all_class_ids``, ``all_classes``. Eval metrics: ``accuracy``,
    ``accuracy_baseline``, ``auc``, ``auc_precision_recall``, ``average_loss``,
    ``label/mean``, ``precision``, ``prediction/mean``, ``recall`` (``/name`` appended
    for a named head).

    Example
    -------
    >>> import flowgraph as tf
    >>> head = BinaryClassHead(label_vocabulary=["neg", "pos"])
    >>> p = head.predictions(tf.constant([[2.0], [-1.0]]), keys=["classes"])
    >>> with tf.Session() as sess:
    ...     print(sess.run(p["classes"]).ravel().tolist())
    [b'pos', b'neg']
    """

    # How the PR curve is integrated: tensorflow_estimator's heads interpolate (Keras AUC);
    # TF1's canned estimators use the v1 heads, which sum trapezoids (see
    # canned.baseline.binary_or_multi_class_head).
    _pr_auc_summation = "careful_interpolation"

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
        validate_label_vocabulary(label_vocabulary, 2 if label_vocabulary is not None else None)
        self._thresholds = validate_thresholds(thresholds)
        validate_loss_reduction(loss_reduction)
        if loss_fn:
            vocab_ops.validate_loss_fn_args(loss_fn)
        self._weight_column = weight_column
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def logits_dimension(self):
        return 1

    @property
    def loss_reduction(self):
        return self._loss_reduction

    def _processed_labels(self, logits, labels):
        labels = vocab_ops.check_dense_labels_match_logits_and_reshape(
            labels, logits, 1, self._name)
        if self._label_vocabulary is not None:
            labels = vocab_ops.label_vocab_lookup(labels, self._label_vocabulary,
                                                  self._name or type(self).__name__)
        elif labels.dtype.base_dtype == _dtypes.string:
            # TF fails casting the strings to float when it runs: UnimplementedError
            raise errors.UnimplementedError(
                None, None,
                f"Cast string to float is not supported: labels are strings ({labels.name}) "
                f"but the head has no label_vocabulary; pass label_vocabulary=[negative, "
                f"positive] or feed labels in [0, 1].")
        labels = math_ops.cast(labels, _dtypes.float32)
        return vocab_ops.check_label_range(labels, 2, head_name=self._name)

    def _unweighted_loss_and_weights(self, logits, labels, features):
        if self._loss_fn:
            loss = vocab_ops.call_loss_fn(self._loss_fn, labels, logits, features, 1,
                                          self._name)
        else:

            loss = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        weights = vocab_ops.get_weights_and_check_match_logits(
            features, self._weight_column, logits, head_name=self._name)
        return loss, weights

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Weighted sigmoid cross-entropy reduced by `loss_reduction`, plus the sum of
        `regularization_losses`."""
        del mode
        with name_scope(None, "losses", [logits, labels]):
            logits = vocab_ops.check_logits_final_dim(logits, 1, self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            loss = compute_weighted_loss(unweighted, weights, self._loss_reduction)
            return add_regularization(loss, regularization_losses)

    def predictions(self, logits, keys=None):
        """Prediction tensors for `keys` (default: all of ``logits``, ``logistic``,
        ``probabilities``, ``class_ids``, ``classes``, ``all_class_ids``,
        ``all_classes``)."""
        if keys:
            check_prediction_keys(keys, _VALID_KEYS)
        else:
            keys = _VALID_KEYS
        logits = vocab_ops.check_logits_final_dim(logits, 1, self._name)
        pk = PredictionKeys
        out = {}
        with name_scope(None, "predictions", [logits]):
            if pk.LOGITS in keys:
                out[pk.LOGITS] = logits
            if pk.LOGISTIC in keys:
                out[pk.LOGISTIC] = math_ops.sigmoid(logits, name=pk.LOGISTIC)
            two_class = array_ops.concat([array_ops.zeros_like(logits), logits], -1,
                                         name="two_class_logits")
            if pk.PROBABILITIES in keys:
                out[pk.PROBABILITIES] = nn_ops.softmax(two_class, name=pk.PROBABILITIES)
            if pk.CLASS_IDS in keys or pk.CLASSES in keys:
                class_ids = array_ops.expand_dims(
                    math_reduce.argmax(two_class, axis=-1, name=pk.CLASS_IDS), -1)
                if pk.CLASS_IDS in keys:
                    out[pk.CLASS_IDS] = class_ids
                if pk.CLASSES in keys:
                    out[pk.CLASSES] = vocab_ops.class_id_to_string(
                        class_ids, self._label_vocabulary, name="str_classes")
            if pk.ALL_CLASS_IDS in keys:
                out[pk.ALL_CLASS_IDS] = vocab_ops.all_class_ids(logits, 2)
            if pk.ALL_CLASSES in keys:
                out[pk.ALL_CLASSES] = vocab_ops.all_classes(logits, 2, self._label_vocabulary)
        return out

    def _export_outputs(self, predictions):
        from flowgraph.estimators import export

        scores = predictions[PredictionKeys.PROBABILITIES]
        # TF tiles the class names afresh in the head's scope (``<head>/Tile``) rather
        # than reusing ``predictions['all_classes']``.
        classifier = export.ClassificationOutput(
            scores=scores, classes=vocab_ops.all_classes(scores, 2, self._label_vocabulary))
        return {
            DEFAULT_SERVING_KEY: classifier,
            CLASSIFY_SERVING_KEY: classifier,
            REGRESS_SERVING_KEY: export.RegressionOutput(
                value=predictions[PredictionKeys.LOGISTIC]),
            PREDICT_SERVING_KEY: export.PredictOutput(predictions),
        }

    def metrics(self, regularization_losses=None):
        """Fresh metric objects keyed by metric key."""
        k, key = MetricKeys, self._summary_key
        m = {
            key(k.LOSS_MEAN): HeadMetric("mean", k.LOSS_MEAN),
            key(k.ACCURACY): HeadMetric("accuracy", k.ACCURACY),
            key(k.PRECISION): HeadMetric("precision", k.PRECISION),
            key(k.RECALL): HeadMetric("recall", k.RECALL),
            key(k.PREDICTION_MEAN): HeadMetric("mean", k.PREDICTION_MEAN),
            key(k.LABEL_MEAN): HeadMetric("mean", k.LABEL_MEAN),
            key(k.ACCURACY_BASELINE): HeadMetric("baseline", k.ACCURACY_BASELINE),
            key(k.AUC): HeadMetric("auc", k.AUC),
            key(k.AUC_PR): HeadMetric("auc_pr", k.AUC_PR,
                                      summation_method=self._pr_auc_summation),
        }
        if regularization_losses is not None:
            m[key(k.LOSS_REGULARIZATION)] = HeadMetric("mean", k.LOSS_REGULARIZATION)
        for t in self._thresholds:
            for kind, fmt in (("accuracy", k.ACCURACY_AT_THRESHOLD),
                              ("precision", k.PRECISION_AT_THRESHOLD),
                              ("recall", k.RECALL_AT_THRESHOLD)):
                m[key(fmt % t)] = HeadMetric(kind, key(fmt % t), threshold=t)
        return m

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` (from `metrics()`) with one batch."""
        del mode
        k, key = MetricKeys, self._summary_key
        with name_scope(None, "metrics", [logits]):
            preds = self.predictions(logits, [PredictionKeys.LOGISTIC,
                                              PredictionKeys.CLASS_IDS])
            class_ids, logistic = preds[PredictionKeys.CLASS_IDS], preds[PredictionKeys.LOGISTIC]
            logits = vocab_ops.check_logits_final_dim(logits, 1, self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            w = None if isinstance(weights, float) else weights
            eval_metrics[key(k.LOSS_MEAN)].update_state(values=unweighted, sample_weight=w)
            for name in (k.ACCURACY, k.PRECISION, k.RECALL):
                eval_metrics[key(name)].update_state(y_true=labels, y_pred=class_ids,
                                                     sample_weight=w)
            eval_metrics[key(k.PREDICTION_MEAN)].update_state(values=logistic, sample_weight=w)
            eval_metrics[key(k.LABEL_MEAN)].update_state(values=labels, sample_weight=w)
            eval_metrics[key(k.ACCURACY_BASELINE)].update_as_baseline(
                eval_metrics[key(k.LABEL_MEAN)])
            for name in (k.AUC, k.AUC_PR):
                eval_metrics[key(name)].update_state(y_true=labels, y_pred=logistic,
                                                     sample_weight=w)
            if regularization_losses is not None:
                eval_metrics[key(k.LOSS_REGULARIZATION)].update_state(
                    values=math_reduce.add_n(list(regularization_losses)))
            for t in self._thresholds:
                for fmt in (k.ACCURACY_AT_THRESHOLD, k.PRECISION_AT_THRESHOLD,
                            k.RECALL_AT_THRESHOLD):
                    eval_metrics[key(fmt % t)].update_state(y_true=labels, y_pred=logistic,
                                                            sample_weight=w)
        return eval_metrics
