"""The `tf.data.experimental` namespace (TF 1.15): AUTOTUNE and the transformation
factories TF1 programs pass to `Dataset.apply`.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(6).apply(tf.data.experimental.map_and_batch(
...     lambda x: x * 2, batch_size=4, num_parallel_calls=tf.data.experimental.AUTOTUNE))
>>> ds.output_shapes
TensorShape([Dimension(None)])
"""

from __future__ import annotations

from . import dataset_ops_stateful as _stateful
from . import dataset_ops_window as _window
from .dataset import AUTOTUNE
from .dataset_cardinality import cardinality
from .dataset_ops_csv import CsvDataset, make_batched_features_dataset, make_csv_dataset
from .dataset_ops_experimental_misc import (
    SHARD_HINT,
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DatasetInitializer,
    DatasetStructure,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    OptionalStructure,
    RaggedTensorStructure,
    SparseTensorStructure,
    Structure,
    TensorArrayStructure,
    TensorStructure,
    ThreadingOptions,
    assert_cardinality,
    enable_debug_mode,
    from_list,
    from_variant,
    get_structure,
    index_table_from_dataset,
    pad_to_cardinality,
    service,
    table_from_dataset,
    to_variant,
)
from .dataset_ops_experimental_more import (
    Counter,
    RandomDataset,
    copy_to_device,
    enumerate_dataset,
    get_single_element,
    parallel_interleave,
    parse_example_dataset,
    prefetch_to_device,
    sample_from_datasets,
)
from .dataset_ops_grouping import Reducer, group_by_reducer, rejection_resample
from .dataset_ops_io import SqlDataset, TFRecordWriter, snapshot
from .dataset_ops_optional import Optional, get_next_as_optional, make_saveable_from_iterator
from .iterator import get_output_classes, get_output_shapes, get_output_types
from .options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "SHARD_HINT",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "Counter",
    "CsvDataset",
    "DatasetInitializer",
    "DatasetStructure",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Optional",
    "OptionalStructure",
    "RaggedTensorStructure",
    "RandomDataset",
    "Reducer",
    "SparseTensorStructure",
    "SqlDataset",
    "Structure",
    "TFRecordWriter",
    "TensorArrayStructure",
    "TensorStructure",
    "ThreadingOptions",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "copy_to_device",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "enumerate_dataset",
    "from_list",
    "from_variant",
    "get_next_as_optional",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "get_single_element",
    "get_structure",
    "group_by_reducer",
    "group_by_window",
    "ignore_errors",
    "index_table_from_dataset",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "make_saveable_from_iterator",
    "map_and_batch",
    "map_and_batch_with_legacy_function",
    "pad_to_cardinality",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
    "rejection_resample",
    "sample_from_datasets",
    "scan",
    "service",
    "shuffle_and_repeat",
    "snapshot",
    "table_from_dataset",
    "take_while",
    "to_variant",
    "unbatch",
    "unique",
]


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """``map(map_func)`` then ``batch(batch_size)``, for `Dataset.apply`."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches

    def apply(dataset):
        mapped = dataset.map(map_func, calls)
        mapped._keeps_count = True  # TF's fused op keeps the cardinality (a map does not)
        return mapped.batch(batch_size, drop_remainder)

    return apply


def map_and_batch_with_legacy_function(map_func, batch_size, num_parallel_batches=None,
                                       drop_remainder=False, num_parallel_calls=None):
    """`map_and_batch` (functions are traced one way here). For `Dataset.apply`."""
    return map_and_batch(map_func, batch_size, num_parallel_batches, drop_remainder,
                         num_parallel_calls)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``, for `Dataset.apply`."""

    def apply(dataset):
        return dataset.shuffle(buffer_size, seed).repeat(count)

    return apply


def unbatch():
    """``Dataset.unbatch``, for `Dataset.apply`."""

    def apply(dataset):
        return dataset.unbatch()

    return apply


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """Group elements by ``key_func(element)`` (a scalar int64); each full group of
    `window_size` (or ``window_size_func(key)``) elements becomes the dataset
    ``reduce_func(key, window)``, where `window` is a dataset of the group. For
    `Dataset.apply`.

    Example
    -------
    >>> import flowgraph as tf
    >>> ds = tf.data.Dataset.range(6).apply(tf.data.experimental.group_by_window(
    ...     lambda x: x % 2, lambda key, w: w.batch(3), window_size=3))
    >>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
    [[0, 2, 4], [1, 3, 5]]
    """

    def apply(dataset):
        return _window.GroupByWindowDataset(dataset, key_func, reduce_func, window_size,
                                            window_size_func)

    return apply


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Batch elements of similar length together: a length below
    ``bucket_boundaries[0]`` goes to bucket 0, and so on (``len(boundaries) + 1``
    buckets); each bucket is padded-batched by its entry of `bucket_batch_sizes`.
    For `Dataset.apply`.

    Example
    -------
    >>> import flowgraph as tf
    >>> ds = tf.data.Dataset.from_generator(lambda: iter([[1], [1, 2], [3]]), tf.int32,
    ...                                     [None])
    >>> ds = ds.apply(tf.data.experimental.bucket_by_sequence_length(
    ...     lambda x: tf.shape(x)[0], [2], [2, 2]))
    >>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
    [[[1], [3]], [[1, 2]]]
    """

    def apply(dataset):
        return _window.BucketBySequenceLengthDataset(
            dataset, element_length_func, bucket_boundaries, bucket_batch_sizes,
            padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
            drop_remainder)

    return apply


def scan(initial_state, scan_func):
    """A running state over the elements: ``scan_func(state, element)`` returns
    ``(new_state, output_element)``. For `Dataset.apply`."""

    def apply(dataset):
        return _stateful.ScanDataset(dataset, initial_state, scan_func)

    return apply


def take_while(predicate):
    """The elements up to (not including) the first for which `predicate` is False."""

    def apply(dataset):
        return _stateful.TakeWhileDataset(dataset, predicate)

    return apply


def unique():
    """Each distinct element once, in order of first appearance."""

    def apply(dataset):
        return _stateful.UniqueDataset(dataset)

    return apply


def ignore_errors(log_warning=False):
    """Drop the elements whose computation fails (e.g. a ``check_numerics`` in a map)."""
    del log_warning

    def apply(dataset):
        return _stateful.IgnoreErrorsDataset(dataset)

    return apply


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """Each element from ``datasets[choice]`` for the next int64 `choice` of
    `choice_dataset` (an exhausted dataset's choices are skipped, or with
    `stop_on_empty_dataset` end the result)."""
    return _stateful.ChooseFromDatasets(datasets, choice_dataset,
                                        stop_on_empty=bool(stop_on_empty_dataset))


def dense_to_sparse_batch(batch_size, row_shape):
    """Batch elements of different shapes into a SparseTensor of dense shape
    ``[batch, *row_shape]`` (-1 in `row_shape`: the batch's largest size)."""

    def apply(dataset):
        return _stateful.DenseToSparseBatchDataset(dataset, batch_size, row_shape)

    return apply
