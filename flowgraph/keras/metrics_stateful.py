"""Keras metric objects whose result is not a mean of per-example values: the
confusion-matrix counts (`TruePositives`, ...), `Precision`, `Recall`, `AUC` and
`RootMeanSquaredError`. Re-exported by `flowgraph.keras.metrics`.

Their state is resource variables in no collection (TF 2.15's graph-mode Keras:
``true_positives``, ``false_positives``, ... of shape ``(thresholds,)``), initialized
by `tf.keras.backend.get_session`. In `Model.compile(metrics=[...])` a model updates
them batch by batch and reports the running result: `fit` starts them afresh each
epoch, `evaluate` at its start, ``train_on_batch`` / ``test_on_batch`` after the call.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     p = tf.keras.metrics.Precision()
...     update = p.update_state([0, 1, 1, 0], [0.6, 0.8, 0.4, 0.1])
...     sess = tf.keras.backend.get_session()
...     _ = sess.run(update)
...     print(round(float(sess.run(p.result())), 4))
0.5
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.keras import backend
from flowgraph.keras.metrics_classes import Mean, Metric
from flowgraph.ops import (
    array_index_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    state_ops,
)
from flowgraph.ops import variables as _variables
from flowgraph.ops.control_flow_ops import group

__all__ = ["AUC", "FalseNegatives", "FalsePositives", "Precision", "Recall",
           "RootMeanSquaredError", "TrueNegatives", "TruePositives"]

_EPSILON = 1e-7


class RootMeanSquaredError(Mean):
    """``sqrt`` of the (weighted) mean squared error."""

    _stateful = True

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype.base_dtype)
        return super().update_state(math_ops.squared_difference(y_pred, y_true),
                                    sample_weight=sample_weight)

    def result(self):
        return math_ops.sqrt(super().result())


class _Counts(Metric):
    """State: one count vector per name in `_counts`, one entry per threshold."""

    _counts: tuple[str, ...] = ()
    _stateful = True  # compile(): a running result, not a mean of batch values

    def __init__(self, thresholds=None, name=None, dtype=None, default=0.5):
        super().__init__(name=name, dtype=dtype)
        self._scalar = thresholds is None or np.ndim(thresholds) == 0
        values = [default] if thresholds is None else np.reshape(thresholds, [-1]).tolist()
        for t in values:
            if not 0.0 <= float(t) <= 1.0:
                raise ValueError(f"{type(self).__name__}: threshold values must be in "
                                 f"[0, 1]. Received: {thresholds}")
        self.thresholds = [float(t) for t in values]
        self._init_thresholds = thresholds

    def _variables(self):
        if self._state is None:
            made = []
            for suffix in self._counts:
                var = _variables.Variable(np.zeros(len(self.thresholds), np.float32),
                                          dtype=_dtypes.float32, trainable=False,
                                          name=suffix, collections=[], use_resource=True)
                backend.track_variable(var)
                made.append(var)
            self._state = tuple(made)
        return self._state

    def reset_states(self) -> None:
        if self._state is not None:
            backend.batch_set_value([(v, np.zeros(v.shape.as_list(), np.float32))
                                     for v in self._state])

    reset_state = reset_states

    def update_state(self, y_true, y_pred, sample_weight=None):
        """An op adding this batch's weighted confusion counts at each threshold."""
        y_pred = math_ops.cast(convert_to_tensor(y_pred), _dtypes.float32)
        y_true = math_ops.cast(convert_to_tensor(y_true), _dtypes.float32)
        pred = array_shape_ops.reshape(y_pred, [1, -1])
        label = math_ops.greater(array_shape_ops.reshape(y_true, [1, -1]), 0.5)
        weight = array_shape_ops.ones_like(pred)
        if sample_weight is not None:
            w = math_ops.cast(convert_to_tensor(sample_weight), _dtypes.float32)
            while w.shape.ndims is not None and 0 < w.shape.ndims < (y_pred.shape.ndims or 0):
                w = array_shape_ops.expand_dims(w, -1)  # (batch,) against (batch, 1)
            weight = array_shape_ops.reshape(
                math_ops.multiply(array_shape_ops.ones_like(y_pred), w), [1, -1])
        thresholds = array_shape_ops.reshape(constant(self.thresholds, _dtypes.float32), [-1, 1])
        above = math_ops.greater(pred, thresholds)                      # (T, N)
        not_label = math_ops.logical_not(label)
        cases = {"true_positives": (label, above),
                 "false_positives": (not_label, above),
                 "true_negatives": (not_label, math_ops.logical_not(above)),
                 "false_negatives": (label, math_ops.logical_not(above))}
        updates = []
        for suffix, var in zip(self._counts, self._variables(), strict=True):
            kind = self._kind_of(suffix)
            lab, hit = cases[kind]
            both = math_ops.cast(math_ops.logical_and(lab, hit), _dtypes.float32)
            count = math_reduce.reduce_sum(math_ops.multiply(both, weight), axis=1)
            updates.append(state_ops.assign_add(var, count))
        return group(*updates)

    def _kind_of(self, suffix: str) -> str:
        return suffix

    def _maybe_scalar(self, value):
        return value[0] if self._scalar else value

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self._init_thresholds}


def _count_metric(class_name: str, kind: str):
    class _One(_Counts):
        _counts = ("accumulator",)

        def __init__(self, thresholds=None, name=None, dtype=None):
            super().__init__(thresholds, name=name or _snake(class_name), dtype=dtype)

        def _kind_of(self, suffix: str) -> str:
            return kind

        def result(self):
            return self._maybe_scalar(array_identity(self._variables()[0]))

    _One.__name__ = _One.__qualname__ = class_name
    _One.__doc__ = f"The weighted count of {kind.replace('_', ' ')} at each threshold."
    return _One


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def array_identity(x):
    from flowgraph.ops import array_identity_ops

    return array_identity_ops.identity(x)


TruePositives = _count_metric("TruePositives", "true_positives")
FalsePositives = _count_metric("FalsePositives", "false_positives")
TrueNegatives = _count_metric("TrueNegatives", "true_negatives")
FalseNegatives = _count_metric("FalseNegatives", "false_negatives")


class Precision(_Counts):
    """``tp / (tp + fp)`` at each threshold (default 0.5)."""

    _counts = ("true_positives", "false_positives")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        if top_k is not None or class_id is not None:
            raise NotImplementedError(f"{type(self).__name__}: top_k and class_id are not "
                                      "supported by flowgraph.")
        super().__init__(thresholds, name=name or _snake(type(self).__name__), dtype=dtype)
        self.top_k, self.class_id = top_k, class_id

    def result(self):
        tp, other = self._variables()
        return self._maybe_scalar(math_ops.div_no_nan(tp, math_ops.add(tp, other)))

    def get_config(self) -> dict:
        return {**super().get_config(), "top_k": self.top_k, "class_id": self.class_id}


class Recall(Precision):
    """``tp / (tp + fn)`` at each threshold (default 0.5)."""

    _counts = ("true_positives", "false_negatives")


class AUC(_Counts):
    """Area under the ROC (or PR) curve, from the confusion counts at `num_thresholds`
    evenly spaced thresholds (``summation_method`` 'interpolation', 'minoring' or
    'majoring')."""

    _counts = ("true_positives", "true_negatives", "false_positives", "false_negatives")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        if multi_label or label_weights is not None or from_logits:
            raise NotImplementedError("AUC: multi_label, label_weights and from_logits are "
                                      "not supported by flowgraph.")
        if str(curve).upper() not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             f'["ROC", "PR"]')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             f'Expected values are ["interpolation", "majoring", '
                             f'"minoring"]')
        if thresholds is not None:
            inner = sorted(float(t) for t in np.reshape(thresholds, [-1]))
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        super().__init__(inner or None, name=name or "auc", dtype=dtype)
        self.thresholds = [0.0 - _EPSILON, *inner, 1.0 + _EPSILON]
        self.num_thresholds = int(num_thresholds)
        self.curve = str(curve).upper()
        self.summation_method = summation_method
        self._explicit = thresholds

    def result(self):
        tp, tn, fp, fn = self._variables()
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._pr_interpolated(tp, fp, fn)
        rec = math_ops.div_no_nan(tp, math_ops.add(tp, fn))
        if self.curve == "ROC":
            x = math_ops.div_no_nan(fp, math_ops.add(fp, tn))
            y = rec
        else:
            x = rec
            y = math_ops.div_no_nan(tp, math_ops.add(tp, fp))
        hi, lo = y[:self.num_thresholds - 1], y[1:]
        if self.summation_method == "interpolation":
            heights = math_ops.multiply(math_ops.add(hi, lo), 0.5)
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(hi, lo)
        else:
            heights = math_ops.maximum(hi, lo)
        widths = math_ops.subtract(x[:self.num_thresholds - 1], x[1:])
        return math_reduce.reduce_sum(math_ops.multiply(widths, heights))

    def _pr_interpolated(self, tp, fp, fn):
        """The PR area with precision interpolated between thresholds (Davis and
        Goadrich, 2006): precision varies as ``tp / p`` along each segment."""
        n = self.num_thresholds
        p = math_ops.add(tp, fp)
        dtp = math_ops.subtract(tp[:n - 1], tp[1:])
        dp = math_ops.subtract(p[:n - 1], p[1:])
        slope = math_ops.div_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = math_ops.subtract(tp[1:], math_ops.multiply(slope, p[1:]))
        both = math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0),
                                    math_ops.greater(p[1:], 0.0))
        ratio = array_index_ops.where(both, math_ops.div_no_nan(p[:n - 1],
                                                               math_ops.maximum(p[1:], 0.0)),
                                      array_shape_ops.ones_like(p[1:]))
        area = math_ops.multiply(slope, math_ops.add(
            dtp, math_ops.multiply(intercept, math_ops.log(ratio))))
        return math_reduce.reduce_sum(math_ops.div_no_nan(
            area, math_ops.maximum(math_ops.add(tp[1:], fn[1:]), 0.0)))

    def get_config(self) -> dict:
        config = {"name": self.name, "dtype": self.dtype.name,
                  "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": False,
                  "num_labels": None, "label_weights": None, "from_logits": False}
        if self._explicit is not None:
            config["thresholds"] = self.thresholds[1:-1]
        return config
