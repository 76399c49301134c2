"""`tf.data.Iterator` (TF1): graph ops reading the elements of a `Dataset`.

Ops
---
``OneShotIterator(*captured)``   handle; initializes itself on first use in a session.
``IteratorV2()``                 handle of an iterator initialized by ``MakeIterator``.
``MakeIterator(handle, *captured)``  (re)starts the iterator on a dataset; the captured
                                 tensors' values (placeholders, constants) parameterize it.
``IteratorGetNext(handle)``      the next element, one output per flattened component;
                                 `OutOfRangeError` ("End of sequence") at the end.
``IteratorToStringHandle`` / ``IteratorFromStringHandleV2``: feedable iterators.

The op types are declared in `flowgraph/ops/iterator_ops.py`. The iterator state lives
in the session's resource container (see `flowgraph/backends/cpu/kernels_data.py`), so
each session has its own position.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> it = tf.data.Dataset.from_tensor_slices([1, 2]).make_one_shot_iterator()
>>> x = it.get_next()
>>> with tf.Session() as sess:
...     print(sess.run(x), sess.run(x))
...     try:
...         sess.run(x)
...     except tf.errors.OutOfRangeError:
...         print("done")
1 2
done
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import nest
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, get_seed
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.ops.iterator_ops import register_dataset
from flowgraph.ops.op_util import make_op

from .dataset_ops_structure import (
    as_spec_structure,
    component_class,
    graph_specs,
    map_structure,
    pack_graph,
)

GLOBAL_ITERATORS = "iterators"

__all__ = [
    "GLOBAL_ITERATORS",
    "Iterator",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
    "reduce_dataset",
]


# -- helpers ------------------------------------------------------------------------------------
def _flat_attrs(structure) -> dict:
    specs = graph_specs(structure)  # a sparse component travels as three tensors
    return {"output_types": [s.dtype for s in specs],
            "output_shapes": [s.shape for s in specs]}


def _check_graph(dataset, graph, what: str) -> list[Tensor]:
    captured = dataset._captured()
    for t in captured:
        # a tf.data function's graph reads the outer graph's tensors by capturing them
        if t.graph is not graph and not hasattr(graph, "capture"):
            raise ValueError(
                f"{what}: the dataset uses tensor '{t.name}' of another graph. Build the "
                "dataset and its iterator in the same graph (inside the same "
                "`with graph.as_default():` block).")
    return captured


def _find_placeholder(tensors) -> Operation | None:
    seen: set = set()
    stack = [t.op for t in tensors]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder":
            return op
        stack.extend(t.op for t in op.inputs)
    return None


class Iterator:
    """Reads a dataset's elements in a graph (TF1 ``tf.data.Iterator``).

    Create one with `Dataset.make_one_shot_iterator`,
    `Dataset.make_initializable_iterator`, `Iterator.from_structure` (re-initializable
    with several datasets of one structure) or `Iterator.from_string_handle` (feedable).
    """

    def __init__(self, handle: Tensor, initializer: Operation | None, structure) -> None:
        self._handle = handle
        self._initializer = initializer
        self._structure = structure
        self._get_next_calls = 0
        # As TensorFlow, every iterator makes its string handle when it is built (which
        # numbers later ``IteratorToStringHandle`` ops); string_handle() returns it.
        self._string_handle = make_op("IteratorToStringHandle", [handle],
                                      name="IteratorToStringHandle").outputs[0]
        # As TensorFlow: every iterator's handle, for CheckpointInputPipelineHook.
        handle.graph.add_to_collection(GLOBAL_ITERATORS, handle)

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name: str | None = None,
                       output_classes=None) -> Iterator:
        """An uninitialized iterator for elements of the given structure.

        Use ``make_initializer(dataset)`` to get an op that starts it on `dataset`.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> it = tf.data.Iterator.from_structure(tf.int64, [])
        >>> init = it.make_initializer(tf.data.Dataset.range(3))
        >>> x = it.get_next()
        >>> with tf.Session() as sess:
        ...     sess.run(init)
        ...     print(sess.run(x))
        0
        """
        structure = as_spec_structure(output_types, output_shapes)
        handle = make_op("IteratorV2", [], {**_flat_attrs(structure),
                                            "shared_name": shared_name or ""},
                         name="Iterator").outputs[0]
        return Iterator(handle, None, structure)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None) -> Iterator:
        """An iterator reading whichever iterator `string_handle` (a fed string) names.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> h = tf.placeholder(tf.string, [])
        >>> it = tf.data.Iterator.from_string_handle(h, tf.int64, [])
        >>> train = tf.data.Dataset.range(3).make_one_shot_iterator()
        >>> x = it.get_next()
        >>> with tf.Session() as sess:
        ...     th = sess.run(train.string_handle())
        ...     print(sess.run(x, {h: th}))
        0
        """
        structure = as_spec_structure(output_types, output_shapes)
        string_handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        handle = make_op("IteratorFromStringHandleV2", [string_handle],
                         _flat_attrs(structure), name="IteratorFromStringHandle").outputs[0]
        return Iterator(handle, None, structure)

    # -- properties ------------------------------------------------------------------------
    @property
    def initializer(self) -> Operation:
        """The op (re)starting this iterator (initializable iterators only)."""
        if self._initializer is None:
            raise ValueError(
                "Iterator does not have an initializer: a one-shot iterator starts by "
                "itself, and an iterator from from_structure() is started by the op "
                "make_initializer(dataset) returns.")
        return self._initializer

    @property
    def output_types(self):
        return map_structure(lambda s: s.dtype, self._structure)

    @property
    def output_shapes(self):
        return map_structure(lambda s: s.shape, self._structure)

    @property
    def output_classes(self):
        return map_structure(component_class, self._structure)

    # -- ops ---------------------------------------------------------------------------------
    def get_next(self, name: str | None = None):
        """Tensors holding the next element; each `Session.run` of them advances.

        Raises `OutOfRangeError` ("End of sequence") in `Session.run` at the end.
        """
        self._get_next_calls += 1
        op = make_op("IteratorGetNext", [self._handle], _flat_attrs(self._structure),
                     name=name or "IteratorGetNext")
        return pack_graph(self._structure, op.outputs)

    def make_initializer(self, dataset, name: str | None = None) -> Operation:
        """An op that starts this iterator on `dataset` (same structure and dtypes)."""
        from .dataset import Dataset

        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer expects a tf.data.Dataset, got "
                            f"{type(dataset).__name__}")
        _check_compatible(self._structure, dataset._structure)
        return _make_iterator_op(self._handle, dataset, name or "make_initializer")

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string tensor naming this iterator, to feed to `from_string_handle`."""
        if name is None:
            return self._string_handle
        return make_op("IteratorToStringHandle", [self._handle], name=name).outputs[0]


def _check_compatible(expected, got) -> None:
    # TensorFlow's checks, in its order: nesting (ValueError), then classes, dtypes and
    # shapes (TypeError), each reported with both whole structures
    def legacy(structure):
        return (map_structure(component_class, structure),
                map_structure(lambda s: s.dtype, structure),
                map_structure(lambda s: s.shape, structure))

    (e_classes, e_types, e_shapes), (g_classes, g_types, g_shapes) = \
        legacy(expected), legacy(got)
    nest.assert_same_structure(e_types, g_types)
    pairs = list(zip(nest.flatten(expected), nest.flatten(got)))
    if any(e.sparse != g.sparse for e, g in pairs):
        raise TypeError(f"Expected output classes {e_classes!r} but got dataset with "
                        f"output classes {g_classes!r}.")
    if any(e.dtype != g.dtype for e, g in pairs):
        raise TypeError(f"Expected output types {e_types!r} but got dataset with output "
                        f"types {g_types!r}.")
    if any(not e.shape.is_compatible_with(g.shape) for e, g in pairs):
        raise TypeError(f"Expected output shapes compatible with {e_shapes!r} but got "
                        f"dataset with output shapes {g_shapes!r}.")


def _make_iterator_op(handle: Tensor, dataset, name: str) -> Operation:
    graph = handle.graph
    captured = _check_graph(dataset, graph, "make_initializer")
    key = register_dataset(graph, dataset)
    return make_op("MakeIterator", [handle, *captured], {"dataset_id": key}, name=name)


def make_one_shot_iterator(dataset, _draw_seed: bool = True) -> Iterator:
    """An iterator over `dataset` that needs no initialization (one pass).

    `dataset` may use constants but not placeholders (use
    `make_initializable_iterator` for those).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
    >>> it.output_types
    tf.int64
    """
    graph = get_default_graph()
    captured = _check_graph(dataset, graph, "make_one_shot_iterator")
    ph = _find_placeholder(captured)
    if ph is not None:
        raise ValueError(
            f"Cannot capture a placeholder (name:{ph.name}, type:{ph.type}) by value "
            "(make_one_shot_iterator: a one-shot iterator cannot capture it; use "
            "make_initializable_iterator() and feed the placeholder when running "
            "iterator.initializer).")
    # As TensorFlow: a one-shot iterator draws an op seed of the graph (for the seed of
    # the function that rebuilds its dataset), so seedless random ops made after it get
    # the next ones. (`_draw_seed=False`: an Estimator's input, where TensorFlow uses an
    # initializable iterator, which draws none.)
    if _draw_seed:
        get_seed(None)
    key = register_dataset(graph, dataset)
    handle = make_op("OneShotIterator", captured, {**_flat_attrs(dataset._structure),
                                                   "dataset_id": key},
                     name="OneShotIterator").outputs[0]
    return Iterator(handle, None, dataset._structure)


def make_initializable_iterator(dataset, shared_name: str | None = None) -> Iterator:
    """An iterator over `dataset` started (and restarted) by its ``initializer`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> x = tf.placeholder(tf.float32, [None])
    >>> it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(x))
    >>> nxt = it.get_next()
    >>> with tf.Session() as sess:
    ...     sess.run(it.initializer, {x: [3.0, 4.0]})
    ...     print(sess.run(nxt))
    3.0
    """
    graph = get_default_graph()
    _check_graph(dataset, graph, "make_initializable_iterator")
    handle = make_op("IteratorV2", [], {**_flat_attrs(dataset._structure),
                                        "shared_name": shared_name or ""},
                     name="Iterator").outputs[0]
    init = _make_iterator_op(handle, dataset, "MakeIterator")
    return Iterator(handle, init, dataset._structure)


def get_output_types(dataset_or_iterator):
    """The nested dtypes of a Dataset's or Iterator's elements."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    """The nested shapes of a Dataset's or Iterator's elements."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """The nested classes of a Dataset's or Iterator's elements."""
    return dataset_or_iterator.output_classes


def reduce_dataset(dataset, initial_state, reduce_func):
    """``Dataset.reduce``: `initial_state` folded over the elements with
    ``reduce_func(state, element)``; tensors of the final state (the initial state for an
    empty dataset). The whole dataset is read each time they are run.

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> total = tf.data.Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x)
    >>> tf.Session().run(total)
    10
    """
    from .dataset import Dataset
    from .dataset_ops_stateful import ScanDataset

    def step(state, element):
        new = reduce_func(state, element)
        return new, new

    states = ScanDataset(dataset, initial_state, step)
    chain = Dataset.from_tensors(initial_state).concatenate(states)
    graph = get_default_graph()
    captured = _check_graph(chain, graph, "Dataset.reduce")
    key = register_dataset(graph, chain)
    op = make_op("ReduceDataset", captured, {**_flat_attrs(chain._structure),
                                             "dataset_id": key}, name="ReduceDataset")
    return pack_graph(chain._structure, op.outputs)
