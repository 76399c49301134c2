"""CPU kernels for the k-means ops of `flowgraph/ops/clustering_ops.py`."""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _sq_dists(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    d = (np.sum(points * points, axis=1)[:, None] - 2.0 * points @ centers.T
         + np.sum(centers * centers, axis=1)[None, :])
    return np.maximum(d, 0.0)


@cpu_kernel("NearestNeighbors")
def nearest_neighbors(points, centers, k):
    points = np.asarray(points, np.float32)
    centers = np.asarray(centers, np.float32)
    if points.ndim != 2 or centers.ndim != 2 or (centers.size and
                                                 points.shape[1] != centers.shape[1]):
        raise errors.InvalidArgumentError(
            None, None, f"NearestNeighbors: points and centers must be matrices with the "
            f"same number of columns, got shapes {list(points.shape)} and "
            f"{list(centers.shape)}")
    k = min(int(k), centers.shape[0])
    # float32 in TensorFlow's order: (half center norm - dot), nearest first, then
    # 2 * (half point norm + that)
    partial = (np.float32(0.5) * np.sum(centers * centers, axis=1))[None, :] - points @ centers.T
    order = np.argsort(partial, axis=1, kind="stable")[:, :k]
    p_half = np.float32(0.5) * np.sum(points * points, axis=1)
    d = np.float32(2) * (p_half[:, None] + np.take_along_axis(partial, order, axis=1))
    return order.astype(np.int64), d.astype(np.float32)


@cpu_kernel("KmeansPlusPlusInitialization")
def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample):
    points = np.asarray(points, np.float32)
    n, k = points.shape[0], int(num_to_sample)
    if k > n:
        raise errors.InvalidArgumentError(
            None, None, f"KmeansPlusPlusInitialization: num_to_sample ({k}) exceeds the "
            f"number of points ({n})")
    if k <= 0:
        return np.zeros((0, points.shape[1]), np.float32)
    retries = int(num_retries_per_sample)
    if retries < 0:
        retries = 2 + int(math.log(k))
    rng = np.random.RandomState(int(seed) & 0xFFFFFFFF)
    x = points.astype(np.float64)
    chosen = [int(rng.randint(n))]
    best = _sq_dists(x, x[chosen]).min(axis=1)
    while len(chosen) < k:
        total = best.sum()
        if total <= 0:
            cands = rng.randint(n, size=retries + 1)
        else:
            cands = rng.choice(n, size=retries + 1, p=best / total)
        pick, pick_d, pick_cost = None, None, None
        for c in cands:
            d = np.minimum(best, _sq_dists(x, x[[c]])[:, 0])
            cost = d.sum()
            if pick_cost is None or cost < pick_cost:
                pick, pick_d, pick_cost = int(c), d, cost
        chosen.append(pick)
        best = pick_d
    return points[chosen]


@cpu_kernel("KMC2ChainInitialization")
def kmc2_chain_initialization(distances, seed):
    d = np.asarray(distances, np.float64).reshape(-1)
    rng = np.random.RandomState(int(seed) & 0xFFFFFFFF)
    current = 0
    for i in range(1, d.size):
        if d[current] == 0 or rng.uniform() * d[current] < d[i]:
            current = i
    return np.asarray(current, np.int64)
