"""CPU kernels of the stateless random ops (`flowgraph/ops/random_stateless_ops.py`).

A stateless op's value is a function of its ``seed`` input (two integers) and its shape
alone. Uniform, normal, truncated-normal, integer and categorical samples follow
TensorFlow's Philox-4x32-10 stream bit for bit:

- the seed pair becomes a Philox key and a starting counter (``key_counter``): the pair
  is the counter of one Philox block under a fixed key, and that block's four words are
  the new key (two words) and the counter's high half (two words);
- each block gives four 32-bit words, consumed in order; a float32 takes one word (23
  mantissa bits), a float64 two (52 bits), a normal pair two floats (Box-Muller);
- truncated normals take words one at a time; each group of outputs (four for float32,
  two for float64) reserves 256 words per output, so groups never share words;
- categorical draws take two words each, row after row.

Gamma samples invert the gamma CDF at the seed's uniforms (so a sample is a smooth
function of alpha, as the gradient assumes); Poisson and binomial samples come from
NumPy's generators keyed by the same Philox key: deterministic per seed, not
TensorFlow's stream.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.philox import philox_blocks

__all__ = ["philox_blocks"]  # (re-exported: the stateful kernels draw through this module)

_SHIFT = np.uint64(32)


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def key_counter(seed) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """The Philox key and starting counter that TensorFlow derives from a seed pair."""
    s = np.asarray(seed).reshape(-1)
    if s.shape != (2,):
        raise _invalid(f"seed must have shape [2], not {list(np.shape(seed))}")
    s0, s1 = (int(v) & ((1 << 64) - 1) for v in s.astype(np.int64))
    counter = (s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32)
    mix = [int(v) for v in philox_blocks((0x3EC8F720, 0x02461E29), counter, 1)[0]]
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])


class KeyCounter(tuple):
    """A Philox key (two words) and counter (four words) given as such, as the ``*V2``
    stateless ops and the generator's state pass them: ``KeyCounter((key, counter))``."""


def _stream(seed) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    return tuple(seed) if isinstance(seed, KeyCounter) else key_counter(seed)


def _words(seed, n_words: int) -> np.ndarray:
    key, counter = _stream(seed)
    return philox_blocks(key, counter, -(-n_words // 4)).reshape(-1)[:n_words]


def _float32(words):
    return ((words & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - 1.0


def _float64(hi, lo):
    man = ((hi.astype(np.uint64) & np.uint64(0xFFFFF)) << _SHIFT) | lo.astype(np.uint64)
    return (man | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0


def _shape(shape) -> tuple[int, ...]:
    dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in dims):
        raise _invalid(f"shape must not have negative dimensions, got {list(dims)}")
    return dims


def uniform(seed, shape, dtype) -> np.ndarray:
    """Uniform samples in ``[0, 1)`` of `dtype` (float16/32/64)."""
    n = int(np.prod(shape))
    if dtype == np.float64:
        w = _words(seed, 4 * -(-n // 2)).reshape(-1, 2)
        return _float64(w[:, 0], w[:, 1])[:n].reshape(shape)
    if dtype == np.float16:
        w = _words(seed, n)
        bits = (w & np.uint32(0x3FF)).astype(np.uint16) | np.uint16(0x3C00)
        return (bits.view(np.float16) - np.float16(1.0)).reshape(shape)
    return _float32(_words(seed, n)).reshape(shape)


def _f32(fn, x):
    # float32 math as C's logf/sinf/cosf round it (NumPy's float32 loops may be an ulp off)
    return fn(x.astype(np.float64)).astype(np.float32)


def _box_muller32(x0, x1):
    u1 = np.maximum(_float32(x0), np.float32(1e-7))
    v1 = (2.0 * np.pi * _float32(x1).astype(np.float64)).astype(np.float32)  # C: double
    r = np.sqrt(np.float32(-2.0) * _f32(np.log, u1))
    return _f32(np.sin, v1) * r, _f32(np.cos, v1) * r


def _box_muller64(w):
    u1 = np.maximum(_float64(w[:, 0], w[:, 1]), 1e-7)
    v1 = 2.0 * np.pi * _float64(w[:, 2], w[:, 3])
    r = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * r, np.cos(v1) * r


def normal(seed, shape, dtype) -> np.ndarray:
    """Standard normal samples of `dtype`."""
    n = int(np.prod(shape))
    if dtype == np.float64:
        w = _words(seed, 4 * -(-n // 2)).reshape(-1, 4)
        f0, f1 = _box_muller64(w)
        return np.stack([f0, f1], axis=1).reshape(-1)[:n].reshape(shape)
    w = _words(seed, 2 * -(-n // 2)).reshape(-1, 2)
    f0, f1 = _box_muller32(w[:, 0], w[:, 1])
    return np.stack([f0, f1], axis=1).reshape(-1)[:n].astype(dtype).reshape(shape)


def _truncated_candidates(words, dtype):
    """The normals that Box-Muller makes of consecutive words, in order."""
    if dtype == np.float64:
        pairs = words[..., : words.shape[-1] // 4 * 4].reshape(*words.shape[:-1], -1, 4)
        f0, f1 = _box_muller64(pairs.reshape(-1, 4))
    else:
        pairs = words.reshape(*words.shape[:-1], -1, 2)
        f0, f1 = _box_muller32(pairs[..., 0].reshape(-1), pairs[..., 1].reshape(-1))
    return np.stack([f0, f1], axis=1).reshape(*words.shape[:-1], -1)


def truncated_normal(seed, shape, dtype) -> np.ndarray:
    """Standard normal samples within two standard deviations: rejection per group of
    outputs, each group reading its own reserved run of Philox blocks (TF's layout).
    The first blocks of every group are drawn at once; the rare group they leave short
    reads on through its reserved run."""
    n = int(np.prod(shape))
    if n == 0:
        return np.zeros(shape, dtype)
    group = 2 if dtype == np.float64 else 4
    reserved = 64 * group
    key, counter = _stream(seed)
    n_groups = -(-n // group)
    first = 4
    offsets = (np.arange(n_groups, dtype=np.uint64)[:, None] * np.uint64(reserved)
               + np.arange(first, dtype=np.uint64)[None, :]).reshape(-1)
    words = philox_blocks(key, counter, 0, offsets).reshape(n_groups, -1)
    cand = _truncated_candidates(words, dtype)
    ok = np.abs(cand) < 2.0
    enough = ok.sum(axis=1) >= group
    out = np.empty((n_groups, group), np.float64 if dtype == np.float64 else np.float32)
    # the first `group` accepted candidates of each group with enough of them
    rank = np.cumsum(ok, axis=1) - 1
    sel = ok & (rank < group) & enough[:, None]
    out[enough] = cand[sel].reshape(-1, group)
    for g in np.nonzero(~enough)[0]:
        offs = np.uint64(g) * np.uint64(reserved) + np.arange(reserved, dtype=np.uint64)
        more = _truncated_candidates(philox_blocks(key, counter, 0, offs).reshape(-1), dtype)
        out[g] = more[np.abs(more) < 2.0][:group]
    return out.reshape(-1)[:n].astype(dtype).reshape(shape)


def uniform_int(seed, shape, minval: int, maxval: int, dtype) -> np.ndarray:
    """Integers in ``[minval, maxval)``: ``minval + bits % (maxval - minval)``."""
    n = int(np.prod(shape))
    span = int(maxval) - int(minval)
    if dtype == np.int64:
        w = _words(seed, 2 * n).reshape(-1, 2).astype(np.uint64)
        bits = w[:, 0] | (w[:, 1] << _SHIFT)
    else:
        bits = _words(seed, n).astype(np.uint64)
    vals = (bits % np.uint64(span)).astype(np.int64) + int(minval)
    return vals.astype(dtype).reshape(shape)


def full_int(seed, shape, dtype) -> np.ndarray:
    """Integers over the whole range of `dtype` (the Philox words, bit-cast)."""
    n = int(np.prod(shape))
    if np.dtype(dtype).itemsize == 8:
        w = _words(seed, 2 * n).reshape(-1, 2).astype(np.uint64)
        return (w[:, 0] | (w[:, 1] << _SHIFT)).view(np.int64).astype(dtype).reshape(shape)
    return _words(seed, n).view(np.int32).astype(dtype).reshape(shape)


def categorical(seed, logits, num_samples: int, out_dtype) -> np.ndarray:
    """Class indices drawn from each row of `logits` by inverting its CDF; the rows read
    one stream in turn, two words per draw (TF's order when one thread does all rows)."""
    logits = np.asarray(logits, np.float64)
    batch = logits.shape[0]
    w = _words(seed, 2 * batch * num_samples).reshape(batch, num_samples, 2)
    out = np.zeros((batch, num_samples), out_dtype)
    for b, row in enumerate(logits):
        finite = np.isfinite(row)
        top = row[finite].max() if finite.any() else 0.0
        cdf = np.cumsum(np.where(finite, np.exp(np.where(finite, row, 0.0) - top), 0.0))
        total = cdf[-1] if cdf.size else 0.0
        to_find = _float64(w[b, :, 0], w[b, :, 1]) * total
        out[b] = np.searchsorted(cdf, to_find, side="right")
    return out


def numpy_generator(seed) -> np.random.Generator:
    """A NumPy Philox generator keyed by the seed pair's Philox key (for the samplers
    whose TensorFlow stream is not reproduced)."""
    key, counter = _stream(seed)
    return np.random.Generator(np.random.Philox(
        key=key[0] | (key[1] << 32), counter=[0, 0, counter[2], counter[3]]))


def _np(dtype):
    return _dtypes.as_dtype(dtype).as_numpy_dtype


# -- kernels -----------------------------------------------------------------------------
@cpu_kernel("StatelessRandomUniform", fresh=True)
def stateless_uniform(shape, seed, *, dtype):
    return uniform(seed, _shape(shape), _np(dtype))


@cpu_kernel("StatelessRandomNormal", fresh=True)
def stateless_normal(shape, seed, *, dtype):
    return normal(seed, _shape(shape), _np(dtype))


@cpu_kernel("StatelessTruncatedNormal", fresh=True)
def stateless_truncated_normal(shape, seed, *, dtype):
    return truncated_normal(seed, _shape(shape), _np(dtype))


@cpu_kernel("StatelessRandomUniformInt", fresh=True)
def stateless_uniform_int(shape, seed, minval, maxval, *, dtype):
    lo, hi = int(minval), int(maxval)
    if hi <= lo:
        raise _invalid(f"Need minval < maxval: {lo} >= {hi}")
    return uniform_int(seed, _shape(shape), lo, hi, _np(dtype))


@cpu_kernel("StatelessRandomUniformFullInt", fresh=True)
def stateless_uniform_full_int(shape, seed, *, dtype):
    return full_int(seed, _shape(shape), _np(dtype))


@cpu_kernel("StatelessMultinomial", fresh=True)
def stateless_multinomial(logits, num_samples, seed, *, output_dtype):
    n = int(num_samples)
    if n < 0:
        raise _invalid(f"num_samples should be nonnegative, got {n}")
    if logits.ndim != 2:
        raise _invalid(f"logits should be a matrix, got shape {list(logits.shape)}")
    return categorical(seed, logits, n, _np(output_dtype))


def _sample_shape(shape, param, what: str):
    dims = _shape(shape)
    pshape = np.shape(param)
    if len(pshape) > len(dims) or (pshape and tuple(dims[-len(pshape):]) != pshape
                                   and np.broadcast_shapes(dims, pshape) != dims):
        raise _invalid(f"{what} of shape {list(pshape)} does not broadcast to the "
                       f"requested shape {list(dims)}")
    return dims


@cpu_kernel("StatelessRandomGammaV2", fresh=True)
def stateless_gamma(shape, seed, alpha):
    # Inverse-CDF sampling of the seed's uniforms: for a fixed seed the sample is a
    # smooth function of alpha, the one whose derivative the gradient computes.
    from scipy import special

    dims = _sample_shape(shape, alpha, "alpha")
    a = np.broadcast_to(np.asarray(alpha, np.float64), dims)
    u = uniform(seed, dims, np.float64)
    tiny = np.finfo(alpha.dtype).tiny
    return np.maximum(special.gammaincinv(a, u), tiny).astype(alpha.dtype)


@cpu_kernel("StatelessRandomPoisson", fresh=True)
def stateless_poisson(shape, seed, lam, *, dtype):
    dims = _sample_shape(shape, lam, "lam")
    rate = np.broadcast_to(np.asarray(lam, np.float64), dims)
    return numpy_generator(seed).poisson(rate).astype(_np(dtype))


@cpu_kernel("StatelessRandomBinomial", fresh=True)
def stateless_binomial(shape, seed, counts, probs, *, dtype):
    dims = _sample_shape(shape, counts, "counts")
    _sample_shape(shape, probs, "probs")
    n = np.broadcast_to(np.asarray(counts, np.float64), dims).astype(np.int64)
    p = np.clip(np.broadcast_to(np.asarray(probs, np.float64), dims), 0.0, 1.0)
    return numpy_generator(seed).binomial(n, p).astype(_np(dtype))


@cpu_kernel("StatelessParameterizedTruncatedNormal", fresh=True)
def stateless_parameterized_truncated_normal(shape, seed, means, stddevs, minvals, maxvals):
    dims = _shape(shape)
    mu, sd, lo, hi = (np.broadcast_to(np.asarray(v, np.float64), dims)
                      for v in (means, stddevs, minvals, maxvals))
    rng = numpy_generator(seed)
    a = (lo - mu) / sd
    b = (hi - mu) / sd
    from scipy.special import ndtr, ndtri

    u = rng.uniform(size=dims)
    z = ndtri(ndtr(a) + u * (ndtr(b) - ndtr(a)))
    return (mu + sd * np.clip(z, a, b)).astype(means.dtype)
