"""`DNNClassifier`, `DNNRegressor`, `DNNEstimator`: a head on a feed-forward network.

The network, built under the variable scope ``dnn`` with TF's variable names::

    input_from_feature_columns/input_layer   tf.feature_column.input_layer(features, columns)
    hiddenlayer_0/{kernel,bias}              dense, activation_fn, glorot-uniform kernel
      [dropout(rate) in TRAIN mode]
      [hiddenlayer_0/batchnorm_0/{gamma,beta,moving_mean,moving_variance}, momentum 0.999]
    hiddenlayer_1/...                        one per entry of hidden_units
    logits/{kernel,bias}                     dense to head.logits_dimension units

Each layer writes TF's summaries ``dnn/<layer>/fraction_of_zero_values`` and
``dnn/<layer>/activation``. With ``batch_norm=True`` the moving-average updates run with
every train step. The default optimizer is Adagrad at learning rate 0.05.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> rng = np.random.RandomState(0)
>>> x = rng.randn(200, 2).astype(np.float32)
>>> y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)          # XOR: not linearly separable
>>> est = tf.estimator.DNNClassifier([16, 16], [tf.feature_column.numeric_column("x", [2])],
...                                  optimizer="Adam",
...                                  config=tf.estimator.RunConfig(tf_random_seed=1))
>>> _ = est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=32,
...                                                  num_epochs=None, shuffle=True),
...               steps=600)
>>> acc = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x}, y, shuffle=False))
>>> bool(acc["accuracy"] > 0.9)
True
"""

from __future__ import annotations

import numbers

from flowgraph.estimators.canned import optimizers
from flowgraph.estimators.canned.baseline import (
    add_layer_summary,
    binary_or_multi_class_head,
    check_features_dict,
    regression_head,
)
from flowgraph.estimators.canned.linear import as_column_list, feature_column_lib
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.head.base_head import SUM
from flowgraph.ops.nn_ops import relu

__all__ = ["DNNClassifier", "DNNEstimator", "DNNRegressor", "dnn_logit_fn_builder"]


def _check_hidden_units(hidden_units) -> tuple[int, ...]:
    if hidden_units is None or isinstance(hidden_units, (str, bytes)):
        raise ValueError(f"hidden_units must be an iterable of positive integers (units per "
                         f"hidden layer), e.g. [64, 32]; got {hidden_units!r}")
    try:
        units = tuple(hidden_units)
    except TypeError:
        raise ValueError(f"hidden_units must be an iterable of positive integers (units per "
                         f"hidden layer), e.g. [64, 32]; got {hidden_units!r}") from None
    for u in units:
        if isinstance(u, bool) or not isinstance(u, numbers.Integral) or u <= 0:
            raise ValueError(f"hidden_units must hold positive integers; got {list(units)}")
    return tuple(int(u) for u in units)


def _check_dropout(dropout) -> None:
    if dropout is not None and not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"dropout is the probability of dropping a unit and must be in "
                         f"[0, 1); got {dropout}")


def dnn_logit_fn_builder(units: int, hidden_units, feature_columns, activation_fn, dropout,
                         input_layer_partitioner=None, batch_norm: bool = False):
    """A ``logit_fn(features, mode)`` computing `units` logits of a feed-forward network.

    Called inside a variable scope (the estimators use ``dnn``), it creates the variables
    ``<scope>/hiddenlayer_<i>/...`` and ``<scope>/logits/...``; the input layer's variables
    are split by `input_layer_partitioner` (None: the enclosing scope's partitioner).

    Example
    -------
    >>> import flowgraph as tf
    >>> fn = dnn_logit_fn_builder(3, [8], [tf.feature_column.numeric_column("x", [2])],
    ...                           tf.nn.relu, dropout=None)
    >>> with tf.variable_scope("dnn"):
    ...     logits = fn({"x": tf.zeros([5, 2])}, mode="infer")
    >>> logits.shape.as_list(), sorted(v.op.name for v in tf.trainable_variables())
    ([5, 3], ['dnn/hiddenlayer_0/bias', 'dnn/hiddenlayer_0/kernel', 'dnn/logits/bias', \
'dnn/logits/kernel'])
    """
    if isinstance(units, bool) or not isinstance(units, int):
        raise ValueError(f"units must be an int.  Given type: {type(units)}")
    hidden = _check_hidden_units(hidden_units)
    _check_dropout(dropout)
    columns = as_column_list(feature_columns)

    def dnn_logit_fn(features, mode):
        from flowgraph.estimators.model_fn import ModeKeys
        from flowgraph.layers.core import dense
        from flowgraph.layers.core import dropout as dropout_layer
        from flowgraph.layers.normalization import batch_normalization
        from flowgraph.ops.init_ops import glorot_uniform_initializer
        from flowgraph.ops.variable_scope import get_variable_scope, variable_scope

        training = mode == ModeKeys.TRAIN
        prefix = get_variable_scope().name
        prefix = prefix + "/" if prefix else ""
        with variable_scope("input_from_feature_columns",
                            partitioner=input_layer_partitioner):
            net = feature_column_lib().input_layer(features, columns)
        for i, n in enumerate(hidden):
            name = f"hiddenlayer_{i}"
            net = dense(net, n, activation=activation_fn,
                        kernel_initializer=glorot_uniform_initializer(), name=name)
            if dropout is not None and training:
                net = dropout_layer(net, rate=dropout, training=True)
            if batch_norm:
                with variable_scope(name):
                    net = batch_normalization(net, momentum=0.999, training=training,
                                              name=f"batchnorm_{i}")
            add_layer_summary(net, prefix + name)
        logits = dense(net, units, activation=None,
                       kernel_initializer=glorot_uniform_initializer(), name="logits")
        add_layer_summary(logits, prefix + "logits")
        return logits

    return dnn_logit_fn


def update_ops_of(scope: str) -> list:
    """The ``UPDATE_OPS`` (batch-norm moving averages) created under `scope`."""
    from flowgraph.framework.graph import GraphKeys, get_collection

    return list(get_collection(GraphKeys.UPDATE_OPS, scope=scope))


def dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                 optimizer="Adagrad", activation_fn=relu, dropout=None, config=None,
                 batch_norm=False, input_layer_partitioner=None):
    """The `model_fn` of the DNN estimators: logits under ``dnn``, trained by
    `optimizer` (a name trains at 0.05).

    As in TensorFlow, ``dnn`` partitions its variables into at most
    ``config.num_ps_replicas`` parts (at least one; the input layer's by default with a
    64 MiB minimum slice) and the optimizer runs inside it, so the checkpoint keys its
    slots ``dnn/hiddenlayer_0/kernel/t_0/Adagrad``, as TF's do.
    """
    from flowgraph.ops.scope_compat import min_max_variable_partitioner

    replicas = int(getattr(config, "num_ps_replicas", 0) or 0)
    partitioner = min_max_variable_partitioner(max_partitions=replicas)
    input_layer_partitioner = input_layer_partitioner or min_max_variable_partitioner(
        max_partitions=replicas, min_slice_size=64 << 20)
    opt = optimizers.get_optimizer_instance(optimizer,
                                            learning_rate=optimizers.DNN_LEARNING_RATE)
    check_features_dict(features, "The DNN model")
    from flowgraph.ops.variable_scope import variable_scope

    with variable_scope("dnn", values=tuple(features.values()),
                        partitioner=partitioner) as scope:
        logits = dnn_logit_fn_builder(head.logits_dimension, hidden_units, feature_columns,
                                      activation_fn, dropout, input_layer_partitioner,
                                      batch_norm=batch_norm)(features, mode)
        update_ops = update_ops_of(scope.name + "/") if batch_norm else None
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          optimizer=opt, logits=logits,
                                          update_ops=update_ops or None)


def _model_fn_for(head, hidden_units, feature_columns, optimizer, activation_fn, dropout,
                  batch_norm, input_layer_partitioner=None):
    hidden = _check_hidden_units(hidden_units)
    _check_dropout(dropout)
    columns = tuple(as_column_list(feature_columns))

    def _model_fn(features, labels, mode, config):
        return dnn_model_fn(features, labels, mode, head, hidden, columns,
                            optimizer=optimizer, activation_fn=activation_fn,
                            dropout=dropout, config=config, batch_norm=batch_norm,
                            input_layer_partitioner=input_layer_partitioner)

    return _model_fn


class DNNClassifier(Estimator):
    """A feed-forward neural network classifier.

    Parameters
    ----------
    hidden_units : iterable of int
        Units per hidden layer, e.g. ``[64, 32]``.
    feature_columns : iterable of FeatureColumn
        Dense columns (numeric, indicator, embedding, bucketized).
    model_dir : str, optional
    n_classes : int, default 2
    weight_column : str or NumericColumn, optional
    label_vocabulary : list of str, optional
    optimizer : Optimizer, str or callable, default 'Adagrad'
        A name trains at learning rate 0.05.
    activation_fn : callable, default tf.nn.relu
    dropout : float, optional
        Probability of dropping a hidden unit during training.
    config : RunConfig, optional
    warm_start_from : str or WarmStartSettings, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.
    batch_norm : bool, default False
        Batch normalization after each hidden layer.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNClassifier([10, 10], [tf.feature_column.numeric_column("x")],
    ...                                  n_classes=4)
    >>> type(est).__name__
    'DNNClassifier'
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=relu, dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=SUM, batch_norm=False) -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, hidden_units, feature_columns,
                                                optimizer, activation_fn, dropout,
                                                batch_norm, input_layer_partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNRegressor(Estimator):
    """A feed-forward neural network regressor (squared error).

    Parameters are those of `DNNClassifier`, with ``label_dimension`` (default 1)
    instead of ``n_classes`` and ``label_vocabulary``.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNRegressor([8], [tf.feature_column.numeric_column("x")])
    >>> type(est).__name__
    'DNNRegressor'
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=SUM, batch_norm=False) -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, hidden_units, feature_columns,
                                                optimizer, activation_fn, dropout,
                                                batch_norm, input_layer_partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNEstimator(Estimator):
    """The feed-forward network on any `head`.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.DNNEstimator(tf.estimator.MultiLabelHead(n_classes=3), [8],
    ...                                 [tf.feature_column.numeric_column("x")])
    >>> type(est).__name__
    'DNNEstimator'
    """

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer="Adagrad", activation_fn=relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm=False) -> None:
        super().__init__(model_fn=_model_fn_for(head, hidden_units, feature_columns,
                                                optimizer, activation_fn, dropout,
                                                batch_norm, input_layer_partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)
