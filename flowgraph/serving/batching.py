"""Batching concurrent requests to one model into one ``Session.run``.

State. A `Batcher` keeps one queue of pending tasks per *batch key*: the signature
function plus each input's name, trailing shape and dtype (only such tasks can be
concatenated along the first axis). A request thread enqueues its task and waits on
the task's event; `num_batch_threads` scheduler threads each take the key whose oldest
task is oldest and wait until its queue holds `max_batch_size` rows or that task has
waited `batch_timeout_micros`, then take up to `max_batch_size` rows of tasks, run
them as one call and hand each task its rows of every output.

Invariants. A task is in exactly one queue until a scheduler takes it, and is then
finished (result or error set, event set) exactly once. A batch whose outputs do not
have one row per input row, or whose call fails, is rerun task by task, so each
request gets the answer (or error) it would get alone. More queued rows than
``max_enqueued_batches * max_batch_size`` make `run` raise `QueueFullError` (HTTP 503).

Example
-------
>>> params = BatchingParameters.from_text("max_batch_size { value: 8 }")
>>> params.max_batch_size, params.batch_timeout_micros
(8, 1000)
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

__all__ = ["Batcher", "BatchingParameters", "QueueFullError"]


class QueueFullError(Exception):
    """The batching queue is full; the request should be retried later."""


@dataclasses.dataclass
class BatchingParameters:
    """TensorFlow Serving's batching parameters (the supported subset).

    `max_batch_size` rows at most per run; a batch is run when full or when its oldest
    request has waited `batch_timeout_micros`; `num_batch_threads` runs at once;
    `max_enqueued_batches` batches' worth of rows may wait.
    """

    max_batch_size: int = 32
    batch_timeout_micros: int = 1000
    num_batch_threads: int = 4
    max_enqueued_batches: int = 100

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            least = 0 if f.name == "batch_timeout_micros" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"Batching parameter {f.name} must be an integer >= "
                                 f"{least}; got {value!r}")

    @classmethod
    def from_text(cls, text: str, path: str = "<text>") -> BatchingParameters:
        """Parse TensorFlow Serving's batching parameters file (protobuf text, e.g.
        ``max_batch_size { value: 32 }``, one field per block)."""
        text = re.sub(r"#[^\n]*", "", text)
        names = {f.name for f in dataclasses.fields(cls)}
        values, pos = {}, 0
        for m in re.finditer(r"\s*(\w+)\s*:?\s*\{\s*value\s*:\s*(-?\d+)\s*\}\s*", text):
            if m.start() != pos:
                break
            if m.group(1) not in names:
                raise ValueError(f"Batching parameters {path}: unsupported field "
                                 f"{m.group(1)!r}; supported: {sorted(names)}")
            values[m.group(1)] = int(m.group(2))
            pos = m.end()
        if text[pos:].strip():
            raise ValueError(f"Batching parameters {path}: cannot parse "
                             f"{text[pos:].strip()[:40]!r}; expected lines such as "
                             "'max_batch_size { value: 32 }'")
        return cls(**values)


class _Task:
    __slots__ = ("columns", "enqueued", "error", "event", "result", "rows")

    def __init__(self, columns: dict, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.enqueued = time.monotonic()
        self.event = threading.Event()
        self.result = self.error = None

    def finish(self, result=None, error=None) -> None:
        self.result, self.error = result, error
        self.event.set()


class Batcher:
    """Runs signature calls from many threads in batches (see the module essay).

    `on_batch(rows)` is called after each batched run (e.g. to record metrics).
    """

    def __init__(self, params: BatchingParameters,
                 on_batch: Callable[[int], None] | None = None) -> None:
        self.params = params
        self.on_batch = on_batch
        self._cond = threading.Condition()
        self._queues: dict[tuple, deque[_Task]] = {}
        self._queued_rows = 0
        self._closed = False
        self._threads = [threading.Thread(target=self._loop, daemon=True,
                                          name=f"flowgraph-batch-{i}")
                         for i in range(params.num_batch_threads)]
        for t in self._threads:
            t.start()

    def run(self, fn, columns: dict[str, np.ndarray]) -> dict:
        """``fn(**columns)``, possibly batched with other threads' calls. Columns whose
        first dimensions differ, or larger than `max_batch_size`, run alone."""
        arrays = {k: fn_input(fn, k, v) for k, v in columns.items()}
        rows = {a.shape[0] if a.ndim else -1 for a in arrays.values()}
        if len(rows) != 1 or not 0 < next(iter(rows)) <= self.params.max_batch_size:
            return fn(**arrays)
        key = (fn, tuple(sorted((k, a.shape[1:], a.dtype.str) for k, a in arrays.items())))
        task = _Task(arrays, next(iter(rows)))
        with self._cond:
            if self._closed:
                raise QueueFullError("The batching queue is closed")
            limit = self.params.max_enqueued_batches * self.params.max_batch_size
            if self._queued_rows + task.rows > limit:
                raise QueueFullError(f"The batching queue is full ({self._queued_rows} rows "
                                     f"waiting; max_enqueued_batches="
                                     f"{self.params.max_enqueued_batches}); retry later")
            self._queues.setdefault(key, deque()).append(task)
            self._queued_rows += task.rows
            self._cond.notify()
        task.event.wait()
        if task.error is not None:
            raise task.error
        return task.result

    def _take(self) -> tuple[Callable, list[_Task]] | None:
        """Under the lock: wait for a batch that is full or due; None once closed."""
        timeout = self.params.batch_timeout_micros / 1e6
        while not self._closed:
            if not self._queues:
                self._cond.wait()
                continue
            key = min(self._queues, key=lambda k: self._queues[k][0].enqueued)
            queue = self._queues[key]
            due = queue[0].enqueued + timeout - time.monotonic()
            if sum(t.rows for t in queue) < self.params.max_batch_size and due > 0:
                self._cond.wait(due)
                continue
            batch, rows = [], 0
            while queue and rows + queue[0].rows <= self.params.max_batch_size:
                rows += queue[0].rows
                batch.append(queue.popleft())
            if not queue:
                del self._queues[key]
            self._queued_rows -= rows
            return key[0], batch
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                taken = self._take()
            if taken is None:
                return
            self._run_batch(*taken)

    def _run_batch(self, fn, batch: list[_Task]) -> None:
        if len(batch) > 1:
            columns = {k: np.concatenate([t.columns[k] for t in batch])
                       for k in batch[0].columns}
            total = sum(t.rows for t in batch)
            try:
                out = fn(**columns)
            except Exception:
                out = None  # rerun alone below, so each request gets its own error
            if out is not None and all(np.ndim(v) and np.shape(v)[0] == total
                                       for v in out.values()):
                if self.on_batch is not None:
                    self.on_batch(total)
                start = 0
                for t in batch:
                    t.finish({k: v[start:start + t.rows] for k, v in out.items()})
                    start += t.rows
                return
        for t in batch:
            try:
                result = fn(**t.columns)
            except Exception as e:
                t.finish(error=e)
            else:
                if self.on_batch is not None:
                    self.on_batch(t.rows)
                t.finish(result)

    def close(self) -> None:
        """Stop the scheduler threads; queued tasks fail with `QueueFullError`."""
        with self._cond:
            self._closed = True
            pending = [t for q in self._queues.values() for t in q]
            self._queues.clear()
            self._cond.notify_all()
        for t in pending:
            t.finish(error=QueueFullError("The server is shutting down"))
        for t in self._threads:
            t.join(timeout=5)


def fn_input(fn, key: str, value) -> np.ndarray:
    """`value` converted for input `key` of signature `fn` (raises ValueError naming
    the input when it does not fit)."""
    from flowgraph.saved_model.predictor import convert_input

    if key not in fn.inputs:
        return np.asarray(value)
    return convert_input(value, fn.inputs[key], f"Input '{key}' of signature '{fn.name}'")
