"""The word-index data sets (IMDB, Reuters): reading and Keras' index shifting.

Keras stores each review/newswire as a Python list inside an object array, which only
unpickling can read. flowgraph reads the same ``.npz`` converted to plain arrays: a
sequence array ``k`` becomes ``k`` (all the word indices, concatenated) plus
``k_lengths`` (each sequence's length). docs/keras.md, "Data sets", has the conversion.
"""

from __future__ import annotations

import numpy as np

from flowgraph.keras.datasets._files import load_npz, refuse_pickled


def read(name: str, path: str, seq_keys, other_keys) -> dict:
    """``{key: array}``, with each of ``seq_keys`` as a list of int lists."""
    flat_keys = [k for s in seq_keys for k in (s, s + "_lengths")]
    with np.load(path, allow_pickle=False) as f:
        if any(s + "_lengths" not in f.files for s in seq_keys):
            # Keras' own layout: the sequences are an object array, i.e. a pickle.
            raise refuse_pickled(name, path)
    arrays = dict(zip(flat_keys + list(other_keys),
                      load_npz(name, path, flat_keys + list(other_keys)), strict=True))
    out = {k: arrays[k] for k in other_keys}
    for s in seq_keys:
        ends = np.cumsum(arrays[s + "_lengths"])
        if len(ends) and ends[-1] != len(arrays[s]):
            raise ValueError(f"tf.keras.datasets.{name}.load_data: {path}: the lengths in "
                             f"{s}_lengths add up to {ends[-1]}, but {s} has "
                             f"{len(arrays[s])} indices")
        out[s] = [part.tolist() for part in np.split(arrays[s], ends[:-1])] if len(ends) else []
    return out


def shift(xs, start_char, index_from):
    """Prepend ``start_char`` and add ``index_from`` to every index, as Keras does."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    if index_from:
        return [[w + index_from for w in x] for x in xs]
    return [list(x) for x in xs]


def drop_long(maxlen, xs, labels):
    """Only the sequences shorter than ``maxlen`` (and their labels)."""
    kept = [i for i, x in enumerate(xs) if len(x) < maxlen]
    return [xs[i] for i in kept], [labels[i] for i in kept]


def limit(xs, num_words, skip_top, oov_char):
    """Indices outside ``[skip_top, num_words)`` become ``oov_char`` (or are dropped)."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def as_objects(xs) -> np.ndarray:
    """A 1-D object array of lists (what Keras returns), even when lengths agree."""
    out = np.empty(len(xs), dtype=object)
    out[:] = xs
    return out


def check_kwargs(kwargs: dict):
    num_words = kwargs.pop("nb_words", None)
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {kwargs}.")
    return num_words
