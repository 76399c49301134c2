"""`MultiLabelHead`: any subset of `n_classes` classes per example, one sigmoid
cross-entropy per class.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import MultiLabelHead
>>> head = MultiLabelHead(n_classes=2)
>>> logits = np.array([[-1.0, 1.0], [-1.5, 1.5]], dtype=np.float32)
>>> loss = head.loss(labels=np.array([[1, 0], [1, 1]]), logits=logits)
>>> with tf.Session() as sess:
...     print(round(float(sess.run(loss)), 2))
1.13
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import name_scope
from flowgraph.ops import math_ops, math_reduce
from flowgraph.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits

from . import vocab_ops
from .base_head import (
    CLASSIFY_SERVING_KEY,
    DEFAULT_SERVING_KEY,
    KERAS_SUM_OVER_BATCH_SIZE,
    PREDICT_SERVING_KEY,
    Head,
    HeadMetric,
    MetricKeys,
    PredictionKeys,
    add_regularization,
    check_prediction_keys,
    compute_weighted_loss,
    validate_loss_reduction,
)

__all__ = ["MultiLabelHead"]

_VALID_KEYS = (PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES, PredictionKeys.CLASSES)


class MultiLabelHead(Head):
    """A head for multi-label classification: `n_classes` (> 1) independent yes/no
    answers per example.

    Logits and labels have shape ``[D0, ... DN, n_classes]``; labels are a multi-hot
    indicator tensor with values in ``{0, 1}``. `label_vocabulary` names the classes
    (in ``classes`` predictions and per-class metric keys). The per-example loss is the
    mean over classes of the sigmoid cross-entropy, multiplied by the weight from
    `weight_column` and reduced by `loss_reduction`. `thresholds` add accuracy,
    precision and recall at each threshold; `classes_for_class_based_metrics` (ids, or
    names from the vocabulary) add per-class probability mean, AUC and PR AUC.

    Predictions: ``logits``, ``probabilities``, ``classes``. Eval metrics:
    ``average_loss``, ``auc``, ``auc_precision_recall``.

    Example
    -------
    >>> head = MultiLabelHead(n_classes=3, thresholds=[0.3],
    ...                       classes_for_class_based_metrics=[2])
    >>> sorted(head.metrics())
    ['accuracy/positive_threshold_0.3', 'auc', 'auc/class2', 'auc_precision_recall', \
'auc_precision_recall/class2', 'average_loss', 'precision/positive_threshold_0.3', \
'probability_mean/class2', 'recall/positive_threshold_0.3']
    """

    # How the PR curve is integrated (None: the metric's own default, interpolation as
    # Keras AUC); TF1's contrib head summed trapezoids (see contrib.estimator).
    _pr_auc_summation = None

    def __init__(self, n_classes, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, loss_fn=None,
                 classes_for_class_based_metrics=None, name=None):
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification. "
                             f"Given: {n_classes}")
        thresholds = tuple(thresholds) if thresholds else ()
        for t in thresholds:
            if t <= 0.0 or t >= 1.0:
                raise ValueError(f"thresholds must be in (0, 1) range. Given: {t}")
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, list | tuple):
                raise ValueError(f"label_vocabulary must be a list or tuple. Given type: "
                                 f"{type(label_vocabulary)}")
            if len(label_vocabulary) != n_classes:
                raise ValueError(f"Length of label_vocabulary must be n_classes ({n_classes})."
                                 f" Given: {len(label_vocabulary)}")
        if loss_fn:
            vocab_ops.validate_loss_fn_args(loss_fn)
        validate_loss_reduction(loss_reduction)
        self._n_classes = int(n_classes)
        self._class_ids = self._metric_class_ids(classes_for_class_based_metrics,
                                                 label_vocabulary)
        self._weight_column = weight_column
        self._thresholds = thresholds
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    def _metric_class_ids(self, classes, vocabulary) -> tuple:
        classes = tuple(classes or ())
        ids = []
        for c in classes:
            if isinstance(c, str):
                if not vocabulary:
                    raise ValueError("label_vocabulary must be provided when "
                                     "classes_for_class_based_metrics are strings.")
                if c not in vocabulary:
                    raise ValueError(f"classes_for_class_based_metrics: {c!r} is not in "
                                     f"label_vocabulary {list(vocabulary)}.")
                ids.append(list(vocabulary).index(c))
            else:
                if c < 0 or c >= self._n_classes:
                    raise ValueError(f"All classes_for_class_based_metrics must be in range "
                                     f"[0, {self._n_classes - 1}]. Given: {c}")
                ids.append(int(c))
        return tuple(ids)

    @property
    def name(self):
        return self._name

    @property
    def logits_dimension(self):
        return self._n_classes

    @property
    def loss_reduction(self):
        return self._loss_reduction

    def _processed_labels(self, logits, labels):
        if labels is None:
            vocab_ops.check_dense_labels_match_logits_and_reshape(None, logits, 1)
        if hasattr(labels, "indices") and hasattr(labels, "dense_shape"):
            raise ValueError(
                f"SparseTensor labels are not supported by MultiLabelHead yet (head "
                f"{self._name!r}); pass a multi-hot indicator Tensor of shape [batch_size, "
                f"{self._n_classes}].")
        labels = vocab_ops.check_dense_labels_match_logits_and_reshape(
            labels, logits, self._n_classes, self._name)
        if not (labels.dtype.is_integer or labels.dtype.is_floating or
                labels.dtype.base_dtype == _dtypes.bool):
            raise ValueError(f"labels must be an integer indicator Tensor with values in "
                             f"[0, 1]; got dtype {labels.dtype.name} (head {self._name!r}).")
        if labels.dtype.base_dtype == _dtypes.bool:
            labels = math_ops.cast(labels, _dtypes.int64)
        return vocab_ops.check_label_range(
            labels, 2, message="labels must be an integer indicator Tensor with values in "
            f"[0, 1] (head {self._name!r})")

    def _unweighted_loss_and_weights(self, logits, labels, features):
        if self._loss_fn:
            loss = vocab_ops.call_loss_fn(self._loss_fn, labels, logits, features, 1,
                                          self._name)
        else:

            loss = sigmoid_cross_entropy_with_logits(
                labels=math_ops.cast(labels, _dtypes.float32), logits=logits)
            loss = math_reduce.reduce_mean(loss, axis=-1, keepdims=True)
        weights = vocab_ops.get_weights_and_check_match_logits(
            features, self._weight_column, logits, head_name=self._name)
        return loss, weights

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Weighted per-example mean sigmoid cross-entropy reduced by `loss_reduction`,
        plus the sum of `regularization_losses`."""
        del mode
        with name_scope(None, "losses", [logits, labels]):
            logits = vocab_ops.check_logits_final_dim(logits, self._n_classes, self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            loss = compute_weighted_loss(unweighted, weights, self._loss_reduction)
            return add_regularization(loss, regularization_losses)

    def predictions(self, logits, keys=None):
        """Prediction tensors for `keys` (default: ``logits``, ``probabilities``,
        ``classes``)."""
        if keys:
            check_prediction_keys(keys, _VALID_KEYS)
        else:
            keys = _VALID_KEYS
        logits = vocab_ops.check_logits_final_dim(logits, self._n_classes, self._name)
        pk = PredictionKeys
        out = {}
        with name_scope(None, "predictions", [logits]):
            if pk.LOGITS in keys:
                out[pk.LOGITS] = logits
            if pk.PROBABILITIES in keys:
                out[pk.PROBABILITIES] = math_ops.sigmoid(logits, name=pk.PROBABILITIES)
            if pk.CLASSES in keys:
                out[pk.CLASSES] = vocab_ops.all_classes(logits, self._n_classes,
                                                        self._label_vocabulary)
        return out

    def _export_outputs(self, predictions):
        from flowgraph.estimators import export

        scores = predictions[PredictionKeys.PROBABILITIES]
        # A fresh tile of the class names in the head's scope, as TF builds it.
        classifier = export.ClassificationOutput(
            scores=scores, classes=vocab_ops.all_classes(scores, self._n_classes,
                                                         self._label_vocabulary))
        return {DEFAULT_SERVING_KEY: classifier, CLASSIFY_SERVING_KEY: classifier,
                PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def _class_key(self, fmt_id: str, fmt_name: str, class_id: int) -> str:
        if self._label_vocabulary is None:
            return self._summary_key(fmt_id % class_id)
        return self._summary_key(fmt_name % self._label_vocabulary[class_id])

    def metrics(self, regularization_losses=None):
        """Fresh metric objects keyed by metric key."""
        k, key = MetricKeys, self._summary_key
        m = {key(k.LOSS_MEAN): HeadMetric("mean", k.LOSS_MEAN),
             key(k.AUC): HeadMetric("auc", k.AUC),
             key(k.AUC_PR): HeadMetric("auc_pr", k.AUC_PR,
                                       summation_method=self._pr_auc_summation)}
        if regularization_losses is not None:
            m[key(k.LOSS_REGULARIZATION)] = HeadMetric("mean", k.LOSS_REGULARIZATION)
        for t in self._thresholds:
            for kind, fmt in (("accuracy", k.ACCURACY_AT_THRESHOLD),
                              ("precision", k.PRECISION_AT_THRESHOLD),
                              ("recall", k.RECALL_AT_THRESHOLD)):
                m[key(fmt % t)] = HeadMetric(kind, key(fmt % t), threshold=t)
        for c in self._class_ids:
            for kind, fmt_id, fmt_name in (
                    ("mean", k.PROBABILITY_MEAN_AT_CLASS, k.PROBABILITY_MEAN_AT_NAME),
                    ("auc", k.AUC_AT_CLASS, k.AUC_AT_NAME),
                    ("auc_pr", k.AUC_PR_AT_CLASS, k.AUC_PR_AT_NAME)):
                name = self._class_key(fmt_id, fmt_name, c)
                m[name] = HeadMetric(kind, name, summation_method=(
                    self._pr_auc_summation if kind == "auc_pr" else None))
        return m

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` (from `metrics()`) with one batch."""
        del mode
        k, key = MetricKeys, self._summary_key
        with name_scope(None, "metrics", [logits]):
            logits = vocab_ops.check_logits_final_dim(logits, self._n_classes, self._name)
            labels = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, labels, features)
            probs = self.predictions(logits, [PredictionKeys.PROBABILITIES])[
                PredictionKeys.PROBABILITIES]
            w = None if isinstance(weights, float) else weights
            eval_metrics[key(k.LOSS_MEAN)].update_state(values=unweighted, sample_weight=w)
            for name in (k.AUC, k.AUC_PR):
                eval_metrics[key(name)].update_state(y_true=labels, y_pred=probs,
                                                     sample_weight=w)
            if regularization_losses is not None:
                eval_metrics[key(k.LOSS_REGULARIZATION)].update_state(
                    values=math_reduce.add_n(list(regularization_losses)))
            for t in self._thresholds:
                for fmt in (k.ACCURACY_AT_THRESHOLD, k.PRECISION_AT_THRESHOLD,
                            k.RECALL_AT_THRESHOLD):
                    eval_metrics[key(fmt % t)].update_state(y_true=labels, y_pred=probs,
                                                            sample_weight=w)
            for c in self._class_ids:
                p, y = probs[..., c:c + 1], labels[..., c:c + 1]
                eval_metrics[self._class_key(k.PROBABILITY_MEAN_AT_CLASS,
                                             k.PROBABILITY_MEAN_AT_NAME, c)].update_state(
                    values=p, sample_weight=w)
                for fmt_id, fmt_name in ((k.AUC_AT_CLASS, k.AUC_AT_NAME),
                                         (k.AUC_PR_AT_CLASS, k.AUC_PR_AT_NAME)):
                    eval_metrics[self._class_key(fmt_id, fmt_name, c)].update_state(
                        y_true=y, y_pred=p, sample_weight=w)
        return eval_metrics
