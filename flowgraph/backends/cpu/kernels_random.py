"""CPU kernels for random ops: one Philox generator per (session, op).

``RandomUniform``, ``RandomUniformInt``, ``RandomStandardNormal`` and ``TruncatedNormal``
draw TensorFlow's stream bit for bit (`_TFStream`), so a seeded TF1 program prints the
numbers TensorFlow prints: the Philox-4x32-10 key is the op's ``seed`` (two words), the
counter's high half its ``seed2``; every run reserves 256 blocks per output and starts
where the last run's reservation ended; the samples are the stateless kernels'
(`flowgraph.backends.cpu.kernels_random_stateless`), which share TensorFlow's layout.
The other random kernels draw from NumPy's Philox generator keyed by both seeds. In all,
a new session restarts the same sequence, two ops with equal seeds start alike, and
``seed == seed2 == 0`` means unseeded (a key from OS entropy). A lock serializes draws
when two steps run the same op concurrently.
"""

from __future__ import annotations

import secrets
import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_random_stateless as _sl
from flowgraph.backends.cpu import random_tf_streams as _rts
from flowgraph.framework import errors

_MASK32 = (1 << 32) - 1
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
_BLOCKS_PER_OUTPUT = 256  # what TF reserves per output of a run (its kernels' multiplier)


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def make_generator(seed: int, seed2: int) -> np.random.Generator:
    """A Philox generator keyed by both seeds, or from OS entropy when both are 0."""
    if not seed and not seed2:
        return np.random.Generator(np.random.Philox())
    key = ((int(seed) & _MASK64) << 64) | (int(seed2) & _MASK64)
    return np.random.Generator(np.random.Philox(key=key))


class _TFStream:
    """TensorFlow's guarded Philox generator of one stateful random op: key ``seed``,
    counter ``seed2 << 64``; `reserve` returns where a run of `n` outputs draws from and
    moves the counter past ``256 * n`` blocks.

    >>> s = _TFStream(1, 2)
    >>> s.reserve(3)[1], s.reserve(1)[1]
    ((0, 0, 2, 0), (768, 0, 2, 0))
    """

    def __init__(self, seed: int, seed2: int) -> None:
        if not seed and not seed2:  # unseeded: TF picks both at random
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        seed, seed2 = int(seed) & _MASK64, int(seed2) & _MASK64
        self.key = (seed & _MASK32, seed >> 32)
        self.counter = seed2 << 64
        self.lock = threading.Lock()

    def reserve(self, n: int) -> _sl.KeyCounter:
        return self.reserve_blocks(_BLOCKS_PER_OUTPUT * int(n))

    def reserve_blocks(self, blocks: int) -> _sl.KeyCounter:
        """Where the next `blocks` Philox blocks start; the counter moves past them."""
        with self.lock:
            c = self.counter
            self.counter = (c + int(blocks)) & _MASK128
        return _sl.KeyCounter((self.key, (c & _MASK32, (c >> 32) & _MASK32,
                                          (c >> 64) & _MASK32, c >> 96)))


def _tf_floats(sample, stream, dims, dtype: np.dtype) -> np.ndarray:
    """`sample(stream, dims, dtype)` for float16/32/64; other float types (bfloat16) are
    sampled as float32 and rounded."""
    if dtype in (np.float16, np.float32, np.float64):
        return sample(stream, dims, dtype)
    return sample(stream, dims, np.dtype(np.float32)).astype(dtype)


def _shape(shape: np.ndarray) -> tuple[int, ...]:
    if shape.ndim != 1:
        raise _invalid(f"shape must be a 1-D tensor, got shape {shape.shape}")
    dims = tuple(int(d) for d in shape)
    for d in dims:
        if d < 0:
            raise _invalid(f"Dimension {d} must be >= 0 (shape {list(dims)})")
    return dims


class _RandomKernel:
    def __init__(self, ctx, *, seed=0, seed2=0):
        self.rng = make_generator(seed, seed2)
        self.lock = threading.Lock()


def _floats(draw, shape, dtype: np.dtype) -> np.ndarray:
    """`draw(shape, float32|float64)`, with float16 drawn in float32 and rounded."""
    if dtype == np.float16:
        return draw(shape, np.float32).astype(np.float16)
    return draw(shape, dtype)


@cpu_kernel("RandomUniform")
class RandomUniform:
    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape):
        dims = _shape(shape)
        stream = self.stream.reserve(int(np.prod(dims)))
        return _tf_floats(_sl.uniform, stream, dims, self.dtype)


@cpu_kernel("RandomUniformInt")
class RandomUniformInt:
    def __init__(self, ctx, *, seed=0, seed2=0, Tout):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(Tout.as_numpy_dtype)

    def __call__(self, shape, minval, maxval):
        dims = _shape(shape)
        if np.ndim(minval) or np.ndim(maxval):
            raise _invalid(f"minval and maxval must be scalars, got shapes "
                           f"{np.shape(minval)} and {np.shape(maxval)}")
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise _invalid(f"Need minval < maxval, got {lo} >= {hi}")
        stream = self.stream.reserve(int(np.prod(dims)))
        return _sl.uniform_int(stream, dims, lo, hi, self.dtype)


@cpu_kernel("RandomStandardNormal")
class RandomStandardNormal:
    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape):
        dims = _shape(shape)
        stream = self.stream.reserve(int(np.prod(dims)))
        return _tf_floats(_sl.normal, stream, dims, self.dtype)


@cpu_kernel("TruncatedNormal")
class TruncatedNormal:
    """Standard normal values within [-2, 2] (rejection within each group's reserved
    blocks, as TensorFlow draws them)."""

    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape):
        dims = _shape(shape)
        stream = self.stream.reserve(int(np.prod(dims)))
        return _tf_floats(_sl.truncated_normal, stream, dims, self.dtype)


def shuffled_order(words, size: int) -> list:
    """TensorFlow's shuffle of ``range(size)`` by 32-bit `words` (``size - 1`` of them):
    position i swaps with ``i + word % (size - i)``, front to back."""
    order = list(range(size))
    for i, word in enumerate(words[: size - 1].tolist()):
        j = i + word % (size - i)
        order[i], order[j] = order[j], order[i]
    return order


@cpu_kernel("RandomShuffle")
class RandomShuffle:
    """TensorFlow's shuffle along the first axis and its stream: one 32-bit word per
    position but the last, from a run's reservation of ``ceil((n - 1) / 4)`` blocks."""

    def __init__(self, ctx, *, seed=0, seed2=0):
        self.stream = _TFStream(seed, seed2)

    def __call__(self, value):
        if value.ndim == 0 or value.shape[0] <= 1 or value.size <= 1:
            return value
        size = value.shape[0]
        stream = self.stream.reserve_blocks(-(-(size - 1) // 4))
        return value[shuffled_order(_sl._words(stream, size - 1), size)]


@cpu_kernel("Multinomial")
class Multinomial:
    """TensorFlow's categorical draws and stream: each run reserves
    ``256 * batch * 2 * ceil4(num_samples)`` blocks; the rows are drawn as TensorFlow's
    intra-op threads split them (`_sl.categorical`)."""

    def __init__(self, ctx, *, seed=0, seed2=0, output_dtype):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(output_dtype.as_numpy_dtype)
        self.threads = _rts.intra_op_threads(ctx)

    def __call__(self, logits, num_samples):
        if logits.ndim != 2:
            raise _invalid(f"Multinomial: logits should be a matrix, got shape "
                           f"{list(logits.shape)}")
        if np.ndim(num_samples):
            raise _invalid(f"Multinomial: num_samples should be a scalar, got shape "
                           f"{list(np.shape(num_samples))}")
        n = int(num_samples)
        if n < 0:
            raise _invalid(f"Multinomial: num_samples should be non-negative, got {n}")
        if logits.shape[1] == 0:
            raise _invalid(f"Multinomial: num_classes should be positive, got 0 "
                           f"(logits shape {list(logits.shape)})")
        if logits.shape[0] * n == 0:
            return np.empty((logits.shape[0], n), self.dtype)
        return _sl.categorical(None, logits, n, self.dtype, self.threads,
                               reserve=self.stream.reserve)
