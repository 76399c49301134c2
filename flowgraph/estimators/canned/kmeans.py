"""`KMeansClustering` (``tf.compat.v1.estimator.experimental.KMeans``,
``tf.contrib.factorization.KMeansClustering``): k-means as an Estimator over the graph
of `flowgraph.ops.clustering_ops.KMeans`.

Each ``train`` step runs one Lloyd iteration over the batch (``use_mini_batch=False``:
the batch must be the whole data set) or one mini-batch update; a hook first chooses the
initial centers. The loss is the sum of squared distances to the nearest centers;
``evaluate`` reports it as ``score``; ``predict`` yields ``cluster_index`` and
``all_distances``. The centers are the ``clusters`` variable of the checkpoints.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> pts = np.array([[0., 0.], [0., 1.], [10., 10.], [10., 11.]], np.float32)
>>> def input_fn():
...     return tf.train.limit_epochs(tf.constant(pts), num_epochs=1)
>>> km = tf.compat.v1.estimator.experimental.KMeans(
...     2, initial_clusters=np.array([[1., 1.], [9., 9.]], np.float32),
...     use_mini_batch=False)
>>> _ = km.train(input_fn, max_steps=3)
>>> km.cluster_centers().round(3).tolist()
[[0.0, 0.5], [10.0, 10.5]]
"""

from __future__ import annotations

import time

import numpy as np

from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.export import PredictOutput
from flowgraph.estimators.model_fn import EstimatorSpec
from flowgraph.feature_column.feature_column import input_layer
from flowgraph.framework.graph import colocate_with, control_dependencies
from flowgraph.logging_compat import info as _log_info
from flowgraph.metrics.metrics_impl import mean as _metric_mean
from flowgraph.ops import clustering_ops, state_ops
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.summary.summary_ops import scalar as _summary_scalar
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook
from flowgraph.train.training_util import get_global_step

__all__ = ["KMeansClustering"]

_SERVING_KEY = "serving_default"


class _LossRelativeChangeHook(SessionRunHook):
    """Stops training once the loss changes by less than `tolerance` (relative)."""

    def __init__(self, loss_tensor, tolerance) -> None:
        self._loss_tensor, self._tolerance, self._prev_loss = loss_tensor, tolerance, None

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        loss = run_values.results
        if self._prev_loss:
            if abs(loss - self._prev_loss) / (1 + abs(self._prev_loss)) < self._tolerance:
                run_context.request_stop()
        self._prev_loss = loss


class _InitializeClustersHook(SessionRunHook):
    """Runs the center-choosing op until every center is chosen (chief only; other
    workers wait)."""

    def __init__(self, init_op, is_initialized_var, is_chief) -> None:
        self._init_op, self._is_initialized_var, self._is_chief = (init_op,
                                                                   is_initialized_var,
                                                                   is_chief)

    def after_create_session(self, session, coord):
        while True:
            try:
                if session.run(self._is_initialized_var):
                    break
                if self._is_chief:
                    session.run(self._init_op)
                else:
                    time.sleep(1)
            except RuntimeError as e:
                _log_info("%s", e)


def _parse_features(features, feature_columns):
    if not isinstance(features, dict):
        return features
    if feature_columns:
        return input_layer(features, feature_columns)
    keys = sorted(features)
    with colocate_with(features[keys[0]]):
        return concat([features[k] for k in keys], axis=1)


class _ModelFn:
    def __init__(self, num_clusters, initial_clusters, distance_metric, seed, use_mini_batch,
                 mini_batch_steps_per_iteration, kmeans_plus_plus_num_retries,
                 relative_tolerance, feature_columns) -> None:
        self.args = (num_clusters, initial_clusters, distance_metric, seed, use_mini_batch,
                     mini_batch_steps_per_iteration, kmeans_plus_plus_num_retries)
        self._relative_tolerance = relative_tolerance
        self._feature_columns = feature_columns

    def model_fn(self, features, mode, config):
        (k, initial, metric, seed, mini, steps, retries) = self.args
        points = _parse_features(features, self._feature_columns)
        (all_distances, predictions, losses, is_initialized, init_op,
         training_op) = clustering_ops.KMeans(
            inputs=points, num_clusters=k, initial_clusters=initial, distance_metric=metric,
            use_mini_batch=mini, mini_batch_steps_per_iteration=steps, random_seed=seed,
            kmeans_plus_plus_num_retries=retries).training_graph()
        loss = reduce_sum(losses)
        _summary_scalar("loss/raw", loss)
        incr_step = state_ops.assign_add(get_global_step(), 1)
        with control_dependencies([training_op, incr_step]):
            training_op = identity(loss)
        hooks = [_InitializeClustersHook(init_op, is_initialized, config.is_chief)]
        if self._relative_tolerance is not None:
            hooks.append(_LossRelativeChangeHook(loss, self._relative_tolerance))
        kc = KMeansClustering
        return EstimatorSpec(
            mode=mode,
            predictions={kc.ALL_DISTANCES: all_distances[0],
                         kc.CLUSTER_INDEX: predictions[0]},
            loss=loss, train_op=training_op,
            eval_metric_ops={kc.SCORE: _metric_mean(loss)},
            training_hooks=hooks,
            export_outputs={kc.ALL_DISTANCES: PredictOutput(all_distances[0]),
                            kc.CLUSTER_INDEX: PredictOutput(predictions[0]),
                            _SERVING_KEY: PredictOutput(predictions[0])})


class KMeansClustering(Estimator):
    """k-means clustering as an Estimator (see the module docstring).

    Parameters follow TF's: `num_clusters`; `initial_clusters` ``"random"``,
    ``"kmeans_plus_plus"``, an array of centers or a callable ``f(inputs, k)``;
    `distance_metric` ``"squared_euclidean"`` or ``"cosine"``; `seed`; `use_mini_batch`
    (default True) with `mini_batch_steps_per_iteration`; `kmeans_plus_plus_num_retries`;
    `relative_tolerance` (stop when the loss changes less); `feature_columns`.
    """

    SQUARED_EUCLIDEAN_DISTANCE = clustering_ops.SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = clustering_ops.COSINE_DISTANCE
    RANDOM_INIT = clustering_ops.RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = clustering_ops.KMEANS_PLUS_PLUS_INIT
    SCORE = "score"
    CLUSTER_INDEX = "cluster_index"
    ALL_DISTANCES = "all_distances"
    CLUSTER_CENTERS_VAR_NAME = clustering_ops.CLUSTERS_VAR_NAME

    def __init__(self, num_clusters, model_dir=None, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, seed=None, use_mini_batch=True,
                 mini_batch_steps_per_iteration=1, kmeans_plus_plus_num_retries=2,
                 relative_tolerance=None, config=None, feature_columns=None) -> None:
        if isinstance(initial_clusters, str) and initial_clusters not in (
                self.RANDOM_INIT, self.KMEANS_PLUS_PLUS_INIT):
            raise ValueError(f"Unsupported initialization algorithm '{initial_clusters}'")
        if distance_metric not in (self.SQUARED_EUCLIDEAN_DISTANCE, self.COSINE_DISTANCE):
            raise ValueError(f"Unsupported distance metric '{distance_metric}'")
        self._distance_metric = distance_metric
        super().__init__(
            model_fn=_ModelFn(num_clusters, initial_clusters, distance_metric, seed,
                              use_mini_batch, mini_batch_steps_per_iteration,
                              kmeans_plus_plus_num_retries, relative_tolerance,
                              feature_columns).model_fn,
            model_dir=model_dir, config=config)

    def _predict_one_key(self, input_fn, predict_key):
        for result in self.predict(input_fn=input_fn, predict_keys=[predict_key]):
            yield result[predict_key]

    def predict_cluster_index(self, input_fn):
        """Yields the index of each input point's nearest center."""
        yield from self._predict_one_key(input_fn, self.CLUSTER_INDEX)

    def score(self, input_fn):
        """The sum of squared distances from the first batch's points to their nearest
        centers (sklearn returns its negative)."""
        return self.evaluate(input_fn=input_fn, steps=1)[self.SCORE]

    def transform(self, input_fn):
        """Yields each point's distances to every center (Euclidean, not squared, for
        the squared-Euclidean metric)."""
        for d in self._predict_one_key(input_fn, self.ALL_DISTANCES):
            yield np.sqrt(d) if self._distance_metric == self.SQUARED_EUCLIDEAN_DISTANCE else d

    def cluster_centers(self):
        """The centers, from the latest checkpoint."""
        return self.get_variable_value(self.CLUSTER_CENTERS_VAR_NAME)
