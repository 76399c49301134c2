"""CPU kernels of ``StatelessRandomGetKeyCounter`` and ``StatelessShuffle``
(`flowgraph/ops/random_shuffle_stateless_ops.py`): TensorFlow's Philox key and counter of
a seed, and its shuffle driven by the stream they start."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_random_stateless as _sl
from flowgraph.backends.cpu.kernels_random import shuffled_order
from flowgraph.backends.cpu.kernels_random_stateful import _v2_stream


@cpu_kernel("StatelessRandomGetKeyCounter", fresh=True)
def stateless_random_get_key_counter(seed, *, Tseed):
    (k0, k1), (c0, c1, c2, c3) = _sl.key_counter(seed)
    key = np.array([k0 | (k1 << 32)], dtype=np.uint64)
    counter = np.array([c0 | (c1 << 32), c2 | (c3 << 32)], dtype=np.uint64)
    return key, counter


@cpu_kernel("StatelessShuffle")
def stateless_shuffle(value, key, counter, alg, *, T):
    size = value.shape[0] if value.ndim else 0
    if value.ndim == 0 or size <= 1 or value.size <= 1:
        return value
    stream = _v2_stream(key, counter, alg, "StatelessShuffle")
    return value[shuffled_order(_sl._words(stream, size - 1), size)]
