"""The TF 1.x "v2 summaries in graph mode" writer objects and per-thread state behind
``tf.contrib.summary`` (`flowgraph/contrib/summary.py`) and ``tf.summary.initialize``.

A writer is a ``SummaryWriter`` resource op plus the op that creates its event file
(``CreateSummaryFileWriter``, kept in the ``_SUMMARY_WRITER_INIT_OP`` collection, which
`summary_writer_initializer_op` returns). ``writer.as_default()`` makes it the thread's
default writer; the recording condition (``always_record_summaries`` ...) is a Python
bool or a bool tensor set per thread as well.

Example
-------
>>> import flowgraph as tf
>>> w = tf.contrib.summary.create_file_writer(None)   # a writer that writes nothing
>>> with w.as_default():
...     pass
"""

from __future__ import annotations

import contextlib
import threading

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import (
    add_to_collection,
    control_dependencies,
    device,
    get_collection,
)
from flowgraph.framework.operation import Tensor
from flowgraph.framework.session_stack import get_default_session
from flowgraph.ops import summary_writer_ops as _writer_op_defs  # noqa: F401
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.array_ops import placeholder
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.op_util import make_op
from flowgraph.summary.writer import _graph_bytes

__all__ = ["SummaryWriter", "initialize", "summary_writer_initializer_op"]

WRITER_INIT_COLLECTION = "_SUMMARY_WRITER_INIT_OP"


class _State(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.writer = None
        self.is_recording = None


state = _State()


class _DefaultWriter:
    """The context `SummaryWriter.as_default` returns (also entered by `set_as_default`)."""

    def __init__(self, writer) -> None:
        self._writer = writer
        self._old = None

    def __enter__(self):
        self._old = state.writer
        state.writer = self._writer
        return self._writer

    def __exit__(self, *exc):
        if self._writer._resource is not None:
            self._writer.flush()  # as TensorFlow: a flush op, which nothing runs
        state.writer = self._old
        return False


class SummaryWriter:
    """A summary writer resource in the graph (``tf.contrib.summary.SummaryWriter``).

    `init` returns the op creating the event file, `flush` and `close` ops flushing and
    closing it; `as_default` makes it the writer the summary functions use.
    """

    def __init__(self, resource: Tensor | None, init_op_fn=None) -> None:
        self._resource = resource
        self._init_op_fn = init_op_fn
        if resource is not None:
            add_to_collection(WRITER_INIT_COLLECTION, self.init())

    def set_as_default(self):
        """Make this the thread's default writer (until another is set)."""
        _DefaultWriter(self).__enter__()

    def as_default(self):
        """A context in which this is the thread's default writer."""
        return _DefaultWriter(self)

    def init(self):
        """The op that creates the writer's event file (a no-op for a null writer)."""
        if self._resource is None:
            return no_op()
        return self._init_op_fn(self._resource)

    def flush(self):
        """An op writing the writer's pending events to its file."""
        if self._resource is None:
            return no_op()
        with device("cpu:0"):
            return make_op("FlushSummaryWriter", [self._resource])

    def close(self):
        """An op flushing, then closing the event file."""
        if self._resource is None:
            return no_op()
        with control_dependencies([self.flush()]), device("cpu:0"):
            return make_op("CloseSummaryWriter", [self._resource])


def summary_writer_initializer_op() -> list:
    """The ops creating every summary writer of the default graph (run them once per
    session before writing).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.contrib.summary.summary_writer_initializer_op())
    []
    """
    return get_collection(WRITER_INIT_COLLECTION)


def write_graph(param, step, name=None):
    """A ``WriteGraphSummary`` op on the default writer (a no-op without one); `param` is a
    string tensor holding a serialized GraphDef, or a `Graph`."""
    writer = state.writer
    if writer is None or writer._resource is None:
        return no_op()
    with device("cpu:0"):
        if isinstance(param, Tensor):
            tensor = identity(param)
        elif hasattr(param, "as_graph_def") or hasattr(param, "SerializeToString"):
            tensor = convert_to_tensor(_graph_bytes(param, None), _dtypes.string)
        else:
            raise TypeError(f"graph() needs a argument `param` to be tf.Tensor (e.g. "
                            f"tf.placeholder) in graph mode, but received param={param} of "
                            f"type {type(param).__name__}.")
        if not isinstance(step, Tensor):
            step = convert_to_tensor(step, _dtypes.int64)
        return make_op("WriteGraphSummary", [writer._resource, step, tensor], name=name)


def initialize(graph=None, session=None):
    """Create the default graph's summary writers in `session` and, if `graph` is given,
    write it to the default writer at step 0 (TF 1.x graph-mode setup of
    ``tf.contrib.summary``).

    Raises ``RuntimeError`` without a default writer, ``ValueError`` without a session.

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.summary.initialize()
    ... except RuntimeError as e:
    ...     print(e)
    No default tf.contrib.summary.SummaryWriter found
    """
    if state.writer is None:
        raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Argument `session must be passed if no default session exists")
    session.run(summary_writer_initializer_op())
    if graph is not None:
        data = _graph_bytes(graph, None)
        x = placeholder(_dtypes.string)
        session.run(write_graph(x, 0), feed_dict={x: data})


@contextlib.contextmanager
def record_if(condition):
    """A context in which summaries record when `condition` (bool, bool tensor or
    callable) holds."""
    old = state.is_recording
    try:
        state.is_recording = condition
        yield
    finally:
        state.is_recording = old
