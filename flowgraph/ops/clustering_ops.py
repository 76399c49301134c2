"""k-means: the ``NearestNeighbors``, ``KmeansPlusPlusInitialization`` and
``KMC2ChainInitialization`` ops and `KMeans`, the graph of TF's k-means (full-batch
Lloyd steps or mini-batch updates) behind ``tf.contrib.factorization.KMeans`` and the
``KMeansClustering`` Estimator.

`KMeans.training_graph` makes the variables ``clusters`` (the centers; empty until
initialized), ``initialized`` (bool) and, for mini-batch training, the per-center counts
(``Variable``) and with ``mini_batch_steps_per_iteration > 1`` ``clusters_updated`` and
``update_in_steps``; an op choosing initial centers (random input points, k-means++, or
given centers), and the training op. Kernels: `flowgraph/backends/cpu/kernels_clustering.py`.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.ops.clustering_ops import KMeans
>>> pts = tf.constant([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
>>> km = KMeans(pts, 2, initial_clusters=np.array([[0.0, 0.1], [5.0, 4.9]], np.float32),
...             use_mini_batch=False)
>>> _, idx, _, _, init_op, train_op = km.training_graph()
>>> with tf.Session() as sess:
...     sess.run(tf.global_variables_initializer()); _ = sess.run(init_op)
...     _ = sess.run(train_op)
...     print(sess.run(idx[0]))
[0 0 1 1]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import control_dependencies, get_seed
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import check_ops, math_ops, nn_ops, segment_ops, state_ops
from flowgraph.ops.array_gen_ops import unique
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.array_ops import placeholder_with_default
from flowgraph.ops.array_shape_ops import (
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    size,
    squeeze,
    zeros,
    zeros_like,
)
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.embedding_ops import embedding_lookup
from flowgraph.ops.math_reduce import add_n, reduce_sum
from flowgraph.ops.op_util import fixed_dtype, make_op
from flowgraph.ops.random_ops import random_uniform
from flowgraph.ops.scatter_ops import scatter_add
from flowgraph.ops.variables import Variable

__all__ = [
    "COSINE_DISTANCE",
    "KMC2_INIT",
    "KMEANS_PLUS_PLUS_INIT",
    "RANDOM_INIT",
    "SQUARED_EUCLIDEAN_DISTANCE",
    "KMeans",
    "kmc2_chain_initialization",
    "kmeans_plus_plus_initialization",
    "nearest_neighbors",
]

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"
CLUSTERS_VAR_NAME = "clusters"


# -- ops -----------------------------------------------------------------------------------
# As TensorFlow, both ops leave their outputs' shapes unknown.
@register_op("NearestNeighbors", num_outputs=2,
             dtype_fn=fixed_dtype(_dtypes.int64, _dtypes.float32), cost=OpCost.EXPENSIVE)
def _nearest_shape(op, points, centers, k):
    return [TensorShape(None)] * 2


@register_op("KmeansPlusPlusInitialization", dtype_fn=fixed_dtype(_dtypes.float32),
             stateful=False, cost=OpCost.EXPENSIVE)
def _kmpp_shape(op, points, num_to_sample, seed, num_retries):
    return [TensorShape(None)]


@register_op("KMC2ChainInitialization", dtype_fn=fixed_dtype(_dtypes.int64))
def _kmc2_shape(op, distances, seed):
    return [TensorShape([])]


not_differentiable("NearestNeighbors", "KmeansPlusPlusInitialization",
                   "KMC2ChainInitialization")


def nearest_neighbors(points, centers, k, name=None):
    """``(indices int64 [n, k], squared distances float32 [n, k])`` of each point's `k`
    nearest centers, nearest first."""
    out = make_op("NearestNeighbors", [convert_to_tensor(points, _dtypes.float32),
                                       convert_to_tensor(centers, _dtypes.float32),
                                       convert_to_tensor(k, _dtypes.int64)], name=name)
    return out.outputs[0], out.outputs[1]


def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample,
                                    name=None):
    """`num_to_sample` rows of `points` chosen by k-means++ (each next center drawn in
    proportion to the squared distance to the centers so far, best of
    ``1 + num_retries_per_sample`` draws; a negative value means ``2 + log(k)``)."""
    return make_op("KmeansPlusPlusInitialization", [
        convert_to_tensor(points, _dtypes.float32),
        convert_to_tensor(num_to_sample, _dtypes.int64),
        convert_to_tensor(seed, _dtypes.int64),
        convert_to_tensor(num_retries_per_sample, _dtypes.int64)], name=name).outputs[0]


def kmc2_chain_initialization(distances, seed, name=None):
    """The index (int64 scalar) a k-MC^2 Markov chain over `distances` ends at: each
    next candidate replaces the current one with probability ``min(1, d_new / d_cur)``.

    >>> import flowgraph as tf
    >>> i = kmc2_chain_initialization(tf.constant([0.0, 1.0, 4.0]), 1)
    >>> i.dtype.name, i.shape.as_list()
    ('int64', [])
    """
    return make_op("KMC2ChainInitialization", [
        convert_to_tensor(distances, _dtypes.float32),
        convert_to_tensor(seed, _dtypes.int64)], name=name).outputs[0]


# -- the k-means graph --------------------------------------------------------------------
def _l2(x):
    return nn_ops.l2_normalize(x, axis=1)


class KMeans:
    """The graph of k-means clustering over `inputs` (a tensor or a list of shards).

    Parameters follow TF's ``clustering_ops.KMeans``: `initial_clusters` is
    ``"random"``, ``"kmeans_plus_plus"``, ``"kmc2"``, an array of centers, or a callable
    ``f(inputs, k)``; `distance_metric` ``"squared_euclidean"`` or ``"cosine"``;
    `use_mini_batch` with `mini_batch_steps_per_iteration` chooses mini-batch updates.
    """

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0,
                 kmeans_plus_plus_num_retries=2, kmc2_chain_length=200) -> None:
        initial_is_name = isinstance(initial_clusters, str)
        if initial_is_name and initial_clusters not in (RANDOM_INIT, KMEANS_PLUS_PLUS_INIT,
                                                        KMC2_INIT):
            raise ValueError(f"Unsupported initialization algorithm '{initial_clusters}'")
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"Unsupported distance metric '{distance_metric}'")
        self._inputs = inputs if isinstance(inputs, list) else [inputs]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = use_mini_batch
        self._mini_batch_steps_per_iteration = int(mini_batch_steps_per_iteration)
        # As TF: the graph-level seed get_seed derives (the default graph seed when none is
        # set), not the op seed itself.
        self._seed = get_seed(random_seed)[0]
        self._kmeans_plus_plus_num_retries = kmeans_plus_plus_num_retries
        self._kmc2_chain_length = kmc2_chain_length

    # -- distances ------------------------------------------------------------------------
    def _distances(self, inputs, clusters):
        if self._distance_metric == SQUARED_EUCLIDEAN_DISTANCE:
            return [reduce_sum(math_ops.square(x), 1, keepdims=True)
                    - 2 * math_ops.matmul(x, clusters, transpose_b=True)
                    + reshape(reduce_sum(math_ops.square(clusters), 1), [1, -1])
                    for x in inputs]
        return [1 - math_ops.matmul(x, clusters, transpose_b=True) for x in inputs]

    def _clusters_l2_normalized(self) -> bool:
        return self._distance_metric == COSINE_DISTANCE and (
            not self._use_mini_batch or self._mini_batch_steps_per_iteration > 1)

    def _infer(self, inputs, clusters):
        scores = self._distances(inputs, clusters)
        if self._distance_metric == COSINE_DISTANCE and not self._clusters_l2_normalized():
            clusters = _l2(clusters)
        out = []
        for x, score in zip(inputs, scores):
            idx, dist = nearest_neighbors(x, clusters, 1)
            if self._distance_metric == COSINE_DISTANCE:
                dist *= 0.5
            out.append((score, squeeze(dist, [-1]), squeeze(idx, [-1])))
        return [tuple(t) for t in zip(*out)]

    # -- variables ------------------------------------------------------------------------
    def _variables(self, num_clusters):
        init_value = placeholder_with_default(constant([], _dtypes.float32), shape=None)
        centers = Variable(init_value, name=CLUSTERS_VAR_NAME, validate_shape=False)
        initialized = Variable(False, dtype=_dtypes.bool, name="initialized")
        if self._use_mini_batch and self._mini_batch_steps_per_iteration > 1:
            updated = Variable(init_value, name="clusters_updated", validate_shape=False)
            steps = Variable(self._mini_batch_steps_per_iteration, dtype=_dtypes.int64,
                             name="update_in_steps")
            counts = Variable(zeros([num_clusters], dtype=_dtypes.int64))
        else:
            updated, steps = centers, None
            counts = (Variable(ones([num_clusters], dtype=_dtypes.int64))
                      if self._use_mini_batch else None)
        return centers, initialized, counts, updated, steps

    def training_graph(self):
        """``(all_scores, cluster_idx, scores, cluster_centers_initialized, init_op,
        training_op)``: per input shard the distances to every center, the nearest
        center and the distance to it; the bool variable; the op choosing initial
        centers (run until ``initialized``); the training op."""
        if isinstance(self._initial_clusters, str) or callable(self._initial_clusters):
            initial = self._initial_clusters
            num_clusters = convert_to_tensor(self._num_clusters)
        else:
            initial = convert_to_tensor(self._initial_clusters)
            num_clusters = shape(initial)[0]
        inputs = self._inputs
        centers_var, initialized, counts, updated, steps = self._variables(num_clusters)
        init_op = _InitOp(self, inputs, num_clusters, initial, centers_var, updated,
                          initialized).op()
        centers = centers_var
        if self._distance_metric == COSINE_DISTANCE:
            inputs = [_l2(x) for x in inputs]
            if not self._clusters_l2_normalized():
                centers = _l2(centers)
        all_scores, scores, cluster_idx = self._infer(inputs, centers)
        if self._use_mini_batch:
            sync = self._sync_op(steps, centers_var, updated, counts)
            with control_dependencies([sync]):
                training_op = self._mini_batch_op(inputs, cluster_idx, updated, counts)
        else:
            training_op = self._full_batch_op(inputs, num_clusters, cluster_idx, centers_var)
        return all_scores, cluster_idx, scores, initialized, init_op, training_op

    def _sync_op(self, steps, centers_var, updated, counts):
        if not (self._use_mini_batch and self._mini_batch_steps_per_iteration > 1):
            return no_op()

        def sync():
            with control_dependencies([state_ops.assign(
                    steps, self._mini_batch_steps_per_iteration - 1)]):
                new = _l2(updated) if self._distance_metric == COSINE_DISTANCE else updated
                with control_dependencies([state_ops.assign(centers_var, new)]):
                    with control_dependencies([state_ops.assign(counts,
                                                                zeros_like(counts))]):
                        return identity(steps)

        return cond(steps <= 0, sync, lambda: state_ops.assign_sub(steps, 1))

    def _mini_batch_op(self, inputs, cluster_idx_list, centers, counts):
        updates = []
        for x, idx in zip(inputs, cluster_idx_list):
            idx = reshape(idx, [-1])
            unique_ids, unique_idx = unique(idx)
            n_unique = size(unique_ids)
            old_centers = gather(centers, unique_ids)
            count_updates = segment_ops.unsorted_segment_sum(
                ones_like(unique_idx, dtype=counts.dtype), unique_idx, n_unique)
            # TensorFlow's graph reads the counts with no ordering against their update,
            # and its executor runs the update first: the rate is 1 / (old + 2 * new).
            # Reading the updated counts makes that order explicit.
            update_counts = scatter_add(counts, unique_ids, count_updates)
            old_counts = gather(update_counts, unique_ids)
            center_updates = segment_ops.unsorted_segment_sum(x, unique_idx, n_unique)
            bshape = concat([reshape(n_unique, [1]),
                             ones(reshape(rank(x) - 1, [1]), dtype=_dtypes.int32)], 0)
            center_updates -= math_ops.cast(reshape(count_updates, bshape),
                                            x.dtype) * old_centers
            rate = reshape(math_ops.reciprocal(math_ops.cast(old_counts + count_updates,
                                                             x.dtype)), bshape)
            center_updates *= rate
            updates += [update_counts, scatter_add(centers, unique_ids, center_updates)]
        return group(*updates)

    def _full_batch_op(self, inputs, num_clusters, cluster_idx_list, centers):
        sums, cnts = [], []
        eps = constant(1e-6, dtype=inputs[0].dtype)
        for x, idx in zip(inputs, cluster_idx_list):
            sums.append(segment_ops.unsorted_segment_sum(x, idx, num_clusters))
            cnts.append(segment_ops.unsorted_segment_sum(
                reshape(ones(reshape(shape(x)[0], [-1])), [-1, 1]), idx, num_clusters))
        new = add_n(sums) / (math_ops.cast(add_n(cnts), sums[0].dtype) + eps)
        if self._clusters_l2_normalized():
            new = _l2(new)
        return state_ops.assign(centers, new)


class _InitOp:
    """Builds the op adding initial centers until there are `num_clusters`."""

    def __init__(self, km: KMeans, inputs, num_clusters, initial, centers, updated,
                 initialized) -> None:
        self._km, self._inputs, self._k, self._initial = km, inputs, num_clusters, initial
        self._centers, self._updated, self._initialized = centers, updated, initialized
        self._num_selected = shape(centers)[0]
        self._num_remaining = num_clusters - self._num_selected
        self._num_data = add_n([shape(x)[0] for x in inputs])

    def _random(self):
        indices = random_uniform(reshape(self._num_remaining, [-1]), minval=0,
                                 maxval=math_ops.cast(self._num_data, _dtypes.int64),
                                 seed=self._km._seed, dtype=_dtypes.int64)
        return embedding_lookup(self._inputs, indices, partition_strategy="div")

    def _kmeans_plus_plus(self):
        x = self._inputs[0]
        if self._km._distance_metric == COSINE_DISTANCE:
            x = _l2(x)
        if self._km._seed is None:
            # As TF: with no op seed and no graph-level seed the seed input is None.
            raise ValueError("KmeansPlusPlusInitialization: Tried to convert 'seed' to a "
                             "tensor and failed. Error: None values not supported "
                             "(k-means++ needs a seed or a graph-level seed)")
        return kmeans_plus_plus_initialization(
            x, math_ops.cast(self._num_remaining, _dtypes.int64), self._km._seed,
            self._km._kmeans_plus_plus_num_retries)

    def _kmc2(self):
        """One new center per run of the init op, as TF's: the first input point when
        there is none yet, else the end of a k-MC^2 chain over a slice of
        `kmc2_chain_length` points. TF's loop adds ``num_remaining`` centers to the
        centers read before it, so only its last pass (slice ``num_remaining - 1``)
        survives; the slice is taken directly."""
        x, length = self._inputs[0], int(self._km._kmc2_chain_length)
        seed = self._km._seed
        if seed is None:
            raise ValueError("KMC2ChainInitialization: Tried to convert 'seed' to a tensor "
                             "and failed. Error: None values not supported (k-MC^2 needs "
                             "a seed or a graph-level seed)")

        def chain():
            start = (self._num_remaining - 1) * length
            subset = x[start:start + length]
            _, distances = nearest_neighbors(subset, self._centers, 1)
            index = kmc2_chain_initialization(squeeze(distances), seed)
            return reshape(gather(subset, index), [1, -1])

        return cond(math_ops.equal(self._num_selected, 0),
                    lambda: reshape(x[0], [1, -1]), chain)

    def _choose(self):
        init = self._initial
        if isinstance(init, str):
            if init == RANDOM_INIT:
                return cond(self._num_data <= self._num_remaining,
                            lambda: concat(self._inputs, 0), self._random)
            if init == KMC2_INIT:
                return self._kmc2()
            with control_dependencies([check_ops.assert_greater_equal(self._num_data,
                                                                      self._num_remaining)]):
                return self._kmeans_plus_plus()
        if callable(init):
            return init(self._inputs, self._num_remaining)
        with control_dependencies([check_ops.assert_equal(self._num_remaining,
                                                          shape(init)[0])]):
            return identity(init)

    def _initialize(self):
        with control_dependencies([check_ops.assert_positive(self._num_remaining)]):
            new = self._choose()
            if self._km._distance_metric == COSINE_DISTANCE:
                new = _l2(new)
            every = cond(math_ops.equal(self._num_selected, 0), lambda: new,
                         lambda: concat([self._centers, new], 0))
            a = state_ops.assign(self._centers, every, validate_shape=False)
            if self._updated is not self._centers:
                a = state_ops.assign(self._updated, a, validate_shape=False)
            left = self._k - shape(a)[0]
            return cond(math_ops.equal(left, 0),
                        lambda: state_ops.assign(self._initialized, True), no_op)

    def op(self):
        return cond(math_ops.equal(self._num_remaining, 0),
                    lambda: check_ops.assert_equal(self._initialized, True), self._initialize)
