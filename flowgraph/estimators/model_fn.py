"""`ModeKeys` and `EstimatorSpec`: what a `model_fn` receives and what it returns.

`EstimatorSpec` is validated per mode when it is built:

| mode | required | checked when given |
| --- | --- | --- |
| ``train`` | ``loss``, ``train_op`` | loss is a scalar Tensor of the default graph |
| ``eval`` | ``loss`` | ``eval_metric_ops`` values are ``(value, update_op)`` pairs |
| ``infer`` | ``predictions`` | predictions are a Tensor or a dict of Tensors |

A missing field is reported with the mode, the field and the model_fn that left it out,
e.g. ``mode=train requires 'train_op'; model_fn 'my_model_fn' returned None for it.``

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     loss = tf.constant(1.0)
...     spec = EstimatorSpec(ModeKeys.EVAL, loss=loss)
...     print(spec.mode, spec.predictions, spec.eval_metric_ops)
eval {} {}
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading

from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Operation, Tensor

__all__ = ["EstimatorSpec", "ModeKeys"]


class ModeKeys:
    """The three modes a `model_fn` is called in (TF's string values).

    Example
    -------
    >>> ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT
    ('train', 'eval', 'infer')
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)

# The name of the model_fn the Estimator is calling right now (per thread), so that a
# spec built inside it can name it in errors.
_current = threading.local()


@contextlib.contextmanager
def calling_model_fn(name: str):
    """Context in which `EstimatorSpec` errors name `name` as the model_fn."""
    previous = getattr(_current, "name", None)
    _current.name = name
    try:
        yield
    finally:
        _current.name = previous


def _model_fn_name() -> str:
    name = getattr(_current, "name", None)
    if name:
        return name
    # Built outside an Estimator: the function that constructed the spec.
    try:  # frames: this, _missing, _validate_*, EstimatorSpec.__new__, the caller
        return sys._getframe(4).f_code.co_name
    except ValueError:
        return "<unknown>"


def _missing(field: str, mode: str) -> ValueError:
    return ValueError(
        f"mode={mode} requires '{field}'; model_fn '{_model_fn_name()}' returned None for it.")


def _check_graph(value, what: str, graph) -> None:
    if value.graph is not graph:
        raise ValueError(
            f"{what} '{value.name}' must be from the default graph, i.e. created inside "
            f"this call of model_fn. It comes from another graph: it was created outside "
            f"model_fn, or in an earlier call of model_fn.")


def _check_tensor(value, what: str, mode: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_as_graph_element"):  # a Variable
        return value._as_graph_element()
    raise TypeError(
        f"{what} must be a Tensor (mode={mode}); got {type(value).__name__}: {value!r}")


def _validate_train_op(train_op, mode, graph):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise _missing("train_op", mode)
        return None
    if hasattr(train_op, "_as_graph_element") and not isinstance(train_op, Tensor):
        raise TypeError(
            f"train_op must be an Operation or a Tensor, not a Variable ({train_op.name}); "
            f"return the op that updates it, e.g. optimizer.minimize(loss, global_step).")
    if not isinstance(train_op, (Tensor, Operation)):
        raise TypeError(
            f"train_op must be an Operation or a Tensor (mode={mode}); got "
            f"{type(train_op).__name__}: {train_op!r}")
    _check_graph(train_op, "train_op", graph)
    return train_op


def _validate_loss(loss, mode, graph):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise _missing("loss", mode)
        return None
    loss = _check_tensor(loss, "loss", mode)
    shape = loss.shape
    if shape.num_elements() not in (None, 1):
        raise ValueError(
            f"loss must be a scalar (or shape [1]); got '{loss.name}' with shape {shape}. "
            f"Reduce it, e.g. with tf.reduce_mean.")
    _check_graph(loss, "loss", graph)
    if shape.ndims not in (None, 0):
        from flowgraph.ops import array_ops

        loss = array_ops.reshape(loss, [])
    return loss


def _validate_predictions(predictions, mode, graph):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise _missing("predictions", mode)
        return {}
    if isinstance(predictions, dict):
        out = {}
        for key, value in predictions.items():
            value = _check_tensor(value, f"predictions[{key!r}]", mode)
            _check_graph(value, f"predictions[{key!r}]", graph)
            out[key] = value
        return out
    predictions = _check_tensor(predictions, "predictions", mode)
    _check_graph(predictions, "predictions", graph)
    return predictions


def _validate_metrics(eval_metric_ops, graph):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops!r}")
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: "
                f"{value!r} for key: {key}")
        for part in value:
            if not isinstance(part, (Tensor, Operation)):
                raise TypeError(
                    f"eval_metric_ops[{key!r}] must hold Tensors or Operations; got "
                    f"{type(part).__name__}: {part!r}")
            _check_graph(part, f"eval_metric_ops[{key!r}]", graph)
    return dict(eval_metric_ops)


def _validate_scaffold(scaffold):
    from flowgraph.train.scaffold import Scaffold

    if scaffold is None:
        return Scaffold()
    if not isinstance(scaffold, Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold!r}")
    return scaffold


def _validate_export_outputs(export_outputs) -> None:
    if export_outputs is None:
        return
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be a dict, given: {export_outputs!r}")
    from flowgraph.estimators.export import ExportOutput

    for key, value in export_outputs.items():
        if not isinstance(value, ExportOutput):
            raise TypeError(
                f"Values in `export_outputs` must be ExportOutput objects (e.g. "
                f"tf.estimator.export.PredictOutput); export_outputs[{key!r}] is "
                f"{type(value).__name__}: {value!r}")


def validate_hooks(hooks, what: str = "hooks") -> tuple:
    """`hooks` as a tuple, each checked to be a `tf.train.SessionRunHook`."""
    hooks = tuple(hooks or ())
    base = _session_run_hook_class()
    for hook in hooks:
        ok = isinstance(hook, base) if base is not None else (
            hasattr(hook, "before_run") and hasattr(hook, "after_run"))
        if not ok:
            raise TypeError(f"All {what} must be SessionRunHook instances, given: {hook!r}")
    return hooks


def _session_run_hook_class():
    train = sys.modules.get("flowgraph.train")
    return getattr(train, "SessionRunHook", None)


class EstimatorSpec(collections.namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
        "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
        "prediction_hooks"])):
    """What a `model_fn` returns: the ops an `Estimator` runs in `mode`.

    Required per mode: ``train`` needs `loss` and `train_op`; ``eval`` needs `loss`;
    ``infer`` (PREDICT) needs `predictions`. Other fields may be given in any mode and
    are ignored where they do not apply, so one model_fn can fill every field.

    Parameters
    ----------
    mode : str
        A `ModeKeys` value.
    predictions : Tensor or dict of Tensor, optional
    loss : scalar Tensor, optional
    train_op : Operation or Tensor, optional
        One training step (usually ``optimizer.minimize(loss, global_step=...)``).
    eval_metric_ops : dict of (value, update_op), optional
        As returned by the ``tf.metrics`` functions.
    export_outputs : dict, optional
        Serving signatures for `Estimator.export_saved_model`.
    training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks : optional
        `tf.train.SessionRunHook` lists run in the matching mode.
    scaffold : tf.train.Scaffold, optional
        Custom init/saver/summary ops.

    Example
    -------
    >>> import flowgraph as tf
    >>> def my_model_fn(features, labels, mode):
    ...     return EstimatorSpec(mode, loss=tf.constant(0.0))
    >>> with tf.Graph().as_default():
    ...     my_model_fn(None, None, ModeKeys.TRAIN)
    Traceback (most recent call last):
    ...
    ValueError: mode=train requires 'train_op'; model_fn 'my_model_fn' returned None for it.
    """

    __slots__ = ()

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in _MODES:
            raise ValueError(
                f"mode must be one of tf.estimator.ModeKeys ({', '.join(map(repr, _MODES))});"
                f" got {mode!r}")
        graph = get_default_graph()
        train_op = _validate_train_op(train_op, mode, graph)
        loss = _validate_loss(loss, mode, graph)
        predictions = _validate_predictions(predictions, mode, graph)
        eval_metric_ops = _validate_metrics(eval_metric_ops, graph)
        _validate_export_outputs(export_outputs)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops=eval_metric_ops, export_outputs=export_outputs,
            training_chief_hooks=validate_hooks(training_chief_hooks, "training_chief_hooks"),
            training_hooks=validate_hooks(training_hooks, "training_hooks"),
            scaffold=_validate_scaffold(scaffold),
            evaluation_hooks=validate_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=validate_hooks(prediction_hooks, "prediction_hooks"))

    def _replace(self, **kwds):
        """A new, re-validated spec with some fields replaced (`mode` cannot change)."""
        if "mode" in kwds:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        fields = {name: kwds.pop(name, value) for name, value in zip(self._fields, self)}
        if kwds:
            raise ValueError(f"EstimatorSpec has no fields {sorted(kwds)}")
        return EstimatorSpec(**fields)
