"""TF1's queue-fed readers: `TFRecordReader`, `TextLineReader`, `FixedLengthRecordReader`,
`WholeFileReader` and `IdentityReader` (on `ReaderBase`), with TensorFlow's op types
(``TFRecordReaderV2`` ... and ``ReaderReadV2``, ``ReaderReadUpToV2``,
``ReaderNumRecordsProducedV2``, ``ReaderNumWorkUnitsCompletedV2``, ``ReaderResetV2``).

A reader keeps its state in the session's resource container (like a queue): the current
work item (a file name dequeued from the filename queue) and its position. `read` returns
the next ``(key, value)`` record, dequeuing the next file name when the current file is
exhausted (blocking until one is available; an OutOfRangeError once the queue is closed
and empty). `read_up_to` returns at most `num_records` records of the current file.

Keys are TensorFlow's: ``"<file>:<byte offset>"`` (TFRecord), ``"<file>:<line number>"``
(text lines, 1-based), ``"<file>:<record number>"`` (fixed length), the file name (whole
file) and the work item itself (identity).

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
>>> with open(path, "w") as f:
...     _ = f.write("first\\nsecond\\n")
>>> queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
>>> key, value = tf.TextLineReader().read(queue)
>>> with tf.Session() as sess:
...     sess.run(tf.local_variables_initializer())
...     coord = tf.train.Coordinator()
...     threads = tf.train.start_queue_runners(sess, coord)
...     print(sess.run(value), sess.run(value))
...     coord.request_stop(); coord.join(threads)
b'first' b'second'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["FixedLengthRecordReader", "IdentityReader", "ReaderBase", "TFRecordReader",
           "TextLineReader", "WholeFileReader"]

_BASE = {"container": "", "shared_name": ""}
_READERS = {
    "TFRecordReaderV2": {"compression_type": ""},
    "TextLineReaderV2": {"skip_header_lines": 0},
    "FixedLengthRecordReaderV2": {"header_bytes": 0, "record_bytes": 1, "footer_bytes": 0,
                                  "hop_bytes": 0, "encoding": ""},
    "WholeFileReaderV2": {},
    "IdentityReaderV2": {},
}


def _scalar(op, *shapes):
    return [TensorShape([])]


for _t, _attrs in _READERS.items():
    register_op(_t, attrs={**_BASE, **_attrs}, dtype_fn=fixed_dtype(_dtypes.string),
                stateful=True)(_scalar)


@register_op("ReaderReadV2", num_outputs=2, stateful=True,
             dtype_fn=fixed_dtype(_dtypes.string, _dtypes.string))
def _read_shape(op, reader, queue):
    return [TensorShape([]), TensorShape([])]


@register_op("ReaderReadUpToV2", num_outputs=2, stateful=True,
             dtype_fn=fixed_dtype(_dtypes.string, _dtypes.string))
def _read_up_to_shape(op, reader, queue, n):
    return [TensorShape([None]), TensorShape([None])]


register_op("ReaderNumRecordsProducedV2", stateful=True,
            dtype_fn=fixed_dtype(_dtypes.int64))(_scalar)
register_op("ReaderNumWorkUnitsCompletedV2", stateful=True,
            dtype_fn=fixed_dtype(_dtypes.int64))(_scalar)


@register_op("ReaderResetV2", num_outputs=0, stateful=True)
def _reset_shape(op, reader):
    return []


not_differentiable(*_READERS, "ReaderReadV2", "ReaderReadUpToV2",
                   "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",
                   "ReaderResetV2")


def _queue_ref(queue):
    ref = getattr(queue, "queue_ref", queue)
    return convert_to_tensor(ref, name="queue")


class ReaderBase:
    """A queue-fed reader: `read`, `read_up_to`, `num_records_produced`,
    `num_work_units_completed` and `reset` build ops on its state."""

    _op_type = ""

    def __init__(self, attrs=None, name=None, shared_name=None, container=None) -> None:
        all_attrs = {"container": container or "", "shared_name": shared_name or ""}
        all_attrs.update(attrs or {})
        # TensorFlow names the handle after its op type (``TFRecordReaderV2``).
        self._reader_ref = make_tensor(self._op_type, [], all_attrs,
                                       name=name or self._op_type)

    @property
    def reader_ref(self):
        """The reader's handle tensor."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """Whether `serialize_state` and `restore_state` run (as TensorFlow: only for
        the readers whose state is one work item's progress, `IdentityReader` and
        `WholeFileReader`; the others' ops fail with UnimplementedError when run)."""
        return self._op_type in ("IdentityReaderV2", "WholeFileReaderV2")

    def serialize_state(self, name=None):
        """A scalar string: the reader's state (a serialized ``ReaderBaseState``)."""
        return make_tensor("ReaderSerializeStateV2", [self._reader_ref],
                           name=name or "ReaderSerializeStateV2")

    def restore_state(self, state, name=None):
        """An op putting the reader back in `state` (what `serialize_state` gave)."""
        state = convert_to_tensor(state, dtype=_dtypes.string, name="state")
        return make_op("ReaderRestoreStateV2", [self._reader_ref, state],
                       name=name or "ReaderRestoreStateV2")

    def read(self, queue, name=None):
        """``(key, value)``: the next record, taking a new work item from `queue` (a
        queue or its handle) when needed."""
        op = make_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)],
                     name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        """``(keys, values)``: up to `num_records` records of the current work item."""
        n = convert_to_tensor(num_records, dtype=_dtypes.int64, name="num_records")
        op = make_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue), n],
                     name=name or "ReaderReadUpToV2")
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        """How many records this reader has produced (int64)."""
        return make_tensor("ReaderNumRecordsProducedV2", [self._reader_ref],
                           name=name or "ReaderNumRecordsProducedV2")

    def num_work_units_completed(self, name=None):
        """How many work items this reader has finished (int64)."""
        return make_tensor("ReaderNumWorkUnitsCompletedV2", [self._reader_ref],
                           name=name or "ReaderNumWorkUnitsCompletedV2")

    def reset(self, name=None):
        """An op returning the reader to its initial state."""
        return make_op("ReaderResetV2", [self._reader_ref], name=name or "ReaderResetV2")


def _compression(options) -> str:
    """``""``, ``"ZLIB"`` or ``"GZIP"`` from TFRecordOptions, a name or an enum value."""
    value = getattr(options, "compression_type", options)
    value = getattr(value, "value", value)
    if value in (None, "", 0):
        return ""
    names = {1: "ZLIB", 2: "GZIP"}
    name = names.get(value, value.decode() if isinstance(value, bytes) else value)
    if not isinstance(name, str) or name.upper() not in ("ZLIB", "GZIP"):
        raise ValueError(f"TFRecordReader: compression must be None, '', 'ZLIB' or 'GZIP', "
                         f"got {value!r}")
    return name.upper()


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (`options`: a `tf.io.TFRecordOptions` for GZIP or
    ZLIB files)."""

    _op_type = "TFRecordReaderV2"

    def __init__(self, name=None, options=None) -> None:
        super().__init__({"compression_type": _compression(options)}, name)


class TextLineReader(ReaderBase):
    """The lines of text files (without line terminators), after `skip_header_lines`."""

    _op_type = "TextLineReaderV2"

    def __init__(self, skip_header_lines=None, name=None) -> None:
        super().__init__({"skip_header_lines": int(skip_header_lines or 0)}, name)


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes of binary files with optional header and footer;
    with `hop_bytes` consecutive records start `hop_bytes` apart."""

    _op_type = "FixedLengthRecordReaderV2"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None) -> None:
        if int(record_bytes) < 1:
            raise ValueError(f"FixedLengthRecordReader: record_bytes must be positive, got "
                             f"{record_bytes}")
        if encoding not in (None, "", "ZLIB", "GZIP"):
            raise ValueError(f"FixedLengthRecordReader: encoding must be '', 'ZLIB' or "
                             f"'GZIP', got {encoding!r}")
        super().__init__({"record_bytes": int(record_bytes),
                          "header_bytes": int(header_bytes or 0),
                          "footer_bytes": int(footer_bytes or 0),
                          "hop_bytes": int(hop_bytes or 0), "encoding": encoding or ""}, name)


class WholeFileReader(ReaderBase):
    """Each file whole: key = file name, value = its content."""

    _op_type = "WholeFileReaderV2"

    def __init__(self, name=None) -> None:
        super().__init__({}, name)


class IdentityReader(ReaderBase):
    """The work items themselves: key = value = each dequeued string."""

    _op_type = "IdentityReaderV2"

    def __init__(self, name=None) -> None:
        super().__init__({}, name)
