"""``tf.data.experimental.cardinality``: the number of elements of a dataset, computed from
its nodes (with the values its captured tensors have when the op runs), or
``INFINITE_CARDINALITY`` (-1) / ``UNKNOWN_CARDINALITY`` (-2), by TensorFlow's rules:

    range(10).batch(3)              -> 4       sources and counting transformations
    range(10).repeat()              -> -1      infinite
    range(10).filter(f)             -> -2      depends on the data (filter, flat_map,
                                               files, generators, unbatch, windows)

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> n = tf.data.experimental.cardinality(tf.data.Dataset.range(10).batch(3))
>>> tf.Session().run(n)
4
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.graph import get_default_graph

from .dataset import Dataset
from .dataset_ops_sources import _values
from .iterator import _check_graph
from .options import INFINITE_CARDINALITY as INF
from .options import UNKNOWN_CARDINALITY as UNK

__all__ = ["cardinality", "count_elements"]

# nodes with their input's count (a TF1 `map` does not preserve it: unknown, unless
# made by `map_and_batch`)
_SAME = frozenset({"PrefetchDataset", "ShuffleDataset", "CacheDataset", "ScanDataset",
                   "_OptionsDataset", "SnapshotDataset"})
_INFINITE = frozenset({"RandomDataset", "_WeightedChoices"})


def _int(rc, v) -> int:
    return int(np.asarray(rc.resolve(v)))


def _size0(value) -> int:
    if hasattr(value, "dense_shape"):
        return int(np.asarray(value.dense_shape)[0])
    return int(np.shape(value)[0])


def count_elements(ds, rc) -> int:
    """The cardinality of dataset node `ds` (see the module docstring)."""
    name = type(ds).__name__
    own = getattr(ds, "_cardinality", None)  # a node that knows its own count
    if own is not None:
        return own(rc, count_elements)
    if name in _SAME:
        return count_elements(ds._input, rc)
    if name in _INFINITE:
        return INF
    if name == "TensorDataset":
        return 1
    if name == "MapDataset":
        return count_elements(ds._input, rc) if getattr(ds, "_keeps_count", False) else UNK
    if name == "TensorSliceDataset":
        return _size0(_values(rc, ds._flat[:1], ds._full[:1])[0])
    if name == "WindowDataset":
        n = count_elements(ds._input, rc)
        if n < 0:
            return n
        if not ds._drop:
            return -(-n // ds._shift)
        span = (ds._size - 1) * ds._stride + 1
        return 0 if n < span else (n - span) // ds._shift + 1
    if name == "RangeDataset":
        start, stop, step = (_int(rc, a) for a in ds._args)
        return len(range(start, stop, step)) if step else UNK
    if name in ("BatchDataset", "PaddedBatchDataset"):
        n, size = count_elements(ds._input, rc), _int(rc, ds._size)
        if n < 0:
            return n
        return n // size if ds._drop else -(-n // size)
    if name == "RepeatDataset":
        n, count = count_elements(ds._input, rc), _int(rc, ds._count)
        if n == 0 or count == 0:
            return 0
        if count < 0 or n == INF:
            return INF
        return UNK if n == UNK else n * count
    if name == "TakeDataset":
        n, count = count_elements(ds._input, rc), _int(rc, ds._count)
        if count < 0:
            return n
        if n == INF:
            return count
        return UNK if n == UNK else min(n, count)
    if name == "SkipDataset":
        n, count = count_elements(ds._input, rc), _int(rc, ds._count)
        if n < 0:
            return n
        return 0 if count < 0 else max(0, n - count)
    if name == "ShardDataset":
        shards, index = ds._params(rc)
        n = count_elements(ds._input, rc)
        return n if n < 0 else n // shards + (1 if index < n % shards else 0)
    if name == "ZipDataset":
        counts = [count_elements(d, rc) for d in ds._datasets]
        known = [c for c in counts if c >= 0]
        if known:
            return min(known) if UNK not in counts or min(known) == 0 else UNK
        return UNK if UNK in counts else INF
    if name == "ConcatenateDataset":
        a, b = count_elements(ds._first, rc), count_elements(ds._second, rc)
        if INF in (a, b):
            return INF
        return UNK if UNK in (a, b) else a + b
    return UNK


def cardinality(dataset):
    """An int64 scalar: the number of elements of `dataset`, or ``INFINITE_CARDINALITY``
    (-1), or ``UNKNOWN_CARDINALITY`` (-2) when it depends on the data (a
    ``DatasetCardinality`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.Session().run(tf.data.experimental.cardinality(tf.data.Dataset.range(3).repeat()))
    -1
    """
    from flowgraph.ops.iterator_ops import register_dataset
    from flowgraph.ops.op_util import make_op

    if not isinstance(dataset, Dataset):
        raise TypeError(f"cardinality: `dataset` must be a tf.data.Dataset, got "
                        f"{type(dataset).__name__}")
    graph = get_default_graph()
    captured = _check_graph(dataset, graph, "cardinality")
    key = register_dataset(graph, dataset)
    return make_op("DatasetCardinality", captured, {"dataset_id": key},
                   name="DatasetCardinality").outputs[0]
