"""`tf.keras.datasets`: Keras' data sets, read from Keras' cache without downloading.

Each ``load_data`` reads the file Keras would have downloaded, from
``$KERAS_HOME/datasets/`` (default ``~/.keras/datasets/``) or the ``path=`` given, and
returns Keras' arrays. A missing file raises `FileNotFoundError` naming the file, its
download URL and where to put it. Nothing is unpickled: ``.npz`` files are read with
``allow_pickle=False``, CIFAR comes from its binary version, and IMDB/Reuters from
their ``.npz`` converted to plain arrays (docs/keras.md, "Data sets").

Example
-------
>>> import flowgraph as tf
>>> sorted(m for m in dir(tf.keras.datasets) if not m.startswith("_"))[:3]
['boston_housing', 'cifar10', 'cifar100']
"""

from flowgraph.keras.datasets import (
    boston_housing,
    cifar10,
    cifar100,
    fashion_mnist,
    imdb,
    mnist,
    reuters,
)

__all__ = ["boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist",
           "reuters"]
