"""The rest of ``tf.data.experimental`` (TF 2.15's ``compat.v1``): option enums and
groups, the old ``*Structure`` names of the type specs, cardinality helpers
(`assert_cardinality`, `pad_to_cardinality`, `from_list`), `get_structure`, datasets as
variant tensors (`to_variant` / `from_variant`), lookup tables filled from a dataset
(`DatasetInitializer`, `table_from_dataset`, `index_table_from_dataset`) and the
``service`` module (no tf.data service runs here: reading from one is an error).

Example
-------
>>> import flowgraph as tf
>>> ds = tf.data.experimental.from_list([(1, "a"), (2, "b")])
>>> tf.data.experimental.get_structure(ds)[1]
TensorSpec(shape=(), dtype=tf.string, name=None)
"""

from __future__ import annotations

import enum
import types

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops.iterator_ops import lookup_dataset, register_dataset
from flowgraph.ops.lookup_ops import KeyValueTensorInitializer, StaticHashTable
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.ragged_spec import RaggedTensorSpec
from flowgraph.ops.type_spec import (
    OptionalSpec,
    SparseTensorSpec,
    TensorArraySpec,
    TensorSpec,
    TypeSpec,
)

from .dataset import Dataset
from .dataset_ops_experimental_more import get_single_element
from .dataset_ops_optional import structure_from_element_spec
from .dataset_ops_structure import ComponentSpec, describe, flatten, map_structure
from .dataset_spec import DatasetSpec, _element_spec
from .iterator import _check_graph
from .options import (
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)

__all__ = [
    "SHARD_HINT",
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "DatasetInitializer",
    "DatasetStructure",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "OptionalStructure",
    "RaggedTensorStructure",
    "SparseTensorStructure",
    "Structure",
    "TensorArrayStructure",
    "TensorStructure",
    "ThreadingOptions",
    "assert_cardinality",
    "enable_debug_mode",
    "from_list",
    "from_variant",
    "get_structure",
    "index_table_from_dataset",
    "pad_to_cardinality",
    "service",
    "table_from_dataset",
    "to_variant",
]


# -- options: enums and option groups live in options.py; the sharding hint ---------
# `shard(SHARD_HINT, ...)`: the number of shards the distribution strategy chooses.
SHARD_HINT = -1

# The TF 2.0-2.2 names of the type specs.
DatasetStructure = DatasetSpec
OptionalStructure = OptionalSpec
RaggedTensorStructure = RaggedTensorSpec
SparseTensorStructure = SparseTensorSpec
Structure = TypeSpec
TensorStructure = TensorSpec


def TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape):
    """The old name of ``tf.TensorArraySpec(element_shape, dtype, dynamic_size,
    infer_shape)`` (note the argument order)."""
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)


def enable_debug_mode():
    """Debug mode runs tf.data functions eagerly, which TF1 graph mode cannot do."""
    raise ValueError("`enable_debug_mode() is only supported in eager mode.")


# -- structure and cardinality ------------------------------------------------------------------
def get_structure(dataset_or_iterator):
    """The element spec (nested `TensorSpec`) of a Dataset or Iterator."""
    if isinstance(dataset_or_iterator, Dataset) or hasattr(dataset_or_iterator, "_handle"):
        return _element_spec(dataset_or_iterator)
    raise TypeError(
        "Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` "
        f"or tf.data.Iterator object, but got {type(dataset_or_iterator)}.")


def from_list(elements) -> Dataset:
    """A dataset of the items of `elements` (each a nested structure of values of one
    structure and dtype), in order."""
    elements = list(elements)
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    first = elements[0]
    flat = [flatten(map_structure(lambda v: v, e)) for e in elements]
    if any(len(f) != len(flat[0]) for f in flat):
        raise ValueError("Invalid `elements`. All elements of `elements` must have the same "
                         "structure.")
    columns = [_column([f[i] for f in flat]) for i in range(len(flat[0]))]
    from .dataset_ops_structure import pack_as

    return _ListDataset(Dataset.from_tensor_slices(pack_as(first, columns)))


def _column(values) -> np.ndarray:
    """The stacked values of one component, with TensorFlow's dtypes for Python
    numbers (int32, float32)."""
    col = np.asarray(values)
    if all(type(v) is int for v in values) and col.dtype == np.int64 and (
            col.size == 0 or (col.min() >= -2**31 and col.max() < 2**31)):
        return col.astype(np.int32)
    if all(type(v) is float for v in values):
        return col.astype(np.float32)
    return col


class _ListDataset(Dataset):
    """`from_list`'s dataset: the slices of the stacked items (a known cardinality)."""

    def __init__(self, slices: Dataset) -> None:
        self._input = slices
        self._structure = slices._structure

    def _inputs(self):
        return [self._input]

    def _cardinality(self, rc, count):
        return count(self._input, rc)

    def _iter(self, rc):
        return self._input._iter(rc)


class _AssertCardinalityDataset(Dataset):
    def __init__(self, input_dataset: Dataset, expected) -> None:
        self._input = input_dataset
        self._structure = input_dataset._structure
        self._expected = convert_to_tensor(expected, dtype=_dtypes.int64,
                                           name="expected_cardinality")

    def _cardinality(self, rc, count):
        return int(rc.resolve(self._expected))

    def _inputs(self):
        return [self._input]

    def _tensors(self):
        return [self._expected]

    def _iter(self, rc):
        expected = int(rc.resolve(self._expected))
        n = 0
        for element in self._input._iter(rc):
            n += 1
            if expected >= 0 and n > expected:
                raise errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain {expected} "
                    f"{_elements(expected)} but contained at least {n} {_elements(n)}.")
            yield element
        if expected == -1 or n < expected:
            want = "an infinite number of" if expected == -1 else str(expected)
            raise errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain {want} "
                f"{_elements(expected)} but contained only {n} {_elements(n)}.")


def _elements(n: int) -> str:
    return "element" if n == 1 else "elements"


def assert_cardinality(expected_cardinality):
    """Declare the dataset's element count (what `cardinality` then reports); reading
    more or fewer elements fails with FailedPreconditionError. For `Dataset.apply`."""

    def apply(dataset):
        return _AssertCardinalityDataset(dataset, expected_cardinality)

    return apply


def pad_to_cardinality(cardinality, mask_key="valid"):
    """Pad a dataset of dicts with elements of zeros up to `cardinality` elements; each
    element gains a bool ``mask_key`` entry, True for the real ones. For
    `Dataset.apply`."""

    def apply(dataset):
        if not isinstance(dataset._structure, dict):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        if mask_key in dataset._structure:
            raise ValueError(f"pad_to_cardinality: the elements already have a "
                             f"'{mask_key}' key (choose another mask_key)")
        from flowgraph.ops.array_ops import zeros
        from flowgraph.ops.math_ops import logical_not

        specs = dataset._structure
        for k, s in specs.items():
            if not s.shape.is_fully_defined() or s.sparse:
                raise ValueError(f"pad_to_cardinality: component '{k}' must be a dense "
                                 f"tensor of a fully known shape, got {describe(s)}")
        real = dataset.map(lambda x: {**x, mask_key: convert_to_tensor(True)})
        pad = {k: zeros(s.shape, s.dtype) for k, s in specs.items()}
        pad[mask_key] = logical_not(convert_to_tensor(True))
        padding = Dataset.from_tensors(pad).repeat()
        out = _AssertAtMost(real, cardinality).concatenate(padding).take(cardinality)
        return out

    return apply


class _AssertAtMost(Dataset):
    """The input, failing if it has more than `limit` elements (pad_to_cardinality)."""

    def __init__(self, input_dataset, limit) -> None:
        self._input = input_dataset
        self._structure = input_dataset._structure
        self._limit = int(limit)

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        for n, element in enumerate(self._input._iter(rc), 1):
            if n > self._limit:
                raise errors.InvalidArgumentError(
                    None, None, f"Cardinality of the input dataset is larger than the "
                    f"requested cardinality {self._limit}.")
            yield element


# -- datasets as variant tensors ------------------------------------------------------------------
def to_variant(dataset) -> Tensor:
    """A scalar variant tensor standing for `dataset` (for `from_variant`)."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"to_variant expects a tf.data.Dataset, got {type(dataset).__name__}")
    graph = get_default_graph()
    captured = _check_graph(dataset, graph, "to_variant")
    key = register_dataset(graph, dataset)
    return make_tensor("DatasetVariant", captured, {"dataset_id": key},
                       name=type(dataset).__name__)


class _VariantDataset(Dataset):
    def __init__(self, dataset: Dataset, structure) -> None:
        self._input = dataset
        self._structure = structure

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        return self._input._iter(rc)


def from_variant(variant, structure) -> Dataset:
    """The dataset a `to_variant` tensor stands for, with element spec `structure`."""
    if not isinstance(variant, Tensor) or variant.op.type != "DatasetVariant":
        raise ValueError(
            "from_variant: `variant` must be a tensor made by "
            f"tf.data.experimental.to_variant in this graph, got {variant!r}")
    key = variant.op.get_attr("dataset_id")
    dataset = lookup_dataset(variant.op, key.decode() if isinstance(key, bytes) else key)
    wanted = structure_from_element_spec(structure)
    got = dataset._structure
    if [(s.dtype, s.shape.as_list() if s.shape.ndims is not None else None)
            for s in flatten(wanted)] != [
            (s.dtype, s.shape.as_list() if s.shape.ndims is not None else None)
            for s in flatten(got)]:
        raise TypeError(f"from_variant: the dataset has elements {describe(got)}, not "
                        f"{describe(wanted)}")
    return _VariantDataset(dataset, wanted)


# -- lookup tables from a dataset ---------------------------------------------------------------
class DatasetInitializer(KeyValueTensorInitializer):
    """Fills a lookup table from a dataset of ``(key, value)`` scalar pairs."""

    def __init__(self, dataset) -> None:
        spec = dataset._structure if isinstance(dataset, Dataset) else None
        if not isinstance(spec, tuple) or len(spec) != 2 or not all(
                isinstance(s, ComponentSpec) and not s.sparse for s in spec):
            raise TypeError(
                "DatasetInitializer: the dataset's elements must be (key, value) pairs of "
                f"tensors, got {describe(spec) if spec is not None else type(dataset)}")
        with name_scope(None, "dataset_init"):
            keys, values = get_single_element(dataset.batch(1 << 62))
        super().__init__(keys, values, name="dataset_init")
        self.dataset = dataset

    def clone(self):
        """This initializer rebuilt in the default graph: how a table filled from a
        dataset reaches a `tf.data` function's graph (the dataset is read there)."""
        return DatasetInitializer(self.dataset)


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=None, key_dtype=_dtypes.string, name=None):
    """A lookup table of the dataset's ``(key, value)`` pairs; unknown keys get
    `default_value` or, with ``num_oov_buckets``, a hash bucket after the vocabulary."""
    from flowgraph.ops.lookup_ops import StaticVocabularyTable

    if dataset is None:
        raise ValueError("table_from_dataset: `dataset` must be given")
    if vocab_size is not None:
        dataset = dataset.take(vocab_size)
    with name_scope(name, "string_to_index"):
        init = DatasetInitializer(dataset)
        if init.key_dtype != _dtypes.as_dtype(key_dtype):
            raise TypeError(f"table_from_dataset: the keys have dtype {init.key_dtype.name}, "
                            f"but key_dtype is {_dtypes.as_dtype(key_dtype).name}")
        if num_oov_buckets:
            return StaticVocabularyTable(init, int(num_oov_buckets), name="hash_table")
        return StaticHashTable(init, default_value, name="hash_table")


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None, key_dtype=_dtypes.string,
                             name=None):
    """A table mapping each element of `dataset` (scalar keys) to its position (int64)."""
    if dataset is None:
        raise ValueError("index_table_from_dataset: `dataset` must be given")
    pairs = dataset.enumerate().map(lambda i, k: (k, i))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec,
                              key_dtype, name)


# -- tf.data.experimental.service ---------------------------------------------------------------
class ShardingPolicy(enum.IntEnum):
    """How a tf.data service splits a dataset between its workers."""

    OFF = 0
    DYNAMIC = 1
    FILE = 2
    DATA = 3
    FILE_OR_DATA = 4
    HINT = 5


class _ServiceDataset(Dataset):
    def __init__(self, dataset, service_address: str) -> None:
        self._input = dataset
        self._structure = dataset._structure
        self._address = service_address

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        raise errors.UnavailableError(
            None, None, f"Failed to register dataset with dispatcher at {self._address}: "
            "no tf.data service dispatcher is reachable (start one with "
            "tf.data.experimental.service.DispatchServer in TensorFlow; flowgraph runs "
            "input pipelines in process only)")


def _service_distribute(processing_mode, service, job_name=None, consumer_index=None,
                        num_consumers=None, max_outstanding_requests=None,
                        data_transfer_protocol=None, compression="AUTO",
                        cross_trainer_cache=None, target_workers="AUTO"):
    address = service if isinstance(service, str) else repr(service)
    address = address.split("://", 1)[-1]

    def apply(dataset):
        return _ServiceDataset(dataset, address)

    return apply


def _service_register_dataset(service, dataset, compression="AUTO", dataset_id=None):
    raise errors.UnavailableError(
        None, None, f"Failed to register dataset with dispatcher at {service}: no tf.data "
        "service dispatcher is reachable")


def _service_from_dataset_id(processing_mode, service, dataset_id, element_spec=None,
                             **kwargs):
    if element_spec is None:
        raise ValueError("from_dataset_id: element_spec is required in graph mode")
    ds = _ServiceDataset(Dataset.range(0), str(service).split("://", 1)[-1])
    ds._structure = structure_from_element_spec(element_spec)
    return ds


service = types.ModuleType("flowgraph.data.experimental.service",
                           "tf.data.experimental.service: reading from a tf.data service "
                           "(none runs here; iterating such a dataset fails with "
                           "UnavailableError).")
service.distribute = _service_distribute
service.register_dataset = _service_register_dataset
service.from_dataset_id = _service_from_dataset_id
service.ShardingPolicy = ShardingPolicy
