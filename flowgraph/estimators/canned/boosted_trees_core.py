"""The tree-growing kernels of the boosted-trees estimators, in NumPy.

The ensemble is a dict of fixed-size arrays (so that it lives in variables and the Saver
writes it), with ``S`` tree slots and ``M = 2**(max_depth + 1) - 1`` node slots a tree:

=================  ===========  ===========================================================
key                shape        meaning
=================  ===========  ===========================================================
``feature``        [S, M] i32   split feature of a node, -1 for a leaf
``threshold``      [S, M] i32   bucket threshold: bucket <= threshold goes left
``left``           [S, M] i32   left child (the right child is ``left + 1``), -1 for a leaf
``value``          [S, M] f32   leaf value (the logit contributed by the tree)
``original``       [S, M] f32   value of a split node before it was split
``gain``           [S, M] f32   gain of a split node
``tree_meta``      [S, 3] i32   num_nodes, num_layers_grown, is_finalized
``growing``        [6] i32      num_trees, num_layers_attempted, last_layer_start,
                                last_layer_end, bias_centered, num_accumulated
``stats``          [F, N, B, 2] f32  gradient/hessian sums per feature, node and bucket
``bias_stats``     [2] f32      accumulated mean gradient/hessian for bias centering
=================  ===========  ===========================================================

As in TensorFlow's layer-by-layer boosting, a child's leaf value is its parent's value
plus ``learning_rate`` times its own optimal weight, so a leaf's value is the whole
tree's prediction and the bias (``center_bias``) is the root value of the first tree.

Example
-------
>>> import numpy as np
>>> w, g = weights_and_gains(np.float32(-0.4), np.float32(0.2), 0.0, 0.0)
>>> float(w), round(float(g), 4)
(2.0, 0.8)
"""

from __future__ import annotations

import numpy as np

__all__ = ["GROWING", "TreeParams", "debug_path", "feature_gains", "init_state",
           "is_finished", "node_ids", "predict", "train_step", "weights_and_gains"]

# indices into state["growing"]
NUM_TREES, LAYERS_ATTEMPTED, LAST_START, LAST_END, BIAS_CENTERED, NUM_ACCUMULATED = range(6)
GROWING = ("num_trees", "num_layers_attempted", "last_layer_node_start",
           "last_layer_node_end", "bias_centered", "num_accumulated")
_NUM_NODES, _LAYERS_GROWN, _FINALIZED = range(3)
_EPS = 1e-15  # TF's tolerance for hessian sums and gain comparisons
_MIN_DELTA_FOR_CENTER_BIAS = 0.01
PRUNING_MODES = {"none": 0, "pre": 1, "post": 2}


class TreeParams:
    """The hyper-parameters of tree growth."""

    def __init__(self, n_trees, max_depth, learning_rate, l1, l2, tree_complexity,
                 min_node_weight, pruning_mode, n_batches_per_layer, center_bias) -> None:
        self.n_trees, self.max_depth = int(n_trees), int(max_depth)
        self.learning_rate = np.float32(learning_rate)
        self.l1, self.l2 = np.float32(l1), np.float32(l2)
        self.tree_complexity = np.float32(tree_complexity)
        self.min_node_weight = np.float32(min_node_weight)
        self.pruning_mode = PRUNING_MODES[pruning_mode]
        self.n_batches_per_layer = int(n_batches_per_layer)
        self.center_bias = bool(center_bias)

    @property
    def max_nodes(self) -> int:
        return (1 << (self.max_depth + 1)) - 1

    @property
    def max_splits(self) -> int:
        return (1 << self.max_depth) - 1


def init_state(params: TreeParams, num_features: int, num_buckets: int) -> dict:
    """An empty ensemble (no trees) and empty accumulators."""
    s, m = params.n_trees + 1, params.max_nodes
    return {
        "feature": np.full([s, m], -1, np.int32),
        "threshold": np.zeros([s, m], np.int32),
        "left": np.full([s, m], -1, np.int32),
        "value": np.zeros([s, m], np.float32),
        "original": np.zeros([s, m], np.float32),
        "gain": np.zeros([s, m], np.float32),
        "tree_meta": np.zeros([s, 3], np.int32),
        "growing": np.array([0, 0, 0, 1, 0, 0], np.int32),
        "stats": np.zeros([num_features, params.max_splits, num_buckets, 2], np.float32),
        "bias_stats": np.zeros([2], np.float32),
    }


def weights_and_gains(g, h, l1, l2):
    """The optimal leaf weight ``-(g -+ l1) / (h + l2)`` and its gain
    ``(g -+ l1)**2 / (h + l2)`` (elementwise; 0 where ``|g| <= l1`` or ``h + l2`` ~ 0)."""
    g, h = np.asarray(g, np.float32), np.asarray(h, np.float32)
    l1, l2 = np.float32(l1), np.float32(l2)
    g_l1 = g
    dead = np.zeros(g.shape, bool)
    if l1 > 0:
        g_l1 = np.where(g > l1, g - l1, np.where(g < -l1, g + l1, np.float32(0)))
        dead = np.abs(g) <= l1
    denom = h + l2
    dead = dead | (denom <= _EPS)
    safe = np.where(dead, np.float32(1), denom)
    weight = np.where(dead, np.float32(0), -g_l1 / safe).astype(np.float32)
    gain = np.where(dead, np.float32(0), -g_l1 * weight).astype(np.float32)
    return weight, gain


def node_ids(state: dict, tree: int, x: np.ndarray) -> np.ndarray:
    """The node of `tree` each example of `x` ([N, F] bucket ids) reaches."""
    nodes = np.zeros(len(x), np.int32)
    feature, threshold, left = state["feature"][tree], state["threshold"][tree], \
        state["left"][tree]
    rows = np.arange(len(x))
    for _ in range(feature.shape[0]):
        f = feature[nodes]
        split = f >= 0
        if not split.any():
            break
        bucket = x[rows, np.maximum(f, 0)]
        child = np.where(bucket <= threshold[nodes], left[nodes], left[nodes] + 1)
        nodes = np.where(split, child, nodes).astype(np.int32)
    return nodes


def predict(state: dict, x: np.ndarray) -> np.ndarray:
    """The ensemble's logits ``[N]`` (the sum of every tree's leaf values)."""
    total = np.zeros(len(x), np.float32)
    for t in range(int(state["growing"][NUM_TREES])):
        total += state["value"][t][node_ids(state, t, x)]
    return total


def _best_splits(stats: np.ndarray, start: int, end: int, params: TreeParams) -> dict:
    """{node: (gain, feature, threshold, left_weight, right_weight)} for the nodes of the
    last layer, the best over features and buckets (ties: the lower feature, bucket)."""
    best: dict = {}
    for f in range(stats.shape[0]):
        for node in range(start, end):
            g, h = stats[f, node, :, 0], stats[f, node, :, 1]
            cum_g, cum_h = np.cumsum(g, dtype=np.float32), np.cumsum(h, dtype=np.float32)
            total_g, total_h = cum_g[-1], cum_h[-1]
            if total_h < params.min_node_weight:
                continue
            _, parent_gain = weights_and_gains(total_g, total_h, params.l1, params.l2)
            wl, gl = weights_and_gains(cum_g, cum_h, params.l1, params.l2)
            wr, gr = weights_and_gains(total_g - cum_g, total_h - cum_h, params.l1, params.l2)
            gains = (gl + gr).astype(np.float32)
            b, best_gain = 0, np.float32(np.finfo(np.float32).min)
            for i, v in enumerate(gains):
                if v - best_gain >= _EPS:
                    b, best_gain = i, v
            gain = np.float32(np.float32(best_gain - parent_gain) - params.tree_complexity)
            cand = (gain, f, b, wl[b], wr[b])
            old = best.get(node)
            if old is None or gain - old[0] >= _EPS:
                best[node] = cand
    return best


def _grow_layer(state: dict, stats: np.ndarray, params: TreeParams) -> None:
    growing, meta = state["growing"], state["tree_meta"]
    best = _best_splits(stats, int(growing[LAST_START]), int(growing[LAST_END]), params)
    growing[LAYERS_ATTEMPTED] += 1
    if growing[NUM_TREES] == 0:
        growing[NUM_TREES] = 1
        meta[0] = [1, 0, 0]
    tree = int(growing[NUM_TREES]) - 1
    start = int(meta[tree, _NUM_NODES])
    split = False
    for node in sorted(best):
        gain, f, b, wl, wr = best[node]
        if params.pruning_mode == PRUNING_MODES["pre"] and gain < 0:
            continue
        n = int(meta[tree, _NUM_NODES])
        parent = state["value"][tree, node]
        state["original"][tree, node] = parent
        state["gain"][tree, node] = gain
        state["feature"][tree, node], state["threshold"][tree, node] = f, b
        state["left"][tree, node] = n
        state["value"][tree, n] = parent + params.learning_rate * wl
        state["value"][tree, n + 1] = parent + params.learning_rate * wr
        meta[tree, _NUM_NODES] = n + 2
        split = True
    if not split:
        return
    end = int(meta[tree, _NUM_NODES])
    meta[tree, _LAYERS_GROWN] += 1
    if meta[tree, _LAYERS_GROWN] >= params.max_depth:
        start, end = 0, 1
        meta[tree, _FINALIZED] = 1
        if params.pruning_mode == PRUNING_MODES["post"]:
            _post_prune(state, tree)
        if tree + 1 < meta.shape[0]:
            growing[NUM_TREES] += 1
            meta[tree + 1] = [1, 0, 0]
    growing[LAST_START], growing[LAST_END] = start, end


def _post_prune(state: dict, tree: int) -> None:
    """Collapses, bottom-up, each split with negative gain whose children are leaves,
    then renumbers the remaining nodes in their old order."""
    feature, left = state["feature"][tree], state["left"][tree]
    deleted: list[int] = []

    def prune(node: int) -> None:
        if feature[node] < 0:
            return
        prune(int(left[node]))
        prune(int(left[node]) + 1)
        l_ = int(left[node])
        if feature[l_] < 0 and feature[l_ + 1] < 0 and state["gain"][tree, node] < 0:
            deleted.extend([l_, l_ + 1])
            feature[node], left[node] = -1, -1
            state["value"][tree, node] = state["original"][tree, node]
            state["threshold"][tree, node] = 0
            state["gain"][tree, node] = 0

    prune(0)
    if not deleted:
        return
    n = int(state["tree_meta"][tree, _NUM_NODES])
    keep = [i for i in range(n) if i not in set(deleted)]
    new_id = {old: new for new, old in enumerate(keep)}
    for key in ("feature", "threshold", "left", "value", "original", "gain"):
        arr = state[key][tree]
        kept = arr[keep].copy()
        arr[:] = -1 if key in ("feature", "left") else 0
        arr[:len(keep)] = kept
    lft = state["left"][tree]
    for i in range(len(keep)):
        if lft[i] >= 0:
            lft[i] = new_id[int(lft[i])]
    state["tree_meta"][tree, _NUM_NODES] = len(keep)


def _center_bias(state: dict, mean_g, mean_h, params: TreeParams) -> None:
    logit, _ = weights_and_gains(mean_g, mean_h, params.l1, params.l2)
    growing = state["growing"]
    if growing[NUM_TREES] == 0:
        growing[NUM_TREES] = 1
        state["tree_meta"][0] = [1, 0, 0]
        state["value"][0, 0] = logit
        return
    current = state["value"][0, 0]
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero bias: inf or nan, as in C
        ratio = np.float32(logit) / np.float32(current)
    if not abs(ratio) > _MIN_DELTA_FOR_CENTER_BIAS:
        growing[BIAS_CENTERED] = 1
    state["value"][0, 0] = current + logit


def is_finished(state: dict, params: TreeParams) -> bool:
    """TF's stopping rule: `n_trees` trees finalized, or twice the expected number of
    layers attempted (when layers keep finding no split)."""
    finalized = int(state["tree_meta"][:, _FINALIZED].sum())
    return (finalized >= params.n_trees
            or state["growing"][LAYERS_ATTEMPTED] > 2 * params.n_trees * params.max_depth)


def train_step(state: dict, x: np.ndarray, grads: np.ndarray, hess: np.ndarray,
               params: TreeParams) -> dict:
    """One batch: accumulate its statistics (bias centering first, when asked) and grow a
    layer (or update the bias) once `n_batches_per_layer` batches are in. Returns a new
    state; `x` holds bucket ids [N, F], `grads`/`hess` per-example values [N]."""
    state = {k: v.copy() for k, v in state.items()}
    growing = state["growing"]
    if is_finished(state, params):
        return state
    grads = np.asarray(grads, np.float32).reshape(-1)
    hess = np.asarray(hess, np.float32).reshape(-1)
    if params.center_bias and not growing[BIAS_CENTERED]:
        state["bias_stats"] += np.array([grads.mean(dtype=np.float32),
                                         hess.mean(dtype=np.float32)], np.float32)
        growing[NUM_ACCUMULATED] += 1
        if growing[NUM_ACCUMULATED] >= params.n_batches_per_layer:
            mean = state["bias_stats"] / np.float32(growing[NUM_ACCUMULATED])
            _center_bias(state, mean[0], mean[1], params)
            state["bias_stats"][:] = 0
            growing[NUM_ACCUMULATED] = 0
        return state
    tree = max(int(growing[NUM_TREES]) - 1, 0)
    nodes = node_ids(state, tree, x) if growing[NUM_TREES] else np.zeros(len(x), np.int32)
    batch = np.zeros(state["stats"].shape, np.float64)
    for f in range(x.shape[1]):
        np.add.at(batch[f], (nodes, x[:, f], 0), grads)
        np.add.at(batch[f], (nodes, x[:, f], 1), hess)
    state["stats"] += batch.astype(np.float32)
    growing[NUM_ACCUMULATED] += 1
    if growing[NUM_ACCUMULATED] >= params.n_batches_per_layer:
        stats = state["stats"] / np.float32(growing[NUM_ACCUMULATED])
        _grow_layer(state, stats, params)
        state["stats"][:] = 0
        growing[NUM_ACCUMULATED] = 0
    return state


def feature_gains(state: dict, num_features: int) -> np.ndarray:
    """The sum of split gains per feature over the ensemble (tree weights are 1)."""
    out = np.zeros(num_features, np.float64)
    n = int(state["growing"][NUM_TREES])
    f, gain = state["feature"][:n], state["gain"][:n]
    np.add.at(out, f[f >= 0], gain[f >= 0])
    return out


def debug_path(state: dict, x_row: np.ndarray) -> tuple[list[int], list[float]]:
    """One example's path through the ensemble, as TF's debug outputs give it: the split
    features in visiting order, and the running logit, the bias first and then the
    value after each split (previous trees' leaves included)."""
    value, feature, threshold, left = (state["value"], state["feature"],
                                       state["threshold"], state["left"])
    tree_logit = float(value[0, 0])
    features, path, past = [], [tree_logit], 0.0
    for t in range(int(state["growing"][NUM_TREES])):
        node = 0
        while feature[t, node] >= 0:
            f = int(feature[t, node])
            features.append(f)
            node = int(left[t, node]) + (0 if x_row[f] <= threshold[t, node] else 1)
            tree_logit = float(value[t, node])
            path.append(tree_logit + past)
        if t == 0 or node > 0:
            past += tree_logit
    return features, path
