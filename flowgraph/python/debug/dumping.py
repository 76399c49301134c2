"""tfdbg's file-dumping wrappers: `DumpingDebugWrapperSession` and `DumpingDebugHook`.

Each watched run writes ``session_root/run_<micros>_<count>/`` as TensorFlow's tfdbg
does: a ``_tfdbg_device_,job_localhost,replica_0,task_0,device_CPU_0`` folder holding,
per output of every op the run executes, ``<op name>_<slot>_DebugIdentity_<micros>`` (an
``Event`` whose summary value is the tensor, tagged ``op:slot:DebugIdentity``; an op
name's ``/`` are folders) and the run's graph (``_tfdbg_graph_<hash>_<micros>``), and a
``_tfdbg_core_metadata_sessionrun<index>_<micros>`` event naming the run's fetches and
feeds. `flowgraph.python.debug.debug_data.DebugDumpDir` reads it back.

The outputs are fetched with the run's own fetches, so they are the values of that
step; ops inside ``tf.cond``/``tf.while_loop`` bodies are not watched.

Example
-------
>>> import tempfile, flowgraph as tf
>>> from flowgraph.python import debug as tf_debug
>>> y = tf.log(tf.constant([1.0, -1.0]), name="y")
>>> root = tempfile.mkdtemp()
>>> with tf.Session() as s:
...     sess = tf_debug.DumpingDebugWrapperSession(s, root)
...     _ = sess.run(y)
>>> dump = tf_debug.DebugDumpDir(os.path.join(root, os.listdir(root)[0]))
>>> [(d.node_name, d.output_slot) for d in dump.find(tf_debug.has_inf_or_nan)]
[('y', 0)]
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

from flowgraph.framework.event_messages import (
    Event,
    LogMessage,
    Summary,
    make_tensor_proto,
)
from flowgraph.framework.graph import Operation, Tensor
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["DEVICE_DIR", "DumpingDebugHook", "DumpingDebugWrapperSession"]

DEVICE_DIR = "_tfdbg_device_,job_localhost,replica_0,task_0,device_CPU_0"
_UNWATCHED_TYPES = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                    "RefSwitch", "RefMerge", "RefEnter", "RefExit", "RefNextIteration"}
_UNDUMPED_DTYPES = {"resource", "variant", "string"}


def _flatten(fetches) -> list:
    if isinstance(fetches, dict):
        return [x for v in fetches.values() for x in _flatten(v)]
    if isinstance(fetches, list | tuple):
        return [x for v in fetches for x in _flatten(v)]
    return [fetches]


def _watched_tensors(graph, fetches, feed_dict) -> list[Tensor]:
    """The outputs of the ops a run of `fetches` executes, in graph order."""
    fed = set()
    for key in (feed_dict or {}):
        if isinstance(key, Tensor):
            fed.add(key.op.name)
    todo = []
    for f in _flatten(fetches):
        if isinstance(f, str):
            f = graph.as_graph_element(f)
        if isinstance(f, Tensor):
            todo.append(f.op)
        elif isinstance(f, Operation):
            todo.append(f)
        elif hasattr(f, "op"):  # a variable
            todo.append(f.op)
    needed: set[str] = set()
    while todo:
        op = todo.pop()
        if op.name in needed:
            continue
        needed.add(op.name)
        if op.name in fed:
            continue
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    out = []
    for op in graph.get_operations():
        if (op.name not in needed or op.type in _UNWATCHED_TYPES
                or getattr(op, "_control_flow_context", None) is not None):
            continue
        out.extend(t for t in op.outputs if t.dtype.base_dtype.name not in _UNDUMPED_DTYPES)
    return out


def _write_event(path: str, event: Event) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(event.SerializeToString())


class _Dumper:
    """Writes one run's dumps under `session_root` (see the module docstring)."""

    def __init__(self, session_root: str) -> None:
        if os.path.isfile(session_root):
            raise ValueError(f"session_root path points to a file: {session_root}")
        os.makedirs(session_root, exist_ok=True)
        self.session_root = session_root
        self.run_count = 0

    def dump(self, graph, tensors, values, fetches, feed_dict) -> str:
        micros = int(time.time() * 1e6)
        run_dir = os.path.join(self.session_root, f"run_{micros}_{self.run_count}")
        self.run_count += 1
        device_dir = os.path.join(run_dir, DEVICE_DIR)
        os.makedirs(device_dir, exist_ok=True)
        gd = graph.as_graph_def().SerializeToString()
        with open(os.path.join(device_dir, f"_tfdbg_graph_{hash(gd) & 0xFFFFFFFF}_{micros}"),
                  "wb") as f:
            f.write(gd)
        meta = {"global_step": -1, "session_run_index": self.run_count,
                "executor_step_index": 0,
                "input_names": [getattr(k, "name", str(k)) for k in (feed_dict or {})],
                "output_names": [getattr(f, "name", str(f)) for f in _flatten(fetches)],
                "target_nodes": [], "run_fetches_info": repr(fetches),
                "run_feed_keys_info": repr((feed_dict or {}).keys())}
        _write_event(
            os.path.join(run_dir, "_tfdbg_core_metadata_sessionrun"
                                  f"{self.run_count:014d}_{micros}"),
            Event(wall_time=micros / 1e6, log_message=LogMessage(message=json.dumps(meta))))
        for t, v in zip(tensors, values, strict=True):
            node, slot = t.op.name, t.value_index
            stamp = int(time.time() * 1e6)
            value = Summary.Value(node_name=f"{node}:{slot}:DebugIdentity",
                                  tensor=make_tensor_proto(np.asarray(v)))
            _write_event(os.path.join(device_dir, f"{node}_{slot}_DebugIdentity_{stamp}"),
                         Event(wall_time=stamp / 1e6, summary=Summary(value=[value])))
        return run_dir


class DumpingDebugWrapperSession:
    """A session whose every `run` also dumps the outputs of the ops it executes to
    ``session_root`` (tfdbg's file format; see the module docstring)."""

    def __init__(self, sess, session_root, watch_fn=None, thread_name_filter=None,
                 pass_through_operrors=None, log_usage=True) -> None:
        self._sess = sess
        self._dumper = _Dumper(session_root)
        self._watch_fn = watch_fn

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return getattr(self._sess, "sess_str", "")

    @property
    def session(self):
        return self._sess

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        tensors = _watched_tensors(self._sess.graph, fetches, feed_dict)
        result, values = self._sess.run([fetches, tensors], feed_dict=feed_dict,
                                        options=options, run_metadata=run_metadata)
        self._dumper.dump(self._sess.graph, tensors, values, fetches, feed_dict)
        return result

    def close(self) -> None:
        self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getattr__(self, name):
        return getattr(self._sess, name)


class DumpingDebugHook(SessionRunHook):
    """A `SessionRunHook` dumping, at every step, the outputs of the ops the step
    executes to ``session_root`` (as `DumpingDebugWrapperSession`)."""

    def __init__(self, session_root, watch_fn=None, thread_name_filter=None,
                 log_usage=True) -> None:
        self._session_root = session_root
        self._dumper: _Dumper | None = None
        self._tensors: list = []

    def begin(self) -> None:
        if self._dumper is None:
            self._dumper = _Dumper(self._session_root)

    def before_run(self, run_context):
        args = run_context.original_args
        graph = run_context.session.graph
        self._tensors = _watched_tensors(graph, args.fetches, args.feed_dict)
        return SessionRunArgs(fetches=self._tensors)

    def after_run(self, run_context, run_values) -> None:
        args = run_context.original_args
        self._dumper.dump(run_context.session.graph, self._tensors, run_values.results,
                          args.fetches, args.feed_dict)
