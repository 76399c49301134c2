"""A stage graph a task registered, and how a call runs it.

A `StageGraph` is one registered stage (`flowgraph.distributed.worker.TaskService`): its
`Graph`, imported from the graph def the master sent, with this process's tf.data
pipelines registered under the keys the graph def names (`share_dataset`); the local
sessions that run it, one per concurrent call, created with the threads its cost calls
for (chosen on the first call, `flowgraph.distributed.stage_cost`); each distinct call's
`Layout` (its feeds, fetches and store keys, resolved once); and the counters of
synchronous pushes it holds (`flowgraph.distributed.sync_inline.CounterLock`).

A call runs its stage with `run_stage`: it keeps a `FastRun` per fed-shape signature
(`FastRun.after_run`), also for a plan with shape variants (a batch of a size the graph
leaves unknown) and for a stage run with a deadline, which `Session` keeps none for; a
repeated call costs less than a repeated plain `Session.run`, and a call with new
shapes takes the general path.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, [None], name="x")
...     total = tf.reduce_sum(x, name="total")
>>> stage = StageGraph(g.as_graph_def(), "local://stage-graph-example")
>>> layout = stage.layout({"feeds": ["x"], "fetches": [["total:0", "t"]]})
>>> session = stage.acquire()
>>> values = run_stage(session, layout, {stage.feed("x"): np.ones(3, np.float32)}, None)
>>> float(values[0]), stage.threads
(3.0, 1)
>>> stage.close()
"""

from __future__ import annotations

import copy
import itertools
import threading
import uuid
import weakref

import numpy as np

from flowgraph.distributed.prefetch import read_only
from flowgraph.distributed.stage_cost import stage_flops, threads_for_stage
from flowgraph.distributed.sync_inline import CounterLock
from flowgraph.framework import errors
from flowgraph.framework.graph import Graph
from flowgraph.framework.importer import import_graph_def
from flowgraph.framework.registry import OpCost
from flowgraph.ops.iterator_ops import register_dataset
from flowgraph.runtime.config import ConfigProto
from flowgraph.runtime.session import Session
from flowgraph.runtime.step import FastRun

__all__ = ["Layout", "StageGraph", "run_stage", "share_dataset"]

# tf.data pipelines of this process by shared key, for stage graphs registered here.
# Keys are never reused (a registered graph keeps its key's pipeline alive).
_DATASETS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_DATASET_KEYS: dict = {}  # id(dataset) -> (weakref to it, key)
_DATASET_COUNTER = itertools.count()
_DATASET_LOCK = threading.RLock()  # reentrant: a weakref callback may run under it (gc)


def share_dataset(dataset) -> str:
    """The key under which stage graphs of this process find `dataset` (the same key
    for the same object, so the same stage graph keeps its handle).

    >>> share_dataset(ds := type("Dataset", (), {})()) == share_dataset(ds)
    True
    """
    with _DATASET_LOCK:
        known = _DATASET_KEYS.get(id(dataset))
        if known is not None and known[0]() is dataset:
            return known[1]
        key = f"shared_dataset_{next(_DATASET_COUNTER)}@{uuid.uuid4().hex[:8]}"
        ident = id(dataset)
        _DATASETS[key] = dataset
        _DATASET_KEYS[ident] = (weakref.ref(
            dataset, lambda _, i=ident, k=key: _forget_dataset(i, k)), key)
        return key


def _forget_dataset(ident: int, key: str) -> None:
    with _DATASET_LOCK:
        known = _DATASET_KEYS.get(ident)
        if known is not None and known[1] == key:
            del _DATASET_KEYS[ident]


def _with_local_datasets(graph: Graph, graph_def: dict) -> dict:
    """`graph_def` with each shared dataset key replaced by the key of the same pipeline
    registered with `graph` (`flowgraph.ops.iterator_ops.register_dataset`)."""
    nodes = [n for n in graph_def.get("node", []) if n.get("attr", {}).get("dataset_id")]
    if not nodes:
        return graph_def
    graph_def = copy.deepcopy(graph_def)
    local: dict = {}
    for node in graph_def["node"]:
        key = node.get("attr", {}).get("dataset_id")
        if not key:
            continue
        if key not in local:
            with _DATASET_LOCK:
                dataset = _DATASETS.get(key)
            if dataset is None:
                raise errors.FailedPreconditionError(
                    None, None,
                    f"Operation '{node['name']}' ({node['op']}) of a stage graph reads the "
                    f"tf.data pipeline '{key}', which does not exist in this task's process: "
                    "a graph def does not carry tf.data pipelines, so a task runs only the "
                    "pipelines of sessions in its own process. Build the input pipeline "
                    "under tf.device() of the worker that runs the session.")
            local[key] = register_dataset(graph, dataset)
        node["attr"]["dataset_id"] = local[key]
    return graph_def


class StageGraph:
    """A registered stage graph: its `Graph`, and local sessions that run it, one per
    concurrent call (a session runs one stage at a time, so cancelling a call means
    cancelling its session's live step).

    A stage that cannot block (no asynchronous kernel such as a queue's dequeue, no
    resource handle taken) runs without `RunOptions`, the local session's fast path for a
    repeated run; its deadline is then the task's alarm (`worker.TaskService`). A stage that
    may block runs with ``RunOptions(timeout_in_ms=...)``, so the blocked kernel ends at
    the deadline itself, naming its op."""

    def __init__(self, graph_def: dict, target: str, threads: int = 0,
                 pinned: bool = False) -> None:
        self.graph = Graph()
        graph_def = _with_local_datasets(self.graph, graph_def)
        with self.graph.as_default():
            import_graph_def(graph_def, name="")
        self.target = target
        self.share, self.pinned = threads, pinned  # the task's threads, the config's?
        self.threads: int | None = None  # this stage's, chosen on its first call
        self.config = None
        self.may_block = any(_may_block(op) for op in self.graph.get_operations())
        # counters of synchronous pushes whose stage runs here (sync_inline.py)
        self.locks = CounterLock.find(self.graph)
        self.read_only = read_only(self.graph.get_operations())
        self._lock = threading.Lock()
        self._sessions: list = []
        self._idle: list = []
        self._fetches: dict = {}  # (fetch names, target names) -> [Tensor or Operation]
        self._feeds: dict = {}  # placeholder name -> its Tensor
        self._layouts: dict = {}  # a call's lists (as tuples) -> its Layout
        self._last: Layout | None = None  # the layout of the last call

    def fetches(self, names: tuple, targets: tuple) -> list:
        """The graph elements of a call's fetches and targets (looked up once: a stage
        is called with the same lists on every step)."""
        found = self._fetches.get((names, targets))
        if found is None:
            graph = self.graph
            found = self._fetches[(names, targets)] = (
                [graph.get_tensor_by_name(t) for t in names]
                + [graph.get_operation_by_name(o) for o in targets])
        return found

    def layout(self, header: dict) -> Layout:
        """The `Layout` of a call's header (the last one again when the header's lists
        are the same objects: a header's fixed part is decoded once, `wire.Base`)."""
        layout = self._last
        feeds, fetches = header.get("feeds", ()), header.get("fetches", ())
        targets, returns = header.get("targets", ()), header.get("return", ())
        if (layout is not None and layout.source[0] is feeds and layout.source[1] is fetches
                and layout.source[2] is targets and layout.source[3] is returns):
            return layout
        key = (tuple(feeds), tuple(tuple(f) for f in fetches), tuple(targets),
               tuple(returns))
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= 64:  # (a client cannot grow it without bound)
                self._layouts.clear()
            layout = self._layouts[key] = Layout(self, *key)
        layout.source = (feeds, fetches, targets, returns)
        self._last = layout
        return layout

    def feed(self, placeholder: str):
        tensor = self._feeds.get(placeholder)
        if tensor is None:
            tensor = self._feeds[placeholder] = self.graph.get_tensor_by_name(
                f"{placeholder}:0")
        return tensor

    def acquire(self, feed_dict: dict | None = None) -> Session:
        """An idle local session (a new one when all are busy). The first call picks the
        stage's threads from its cost with these feeds (`choose_threads`)."""
        try:
            return self._idle.pop()  # (atomic, as release's append: no lock needed)
        except IndexError:
            pass
        if self.threads is None:
            self.choose_threads(feed_dict or {})
        session = Session(self.target, graph=self.graph, config=self.config)
        with self._lock:
            self._sessions.append(session)
        return session

    def choose_threads(self, feed_dict: dict) -> int:
        """The executor threads of this stage's sessions, from its matrix-product flops
        fed `feed_dict` (`flowgraph.distributed.stage_cost`); a stage that may block
        keeps the task's share."""
        if self.may_block:
            threads = self.share
        else:
            shapes = [np.shape(v) for v in feed_dict.values()]
            threads = threads_for_stage(stage_flops(self.graph.get_operations(), shapes),
                                        self.share, self.pinned)
        self.threads = threads
        self.config = ConfigProto(inter_op_parallelism_threads=threads) if threads else None
        return threads

    def release(self, session: Session) -> None:
        self._idle.append(session)

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions, self._idle = self._sessions, [], []
        for session in sessions:
            session.close()
        for lock in self.locks:
            lock.close()


class Layout:
    """What a stage call's lists resolve to, once per distinct lists: the placeholders
    it feeds, the graph elements it runs, the store keys of the fetched values and the
    keys it returns."""

    __slots__ = ("fast", "feeds", "fetches", "keys", "produced_returns", "returns",
                 "returns_produced", "source")

    def __init__(self, stage: StageGraph, feeds: tuple, fetches: tuple, targets: tuple,
                 returns: tuple) -> None:
        self.feeds = [(name, stage.feed(name)) for name in feeds]
        self.fetches = stage.fetches(tuple(t for t, _ in fetches), targets)
        self.keys = [key for _, key in fetches]
        self.returns = list(returns)
        self.returns_produced = set(returns) <= set(self.keys)
        # (key, index among the fetched values) of each returned key, when every one is
        at = {key: i for i, key in enumerate(self.keys)}
        self.produced_returns = [(key, at[key]) for key in returns] \
            if self.returns_produced else None
        self.source: tuple = ()  # the header's lists it was made from
        # (session, fed tensors, fed shapes) -> FastRun of the plan the session ran for
        # them, or None where none applies (`run_stage`)
        self.fast: dict = {}


def run_stage(session: Session, layout: Layout, feed_dict: dict, options) -> list:
    """``session.run(layout.fetches, feed_dict, options)``, through a `FastRun` of the
    plan the session ran for these feeds' shapes once it has one.

    Why: a stage fed a batch whose size the graph leaves unknown (``[None, 64]``) has a
    plan with shape variants (`flowgraph.runtime.specialize`), and a stage that may block
    runs with a deadline (`RunOptions`); `Session` keeps a `FastRun` for neither. Here the
    shapes are part of the cache key, so a call whose feeds have other shapes (a smaller
    last batch) takes `Session.run` and gets (or compiles) the variant for them, the next
    call with those shapes runs fast too; a deadline-only `RunOptions` becomes the
    `FastRun`'s own deadline. Options asking for more (tracing, partition graphs, a
    memory budget) always take `Session.run`.
    """
    timeout_ms = _deadline_only(options)
    if timeout_ms is not None:
        try:
            key = (session, tuple(feed_dict), tuple([v.shape for v in feed_dict.values()]))
        except AttributeError:  # a value that is not an array: the general path
            key = None
        if key is not None:
            fast = layout.fast.get(key, False)
            if fast and FastRun.may_run(session):
                return fast.run_limited(session, feed_dict, timeout_ms)
            values = session.run(layout.fetches, feed_dict=feed_dict, options=options)
            if fast is False:
                if len(layout.fast) >= 64:  # (distinct shapes: a client cannot grow it)
                    layout.fast.clear()
                layout.fast[key] = FastRun.after_run(session, layout.fetches, feed_dict)
            return values
    return session.run(layout.fetches, feed_dict=feed_dict, options=options)


def _deadline_only(options) -> int | None:
    """The deadline (ms, 0 for none) of `options` when that is all they ask for, else
    None (the run needs `Session.run`'s general path)."""
    if options is None:
        return 0
    if (options.trace_level or options.output_partition_graphs
            or options.memory_budget_bytes or options.debug_options is not None
            or options.inter_op_thread_pool or options.report_tensor_allocations_upon_oom):
        return None
    return max(int(options.timeout_in_ms or 0), 0)


def _may_block(op) -> bool:
    return op.op_def.cost is OpCost.ASYNC or any(
        t.dtype.name == "resource" for t in op._inputs)
