"""More of `tf.data.experimental` (TF 1.15): ``parallel_interleave``,
``sample_from_datasets``, ``get_single_element``, ``Counter``, ``enumerate_dataset``,
``prefetch_to_device`` / ``copy_to_device`` (one host device: the dataset unchanged),
``parse_example_dataset`` and ``RandomDataset``.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(3).apply(tf.data.experimental.parallel_interleave(
...     lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
>>> x = ds.make_one_shot_iterator().get_next()
>>> with tf.Session() as sess:
...     print([int(sess.run(x)) for _ in range(6)])
[0, 1, 0, 1, 2, 2]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, get_seed
from flowgraph.framework.philox import WordStream, philox_blocks, stateless_key_counter
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.math_ops import cast

from .dataset import Dataset
from .dataset_ops_stateful import ChooseFromDatasets
from .dataset_ops_structure import ComponentSpec, flatten, pack_graph
from .iterator import _check_graph, _flat_attrs

__all__ = ["Counter", "RandomDataset", "copy_to_device", "enumerate_dataset",
           "get_single_element", "parallel_interleave", "parse_example_dataset",
           "prefetch_to_device", "sample_from_datasets"]

_INT64_SCALAR = ComponentSpec(_dtypes.int64, TensorShape([]))


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """``interleave(map_func, cycle_length, block_length)``, for `Dataset.apply`. The
    order is the deterministic one (``sloppy=False``'s), whatever `sloppy` says.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> f = tf.data.experimental.parallel_interleave(tf.data.TFRecordDataset, 4)
    >>> callable(f)
    True
    """
    del sloppy, buffer_output_elements, prefetch_input_elements

    def apply(dataset):
        return dataset.interleave(map_func, cycle_length, block_length)

    return apply


def enumerate_dataset(start=0):
    """``Dataset.enumerate(start)``: ``(int64 index, element)``, for `Dataset.apply`.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.data.Dataset.range(2).apply(tf.data.experimental.enumerate_dataset(5)).output_types
    (tf.int64, tf.int64)
    """
    def apply(dataset):
        return dataset.enumerate(start)

    return apply


def prefetch_to_device(device, buffer_size=None):
    """Prefetch onto `device`, for `Dataset.apply`. Iterators run on the host here, so
    this is ``prefetch(buffer_size or 1)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> tf.data.Dataset.range(2).apply(tf.data.experimental.prefetch_to_device("/gpu:0"))
    <PrefetchDataset shapes: (), types: tf.int64>
    """
    del device

    def apply(dataset):
        return dataset.prefetch(1 if buffer_size is None else buffer_size)

    return apply


def copy_to_device(target_device, source_device="/cpu:0"):
    """Copy the elements to `target_device`, for `Dataset.apply`: the dataset unchanged,
    as iterators run on the host.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> ds = tf.data.Dataset.range(2)
    >>> ds.apply(tf.data.experimental.copy_to_device("/cpu:0")) is ds
    True
    """
    del target_device, source_device
    return lambda dataset: dataset


def Counter(start=0, step=1, dtype=_dtypes.int64):
    """An infinite dataset counting from `start` by `step`, as scalars of `dtype`.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> x = tf.data.experimental.Counter(3, 2).make_one_shot_iterator().get_next()
    >>> with tf.Session() as sess:
    ...     print([int(sess.run(x)) for _ in range(3)])
    [3, 5, 7]
    """
    from .dataset_ops_stateful import ScanDataset

    dtype = _dtypes.as_dtype(dtype).base_dtype
    start, step = (cast(convert_to_tensor(v), dtype) for v in (start, step))
    # as TF: an endless repeat scanned into a running sum (infinite cardinality)
    return ScanDataset(Dataset.from_tensors(0).repeat(), start,
                       lambda state, _: (state + step, state))


def _seed_pair(seed):
    """The op seeds of a dataset (TensorFlow's rule); both 0 (unseeded): random ones."""
    seed1, seed2 = get_seed(seed)
    if not seed1 and not seed2:
        import secrets

        return secrets.randbits(63), secrets.randbits(63)
    return int(seed1 or 0), int(seed2 or 0)


class RandomDataset(Dataset):
    """An infinite dataset of int64 scalars: the 32-bit words of TensorFlow's Philox
    stream for the op seeds of `seed` (so each element lies in ``[0, 2**32)``), the same
    sequence at every iteration, as TensorFlow's."""

    def __init__(self, seed=None) -> None:
        self._seeds = _seed_pair(seed)
        self._structure = _INT64_SCALAR

    def _iter(self, rc):
        words = WordStream(*self._seeds)
        while True:
            yield (np.asarray(words.next(), np.int64),)


def _cdf(weights, what: str = "weights") -> np.ndarray:
    """The unnormalized CDF TensorFlow's categorical draw walks: ``exp(logits - max)``
    of ``logits = log(weights)`` (computed in the weights' float32)."""
    w = np.asarray(weights, np.float64).reshape(-1)
    if w.size == 0 or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError(f"sample_from_datasets: {what} must be non-negative and not "
                         f"all zero, got {list(w)}")
    with np.errstate(divide="ignore"):
        logits = np.log(w.astype(np.float32)).astype(np.float64)
    finite = np.isfinite(logits)
    mass = np.where(finite, np.exp(np.where(finite, logits, 0.0) - logits[finite].max()), 0.0)
    return np.cumsum(mass)


def _draw(words, cdf) -> np.ndarray:
    # one stateless categorical draw, seeded by the next two words of the random stream
    key, counter = stateless_key_counter(words.next(), words.next())
    w = philox_blocks(key, counter, 1)[0]
    u = ((int(w[0]) & 0xFFFFF) << 32 | int(w[1])) / 2.0**52  # the draw's double
    return np.asarray(np.searchsorted(cdf, u * cdf[-1], side="right"), np.int64)


class _WeightedChoices(Dataset):
    """Infinite int64 indices drawn with probabilities `weights`, as TensorFlow's
    `sample_from_datasets` draws them: each pair of a `RandomDataset`'s elements seeds a
    stateless categorical draw from ``log(weights)`` (float32)."""

    def __init__(self, weights, seed) -> None:
        self._cdf = _cdf(weights)
        self._seeds = _seed_pair(seed)
        self._structure = _INT64_SCALAR

    def _iter(self, rc):
        words, cdf = WordStream(*self._seeds), self._cdf
        while True:
            yield (_draw(words, cdf),)


class _DatasetWeightedChoices(Dataset):
    """As `_WeightedChoices`, with the next element of a dataset of weights for each
    draw (its components flattened into one vector); ends when that dataset does."""

    def __init__(self, weights, n: int, seed) -> None:
        sizes = [s.shape.num_elements() for s in flatten(weights._structure)]
        if None not in sizes and sum(sizes) != n:
            raise ValueError(f"sample_from_datasets: the elements of `weights` hold "
                             f"{sum(sizes)} weights for {n} datasets")
        self._weights = weights
        self._seeds = _seed_pair(seed)
        self._structure = _INT64_SCALAR

    def _inputs(self):
        return [self._weights]

    def _iter(self, rc):
        words = WordStream(*self._seeds)
        for elem in self._weights._iter(rc):
            vector = np.concatenate([np.asarray(c).reshape(-1) for c in elem])
            yield (_draw(words, _cdf(vector, "the weights of an element")),)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """Elements drawn at random from `datasets` (uniformly, or by `weights`); an exhausted
    dataset is left out and the draws go on until all are, as in TensorFlow, and with
    TensorFlow's random choices for a seeded call.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> ds = tf.data.experimental.sample_from_datasets(
    ...     [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)], seed=1)
    >>> x = ds.make_one_shot_iterator().get_next()
    >>> with tf.Session() as sess:
    ...     print(sorted(int(sess.run(x)) for _ in range(5)))
    [0, 1, 2, 10, 11]
    """
    datasets = list(datasets)
    if not datasets:
        raise ValueError("sample_from_datasets: `datasets` must be a non-empty list")
    if isinstance(weights, Dataset):  # one weight vector per draw
        return ChooseFromDatasets(datasets, _DatasetWeightedChoices(weights, len(datasets),
                                                                    seed),
                                  stop_on_empty=bool(stop_on_empty_dataset))
    if weights is None:
        weights = [1.0] * len(datasets)
    elif len(np.asarray(weights).reshape(-1)) != len(datasets):
        raise ValueError(f"sample_from_datasets: got {len(np.asarray(weights).reshape(-1))} "
                         f"weights for {len(datasets)} datasets")
    return ChooseFromDatasets(datasets, _WeightedChoices(weights, seed),
                              stop_on_empty=bool(stop_on_empty_dataset))


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """``map(lambda s: tf.io.parse_example(s, features))`` over batches of serialized
    ``Example`` protos, for `Dataset.apply`.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> f = tf.data.experimental.parse_example_dataset({"a": tf.FixedLenFeature([], tf.int64)})
    >>> tf.data.Dataset.from_tensors(["x"]).apply(f).output_types
    {'a': tf.int64}
    """
    from flowgraph.ops.parsing_ops import parse_example

    del deterministic

    def apply(dataset):
        return dataset.map(lambda serialized: parse_example(serialized, features),
                           num_parallel_calls)

    return apply


def get_single_element(dataset):
    """The tensors of the one element of `dataset` (a ``DatasetToSingleElement`` op, which
    fails with "Dataset was empty." or "Dataset had more than one element.").

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> x = tf.data.experimental.get_single_element(tf.data.Dataset.from_tensors([1, 2]))
    >>> tf.Session().run(x).tolist()
    [1, 2]
    """
    from flowgraph.ops.iterator_ops import register_dataset
    from flowgraph.ops.op_util import make_op

    if not isinstance(dataset, Dataset):
        raise TypeError(f"get_single_element: `dataset` must be a tf.data.Dataset, got "
                        f"{type(dataset).__name__}")
    graph = get_default_graph()
    captured = _check_graph(dataset, graph, "get_single_element")
    key = register_dataset(graph, dataset)
    op = make_op("DatasetToSingleElement", captured,
                 {**_flat_attrs(dataset._structure), "dataset_id": key},
                 name="DatasetToSingleElement")
    return pack_graph(dataset._structure, op.outputs)
