"""`BaselineClassifier`, `BaselineRegressor`, `BaselineEstimator`: a bias and nothing else.

The baseline model ignores the features (except to learn the batch size): its logits are
one trainable variable ``baseline/bias`` of shape ``[logits_dimension]`` broadcast to
``[batch_size, logits_dimension]``. Trained, it predicts the (weighted) class prior or
label mean, the number any real model has to beat.

This module also holds what every canned estimator shares: the choice of head from
`n_classes` and the check that features come as a dict.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> est = tf.estimator.BaselineRegressor(config=tf.estimator.RunConfig(tf_random_seed=1))
>>> x, y = {"x": np.zeros(8, np.float32)}, np.full(8, 3.0, np.float32)
>>> _ = est.train(tf.estimator.inputs.numpy_input_fn(x, y, batch_size=8, num_epochs=None,
...                                                  shuffle=False), steps=300)
>>> round(float(est.get_variable_value("baseline/bias")[0]), 1)
3.0
"""

from __future__ import annotations

from flowgraph.estimators.canned import optimizers
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.head.base_head import SUM
from flowgraph.estimators.head.binary_class_head import BinaryClassHead
from flowgraph.estimators.head.multi_class_head import MultiClassHead
from flowgraph.estimators.head.regression_head import RegressionHead

__all__ = ["BaselineClassifier", "BaselineEstimator", "BaselineRegressor"]


# -- shared by the canned estimators -----------------------------------------------------
def binary_or_multi_class_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    """`BinaryClassHead` for ``n_classes == 2``, else `MultiClassHead` (which rejects
    ``n_classes < 3``), with the metrics of TF1's canned estimators (their PR AUC sums
    trapezoids)."""
    if n_classes == 2:
        head = BinaryClassHead(weight_column=weight_column, label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)
        head._pr_auc_summation = "trapezoidal"  # TF1's v1 heads: tf.metrics.auc's default
    else:
        head = MultiClassHead(n_classes, weight_column=weight_column,
                              label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
    head._train_mean_loss_summary = True  # TF1's v1 heads write `average_loss` too
    head._train_op_in_head_scope = True  # and build the train op in the head's scope
    return head


def regression_head(label_dimension, weight_column, loss_reduction):
    """`RegressionHead` with the training summaries of TF1's canned estimators."""
    head = RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=loss_reduction)
    head._train_mean_loss_summary = True
    head._train_op_in_head_scope = True
    return head


def check_features_dict(features, estimator_name: str) -> None:
    """Canned models read features by column key, so `features` must be a dict."""
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}. "
            f"{estimator_name} reads each feature column's input by its key; have input_fn "
            f"return {{'x': tensor, ...}} (numpy_input_fn does so when x is a dict).")


def weight_column_key(weight_column):
    if weight_column is None:
        return None
    if isinstance(weight_column, str):
        return weight_column
    key = getattr(weight_column, "key", None)
    if not isinstance(key, str):
        raise TypeError(f"Weight column must be either a string or NumericColumn. Given "
                        f"type: {type(weight_column)}.")
    return key


def zero_fraction(value):
    """Fraction of exact zeros in `value` (a float32 scalar)."""
    from flowgraph.framework import dtypes
    from flowgraph.ops import math_ops, math_reduce

    return math_reduce.reduce_mean(math_ops.cast(math_ops.equal(value, 0.0), dtypes.float32))


def add_layer_summary(value, tag: str) -> None:
    """TF's per-layer summaries: ``<tag>/fraction_of_zero_values`` and
    ``<tag>/activation`` (a histogram)."""
    from flowgraph.summary import histogram, scalar

    scalar(f"{tag}/fraction_of_zero_values", zero_fraction(value))
    histogram(f"{tag}/activation", value)


# -- the baseline model ------------------------------------------------------------------
def _batch_size_and_checks(features, weight_key):
    """The batch size (first dimension of the first non-weight feature) and assertions that
    every other feature agrees."""
    from flowgraph.ops import array_ops, check_ops

    if not isinstance(features, dict):
        features = {"__features__": features}
    checks, batch_size = [], None
    for key, feature in sorted(features.items(), key=lambda kv: str(kv[0])):
        if key == weight_key:
            continue
        dense_shape = getattr(feature, "dense_shape", None)
        first = dense_shape[0] if dense_shape is not None else array_ops.shape(feature)[0]
        if batch_size is None:
            batch_size = first
        else:
            checks.append(check_ops.assert_equal(batch_size, first))
    if batch_size is None and weight_key in features:
        # TF1's canned baselines size the batch by every feature, the weight included
        batch_size = array_ops.shape(features[weight_key])[0]
    if batch_size is None:
        raise ValueError(f"The baseline model needs at least one feature besides the weight "
                         f"column {weight_key!r} to learn the batch size; features: "
                         f"{sorted(features)}")
    return batch_size, checks


def baseline_logit_fn_builder(num_outputs: int, weight_column=None):
    """A ``logit_fn(features)`` returning the learned bias broadcast over the batch."""
    def baseline_logit_fn(features):
        from flowgraph.framework.graph import control_dependencies
        from flowgraph.ops import array_ops, init_ops, math_ops
        from flowgraph.ops.variable_scope import get_variable, variable_scope

        batch_size, checks = _batch_size_and_checks(features, weight_column_key(weight_column))
        with control_dependencies(checks), variable_scope("baseline"):
            bias = get_variable("bias", shape=[num_outputs],
                                initializer=init_ops.zeros_initializer())
            return math_ops.multiply(bias, array_ops.ones(array_ops.stack(
                [batch_size, num_outputs])))

    return baseline_logit_fn


def baseline_model_fn(features, labels, mode, head, optimizer, weight_column=None,
                      config=None):
    """The `model_fn` of the baseline estimators."""
    del config
    logits = baseline_logit_fn_builder(head.logits_dimension, weight_column)(features)

    def train_op_fn(loss):
        from flowgraph.train.training_util import get_global_step

        opt = optimizers.get_optimizer_instance(
            optimizer, learning_rate=optimizers.BASELINE_LEARNING_RATE)
        return opt.minimize(loss, global_step=get_global_step())

    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=train_op_fn)


def _model_fn_for(head, optimizer, weight_column=None):
    def _model_fn(features, labels, mode, config):
        return baseline_model_fn(features, labels, mode, head, optimizer,
                                 weight_column=weight_column, config=config)

    return _model_fn


class BaselineClassifier(Estimator):
    """A classifier that predicts the class prior, ignoring the features.

    Parameters
    ----------
    model_dir : str, optional
    n_classes : int, default 2
        Labels are class ids in ``[0, n_classes)`` (or strings of `label_vocabulary`).
    weight_column : str or NumericColumn, optional
        The feature that weights each example's loss.
    label_vocabulary : list of str, optional
    optimizer : Optimizer, str or callable, default 'Ftrl'
        A name trains at learning rate 0.3 (see `canned.optimizers`).
    config : RunConfig, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.BaselineClassifier(n_classes=3, label_vocabulary=["a", "b", "c"])
    >>> type(est).__name__
    'BaselineClassifier'
    """

    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, loss_reduction=SUM) -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, optimizer, weight_column),
                         model_dir=model_dir, config=config)


class BaselineRegressor(Estimator):
    """A regressor that predicts the (weighted) label mean, ignoring the features.

    Parameters
    ----------
    model_dir : str, optional
    label_dimension : int, default 1
    weight_column : str or NumericColumn, optional
    optimizer : Optimizer, str or callable, default 'Ftrl'
        A name trains at learning rate 0.3.
    config : RunConfig, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.

    Example
    -------
    >>> import flowgraph as tf
    >>> type(tf.estimator.BaselineRegressor(label_dimension=2)).__name__
    'BaselineRegressor'
    """

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, loss_reduction=SUM) -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, optimizer, weight_column),
                         model_dir=model_dir, config=config)


class BaselineEstimator(Estimator):
    """The baseline model on any `head` (e.g. `MultiLabelHead`).

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.BaselineEstimator(tf.estimator.MultiLabelHead(n_classes=4))
    >>> type(est).__name__
    'BaselineEstimator'
    """

    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None) -> None:
        super().__init__(model_fn=_model_fn_for(head, optimizer), model_dir=model_dir,
                         config=config)
