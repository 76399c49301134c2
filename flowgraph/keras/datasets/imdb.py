"""`tf.keras.datasets.imdb`: movie reviews as word-index sequences, labelled 0/1.

Reads ``imdb.npz`` from ``$KERAS_HOME/datasets`` converted to plain arrays (see
`flowgraph.keras.datasets._sequences`); the shuffling, ``start_char``/``index_from``
shift, ``maxlen`` filter and ``num_words``/``skip_top``/``oov_char`` limits are Keras'.

Example
-------
>>> import flowgraph as tf
>>> callable(tf.keras.datasets.imdb.load_data)
True
"""

from __future__ import annotations

import json

import numpy as np

from flowgraph.keras.datasets import _sequences as seqs
from flowgraph.keras.datasets._files import KERAS_URL, locate

__all__ = ["get_word_index", "load_data"]


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    """``(x_train, y_train), (x_test, y_test)``: object arrays of index lists and labels."""
    num_words = seqs.check_kwargs(kwargs) or num_words
    path = locate("imdb", path, KERAS_URL + "imdb.npz")
    data = seqs.read("imdb", path, ("x_train", "x_test"), ("y_train", "y_test"))
    rng = np.random.RandomState(seed)
    parts = []
    for x_key, y_key in (("x_train", "y_train"), ("x_test", "y_test")):
        order = np.arange(len(data[x_key]))
        rng.shuffle(order)
        parts.append(([data[x_key][i] for i in order], data[y_key][order]))
    (x_train, y_train), (x_test, y_test) = [
        (seqs.shift(x, start_char, index_from), y) for x, y in parts]
    if maxlen:
        x_train, y_train = seqs.drop_long(maxlen, x_train, y_train)
        x_test, y_test = seqs.drop_long(maxlen, x_test, y_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, "
                             f"no sequence was kept. Increase maxlen.")
    xs = seqs.limit(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([np.asarray(y_train, data["y_train"].dtype),
                             np.asarray(y_test, data["y_test"].dtype)])
    cut = len(x_train)
    return ((seqs.as_objects(xs[:cut]), labels[:cut]),
            (seqs.as_objects(xs[cut:]), labels[cut:]))


def get_word_index(path="imdb_word_index.json"):
    """``{word: index}`` from Keras' ``imdb_word_index.json`` (indices before the
    ``index_from`` shift)."""
    path = locate("imdb", path, KERAS_URL + "imdb_word_index.json")
    with open(path) as f:
        return json.load(f)
