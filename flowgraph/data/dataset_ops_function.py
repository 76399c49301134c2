"""Running a dataset: the run context, the pipeline an iterator pulls from, and traced
functions (the graphs behind ``map``, ``filter``, ``interleave``).

State it keeps
--------------
A `Pipeline` is created each time an iterator is initialized. Its `RunContext` holds:

* ``values``: the NumPy values of the graph tensors the dataset captured (placeholders,
  constants), handed to the initializer's kernel as inputs, so feeding a placeholder
  while running ``iterator.initializer`` re-parameterizes the dataset;
* ``state``: per dataset node, what must survive across epochs of a `repeat` (the
  shuffle epoch counter, a `cache`'s recorded elements);
* the private `Session` of every traced function, background threads (prefetch) and
  thread pools (parallel map), all released by `Pipeline.close`.

A traced function is the user's Python function called once, at dataset construction,
on placeholders in a fresh `Graph` (so ``tf.cast``, ``tf.io.decode_csv`` and arithmetic
work on tensors as in TensorFlow); each element then runs that graph in a private
session::

    map_func(x) ──trace──> Graph{ args_0:Placeholder ─> Cast ─> Mul ─> out }
    element (np arrays) ──feed args_0──> Session.run(out) ──> mapped element

Invariants: a dataset node never keeps per-run state on itself (one `Dataset` may back
several iterators and sessions at once); everything a run creates is closed by the
pipeline that created it; background threads are daemons that also watch a stop event.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(3).map(lambda x: x * 2)
>>> p = ds._make_pipeline([])
>>> [int(e[0]) for e in p.elements()]
[0, 2, 4]
>>> p.close()
"""

from __future__ import annotations

import atexit
import inspect
import threading
import weakref

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.graph import Graph, get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.runtime.config import ConfigProto

from .dataset_ops_structure import (
    ComponentSpec,
    expand_sparse,
    flatten,
    known_dense_shape,
    map_structure,
    pack_as,
    sparse_spec_of,
    to_component,
)

_LIVE_CONTEXTS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """At interpreter exit, tell every background producer to stop."""
    for rc in list(_LIVE_CONTEXTS):
        rc.stop.set()


class RunContext:
    """What one run of a dataset needs: captured values, per-node state, resources."""

    def __init__(self, values: dict, parent: RunContext | None = None) -> None:
        self.values = values
        self.state: dict = {}
        # The tf.data.Options of the dataset the run is of (set by `Pipeline`).
        self.options = None if parent is None else parent.options
        if parent is None:
            self.stop = threading.Event()
            self.lock = threading.Lock()
            self.sessions: dict = {}
            self.closers: list = []
            _LIVE_CONTEXTS.add(self)
        else:
            self.stop = parent.stop
            self.lock = parent.lock
            self.sessions = parent.sessions
            self.closers = parent.closers

    def child(self, values: dict) -> RunContext:
        """A context for an inner dataset (interleave) sharing this run's resources."""
        return RunContext(values, self)

    def resolve(self, v):
        """The NumPy value of a captured Tensor (or `v` itself if it is not a Tensor)."""
        if isinstance(v, Tensor):
            try:
                return self.values[v]
            except KeyError:
                raise errors.InternalError(
                    None, None, f"tensor '{v.name}' used by a dataset was not captured") from None
        return v

    def node_state(self, node, factory):
        """Per-node state of this run, created by ``factory()`` on first use."""
        key = id(node)
        st = self.state.get(key)
        if st is None:
            st = self.state[key] = factory()
        return st

    def session(self, fn: TracedFunction):
        with self.lock:
            sess = self.sessions.get(fn)
            if sess is None:
                from flowgraph.runtime.session import Session

                sess = Session(graph=fn.graph,
                               config=ConfigProto(inter_op_parallelism_threads=1))
                self.sessions[fn] = sess
            return sess

    def add_closer(self, fn) -> None:
        with self.lock:
            self.closers.append(fn)

    def discard_closer(self, fn) -> None:
        with self.lock:
            if fn in self.closers:
                self.closers.remove(fn)

    def check_stopped(self) -> None:
        if self.stop.is_set():
            raise errors.CancelledError(None, None, "The iterator was closed or reset.")

    def close(self) -> None:
        self.stop.set()
        with self.lock:
            closers, self.closers[:] = list(self.closers), []
            sessions = list(self.sessions.values())
            self.sessions.clear()
        for fn in reversed(closers):
            try:
                fn()
            except Exception:  # closing must not raise
                pass
        for sess in sessions:
            sess.close()
        _LIVE_CONTEXTS.discard(self)


class Pipeline:
    """One run of a dataset: ``next()`` returns a flat tuple of arrays or raises
    `OutOfRangeError` ("End of sequence")."""

    def __init__(self, dataset, values: dict) -> None:
        self.dataset = dataset
        self.rc = RunContext(values)
        options = getattr(dataset, "options", None)  # installed by flowgraph.data
        self.rc.options = options() if options is not None else None
        self._it = None
        self._done = False
        specs = flatten(dataset._structure)
        self._sparse = specs if any(s.sparse for s in specs) else None

    def next(self) -> tuple:
        if self._done:
            raise errors.OutOfRangeError(None, None, "End of sequence")
        if self._it is None:
            self._it = iter(self.dataset._iter(self.rc))
        try:
            element = next(self._it)
        except StopIteration:
            self._done = True
            raise errors.OutOfRangeError(None, None, "End of sequence") from None
        # The iterator's ops carry a sparse component as three dense ones.
        return element if self._sparse is None else expand_sparse(self._sparse, element)

    def elements(self):
        """All remaining elements (for tests and docs)."""
        while True:
            try:
                yield self.next()
            except errors.OutOfRangeError:
                return

    def close(self) -> None:
        self.rc.close()
        it, self._it = self._it, None
        self._done = True
        close = getattr(it, "close", None)
        if close is not None:
            try:
                close()
            except (ValueError, RuntimeError):  # still running in another thread
                pass


# -- traced functions -------------------------------------------------------------------
def _call(func, args):
    """Call a dataset function the way TensorFlow does: a plain tuple is unpacked."""
    if type(args) is tuple:
        return func(*args)
    return func(args)


def _fn_name(func) -> str:
    name = getattr(func, "__name__", type(func).__name__)
    return "lambda" if name == "<lambda>" else name


class FunctionGraph(Graph):
    """The private graph of a traced function.

    A tensor of another graph that an op here reads (a constant, placeholder or variable
    of the graph the dataset is built in, or a tensor of an enclosing function) is
    *captured*: it becomes a placeholder of this graph, and `captures` maps the outer
    tensor to it. The dataset node lists the outer tensors among those its iterator's
    initializer reads, so each run feeds the value they had when the iterator was
    initialized, as TensorFlow's captured inputs do.
    """

    def __init__(self, outer: Graph) -> None:
        super().__init__()
        self.seed = outer.seed
        self._building_function = True
        self.captures: dict = {}

    def capture(self, tensor: Tensor) -> Tensor:
        """This graph's placeholder standing for the outer `tensor`."""
        inner = self.captures.get(tensor)
        if inner is None:
            from flowgraph.framework import dtypes
            from flowgraph.ops.array_ops import placeholder

            if tensor.dtype.base_dtype == dtypes.resource:
                raise ValueError(
                    f"A tf.data function reads the resource '{tensor.name}' of the outer "
                    "graph (a resource variable's handle); flowgraph captures values, not "
                    "handles. Use a reference variable (TF1's default), or read the "
                    "variable outside and pass the value through the dataset.")

            with self.as_default(), self.control_dependencies(None), self.name_scope(None):
                inner = placeholder(tensor.dtype, tensor.shape, name="captured")
            self.captures[tensor] = inner
        return inner

    def create_op(self, op_type, inputs=(), attrs=None, name=None, dtypes=None):
        inputs = [self.capture(t) if isinstance(t, Tensor) and t._op._graph is not self
                  else t for t in inputs]
        return super().create_op(op_type, inputs, attrs, name, dtypes)


class TracedFunction:
    """A Python function traced once into a private graph, run per element.

    `input_structure` is the nested `ComponentSpec` of the arguments. After tracing,
    either `output_structure` (nested specs) describes the returned tensors, or
    `dataset` is the `Dataset` the function returned (for `interleave`/`flat_map`).
    `captured` lists the outer tensors the function reads (see `FunctionGraph`).
    """

    def __init__(self, func, input_structure, what: str, expect_dataset: bool = False):
        if not callable(func):
            raise TypeError(f"{what} needs a callable, got {type(func).__name__}")
        self.func = func
        self.what = what
        self.input_structure = input_structure
        self.graph = FunctionGraph(get_default_graph())
        from flowgraph.ops.array_ops import placeholder, sparse_placeholder

        # As TensorFlow's function graphs: no enclosing name scope, arguments "args_<i>".
        with self.graph.as_default():
            specs = flatten(input_structure)
            self.placeholders = [self._argument(s, i, placeholder, sparse_placeholder)
                                 for i, s in enumerate(specs)]
            args = pack_as(input_structure, [_with_known_dense_shape(ph, spec) for ph, spec
                                             in zip(self.placeholders, specs)])
            result = _call(func, args)
            self.dataset = None
            if expect_dataset:
                if not hasattr(result, "_iter") or not hasattr(result, "_structure"):
                    raise TypeError(
                        f"{what}: the function {_describe_fn(func)} must return a "
                        f"tf.data.Dataset, but it returned {type(result).__name__}")
                self.dataset = result
                # what the returned dataset reads: tensors of this graph, or outer
                # tensors (captured here too, so that one run hands them all over)
                self.fetch_keys = result._captured()
                self.fetches = [t if t._op._graph is self.graph else self.graph.capture(t)
                                for t in self.fetch_keys]
                self.output_structure = result._structure
            else:
                self.output_structure, self.fetches = self._outputs(result)
        self.graph.finalize()
        self.captured = list(self.graph.captures)

    @staticmethod
    def _argument(spec, i: int, placeholder, sparse_placeholder):
        if getattr(spec, "window", False):
            # A window (`Dataset.window`, `group_by_window`): a dataset of its values.
            return spec.source()
        return (sparse_placeholder if spec.sparse else placeholder)(spec.dtype, spec.shape,
                                                                    name=f"args_{i}")

    def _outputs(self, result):
        from flowgraph.framework.constant_op import convert_to_tensor
        from flowgraph.framework.sparse_tensor import SparseTensor

        if hasattr(result, "_iter") and hasattr(result, "_structure"):
            raise TypeError(f"{self.what}: the function {_describe_fn(self.func)} returned a "
                            "Dataset; use flat_map or interleave for that")
        if isinstance(result, list):
            result = tuple(result)  # as TensorFlow: a returned list is a tuple

        def conv(v):
            if isinstance(v, list):
                v = tuple(v)
            if v is None:
                raise TypeError(f"{self.what}: the function {_describe_fn(self.func)} "
                                "returned None (did you forget a `return`?)")
            if isinstance(v, SparseTensor):
                return v
            v = convert_to_tensor(v)
            if isinstance(v, Tensor) and v.graph is not self.graph:
                v = self.graph.capture(v)  # as TF: an outer tensor returned as it is
            return v

        tensors = map_structure(conv, result)
        flat = flatten(tensors)
        for t in flat:
            if not isinstance(t, Tensor | SparseTensor) or t.graph is not self.graph:
                raise ValueError(f"{self.what}: the function {_describe_fn(self.func)} "
                                 "returned a tensor of another graph")
        spec = map_structure(
            lambda t: sparse_spec_of(t) if isinstance(t, SparseTensor)
            else ComponentSpec(t.dtype.base_dtype, t.shape), tensors)
        return spec, flat

    # -- running ------------------------------------------------------------------------
    def run(self, rc: RunContext, flat_values) -> list:
        """The flat outputs (NumPy arrays) of the function on one element."""
        if not self.fetches:
            return []
        sess = rc.session(self)
        feeds = {}
        for ph, v in zip(self.placeholders, flat_values):
            if getattr(ph, "window_source", False):
                continue  # a window's values reach its WindowSource by inner_context
            if hasattr(v, "dense_shape"):  # a SparseValue, fed as a SparseTensorValue
                from flowgraph.framework.sparse_tensor import SparseTensorValue

                v = SparseTensorValue(v.indices, v.values, v.dense_shape)
            feeds[ph] = v
        for outer, inner in self.graph.captures.items():
            feeds[inner] = rc.resolve(outer)
        out = sess.run(self.fetches, feeds)
        if self.dataset is not None:
            return out
        specs = flatten(self.output_structure)
        return [to_component(v, s) for v, s in zip(out, specs)]

    def inner_context(self, rc: RunContext, flat_values) -> RunContext:
        """For a function returning a dataset: the context to iterate it on one element."""
        values = self.run(rc, flat_values)
        inner = dict(zip(self.fetch_keys, [np.asarray(v) if not isinstance(v, np.ndarray)
                                           else v for v in values]))
        for ph, v in zip(self.placeholders, flat_values):
            if getattr(ph, "window_source", False):
                inner[ph] = v
        return rc.child(inner)


def _describe_fn(func) -> str:
    try:
        file = inspect.getsourcefile(func)
        line = inspect.getsourcelines(func)[1]
        return f"'{_fn_name(func)}' ({file}:{line})"
    except (TypeError, OSError):
        return f"'{_fn_name(func)}'"


def _with_known_dense_shape(arg, spec):
    """A sparse argument as the function sees it: as TensorFlow restores a sparse
    component, the known sizes of its spec are constants in its dense shape (so
    ``tf.sparse.to_dense`` of a ``(5,)`` component is ``(5,)``); the placeholders fed
    stay as they are."""
    from flowgraph.framework.sparse_tensor import SparseTensor

    if not isinstance(arg, SparseTensor):
        return arg
    dense_shape = known_dense_shape(arg.dense_shape, spec.shape)
    if dense_shape is arg.dense_shape:
        return arg
    return SparseTensor(arg.indices, arg.values, dense_shape)
