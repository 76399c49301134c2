"""`tf.contrib.estimator`: TF1's staging area for the Estimator API. Most of it moved to
`tf.estimator` (early-stopping hooks, `InMemoryEvaluatorHook`, `add_metrics`, the
`DNN`/`Linear` estimators taking a head) and is aliased here; the head factories
(`binary_classification_head`, ...) build the `tf.estimator` heads from TF1's arguments,
and `forward_features` / `clip_gradients_by_norm` wrap an estimator or an optimizer.

Example
-------
>>> import flowgraph as tf
>>> head = tf.contrib.estimator.multi_class_head(n_classes=3)
>>> type(head).__name__, head.logits_dimension
('MultiClassHead', 3)
"""

from __future__ import annotations

from flowgraph.estimators import (
    DNNEstimator,
    DNNLinearCombinedEstimator,
    Estimator,
    InMemoryEvaluatorHook,
    LinearEstimator,
    ModeKeys,
    add_metrics,
    estimator_util,
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from flowgraph.estimators import export as export_lib
from flowgraph.estimators.experimental_extras import build_raw_supervised_input_receiver_fn
from flowgraph.estimators.head import (
    BinaryClassHead,
    LogisticRegressionHead,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
)
from flowgraph.framework.graph import name_scope
from flowgraph.losses.util import Reduction
from flowgraph.ops import array_ops, clip_ops
from flowgraph.train.optimizer import Optimizer

__all__ = [
    "DNNEstimator",
    "DNNLinearCombinedEstimator",
    "InMemoryEvaluatorHook",
    "LinearEstimator",
    "add_metrics",
    "binary_classification_head",
    "build_raw_supervised_input_receiver_fn",
    "build_supervised_input_receiver_fn_from_input_fn",
    "clip_gradients_by_norm",
    "export_all_saved_models",
    "export_saved_model_for_mode",
    "forward_features",
    "logistic_regression_head",
    "make_early_stopping_hook",
    "multi_class_head",
    "multi_head",
    "multi_label_head",
    "poisson_regression_head",
    "regression_head",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]

_REDUCTIONS = {Reduction.SUM_OVER_BATCH_SIZE: "sum_over_batch_size",
               Reduction.SUM: "sum", "sum_over_batch_size": "sum_over_batch_size",
               "sum": "sum"}


def _as_v1_head(head):
    """`head` behaving as TF1's contrib heads (``tf.estimator``'s v1 heads): the train
    op is built in the head's name scope and the PR AUC sums trapezoids
    (``tf.metrics.auc``'s default)."""
    head._train_op_in_head_scope = True
    if hasattr(head, "_pr_auc_summation"):
        head._pr_auc_summation = "trapezoidal"
    return head


def _reduction(loss_reduction) -> str:
    """TF1's `tf.losses.Reduction` for a head as the head's own reduction name."""
    try:
        return _REDUCTIONS[loss_reduction]
    except KeyError:
        raise ValueError(f"Invalid loss_reduction: {loss_reduction}. The heads support "
                         f"Reduction.SUM_OVER_BATCH_SIZE and Reduction.SUM.") from None


def binary_classification_head(weight_column=None, thresholds=None, label_vocabulary=None,
                               loss_reduction=Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                               name=None):
    """A head for two classes (sigmoid cross-entropy on one logit)."""
    head = BinaryClassHead(weight_column=weight_column, thresholds=thresholds,
                           label_vocabulary=label_vocabulary,
                           loss_reduction=_reduction(loss_reduction), loss_fn=loss_fn,
                           name=name)
    return _as_v1_head(head)


def multi_class_head(n_classes, weight_column=None, label_vocabulary=None,
                     loss_reduction=Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
    """A head for `n_classes` exclusive classes (softmax cross-entropy)."""
    head = MultiClassHead(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary,
                          loss_reduction=_reduction(loss_reduction), loss_fn=loss_fn,
                          name=name)
    return _as_v1_head(head)


def multi_label_head(n_classes, weight_column=None, thresholds=None, label_vocabulary=None,
                     loss_reduction=Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                     classes_for_class_based_metrics=None, name=None):
    """A head for `n_classes` independent labels (sigmoid cross-entropy each)."""
    head = MultiLabelHead(n_classes, weight_column=weight_column, thresholds=thresholds,
                          label_vocabulary=label_vocabulary,
                          loss_reduction=_reduction(loss_reduction), loss_fn=loss_fn,
                          classes_for_class_based_metrics=classes_for_class_based_metrics,
                          name=name)
    return _as_v1_head(head)


def regression_head(weight_column=None, label_dimension=1,
                    loss_reduction=Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                    inverse_link_fn=None, name=None):
    """A head for real-valued targets (mean squared error)."""
    head = RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=_reduction(loss_reduction), loss_fn=loss_fn,
                          inverse_link_fn=inverse_link_fn, name=name)
    return _as_v1_head(head)


def poisson_regression_head(weight_column=None, label_dimension=1,
                            loss_reduction=Reduction.SUM_OVER_BATCH_SIZE,
                            compute_full_loss=True, name=None):
    """A head for counts (Poisson loss on log-rates)."""
    head = PoissonRegressionHead(label_dimension=label_dimension,
                                 weight_column=weight_column,
                                 loss_reduction=_reduction(loss_reduction),
                                 compute_full_loss=compute_full_loss, name=name)
    return _as_v1_head(head)


def logistic_regression_head(weight_column=None, loss_reduction=Reduction.SUM_OVER_BATCH_SIZE,
                             name=None):
    """A head for targets in [0, 1] (sigmoid then mean squared error)."""
    head = LogisticRegressionHead(weight_column=weight_column,
                                  loss_reduction=_reduction(loss_reduction), name=name)
    return _as_v1_head(head)


def multi_head(heads, head_weights=None):
    """A head combining named `heads` (their losses summed, weighted by `head_weights`)."""
    return MultiHead(heads, head_weights=head_weights)


def forward_features(estimator, keys=None, sparse_default_values=None):
    """A new `Estimator` like `estimator` whose predictions also hold the input features
    named `keys` (a name or a list; None: every dense feature), as TF1's."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be an Estimator; got {type(estimator).__name__}")
    if keys is not None and not isinstance(keys, list | tuple | str):
        raise TypeError(f"keys must be a string or a list of strings; got {keys!r}")
    if isinstance(keys, str):
        keys = [keys]
    del sparse_default_values  # sparse features are forwarded as their dense default
    old_model_fn = estimator.model_fn

    def new_model_fn(features, labels, mode, config):
        spec = old_model_fn(features, labels, mode, config)
        if mode != ModeKeys.PREDICT or not isinstance(features, dict):
            return spec
        wanted = list(features) if keys is None else list(keys)
        missing = [k for k in wanted if k not in features]
        if missing:
            raise ValueError(f"Key {missing[0]} is not in features dict. features dict "
                             f"has following keys: {list(features)}.")
        predictions = spec.predictions
        if not isinstance(predictions, dict):
            raise ValueError("Predictions should be a dict to be able to forward features. "
                             f"Given: {type(predictions)}")
        predictions = dict(predictions)
        for key in wanted:
            if key in predictions:
                raise ValueError(f"Cannot forward feature key ({key}). Since it does exist "
                                 f"in predictions. Existing prediction keys: "
                                 f"{list(predictions)}")
            predictions[key] = array_ops.identity(features[key], name=key)
        outputs = dict(spec.export_outputs or {})
        for name, out in list(outputs.items()):
            if isinstance(out, export_lib.PredictOutput):
                merged = dict(out.outputs)
                merged.update({k: predictions[k] for k in wanted})
                outputs[name] = export_lib.PredictOutput(merged)
        return spec._replace(predictions=predictions, export_outputs=outputs or None)

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir,
                     config=estimator.config, warm_start_from=estimator._warm_start_settings)


class _ClippingOptimizer(Optimizer):
    """`optimizer` whose gradients are each clipped to `clip_norm` first."""

    def __init__(self, optimizer, clip_norm, name) -> None:
        super().__init__(use_locking=False, name=name)
        self._optimizer = optimizer
        self._clip_norm = clip_norm

    def compute_gradients(self, loss, var_list=None, **kwargs):
        grads = self._optimizer.compute_gradients(loss, var_list=var_list, **kwargs)
        with name_scope("clip_gradients"):
            return [(None if g is None else clip_ops.clip_by_norm(g, self._clip_norm), v)
                    for g, v in grads]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                               name=name)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables()


def clip_gradients_by_norm(optimizer, clip_norm):
    """`optimizer` with each gradient clipped to L2 norm `clip_norm`."""
    return _ClippingOptimizer(optimizer, clip_norm, name=f"ClipByNorm{optimizer.get_name()}")


# -- TF1's contrib export helpers (later Estimator methods) -------------------------------
def export_saved_model_for_mode(estimator, export_dir_base, input_receiver_fn,
                                assets_extra=None, as_text=False, checkpoint_path=None,
                                strip_default_attrs=False, mode=ModeKeys.PREDICT):
    """Export `estimator`'s graph for `mode` (its tags: ``serve``, ``train`` or ``eval``)
    as a SavedModel under ``export_dir_base/<timestamp>``; TRAIN and EVAL need a
    supervised receiver fn. Returns the export directory (bytes).

    >>> tf.contrib.estimator.export_saved_model_for_mode(
    ...     est, "exports", receiver_fn, mode=tf.estimator.ModeKeys.EVAL)  # doctest: +SKIP
    """
    del strip_default_attrs  # flowgraph writes every attribute (as Estimator exports)
    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be an Estimator; got {type(estimator).__name__}")
    return estimator.export_saved_model(export_dir_base, input_receiver_fn,
                                        assets_extra=assets_extra, as_text=as_text,
                                        checkpoint_path=checkpoint_path,
                                        experimental_mode=mode)


def export_all_saved_models(estimator, export_dir_base, input_receiver_fn_map,
                            assets_extra=None, as_text=False, checkpoint_path=None,
                            strip_default_attrs=False):
    """One SavedModel with a graph per mode of `input_receiver_fn_map` (``ModeKeys`` ->
    receiver fn), as ``Estimator.experimental_export_all_saved_models``.

    >>> tf.contrib.estimator.export_all_saved_models(
    ...     est, "exports", {tf.estimator.ModeKeys.PREDICT: serving_fn})  # doctest: +SKIP
    """
    del strip_default_attrs
    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be an Estimator; got {type(estimator).__name__}")
    return estimator.experimental_export_all_saved_models(
        export_dir_base, input_receiver_fn_map, assets_extra=assets_extra, as_text=as_text,
        checkpoint_path=checkpoint_path)


def build_supervised_input_receiver_fn_from_input_fn(input_fn, **input_fn_args):
    """A supervised receiver fn whose placeholders mirror the features and labels that
    ``input_fn(**input_fn_args)`` returns (a ``(features, labels)`` tuple or a Dataset of
    them), built once in a scratch graph.

    >>> fn = tf.contrib.estimator.build_supervised_input_receiver_fn_from_input_fn(
    ...     lambda: ({"x": tf.zeros([4, 3])}, tf.zeros([4])))   # doctest: +SKIP
    """
    from flowgraph.framework.graph import Graph

    with Graph().as_default():
        result = input_fn(**input_fn_args)
        if estimator_util._is_dataset(result):
            result = estimator_util._next_element(result)
        if not (isinstance(result, (list, tuple)) and len(result) == 2):
            raise ValueError("build_supervised_input_receiver_fn_from_input_fn: input_fn "
                             "must return (features, labels) or a Dataset of them; got "
                             f"{type(result).__name__}")
        features, labels = result
    return build_raw_supervised_input_receiver_fn(features, labels)
