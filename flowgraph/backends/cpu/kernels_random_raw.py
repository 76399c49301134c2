"""CPU kernels of `flowgraph/ops/random_raw_ops.py`, on the samplers of the random ops
they extend: ``RandomPoisson`` is ``RandomPoissonV2``'s kernel (TensorFlow's stream),
``StatelessRandomGammaV3`` draws ``StatelessRandomGammaV2``'s inverse-CDF gamma from the
uniforms of a key and counter, and a seed's key and counter are TensorFlow's."""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_random_stateless as _sl
from flowgraph.backends.cpu.kernels_misc_compat import RandomPoisson
from flowgraph.backends.cpu.kernels_random import _shape, make_generator
from flowgraph.backends.cpu.kernels_random_shuffle_stateless import (
    stateless_random_get_key_counter,
)
from flowgraph.backends.cpu.kernels_random_stateful import PHILOX, _v2_stream, stateful_normal
from flowgraph.framework import errors


@cpu_kernel("RandomPoisson")
class RandomPoissonV1(RandomPoisson):
    """``RandomPoissonV2``'s draws in the rate's dtype (one ``dtype`` types both)."""

    def __init__(self, ctx, *, seed=0, seed2=0, dtype=None):
        from flowgraph.framework import dtypes

        super().__init__(ctx, seed=seed, seed2=seed2, dtype=dtypes.float64)

    def __call__(self, shape, rate):
        return super().__call__(shape, rate).astype(np.asarray(rate).dtype)


@cpu_kernel("StatelessRandomGetKeyCounterAlg", fresh=True)
def stateless_random_get_key_counter_alg(seed, *, Tseed):
    key, counter = stateless_random_get_key_counter(seed, Tseed=Tseed)
    return key, counter, np.array(PHILOX, np.int32)  # the CPU's choice, as TensorFlow's


@cpu_kernel("StatelessRandomGetAlg", fresh=True)
def stateless_random_get_alg():
    return np.array(PHILOX, np.int32)


@cpu_kernel("StatelessRandomGammaV3", fresh=True)
def stateless_gamma_v3(shape, key, counter, alg, alpha, *, shape_dtype):
    from scipy import special

    dims = _sl._sample_shape(shape, alpha, "alpha")
    a = np.broadcast_to(np.asarray(alpha, np.float64), dims)
    u = _sl.uniform(_v2_stream(key, counter, alg, "StatelessRandomGammaV3"), dims,
                    np.float64)
    tiny = np.finfo(alpha.dtype).tiny
    return np.maximum(special.gammaincinv(a, u), tiny).astype(alpha.dtype)


@cpu_kernel("NonDeterministicInts")
def non_deterministic_ints(shape, *, dtype, shape_dtype):
    dims = _shape(np.asarray(shape))
    out = np.dtype(dtype.as_numpy_dtype)
    if out.kind not in "iu":
        raise errors.InvalidArgumentError(
            None, None, f"NonDeterministicInts: dtype must be an integer type, got "
            f"{dtype.name}")
    info = np.iinfo(out)
    rng = np.random.default_rng()  # fresh OS entropy on every run
    return rng.integers(info.min, info.max, size=dims, dtype=out, endpoint=True)


@cpu_kernel("ParameterizedTruncatedNormal")
class ParameterizedTruncatedNormal:
    """Normal draws restricted to ``[minval, maxval]`` per batch (the first dimension of
    `shape`; each parameter is a scalar or one value per batch), by inverting the CDF on
    the truncated interval, from a generator keyed by the seeds."""

    def __init__(self, ctx, *, seed=0, seed2=0, dtype=None):
        self.rng = make_generator(seed, seed2)
        self.lock = threading.Lock()

    def __call__(self, shape, means, stdevs, minvals, maxvals):
        from scipy.special import ndtr, ndtri

        dims = _shape(np.asarray(shape))
        batch = dims[0] if dims else 1
        rest = (1,) * max(len(dims) - 1, 0)
        params = []
        for what, v in (("means", means), ("stdevs", stdevs), ("minvals", minvals),
                        ("maxvals", maxvals)):
            flat = np.asarray(v, np.float64).reshape(-1)
            if flat.size not in (1, batch):
                raise errors.InvalidArgumentError(
                    None, None, f"ParameterizedTruncatedNormal: Input {what} should have "
                    f"length 1 or shape[0], got shape: {list(np.shape(v))}")
            params.append(np.broadcast_to(flat.reshape((-1, *rest)) if dims else flat,
                                          dims))
        mu, sd, lo, hi = params
        if (lo >= hi).any():
            raise errors.InvalidArgumentError(
                None, None, "ParameterizedTruncatedNormal: Invalid parameters: minval must "
                "be less than maxval")
        with self.lock:
            u = self.rng.uniform(size=dims)
        a, b = (lo - mu) / sd, (hi - mu) / sd
        z = ndtri(ndtr(a) + u * (ndtr(b) - ndtr(a)))
        return np.clip(mu + sd * np.clip(z, a, b), lo, hi).astype(np.asarray(means).dtype)


@cpu_kernel("StatefulStandardNormal", fresh=True)
def stateful_standard_normal(ref, shape, *, dtype, op, **attrs):
    """``StatefulStandardNormalV2`` with Philox, the only algorithm the first form had."""
    return stateful_normal(ref, np.int64(PHILOX), shape, dtype=dtype, op=op)
