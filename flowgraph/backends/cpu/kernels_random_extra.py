"""The CPU kernels of ``RandomGamma`` and ``RandomGammaGrad`` (ops/random_extra_ops.py).

``RandomGamma`` draws TensorFlow's numbers: a run reserves 256 Philox blocks per output
of the op's stream (`_TFStream`) and each output runs Marsaglia and Tsang's sampler on
its own blocks, in C (`flowgraph.framework._philox.gamma_samples`), in float64 for
every dtype, rounded to the output's (float16 through float32, as TensorFlow rounds).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import _shape, _TFStream
from flowgraph.backends.cpu.scipy_lazy import scipy_special
from flowgraph.framework._philox import gamma_samples


@cpu_kernel("RandomGamma", fresh=True)
class RandomGamma:
    def __init__(self, ctx, *, seed=0, seed2=0, T):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(T.as_numpy_dtype)

    def __call__(self, shape, alpha):
        dims = tuple(_shape(shape))
        num_samples = int(np.prod(dims))
        alpha = np.asarray(alpha)
        if num_samples * alpha.size == 0:  # as TensorFlow: an empty result, no draw
            return np.empty(dims + alpha.shape, self.dtype)
        alphas = np.ascontiguousarray(alpha.reshape(-1), dtype=np.float64)
        (k0, k1), c = self.stream.reserve(num_samples * alphas.size)
        out = np.empty(num_samples * alphas.size, np.float64)
        gamma_samples(out, alphas, num_samples, k0, k1, c[0] | (c[1] << 32),
                      c[2] | (c[3] << 32))
        if self.dtype == np.float16:
            out = out.astype(np.float32)
        return out.astype(self.dtype, copy=False).reshape(dims + alpha.shape)


@cpu_kernel("RandomGammaGrad", fresh=True)
def random_gamma_grad(alpha, sample):
    """d sample / d alpha of unit-rate gamma draws: ``-(dF/d alpha) / pdf`` at the sample,
    F the regularized lower incomplete gamma; dF/d alpha by a central difference in
    float64 (its error, ~1e-9 relative, is far below float32 resolution)."""
    x = np.asarray(sample, dtype=np.float64)
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), x.shape)
    h = np.minimum(1e-5 * np.maximum(a, 1.0), 0.5 * a)
    d_cdf = (scipy_special().gammainc(a + h, x) - scipy_special().gammainc(a - h, x)) / (2.0 * h)
    with np.errstate(all="ignore"):
        log_pdf = scipy_special().xlogy(a - 1.0, x) - x - scipy_special().gammaln(a)
        out = -d_cdf / np.exp(log_pdf)
    out = np.where(np.isfinite(out), out, 0.0)
    return out.astype(np.asarray(sample).dtype, copy=False)
