"""CPU kernels of the queue-fed readers (`flowgraph/ops/reader_ops.py`).

A reader is a `_Reader` in the session's resource container: the records of its current
work item (read whole when the item is taken) and counters. ``ReaderReadV2`` is
asynchronous: when no record is left it dequeues the next work item from the queue (which
may block) and continues in the queue's completion callback.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _text(v) -> str:
    v = np.asarray(v, dtype=object).reshape(()).item() if isinstance(v, np.ndarray) else v
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _scalar_string(b: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = b
    return out


def _strings(items) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _tfrecord(path, attrs):
    from flowgraph.io.tf_record import iter_records, read_file_bytes

    data = read_file_bytes(path, attrs.get("compression_type", ""), "TFRecordReader")
    out, offset = [], 0
    for record in iter_records(data, path, "TFRecordReader"):
        out.append((f"{path}:{offset}".encode(), record))
        offset += len(record) + 16  # length, length CRC, data, data CRC
    return out


def _read_all(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{what}: {path}; No such file or "
                                   "directory") from None


def _text_lines(path, attrs):
    data = _read_all(path, "TextLineReader")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    skip = attrs.get("skip_header_lines", 0)
    return [(f"{path}:{i + 1}".encode(), line.rstrip(b"\r"))
            for i, line in enumerate(lines) if i >= skip]


def _fixed_length(path, attrs):
    import gzip
    import zlib

    data = _read_all(path, "FixedLengthRecordReader")
    if attrs.get("encoding") == "GZIP":
        data = gzip.decompress(data)
    elif attrs.get("encoding") == "ZLIB":
        data = zlib.decompress(data)
    header, size = attrs["header_bytes"], attrs["record_bytes"]
    end = len(data) - attrs["footer_bytes"]
    hop = attrs.get("hop_bytes") or size
    out, pos, k = [], header, 0
    while pos + size <= end:
        out.append((f"{path}:{k}".encode(), data[pos:pos + size]))
        pos += hop
        k += 1
    return out


_SOURCES = {
    "TFRecordReaderV2": _tfrecord,
    "TextLineReaderV2": _text_lines,
    "FixedLengthRecordReaderV2": _fixed_length,
    "WholeFileReaderV2": lambda path, attrs: [(path.encode(), _read_all(path, "WholeFileReader"))],
    "IdentityReaderV2": lambda work, attrs: [(work.encode(), work.encode())],
}


_ONE_RECORD = ("WholeFileReaderV2", "IdentityReaderV2")


class _Reader:
    def __init__(self, kind: str, attrs: dict) -> None:
        self.kind = kind
        self.attrs = attrs
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.records: list = []
        self.pos = 0
        self.produced = 0
        self.completed = 0
        self.active = False
        self.work = ""  # the last work item started (ReaderSerializeState writes it)

    def start(self, work: str) -> None:
        self.work = work
        self.records = _SOURCES[self.kind](work, self.attrs)
        self.pos = 0
        self.active = True

    def take(self, n: int) -> list:
        """Up to `n` records of the current work item. As TensorFlow's, a reader of one
        record per item finishes the item with that record; the others finish it when a
        read finds it exhausted (so `ReaderNumWorkUnitsCompleted` lags by one item)."""
        out = self.records[self.pos:self.pos + n]
        self.pos += len(out)
        self.produced += len(out)
        if self.pos >= len(self.records) and (not out or self.kind in _ONE_RECORD):
            self.active = False
            self.completed += 1
        return out


def _reader_kernel(kind):
    class ReaderOp:
        def __init__(self, ctx, **attrs) -> None:
            self.resources = ctx.resources
            self.container = attrs.get("container", "") or ""
            self.name = attrs.get("shared_name", "") or ctx.op.name
            self.attrs = attrs

        def __call__(self):
            return self.resources.lookup_or_create(self.container, self.name,
                                                   lambda _: _Reader(kind, self.attrs))

    ReaderOp.__name__ = kind
    return ReaderOp


for _kind in _SOURCES:
    cpu_kernel(_kind)(_reader_kernel(_kind))


def _read(step, done, reader, queue, n, batch):
    """Serve up to `n` records, dequeuing work items (asynchronously) until one has
    records; `batch` selects vector outputs."""

    def finish(records):
        keys = [k for k, _ in records]
        values = [v for _, v in records]
        if batch:
            done([_strings(keys), _strings(values)])
        else:
            done([_scalar_string(keys[0]), _scalar_string(values[0])])

    def attempt():
        with reader.lock:
            if reader.active:
                records = reader.take(n)
                if records:
                    return records
        return None

    def on_work(values, error=None):
        if error is not None:
            done(None, error)
            return
        try:
            work = _text(values[0] if isinstance(values, list | tuple) else values)
            with reader.lock:
                reader.start(work)
                if not reader.records:  # an empty work item: finished at once
                    reader.active = False
                    reader.completed += 1
            records = attempt()
        except errors.OpError as e:
            done(None, e)
            return
        if records is not None:
            finish(records)
        else:
            queue.dequeue(step, on_work, None)

    records = attempt()
    if records is not None:
        finish(records)
    else:
        queue.dequeue(step, on_work, None)


@cpu_kernel("ReaderReadV2", is_async=True)
def reader_read(step, done, reader, queue):
    _read(step, done, reader, queue, 1, batch=False)


@cpu_kernel("ReaderReadUpToV2", is_async=True)
def reader_read_up_to(step, done, reader, queue, n):
    if int(n) < 1:
        done(None, errors.InvalidArgumentError(
            None, None, f"ReaderReadUpToV2: num_records must be positive, got {int(n)}"))
        return
    _read(step, done, reader, queue, int(n), batch=True)


@cpu_kernel("ReaderNumRecordsProducedV2")
def reader_num_records(reader):
    return np.asarray(reader.produced, dtype=np.int64)


@cpu_kernel("ReaderNumWorkUnitsCompletedV2")
def reader_num_work_units(reader):
    return np.asarray(reader.completed, dtype=np.int64)


@cpu_kernel("ReaderResetV2")
def reader_reset(reader):
    with reader.lock:
        reader.reset()
    return []
