"""Declarations of the tf.data iterator ops, and the per-graph table of the datasets
they read. `flowgraph.data.iterator` builds the ops; their kernels are in
`flowgraph/backends/cpu/kernels_data.py`.

=============================  ==================================================
op type                        what it does
=============================  ==================================================
``OneShotIterator(*captured)``  handle; initializes itself on first use
``IteratorV2()``               handle of an iterator started by ``MakeIterator``
``MakeIterator(h, *captured)``  (re)starts iterator `h` on a dataset
``IteratorGetNext(h)``         the next element, one output per component
``IteratorToStringHandle``     handle -> string (feedable iterators)
``IteratorFromStringHandleV2`` string -> handle
=============================  ==================================================

A dataset is a Python object, which cannot be an op attribute (graphs serialize to
JSON), so `register_dataset` keeps it per graph and the ops carry its ``dataset_id``;
kernels find it again with `lookup_dataset`. A graph loaded from JSON has no datasets:
its iterator ops fail with FailedPreconditionError when they run.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> key = register_dataset(g, "a dataset")
>>> with g.as_default():
...     op = g.create_op("MakeIterator", [g.create_op("IteratorV2", []).outputs[0]],
...                      {"dataset_id": key})
>>> lookup_dataset(op, key)
'a dataset'
"""

from __future__ import annotations

import threading
import weakref

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import fixed_dtype

__all__ = ["lookup_dataset", "register_dataset"]


def _handle_shape(op, *inputs):
    return [TensorShape([])]


_ITER_ATTRS = {"output_types": [], "output_shapes": [], "shared_name": "", "container": ""}
register_op("IteratorV2", attrs=_ITER_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(_handle_shape)
register_op("OneShotIterator", attrs={**_ITER_ATTRS, "dataset_id": ""},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(_handle_shape)
register_op("IteratorFromStringHandleV2", attrs={"output_types": [], "output_shapes": []},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(_handle_shape)
register_op("IteratorToStringHandle", dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(_handle_shape)


@register_op("MakeIterator", attrs={"dataset_id": ""}, num_outputs=0,
             dtype_fn=lambda op: [], stateful=True)
def _make_iterator_shape(op, *shapes):
    return []


def _get_next_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["output_types"]]


@register_op("IteratorGetNext", attrs={"output_types": [], "output_shapes": []},
             num_outputs=lambda op: len(op.attrs["output_types"]), dtype_fn=_get_next_dtypes,
             stateful=True, cost=OpCost.EXPENSIVE)
def _get_next_shape(op, handle):
    return [as_shape(s) for s in op.attrs["output_shapes"]]


@register_op("ReduceDataset", attrs={"output_types": [], "output_shapes": [],
                                     "dataset_id": ""},
             num_outputs=lambda op: len(op.attrs["output_types"]), dtype_fn=_get_next_dtypes,
             stateful=True, cost=OpCost.EXPENSIVE)
def _reduce_dataset_shape(op, *captured):
    return [as_shape(s) for s in op.attrs["output_shapes"]]


@register_op("DatasetToSingleElement", attrs={"output_types": [], "output_shapes": [],
                                             "dataset_id": ""},
             num_outputs=lambda op: len(op.attrs["output_types"]), dtype_fn=_get_next_dtypes,
             stateful=True, cost=OpCost.EXPENSIVE)
def _single_element_shape(op, *captured):
    return [as_shape(s) for s in op.attrs["output_shapes"]]


@register_op("DatasetCardinality", attrs={"dataset_id": ""},
             dtype_fn=lambda op: [_dtypes.int64], stateful=True)
def _cardinality_shape(op, *captured):
    return [TensorShape([])]


not_differentiable("IteratorV2", "OneShotIterator", "IteratorFromStringHandleV2",
                   "IteratorToStringHandle", "MakeIterator", "IteratorGetNext",
                   "ReduceDataset", "DatasetToSingleElement", "DatasetCardinality")


# -- the dataset table ----------------------------------------------------------------------
_DATASETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def register_dataset(graph, dataset) -> str:
    """Keep `dataset` for the iterator ops of `graph`; returns the id to put in attrs.

    Example
    -------
    >>> import flowgraph as tf
    >>> register_dataset(tf.Graph(), object())
    'dataset_0'
    """
    with _LOCK:
        table = _DATASETS.setdefault(graph, {})
        key = f"dataset_{len(table)}"
        table[key] = dataset
        return key


def lookup_dataset(op, key: str):
    """The dataset `register_dataset` kept under `key` for `op`'s graph.

    Raises FailedPreconditionError when the graph has none (a graph loaded from JSON).
    """
    with _LOCK:
        ds = _DATASETS.get(op.graph, {}).get(key)
    if ds is None:
        raise errors.FailedPreconditionError(
            None, None, f"op '{op.name}' ({op.type}) refers to {key}, which is not defined in "
            "this graph. A graph restored from a GraphDef does not carry its tf.data input "
            "pipeline; rebuild the dataset and its iterator in Python.")
    return ds
