"""CPU kernels of ``Fingerprint`` and ``RandomPoissonV2`` (`flowgraph/ops/misc_compat_ops.py`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import _TFStream
from flowgraph.framework._philox import poisson_samples


@cpu_kernel("Fingerprint", fresh=True)
def fingerprint(data, method):
    from flowgraph.ops.string_hash_ops import fingerprint64

    arr = np.asarray(data)
    rows = arr.reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, -1)
    out = np.empty((rows.shape[0], 8), dtype=np.uint8)
    for i, row in enumerate(rows):
        if arr.dtype == object and row.size == 1:
            s = row.tolist()[0]
            payload = s if isinstance(s, bytes) else str(s).encode()
        elif arr.dtype == object:
            # a row of strings: the fingerprint of their fingerprints' bytes
            parts = np.asarray([fingerprint64(s if isinstance(s, bytes) else str(s).encode())
                                for s in row.tolist()], dtype="<u8")
            payload = parts.tobytes()
        else:
            payload = np.ascontiguousarray(row).tobytes()
        out[i] = np.frombuffer(np.asarray(fingerprint64(payload), dtype="<u8").tobytes(),
                               dtype=np.uint8)
    return out


@cpu_kernel("RandomPoissonV2")
class RandomPoisson:
    """TensorFlow's Poisson draws and stream: a run reserves 256 Philox blocks per output
    and each output samples from its own blocks in C
    (`flowgraph.framework._philox.poisson_samples`), in float64 whatever the dtypes."""

    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        self.stream = _TFStream(seed, seed2)
        self.dtype = np.dtype(dtype.as_numpy_dtype)
        info = np.iinfo(self.dtype) if self.dtype.kind in "iu" else np.finfo(self.dtype)
        self.highest = float(info.max)

    def __call__(self, shape, rate):
        dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
        rate = np.asarray(rate)
        num_samples = int(np.prod(dims))
        if num_samples * rate.size == 0:
            return np.zeros(dims + rate.shape, self.dtype)
        rates = np.ascontiguousarray(rate.reshape(-1), dtype=np.float64)
        (k0, k1), c = self.stream.reserve(num_samples * rates.size)
        out = np.empty(num_samples * rates.size, np.float64)
        poisson_samples(out, rates, num_samples, self.highest, k0, k1,
                        c[0] | (c[1] << 32), c[2] | (c[3] << 32))
        if self.dtype == np.float16:
            out = out.astype(np.float32)
        return out.astype(self.dtype).reshape(dims + rate.shape)