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

Poisson and binomial samples are TensorFlow's too (its samplers, per output, on the
seed's stream). Gamma samples invert the gamma CDF at the seed's uniforms (so
a sample is a smooth function of alpha, as the gradient assumes): deterministic per
seed, not TensorFlow's stream.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import random_tf_streams as _rts
from flowgraph.framework import _philox, errors
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework._philox import binomial_samples, poisson_samples
from flowgraph.framework.philox import philox_blocks, stateless_key_counter

__all__ = ["philox_blocks"]  # (re-exported: the stateful kernels draw through this module)

_SHIFT = np.uint64(32)


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def key_counter(seed) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """The Philox key and starting counter that TensorFlow derives from a seed pair."""
    s = np.asarray(seed).reshape(-1)
    if s.shape != (2,):
        raise _invalid(f"seed must have shape [2], not {list(np.shape(seed))}")
    return stateless_key_counter(*(int(v) for v in s.astype(np.int64)))


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


def _c_stream(seed) -> tuple[int, int, int, int]:
    """The stream's key words and 64-bit counter halves, as the C samplers take them."""
    (k0, k1), (c0, c1, c2, c3) = _stream(seed)
    return k0, k1, c0 | (c1 << 32), c2 | (c3 << 32)


def normal(seed, shape, dtype) -> np.ndarray:
    """Standard normal samples of `dtype` (Box-Muller on pairs of words, in C: the
    float64 values get the C library's last bit, as TensorFlow's)."""
    out = np.empty(int(np.prod(shape)), np.float64 if dtype == np.float64 else np.float32)
    _philox.normal(out, *_c_stream(seed))
    return out.astype(dtype, copy=False).reshape(shape)


def truncated_normal(seed, shape, dtype) -> np.ndarray:
    """Standard normal samples within two standard deviations: rejection per group of
    outputs (4, or 2 in float64), each group reading its own reserved run of 64 blocks
    per output (TF's layout), in C."""
    wide = dtype == np.float64
    out = np.empty(int(np.prod(shape)), np.float64 if wide else np.float32)
    _philox.truncated_normal(out, *_c_stream(seed), 64 * (2 if wide else 4))
    return out.astype(dtype, copy=False).reshape(shape)


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


def categorical(seed, logits, num_samples: int, out_dtype, threads: int | None = None,
                reserve=None) -> np.ndarray:
    """Class indices drawn from each row of `logits` by inverting its unnormalized CDF
    (classes with non-finite logits get no mass), one double (two words) per draw.

    TensorFlow splits the rows over its intra-op `threads`
    (`flowgraph.backends.cpu.random_tf_streams.parallel_for_blocks`); a block of rows
    starting at row ``s`` reads the stream from block ``s * (num_samples + 3) // 4`` on,
    its rows one after another. `reserve(blocks)`, when given, returns the stream to draw
    from (a stateful op's reservation) instead of the seed's."""
    logits = np.asarray(logits)
    batch, classes = logits.shape
    ns = int(num_samples)
    out = np.empty((batch, ns), out_dtype)
    per_row = 2 * (-(-ns // 4) * 4)  # words TF reserves per row (doubles: two words)
    stream = _stream(seed) if reserve is None else reserve(batch * per_row)
    if out.size == 0:
        return out
    threads = _rts.default_threads() if threads is None else int(threads)
    cost = 50 * (ns * np.log(classes) / np.log(2) + classes)
    u = np.empty((batch, ns), np.float64)
    for start, limit in _rts.parallel_for_blocks(batch, int(cost), threads):
        rows = limit - start
        w = _rts.stream_words(stream, start * (ns + 3) // 4, 2 * ns * rows)
        u[start:limit] = _rts.doubles(w[0::2], w[1::2]).reshape(rows, ns)
    x = logits.astype(np.float64)
    finite = np.isfinite(x)
    top = np.max(np.where(finite, x, -np.inf), axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        mass = np.where(finite, np.exp(np.where(finite, x, 0.0) - top), 0.0)
    cdf = np.cumsum(mass, axis=1)
    targets = u * cdf[:, -1:]
    for b in range(batch):
        out[b] = np.searchsorted(cdf[b], targets[b], side="right")
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
    """TensorFlow's Poisson sampler (`flowgraph.framework._philox.poisson_samples`) on
    the seed's stream: the rates are `lam` broadcast to the shape's trailing dimensions,
    each output reads its own 256 blocks."""
    dims = _sample_shape(shape, lam, "lam")
    out_dtype = np.dtype(_np(dtype))
    lead = len(dims) - np.ndim(lam)
    rates = np.ascontiguousarray(np.broadcast_to(np.asarray(lam, np.float64), dims[lead:]))
    num_samples = int(np.prod(dims[:lead]))
    if num_samples * rates.size == 0:
        return np.zeros(dims, out_dtype)
    (k0, k1), c = _stream(seed)
    info = np.iinfo(out_dtype) if out_dtype.kind in "iu" else np.finfo(out_dtype)
    out = np.empty(num_samples * rates.size, np.float64)
    poisson_samples(out, rates.reshape(-1), num_samples, float(info.max), k0, k1,
                    c[0] | (c[1] << 32), c[2] | (c[3] << 32))
    if out_dtype == np.float16:
        out = out.astype(np.float32)
    return out.astype(out_dtype).reshape(dims)


_INVERSION_STRIDE = 42  # blocks TensorFlow reserves per output drawn by inversion


def binomial(stream, shape, counts, probs, out_dtype, op_type: str,
             reserve=None) -> np.ndarray:
    """TensorFlow's binomial samples (`flowgraph.framework._philox.binomial_samples`) on
    `stream`: `counts` and `probs` broadcast to the shape's trailing dimensions; which
    sampler each pair uses is decided in their dtype, as TensorFlow decides it.
    `reserve(num_batches, samples_per_batch)`, when given, returns the stream to draw
    from (a generator's) once the arguments are checked."""
    counts, probs = np.asarray(counts), np.asarray(probs)
    try:
        batch = np.broadcast_shapes(counts.shape, probs.shape)
    except ValueError:
        raise _invalid(f"{op_type}: counts and probs must have compatible batch "
                       f"dimensions: {list(counts.shape)} vs. {list(probs.shape)}") from None
    dims = _shape(shape)
    lead = len(dims) - len(batch)
    if lead < 0 or tuple(dims[lead:]) != tuple(batch):
        raise _invalid(f"{op_type}: Shape passed in must end with broadcasted shape "
                       f"({list(dims)} vs. {list(batch)})")
    out_dtype = np.dtype(out_dtype)
    n, p = (np.broadcast_to(v, batch).reshape(-1) for v in (counts, probs))
    num_samples = int(np.prod(dims[:lead]))
    if reserve is not None:
        stream = reserve(n.size, num_samples)
    if num_samples * n.size == 0:
        return np.zeros(dims, out_dtype)
    one, ten = p.dtype.type(1), p.dtype.type(10)
    with np.errstate(invalid="ignore", over="ignore"):
        q = one - p
        methods = np.full(n.size, 5, np.int8)  # NaN probability
        methods[(p > 0.5) & (p < one)] = np.where((n * q >= ten)[(p > 0.5) & (p < one)],
                                                  2, 6)
        methods[p <= 0.5] = np.where((n * p >= ten)[p <= 0.5], 1, 0)
        methods[p >= one] = 4
        methods[(n.astype(np.float64) <= 0) | (p <= 0)] = 3
    used = np.where(p > 0.5, q, p).astype(np.float64)
    (k0, k1), c = _stream(stream)
    out = np.empty(num_samples * n.size, np.float64)
    binomial_samples(out, np.ascontiguousarray(n, np.float64), np.ascontiguousarray(used),
                     methods, num_samples, _INVERSION_STRIDE, k0, k1,
                     c[0] | (c[1] << 32), c[2] | (c[3] << 32))
    if out_dtype == np.float16:
        out = out.astype(np.float32)
    with np.errstate(invalid="ignore"):
        return out.astype(out_dtype).reshape(dims)


@cpu_kernel("StatelessRandomBinomial", fresh=True)
def stateless_binomial(shape, seed, counts, probs, *, dtype):
    return binomial(seed, shape, counts, probs, _np(dtype), "StatelessRandomBinomial")


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
