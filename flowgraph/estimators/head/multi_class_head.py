"""`MultiClassHead`: one of `n_classes` (> 2) classes per example, softmax cross-entropy.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import MultiClassHead
>>> head = MultiClassHead(n_classes=3)
>>> logits = np.array([[10.0, 0.0, 0.0], [0.0, 0.0, 10.0]], dtype=np.float32)
>>> preds = head.predictions(logits, keys=["class_ids"])
>>> with tf.Session() as sess:
...     print(sess.run(preds["class_ids"]).ravel().tolist())
[0, 2]
"""

from __future__ import annotations

import numbers

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, math_reduce, nn_ops
from flowgraph.ops.nn_loss_ops import sparse_softmax_cross_entropy_with_logits

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
from .binary_class_head import validate_label_vocabulary

__all__ = ["MultiClassHead"]

_VALID_KEYS = (PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES, PredictionKeys.CLASS_IDS,
               PredictionKeys.CLASSES, PredictionKeys.ALL_CLASS_IDS, PredictionKeys.ALL_CLASSES)


def validate_n_classes(n_classes):
    """`n_classes` must be an integer greater than 2."""
    if n_classes is None:
        raise ValueError("n_classes cannot be None")
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise ValueError(f"n_classes must be an integer > 2: {n_classes!r}.")
    n_classes = int(n_classes)
    if n_classes <= 2:
        raise ValueError(f"n_classes must be > 2: {n_classes}. For two classes use "
                         f"BinaryClassHead.")
    return n_classes


class MultiClassHead(Head):
    """A head for multi-class classification: `n_classes` logits per example, softmax
    cross-entropy loss.

    Logits have shape ``[D0, ... DN, n_classes]``; labels ``[D0, ... DN, 1]`` or
    ``[D0, ... DN]``: integer class ids in ``[0, n_classes)`` or, with
    `label_vocabulary` (of exactly `n_classes` strings), strings from it. Weights from
    `weight_column` multiply each example's loss; the loss is reduced by
    `loss_reduction` (default: weighted sum / batch size). `loss_fn(labels, logits[,
    features])` replaces the loss; it gets int64/int32 class ids ``[D0, ... DN, 1]`` and
    returns the per-example loss of that shape.

    Predictions: ``logits``, ``probabilities``, ``class_ids``, ``classes`` (bytes),
    ``all_class_ids``, ``all_classes``. Eval metrics: ``accuracy``, ``average_loss``.

    Example
    -------
    >>> head = MultiClassHead(n_classes=3, label_vocabulary=["a", "b", "c"])
    >>> head.logits_dimension
    3
    >>> MultiClassHead(n_classes=2)
    Traceback (most recent call last):
    ...
    ValueError: n_classes must be > 2: 2. For two classes use BinaryClassHead.
    """

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=KERAS_SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        validate_label_vocabulary(label_vocabulary, n_classes)
        validate_loss_reduction(loss_reduction)
        if loss_fn:
            vocab_ops.validate_loss_fn_args(loss_fn)
        self._n_classes = validate_n_classes(n_classes)
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
        return self._n_classes

    @property
    def loss_reduction(self):
        return self._loss_reduction

    def _processed_labels(self, logits, labels):
        labels = vocab_ops.check_dense_labels_match_logits_and_reshape(
            labels, logits, 1, self._name)
        if self._label_vocabulary is None:
            if not labels.dtype.base_dtype.is_integer:
                hint = (" (string labels need label_vocabulary)"
                        if labels.dtype.base_dtype == _dtypes.string else "")
                raise ValueError(f"Labels dtype should be integer. Instead got "
                                 f"{labels.dtype.name}{hint} (head {self._name!r}).")
            label_ids = labels
        else:
            if labels.dtype.base_dtype != _dtypes.string:
                raise ValueError(f"Labels dtype should be string if there is a vocabulary. "
                                 f"Instead got {labels.dtype.name} (head {self._name!r}).")
            label_ids = vocab_ops.label_vocab_lookup(labels, self._label_vocabulary,
                                                     self._name or type(self).__name__)
        return vocab_ops.check_label_range(label_ids, self._n_classes, head_name=self._name)

    def _unweighted_loss_and_weights(self, logits, label_ids, features):
        if self._loss_fn:
            loss = vocab_ops.call_loss_fn(self._loss_fn, label_ids, logits, features, 1,
                                          self._name)
        else:

            loss = sparse_softmax_cross_entropy_with_logits(
                labels=array_ops.squeeze(label_ids, axis=[-1]), logits=logits)
            loss = array_ops.expand_dims(loss, -1)
        weights = vocab_ops.get_weights_and_check_match_logits(
            features, self._weight_column, logits, head_name=self._name)
        return loss, weights

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Weighted softmax cross-entropy reduced by `loss_reduction`, plus the sum of
        `regularization_losses`."""
        del mode
        with name_scope(None, "losses", [logits, labels]):
            logits = vocab_ops.check_logits_final_dim(logits, self._n_classes, self._name)
            label_ids = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, label_ids,
                                                                    features)
            loss = compute_weighted_loss(unweighted, weights, self._loss_reduction)
            return add_regularization(loss, regularization_losses)

    def predictions(self, logits, keys=None):
        """Prediction tensors for `keys` (default: all of ``logits``,
        ``probabilities``, ``class_ids``, ``classes``, ``all_class_ids``,
        ``all_classes``)."""
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
                out[pk.PROBABILITIES] = nn_ops.softmax(logits, name=pk.PROBABILITIES)
            if pk.CLASS_IDS in keys or pk.CLASSES in keys:
                class_ids = array_ops.expand_dims(
                    math_reduce.argmax(logits, axis=-1, name=pk.CLASS_IDS), -1)
                if pk.CLASS_IDS in keys:
                    out[pk.CLASS_IDS] = class_ids
                if pk.CLASSES in keys:
                    out[pk.CLASSES] = vocab_ops.class_id_to_string(
                        class_ids, self._label_vocabulary, name="str_classes")
            if pk.ALL_CLASS_IDS in keys:
                out[pk.ALL_CLASS_IDS] = vocab_ops.all_class_ids(logits, self._n_classes)
            if pk.ALL_CLASSES in keys:
                out[pk.ALL_CLASSES] = vocab_ops.all_classes(logits, self._n_classes,
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

    def metrics(self, regularization_losses=None):
        """Fresh metric objects keyed by metric key."""
        k, key = MetricKeys, self._summary_key
        m = {key(k.LOSS_MEAN): HeadMetric("mean", k.LOSS_MEAN)}
        if regularization_losses is not None:
            m[key(k.LOSS_REGULARIZATION)] = HeadMetric("mean", k.LOSS_REGULARIZATION)
        m[key(k.ACCURACY)] = HeadMetric("accuracy", k.ACCURACY)
        return m

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` (from `metrics()`) with one batch."""
        del mode
        k, key = MetricKeys, self._summary_key
        with name_scope(None, "metrics", [logits]):
            class_ids = self.predictions(logits, [PredictionKeys.CLASS_IDS])[
                PredictionKeys.CLASS_IDS]
            logits = vocab_ops.check_logits_final_dim(logits, self._n_classes, self._name)
            label_ids = self._processed_labels(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, label_ids,
                                                                    features)
            w = None if isinstance(weights, float) else weights
            eval_metrics[key(k.LOSS_MEAN)].update_state(values=unweighted, sample_weight=w)
            eval_metrics[key(k.ACCURACY)].update_state(
                y_true=label_ids, y_pred=convert_to_tensor(class_ids), sample_weight=w)
            if regularization_losses is not None:
                eval_metrics[key(k.LOSS_REGULARIZATION)].update_state(
                    values=math_reduce.add_n(list(regularization_losses)))
        return eval_metrics
