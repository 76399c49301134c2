"""CPU kernels of `flowgraph/ops/string_legacy_hash_ops.py`."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.ops.string_legacy_hash_ops import hash64, siphash24


def _map(fn, x):
    arr = np.asarray(x, dtype=object)
    out = np.fromiter((fn(v if isinstance(v, bytes) else str(v).encode())
                       for v in arr.reshape(-1).tolist()), dtype=np.int64, count=arr.size)
    return out.reshape(arr.shape)


@cpu_kernel("StringToHashBucket", fresh=True)
def string_to_hash_bucket(x, *, num_buckets):
    return _map(lambda s: hash64(s) % num_buckets, x)


@cpu_kernel("StringToHashBucketStrong", fresh=True)
def string_to_hash_bucket_strong(x, *, num_buckets, key):
    k0, k1 = (int(k) & ((1 << 64) - 1) for k in key)
    return _map(lambda s: siphash24(k0, k1, s) % num_buckets, x)
