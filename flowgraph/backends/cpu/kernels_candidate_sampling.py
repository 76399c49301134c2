"""CPU kernels for the candidate samplers (`flowgraph/ops/candidate_sampling_ops.py`).

Each sampler draws TensorFlow's numbers: a run reserves ``512 * num_sampled`` Philox
blocks of the op's stream (key ``seed``, counter ``seed2 << 64``, `_TFStream`) and reads
them word by word (`WordCursor`), a draw at a time as TensorFlow's samplers do:

- uniform: an unbiased 64-bit integer modulo ``range_max`` (two words an attempt);
- log-uniform: ``floor(exp(u * log(range_max + 1))) - 1`` for a double ``u`` (two words);
- learned unigram: an unbiased integer below the total count (one word an attempt),
  located in the running counts; the counts grow by the true classes after the draw;
- fixed unigram: Walker's alias table of the (distorted) weights: a float, then an
  unbiased bucket index, keep the bucket or take its alias.

With ``unique=True`` draws repeat until `num_sampled` distinct ids are found; a class of
probability p drawn in n tries is expected ``1 - (1 - p)^n`` times, otherwise
``p * num_sampled`` times, in float32 as TensorFlow computes it.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import random_tf_streams as _rts
from flowgraph.backends.cpu.kernels_random import _TFStream
from flowgraph.framework import errors

_INT32_MAX = 2**31 - 1


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _expected(p, num_sampled: int, tries: int) -> np.ndarray:
    p = np.asarray(p, np.float32)
    if tries == num_sampled:
        return p * np.float32(num_sampled)
    t = np.float32(tries) * _rts.c_float_math("log1pf", -p)
    return -_rts.c_float_math("expm1f", t)


class _Sampler:
    def __init__(self, ctx, *, num_true, num_sampled, unique, range_max, seed=0, seed2=0,
                 **extra):
        self.op_type = type(self).op_type
        self.num_sampled = int(num_sampled)
        self.unique = unique
        self.range_max = int(range_max)
        self.num_true = num_true
        if self.range_max <= 0:
            raise _invalid(f"{self.op_type}: range_max must be positive, got {range_max}")
        self.stream = _TFStream(seed, seed2)
        self.lock = threading.Lock()
        self._setup(**extra)

    def _setup(self, **extra):
        """Build the sampler's distribution."""

    def _draw(self, cursor, k: int) -> np.ndarray:
        raise NotImplementedError  # each sampler defines its draw

    def _probability(self, values) -> np.ndarray:
        raise NotImplementedError  # and its probabilities (float32)

    def _possible(self) -> int:
        return self.range_max

    def _update(self, true_classes):
        """Learn from the true classes (the learned sampler only)."""

    def _pick(self, stream):
        n = self.num_sampled
        if not self.unique:
            return self._draw(_rts.WordCursor(stream), n), n
        chunk = 2 * n + 16
        while True:  # the first n distinct values of the draw sequence
            values = self._draw(_rts.WordCursor(stream), chunk)
            first = np.sort(np.unique(values, return_index=True)[1])
            if first.size >= n:
                taken = first[:n]
                return values[taken], (int(taken[-1]) + 1 if n else 0)
            chunk *= 2

    def __call__(self, true_classes):
        true_classes = np.asarray(true_classes, np.int64)
        if true_classes.ndim != 2:
            raise _invalid(f"{self.op_type}: true_classes must be a matrix, got shape "
                           f"{list(true_classes.shape)}")
        if true_classes.shape[1] != self.num_true:
            raise _invalid(f"{self.op_type}: true_classes must have num_true columns, "
                           f"expected: {true_classes.shape[1]} was: {self.num_true}")
        if self.unique and self.num_sampled > self.range_max:
            raise _invalid(f"{self.op_type}: Sampler's range is too small: cannot draw "
                           f"{self.num_sampled} distinct classes from {self.range_max}")
        flat = true_classes.reshape(-1)
        bad = (flat < 0) | (flat >= self.range_max)
        if bad.any():
            raise _invalid(f"{self.op_type}: `true_candidate` out of range [0, "
                           f"{self.range_max}), received {int(flat[bad][0])}")
        if self.unique and self._possible() < self.num_sampled:
            raise _invalid(f"{self.op_type}: cannot draw {self.num_sampled} distinct "
                           f"classes from {self._possible()} with nonzero probability")
        with self.lock:
            stream = self.stream.reserve_blocks((2048 * self.num_sampled + 3) // 4)
            sampled, tries = self._pick(stream)
            sampled = sampled.astype(np.int64)
            out = [sampled,
                   _expected(self._probability(flat), self.num_sampled, tries).reshape(
                       true_classes.shape),
                   _expected(self._probability(sampled), self.num_sampled, tries)]
            self._update(flat)
        return out


@cpu_kernel("UniformCandidateSampler")
class UniformSampler(_Sampler):
    op_type = "UniformCandidateSampler"

    def _setup(self):
        self.accept, self.value = _rts.exact_uniform(self.range_max, 64)

    def _draw(self, cursor, k):
        return cursor.draws(k, 0, 2, lambda a: self.accept(_rts.bits64(a)),
                            lambda _, a: self.value(_rts.bits64(a)).astype(np.int64))

    def _probability(self, values):
        return np.full(np.shape(values), np.float32(1.0 / self.range_max))


@cpu_kernel("LogUniformCandidateSampler")
class LogUniformSampler(_Sampler):
    op_type = "LogUniformCandidateSampler"

    def _setup(self):
        self.log_range = float(np.log1p(np.float64(self.range_max)))

    def _draw(self, cursor, k):
        def value(p, _):
            u = _rts.doubles(p[:, 0], p[:, 1])
            return (np.exp(u * self.log_range).astype(np.int64) - 1) % self.range_max
        return cursor.draws(k, 2, 0, None, value)

    def _probability(self, values):
        v = np.asarray(values, np.float64)
        return (np.log((v + 2.0) / (v + 1.0)) / self.log_range).astype(np.float32)


class _UnigramCounts(_Sampler):
    """Counts per class, one each to start; draws in proportion to them."""

    def _setup(self):
        if self.range_max >= _INT32_MAX:
            raise _invalid(f"{self.op_type}: range_max must be less than {_INT32_MAX} for "
                           f"unigram samplers, got {self.range_max}")
        self.counts = np.ones(self.range_max, np.int64)

    def _draw(self, cursor, k):
        total = int(self.counts.sum())
        accept, value = _rts.exact_uniform(total, 32)
        cum = np.cumsum(self.counts)
        return cursor.draws(k, 0, 1, lambda a: accept(a[:, 0].astype(np.uint64)),
                            lambda _, a: np.searchsorted(
                                cum, value(a[:, 0].astype(np.uint64)).astype(np.int64),
                                side="right"))

    def _probability(self, values):
        total = np.float32(self.counts.sum())
        return self.counts[np.asarray(values, np.int64)].astype(np.float32) / total

    def _update(self, true_classes):
        room = max(0, _INT32_MAX - int(self.counts.sum()))
        np.add.at(self.counts, true_classes[:room], 1)


@cpu_kernel("LearnedUnigramCandidateSampler")
class LearnedUnigramSampler(_UnigramCounts):
    op_type = "LearnedUnigramCandidateSampler"


def _alias_table(weights: np.ndarray):
    """Walker's alias table of float32 `weights` as TensorFlow builds it: bucket
    probabilities (float32) and aliases, pairing the last short bucket with the last
    long one."""
    n = weights.size
    total = float(np.cumsum(weights.astype(np.float64))[-1])
    pr = ((weights * np.float32(n)).astype(np.float64) / total).tolist()
    alias = [-1] * n
    low = [i for i in range(n) if pr[i] < 1.0]
    high = [i for i in range(n) if pr[i] >= 1.0]
    while low and high:
        lo, hi = low.pop(), high.pop()
        alias[lo] = hi
        pr[hi] = pr[hi] - (1.0 - pr[lo])
        (low if pr[hi] < 1.0 else high).append(hi)
    prob = np.asarray(pr, np.float32)
    for i in high + low:  # rounding leftovers keep themselves
        prob[i], alias[i] = 1.0, i
    return prob, np.asarray(alias, np.int64)


@cpu_kernel("FixedUnigramCandidateSampler")
class FixedUnigramSampler(_Sampler):
    op_type = "FixedUnigramCandidateSampler"

    def _setup(self, vocab_file, distortion, num_reserved_ids, num_shards, shard,
               unigrams):
        if not vocab_file and not len(unigrams):
            raise _invalid(f"{self.op_type}: Must provide either vocab_file or unigrams.")
        if vocab_file and len(unigrams):
            raise _invalid(f"{self.op_type}: Must only provide one of vocab_file and "
                           "unigrams.")
        kept = [0.0 for i in range(num_reserved_ids) if i % num_shards == shard]
        if vocab_file:
            raw = []
            with open(vocab_file, encoding="utf-8") as f:
                for line in f:
                    line = line.rstrip("\n")
                    if not line.strip():
                        continue
                    try:
                        raw.append(float(line.split(",")[-1]))
                    except ValueError:
                        raise _invalid(f"{self.op_type}: Wrong vocabulary format at line: "
                                       f"{line}") from None
        else:
            raw = list(unigrams)
        # ids count on from the reserved ids this shard kept (TensorFlow's numbering)
        ids = np.arange(len(kept), len(kept) + len(raw))
        mine = np.asarray(raw, np.float32)[ids % num_shards == shard]
        distorted = _rts.c_float_math("powf", mine, np.float32(distortion))
        weights = np.concatenate([np.zeros(len(kept), np.float32), distorted])
        if weights.size != self.range_max:
            raise _invalid(f"{self.op_type}: range is {self.range_max} must be equal to "
                           f"weights size  {weights.size}")
        self.weights = weights
        self.total = np.cumsum(distorted, dtype=np.float32)[-1] if distorted.size else \
            np.float32(0)
        self.prob, self.alias = _alias_table(weights)
        self.accept, self.value = _rts.exact_uniform(weights.size, 32)

    def _possible(self):
        return int(np.count_nonzero(self.weights))

    def _draw(self, cursor, k):
        def value(p, a):
            r = _rts.floats(p[:, 0])
            idx = self.value(a[:, 0].astype(np.uint64)).astype(np.int64)
            return np.where(r < self.prob[idx], idx, self.alias[idx])
        return cursor.draws(k, 1, 1, lambda a: self.accept(a[:, 0].astype(np.uint64)),
                            value)

    def _probability(self, values):
        return self.weights[np.asarray(values, np.int64)] / self.total


@cpu_kernel("AllCandidateSampler")
class AllSampler:
    """Every class in ``[0, num_sampled)``, each expected once (no randomness)."""

    def __init__(self, ctx, *, num_true, num_sampled, unique, seed=0, seed2=0):
        self.num_sampled = int(num_sampled)

    def __call__(self, true_classes):
        true_classes = np.asarray(true_classes, np.int64)
        return [np.arange(self.num_sampled, dtype=np.int64),
                np.ones(true_classes.shape, np.float32),
                np.ones(self.num_sampled, np.float32)]


@cpu_kernel("ComputeAccidentalHits")
def compute_accidental_hits(true_classes, sampled, *, num_true, seed=0, seed2=0):
    """One hit per true class found among the samples, at the last position that holds
    it (TensorFlow keeps one position per sampled value: the last)."""
    position = {c: j for j, c in enumerate(np.asarray(sampled).tolist())}
    rows, cols = [], []
    for i, row in enumerate(np.asarray(true_classes).tolist()):
        for c in row:
            j = position.get(c)
            if j is not None:
                rows.append(i)
                cols.append(j)
    weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
    return [np.asarray(rows, np.int32), np.asarray(cols, np.int64), weights]
