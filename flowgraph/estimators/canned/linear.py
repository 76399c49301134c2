"""`LinearClassifier`, `LinearRegressor`, `LinearEstimator`: a head on a linear model.

The logits are ``tf.feature_column.linear_model(features, feature_columns,
units=head.logits_dimension, sparse_combiner=...)`` built under the variable scope
``linear`` with a partitioner, as TF's canned model builds them: `partitioner`, or by
default ``min_max_variable_partitioner(max_partitions=config.num_ps_replicas,
min_slice_size=64 << 20)`` (one part outside a parameter-server cluster). So the
variables are parts ``linear/linear_model/<column>/weights/part_<i>`` and
``linear/linear_model/bias_weights/part_<i>``, saved under their full names (one part is
saved whole), and the optimizer, run inside that scope as in TF, names the slots
``linear/linear/linear_model/<column>/weights/part_<i>/Ftrl``, which TF's slot rule
(`flowgraph.train.slot_creator`) saves as the slice of entry
``linear/linear_model/<column>/weights/part_<i>/Ftrl``: a checkpoint holds TF's keys and
slices, so either framework continues training from the other's. Categorical columns
(hashed, vocabulary, crossed) enter directly, one weight per bucket; dense columns one
weight per value.

Training minimizes the head's loss with FTRL by default (see `canned.optimizers` for the
learning rates). Summaries: ``linear/bias`` (a scalar for one logit, a histogram
otherwise) and ``linear/fraction_of_zero_weights``.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> x = np.linspace(-1, 1, 64, dtype=np.float32)
>>> est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")],
...                                    config=tf.estimator.RunConfig(tf_random_seed=1))
>>> _ = est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, 3 * x + 1, batch_size=16,
...                                                  num_epochs=None, shuffle=True),
...               steps=400)
>>> w = est.get_variable_value("linear/linear_model/x/weights")
>>> b = est.get_variable_value("linear/linear_model/bias_weights")
>>> round(float(w[0, 0]), 1), round(float(b[0]), 1)
(3.0, 1.0)
"""

from __future__ import annotations

import re

from flowgraph.estimators.canned import optimizers
from flowgraph.estimators.canned.baseline import (
    binary_or_multi_class_head,
    check_features_dict,
    regression_head,
)
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.head.base_head import SUM

__all__ = ["LinearClassifier", "LinearEstimator", "LinearRegressor",
           "linear_logit_fn_builder"]

_SPARSE_COMBINERS = ("mean", "sqrtn", "sum")


def as_column_list(feature_columns) -> list:
    """Feature columns as a list (a single column becomes a list of one)."""
    if feature_columns is None:
        return []
    if isinstance(feature_columns, (list, tuple, set, frozenset)) and not hasattr(
            feature_columns, "_fields"):
        return list(feature_columns)
    if hasattr(feature_columns, "name"):
        return [feature_columns]
    return list(feature_columns)


def feature_column_lib():
    """`flowgraph.feature_column` (imported when a model is built)."""
    try:
        from flowgraph import feature_column
    except ImportError as e:  # pragma: no cover - only while the package is missing
        raise ImportError(f"canned estimators need flowgraph.feature_column: {e}") from e
    return feature_column


def _check_sparse_combiner(sparse_combiner) -> None:
    if sparse_combiner not in _SPARSE_COMBINERS:
        raise ValueError(f"sparse_combiner must be one of {_SPARSE_COMBINERS}; got "
                         f"{sparse_combiner!r}")


def _fraction_of_zero(variables):
    from flowgraph.framework import dtypes
    from flowgraph.ops import array_ops, math_ops, math_reduce

    zeros, total = [], []
    for v in variables:
        zeros.append(math_reduce.reduce_sum(math_ops.cast(math_ops.equal(v, 0.0),
                                                          dtypes.float32)))
        total.append(math_ops.cast(array_ops.size(v), dtypes.float32))
    return math_reduce.add_n(zeros) / math_ops.maximum(math_reduce.add_n(total), 1.0)


def _add_linear_summaries(units: int, scope_name: str) -> None:
    from flowgraph.framework.graph import GraphKeys, get_collection
    from flowgraph.summary import histogram, scalar

    variables = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=scope_name)
    # the bias, or its parts (``bias_weights/part_<i>``) under a partitioner
    bias = [v for v in variables if re.search(r"/bias_weights(/part_\d+)?$", v.op.name)]
    weights = [v for v in variables if all(v is not b for b in bias)]
    if bias:
        from flowgraph.ops.array_ops import concat

        value = bias[0] if len(bias) == 1 else concat(bias, 0)
        if units > 1:
            histogram("bias", value)
        else:
            scalar("bias", value[0])
    if weights:
        scalar("fraction_of_zero_weights", _fraction_of_zero(weights))


def linear_logit_fn_builder(units: int, feature_columns, sparse_combiner: str = "sum"):
    """A ``logit_fn(features)`` computing `units` linear logits of `feature_columns`.

    Called inside a variable scope (the estimators use ``linear``), it creates the
    variables ``<scope>/linear_model/...``.

    Example
    -------
    >>> import flowgraph as tf
    >>> fn = linear_logit_fn_builder(2, [tf.feature_column.numeric_column("x", shape=[3])])
    >>> with tf.variable_scope("linear"):
    ...     logits = fn({"x": tf.zeros([4, 3])})
    >>> logits.shape.as_list()
    [4, 2]
    """
    if isinstance(units, bool) or not isinstance(units, int):
        raise ValueError(f"units must be an int.  Given type: {type(units)}")
    _check_sparse_combiner(sparse_combiner)
    columns = as_column_list(feature_columns)

    def linear_logit_fn(features):
        from flowgraph.ops.variable_scope import get_variable_scope

        fc = feature_column_lib()
        logits = fc.linear_model(features, columns, units=units,
                                 sparse_combiner=sparse_combiner)
        scope = get_variable_scope().name
        _add_linear_summaries(units, (scope + "/" if scope else "") + "linear_model/")
        return logits

    return linear_logit_fn


def linear_model_fn(features, labels, mode, head, feature_columns, optimizer, config=None,
                    sparse_combiner="sum", partitioner=None):
    """The `model_fn` of the linear estimators: linear logits under ``linear`` (its
    variables split by `partitioner`, by default into ``config.num_ps_replicas`` parts at
    most), trained by `optimizer` (a name trains at 0.2; None at
    ``min(0.2, 1/sqrt(n_columns))``)."""
    check_features_dict(features, "The linear model")
    columns = as_column_list(feature_columns)
    from flowgraph.ops.variable_scope import variable_scope

    if partitioner is None:
        from flowgraph.ops.scope_compat import min_max_variable_partitioner

        # at most num_ps_replicas parts (the partitioner makes at least one)
        replicas = int(getattr(config, "num_ps_replicas", 0) or 0)
        partitioner = min_max_variable_partitioner(max_partitions=replicas,
                                                   min_slice_size=64 << 20)

    with variable_scope("linear", values=tuple(features.values()), partitioner=partitioner):
        logits = linear_logit_fn_builder(head.logits_dimension, columns,
                                         sparse_combiner)(features)
        if optimizer is None:
            optimizer = optimizers.get_optimizer_instance(
                "Ftrl", optimizers.default_linear_learning_rate(
                    len(columns), optimizers.LINEAR_LEARNING_RATE))
        opt = optimizers.get_optimizer_instance(optimizer,
                                                learning_rate=optimizers.LINEAR_LEARNING_RATE)
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          optimizer=opt, logits=logits)


def _model_fn_for(head, feature_columns, optimizer, sparse_combiner, partitioner=None):
    columns = tuple(as_column_list(feature_columns))
    _check_sparse_combiner(sparse_combiner)

    def _model_fn(features, labels, mode, config):
        return linear_model_fn(features, labels, mode, head, columns, optimizer,
                               config=config, sparse_combiner=sparse_combiner,
                               partitioner=partitioner)

    return _model_fn


class LinearClassifier(Estimator):
    """A linear classifier: logistic regression for two classes, softmax (multinomial)
    regression for more.

    Parameters
    ----------
    feature_columns : iterable of FeatureColumn
        Dense and categorical columns (categorical ones need no indicator/embedding).
    model_dir : str, optional
    n_classes : int, default 2
    weight_column : str or NumericColumn, optional
        The feature that weights each example's loss.
    label_vocabulary : list of str, optional
        String labels, in class-id order.
    optimizer : Optimizer, str or callable, default 'Ftrl'
        A name trains at learning rate 0.2; None uses FTRL at ``min(0.2, 1/sqrt(n))`` for
        n feature columns.
    config : RunConfig, optional
    partitioner : callable, optional
        Partitions the weights (``tf.fixed_size_partitioner(2)``,
        ``tf.min_max_variable_partitioner(...)``), as in TF.
    warm_start_from : str or WarmStartSettings, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.
    sparse_combiner : {'sum', 'mean', 'sqrtn'}, default 'sum'
        How a multivalent categorical feature's weights combine.

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.LinearClassifier(
    ...     [tf.feature_column.numeric_column("x", shape=[4])], n_classes=3)
    >>> type(est).__name__
    'LinearClassifier'
    """

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=SUM, sparse_combiner="sum") -> None:
        head = binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                          loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, feature_columns, optimizer,
                                                sparse_combiner, partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearRegressor(Estimator):
    """Linear regression (squared error) on feature columns.

    Parameters
    ----------
    feature_columns : iterable of FeatureColumn
    model_dir : str, optional
    label_dimension : int, default 1
        Values per label.
    weight_column : str or NumericColumn, optional
    optimizer : Optimizer, str or callable, default 'Ftrl'
        As for `LinearClassifier`.
    config : RunConfig, optional
    partitioner : callable, optional
        As for `LinearClassifier`.
    warm_start_from : str or WarmStartSettings, optional
    loss_reduction : str, default SUM
        TF1's default: a batch's loss is the weighted sum over its examples.
    sparse_combiner : {'sum', 'mean', 'sqrtn'}, default 'sum'

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")],
    ...                                    label_dimension=2)
    >>> type(est).__name__
    'LinearRegressor'
    """

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=SUM, sparse_combiner="sum") -> None:
        head = regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(model_fn=_model_fn_for(head, feature_columns, optimizer,
                                                sparse_combiner, partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearEstimator(Estimator):
    """The linear model on any `head` (e.g. `MultiLabelHead`, `PoissonRegressionHead`).

    Example
    -------
    >>> import flowgraph as tf
    >>> est = tf.estimator.LinearEstimator(tf.estimator.MultiLabelHead(n_classes=3),
    ...                                    [tf.feature_column.numeric_column("x")])
    >>> type(est).__name__
    'LinearEstimator'
    """

    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl", config=None,
                 partitioner=None, sparse_combiner="sum", warm_start_from=None) -> None:
        super().__init__(model_fn=_model_fn_for(head, feature_columns, optimizer,
                                                sparse_combiner, partitioner),
                         model_dir=model_dir, config=config, warm_start_from=warm_start_from)
