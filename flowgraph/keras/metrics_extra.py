"""More Keras metric objects: sums and element-wise means (`Sum`, `MeanTensor`,
`MeanRelativeError`), intersection-over-union from a running confusion matrix (`IoU`,
`MeanIoU`, `BinaryIoU`, `OneHotIoU`, `OneHotMeanIoU`), one operating point of a ROC or PR
curve (`PrecisionAtRecall`, `RecallAtPrecision`, `SensitivityAtSpecificity`,
`SpecificityAtSensitivity`), `F1Score` / `FBetaScore` and `R2Score`. Re-exported by
`flowgraph.keras.metrics`.

State lives in resource variables outside every collection (as in `metrics_stateful`),
initialized by `tf.keras.backend.get_session`; `update_state` returns the op that adds a
batch, `result` the running value. `F1Score`, `FBetaScore` and `R2Score` report what TF
2.15 computes eagerly (its graph mode leaves their update ops out of the op it returns).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     m = tf.keras.metrics.MeanIoU(num_classes=2)
...     update = m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
...     sess = tf.keras.backend.get_session()
...     _ = sess.run(update)
...     print(round(float(sess.run(m.result())), 4))
0.3333
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.keras import backend
from flowgraph.keras.metrics_classes import Mean, Metric
from flowgraph.keras.metrics_stateful import _Counts, _snake
from flowgraph.ops import (
    array_broadcast_ops,
    array_identity_ops,
    array_index_ops,
    array_shape_ops,
    linalg_diag_ops,
    math_composite,
    math_ops,
    math_reduce,
    state_ops,
)
from flowgraph.ops import variables as _variables
from flowgraph.ops.control_flow_ops import group

__all__ = ["BinaryIoU", "F1Score", "FBetaScore", "IoU", "MeanIoU", "MeanRelativeError",
           "MeanTensor", "OneHotIoU", "OneHotMeanIoU", "PrecisionAtRecall", "R2Score",
           "RecallAtPrecision", "SensitivityAtSpecificity", "SpecificityAtSensitivity", "Sum"]

_EPSILON = 1e-7


def _state_variable(name, value, dtype=_dtypes.float32):
    var = _variables.Variable(value, dtype=dtype, trainable=False, name=name, collections=[],
                              use_resource=True)
    backend.track_variable(var)
    return var


class _Stateful(Metric):
    """A metric whose state is the variables in ``self._state`` (reset to zeros)."""

    _stateful = True

    def _current(self) -> bool:
        """Whether the state exists in the default graph (metrics made in one graph and
        used in another get fresh variables there)."""
        return self._state is not None and self._state[0].graph is get_default_graph()

    def reset_states(self) -> None:
        if self._state is not None:
            backend.batch_set_value([
                (v, np.zeros(v.shape.as_list(), v.dtype.base_dtype.as_numpy_dtype))
                for v in self._state])

    reset_state = reset_states


# -- sums and means ------------------------------------------------------------------------
class Sum(_Stateful):
    """The running (weighted) sum of the values given to `update_state`."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._variables()  # made with the metric, as TF's (initialized by get_session)

    def _variables(self):
        if not self._current():
            self._state = (_state_variable("total", 0.0, self.dtype),)
        return self._state

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(convert_to_tensor(values), self.dtype)
        if sample_weight is not None:
            values = math_ops.multiply(values, math_ops.cast(convert_to_tensor(sample_weight),
                                                             self.dtype))
        (total,) = self._variables()
        return state_ops.assign_add(total, math_reduce.reduce_sum(values))

    def result(self):
        return array_identity_ops.identity(self._variables()[0])


class MeanTensor(_Stateful):
    """The element-wise running (weighted) mean of same-shaped tensors; the shape is set
    by the first `update_state` (or `shape`)."""

    def __init__(self, name="mean_tensor", dtype=None, shape=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None if shape is None else tuple(shape)

    def _build(self, shape):
        if self._state is None:
            self._shape = tuple(shape)
            zeros = np.zeros(self._shape, self.dtype.as_numpy_dtype)
            self._state = (_state_variable("total", zeros, self.dtype),
                           _state_variable("count", zeros, self.dtype))
        elif tuple(shape) != self._shape:
            raise ValueError(f"MeanTensor input values must always have the same shape. "
                             f"Expected shape (set during the first call): {self._shape}. "
                             f"Got: {tuple(shape)}.")
        return self._state

    def _variables(self):
        if self._state is None:
            if self._shape is None:
                raise ValueError("MeanTensor has no state yet: call update_state first.")
            self._build(self._shape)
        return self._state

    def update_state(self, values, sample_weight=None):
        values = math_ops.cast(convert_to_tensor(values), self.dtype)
        if not values.shape.is_fully_defined():
            raise ValueError(f"MeanTensor needs values of a known shape; got {values.shape}.")
        total, count = self._build(values.shape.as_list())
        weights = array_shape_ops.ones_like(values)
        if sample_weight is not None:
            weights = math_ops.multiply(weights, math_ops.cast(convert_to_tensor(sample_weight),
                                                               self.dtype))
            values = math_ops.multiply(values, weights)
        return group(state_ops.assign_add(total, values), state_ops.assign_add(count, weights))

    def result(self):
        total, count = self._variables()
        return math_ops.div_no_nan(total, count)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype.name}


class MeanRelativeError(Mean):
    """The mean of ``|y_true - y_pred| / normalizer`` (0 where the normalizer is 0)."""

    def __init__(self, normalizer, name=None, dtype=None):
        super().__init__(name=name or "mean_relative_error", dtype=dtype)
        self.normalizer = np.asarray(normalizer, self.dtype.as_numpy_dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        errors = math_ops.div_no_nan(math_ops.abs(math_ops.subtract(y_true, y_pred)),
                                     constant(self.normalizer, self.dtype))
        return super().update_state(errors, sample_weight=sample_weight)

    def get_config(self) -> dict:
        return {**super().get_config(), "normalizer": self.normalizer}


# -- intersection over union -----------------------------------------------------------------
class IoU(_Stateful):
    """The mean, over `target_class_ids`, of ``tp / (tp + fp + fn)`` from a running
    ``(num_classes, num_classes)`` confusion matrix (rows true, columns predicted)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name or _snake(type(self).__name__), dtype=dtype)
        self.num_classes = int(num_classes)
        if max(target_class_ids) >= self.num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, "
                             f"which is [0, {self.num_classes}).")
        self.target_class_ids = list(target_class_ids)
        self.ignore_class = ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        self._variables()  # made with the metric, as TF's (initialized by get_session)

    def _variables(self):
        if not self._current():
            zeros = np.zeros((self.num_classes, self.num_classes), np.float64)
            self._state = (_state_variable("total_confusion_matrix", zeros, _dtypes.float64),)
        return self._state

    def _labels(self, y_true, y_pred):
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = math_reduce.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = math_reduce.argmax(y_pred, axis=self.axis)
        return y_true, y_pred

    def update_state(self, y_true, y_pred, sample_weight=None):
        """An op adding this batch's (weighted) confusion matrix."""
        y_true, y_pred = self._labels(y_true, y_pred)
        y_true = array_shape_ops.reshape(math_ops.cast(y_true, self.dtype), [-1])
        y_pred = array_shape_ops.reshape(math_ops.cast(y_pred, self.dtype), [-1])
        weights = None
        if sample_weight is not None:
            weights = array_shape_ops.reshape(
                math_ops.cast(convert_to_tensor(sample_weight), self.dtype), [-1])
        if self.ignore_class is not None:
            keep = math_ops.not_equal(y_true, math_ops.cast(self.ignore_class, self.dtype))
            y_true = array_index_ops.boolean_mask(y_true, keep)
            y_pred = array_index_ops.boolean_mask(y_pred, keep)
            if weights is not None:
                weights = array_index_ops.boolean_mask(weights, keep)
        matrix = math_composite.confusion_matrix(y_true, y_pred, self.num_classes,
                                                 weights=weights, dtype=_dtypes.float64)
        return state_ops.assign_add(self._variables()[0], matrix)

    def result(self):
        (matrix,) = self._variables()
        predicted = math_reduce.reduce_sum(matrix, axis=0)
        actual = math_reduce.reduce_sum(matrix, axis=1)
        tp = linalg_diag_ops.diag_part(matrix)
        denominator = math_ops.subtract(math_ops.add(predicted, actual), tp)
        ids = constant(self.target_class_ids, _dtypes.int32)
        tp = array_index_ops.gather(tp, ids)
        denominator = array_index_ops.gather(denominator, ids)
        valid = math_reduce.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0),
                                                     self.dtype))
        iou = math_ops.cast(math_ops.div_no_nan(tp, denominator), self.dtype)
        return math_ops.div_no_nan(math_reduce.reduce_sum(iou), valid)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "name": self.name, "dtype": self.dtype.name,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class MeanIoU(IoU):
    """`IoU` averaged over all `num_classes` classes."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(int(num_classes))), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["target_class_ids"]
        return config


class BinaryIoU(IoU):
    """`IoU` of binary labels against predictions thresholded at `threshold`
    (``y_pred >= threshold`` is class 1)."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_pred = math_ops.cast(math_ops.greater_equal(y_pred, self.threshold), self.dtype)
        return super().update_state(y_true, y_pred, sample_weight)

    def get_config(self) -> dict:
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self.dtype.name}


class OneHotIoU(IoU):
    """`IoU` of one-hot labels and per-class scores (the arg-max of each)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """`MeanIoU` of one-hot labels and per-class scores."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["sparse_y_true"]
        return config


# -- one point of a curve --------------------------------------------------------------------
class _AtConstraint(_Counts):
    """Confusion counts at `num_thresholds` thresholds; the result is the best `_dependent`
    value among thresholds where `_constrained` reaches `value`."""

    _counts = ("true_positives", "true_negatives", "false_positives", "false_negatives")
    _arg = "value"

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"Argument `{self._arg}` must be in the range [0, 1]. "
                             f"Received: {self._arg}={value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. "
                             f"Received: num_thresholds={num_thresholds}")
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        super().__init__(inner or None, name=name or _snake(type(self).__name__), dtype=dtype)
        self.thresholds = [0.0 - _EPSILON, *inner, 1.0 + _EPSILON]
        self.value, self.num_thresholds, self.class_id = value, int(num_thresholds), class_id
        self._variables()  # made with the metric, as TF's (initialized by get_session)

    def _variables(self):
        if self._state is not None and self._state[0].graph is not get_default_graph():
            self._state = None
        return super()._variables()

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.class_id is not None:
            y_true = convert_to_tensor(y_true)[..., self.class_id]
            y_pred = convert_to_tensor(y_pred)[..., self.class_id]
        return super().update_state(y_true, y_pred, sample_weight)

    def _rates(self):
        tp, tn, fp, fn = self._variables()
        return {"sensitivity": math_ops.div_no_nan(tp, math_ops.add(tp, fn)),
                "specificity": math_ops.div_no_nan(tn, math_ops.add(tn, fp)),
                "precision": math_ops.div_no_nan(tp, math_ops.add(tp, fp))}

    def result(self):
        rates = self._rates()
        constrained, dependent = rates[self._constrained], rates[self._dependent]
        feasible = math_ops.greater_equal(constrained, self.value)
        best = math_reduce.reduce_max(array_index_ops.where(
            feasible, dependent, array_shape_ops.zeros_like(dependent)))
        return array_index_ops.where(math_reduce.reduce_any(feasible), best, 0.0)

    def get_config(self) -> dict:
        return {self._arg: self.value, "num_thresholds": self.num_thresholds,
                "class_id": self.class_id, "name": self.name, "dtype": self.dtype.name}


class PrecisionAtRecall(_AtConstraint):
    """The best precision where recall is at least `recall`."""

    _arg, _constrained, _dependent = "recall", "sensitivity", "precision"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


class RecallAtPrecision(_AtConstraint):
    """The best recall where precision is at least `precision`."""

    _arg, _constrained, _dependent = "precision", "precision", "sensitivity"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) where specificity is at least `specificity`."""

    _arg, _constrained, _dependent = "specificity", "specificity", "sensitivity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity where sensitivity (recall) is at least `sensitivity`."""

    _arg, _constrained, _dependent = "sensitivity", "sensitivity", "specificity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


# -- F-scores ----------------------------------------------------------------------------------
class FBetaScore(_Stateful):
    """``(1 + beta^2) * p * r / (beta^2 * p + r)`` per class, of multi-label or one-hot
    ``(batch, classes)`` targets; predictions are 1 above `threshold` (None: the top
    class of each row). `average` None (per class), 'micro', 'macro' or 'weighted'."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, "
                             f"'micro', 'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. "
                             f"Received: beta={beta} of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. "
                             f"Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(f"Invalid `threshold` argument value. It should be a Python "
                                 f"float. Received: threshold={threshold} of type "
                                 f"'{type(threshold)}'")
            if not 0.0 < threshold <= 1.0:
                raise ValueError(f"Invalid `threshold` argument value. It should verify "
                                 f"0 < threshold <= 1. Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold

    def _build(self, classes):
        if self._state is None:
            zeros = np.zeros([classes], self.dtype.as_numpy_dtype)
            self._state = tuple(_state_variable(n, zeros, self.dtype) for n in (
                "true_positives", "false_positives", "false_negatives",
                "intermediate_weights"))
        return self._state

    def _variables(self):
        if self._state is None:
            raise ValueError(f"{type(self).__name__} has no state yet: call update_state "
                             f"first.")
        return self._state

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        if y_pred.shape.ndims != 2 or y_pred.shape.as_list()[-1] is None:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, "
                             f"output_dim) and a known output_dim. Received input shape: "
                             f"y_pred.shape={y_pred.shape}.")
        tp, fp, fn, weights = self._build(y_pred.shape.as_list()[-1])
        if self.threshold is None:
            top = math_reduce.reduce_max(y_pred, axis=-1, keepdims=True)
            hit = math_ops.greater_equal(y_pred, top)
        else:
            hit = math_ops.greater(y_pred, self.threshold)
        y_pred = math_ops.cast(hit, self.dtype)

        def total(values):
            if sample_weight is not None:
                w = math_ops.cast(convert_to_tensor(sample_weight), self.dtype)
                values = math_ops.multiply(values, array_shape_ops.expand_dims(w, 1))
            return math_reduce.reduce_sum(values, axis=0)

        miss = math_ops.subtract(1.0, y_pred)
        return group(
            state_ops.assign_add(tp, total(math_ops.multiply(y_pred, y_true))),
            state_ops.assign_add(fp, total(math_ops.multiply(y_pred,
                                                             math_ops.subtract(1.0, y_true)))),
            state_ops.assign_add(fn, total(math_ops.multiply(miss, y_true))),
            state_ops.assign_add(weights, total(y_true)))

    def result(self):
        tp, fp, fn, weights = self._variables()
        if self.average == "micro":
            tp, fp, fn = (math_reduce.reduce_sum(v) for v in (tp, fp, fn))
        precision = math_ops.div_no_nan(tp, math_ops.add(tp, fp))
        recall = math_ops.div_no_nan(tp, math_ops.add(tp, fn))
        b2 = self.beta ** 2
        score = math_ops.multiply(math_ops.div_no_nan(
            math_ops.multiply(precision, recall),
            math_ops.add(math_ops.multiply(precision, b2), recall)), 1.0 + b2)
        if self.average == "weighted":
            share = math_ops.div_no_nan(weights, math_reduce.reduce_sum(weights))
            return math_reduce.reduce_sum(math_ops.multiply(score, share))
        if self.average is not None:
            return math_reduce.reduce_mean(score)
        return score

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype.name, "average": self.average,
                "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """`FBetaScore` with ``beta=1``."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["beta"]
        return config


# -- R^2 ----------------------------------------------------------------------------------------
class R2Score(_Stateful):
    """The coefficient of determination ``1 - SS_res / SS_tot`` per output column of
    ``(batch, outputs)`` targets, aggregated by `class_aggregation` ('uniform_average',
    'variance_weighted_average' or None); adjusted for `num_regressors` when nonzero."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        accepted = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in accepted:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"{accepted}. Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value "
                             f">= 0. Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, int(num_regressors)

    def _build(self, outputs):
        if self._state is None:
            zeros = np.zeros([outputs], self.dtype.as_numpy_dtype)
            self._state = (_state_variable("num_samples", 0, _dtypes.int32),
                           *(_state_variable(n, zeros, self.dtype)
                             for n in ("squared_sum", "sum", "residual", "count")))
        return self._state

    def _variables(self):
        if self._state is None:
            raise ValueError("R2Score has no state yet: call update_state first.")
        return self._state

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        if y_pred.shape.ndims != 2 or y_pred.shape.as_list()[-1] is None:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). "
                             f"Received input shapes: "
                             f"y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        n, squared, total, residual, count = self._build(y_pred.shape.as_list()[-1])
        w = constant(1.0, self.dtype) if sample_weight is None else math_ops.cast(
            convert_to_tensor(sample_weight), self.dtype)
        if w.shape.ndims == 1:
            w = array_shape_ops.expand_dims(w, 1)
        w = array_broadcast_ops.broadcast_to(w, array_shape_ops.shape(y_true))
        weighted = math_ops.multiply(y_true, w)
        return group(
            state_ops.assign_add(total, math_reduce.reduce_sum(weighted, axis=0)),
            state_ops.assign_add(squared, math_reduce.reduce_sum(
                math_ops.multiply(y_true, weighted), axis=0)),
            state_ops.assign_add(residual, math_reduce.reduce_sum(math_ops.multiply(
                math_ops.square(math_ops.subtract(y_true, y_pred)), w), axis=0)),
            state_ops.assign_add(count, math_reduce.reduce_sum(w, axis=0)),
            state_ops.assign_add(n, array_shape_ops.shape(y_true)[0]))

    def result(self):
        _, squared, total, residual, count = self._variables()
        mean = math_ops.divide(total, count)
        ss_tot = math_ops.subtract(squared, math_ops.multiply(total, mean))
        raw = math_ops.subtract(1.0, math_ops.divide(residual, ss_tot))
        raw = array_index_ops.where(math_ops.is_inf(raw), array_shape_ops.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            r2 = math_reduce.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            r2 = math_ops.divide(math_reduce.reduce_sum(math_ops.multiply(ss_tot, raw)),
                                 math_reduce.reduce_sum(ss_tot))
        else:
            r2 = raw
        if self.num_regressors:
            samples = math_reduce.reduce_sum(count)  # TF counts values, not rows
            p = float(self.num_regressors)
            adjusted = math_ops.subtract(1.0, math_ops.divide(
                math_ops.multiply(math_ops.subtract(1.0, r2), math_ops.subtract(samples, 1.0)),
                math_ops.subtract(samples, p + 1.0)))
            # too few samples for the regressors: the plain score, as TF's warning path
            r2 = array_index_ops.where(math_ops.greater(samples, p + 1.0), adjusted, r2)
        return r2

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype.name,
                "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
