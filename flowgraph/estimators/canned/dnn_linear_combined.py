"""`DNNLinearCombinedClassifier`, `DNNLinearCombinedRegressor`,
`DNNLinearCombinedEstimator`: wide (linear) and deep (DNN) models summed into one logit.

``logits = dnn_logits + linear_logits``, each part built exactly as in `DNNClassifier`
(scope ``dnn``) and `LinearClassifier` (scope ``linear``), either part optional. Each part
has its own optimizer, applied to its own scope's variables; one step runs both updates
and then increments the global step::

    grads = gradients(loss, dnn/* + linear/*)          # one backward pass for both parts
    train_op = group(dnn_optimizer.apply_gradients(grads of dnn/*),
                     linear_optimizer.apply_gradients(grads of linear/*)) -> global_step += 1

(TensorFlow calls ``minimize`` once per part, building the backward pass twice; the
updates are the same. An optimizer overriding ``compute_gradients`` keeps its own.)

Defaults are TF's: Adagrad at 0.001 for the DNN part, FTRL at
``min(0.005, 1/sqrt(n_linear_columns))`` for the linear part (small: pass optimizers for
fast training). Memorization of sparse crosses goes in the linear part
(``crossed_column``, ``categorical_column_with_hash_bucket``), generalization through
embeddings in the DNN part.

Example
-------
>>> import flowgraph as tf
>>> tf.estimator.DNNLinearCombinedClassifier()
Traceback (most recent call last):
...
ValueError: Either linear_feature_columns or dnn_feature_columns must be defined.
"""

from __future__ import annotations

from flowgraph.estimators.canned import optimizers
from flowgraph.estimators.canned.baseline import (
    add_layer_summary,
    binary_or_multi_class_head,
    check_features_dict,
    regression_head,
)
from flowgraph.estimators.canned.dnn import (
    _check_dropout,
    _check_hidden_units,
    dnn_logit_fn_builder,
    update_ops_of,
)
from flowgraph.estimators.canned.linear import (
    _check_sparse_combiner,
    as_column_list,
    linear_logit_fn_builder,
)
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.head.base_head import SUM
from flowgraph.ops.nn_ops import relu

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
           "DNNLinearCombinedRegressor"]


def _validate_feature_columns(linear_feature_columns, dnn_feature_columns):
    linear = as_column_list(linear_feature_columns)
    dnn = as_column_list(dnn_feature_columns)
    if not linear and not dnn:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")
    return tuple(linear), tuple(dnn)


def _trainable_under(scope: str) -> list:
    from flowgraph.framework.graph import GraphKeys, get_collection

    return list(get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=scope))


def _minimize_parts(loss, parts) -> list:
    """One update op per ``(optimizer, variables)`` part. The gradients of all parts come
    from one backward pass (TensorFlow builds one per optimizer; the values are the same
    and the graph is smaller) unless an optimizer computes its gradients its own way."""
    from flowgraph.train.optimizer import Optimizer, check_some_gradients

    shared = len(parts) > 1 and all(
        vs and type(opt).compute_gradients is Optimizer.compute_gradients for opt, vs in parts)
    if not shared:
        return [opt.minimize(loss, var_list=vs) for opt, vs in parts]
    grads_and_vars = parts[0][0].compute_gradients(loss, var_list=[v for _, vs in parts
                                                                   for v in vs])
    ops, start = [], 0
    for opt, vs in parts:
        mine, start = grads_and_vars[start:start + len(vs)], start + len(vs)
        check_some_gradients(mine, loss)
        ops.append(opt.apply_gradients(mine))
    return ops


def dnn_linear_combined_model_fn(features, labels, mode, head, linear_feature_columns=None,
                                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                                 dnn_activation_fn=relu, dnn_dropout=None, config=None,
                                 batch_norm=False, linear_sparse_combiner="sum"):
    """The `model_fn` of the combined estimators (see the module docstring)."""
    del config
    from flowgraph.framework.graph import control_dependencies
    from flowgraph.ops import control_flow_ops, state_ops
    from flowgraph.ops.variable_scope import variable_scope
    from flowgraph.train.training_util import get_global_step

    check_features_dict(features, "The DNN-linear combined model")
    linear_columns, dnn_columns = _validate_feature_columns(linear_feature_columns,
                                                            dnn_feature_columns)
    values = tuple(features.values())
    dnn_logits = linear_logits = None
    update_ops = []
    if dnn_columns:
        dnn_opt = optimizers.get_optimizer_instance(
            dnn_optimizer, learning_rate=optimizers.COMBINED_DNN_LEARNING_RATE)
        if not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is "
                             "specified.")
        with variable_scope("dnn", values=values) as scope:
            dnn_scope = scope.name + "/"
            dnn_logits = dnn_logit_fn_builder(
                head.logits_dimension, dnn_hidden_units, dnn_columns, dnn_activation_fn,
                dnn_dropout, batch_norm=batch_norm)(features, mode)
            if batch_norm:
                update_ops = update_ops_of(dnn_scope)
    if linear_columns:
        linear_opt = optimizers.get_optimizer_instance(
            linear_optimizer, learning_rate=optimizers.default_linear_learning_rate(
                len(linear_columns), optimizers.COMBINED_LINEAR_LEARNING_RATE))
        with variable_scope("linear", values=values) as scope:
            linear_scope = scope.name + "/"
            linear_logits = linear_logit_fn_builder(head.logits_dimension, linear_columns,
                                                    linear_sparse_combiner)(features)
            add_layer_summary(linear_logits, scope.name)

    if dnn_logits is not None and linear_logits is not None:
        logits = dnn_logits + linear_logits
    else:
        logits = dnn_logits if dnn_logits is not None else linear_logits

    def _train_op_fn(loss):
        parts = []
        if dnn_logits is not None:
            parts.append((dnn_opt, _trainable_under(dnn_scope)))
        if linear_logits is not None:
            parts.append((linear_opt, _trainable_under(linear_scope)))
        train_op = control_flow_ops.group(*_minimize_parts(loss, parts))
        with control_dependencies([train_op]):
            return state_ops.assign_add(get_global_step(), 1).op

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=_train_op_fn, logits=logits,
                                      update_ops=update_ops or None)


def _model_fn_for(head, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                  dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                  batch_norm, linear_sparse_combiner):
    linear, dnn = _validate_feature_columns(linear_feature_columns, dnn_feature_columns)
    if dnn and dnn_hidden_units is not None:
        dnn_hidden_units = _check_hidden_units(dnn_hidden_units)
    _check_dropout(dnn_dropout)
    _check_sparse_combiner(linear_sparse_combiner)

    def _model_fn(features, labels, mode, config):
        return dnn_linear_combined_model_fn(
            features, labels, mode, head, linear_feature_columns=linear,
            linear_optimizer=linear_optimizer, dnn_feature_columns=dnn,
            dnn_optimizer=dnn_optimizer, dnn_hidden_units=dnn_hidden_units,
            dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout, config=config,
            batch_norm=batch_norm, linear_sparse_combiner=linear_sparse_combiner)

    return _model_fn


class DNNLinearCombinedClassifier(Estimator):
    """A wide-and-deep classifier: linear and DNN logits summed.

    Parameters
    ----------
    model_dir : str, optional
    linear_feature_columns : iterable of FeatureColumn, optional
        Columns of the linear (wide) part; categorical columns enter directly.
    linear_optimizer : Optimizer, str or callable, default 'Ftrl'
        A name trains at ``min(0.005, 1/sqrt(len(linear_feature_columns)))``.
    dnn_feature_columns : iterable of FeatureColumn, optional
        Dense columns of the DNN (deep) part.
    dnn_optimizer : Optimizer, str or callable, default 'Adagrad'
        A name trains at 0.001.
    dnn_hidden_units : iterable of int
        Required with `dnn_feature_columns`.
    dnn_activation_fn : callable, default tf.nn.relu
    dnn_dropout : float, optional
    n_classes : int, default 2
    weight_column : str or NumericColumn, optional
    label_vocabulary : list of str, optional
    config : RunConfig, optional
    warm_start_from : str or WarmStartSettings, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.
    batch_norm : bool, default False
    linear_sparse_combiner : {'sum', 'mean', 'sqrtn'}, default 'sum'

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNLinearCombinedClassifier(
    ...     linear_feature_columns=[tf.feature_column.numeric_column("a")],
    ...     dnn_feature_columns=[tf.feature_column.numeric_column("b")],
    ...     dnn_hidden_units=[4])
    >>> type(est).__name__
    'DNNLinearCombinedClassifier'
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=relu, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None,
                 loss_reduction=SUM, batch_norm=False,
                 linear_sparse_combiner="sum") -> None:
        del input_layer_partitioner  # variables are never partitioned in flowgraph
        _validate_feature_columns(linear_feature_columns, dnn_feature_columns)
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(
            model_fn=_model_fn_for(head, linear_feature_columns, linear_optimizer,
                                   dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, batch_norm,
                                   linear_sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedRegressor(Estimator):
    """A wide-and-deep regressor (squared error).

    Parameters are those of `DNNLinearCombinedClassifier`, with ``label_dimension``
    (default 1) instead of ``n_classes`` and ``label_vocabulary``.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNLinearCombinedRegressor(
    ...     linear_feature_columns=[tf.feature_column.numeric_column("a")])
    >>> type(est).__name__
    'DNNLinearCombinedRegressor'
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None,
                 loss_reduction=SUM, batch_norm=False,
                 linear_sparse_combiner="sum") -> None:
        del input_layer_partitioner  # variables are never partitioned in flowgraph
        _validate_feature_columns(linear_feature_columns, dnn_feature_columns)
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(
            model_fn=_model_fn_for(head, linear_feature_columns, linear_optimizer,
                                   dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, batch_norm,
                                   linear_sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedEstimator(Estimator):
    """The wide-and-deep model on any `head`.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNLinearCombinedEstimator(
    ...     tf.estimator.MultiLabelHead(n_classes=3),
    ...     linear_feature_columns=[tf.feature_column.numeric_column("a")])
    >>> type(est).__name__
    'DNNLinearCombinedEstimator'
    """

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
                 dnn_hidden_units=None, dnn_activation_fn=relu, dnn_dropout=None,
                 input_layer_partitioner=None, config=None, batch_norm=False,
                 linear_sparse_combiner="sum") -> None:
        del input_layer_partitioner  # variables are never partitioned in flowgraph
        _validate_feature_columns(linear_feature_columns, dnn_feature_columns)
        super().__init__(
            model_fn=_model_fn_for(head, linear_feature_columns, linear_optimizer,
                                   dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, batch_norm,
                                   linear_sparse_combiner),
            model_dir=model_dir, config=config)
