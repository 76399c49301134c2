"""TensorFlow's random number generator, Philox-4x32-10, and its seeding of a stream.

A stream is keyed by a 64-bit ``seed`` (the key's two words) and starts at a 128-bit
counter whose high half is a 64-bit ``seed2``; each counter value gives one *block* of
four 32-bit words. TensorFlow's random kernels and its ``tf.data`` shuffle draw from
such streams, so flowgraph draws from them too (`philox_blocks`, `WordStream`): a seeded
program gets TensorFlow's numbers.

Example
-------
>>> w = WordStream(1, 2)
>>> first = [w.next() for _ in range(5)]
>>> first[:4] == philox_blocks((1, 0), (0, 0, 2, 0), 1)[0].tolist()
True
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework._philox import fill_blocks

__all__ = ["WordStream", "philox_blocks", "stateless_key_counter"]

_MASK32 = (1 << 32) - 1
_MASK64 = (1 << 64) - 1


def philox_blocks(key: tuple[int, int], counter: tuple[int, int, int, int], n: int,
                  offsets=None):
    """``(n, 4)`` uint32 words: Philox-4x32-10 of counters ``counter + 0 .. n-1`` (or
    ``counter + offsets``, a uint64 array, when given); the rounds run in C
    (`flowgraph.framework._philox`)."""
    steps = (np.arange(n, dtype=np.uint64) if offsets is None
             else np.ascontiguousarray(offsets, dtype=np.uint64))
    out = np.empty((len(steps), 4), np.uint32)
    fill_blocks(out, key[0] & _MASK32, key[1] & _MASK32, counter[0] | (counter[1] << 32),
                counter[2] | (counter[3] << 32), steps)
    return out


def stateless_key_counter(seed0: int, seed1: int):
    """The Philox key (two words) and starting counter (four words) of a stateless op's
    seed pair, as TensorFlow derives them: the pair is the counter of one block under a
    fixed key; that block's words are the new key and the counter's high half."""
    s0, s1 = int(seed0) & _MASK64, int(seed1) & _MASK64
    counter = (s0 & _MASK32, s0 >> 32, s1 & _MASK32, s1 >> 32)
    mix = philox_blocks((0x3EC8F720, 0x02461E29), counter, 1)[0].tolist()
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])


class WordStream:
    """The 32-bit words of the stream ``(seed, seed2)``, one at a time, in order
    (TensorFlow's single-sample adapter over its generator); blocks are computed in
    chunks."""

    _CHUNK = 256  # blocks computed at once

    def __init__(self, seed: int, seed2: int) -> None:
        seed, seed2 = int(seed) & _MASK64, int(seed2) & _MASK64
        self._key = (seed & _MASK32, seed >> 32)
        self._counter = (0, 0, seed2 & _MASK32, seed2 >> 32)
        self._words: list = []
        self._at = 0
        self._blocks = 0

    def next(self) -> int:
        if self._at == len(self._words):
            offsets = np.arange(self._blocks, self._blocks + self._CHUNK, dtype=np.uint64)
            self._words = philox_blocks(self._key, self._counter, 0, offsets).reshape(
                -1).tolist()
            self._blocks += self._CHUNK
            self._at = 0
        word = self._words[self._at]
        self._at += 1
        return word
