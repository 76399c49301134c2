"""Partial runs: one logical step whose feeds and fetches arrive over several calls.

``h = sess.partial_run_setup(fetches, feeds)`` declares everything the step will fetch
and feed. Each ``sess.partial_run(h, some_fetches, some_feeds)`` then runs only the part
of the graph that the requested fetches still need, with TensorFlow's rules: every feed
is fed at most once, every fetch is fetched at most once, and both must have been
declared in the setup.

State it keeps
--------------
``values``: tensor -> value for everything fed so far and every computed tensor that a
later call may still need; later calls feed these back, so their producers never run
again. ``done``: the ops already run; later plans treat them as finished (this also
covers ops reached only through control edges, which feeding cannot cut). Together
they give the invariant: *no op runs twice in one partial run*::

    a = placeholder ─> b = a * 2 ─> c = b + d <─ d = placeholder
    call 1: feed a, fetch b        runs b; keeps b (c needs it later)
    call 2: feed d, fetch c        feeds b back; runs only c

Ref tensors (variables) are not kept: the variable op re-emits the same storage and
is never marked done.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     a = tf.placeholder(tf.float32, [])
...     d = tf.placeholder(tf.float32, [])
...     b = a * 2.0
...     c = b + d
>>> with tf.Session(graph=g) as sess:
...     h = sess.partial_run_setup([b, c], [a, d])
...     print(sess.partial_run(h, b, {a: 1.0}), sess.partial_run(h, c, {d: 3.0}))
2.0 5.0
"""

from __future__ import annotations

import itertools
import threading

from flowgraph.framework import errors
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime.fetch import FetchMapper
from flowgraph.runtime.plan import compile_plan
from flowgraph.runtime.prune import needed_ops

_handles = itertools.count(1)


class PartialRun:
    """The state of one partial run (see the module docstring)."""

    def __init__(self, session, fetch_tensors, fetch_ops, feeds) -> None:
        self.session = session
        self.handle = f"partial_run:{next(_handles)}"
        self.fetch_tensors: set[Tensor] = set(fetch_tensors)
        self.fetch_ops: set[Operation] = set(fetch_ops)
        self.feeds: set[Tensor] = set(feeds)
        self.fetched: set = set()
        self.values: dict[Tensor, object] = {}
        self.fed: set[Tensor] = set()
        self.done: set[Operation] = set()
        self.lock = threading.Lock()

    @classmethod
    def setup(cls, session, fetches, feeds) -> PartialRun:
        graph = session.graph
        mapper = FetchMapper.build(graph, fetches)
        feed_tensors = []
        for f in feeds:
            try:
                t = graph.as_graph_element(f, allow_operation=False)
            except (TypeError, ValueError, KeyError) as e:
                raise TypeError(f"Cannot interpret partial_run_setup feed {f!r} as a Tensor: "
                                f"{e.args[0] if e.args else e}") from None
            if not graph.is_feedable(t):
                raise ValueError(f"Tensor {t.name} may not be fed.")
            feed_tensors.append(t)
        pr = cls(session, mapper.unique_tensors, mapper.unique_ops, feed_tensors)
        registry = session.__dict__.setdefault("_partial_runs", {})
        registry[pr.handle] = pr
        return pr

    # -- one call ----------------------------------------------------------------------
    def run(self, fetches, feed_dict: dict):
        with self.lock:
            return self._run(fetches, feed_dict)

    def _run(self, fetches, feed_dict: dict):
        session = self.session
        mapper = FetchMapper.build(session.graph, fetches)
        new_feeds: dict[Tensor, object] = {}
        if feed_dict:
            tensors, values = session._process_feeds(feed_dict)
            for t, v in zip(tensors, values):
                if t not in self.feeds:
                    raise errors.InvalidArgumentError(
                        None, None, f"The feed {t.name} was not specified in "
                        "partial_run_setup; declare it in the feeds of partial_run_setup.")
                if t in self.fed or t in new_feeds:
                    raise errors.InvalidArgumentError(
                        None, None, f"The feed {t.name} has already been fed in this "
                        "partial run; each feed may be given once.")
                new_feeds[t] = v
        wanted = list(mapper.unique_tensors) + list(mapper.unique_ops)
        for el in wanted:
            declared = self.fetch_tensors if isinstance(el, Tensor) else self.fetch_ops
            if el not in declared:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {el.name} was not specified in "
                    "partial_run_setup; declare it in the fetches of partial_run_setup.")
            if el in self.fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {el.name} has already been fetched in this "
                    "partial run; each fetch may be requested once.")
        self.fed.update(new_feeds)
        self.values.update(new_feeds)
        fetch_tensors = [t for t in mapper.unique_tensors if t not in self.values]
        targets = [op for op in mapper.unique_ops if op not in self.done]
        available = set(self.values)
        ops_now = needed_ops(fetch_tensors, targets, available, done=self.done)
        self._check_computable(ops_now, wanted)
        # Tensors computed now that the rest of the partial run will still need.
        remaining_t = [t for t in self.fetch_tensors
                       if t not in self.fetched and t not in mapper.unique_tensors
                       and t not in self.values]
        remaining_o = [op for op in self.fetch_ops
                       if op not in self.fetched and op not in mapper.unique_ops]
        now = set(ops_now)
        later = needed_ops(remaining_t, remaining_o, available | self.feeds,
                           done=self.done | now)
        keep: list[Tensor] = []
        seen = set(fetch_tensors)
        for op in later:
            for t in op._inputs:
                if t._op in now and t not in seen and not t.dtype.is_ref_dtype:
                    seen.add(t)
                    keep.append(t)
        for t in remaining_t:
            if t._op in now and t not in seen and not t.dtype.is_ref_dtype:
                seen.add(t)
                keep.append(t)
        feed_tensors = [t for t in self.values if _consumed_by(t, now) or t in fetch_tensors]
        out = fetch_tensors + keep
        if ops_now or out:
            with session._lock:
                cp = compile_plan(session._compile_env, out, targets, feed_tensors, self.done)
            computed = session._execute(cp, feed_tensors, [self.values[t] for t in feed_tensors],
                                        None, None)
            for t, v in zip(out, computed):
                self.values[t] = v
        for op in ops_now:
            if not any(t.dtype.is_ref_dtype for t in op._outputs) or op.op_def.ref_inputs:
                self.done.add(op)
        self.fetched.update(wanted)
        result = mapper.rebuild([self.values[t] for t in mapper.unique_tensors])
        for t in mapper.unique_tensors:
            if t not in self.feeds and not _needed_later(t, later):
                self.values.pop(t, None)
        if self.fetched >= (self.fetch_tensors | self.fetch_ops):
            session.__dict__.get("_partial_runs", {}).pop(self.handle, None)
        return result

    def _check_computable(self, ops_now, wanted) -> None:
        for op in ops_now:
            for t in op._outputs:
                if t in self.feeds and t not in self.values:
                    names = ", ".join(el.name for el in wanted)
                    raise errors.InvalidArgumentError(
                        None, op, f"Fetch {names} can't be computed from the feeds that have "
                        f"been fed so far: it needs {t.name}, which is declared as a feed "
                        "but has not been fed yet.")


def _consumed_by(t: Tensor, ops: set[Operation]) -> bool:
    return any(c in ops for c in t._consumers)


def _needed_later(t: Tensor, later: list[Operation]) -> bool:
    return any(c in later for c in t._consumers)


def lookup(session, handle) -> PartialRun:
    """The partial run of `session` named by `handle`."""
    if isinstance(handle, PartialRun):
        handle = handle.handle
    pr = session.__dict__.get("_partial_runs", {}).get(handle)
    if pr is None:
        raise errors.InvalidArgumentError(
            None, None, f"Partial run handle {handle!r} is unknown to this session: it was "
            "not created by this session's partial_run_setup, or all of its fetches have "
            "already been fetched.")
    return pr
