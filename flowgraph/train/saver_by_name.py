"""A `tf.train.Saver` over a saver subgraph that is already in the graph: TensorFlow's
``save/`` nodes (``SaveV2``/``RestoreV2``, ``MergeV2Checkpoints`` for a sharded one),
imported from a ``.meta`` file or a GraphDef, driven through the names its ``SaverDef``
records::

    save/Const:0 (filename_tensor_name)  ──> save/SaveV2 ──> save/control_dependency:0
                                          └─> save/RestoreV2 ─:i─> save/Assign_i
                                                          save/restore_all (restore_op_name)

Saving runs ``save_tensor_name`` with the checkpoint prefix fed to
``filename_tensor_name`` (the kernels write the files); restoring runs
``restore_op_name`` the same way. A program that drives these names itself
(``sess.run(saver_def.restore_op_name, {saver_def.filename_tensor_name: path})``, as a
C++ deploy script or a serving loader does) gets the same effect. `tf.train.Saver`
adopts such a subgraph when it is given a ``saver_def`` whose names the graph holds
(`tf.train.import_meta_graph` and `Saver.from_proto` do so).

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         path = tf.train.Saver().save(sess, os.path.join(d, "model.ckpt"))
>>> with tf.Graph().as_default() as g, tf.Session() as sess:
...     sd = tf.train.import_meta_graph(path + ".meta").saver_def
...     sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})
...     print(sess.run("v:0"))
[1. 2.]
"""

from __future__ import annotations

from typing import NamedTuple

from flowgraph.framework import errors
from flowgraph.framework.operation import Operation, Tensor

__all__ = ["GraphSaver", "find_graph_saver", "wrap_restore_error"]


class GraphSaver(NamedTuple):
    """The elements of a saver subgraph that a `SaverDef` names (its names scoped)."""

    restore_op: Operation
    filename: Tensor
    save_tensor: Tensor
    names: dict  # filename_tensor_name, save_tensor_name, restore_op_name


def _scoped(name: str, scope: str | None) -> str:
    if not scope:
        return name
    return f"{scope.rstrip('/')}/{name}"


def find_graph_saver(graph, saver_def, scope: str | None = None) -> GraphSaver | None:
    """The saver subgraph of `graph` that `saver_def` names (each name under `scope`, as
    TensorFlow prefixes an import scope), or None when the graph lacks one of its
    elements, or when the restore op is a flowgraph Saver's (restored from Python, it
    cannot be driven by name)."""
    names = {field: _scoped(getattr(saver_def, field, "") or "", scope)
             for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name")}
    if not all(names.values()):
        return None
    if names["restore_op_name"] in graph.__dict__.get("_saver_entries", {}):
        return None
    try:
        restore_op = graph.get_operation_by_name(names["restore_op_name"])
        filename = graph.get_tensor_by_name(names["filename_tensor_name"])
        save_tensor = graph.get_tensor_by_name(names["save_tensor_name"])
    except (KeyError, ValueError):
        return None
    if not _reads_checkpoints(restore_op):
        return None
    return GraphSaver(restore_op, filename, save_tensor, names)


def _reads_checkpoints(restore_op: Operation) -> bool:
    """Whether `restore_op` runs an op that reads checkpoint files (``RestoreV2``, or the
    V1 format's ``Restore``/``RestoreSlice``), through its inputs and control inputs."""
    seen, pending = set(), [restore_op]
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in ("RestoreV2", "Restore", "RestoreSlice"):
            return True
        if op.type == "Placeholder":  # a flowgraph Saver's value, fed from Python
            return False
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return False


def wrap_restore_error(e: errors.OpError) -> errors.OpError:
    """`e` (raised by a saver subgraph's restore op) with TensorFlow's explanation in
    front: a key missing from the checkpoint, or a value that does not fit its
    variable."""
    why = ("a Variable name or other graph key that is missing"
           if isinstance(e, errors.NotFoundError)
           else "a mismatch between the current graph and the graph")
    message = (f"Restoring from checkpoint failed. This is most likely due to {why} from "
               "the checkpoint. Please ensure that you have not altered the graph expected "
               f"based on the checkpoint. Original error:\n\n{e.message}")
    return type(e)(getattr(e, "node_def", None), getattr(e, "op", None), message)
