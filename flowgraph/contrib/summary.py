"""`tf.contrib.summary`: TF 1.x's "v2" summaries in graph mode.

Summaries go through a writer resource (`create_file_writer`) made the default with
``writer.as_default()``; each summary function adds a ``Write*Summary`` op guarded by the
recording condition (`always_record_summaries`, `never_record_summaries`,
`record_summaries_every_n_global_steps`) and collected in ``_SUMMARY_V2``
(`all_summary_ops`). Run `summary_writer_initializer_op` (or `initialize`) once per
session, then the summary ops with the training step; the events land in an
``events.out.tfevents.*.v2`` file that ``tf.train.summary_iterator`` and TensorBoard read.
Ops: `flowgraph/ops/summary_writer_ops.py`; writer state:
`flowgraph/summary/summary_v2_state.py`.

Example
-------
>>> import tempfile
>>> import flowgraph as tf
>>> logdir = tempfile.mkdtemp()
>>> step = tf.train.get_or_create_global_step()
>>> writer = tf.contrib.summary.create_file_writer(logdir)
>>> with writer.as_default(), tf.contrib.summary.always_record_summaries():
...     loss_summary = tf.contrib.summary.scalar("loss", 0.25)
>>> with tf.Session() as sess:
...     sess.run(tf.global_variables_initializer())
...     _ = sess.run(tf.contrib.summary.summary_writer_initializer_op())
...     _ = sess.run(tf.contrib.summary.all_summary_ops())
...     _ = sess.run(writer.flush())
>>> [e.summary.value[0].simple_value for e in tf.train.summary_iterator(
...     tf.gfile.Glob(logdir + "/events.*")[0]) if e.summary.value]
[0.25]
"""

from __future__ import annotations

import os

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    control_dependencies,
    device,
    get_collection,
    get_default_graph,
)
from flowgraph.framework.graph import name_scope as _name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_cond import smart_cond
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.math_ops import equal, logical_and
from flowgraph.ops.op_util import make_op
from flowgraph.summary.summary_ops import _summary_scope
from flowgraph.summary.summary_v2_state import (
    SummaryWriter,
    initialize,
    record_if,
    state,
    summary_writer_initializer_op,
    write_graph,
)
from flowgraph.train.training_util import get_or_create_global_step

__all__ = [
    "SummaryWriter",
    "all_summary_ops",
    "always_record_summaries",
    "audio",
    "create_db_writer",
    "create_file_writer",
    "create_summary_file_writer",
    "eval_dir",
    "flush",
    "generic",
    "graph",
    "histogram",
    "image",
    "import_event",
    "initialize",
    "never_record_summaries",
    "record_summaries_every_n_global_steps",
    "scalar",
    "should_record_summaries",
    "summary_writer_initializer_op",
]


# -- writers ---------------------------------------------------------------------------------
def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None) -> SummaryWriter:
    """A writer of event files in `logdir` (None: a writer that writes nothing).

    Events are written once `max_queue` (10) are pending or `flush_millis` (120000) have
    passed; the file name ends in `filename_suffix` (``".v2"``). Writers of one `name`
    (``"logdir:" + logdir`` by default) share one resource in a session.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.contrib.summary.create_file_writer("/tmp/fg_doc_logs")
    >>> w.init().type
    'CreateSummaryFileWriter'
    """
    if logdir is None:
        return SummaryWriter(None)
    logdir = str(logdir)
    with device("cpu:0"):
        max_queue = constant(10) if max_queue is None else max_queue
        flush_millis = constant(2 * 60 * 1000) if flush_millis is None else flush_millis
        filename_suffix = constant(".v2") if filename_suffix is None else filename_suffix
        name = "logdir:" + logdir if name is None else name
        resource = make_op("SummaryWriter", [], {"shared_name": name,
                                                 "container": ""}).outputs[0]

        def init(res):
            # as TF's op wrappers: Python values become constants inside the op's scope
            with _name_scope(None, "CreateSummaryFileWriter") as scope:
                inputs = [res, convert_to_tensor(logdir, _dtypes.string, name="logdir"),
                          convert_to_tensor(max_queue, _dtypes.int32, name="max_queue"),
                          convert_to_tensor(flush_millis, _dtypes.int32, name="flush_millis"),
                          convert_to_tensor(filename_suffix, _dtypes.string,
                                            name="filename_suffix")]
                return make_op("CreateSummaryFileWriter", inputs, name=scope)

        return SummaryWriter(resource, init)


def create_summary_file_writer(*args, **kwargs) -> SummaryWriter:
    """Deprecated name of `create_file_writer`."""
    return create_file_writer(*args, **kwargs)


def create_db_writer(db_uri, experiment_name=None, run_name=None, user_name=None,
                     name=None):
    """TF 1.x's SQLite summary writer: flowgraph has no SQLite sink, so this raises
    ``NotImplementedError`` naming `create_file_writer` instead.

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.contrib.summary.create_db_writer("/tmp/runs.sqlite")
    ... except NotImplementedError:
    ...     print("event files only")
    event files only
    """
    raise NotImplementedError(
        f"tf.contrib.summary.create_db_writer({db_uri!r}): flowgraph writes summaries to "
        "event files only, not to SQLite databases; use tf.contrib.summary."
        "create_file_writer(logdir) and read the events with tf.train.summary_iterator")


def eval_dir(model_dir, name=None) -> str:
    """``model_dir/eval`` (or ``eval_<name>``): where evaluation summaries go.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.summary.eval_dir("/m", "val")
    '/m/eval_val'
    """
    return os.path.join(model_dir, "eval" if not name else "eval_" + name)


# -- the recording condition -----------------------------------------------------------------
def always_record_summaries():
    """A context in which summaries always record."""
    return record_if(True)


def never_record_summaries():
    """A context in which summaries never record."""
    return record_if(False)


def record_summaries_every_n_global_steps(n, global_step=None):
    """A context in which summaries record when ``global_step % n == 0``."""
    if global_step is None:
        global_step = get_or_create_global_step()
    with device("cpu:0"):
        should = equal(global_step % n, 0)
    return record_if(should)


def _static_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor):
        v = constant_value(value)
        return None if v is None else bool(v)
    return None


def _should_record():
    """(condition tensor, its static value or None): False without a default writer,
    else the recording condition (False when none is set)."""
    if state.writer is None:
        return constant(False), False
    cond = state.is_recording() if callable(state.is_recording) else state.is_recording
    if cond is None:
        cond = False
    static = _static_bool(cond)
    if static is False:
        return constant(False), False
    return logical_and(True, cond), static


def should_record_summaries() -> Tensor:
    """A bool tensor: would a summary written here record?"""
    return _should_record()[0]


# -- summaries -------------------------------------------------------------------------------
def summary_writer_function(name, tensor, function, family=None):
    """Add `function(tag, scope)` (which makes a write op) under the recording condition;
    returns a bool tensor (True when it wrote) or a no-op without a default writer."""
    scope_name = get_default_graph().get_name_scope()
    scope_name = scope_name + "/" if scope_name else ""

    def record():
        with _name_scope(scope_name), _summary_scope(name, family, [tensor]) as (tag, scope):
            with control_dependencies([function(tag, scope)]):
                return constant(True)

    if state.writer is None:
        return no_op()
    with device("cpu:0"):
        pred, static = _should_record()
        if static is None:
            op = smart_cond(pred, record, lambda: constant(False), name="")
        else:
            op = record() if static else constant(False)
        add_to_collection(GraphKeys._SUMMARY_COLLECTION, op)
    return op


def _choose_step(step):
    if step is None:
        step = get_or_create_global_step()
    return convert_to_tensor(step, _dtypes.int64)


def _tag(tag):
    return convert_to_tensor(tag, name="tag")


def _resource():
    return state.writer._resource


def _write_op(op_type, inputs, attrs, scope):
    return make_op(op_type, inputs, attrs, name=scope)


def _value_summary(op_type, name, tensor, family, step):
    """A write op of type `op_type` taking ``(writer, step, tag, tensor)`` with attr
    ``T`` (scalars and histograms)."""
    def function(tag, scope):
        value = identity(tensor)
        return _write_op(op_type, [_resource(), _choose_step(step), _tag(tag), value],
                         {"T": value.dtype}, scope)

    return summary_writer_function(name, tensor, function, family=family)


def scalar(name, tensor, family=None, step=None):
    """Write a scalar (as a float ``simple_value``) at `step` (the global step by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     tf.contrib.summary.scalar("loss", 1.0).type   # no default writer: a no-op
    'NoOp'
    """
    return _value_summary("WriteScalarSummary", name, tensor, family, step)


def histogram(name, tensor, family=None, step=None):
    """Write a histogram of `tensor`'s values at `step`."""
    return _value_summary("WriteHistogramSummary", name, tensor, family, step)


def image(name, tensor, bad_color=None, max_images=3, family=None, step=None):
    """Write up to `max_images` PNG images of a ``[batch, height, width, channels]``
    tensor at `step`."""
    def function(tag, scope):
        bad = (constant([255, 0, 0, 255], dtype=_dtypes.uint8) if bad_color is None
               else convert_to_tensor(bad_color, _dtypes.uint8))
        value = identity(tensor)
        return _write_op("WriteImageSummary",
                         [_resource(), _choose_step(step), _tag(tag), value, bad],
                         {"max_images": int(max_images), "T": value.dtype}, scope)

    return summary_writer_function(name, tensor, function, family=family)


def audio(name, tensor, sample_rate, max_outputs, family=None, step=None):
    """Write up to `max_outputs` WAV clips of a ``[batch, frames(, channels)]`` float
    tensor at `step`."""
    def function(tag, scope):
        value = identity(tensor)
        return _write_op("WriteAudioSummary",
                         [_resource(), _choose_step(step), _tag(tag), value,
                          convert_to_tensor(sample_rate, _dtypes.float32, name="sample_rate")],
                         {"max_outputs": int(max_outputs)}, scope)

    return summary_writer_function(name, tensor, function, family=family)


def generic(name, tensor, metadata=None, family=None, step=None):
    """Write `tensor` as a tensor summary with `metadata` (a SummaryMetadata or its bytes)."""
    def function(tag, scope):
        if metadata is None:
            meta = constant("")
        elif hasattr(metadata, "SerializeToString"):
            meta = constant(metadata.SerializeToString())
        else:
            meta = convert_to_tensor(metadata, _dtypes.string)
        value = identity(tensor)
        return _write_op("WriteSummary",
                         [_resource(), _choose_step(step), value, _tag(tag), meta],
                         {"T": value.dtype}, scope)

    return summary_writer_function(name, tensor, function, family=family)


def graph(param, step=None, name=None):
    """Write a serialized GraphDef (a string tensor, e.g. a placeholder) to the default
    writer; not subject to the recording condition."""
    if not isinstance(param, Tensor):
        raise TypeError(f"graph() needs a argument `param` to be tf.Tensor (e.g. "
                        f"tf.placeholder) in graph mode, but received param={param} of type "
                        f"{type(param).__name__}.")
    if state.writer is None:
        return no_op()
    return write_graph(param, _choose_step(step), name=name)


def import_event(tensor, name=None):
    """Append serialized `Event` protos (a string tensor) to the default writer."""
    if state.writer is None:
        raise RuntimeError("tf.contrib.summary.import_event needs a default summary writer: "
                           "call it inside `with writer.as_default():`")
    return make_op("ImportEvent", [_resource(), convert_to_tensor(tensor, _dtypes.string)],
                   name=name)


def flush(writer=None, name=None):
    """An op flushing `writer` (the default writer if None; a no-op without one)."""
    del name
    if writer is None:
        writer = state.writer
        if writer is None:
            return no_op()
    if isinstance(writer, SummaryWriter):
        return writer.flush()
    raise ValueError(f"Invalid argument to flush(): {writer!r}")


def all_summary_ops() -> list:
    """The graph's ``tf.contrib.summary`` ops (collection ``_SUMMARY_V2``)."""
    return get_collection(GraphKeys._SUMMARY_COLLECTION)
