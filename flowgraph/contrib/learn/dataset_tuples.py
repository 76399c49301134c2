"""The `Dataset` / `Datasets` tuples of `tf.contrib.learn.datasets` (shared by its CSV
loaders and the MNIST reader).

>>> Datasets(train=1, validation=2, test=3).test
3
"""

import collections

__all__ = ["Dataset", "Datasets"]

Dataset = collections.namedtuple("Dataset", ["data", "target"])
Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])
