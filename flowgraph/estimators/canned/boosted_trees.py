"""`BoostedTreesClassifier`, `BoostedTreesRegressor`: gradient-boosted trees grown layer
by layer (TensorFlow 1.x's estimators; tensorflow_estimator 2.15 no longer has them).

Each ``train`` step is one batch: its per-example gradients and hessians of the head's
loss (``SUM_OVER_BATCH_SIZE``, so both carry a ``1/batch_size``) are summed per feature,
bucket and node of the tree being grown; once `n_batches_per_layer` batches are in, the
averaged sums choose each node's best split (gain with `l1_regularization`,
`l2_regularization` and `tree_complexity`; `min_node_weight` the least hessian sum of a
node to split) and a layer is added, the children's values shrunk by `learning_rate`.
A tree is finished after `max_depth` layers; training stops by itself when `n_trees` are
(the global step counts batches). With ``center_bias`` the first batches fit the bias
first. The ensemble lives in the variables ``boosted_trees/ensemble/*`` (see
`boosted_trees_core`), so checkpoints hold it and a new Estimator predicts the same.

Features are ``bucketized_column`` (a split compares the bucket id) and
``indicator_column`` (one 0/1 feature per category), taken in the order of the columns'
names, as TensorFlow does.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> x = np.array([0., 1., 2., 3.] * 5, np.float32)
>>> y = (x >= 2).astype(np.int64)
>>> col = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"),
...                                           [0.5, 1.5, 2.5])
>>> est = tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1, n_trees=2,
...                                           max_depth=1, learning_rate=1.0)
>>> inp = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, shuffle=False,
...                                          num_epochs=None)
>>> _ = est.train(inp)                      # stops by itself after 2 trees
>>> int(est.get_variable_value("global_step"))
2
"""

from __future__ import annotations

import numpy as np

from flowgraph.estimators.canned import boosted_trees_core as core
from flowgraph.estimators.canned.baseline import (
    binary_or_multi_class_head,
    check_features_dict,
    regression_head,
)
from flowgraph.estimators.canned.boosted_trees_features import (
    bucket_ids,
    feature_names,
    num_buckets,
    sorted_columns,
    sum_by_name,
)
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.head.base_head import SUM_OVER_BATCH_SIZE
from flowgraph.train.session_run_hook import SessionRunHook

__all__ = ["BoostedTreesClassifier", "BoostedTreesEstimator", "BoostedTreesRegressor"]

_SCOPE = "boosted_trees/ensemble"
_BUCKET_IDS_KEY = "_bucket_ids"
_STATE_KEYS = ("feature", "threshold", "left", "value", "original", "gain", "tree_meta",
               "growing", "stats", "bias_stats")


# -- the ensemble in variables ---------------------------------------------------------
def _state_variables(params, num_features, num_buckets) -> dict:
    from flowgraph.framework.graph import GraphKeys
    from flowgraph.ops.init_ops import constant_initializer
    from flowgraph.ops.variable_scope import get_variable, variable_scope

    init = core.init_state(params, num_features, num_buckets)
    with variable_scope(_SCOPE):
        return {k: get_variable(k, shape=v.shape, dtype=_dtype_of(v),
                                initializer=constant_initializer(v), trainable=False,
                                collections=[GraphKeys.GLOBAL_VARIABLES])
                for k, v in init.items()}


def _dtype_of(array):
    from flowgraph.framework import dtypes

    return dtypes.int32 if array.dtype == np.int32 else dtypes.float32


def _ensemble_logits(state, x, max_depth: int):
    """Graph ops: the sum over trees of the leaf value each example reaches ([N, 1]).
    Unused tree slots hold a single zero leaf."""
    from flowgraph.framework import dtypes
    from flowgraph.ops import array_gen_ops, array_index_ops, array_join_ops, math_ops
    from flowgraph.ops import array_shape_ops as shp
    from flowgraph.ops.math_reduce import reduce_sum

    slots = int(state["feature"].shape[0])
    batch = shp.shape(x)[0]
    trees = array_join_ops.tile(shp.expand_dims(array_gen_ops.range(0, slots), 0),
                                array_join_ops.stack([batch, 1]))           # [N, S]
    rows = array_join_ops.tile(shp.expand_dims(array_gen_ops.range(0, batch), 1),
                               [1, slots])                                   # [N, S]
    nodes = trees * 0

    def lookup(table, node_ids):
        return array_index_ops.gather_nd(table, array_join_ops.stack([trees, node_ids], -1))

    for _ in range(max_depth):
        feature = lookup(state["feature"], nodes)
        bucket = array_index_ops.gather_nd(
            x, array_join_ops.stack([rows, math_ops.maximum(feature, 0)], -1))
        left = lookup(state["left"], nodes)
        child = array_index_ops.where(
            math_ops.less_equal(bucket, lookup(state["threshold"], nodes)), left, left + 1)
        nodes = array_index_ops.where(math_ops.greater_equal(feature, 0), child, nodes)
    values = lookup(state["value"], nodes)
    return math_ops.cast(reduce_sum(values, axis=1, keepdims=True), dtypes.float32)


def _add_ensemble_summaries(state) -> None:
    """TF's training summaries ``<scope>/ensemble/{num_trees, num_finalized_trees,
    num_attempted_layers}``."""
    from flowgraph.ops.math_reduce import reduce_sum
    from flowgraph.summary import scalar

    growing = state["growing"]
    scalar("ensemble/num_trees", growing[core.NUM_TREES])
    scalar("ensemble/num_finalized_trees", reduce_sum(state["tree_meta"][:, 2]))
    scalar("ensemble/num_attempted_layers", growing[core.LAYERS_ATTEMPTED])


class _StopAfterTreesHook(SessionRunHook):
    """Stops training once the ensemble is complete (see `core.is_finished`)."""

    def __init__(self, state, params) -> None:
        self._state, self._params = state, params

    def after_run(self, run_context, run_values):
        meta, growing = run_context.session.run([self._state["tree_meta"],
                                                 self._state["growing"]])
        if core.is_finished({"tree_meta": meta, "growing": growing}, self._params):
            run_context.request_stop()


def _grads_and_hessians(loss, logits, labels, closed_form: bool):
    """Per-example first and second derivatives of the training loss by the logits
    (TF's closed form for an unweighted binary log loss, else two `gradients` passes)."""
    from flowgraph.framework import dtypes
    from flowgraph.ops import array_shape_ops, math_ops
    from flowgraph.ops.gradients import gradients

    if closed_form:
        p = math_ops.sigmoid(logits)
        y = array_shape_ops.reshape(math_ops.cast(labels, dtypes.float32), [-1, 1])
        norm = 1.0 / math_ops.cast(array_shape_ops.size(p), dtypes.float32)
        return (p - y) * norm, p * (1.0 - p) * norm
    grads = gradients(loss, logits)[0]
    return grads, gradients(grads, logits)[0]


def _bt_model_fn(features, labels, mode, head, columns, params, config, closed_form,
                 with_bucket_ids=False):
    from flowgraph.estimators.model_fn import ModeKeys
    from flowgraph.framework import dtypes
    from flowgraph.framework.graph import control_dependencies, name_scope
    from flowgraph.ops import state_ops
    from flowgraph.ops.control_flow_ops import group
    from flowgraph.ops.script_ops import py_func
    from flowgraph.train.training_util import get_or_create_global_step

    del config
    check_features_dict(features, "BoostedTrees")
    global_step = get_or_create_global_step()
    with name_scope("boosted_trees"):
        x = bucket_ids(features, columns)
        state = _state_variables(params, len(feature_names(columns)), num_buckets(columns))
        logits = _ensemble_logits(state, x, params.max_depth)
        if mode == ModeKeys.TRAIN:
            _add_ensemble_summaries(state)

    def _train_op_fn(loss):
        grads, hess = _grads_and_hessians(loss, logits, labels, closed_form)

        def step(xv, gv, hv, *values):
            new = core.train_step(dict(zip(_STATE_KEYS, values)), xv, gv, hv, params)
            return [new[k] for k in _STATE_KEYS]

        with name_scope("boosted_trees_train"):
            new = py_func(step, [x, grads, hess] + [state[k] for k in _STATE_KEYS],
                          [dtypes.int32 if state[k].dtype.base_dtype == dtypes.int32
                           else dtypes.float32 for k in _STATE_KEYS], name="GrowEnsemble")
            assigns = [state_ops.assign(state[k], v, validate_shape=False)
                       for k, v in zip(_STATE_KEYS, new)]
            with control_dependencies(assigns):
                return group(state_ops.assign_add(global_step, 1), name="train_op")

    spec = head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=_train_op_fn, logits=logits)
    if with_bucket_ids:
        spec.predictions[_BUCKET_IDS_KEY] = x
    if mode == ModeKeys.TRAIN:
        spec = spec._replace(training_hooks=(*spec.training_hooks,
                                             _StopAfterTreesHook(state, params)))
    return spec


def _is_binary_head(head) -> bool:
    from flowgraph.estimators.head.binary_class_head import BinaryClassHead

    return isinstance(head, BinaryClassHead)


# -- the estimators --------------------------------------------------------------------
def _check_params(n_batches_per_layer, n_trees, max_depth, learning_rate, l1, l2,
                  tree_complexity, min_node_weight, pruning_mode, train_in_memory):
    if n_batches_per_layer is None or int(n_batches_per_layer) < 1:
        raise ValueError(f"n_batches_per_layer must be a positive integer; got "
                         f"{n_batches_per_layer!r}")
    if int(n_trees) < 1 or int(max_depth) < 1:
        raise ValueError(f"n_trees and max_depth must be positive; got n_trees={n_trees}, "
                         f"max_depth={max_depth}")
    if learning_rate <= 0:
        raise ValueError(f"learning_rate must be positive; got {learning_rate}")
    for name, v in (("l1_regularization", l1), ("l2_regularization", l2),
                    ("tree_complexity", tree_complexity), ("min_node_weight",
                                                           min_node_weight)):
        if v < 0:
            raise ValueError(f"{name} must be non-negative; got {v}")
    if pruning_mode not in core.PRUNING_MODES:
        raise ValueError(f"pruning_mode must be one of {sorted(core.PRUNING_MODES)}; got "
                         f"{pruning_mode!r}")
    if tree_complexity > 0 and pruning_mode == "none":
        raise ValueError("Tree complexity have no effect unless pruning mode is chosen.")
    if tree_complexity <= 0 and pruning_mode != "none":
        raise ValueError("For pruning, tree_complexity must be positive.")
    if train_in_memory and int(n_batches_per_layer) != 1:
        raise ValueError("When train_in_memory is enabled, input_fn should return the "
                         "entire dataset as a single batch, and n_batches_per_layer "
                         "should be set as 1.")


class _BoostedTreesBase(Estimator):
    def __init__(self, head, feature_columns, n_batches_per_layer, model_dir, n_trees,
                 max_depth, learning_rate, l1_regularization, l2_regularization,
                 tree_complexity, min_node_weight, config, center_bias, pruning_mode,
                 train_in_memory, closed_form) -> None:
        _check_params(n_batches_per_layer, n_trees, max_depth, learning_rate,
                      l1_regularization, l2_regularization, tree_complexity,
                      min_node_weight, pruning_mode, train_in_memory)
        columns = sorted_columns(feature_columns)
        params = core.TreeParams(n_trees, max_depth, learning_rate, l1_regularization,
                                 l2_regularization, tree_complexity, min_node_weight,
                                 pruning_mode, n_batches_per_layer, center_bias)
        self._bt_columns, self._bt_params, self._bt_head = columns, params, head

        def _model_fn(features, labels, mode, config):
            return _bt_model_fn(features, labels, mode, head, columns, params, config,
                                closed_form)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)

    def experimental_feature_importances(self, normalize: bool = False):
        """Gain-based importances from the latest checkpoint: an OrderedDict of feature
        column name -> the summed gain of its splits over the ensemble, highest first;
        `normalize` divides by the total (ValueError when there is no split)."""
        names = feature_names(self._bt_columns)
        state = {k: self.get_variable_value(f"{_SCOPE}/{k}")
                 for k in ("feature", "gain", "growing")}
        gains = core.feature_gains(state, len(names))
        if normalize:
            total = gains.sum()
            if not total > 0:
                raise ValueError("Cannot normalize the feature importances: the trees are "
                                 "all empty or contain only a root node.")
            gains = gains / total
        return sum_by_name(names, gains)

    def experimental_predict_with_explanations(self, input_fn, predict_keys=None, hooks=None,
                                               checkpoint_path=None):
        """`predict`, each prediction with ``bias`` and ``dfc``: the directional feature
        contributions, an OrderedDict of column name -> its summed changes of the
        prediction (probability for classifiers) along the example's path through the
        trees, largest magnitude first; ``bias + sum(dfc.values())`` is the prediction.
        Needs ``center_bias=True``."""
        from flowgraph.train.checkpoint_utils import load_checkpoint

        if not self._bt_params.center_bias:
            raise ValueError("center_bias must be enabled during estimator instantiation "
                             "when using experimental_predict_with_explanations.")
        if predict_keys is not None:
            predict_keys = sorted(set(predict_keys) | {_BUCKET_IDS_KEY})
        columns, params, head = self._bt_columns, self._bt_params, self._bt_head

        def model_fn(features, labels, mode, config):
            return _bt_model_fn(features, labels, mode, head, columns, params, config,
                                False, with_bucket_ids=True)

        est = Estimator(model_fn=model_fn, model_dir=self.model_dir, config=self.config)
        reader = load_checkpoint(checkpoint_path or self.model_dir)
        state = {k: reader.get_tensor(f"{_SCOPE}/{k}")
                 for k in ("value", "feature", "threshold", "left", "growing")}
        names = feature_names(columns)
        for pred in est.predict(input_fn, predict_keys=predict_keys, hooks=hooks,
                                checkpoint_path=checkpoint_path):
            features, path = core.debug_path(state, pred.pop(_BUCKET_IDS_KEY))
            path = np.asarray(path, np.float64)
            if _is_binary_head(head):
                path = 1.0 / (1.0 + np.exp(-path))
            dfc = np.zeros(len(names))
            np.add.at(dfc, np.asarray(features, np.int64), np.diff(path))
            pred["bias"], pred["dfc"] = float(path[0]), sum_by_name(names, dfc)
            yield pred


class BoostedTreesClassifier(_BoostedTreesBase):
    """A binary classifier of gradient-boosted trees (TF 1.x's signature and defaults).

    Parameters
    ----------
    feature_columns : iterable of bucketized_column / indicator_column
    n_batches_per_layer : int
        Batches whose statistics are averaged before each layer is grown.
    model_dir : str, optional
    n_classes : int, default 2
        Only binary classification, as in TensorFlow 1.x.
    weight_column : str or NumericColumn, optional
    label_vocabulary : list of str, optional
    n_trees : int, default 100
    max_depth : int, default 6
    learning_rate : float, default 0.1
        Shrinkage of each new leaf's weight.
    l1_regularization, l2_regularization, tree_complexity : float, default 0
    min_node_weight : float, default 0
        The least (averaged) hessian sum of a node for it to be split.
    config : RunConfig, optional
    center_bias : bool, default False
        Fit the bias (the first tree's root value) before growing trees.
    pruning_mode : {'none', 'pre', 'post'}, default 'none'
        'pre' refuses negative-gain splits, 'post' removes them once a tree is grown;
        both need ``tree_complexity > 0``.
    quantile_sketch_epsilon : float, default 0.01
        Accepted for TF's signature (numeric columns are not bucketized automatically).
    train_in_memory : bool, default False
        The input is the whole data set as one batch (``n_batches_per_layer=1``).

    Example
    -------
    >>> import flowgraph as tf
    >>> col = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"),
    ...                                           [0.0])
    >>> type(tf.estimator.BoostedTreesClassifier([col], n_batches_per_layer=1)).__name__
    'BoostedTreesClassifier'
    """

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01,
                 train_in_memory=False) -> None:
        del quantile_sketch_epsilon
        if n_classes != 2:
            raise ValueError(f"For now only binary classification is supported."
                             f"n_classes given as {n_classes}")
        head = binary_or_multi_class_head(2, weight_column, label_vocabulary,
                                          SUM_OVER_BATCH_SIZE)
        closed_form = weight_column is None and label_vocabulary is None
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, n_trees,
                         max_depth, learning_rate, l1_regularization, l2_regularization,
                         tree_complexity, min_node_weight, config, center_bias,
                         pruning_mode, train_in_memory, closed_form)


class BoostedTreesRegressor(_BoostedTreesBase):
    """A regressor of gradient-boosted trees (squared error; TF 1.x's signature).

    Parameters are those of `BoostedTreesClassifier`, with ``label_dimension`` (only 1)
    instead of ``n_classes`` and ``label_vocabulary``.

    Example
    -------
    >>> import flowgraph as tf
    >>> col = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"),
    ...                                           [0.0])
    >>> type(tf.estimator.BoostedTreesRegressor([col], n_batches_per_layer=1)).__name__
    'BoostedTreesRegressor'
    """

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
                 label_dimension=1, weight_column=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01,
                 train_in_memory=False) -> None:
        del quantile_sketch_epsilon
        if label_dimension != 1:
            raise ValueError(f"For now only 1 dimension regression is supported."
                             f"label_dimension given as {label_dimension}")
        head = regression_head(1, weight_column, SUM_OVER_BATCH_SIZE)
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, n_trees,
                         max_depth, learning_rate, l1_regularization, l2_regularization,
                         tree_complexity, min_node_weight, config, center_bias,
                         pruning_mode, train_in_memory, closed_form=False)


class BoostedTreesEstimator(_BoostedTreesBase):
    """Boosted trees on any `head` of one logit (TF 2.0-2.12's
    ``tf.estimator.BoostedTreesEstimator``); the other parameters are those of
    `BoostedTreesClassifier`. `weight_column` is accepted for TF's signature (the head
    weighs the examples).

    Example
    -------
    >>> import flowgraph as tf
    >>> col = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"),
    ...                                           [0.0])
    >>> est = tf.estimator.BoostedTreesEstimator(
    ...     [col], n_batches_per_layer=1, head=tf.estimator.PoissonRegressionHead())
    >>> type(est).__name__
    'BoostedTreesEstimator'
    """

    def __init__(self, feature_columns, n_batches_per_layer, head, model_dir=None,
                 weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1,
                 l1_regularization=0., l2_regularization=0., tree_complexity=0.,
                 min_node_weight=0., config=None, center_bias=False, pruning_mode="none",
                 quantile_sketch_epsilon=0.01) -> None:
        del weight_column, quantile_sketch_epsilon
        if head.logits_dimension != 1:
            raise ValueError(f"BoostedTreesEstimator supports heads of one logit only; "
                             f"the head has logits_dimension {head.logits_dimension}")
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, n_trees,
                         max_depth, learning_rate, l1_regularization, l2_regularization,
                         tree_complexity, min_node_weight, config, center_bias,
                         pruning_mode, False, closed_form=False)
