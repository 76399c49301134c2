"""CPU kernels for the summary-writer resource ops (`flowgraph/ops/summary_writer_ops.py`).

State it keeps
--------------
A `SummaryFileWriter` lives in the session's resource container under the
``SummaryWriter`` op's ``shared_name``. ``CreateSummaryFileWriter`` opens its event
file (``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``, first record the
``brain.Event:2`` version event); each ``Write*Summary`` appends one framed `Event`
with the step and the wall time to an in-memory buffer, written to the file when
``max_queue`` events are waiting, when ``flush_millis`` have passed since the last
write, on ``FlushSummaryWriter``/``CloseSummaryWriter``, when the session holding it
goes away, and at interpreter exit.

Invariants
----------
* Events reach the file in the order the write kernels ran (one lock per writer).
* A writer that was never created (its ``CreateSummaryFileWriter`` not run) fails a
  write with FailedPreconditionError naming the writer; creating it again is a no-op.
"""

from __future__ import annotations

import atexit
import itertools
import os
import socket
import threading
import time
import weakref

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_summary import (
    histogram_summary,
    image_summary,
    tensor_summary,
)
from flowgraph.backends.cpu.kernels_summary_audio import audio_summary
from flowgraph.framework import errors
from flowgraph.framework import event_format as ef

_counter = itertools.count()
_live: weakref.WeakSet = weakref.WeakSet()


def _text(x) -> str:
    x = np.asarray(x).item() if isinstance(x, np.ndarray) else x
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


class SummaryFileWriter:
    """An event file and its pending events."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.path: str | None = None
        self._pending: list[bytes] = []
        self._max_queue = 10
        self._flush_secs = 120.0
        self._last_write = time.monotonic()
        _live.add(self)

    def create(self, logdir: str, max_queue: int, flush_millis: int, suffix: str) -> None:
        with self.lock:
            if self.path is not None:
                return
            try:
                os.makedirs(logdir, exist_ok=True)
            except OSError as e:
                raise errors.NotFoundError(
                    None, None, f"CreateSummaryFileWriter '{self.name}': cannot create log "
                    f"directory {logdir!r} ({e.strerror or e}); pass a writable logdir") from e
            base = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                    f"{os.getpid()}.{next(_counter)}")
            self.path = os.path.join(logdir, base + suffix)
            self._max_queue = max(int(max_queue), 0)
            self._flush_secs = max(int(flush_millis), 0) / 1000.0
            with open(self.path, "wb"):
                pass
            self._pending.append(ef.Event(wall_time=time.time(), file_version="brain.Event:2")
                                 .SerializeToString())
            self._write_locked()

    def add(self, event: ef.Event, step) -> None:
        event.wall_time = time.time()
        event.step = int(step)
        self.add_bytes(event.SerializeToString())

    def add_bytes(self, data: bytes) -> None:
        with self.lock:
            if self.path is None:
                raise errors.FailedPreconditionError(
                    None, None, f"Summary writer '{self.name}' is not initialized: run "
                    "tf.contrib.summary.summary_writer_initializer_op() (or "
                    "tf.contrib.summary.initialize) before writing summaries")
            self._pending.append(data)
            if (len(self._pending) > self._max_queue
                    or time.monotonic() - self._last_write >= self._flush_secs):
                self._write_locked()

    def _write_locked(self) -> None:
        if self._pending and self.path is not None:
            with open(self.path, "ab") as f:
                for data in self._pending:
                    f.write(ef.frame_record(data))
            self._pending = []
        self._last_write = time.monotonic()

    def flush(self) -> None:
        with self.lock:
            self._write_locked()

    def close(self) -> None:
        with self.lock:
            self._write_locked()
            self.path = None

    def __del__(self) -> None:  # the session's resources went away: write what is left
        try:
            self._write_locked()
        except Exception:  # nothing to report to at interpreter teardown
            pass


@atexit.register
def _flush_all() -> None:
    for w in list(_live):
        try:
            w.flush()
        except OSError:
            pass


@cpu_kernel("SummaryWriter")
class SummaryWriterOp:
    def __init__(self, ctx, *, shared_name="", container="") -> None:
        self.resources = ctx.resources
        self.container = container or ""
        self.name = shared_name or ctx.op.name

    def __call__(self):
        writer = self.resources.lookup_or_create(self.container, self.name, SummaryFileWriter)
        if not isinstance(writer, SummaryFileWriter):
            raise errors.InvalidArgumentError(
                None, None, f"Resource '{self.name}' exists and is a {type(writer).__name__}, "
                "not a summary writer; use another name")
        return writer


@cpu_kernel("CreateSummaryFileWriter")
def create_summary_file_writer(writer, logdir, max_queue, flush_millis, filename_suffix):
    writer.create(_text(logdir), int(max_queue), int(flush_millis), _text(filename_suffix))


@cpu_kernel("CreateSummaryDbWriter")
def create_summary_db_writer(writer, db_uri, experiment_name, run_name, user_name):
    raise errors.UnimplementedError(
        None, None, f"CreateSummaryDbWriter ({_text(db_uri)!r}): flowgraph writes summaries to "
        "event files only, not to SQLite databases; use tf.contrib.summary.create_file_writer")


def _summary_event(serialized) -> ef.Event:
    return ef.Event(summary=ef.Summary.FromString(np.asarray(serialized).item()))


@cpu_kernel("WriteScalarSummary")
def write_scalar_summary(writer, step, tag, value):
    value = np.asarray(value)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"WriteScalarSummary '{_text(tag)}': value must be a scalar, got shape "
            f"{list(value.shape)}")
    summary = ef.Summary()
    summary.value.add(tag=_text(tag), simple_value=float(value))
    writer.add(ef.Event(summary=summary), step)


@cpu_kernel("WriteHistogramSummary")
def write_histogram_summary(writer, step, tag, values):
    writer.add(_summary_event(histogram_summary(tag, values)), step)


@cpu_kernel("WriteImageSummary")
def write_image_summary(writer, step, tag, tensor, bad_color, *, max_images=3):
    writer.add(_summary_event(image_summary(tag, tensor, max_images=max_images,
                                            bad_color=bad_color)), step)


@cpu_kernel("WriteAudioSummary")
def write_audio_summary(writer, step, tag, tensor, sample_rate, *, max_outputs=3):
    writer.add(_summary_event(audio_summary(tag, tensor, sample_rate,
                                            max_outputs=max_outputs)), step)


@cpu_kernel("WriteSummary")
def write_summary(writer, step, tensor, tag, summary_metadata):
    writer.add(_summary_event(tensor_summary(tag, tensor, summary_metadata)), step)


@cpu_kernel("WriteGraphSummary")
def write_graph_summary(writer, step, tensor):
    data = np.asarray(tensor).item()
    writer.add(ef.Event(graph_def=data if isinstance(data, bytes) else str(data).encode()),
               step)


@cpu_kernel("ImportEvent")
def import_event(writer, event):
    for item in np.asarray(event, dtype=object).reshape(-1):
        data = item if isinstance(item, bytes) else str(item).encode("utf-8")
        try:
            ef.Event.FromString(data)
        except (ValueError, TypeError, IndexError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"ImportEvent: could not parse an Event proto ({e})") from None
        writer.add_bytes(data)


@cpu_kernel("FlushSummaryWriter")
def flush_summary_writer(writer):
    writer.flush()


@cpu_kernel("CloseSummaryWriter")
def close_summary_writer(writer):
    writer.close()
