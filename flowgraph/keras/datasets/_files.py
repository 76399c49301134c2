"""Where `tf.keras.datasets` finds the files Keras would have downloaded.

flowgraph never downloads: ``load_data`` reads the file from Keras' cache,
``$KERAS_HOME/datasets/`` (default ``~/.keras/datasets/``; ``/tmp/.keras/datasets/``
when the home one is not writable, as Keras falls back), or from the ``path=`` given
(relative names are taken inside that folder, absolute ones as they are). A missing
file raises `FileNotFoundError` naming the file, the URL Keras fetches it from, and
where to put it. Arrays are read with ``allow_pickle=False``: a file that needs
unpickling is refused (`refuse_pickled` says how to convert it).
"""

from __future__ import annotations

import os

import numpy as np

KERAS_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def cache_dir() -> str:
    """The folder Keras caches data sets in (``$KERAS_HOME/datasets``, default
    ``~/.keras/datasets``)."""
    base = os.path.expanduser(os.environ.get("KERAS_HOME") or os.path.join("~", ".keras"))
    return os.path.join(base, "datasets")


def locate(name: str, fname: str, url: str, must_exist: bool = True) -> str:
    """The cached ``fname`` (Keras' fallback cache ``/tmp/.keras/datasets`` is tried
    second); raises `FileNotFoundError` when it is in neither (``must_exist``)."""
    fname = os.path.expanduser(fname)
    path = os.path.join(cache_dir(), fname)
    fallback = os.path.join("/tmp", ".keras", "datasets", fname)
    if not os.path.exists(path) and os.path.exists(fallback):
        return fallback
    if must_exist and not os.path.exists(path):
        raise FileNotFoundError(
            f"tf.keras.datasets.{name}.load_data: {path} does not exist, and flowgraph does "
            f"not download data sets. Download {url} (on a machine with network access) and "
            f"put it at {path}, or pass its location as `path=` where load_data takes one "
            f"(the folder is $KERAS_HOME/datasets, ~/.keras/datasets by default).")
    return path


def load_npz(name: str, path: str, keys) -> list:
    """The arrays ``keys`` of an ``.npz`` file, read without unpickling."""
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in keys if k not in f.files]
            if missing:
                raise ValueError(f"tf.keras.datasets.{name}.load_data: {path} has no array(s) "
                                 f"{missing}; expected {list(keys)}, found {f.files}.")
            return [f[k] for k in keys]
    except ValueError as e:
        if "allow_pickle" in str(e) or "Object arrays" in str(e):
            raise refuse_pickled(name, path) from e
        raise


def refuse_pickled(name: str, path: str) -> ValueError:
    return ValueError(
        f"tf.keras.datasets.{name}.load_data: {path} holds pickled Python objects, which "
        f"flowgraph does not unpickle (loading a pickle can run arbitrary code). Convert it "
        f"once, where you trust the file: see docs/keras.md, 'Data sets', for the two-line "
        f"conversion to plain arrays.")
