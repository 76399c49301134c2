"""``rejection_resample`` composed as TensorFlow composes it, so a seeded call accepts
and mixes exactly the elements TensorFlow does.

Per class ``i`` the ratio ``r_i = target_i / (initial_i + tiny)`` (float32) gives the
probability ``m = min(r)`` of taking the next element of the data as it is, and the
acceptance probability ``a_i = (r_i - m) / (max(r) - m)`` of the rejection branch::

    data ─map(class, data)──────────────────────────┐
    data ─zip(a)─map(class, a[class], data)         ├─ sample_from_datasets([m, 1 - m])
         ─filter(uniform(seed) < a[class])──────────┘

Without `initial_dist` the distribution is estimated as the data goes: class counts
(from 10 of each) updated per batch of 32 classes, the estimate repeated for each of the
32, and ``a`` and ``m`` follow it element by element (``sample_from_datasets`` then takes
its weights from a dataset).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.from_tensor_slices(np.array([0, 0, 0, 1] * 4, np.int32))
>>> ds = ds.apply(tf.data.experimental.rejection_resample(
...     lambda c: c, target_dist=[0.5, 0.5], initial_dist=[0.75, 0.25], seed=1))
>>> ds.output_types
(tf.int32, tf.int32)
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import math_ops, random_ops
from flowgraph.ops.array_gen_ops import one_hot
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_join_ops import tile
from flowgraph.ops.array_shape_ops import expand_dims, fill
from flowgraph.ops.math_reduce import reduce_max, reduce_min, reduce_sum

from .dataset import Dataset
from .dataset_ops_experimental_more import sample_from_datasets
from .dataset_ops_stateful import ScanDataset

__all__ = ["resample_estimating_initial_dist", "resample_with_initial_dist"]

_TINY = np.finfo(np.float32).tiny


def _class_of(class_func, data):
    return class_func(*data) if isinstance(data, tuple) else class_func(data)


def _acceptance(initial, target):
    ratio = target / (initial + _TINY)
    high, low = reduce_max(ratio), reduce_min(ratio)
    return (ratio - low) / (high - low), low


def _filtered(dataset, class_func, accept_ds, seed):
    def gather_and_copy(accept, data):
        cls = _class_of(class_func, data)
        return cls, gather(accept, cls), data

    def keep(cls, prob, data):
        del cls, data
        return math_ops.less(random_ops.random_uniform([], seed=seed, dtype=prob.dtype),
                             prob)

    return (Dataset.zip((accept_ds, dataset)).map(gather_and_copy).filter(keep)
            .map(lambda cls, prob, data: (cls, data)).prefetch(3))


def _with_class(class_func):
    def with_class(*data):
        data = data[0] if len(data) == 1 else data
        return _class_of(class_func, data), data
    return with_class


def resample_estimating_initial_dist(dataset, class_func, target_dist, seed, batch=32,
                                     smoothing=10):
    """`dataset`'s elements as ``(class, element)``, resampled to `target_dist` from a
    class distribution estimated as the classes go by, with TensorFlow's random draws."""
    target_t = math_ops.cast(convert_to_tensor(target_dist, name="target_dist"),
                             _dtypes.float32)
    n = target_t.shape[0].value
    counts0 = fill([n], np.int64(smoothing))

    def update(counts, classes):
        counts = counts + reduce_sum(one_hot(classes, n, dtype=_dtypes.int64), 0)
        dist = math_ops.cast(counts / reduce_sum(counts), _dtypes.float32)
        return counts, tile(expand_dims(dist, 0), [batch, 1])

    classes = dataset.map(lambda *d: _class_of(class_func, d[0] if len(d) == 1 else d))
    initial_ds = ScanDataset(classes.batch(batch), counts0, update).unbatch()
    accept_and_original = initial_ds.map(lambda initial: _acceptance(initial, target_t))
    accept_ds = accept_and_original.map(lambda accept, _: accept)
    original_ds = accept_and_original.map(lambda _, original: original)
    filtered = _filtered(dataset, class_func, accept_ds, seed)
    return sample_from_datasets(
        [dataset.map(_with_class(class_func)), filtered],
        weights=original_ds.map(lambda p: ((p, 1.0 - p),)), seed=seed,
        stop_on_empty_dataset=True)


def resample_with_initial_dist(dataset, class_func, target_dist, initial_dist, seed):
    """`dataset`'s elements as ``(class, element)``, resampled from `initial_dist` to
    `target_dist` (both 1-D probability vectors) with TensorFlow's random draws."""
    target_t = math_ops.cast(convert_to_tensor(target_dist, name="target_dist"),
                             _dtypes.float32)
    initial_t = math_ops.cast(convert_to_tensor(initial_dist, name="initial_dist"),
                              _dtypes.float32)
    # the same ops (and names) TensorFlow adds to the graph for the acceptance vector
    accept_t, _ = _acceptance(initial_t, target_t)

    target = np.asarray(target_dist, np.float32)
    initial = np.asarray(initial_dist, np.float32)
    ratio = target / (initial + np.float32(_TINY))
    prob_original = ratio.min()
    with np.errstate(divide="ignore", invalid="ignore"):
        static_original = np.min(target / initial)

    if static_original == 1:
        return dataset.map(_with_class(class_func))
    filtered = _filtered(dataset, class_func, Dataset.from_tensors(accept_t).repeat(), seed)
    if static_original == 0:
        return filtered
    return sample_from_datasets(
        [dataset.map(_with_class(class_func)), filtered],
        weights=[prob_original, np.float32(1.0) - prob_original], seed=seed,
        stop_on_empty_dataset=True)
