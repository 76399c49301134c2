"""The CPU kernel of ``RandomGamma`` (ops/random_extra_ops.py)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import _RandomKernel, _shape


@cpu_kernel("RandomGamma", fresh=True)
class RandomGamma(_RandomKernel):
    def __init__(self, ctx, *, seed=0, seed2=0, T):
        super().__init__(ctx, seed=seed, seed2=seed2)
        self.dtype = np.dtype(T.as_numpy_dtype)

    def __call__(self, shape, alpha):
        dims = tuple(_shape(shape))
        alpha = np.asarray(alpha, dtype=np.float64)
        with self.lock:
            out = self.rng.standard_gamma(np.broadcast_to(alpha, dims + alpha.shape))
        return np.asarray(out, dtype=self.dtype)
