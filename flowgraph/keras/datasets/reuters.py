"""`tf.keras.datasets.reuters`: newswires as word-index sequences, in 46 topics.

Reads ``reuters.npz`` from ``$KERAS_HOME/datasets`` converted to plain arrays (see
`flowgraph.keras.datasets._sequences`), then Keras' shuffle, shift, filters and split.

Example
-------
>>> import flowgraph as tf
>>> len(tf.keras.datasets.reuters.get_label_names())
46
"""

from __future__ import annotations

import json

import numpy as np

from flowgraph.keras.datasets import _sequences as seqs
from flowgraph.keras.datasets._files import KERAS_URL, locate

__all__ = ["get_label_names", "get_word_index", "load_data"]

_LABELS = (
    "cocoa grain veg-oil earn acq wheat copper housing money-supply coffee sugar trade "
    "reserves ship cotton carcass crude nat-gas cpi money-fx interest gnp meal-feed alum "
    "oilseed gold tin strategic-metal livestock retail ipi iron-steel rubber heat jobs lei "
    "bop zinc orange pet-chem dlr gas silver wpi hog lead").split()


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
              seed=113, start_char=1, oov_char=2, index_from=3, **kwargs):
    """``(x_train, y_train), (x_test, y_test)``; the last ``test_split`` is the test set."""
    num_words = seqs.check_kwargs(kwargs) or num_words
    path = locate("reuters", path, KERAS_URL + "reuters.npz")
    data = seqs.read("reuters", path, ("x",), ("y",))
    order = np.arange(len(data["x"]))
    np.random.RandomState(seed).shuffle(order)
    xs = seqs.shift([data["x"][i] for i in order], start_char, index_from)
    labels = list(data["y"][order])
    if maxlen:
        xs, labels = seqs.drop_long(maxlen, xs, labels)
    xs = seqs.limit(xs, num_words, skip_top, oov_char)
    cut = int(len(xs) * (1 - test_split))
    return ((seqs.as_objects(xs[:cut]), np.array(labels[:cut])),
            (seqs.as_objects(xs[cut:]), np.array(labels[cut:])))


def get_word_index(path="reuters_word_index.json"):
    """``{word: index}`` from Keras' ``reuters_word_index.json``."""
    path = locate("reuters", path, KERAS_URL + "reuters_word_index.json")
    with open(path) as f:
        return json.load(f)


def get_label_names():
    """The 46 topic names, in label order."""
    return tuple(_LABELS)
