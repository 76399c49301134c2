"""`tf.summary.FileWriter`: TensorBoard event files, written on a background thread.

A writer owns one file ``events.out.tfevents.{time}.{hostname}{suffix}`` in its log
directory. The first record is ``Event(file_version="brain.Event:2")``; then every
`add_*` call serializes an `Event` (wall time, step, payload) in the caller's thread and
queues it (at most `max_queue`; `add_*` blocks when the queue is full). A daemon thread
frames each event as a TFRecord and appends it to the file; after a write it flushes the
file when `flush_secs` have passed since its last flush (the first event at once), and
`flush()` / `close()` wait until everything queued is written and fsynced. Writers
still open when the interpreter exits are flushed then.

Example
-------
>>> import tempfile, flowgraph as tf
>>> from flowgraph.summary.writer import FileWriter
>>> from flowgraph.summary.event_format import Summary
>>> w = FileWriter(tempfile.mkdtemp())
>>> w.add_summary(Summary(value=[Summary.Value(tag="loss", simple_value=0.5)]), 3)
>>> w.close()
"""

from __future__ import annotations

import _thread
import atexit
import os
import queue
import socket
import threading
import time
import warnings
import weakref

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.content_cache import ContentCache, graph_def_snapshot
from flowgraph.framework.proto_codec import write_length_delimited
from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.graph_def import compact_tensor_proto
from flowgraph.summary import event_format as ef

__all__ = ["FileWriter", "FileWriterCache"]

_TF_VERSION = "2.15.1"  # the version the event files follow (as `export_meta_graph`)
_MAX_ATTR_TENSOR_BYTES = 1 << 20  # larger constants are left out of the graph shown


# -- GraphDef ----------------------------------------------------------------------------------
def _shape(value: TensorShape) -> ef.TensorShapeProto:
    return ef.shape_proto(None if value.ndims is None else [d.value for d in value.dims])


def _attr_value(value) -> ef.AttrValue | None:
    """An AttrValue for a decoded attribute, or None for what has no encoding here."""
    if isinstance(value, _dtypes.DType):
        return ef.AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return ef.AttrValue(shape=_shape(value))
    if isinstance(value, bool | np.bool_):
        return ef.AttrValue(b=bool(value))
    if isinstance(value, int | np.integer):
        return ef.AttrValue(i=int(value)) if -(1 << 63) <= int(value) < 1 << 63 else None
    if isinstance(value, float | np.floating):
        return ef.AttrValue(f=float(value))
    if isinstance(value, str | bytes):
        return ef.AttrValue(s=value)
    if isinstance(value, np.ndarray):
        compact = compact_tensor_proto(value)
        if compact is not None:  # one value over a shape (an optimizer slot's start)
            return ef.AttrValue(tensor=compact)
        if value.dtype != object and value.nbytes > _MAX_ATTR_TENSOR_BYTES:
            return None
        try:
            return ef.AttrValue(tensor=ef.make_tensor_proto(value))
        except TypeError:
            return None
    if isinstance(value, list | tuple):
        return _list_attr(list(value))
    return None


def _list_attr(items: list) -> ef.AttrValue | None:
    lv = ef.AttrValue.ListValue
    if all(isinstance(x, _dtypes.DType) for x in items):
        return ef.AttrValue(list=lv(type=[x.as_datatype_enum for x in items]))
    if all(isinstance(x, TensorShape) for x in items):
        return ef.AttrValue(list=lv(shape=[_shape(x) for x in items]))
    if all(isinstance(x, bool | np.bool_) for x in items):
        return ef.AttrValue(list=lv(b=[bool(x) for x in items]))
    if all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in items):
        return ef.AttrValue(list=lv(i=[int(x) for x in items]))
    if all(isinstance(x, int | float | np.integer | np.floating) for x in items):
        return ef.AttrValue(list=lv(f=[float(x) for x in items]))
    if all(isinstance(x, str | bytes) for x in items):
        return ef.AttrValue(list=lv(s=list(items)))
    return None


def _input_name(ref: str) -> str:
    # TensorFlow writes output 0 of "op" as "op", other outputs as "op:N".
    return ref[:-2] if ref.endswith(":0") and not ref.startswith("^") else ref


_graph_events = ContentCache(max_entries=4, max_bytes=64 << 20)


def _graph_event_bytes(graph) -> bytes:
    """The serialized GraphDef of `graph`'s graph event, kept by content: an Estimator
    writes the same graph on every `train` call."""
    graph_def, key = graph_def_snapshot(graph, add_shapes=True)
    data = _graph_events.get(key)
    if data is None:
        data = graph_def_proto(graph_def).SerializeToString()
        _graph_events.put(key, data)
    return data


def graph_def_proto(graph_def: dict) -> ef.GraphDef:
    """A GraphDef message from flowgraph's JSON graph def (``Graph.as_graph_def()``)."""
    out = ef.GraphDef(versions=ef.VersionDef(
        producer=int(graph_def.get("versions", {}).get("producer", 0))))
    for node in graph_def.get("node", []):
        attrs = {}
        for key, raw in node.get("attr", {}).items():
            try:
                value = _attr_value(decode_attr(raw))
            except (ValueError, TypeError):
                value = None
            if value is not None:
                attrs[key] = value
        if node.get("output_shapes"):
            shapes = [decode_attr(s) for s in node["output_shapes"]]
            attrs["_output_shapes"] = ef.AttrValue(
                list=ef.AttrValue.ListValue(shape=[_shape(s) for s in shapes]))
        if node.get("colocation"):
            attrs["_class"] = ef.AttrValue(list=ef.AttrValue.ListValue(
                s=[f"loc:@{c}" for c in node["colocation"]]))
        out.node.add(name=node["name"], op=node["op"],
                     input=[_input_name(r) for r in node.get("input", [])],
                     device=node.get("device", "") or None, attr=attrs)
    return out


def _graph_bytes(graph, graph_def) -> bytes:
    """The serialized GraphDef of `graph` (a `Graph`, a GraphDef message or bytes, or
    flowgraph's dict graph def) or of the deprecated `graph_def` argument."""
    if graph is not None and graph_def is not None:
        raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
    if graph is None and graph_def is None:
        raise ValueError("Please pass a graph (or graph_def) to add_graph")
    if graph is not None and hasattr(graph, "as_graph_def"):
        return _graph_event_bytes(graph)
    source = graph if graph is not None else graph_def
    if hasattr(source, "SerializeToString"):  # written as given (no shapes added)
        return source.SerializeToString()
    if isinstance(source, dict):
        return graph_def_proto(source).SerializeToString()
    return _as_bytes(source, "graph_def")


def _meta_graph_bytes(graph_bytes: bytes) -> bytes:
    """A serialized MetaGraphDef of the graph (field 2) with a ``meta_info_def`` (field 1)
    naming the TensorFlow version the files follow; collections are not written."""
    info = write_length_delimited(5, _TF_VERSION.encode())
    return write_length_delimited(1, info) + write_length_delimited(2, graph_bytes)


def _run_metadata_proto(run_metadata) -> ef.RunMetadata:
    out = ef.RunMetadata(step_stats=ef.StepStats())
    for dev in getattr(getattr(run_metadata, "step_stats", None), "dev_stats", []):
        d = out.step_stats.dev_stats.add(device=dev.device)
        for ns in dev.node_stats:
            d.node_stats.add(
                node_name=ns.node_name, all_start_micros=ns.all_start_micros,
                op_start_rel_micros=ns.op_start_rel_micros,
                op_end_rel_micros=ns.op_end_rel_micros,
                all_end_rel_micros=ns.all_end_rel_micros,
                output=list(getattr(ns, "output", ())),
                timeline_label=ns.timeline_label or None, thread_id=ns.thread_id,
                all_start_nanos=getattr(ns, "all_start_nanos", 0) or None,
                all_end_rel_nanos=getattr(ns, "all_end_rel_nanos", 0) or None)
    return out


def _as_bytes(message, what: str) -> bytes:
    if isinstance(message, np.ndarray) and message.dtype == object and message.ndim == 0:
        message = message.item()
    if isinstance(message, bytes | bytearray):
        return bytes(message)
    if hasattr(message, "SerializeToString"):
        return message.SerializeToString()
    raise TypeError(f"{what} must be serialized bytes or a message, got {type(message)}")


# -- the event file -----------------------------------------------------------------------------
_SENTINEL = object()
_open_writers: weakref.WeakSet = weakref.WeakSet()


class EventFileWriter:
    """Appends serialized events to an event file from a background thread."""

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str | None = None) -> None:
        self._logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._closed = True
        self._open()

    def _open(self) -> None:
        try:
            os.makedirs(self._logdir, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as e:
            # TensorFlow: FailedPreconditionError, "... is not a directory"
            raise errors.FailedPreconditionError(
                None, None, f"{self._logdir} is not a directory: the summary writer needs "
                "a directory for its event files (a file of that name exists, or a parent "
                "of it is a file); pass another model_dir/logdir") from e
        except FileNotFoundError as e:  # TensorFlow: NotFoundError
            raise errors.NotFoundError(
                None, None, f"{self._logdir}; No such file or directory: the summary writer "
                f"cannot create its log directory ({e.strerror}); pass a logdir under a "
                "directory that exists and accepts new directories") from e
        except PermissionError as e:  # TensorFlow: PermissionDeniedError
            raise errors.PermissionDeniedError(
                None, None, f"{self._logdir}; Permission denied: the summary writer cannot "
                "create its log directory; pass a logdir you may write to") from e
        host = socket.gethostname()
        stamp = int(time.time())
        base = os.path.join(self._logdir, f"events.out.tfevents.{stamp:010d}.{host}")
        path, n = base + self._suffix, 0
        while True:
            try:
                self._file = open(path, "xb")
                break
            except FileExistsError:
                n += 1
                path = f"{base}.{os.getpid()}.{n}{self._suffix}"
        self._path = path
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._queue: queue.Queue = queue.Queue(self._max_queue)
        first = ef.Event(wall_time=time.time(), file_version="brain.Event:2")
        self._file.write(ef.frame_record(first.SerializeToString()))
        self._file.flush()
        self._closed = False
        # A bare thread: `threading.Thread.start` waits until the new thread runs, which
        # on a busy machine can take milliseconds of every writer's creation. Like a
        # daemon thread it does not hold up exit (open writers are closed at exit).
        self._stopped = threading.Event()
        _thread.start_new_thread(self._serve, ())
        _open_writers.add(self)

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file being written."""
        return self._path

    def add_event(self, data: bytes) -> None:
        """Queue one serialized event (dropped once the writer is closed)."""
        self._raise_pending()
        if not self._closed:
            self._queue.put(data)

    def _serve(self) -> None:
        try:
            self._run()
        finally:
            self._stopped.set()

    def _run(self) -> None:
        # As TensorFlow's writer thread: a flush follows a write once `flush_secs` have
        # passed since the last one (so the first event is on disk at once, e.g. the graph
        # of ``FileWriter(logdir, graph)``); an idle writer flushes nothing.
        next_flush = 0.0
        while True:
            item = self._queue.get()
            try:
                if item is _SENTINEL:
                    return
                with self._lock:
                    self._file.write(ef.frame_record(item))
                    now = time.monotonic()
                    if now > next_flush:
                        self._file.flush()
                        next_flush = now + self._flush_secs
            except BaseException as e:  # reported by the next flush()/close()/add_*
                self._error = e
            finally:
                if item is not None:
                    self._queue.task_done()

    def _raise_pending(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise OSError(f"writing event file {self._path} failed: {err}") from err

    def flush(self) -> None:
        """Write everything queued and fsync the file."""
        if self._closed:
            return
        self._queue.join()
        with self._lock:
            self._file.flush()
            os.fsync(self._file.fileno())
        self._raise_pending()

    def close(self) -> None:
        """Flush and close the file; later events are dropped until `reopen()`."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._queue.put(_SENTINEL)
        self._stopped.wait()
        with self._lock:
            self._file.close()
        _open_writers.discard(self)

    def reopen(self) -> None:
        """Start a new event file after `close()` (no-op while open)."""
        if self._closed:
            self._open()


def _forget_writers_in_child() -> None:
    # A forked child has none of its parent's writer threads: its copies of the writers
    # are closed (events dropped; `reopen` starts a file of its own), so they neither
    # wait for a thread nor write into the parent's files.
    for w in list(_open_writers):
        w._closed = True
        w._stopped.set()
    _open_writers.clear()
    FileWriterCache._lock = threading.RLock()  # another thread may have held it
    FileWriterCache._cache = {}  # the child's summaries go to event files of its own


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writers_in_child)


@atexit.register
def _flush_open_writers() -> None:
    for w in list(_open_writers):
        try:
            w.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


# -- FileWriter ----------------------------------------------------------------------------------
class FileWriter:
    """Writes summaries, the graph and session logs for TensorBoard (TF1's FileWriter).

    Parameters
    ----------
    logdir : str
        Directory of the event file (created if needed).
    graph : Graph, optional
        Added with `add_graph` right away, followed by a meta graph event holding it
        (as TensorFlow writes them; `graph_def` does the same).
    max_queue : int
        Events queued before `add_*` blocks.
    flush_secs : float
        How often the background thread flushes the file.
    filename_suffix : str, optional
        Appended to the event file name.
    """

    def __init__(self, logdir: str, graph=None, max_queue: int = 10, flush_secs: float = 120,
                 graph_def=None, filename_suffix: str | None = None, session=None) -> None:
        if session is not None:
            raise NotImplementedError(
                "FileWriter(session=...) (TF2 summary ops) is not supported; write summaries "
                "with the tf.summary.* ops and FileWriter.add_summary.")
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False  # by close(), until reopen(): using it then warns, as in TF
        self._seen_summary_tags: set[str] = set()
        self._session_run_tags: set[str] = set()
        if graph is not None or graph_def is not None:
            # As TensorFlow: the graph event, then a meta graph event holding that graph.
            data = _graph_bytes(graph, graph_def)
            self._add_graph_bytes(data, None)
            self.add_meta_graph(_meta_graph_bytes(data))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def _warn_if_closed(self) -> None:
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter: nothing is written until "
                          "its reopen() is called.", stacklevel=3)

    def _add_event(self, event: ef.Event, step) -> None:
        self._warn_if_closed()
        event.wall_time = time.time()
        if step is not None:
            event.step = int(np.asarray(step))
        self.event_writer.add_event(event.SerializeToString())

    def add_event(self, event) -> None:
        """Write an `Event` (message or serialized bytes) as it is."""
        self._warn_if_closed()
        self.event_writer.add_event(_as_bytes(event, "event"))

    def add_summary(self, summary, global_step=None) -> None:
        """Write a `Summary`: the bytes a summary op returns (as fetched by `Session.run`)
        or a `Summary` message. Plugin metadata is kept only on a tag's first value."""
        summ = ef.Summary.FromString(_as_bytes(summary, "summary"))
        for value in summ.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
                continue
            self._seen_summary_tags.add(value.tag)
        self._add_event(ef.Event(summary=summ), global_step)

    def add_session_log(self, session_log, global_step=None) -> None:
        """Write a `SessionLog` (e.g. ``SessionLog(status=SessionLog.START)``)."""
        log = ef.SessionLog.FromString(_as_bytes(session_log, "session_log"))
        self._add_event(ef.Event(session_log=log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        """Write the graph (a `Graph`, or a graph def) for TensorBoard's Graphs tab."""
        self._add_graph_bytes(_graph_bytes(graph, graph_def), global_step)

    def _add_graph_bytes(self, data: bytes, global_step) -> None:
        # TensorFlow writes one per call, without a warning (MonitoredTrainingSession's
        # CheckpointSaverHook adds one after the cached writer's constructor did).
        self._add_event(ef.Event(graph_def=data), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        """Write a serialized MetaGraphDef."""
        if not isinstance(meta_graph_def, bytes | bytearray | np.ndarray | ef.Message) and (
                not hasattr(meta_graph_def, "SerializeToString")):
            raise TypeError("meta_graph_def must be type MetaGraphDef, saw type: "
                            f"{type(meta_graph_def)}")
        self._add_event(ef.Event(meta_graph_def=_as_bytes(meta_graph_def, "meta_graph_def")),
                        global_step)

    def add_run_metadata(self, run_metadata, tag: str, global_step=None) -> None:
        """Write the step stats of a traced `Session.run` under `tag`."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        data = (_as_bytes(run_metadata, "run_metadata")
                if isinstance(run_metadata, bytes | ef.Message)
                else _run_metadata_proto(run_metadata).SerializeToString())
        event = ef.Event(tagged_run_metadata=ef.TaggedRunMetadata(tag=tag, run_metadata=data))
        self._add_event(event, global_step)

    def flush(self) -> None:
        """Write all pending events to disk."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """Reopen after `close()`: events go to a new event file in the same directory."""
        self.event_writer.reopen()
        self._closed = False


class FileWriterCache:
    """One shared `FileWriter` per log directory (TF's FileWriterCache)."""

    _cache: dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir: str) -> FileWriter:
        """The cached writer of `logdir`, created (with the default graph) if needed."""
        from flowgraph.framework.graph import get_default_graph

        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear() -> None:
        """Close and forget every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}
