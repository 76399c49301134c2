"""Buffered transformations: ``shuffle`` (a random buffer) and ``prefetch`` (a buffer
filled by a background thread).

Prefetch state and invariants
-----------------------------
A `_Producer` owns one daemon thread that pulls elements from the input and puts them
into a bounded queue; the consumer (the ``IteratorGetNext`` kernel) takes them out::

    producer thread:  input._iter ──> e3 e4 ──> queue[e1 e2] ──> get_next (session thread)

* The thread only blocks in bounded waits and checks two stop flags between them: its
  own (set when the consuming generator ends or is garbage-collected) and the run's
  (set when the iterator is re-initialized, its session closes, or Python exits), so
  it never outlives its pipeline and never hangs interpreter exit.
* An exception in the input is queued like an element and re-raised by the consumer, in
  order, after the elements produced before it.
* The thread closes the input generators it started (files, inner threads) itself.

Shuffle follows TensorFlow's algorithm and random stream (`ShuffleDataset._words`): fill
a ring buffer of `buffer_size` elements, then repeatedly hand out one chosen by the next
32-bit word of the pass's Philox stream and refill from the input.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> p = tf.data.Dataset.range(5).prefetch(2)._make_pipeline([])
>>> [int(e[0]) for e in p.elements()]
[0, 1, 2, 3, 4]
>>> p.close()
"""

from __future__ import annotations

import queue
import secrets
import threading

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.graph import get_default_graph, get_seed
from flowgraph.framework.operation import Tensor
from flowgraph.framework.philox import WordStream

from .dataset import AUTOTUNE
from .dataset_ops_structure import scalar_param, static_int
from .dataset_ops_transform import _Unary

_AUTOTUNE_BUFFER = 8
_MAXINT32 = 2**31 - 1
_POLL_S = 0.05


class ShuffleDataset(_Unary):
    """``dataset.shuffle(buffer_size, seed, reshuffle_each_iteration)``."""

    def __init__(self, input_dataset, buffer_size, seed=None,
                 reshuffle_each_iteration=None) -> None:
        super().__init__(input_dataset, "shuffle")
        self._buffer = scalar_param(buffer_size, _dtypes.int64, "buffer_size")
        self._seed_tensor = None
        if isinstance(seed, Tensor):
            value = static_int(seed)
            if value is None:  # a fed seed: folded at run time (`_run_seeds`)
                self._seed_tensor = scalar_param(seed, _dtypes.int64, "seed")
                graph_seed = get_default_graph().seed
                self._seeds = (87654321 if graph_seed is None
                               else int(graph_seed) % _MAXINT32, None)
            seed = value
        if self._seed_tensor is None:
            seed1, seed2 = get_seed(seed)
            self._seeds = (None if seed1 is None and seed2 is None
                           else (int(seed1), int(seed2)))
        self._reshuffle = True if reshuffle_each_iteration is None else bool(
            reshuffle_each_iteration)

    def _tensors(self):
        return [t for t in (self._buffer, self._seed_tensor) if isinstance(t, Tensor)]

    def _run_seeds(self, rc):
        """The op seeds of this run: a fed seed is folded as TensorFlow folds a Python
        one (modulo 2**31 - 1, and (0, 0) made (0, 2**31 - 1))."""
        if self._seed_tensor is None:
            return self._seeds
        seed1, seed2 = self._seeds[0], int(rc.resolve(self._seed_tensor)) % _MAXINT32
        return (seed1, _MAXINT32) if (seed1, seed2) == (0, 0) else (seed1, seed2)

    def _words(self, rc) -> WordStream:
        """The next stream of this run (TF's seed generators): with
        `reshuffle_each_iteration`, each pass over the input (a `repeat` epoch) draws
        its two seeds from a stream of the dataset's seeds; without, every pass uses the
        dataset's seeds. A new iterator (initialization) starts over, as in TF; no seeds
        at all (no graph seed, no op seed) means fresh random ones per run."""
        seeds = self._run_seeds(rc)
        state = rc.node_state(self, lambda: {
            "seeds": seeds if seeds is not None and seeds != (0, 0)
            else (secrets.randbits(63), secrets.randbits(63)), "generator": None})
        seed, seed2 = state["seeds"]
        if not self._reshuffle:
            return WordStream(seed, seed2)
        if state["generator"] is None:
            state["generator"] = WordStream(seed, seed2)
        generator = state["generator"]
        return WordStream(generator.next(), generator.next())

    def _iter(self, rc):
        n = int(rc.resolve(self._buffer))
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"shuffle: buffer_size must be greater than zero, got {n}.")
        words = self._words(rc)
        it = iter(self._input._iter(rc))
        # TF's ring buffer: slots [start, end) modulo n hold the elements not yet handed
        # out; the one handed out is swapped with the slot at `start` before it advances.
        # Slots fill in order 0, 1, ... before any wraps, so the list grows as elements
        # arrive (`list_files` asks for a buffer of 2**31 - 1).
        ring: list = []
        start = end = 0
        exhausted = False
        while True:
            while not exhausted and end - start < n:
                e = next(it, None)
                if e is None:
                    exhausted = True
                else:
                    slot = end % n
                    if slot == len(ring):
                        ring.append(e)
                    else:
                        ring[slot] = e
                    end += 1
            if end == start:
                return
            index = (start + words.next() % (end - start)) % n
            out = ring[index]
            ring[index] = ring[start % n]
            ring[start % n] = None
            start += 1
            yield out


class _Error:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


_END = object()


class _Producer:
    """A daemon thread filling a bounded queue from `source` (see the module essay)."""

    def __init__(self, source, rc, size: int) -> None:
        self.rc = rc
        self.queue: queue.Queue = queue.Queue(maxsize=size)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(source,), daemon=True,
                                       name="flowgraph-prefetch")
        rc.add_closer(self.stop)
        self.thread.start()

    def _halted(self) -> bool:
        return self.stopped.is_set() or self.rc.stop.is_set()

    def _put(self, item) -> bool:
        while not self._halted():
            try:
                self.queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, source) -> None:
        it = None
        try:
            it = iter(source._iter(self.rc))
            for e in it:
                if not self._put(e):
                    return
            self._put(_END)
        except BaseException as exc:  # handed to the consumer
            self._put(_Error(exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    pass

    def get(self):
        while True:
            try:
                item = self.queue.get(timeout=_POLL_S)
            except queue.Empty:
                if self._halted():
                    raise errors.CancelledError(
                        None, None, "The iterator was closed or reset.") from None
                continue
            if isinstance(item, _Error):
                raise item.exc
            return item

    def stop(self) -> None:
        self.stopped.set()
        self.rc.discard_closer(self.stop)
        if self.thread is not threading.current_thread():
            self.thread.join(timeout=2.0)


class PrefetchDataset(_Unary):
    """``dataset.prefetch(buffer_size)``: a background producer `buffer_size` ahead."""

    def __init__(self, input_dataset, buffer_size) -> None:
        super().__init__(input_dataset, "prefetch")
        self._buffer = scalar_param(buffer_size, _dtypes.int64, "buffer_size")

    def _tensors(self):
        return [self._buffer] if isinstance(self._buffer, Tensor) else []

    def _iter(self, rc):
        n = int(rc.resolve(self._buffer))
        if n == AUTOTUNE:
            n = _AUTOTUNE_BUFFER
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"prefetch: buffer_size must be >= 0 or AUTOTUNE, got {n}")
        if n == 0:
            yield from self._input._iter(rc)
            return
        producer = _Producer(self._input, rc, n)
        try:
            while True:
                item = producer.get()
                if item is _END:
                    return
                yield item
        finally:
            producer.stop()
