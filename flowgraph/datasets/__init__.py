"""Small data sets shipped with flowgraph, for examples, the quickstart and tests.

- ``iris``: Fisher's iris measurements (150 x 4, 3 classes; public domain).
- ``digits``: 8x8 handwritten digits from the UCI "optdigits" collection
  (1,797 x 64, 10 classes; CC BY 4.0, Alpaydin & Kaynak).

Example
-------
>>> x, y = load_digits()
>>> x.shape, y.shape, int(y.max())
((1797, 64), (1797,), 9)
"""

from __future__ import annotations

import gzip
import os

import numpy as np

_DATA = os.path.join(os.path.dirname(__file__), "data")


def _read_csv(name: str, skip_header: bool) -> np.ndarray:
    path = os.path.join(_DATA, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        if skip_header:
            next(f)
        return np.loadtxt(f, delimiter=",", dtype=np.float64)


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    """Iris: float32 features (150, 4) and int64 labels (150,) in {0, 1, 2}."""
    data = _read_csv("iris.csv", skip_header=True)
    return data[:, :4].astype(np.float32), data[:, 4].astype(np.int64)


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """Digits: float32 pixel intensities 0..16 (1797, 64) and int64 labels (1797,)."""
    data = _read_csv("digits.csv.gz", skip_header=False)
    return data[:, :64].astype(np.float32), data[:, 64].astype(np.int64)


def train_test_split(x: np.ndarray, y: np.ndarray, test_fraction: float = 0.25,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A seeded shuffle split: (x_train, x_test, y_train, y_test)."""
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = round(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], x[test], y[train], y[test]
