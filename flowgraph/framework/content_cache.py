"""Serialized bytes kept by the content they were made from.

An Estimator builds the same graph again on every `train` call and writes it several
times per call (the graph event, ``graph.pbtxt`` and each checkpoint's ``.meta``);
serializing it costs several milliseconds, a digest of its graph def a fraction of that.
`ContentCache` is the bounded store the writers share the logic of, `graph_def_digest`
the digest, and `graph_def_snapshot` a finalized graph's def and digest, made once while
the graph cannot have changed.

Example
-------
>>> cache = ContentCache(max_entries=2, max_bytes=1 << 20)
>>> cache.get(b"k") is None
True
>>> cache.put(b"k", b"serialized")
>>> cache.get(b"k"), cache.stats()
(b'serialized', {'hits': 1, 'misses': 1, 'entries': 1})
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict


def graph_def_digest(graph_def: dict) -> hashlib.blake2b:
    """A running digest of a graph def dict (`Graph.as_graph_def()`), to be extended with
    whatever else the serialized form depends on.

    A graph def is JSON-compatible data (`flowgraph.framework.serialization`): its JSON
    text, in the dict's own order, is the canonical byte form hashed here.

    >>> import flowgraph as tf
    >>> def build():
    ...     with tf.Graph().as_default() as g:
    ...         tf.constant(1.0, name="c")
    ...     return g.as_graph_def()
    >>> graph_def_digest(build()).digest() == graph_def_digest(build()).digest()
    True
    """
    text = json.dumps(graph_def, separators=(",", ":"), check_circular=False)
    return hashlib.blake2b(text.encode(), digest_size=20)


def graph_def_snapshot(graph, add_shapes: bool = False) -> tuple[dict, bytes]:
    """``(graph.as_graph_def(add_shapes=add_shapes), its digest)``, for readers that do
    not modify the dict.

    A finalized graph keeps the pair and gives it again while nothing it was made from
    can have changed: no op or control edge added (the graph's version), and every op's
    device and output shapes the very objects they were (`Tensor.set_shape` and
    `_set_device` replace them). A graph still being built is exported on each call.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     c = tf.constant(1.0, name="c")
    >>> g.finalize()
    >>> first = graph_def_snapshot(g)
    >>> graph_def_snapshot(g) is first
    True
    >>> c.set_shape([])  # the same shape: nothing changes
    >>> graph_def_snapshot(g) is first
    True
    """
    if not graph.finalized:
        graph_def = graph.as_graph_def(add_shapes=add_shapes)
        return graph_def, graph_def_digest(graph_def).digest()
    kept = graph.__dict__.get("_graph_def_snapshots", {}).get(add_shapes)
    if kept is not None:
        version, states, pair = kept
        if version == graph._version and all(
                op._device is device and all(t._shape is s for t, s in zip(op._outputs, shapes))
                for op, device, shapes in states):
            return pair
    graph_def = graph.as_graph_def(add_shapes=add_shapes)
    pair = (graph_def, graph_def_digest(graph_def).digest())
    states = [(op, op._device, tuple(t._shape for t in op._outputs))
              for op in graph.get_operations()]
    graph.__dict__.setdefault("_graph_def_snapshots", {})[add_shapes] = (
        graph._version, states, pair)
    return pair


class ContentCache:
    """A thread-safe LRU of serialized bytes by key, bounded in entries and in bytes (an
    item over a quarter of the byte bound is not kept)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = 0

    def get(self, key: bytes) -> bytes | None:
        """The bytes kept under `key`, or None (counted as a miss)."""
        with self._lock:
            data = self._items.get(key)
            if data is None:
                self._misses += 1
                return None
            self._items.move_to_end(key)
            self._hits += 1
            return data

    def put(self, key: bytes, data: bytes) -> None:
        """Keep `data` under `key`, dropping the least recently used beyond the bounds."""
        if len(data) > self.max_bytes // 4:
            return
        with self._lock:
            self._items[key] = data
            while (len(self._items) > self.max_entries
                   or sum(len(v) for v in self._items.values()) > self.max_bytes):
                self._items.popitem(last=False)

    def stats(self) -> dict:
        """Hits, misses and entries so far."""
        with self._lock:
            return {"hits": self._hits, "misses": self._misses, "entries": len(self._items)}
