"""CPU kernel for ``RandomIndexShuffle`` (`flowgraph/ops/random_index_shuffle_ops.py`).

The permutation is a cycle-walking cipher, as in TensorFlow: a Simon-style Feistel
network on blocks of ``B`` bits (the bits ``max_index`` needs, rounded up to even and at
least 16), two halves of ``W = B / 2`` bits. Round keys start from the three seed words
and extend by Simon's key schedule; an index is encrypted, and encrypted again while the
result exceeds ``max_index``. Encryption is a bijection on ``[0, 2**B)``, so walking
back into the range keeps it one on ``[0, max_index]``.

Plain Python integers: one index costs a handful of rounds, and the op is used on
modest vectors of indices.
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_SCHEDULE_CONSTANT = 0xFFFFFFFC
_SCHEDULE_SEQUENCE = 0x7369F885192C0EF5


def _rotl(x: int, r: int, w: int, mask: int) -> int:
    return ((x << r) | (x >> (w - r))) & mask


def _rotr(x: int, r: int, w: int, mask: int) -> int:
    return ((x >> r) | (x << (w - r))) & mask


def _round_keys(seed: tuple[int, int, int], rounds: int, w: int) -> list[int]:
    mask = (1 << w) - 1
    c = _SCHEDULE_CONSTANT & mask
    z = _SCHEDULE_SEQUENCE & mask
    keys = [s & mask for s in seed]
    for i in range(3, rounds):
        prev = keys[i - 1]
        keys.append(c ^ (z & 1) ^ keys[i - 3] ^ _rotr(prev, 3, w, mask)
                    ^ _rotr(prev, 4, w, mask))
        z >>= 1
    return keys


def _mix(x: int, w: int, mask: int) -> int:
    return (_rotl(x, 1, w, mask) & _rotl(x, 8, w, mask)) ^ _rotl(x, 2, w, mask)


def _encrypt(value: int, keys: list[int], w: int) -> int:
    mask = (1 << w) - 1
    left, right = (value >> w) & mask, value & mask
    for i in range(0, len(keys) - 1, 2):
        left ^= _mix(right, w, mask) ^ keys[i]
        right ^= _mix(left, w, mask) ^ keys[i + 1]
    return (left << w) | right


def shuffle_index(index: int, seed: tuple[int, int, int], max_index: int, rounds: int) -> int:
    """The position of `index` in the permutation of ``[0, max_index]`` for `seed`."""
    if max_index == 0:
        return 0
    bits = math.ceil(math.log2(max_index))
    block = min(max(bits + bits % 2, 16), 64)
    w = block // 2
    keys = _round_keys(seed, rounds, w)
    value = index
    while True:
        value = _encrypt(value, keys, w)
        if value <= max_index:
            return value


@cpu_kernel("RandomIndexShuffle")
def random_index_shuffle(index, seed, max_index, *, rounds=4, dtype=None, Tseed=None):
    if rounds < 4 or rounds % 2:
        raise errors.InvalidArgumentError(
            None, None, f"RandomIndexShuffle: rounds must be an even integer >= 4, got "
            f"{rounds}")
    index, seed, max_index = np.asarray(index), np.asarray(seed), np.asarray(max_index)
    n = max(index.size, max_index.size, seed.size // 3)
    if not (index.ndim == 0 or (index.ndim == 1 and index.shape[0] == n)):
        raise errors.InvalidArgumentError(
            None, None, f"RandomIndexShuffle: index must be a scalar or a vector of {n} "
            f"entries, got shape {list(index.shape)}")
    if not (seed.shape == (3,) or seed.shape == (n, 3)):
        raise errors.InvalidArgumentError(
            None, None, f"RandomIndexShuffle: seed must be a vector of size [3] or a matrix "
            f"of size [{n}, 3] but got {list(seed.shape)}")
    if not (max_index.ndim == 0 or (max_index.ndim == 1 and max_index.shape[0] == n)):
        raise errors.InvalidArgumentError(
            None, None, f"RandomIndexShuffle: max_index must be a scalar or a vector of the "
            f"same size as index, got shape {list(max_index.shape)}")
    idx = np.broadcast_to(index.astype(np.uint64), (n,))
    top = np.broadcast_to(max_index.astype(np.uint64), (n,))
    words = (seed.reshape(-1, 3).astype(np.int64) & 0xFFFFFFFF).tolist()
    out = [shuffle_index(int(idx[i]), tuple(words[0 if seed.ndim == 1 else i]),
                         int(top[i]), int(rounds)) for i in range(n)]
    result = np.asarray(out, dtype=np.uint64).astype(index.dtype)
    if index.ndim == 0 and seed.ndim == 1 and max_index.ndim == 0:
        return result.reshape(())
    return result
