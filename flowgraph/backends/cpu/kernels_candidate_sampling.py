"""CPU kernels for the candidate samplers (`flowgraph/ops/candidate_sampling_ops.py`):
one Philox generator per (session, op), as for the other random ops, and the class
distribution of each sampler as a probability vector over ``[0, range_max)``."""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import make_generator
from flowgraph.framework import errors


def _expected(p, num_sampled, tries, unique):
    p = np.asarray(p, np.float64)
    if not unique or tries == num_sampled:
        return (p * num_sampled).astype(np.float32)
    return (-np.expm1(tries * np.log1p(-np.minimum(p, 1.0)))).astype(np.float32)


class _Sampler:
    def __init__(self, ctx, *, num_true, num_sampled, unique, range_max, seed=0, seed2=0,
                 **extra):
        self.num_sampled = num_sampled
        self.unique = unique
        self.range_max = range_max
        self.num_true = num_true
        self.rng = make_generator(seed, seed2)
        self.lock = threading.Lock()
        self.probs = self._probabilities(**extra)

    def _probabilities(self, **extra):
        raise NotImplementedError  # each sampler defines its distribution

    def _update(self, true_classes):
        """Learn from the true classes (the learned sampler only)."""

    def __call__(self, true_classes):
        true_classes = np.asarray(true_classes, np.int64)
        if true_classes.ndim != 2 or true_classes.shape[1] != self.num_true:
            raise errors.InvalidArgumentError(
                None, None, f"candidate sampler: true_classes must have shape [batch, "
                f"{self.num_true}], got {list(true_classes.shape)}")
        with self.lock:
            self._update(true_classes)
            p = self.probs
            if self.unique:
                if np.count_nonzero(p) < self.num_sampled:
                    raise errors.InvalidArgumentError(
                        None, None, f"candidate sampler: cannot draw {self.num_sampled} "
                        f"distinct classes from {np.count_nonzero(p)} with nonzero "
                        "probability")
                seen, order, tries = set(), [], 0
                while len(order) < self.num_sampled:
                    for c in self.rng.choice(p.size, size=self.num_sampled, p=p):
                        tries += 1
                        if int(c) not in seen:
                            seen.add(int(c))
                            order.append(int(c))
                            if len(order) == self.num_sampled:
                                break
                sampled = np.asarray(order, np.int64)
            else:
                sampled = self.rng.choice(p.size, size=self.num_sampled, p=p).astype(np.int64)
                tries = self.num_sampled
        safe = np.clip(true_classes, 0, p.size - 1)
        true_p = np.where((true_classes >= 0) & (true_classes < p.size), p[safe], 0.0)
        return [sampled, _expected(true_p, self.num_sampled, tries, self.unique),
                _expected(p[sampled], self.num_sampled, tries, self.unique)]


@cpu_kernel("UniformCandidateSampler")
class UniformSampler(_Sampler):
    def _probabilities(self):
        return np.full(self.range_max, 1.0 / self.range_max)


@cpu_kernel("LogUniformCandidateSampler")
class LogUniformSampler(_Sampler):
    def _probabilities(self):
        k = np.arange(self.range_max, dtype=np.float64)
        p = np.log((k + 2.0) / (k + 1.0)) / np.log(self.range_max + 1.0)
        return p / p.sum()


@cpu_kernel("LearnedUnigramCandidateSampler")
class LearnedUnigramSampler(_Sampler):
    def _probabilities(self):
        self.counts = np.ones(self.range_max, np.float64)
        return self.counts / self.counts.sum()

    def _update(self, true_classes):
        ids = true_classes[(true_classes >= 0) & (true_classes < self.range_max)]
        np.add.at(self.counts, ids, 1.0)
        self.probs = self.counts / self.counts.sum()


@cpu_kernel("FixedUnigramCandidateSampler")
class FixedUnigramSampler(_Sampler):
    def _probabilities(self, vocab_file, distortion, num_reserved_ids, num_shards, shard,
                       unigrams):
        if vocab_file:
            with open(vocab_file, encoding="utf-8") as f:
                weights = [float(line.rstrip("\n").split(",")[-1]) for line in f if
                           line.strip()]
        else:
            weights = list(unigrams)
        if len(weights) + num_reserved_ids != self.range_max:
            raise errors.InvalidArgumentError(
                None, None, f"FixedUnigramCandidateSampler: range_max ({self.range_max}) "
                f"must equal num_reserved_ids ({num_reserved_ids}) plus the number of "
                f"unigram weights ({len(weights)})")
        w = np.zeros(self.range_max, np.float64)
        w[num_reserved_ids:] = np.asarray(weights, np.float64) ** distortion
        if num_shards > 1:
            w[np.arange(self.range_max) % num_shards != shard] = 0.0
        if w.sum() <= 0:
            raise errors.InvalidArgumentError(
                None, None, "FixedUnigramCandidateSampler: the unigram weights sum to 0")
        return w / w.sum()


@cpu_kernel("AllCandidateSampler")
class AllSampler(_Sampler):
    def __init__(self, ctx, *, num_true, num_sampled, unique, seed=0, seed2=0):
        super().__init__(ctx, num_true=num_true, num_sampled=num_sampled, unique=unique,
                         range_max=num_sampled, seed=seed, seed2=seed2)

    def _probabilities(self):
        return np.full(self.range_max, 1.0 / self.range_max)

    def __call__(self, true_classes):
        true_classes = np.asarray(true_classes, np.int64)
        return [np.arange(self.num_sampled, dtype=np.int64),
                np.ones(true_classes.shape, np.float32),
                np.ones(self.num_sampled, np.float32)]


@cpu_kernel("ComputeAccidentalHits")
def compute_accidental_hits(true_classes, sampled, *, num_true, seed=0, seed2=0):
    rows, cols = [], []
    position = {}
    for j, c in enumerate(np.asarray(sampled).tolist()):
        position.setdefault(c, []).append(j)
    for i, row in enumerate(np.asarray(true_classes).tolist()):
        for c in row:
            for j in position.get(c, ()):
                rows.append(i)
                cols.append(j)
    weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
    return [np.asarray(rows, np.int32), np.asarray(cols, np.int64), weights]
