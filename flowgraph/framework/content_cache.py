"""Serialized bytes kept by the content they were made from.

An Estimator builds the same graph again on every `train` call and writes it twice per
call (the graph event and each checkpoint's ``.meta``); serializing it costs several
milliseconds, a digest of its graph def a fraction of that. `ContentCache` is the bounded
store both writers share the logic of, and `graph_def_digest` the digest.

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
