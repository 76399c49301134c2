"""CPU kernels for random ops: one Philox generator per (session, op).

The generator's 128-bit key is ``(seed, seed2)`` from the op's attributes (see
`flowgraph.ops.random_ops`), so a new session restarts the same sequence and two ops with
equal seeds start alike; ``seed == seed2 == 0`` means unseeded and draws the key from OS
entropy. A lock serializes draws when two steps run the same op concurrently.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_MASK64 = (1 << 64) - 1


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def make_generator(seed: int, seed2: int) -> np.random.Generator:
    """A Philox generator keyed by both seeds, or from OS entropy when both are 0."""
    if not seed and not seed2:
        return np.random.Generator(np.random.Philox())
    key = ((int(seed) & _MASK64) << 64) | (int(seed2) & _MASK64)
    return np.random.Generator(np.random.Philox(key=key))


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
class RandomUniform(_RandomKernel):
    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape):
        dims = _shape(shape)
        with self.lock:
            out = _floats(lambda s, d: self.rng.random(s, dtype=d), dims, self.dtype)
        if self.dtype == np.float16:  # rounding may reach 1.0; keep [0, 1)
            out[out >= 1] = np.nextafter(np.float16(1), np.float16(0))
        return out


@cpu_kernel("RandomUniformInt")
class RandomUniformInt(_RandomKernel):
    def __init__(self, ctx, *, seed=0, seed2=0, Tout):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(Tout.as_numpy_dtype)

    def __call__(self, shape, minval, maxval):
        dims = _shape(shape)
        if np.ndim(minval) or np.ndim(maxval):
            raise _invalid(f"minval and maxval must be scalars, got shapes "
                           f"{np.shape(minval)} and {np.shape(maxval)}")
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise _invalid(f"Need minval < maxval, got {lo} >= {hi}")
        with self.lock:
            return self.rng.integers(lo, hi, size=dims, dtype=self.dtype)


@cpu_kernel("RandomStandardNormal")
class RandomStandardNormal(_RandomKernel):
    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape):
        dims = _shape(shape)
        with self.lock:
            return _floats(lambda s, d: self.rng.standard_normal(s, dtype=d), dims,
                           self.dtype)


@cpu_kernel("TruncatedNormal")
class TruncatedNormal(_RandomKernel):
    """Standard normal values with every draw outside [-2, 2] redrawn."""

    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def _draw(self, shape, dtype):
        out = self.rng.standard_normal(shape, dtype=dtype)
        bad = np.flatnonzero(np.abs(out) > 2)
        flat = out.reshape(-1)
        while bad.size:
            redraw = self.rng.standard_normal(bad.size, dtype=dtype)
            flat[bad] = redraw
            bad = bad[np.abs(redraw) > 2]
        return out

    def __call__(self, shape):
        dims = _shape(shape)
        with self.lock:
            return _floats(self._draw, dims, self.dtype)


@cpu_kernel("RandomShuffle")
class RandomShuffle(_RandomKernel):
    def __call__(self, value):
        if value.ndim == 0 or value.shape[0] <= 1:
            return value
        with self.lock:
            perm = self.rng.permutation(value.shape[0])
        return value[perm]


@cpu_kernel("Multinomial")
class Multinomial(_RandomKernel):
    """Inverse-CDF sampling per row of softmax(logits), in float64."""

    def __init__(self, ctx, *, seed=0, seed2=0, output_dtype):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(output_dtype.as_numpy_dtype)

    def __call__(self, logits, num_samples):
        if logits.ndim != 2:
            raise _invalid(f"logits should be a matrix, got shape {logits.shape}")
        n = int(num_samples)
        if n < 0:
            raise _invalid(f"num_samples should be nonnegative, got {n}")
        batch, classes = logits.shape
        if classes == 0:
            raise _invalid(f"num_classes should be positive, got {classes} "
                           f"(logits shape {logits.shape})")
        x = logits.astype(np.float64)
        x = x - np.max(x, axis=1, keepdims=True)
        cdf = np.cumsum(np.exp(x), axis=1)
        with self.lock:
            u = self.rng.random((batch, n))
        out = np.empty((batch, n), dtype=self.dtype)
        for i in range(batch):
            targets = u[i] * cdf[i, -1]
            out[i] = np.minimum(np.searchsorted(cdf[i], targets, side="right"), classes - 1)
        return out
