"""`tf.keras.preprocessing.sequence`: padding, time-series windows and skip-grams.

Plain NumPy/Python utilities that prepare data before it reaches a graph, with Keras'
arguments, defaults and results (`pad_sequences` pads at the front by default and
returns ``int32``).

Example
-------
>>> from flowgraph.keras.preprocessing.sequence import pad_sequences
>>> pad_sequences([[1, 2, 3], [4]], maxlen=2).tolist()
[[2, 3], [0, 4]]
"""

from __future__ import annotations

import json
import random

import numpy as np

__all__ = ["TimeseriesGenerator", "make_sampling_table", "pad_sequences", "skipgrams"]


def _cut(seq, maxlen: int, truncating: str):
    if truncating == "pre":
        return seq[-maxlen:] if maxlen else seq[:0]
    if truncating == "post":
        return seq[:maxlen]
    raise ValueError(f'pad_sequences: Truncating type "{truncating}" not understood; '
                     f'use "pre" or "post".')


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Stack variable-length sequences into an array of shape ``(len(sequences), maxlen,
    *item_shape)``.

    Sequences longer than ``maxlen`` (default: the longest) lose items at the front
    (``truncating='pre'``) or the back (``'post'``); shorter ones are filled with
    ``value`` before (``padding='pre'``) or after (``'post'``) their items. The item
    shape comes from the first non-empty sequence; every other must match it.

    Example
    -------
    >>> pad_sequences([[1, 2, 3], [4]], maxlen=2, padding="post", truncating="post",
    ...               value=-1).tolist()
    [[1, 2], [4, -1]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("pad_sequences: `sequences` must be iterable (a list of sequences), "
                         f"got {type(sequences).__name__}.")
    lengths, item_shape = [], None
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError as e:
            raise ValueError("pad_sequences: `sequences` must be a list of iterables. "
                             f"Found non-iterable: {s}") from e
        if item_shape is None and len(s):
            item_shape = np.asarray(s).shape[1:]
    item_shape = item_shape or ()
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    is_str = np.issubdtype(dtype, np.str_)
    if isinstance(value, str) and np.dtype(dtype) != np.dtype(object) and not is_str:
        raise ValueError(f"pad_sequences: `dtype` {dtype} is not compatible with `value`'s "
                         f"type: {type(value)}\nYou should set `dtype=object` for variable "
                         f"length strings.")
    out = np.full((len(sequences), maxlen, *item_shape), value, dtype=dtype)
    for row, s in enumerate(sequences):
        if not len(s):
            continue
        kept = np.asarray(_cut(s, maxlen, truncating), dtype=dtype)
        if kept.shape[1:] != item_shape:
            raise ValueError(f"pad_sequences: shape of sample {kept.shape[1:]} of sequence at "
                             f"position {row} is different from expected shape "
                             f"{item_shape}")
        if padding == "post":
            out[row, :len(kept)] = kept
        elif padding == "pre":
            out[row, maxlen - len(kept):] = kept
        else:
            raise ValueError(f'pad_sequences: Padding type "{padding}" not understood; use '
                             f'"pre" or "post".')
    return out


class TimeseriesGenerator:
    """Batches of windows over a time series: sample ``i`` holds the ``length`` steps
    before row ``r_i`` (every ``sampling_rate``-th), its target is ``targets[r_i]``;
    consecutive rows are ``stride`` apart, from ``start_index + length`` to ``end_index``.

    Example
    -------
    >>> import numpy as np
    >>> gen = TimeseriesGenerator(np.arange(10), np.arange(10), length=3, batch_size=2)
    >>> x, y = gen[0]
    >>> len(gen), x.tolist(), y.tolist()
    (4, [[0, 1, 2], [1, 2, 3]], [3, 4])
    """

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0,
                 end_index=None, shuffle=False, reverse=False, batch_size=128) -> None:
        if len(data) != len(targets):
            raise ValueError(f"TimeseriesGenerator: Data and targets have to be of same "
                             f"length. Data length is {len(data)} while target length is "
                             f"{len(targets)}")
        self.data, self.targets, self.length = data, targets, length
        self.sampling_rate, self.stride = sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"TimeseriesGenerator: `start_index+length={self.start_index} > "
                             f"end_index={self.end_index}` is disallowed, as no part of the "
                             f"sequence would be left to be used as current step.")

    def __len__(self) -> int:
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def _rows(self, index: int) -> np.ndarray:
        if self.shuffle:
            return np.random.randint(self.start_index, self.end_index + 1,
                                     size=self.batch_size)
        first = self.start_index + self.batch_size * self.stride * index
        last = min(first + self.batch_size * self.stride, self.end_index + 1)
        return np.arange(first, last, self.stride)

    def __getitem__(self, index: int):
        rows = self._rows(index)
        samples = np.array([self.data[r - self.length:r:self.sampling_rate] for r in rows])
        targets = np.array([self.targets[r] for r in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def get_config(self) -> dict:
        """The arguments, with ``data`` and ``targets`` as JSON strings."""
        def as_json(values, what):
            if isinstance(values, np.ndarray):
                values = values.tolist()
            try:
                return json.dumps(values)
            except TypeError as e:
                raise TypeError(f"TimeseriesGenerator: {what} not JSON serializable") from e

        return {"data": as_json(self.data, "data"), "targets": as_json(self.targets, "targets"),
                "length": self.length, "sampling_rate": self.sampling_rate,
                "stride": self.stride, "start_index": self.start_index,
                "end_index": self.end_index, "shuffle": self.shuffle,
                "reverse": self.reverse, "batch_size": self.batch_size}

    def to_json(self, **kwargs) -> str:
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


def make_sampling_table(size, sampling_factor=1e-5):
    """Word2vec-style keep probabilities for words ranked ``0..size-1`` by frequency
    (Zipf's law approximation; rank 0 is treated as rank 1).

    Example
    -------
    >>> [round(float(p), 4) for p in make_sampling_table(4)]
    [0.0032, 0.0032, 0.0055, 0.0074]
    """
    rank = np.arange(size)
    rank[0] = 1
    # rank * (ln(rank) + Euler-Mascheroni) + 1/2 - 1/(12 rank): the inverse frequency.
    inverse_frequency = rank * (np.log(rank) + 0.577) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inverse_frequency
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """Skip-gram pairs ``[word, context]`` of a sequence of word indices, labelled 1, plus
    ``negative_samples`` times as many random pairs labelled 0. Index 0 is skipped.

    Draws from Python's `random` module in the order Keras does, so a program that seeds
    it gets Keras' pairs.

    Example
    -------
    >>> couples, labels = skipgrams([1, 2, 3], 4, window_size=1, negative_samples=0,
    ...                             shuffle=False)
    >>> couples, labels
    ([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])
    """
    couples, labels = [], []
    positive = [0, 1] if categorical else 1
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append(positive)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)]
                    for i in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10_000_000)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
