"""`tf.contrib.learn.datasets` (also as ``datasets.base``): the CSV loaders of the iris
tutorial, the `Dataset` / `Datasets` tuples and ``datasets.mnist`` (`mnist_data`).

`load_csv_with_header` reads a CSV whose first row is ``n_samples,n_features[,names...]``
(the iris tutorial's files) and whose other rows hold the features and, in
`target_column` (the last by default), the target.

Example
-------
>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "iris.csv")
>>> _ = open(path, "w").write("2,3,a,b\\n1.0,2.0,3.0,0\\n4.0,5.0,6.0,1\\n")
>>> ds = load_csv_with_header(path, target_dtype=np.int64, features_dtype=np.float32)
>>> ds.data.shape, ds.target.tolist()
((2, 3), [0, 1])
"""

from __future__ import annotations

import csv
import sys

import numpy as np

from flowgraph.contrib.learn import mnist_data as mnist
from flowgraph.contrib.learn.dataset_tuples import Dataset, Datasets
from flowgraph.io import gfile

__all__ = ["Dataset", "Datasets", "base", "load_csv_with_header", "load_csv_without_header",
           "mnist"]



def _split_row(row, target_column, target_dtype, features_dtype, filename, line):
    try:
        target = np.asarray(row.pop(target_column), dtype=target_dtype)
        return np.asarray(row, dtype=features_dtype), target
    except (IndexError, ValueError) as e:
        raise ValueError(f"{filename}, line {line}: cannot read {row!r} as features "
                         f"({np.dtype(features_dtype).name}) and a target "
                         f"({np.dtype(target_dtype).name}) in column {target_column}: "
                         f"{e}") from None


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """A `Dataset` from a CSV whose header row gives the sample and feature counts."""
    with gfile.GFile(filename) as f:
        reader = csv.reader(f)
        header = next(reader, None)
        try:
            n_samples, n_features = int(header[0]), int(header[1])
        except (TypeError, IndexError, ValueError):
            raise ValueError(f"{filename}: the first row must be 'n_samples,n_features,...'; "
                             f"got {header!r}") from None
        data = np.zeros((n_samples, n_features), dtype=features_dtype)
        target = np.zeros((n_samples,), dtype=target_dtype)
        count = 0
        for count, row in enumerate(reader, start=1):
            if count > n_samples:
                raise ValueError(f"{filename}: the header says {n_samples} samples but "
                                 f"there are more rows")
            features, label = _split_row(row, target_column, target_dtype, features_dtype,
                                         filename, count + 1)
            if features.shape != (n_features,):
                raise ValueError(f"{filename}, line {count + 1}: expected {n_features} "
                                 f"features, found {features.shape[0]}")
            data[count - 1], target[count - 1] = features, label
    if count != n_samples:
        raise ValueError(f"{filename}: the header says {n_samples} samples, the file has "
                         f"{count}")
    return Dataset(data=data, target=target)


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """A `Dataset` from a CSV of feature rows with the target in `target_column`."""
    with gfile.GFile(filename) as f:
        rows = [row for row in csv.reader(f) if row]
    pairs = [_split_row(row, target_column, target_dtype, features_dtype, filename, i + 1)
             for i, row in enumerate(rows)]
    data = np.array([p[0] for p in pairs], dtype=features_dtype)
    target = np.array([p[1] for p in pairs], dtype=target_dtype)
    return Dataset(data=data, target=target)


base = sys.modules[__name__]
sys.modules.setdefault(__name__ + ".base", base)

sys.modules.setdefault(__name__ + ".mnist", mnist)
