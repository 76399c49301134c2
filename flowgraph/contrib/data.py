"""`tf.contrib.data`: TF1's dataset transformations, since moved to `tf.data.experimental`
(aliased here), plus contrib's `batch_and_drop_remainder` / `padded_batch_and_drop_remainder`
and `sloppy_interleave`.

Example
-------
>>> import flowgraph as tf
>>> ds = tf.data.Dataset.range(5).apply(tf.contrib.data.batch_and_drop_remainder(2))
>>> nxt = ds.make_one_shot_iterator().get_next()
>>> with tf.Session() as sess:
...     print(sess.run(nxt).tolist(), sess.run(nxt).tolist())
[0, 1] [2, 3]
"""

from __future__ import annotations

from flowgraph.data.dataset_ops_experimental import (
    AUTOTUNE,
    Counter,
    CsvDataset,
    RandomDataset,
    bucket_by_sequence_length,
    choose_from_datasets,
    copy_to_device,
    dense_to_sparse_batch,
    enumerate_dataset,
    get_single_element,
    group_by_window,
    ignore_errors,
    make_batched_features_dataset,
    make_csv_dataset,
    map_and_batch,
    parallel_interleave,
    parse_example_dataset,
    prefetch_to_device,
    sample_from_datasets,
    scan,
    shuffle_and_repeat,
    unbatch,
    unique,
)

__all__ = [
    "AUTOTUNE",
    "Counter",
    "CsvDataset",
    "RandomDataset",
    "batch_and_drop_remainder",
    "bucket_by_sequence_length",
    "choose_from_datasets",
    "copy_to_device",
    "dense_to_sparse_batch",
    "enumerate_dataset",
    "get_single_element",
    "group_by_window",
    "ignore_errors",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "map_and_batch",
    "padded_batch_and_drop_remainder",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
    "sample_from_datasets",
    "scan",
    "shuffle_and_repeat",
    "sloppy_interleave",
    "unbatch",
    "unique",
]


def batch_and_drop_remainder(batch_size):
    """A transformation batching by `batch_size` and dropping a last partial batch (use
    with `Dataset.apply`)."""
    def apply(dataset):
        return dataset.batch(batch_size, drop_remainder=True)
    return apply


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """`padded_batch` dropping a last partial batch, as a transformation."""
    def apply(dataset):
        return dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                    drop_remainder=True)
    return apply


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """`parallel_interleave` with ``sloppy=True`` (order not guaranteed)."""
    return parallel_interleave(map_func, cycle_length, block_length, sloppy=True)
