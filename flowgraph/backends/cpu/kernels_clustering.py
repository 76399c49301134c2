"""CPU kernels for the k-means ops of `flowgraph/ops/clustering_ops.py`."""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.random_tf_streams import bits64, exact_uniform, floats
from flowgraph.framework import errors
from flowgraph.framework.philox import WordStream


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


class _SimplePhilox:
    """The words of ``PhiloxRandom(seed)`` read one at a time, as TensorFlow's
    ``SimplePhilox`` over it does (the k-means kernels draw this way)."""

    def __init__(self, seed: int) -> None:
        self._words = WordStream(int(seed), 0)

    def rand_float(self) -> np.float32:
        return floats(np.asarray([self._words.next()], np.uint32))[0]

    def uniform64(self, n: int) -> int:
        accept, value = exact_uniform(n, 64)
        while True:
            bits = bits64(np.asarray([[self._words.next(), self._words.next()]], np.uint32))
            if accept(bits)[0]:
                return int(value(bits)[0])


def _half_sq_dists_to(points, half_norms, j):
    """float32 half squared distances of every point to point `j` (TF's expression
    order: half norm - dot + the other half norm)."""
    return (half_norms - points @ points[j]) + half_norms[j]


@cpu_kernel("KmeansPlusPlusInitialization")
def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample):
    points = np.ascontiguousarray(points, np.float32)
    if points.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, "KmeansPlusPlusInitialization: Input points should be a matrix.")
    n, k = points.shape[0], int(num_to_sample)
    retries = int(num_retries_per_sample)
    if retries < 0:
        retries = 2 + int(math.log(k)) if k > 0 else 2
    for ok, what in ((n > 0, "Expected points.rows() > 0."),
                     (k > 0, "Expected num_to_sample > 0."),
                     (k <= n, f"Expected num_to_sample <= points.rows(). {k} vs {n}.")):
        if not ok:
            raise errors.InvalidArgumentError(None, None,
                                              f"KmeansPlusPlusInitialization: {what}")
    rng = _SimplePhilox(seed)
    half = np.float32(0.5) * np.einsum("ij,ij->i", points, points)
    min_d = np.full(n, np.inf, np.float32)
    chosen: list[int] = []
    cumsum = None

    def draw() -> int:
        # The first point uniformly; later ones in proportion to the distance to the
        # chosen ones, never a chosen one again.
        if not chosen:
            return rng.uniform64(n)
        while True:
            total = cumsum[-1]
            if total > 0:
                v = np.float32(rng.rand_float() * total)
                idx = min(int(np.searchsorted(cumsum, v, side="right")), n - 1)
            else:
                idx = rng.uniform64(n)
            if idx not in chosen:
                return idx

    for i in range(k):
        if i > 0:
            cumsum = np.cumsum(min_d, dtype=np.float32)
        if retries == 0:
            j = draw()
            min_d = np.minimum(min_d, _half_sq_dists_to(points, half, j))
        else:
            best, best_d, best_pot = 0, None, np.float32(np.inf)
            for _ in range(retries + 1):
                c = draw()
                d = np.minimum(min_d, _half_sq_dists_to(points, half, c))
                pot = d.sum(dtype=np.float32)
                if pot < best_pot:
                    best, best_d, best_pot = c, d, pot
            j = best
            if best_d is not None:
                min_d = best_d
        chosen.append(min(j, n - 1))
    return points[chosen]


@cpu_kernel("KMC2ChainInitialization")
def kmc2_chain_initialization(distances, seed):
    d = np.asarray(distances, np.float32).reshape(-1)
    if d.size == 0:
        raise errors.InvalidArgumentError(
            None, None, "KMC2ChainInitialization: Expected distances_tensor.size() > 0.")
    rng = _SimplePhilox(seed)
    current = 0
    for i in range(1, d.size):
        if d[i] > np.float32(rng.rand_float() * d[current]):
            current = i
    return np.asarray(current, np.int64)
