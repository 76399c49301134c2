"""How TensorFlow's CPU samplers walk their Philox streams, for the kernels that draw the
same numbers (multinomial, the candidate samplers, the shuffle queue, gamma, Poisson).

A Philox stream is a key and a 128-bit counter; each counter value is one block of four
32-bit words. TensorFlow's samplers read it in two ways:

- *word by word* (its ``SimplePhilox``): a uint32 is one word, a float one word (23
  mantissa bits), a double two words (hi 20 + lo 32 mantissa bits), a uint64 two words
  (low first), and an unbiased integer in ``[0, n)`` rejects words below
  ``2**32 % n`` before taking ``word % n``;
- *per shard of a parallel loop*: a kernel that splits its rows over the intra-op
  threads starts each shard at a counter offset computed from the shard's first row, so
  which rows share a stream depends on how TensorFlow cut the loop. `parallel_for_blocks`
  reproduces the cut (Eigen's block sizing for a given cost per row and thread count)::

      rows 0..255, cost 50_000 a row, 2 threads  ->  [(0, 64), (64, 128), ...]

The thread count is the session's ``intra_op_parallelism_threads`` or, when 0, the
cores this process may run on (TensorFlow's default), `intra_op_threads`.

Example
-------
>>> parallel_for_blocks(10, 100, 4)
[(0, 10)]
>>> parallel_for_blocks(256, 50_000, 2)[:2]
[(0, 32), (32, 64)]
"""

from __future__ import annotations

import math
import os

import numpy as np

from flowgraph.framework._philox import c_float_math as _c_float_math
from flowgraph.framework.philox import philox_blocks

__all__ = ["WordCursor", "bits64", "c_float_math", "default_threads", "doubles",
           "exact_uniform", "floats", "intra_op_threads", "parallel_for_blocks",
           "stream_words"]

_SHIFT = np.uint64(32)

# Eigen's cost model constants (cycles): a thread is worth starting per 100k cycles of
# work, and a task should hold about 40k.
_STARTUP_CYCLES = 100_000
_PER_THREAD_CYCLES = 100_000
_TASK_CYCLES = 40_000


def default_threads() -> int:
    """The intra-op threads TensorFlow starts when not told: the usable cores."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def intra_op_threads(ctx) -> int:
    """The intra-op thread count of the session a kernel runs in (`default_threads` when
    the session's config leaves it 0 or there is no session)."""
    config = getattr(getattr(ctx, "session", None), "_config", None)
    asked = int(getattr(config, "intra_op_parallelism_threads", 0) or 0)
    return asked if asked > 0 else default_threads()


def parallel_for_blocks(n: int, cost: float, threads: int) -> list[tuple[int, int]]:
    """The ``[start, limit)`` ranges TensorFlow's ``Shard`` hands its work function for
    `n` units of `cost` cycles each on `threads` threads (Eigen's ``parallelFor``): one
    range when the work is too small to split, else blocks of Eigen's chosen size."""
    if n <= 0:
        return []
    cost = float(cost)
    total = n * cost
    wanted = min(threads, max(1, int(min((total - _STARTUP_CYCLES) / _PER_THREAD_CYCLES
                                         + 0.9, 2**31 - 1))))
    if n == 1 or threads <= 1 or wanted == 1:
        return [(0, n)]
    block_f = 1.0 / (cost / _TASK_CYCLES) if cost > 0 else math.inf
    size = min(n, max(-(-n // (4 * threads)), int(min(block_f, 2**62))))
    largest = min(n, 2 * size)
    count = -(-n // size)
    best = count / (-(-count // threads) * threads)
    prev = count
    while best < 1.0 and prev > 1:
        coarser = -(-n // (prev - 1))
        if coarser > largest:
            break
        coarser_count = -(-n // coarser)
        prev = coarser_count
        efficiency = coarser_count / (-(-coarser_count // threads) * threads)
        if efficiency + 0.01 >= best:
            size, count = coarser, coarser_count
            best = max(best, efficiency)
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def stream_words(stream, first_block: int, n_words: int) -> np.ndarray:
    """`n_words` consecutive words of `stream` (a ``(key, counter)`` pair) from block
    `first_block` on."""
    key, counter = stream
    n_blocks = -(-int(n_words) // 4)
    offsets = np.arange(first_block, first_block + n_blocks, dtype=np.uint64)
    return philox_blocks(key, counter, 0, offsets).reshape(-1)[:n_words]


def floats(words: np.ndarray) -> np.ndarray:
    """A float32 in ``[0, 1)`` per word (``SimplePhilox::RandFloat``)."""
    return ((words & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - 1.0


def doubles(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """A float64 in ``[0, 1)`` per pair of words (``SimplePhilox::RandDouble``)."""
    man = ((hi.astype(np.uint64) & np.uint64(0xFFFFF)) << _SHIFT) | lo.astype(np.uint64)
    return (man | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0


class WordCursor:
    """Reads a stream's words in order from a starting block, as ``SimplePhilox`` does;
    `draws` makes many draws at once where each takes a fixed number of words, falling
    back to one draw at a time only around a rejected attempt.

    >>> from flowgraph.framework.philox import WordStream
    >>> c, w = WordCursor(((1, 0), (0, 0, 2, 0))), WordStream(1, 2)
    >>> c.take(6).tolist() == [w.next() for _ in range(6)]
    True
    """

    _CHUNK = 1024  # words computed at once

    def __init__(self, stream, first_block: int = 0) -> None:
        self._stream = stream
        self._base = int(first_block) * 4  # word index of _buf[0]
        self._buf = np.empty(0, np.uint32)
        self._at = 0  # the next word's index in _buf

    def _ensure(self, n: int) -> None:
        if self._at + n <= self._buf.size:
            return
        start = self._base + self._at
        start -= start % 4  # whole blocks
        count = max(self._base + self._at + n - start, self._CHUNK)
        self._buf = stream_words(self._stream, start // 4, count)
        self._at = self._base + self._at - start
        self._base = start

    def peek(self, n: int) -> np.ndarray:
        self._ensure(n)
        return self._buf[self._at:self._at + n]

    def take(self, n: int) -> np.ndarray:
        words = self.peek(n)
        self._at += n
        return words

    def draws(self, k: int, prefix: int, attempt: int, accept, value) -> np.ndarray:
        """`k` draws: each reads `prefix` words, then `attempt` words at a time until
        ``accept(attempt_words)`` (rows of a 2-D array) holds; ``value(prefix_words,
        attempt_words)`` maps rows of both to the draws."""
        width = prefix + attempt
        out = []
        while k > 0:
            w = self.peek(k * width).reshape(k, width)
            ok = accept(w[:, prefix:]) if attempt else np.ones(k, bool)
            good = k if ok.all() else int(np.argmin(ok))
            out.append(value(w[:good, :prefix], w[:good, prefix:]))
            self._at += good * width
            k -= good
            if k:  # draw `good` rejected an attempt: finish it one attempt at a time
                pre = self.take(prefix)[None]
                while True:
                    att = self.take(attempt)[None]
                    if accept(att)[0]:
                        break
                out.append(value(pre, att))
                k -= 1
        return np.concatenate(out) if out else np.empty(0, np.int64)


def exact_uniform(n: int, bits: int = 32):
    """``(accept, value)`` of TensorFlow's unbiased integer in ``[0, n)`` from `bits`
    random bits (``ExactUniformInt``): a power of two masks; otherwise draws below
    ``(2**bits - 1) % n + 1`` are rejected and the rest taken modulo `n`."""
    n = int(n)
    top = (1 << bits) - 1
    if n & (n - 1) == 0:
        mask = np.uint64((n - 1) & top)
        return (lambda b: np.ones(b.shape[0], bool)), (lambda b: b & mask)
    rem, m = np.uint64(top % n + 1), np.uint64(n)
    return (lambda b: b >= rem), (lambda b: b % m)


def bits64(words: np.ndarray) -> np.ndarray:
    """``SimplePhilox::Rand64`` of rows of two words (low word first)."""
    return words[:, 0].astype(np.uint64) | (words[:, 1].astype(np.uint64) << _SHIFT)


def c_float_math(name: str, *args) -> np.ndarray:
    """C's float32 math function `name` (``log1pf``, ``expm1f``, ``powf``) elementwise,
    as TensorFlow's kernels get it (NumPy's float32 functions may round differently in
    the last bit); the loop runs in C (`flowgraph.framework._philox.c_float_math`)."""
    if name not in ("log1pf", "expm1f", "powf"):
        raise ValueError(f"c_float_math: unknown function {name!r}")
    arrays = np.broadcast_arrays(*(np.asarray(a, np.float32) for a in args))
    shape = arrays[0].shape
    x = np.ascontiguousarray(arrays[0]).reshape(-1)
    y = np.ascontiguousarray(arrays[1]).reshape(-1) if len(arrays) > 1 else x
    out = np.empty_like(x)
    _c_float_math(name, x, y, out)
    return out.reshape(shape)
