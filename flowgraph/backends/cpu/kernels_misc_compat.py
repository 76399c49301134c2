"""CPU kernels of ``Fingerprint`` and ``RandomPoissonV2`` (`flowgraph/ops/misc_compat_ops.py`)."""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import make_generator


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
    def __init__(self, ctx, *, seed=0, seed2=0, dtype):
        self.rng = make_generator(seed, seed2)
        self.lock = threading.Lock()
        self.dtype = np.dtype(dtype.as_numpy_dtype)

    def __call__(self, shape, rate):
        dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
        rate = np.asarray(rate, dtype=np.float64)
        with self.lock:
            draws = self.rng.poisson(np.broadcast_to(rate, dims + rate.shape))
        return draws.astype(self.dtype)
