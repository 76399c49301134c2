"""`tf.estimator.add_metrics`: an Estimator whose evaluation reports extra metrics.

The new Estimator shares the old one's `model_dir`, config and warm-start settings; its
model_fn calls the old model_fn and, in EVAL mode only, merges the metrics returned by
``metric_fn`` into the spec's ``eval_metric_ops`` (a new metric of the same name wins).

Example
-------
>>> import flowgraph as tf
>>> def metric_fn(labels, predictions):
...     return {"mean_pred": tf.metrics.mean(predictions)}
>>> est = tf.estimator.Estimator(lambda features, mode: None, model_dir="/tmp/fg_ext")
>>> tf.estimator.add_metrics(est, metric_fn).model_dir
'/tmp/fg_ext'
"""

from __future__ import annotations

from flowgraph.estimators import estimator_util as util
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.model_fn import ModeKeys

__all__ = ["add_metrics"]

_METRIC_FN_ARGS = ("features", "labels", "predictions", "config")


def _check_metric_fn(metric_fn) -> tuple[str, ...]:
    if not callable(metric_fn):
        raise TypeError(f"metric_fn must be callable; got {type(metric_fn).__name__}")
    args = util.fn_args(metric_fn)
    unexpected = [a for a in args if a not in _METRIC_FN_ARGS]
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: "
                         f"{unexpected}")
    return args


def add_metrics(estimator, metric_fn):
    """A new `Estimator` like `estimator` whose `evaluate` also reports `metric_fn`'s metrics.

    Parameters
    ----------
    estimator : Estimator
    metric_fn : callable
        Takes any of ``features``, ``labels``, ``predictions`` (the spec's predictions)
        and ``config`` by name; returns ``{name: (value_op, update_op)}`` like
        ``eval_metric_ops``.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.Estimator(lambda features, mode: None, model_dir="/tmp/fg_ext2")
    >>> type(tf.estimator.add_metrics(est, lambda predictions: {})).__name__
    'Estimator'
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f"add_metrics extends an Estimator; got {type(estimator).__name__}")
    _check_metric_fn(metric_fn)
    old_model_fn = estimator.model_fn

    def new_model_fn(features, labels, mode, config):
        spec = old_model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        args = _check_metric_fn(metric_fn)
        available = {"features": features, "labels": labels,
                     "predictions": spec.predictions, "config": config}
        new_metrics = metric_fn(**{a: available[a] for a in args})
        metrics = dict(spec.eval_metric_ops or {})
        metrics.update(new_metrics or {})
        return spec._replace(eval_metric_ops=metrics)

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir,
                     config=estimator.config, warm_start_from=estimator._warm_start_settings)
