"""A `tf.train.Saver`'s restore graph, and the values fed to it from a checkpoint.

Restoring is an op of the graph, so it runs in any session of that graph. The Saver's
name scope (``save/``) holds TensorFlow's saver ops (`build_tf_saver_ops`, from
`tf_formats.saver_graph.tf_saver_nodes`; sharded, one shard per device)::

    save/Const               the filename (PlaceholderWithDefault of save/filename)
    save/SaveV2, save/control_dependency   the save tensor (sharded: save/Identity)
    save/RestoreV2           RestoreV2, output i per variable (or part), fed from Python
    save/Assign[_i]          Assign(variable, save/RestoreV2:i), colocated with it
    save/restore_all         NoOp grouping the Assigns

A graph whose variables include a mirrored (`tf.distribute`) or saveable-object entry
gets the older form instead: a placeholder per entry (``save/RestoreV2[_i]``), a constant
``save/Const``.

`restore_feed` reads the checkpoint and checks every value before anything runs: the
key is present, the dtype and the shape match (errors name the variable, the shapes and
the file); a part of a partitioned variable is read as its region of the tensor stored
under its full name, assembled from whichever saved slices cover it, whatever
partitioning, or none, wrote it (a region they do not cover is refused, naming the file,
the key and the region).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     v = tf.Variable([1.0], name="v")
...     rg = build_restore_graph(g, [("v", v._ref(), None)], "save", "model", False)
>>> rg.restore_op.name, [p.op.name for _, _, p in rg.entries]
('save/restore_all', ['save/RestoreV2'])
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.train.checkpoint_utils import CheckpointReader
from flowgraph.train.saver_entries import slice_offset

__all__ = ["RestoreGraph", "build_restore_graph", "restore_feed"]


class RestoreGraph(NamedTuple):
    """What `build_restore_graph` made: ``(key, variable ref, placeholder)`` entries and
    their SaveSliceInfos (None for a whole variable), in the order of the Assigns."""

    entries: list
    slice_infos: list
    restore_op: Operation
    filename: Tensor
    save_tensor: Tensor
    scope: str


def build_restore_graph(graph, rows, name: str, filename: str, reshape: bool,
                        tf_rows=None, sharded: bool = False) -> RestoreGraph:
    """Build the restore ops for `rows` (`saver_entries.saveable_entries`) in `graph`
    under name scope `name`; `filename` is the default checkpoint name. With `reshape`
    the Assigns do not check shapes (a value of another shape with the same number of
    elements is reshaped before it is fed).

    Given `tf_rows` (`tf_formats.saver_graph.tf_saver_nodes`'s rows, one per row of
    `rows`), the graph gets TensorFlow's saver ops instead (sharded or not, as
    TensorFlow builds them: `build_tf_saver_ops`), and the entries' values are the
    ``RestoreV2`` outputs that Python feeds; a graph whose variables include a mirrored
    (`tf.distribute`) or saveable-object entry keeps the placeholders."""
    mirrors = graph.__dict__.get("_mirrored_restores", {})
    if tf_rows is not None and not mirrors and not any(
            getattr(ref, "_saveable_restore", None) is not None for _, ref, _ in rows):
        return build_tf_saver_ops(graph, rows, tf_rows, name, filename, sharded)
    from flowgraph.ops.array_ops import identity, placeholder
    from flowgraph.ops.control_flow_ops import group
    from flowgraph.ops.resource_variable_ops import assign_variable_op
    from flowgraph.ops.state_ops import assign

    entries, infos = [], []
    with graph.as_default(), graph.control_dependencies(None), \
            graph.name_scope(name) as scope:
        filename_tensor = constant(filename, name="Const")
        save_tensor = identity(filename_tensor, name="control_dependency")
        assigns = []
        saveables: dict = {}  # id -> (saveable object, {spec index: placeholder})
        # A mirrored variable (tf.distribute) is saved from its first copy and restores
        # every copy from that value.
        mirrors = graph.__dict__.get("_mirrored_restores", {})
        for key, ref, info in sorted(rows, key=lambda r: (r[0], slice_offset(r[2]))):
            dtype = ref.dtype.base_dtype
            value = placeholder(dtype, ref.shape, name="RestoreV2")
            validate = not reshape and ref.shape.is_fully_defined()
            owner = getattr(ref, "_saveable_restore", None)
            if owner is not None:  # a saveable object's spec: restored by its owner
                saveables.setdefault(id(owner[0]), (owner[0], {}))[1][owner[1]] = value
                entries.append((key, ref, value))
                infos.append(info)
                continue
            for target in [ref, *[_restore_ref(c) for c in mirrors.get(ref, ())]]:
                with graph.colocate_with(target.op):
                    if target.op.type == "ReadVariableOp":  # a resource variable's read
                        assigns.append(assign_variable_op(target.op.inputs[0], value,
                                                          name="AssignVariableOp"))
                    else:
                        assigns.append(assign(target, value, validate_shape=validate,
                                              name="Assign"))
            entries.append((key, ref, value))
            infos.append(info)
        for saveable, values in saveables.values():
            assigns.append(saveable.restore([values[k] for k in sorted(values)], None))
        restore_op = group(*assigns, name="restore_all")
    return RestoreGraph(entries, infos, restore_op, filename_tensor, save_tensor, scope)


def build_tf_saver_ops(graph, rows, tf_rows, name: str, filename: str,
                       sharded: bool) -> RestoreGraph:
    """TensorFlow's saver ops (`tf_formats.saver_graph.tf_saver_nodes`) made in `graph`
    under the unique scope for `name`: ``save/Const`` (the filename), ``save/SaveV2``,
    ``save/RestoreV2`` + ``save/Assign_i`` under ``save/restore_all``, or the sharded
    graph. Running ``restore_all`` with the filename fed restores in the graph (a C++
    loader's way); `Saver.restore` feeds the ``RestoreV2`` outputs from Python instead,
    after checking each value (`restore_feed`)."""
    from flowgraph.framework.tf_formats.graph_def import attr_value
    from flowgraph.framework.tf_formats.saver_graph import (
        tf_saver_nodes,
        tf_saver_tensor_names,
    )

    with graph.as_default(), graph.name_scope(name) as scope:
        pass
    nodes = tf_saver_nodes(scope, tf_rows, filename, {op.name for op in graph.get_operations()},
                           sharded=sharded)
    made: dict[str, Operation] = {}

    def tensor(ref: str) -> Tensor:
        op_name, _, index = ref.partition(":")
        op = made.get(op_name) or graph.get_operation_by_name(op_name)
        return op.outputs[int(index or 0)]

    with graph.as_default(), graph.control_dependencies(None), \
            graph.colocate_with(None, ignore_existing=True):
        for node in nodes:
            data = [tensor(r) for r in node.input if not r.startswith("^")]
            ctrl = [made[r[1:]] for r in node.input if r.startswith("^")]
            # (TensorFlow's save/Identity waits on the shards, then on the merge)
            ctrl.sort(key=lambda c: c.type == "MergeV2Checkpoints")
            attrs = {k: attr_value(v) for k, v in node.attr.items() if k != "_class"}
            with graph.control_dependencies(ctrl):
                op = graph.create_op(node.op, data, attrs, name=f"{node.name}/")
            op._device = node.device or ""
            if "_class" in node.attr:
                op._colocation = sorted(c.decode()[len("loc:@"):]
                                        for c in node.attr["_class"].list.s)
            made[node.name] = op
    restored: dict[str, Tensor] = {}  # variable (or handle) op name -> RestoreV2 output
    for op in made.values():
        if op.type == "Assign":
            restored[op.inputs[0].op.name] = op.inputs[1]
        elif op.type == "AssignVariableOp":  # through an Identity of the output
            restored[op.inputs[0].op.name] = op.inputs[1].op.inputs[0]
    entries, infos = [], []
    for (key, ref, info), row in zip(rows, tf_rows):
        entries.append((key, ref, restored[row[5] or row[1]]))
        infos.append(info)
    file_name, save_name, restore_name = tf_saver_tensor_names(nodes)
    return RestoreGraph(entries, infos, made[restore_name], tensor(file_name),
                        tensor(save_name), scope)


def _restore_ref(var):
    """The tensor a Saver restores `var` through (a resource variable's read)."""
    return var._as_graph_element() if hasattr(var, "handle") else var._ref()


def _op_name_of(ref) -> str:
    """The variable's op name for saved tensor `ref` (a resource variable's read: its
    handle's)."""
    return ref.op.inputs[0].op.name if ref.op.type == "ReadVariableOp" else ref.op.name


def restore_feed(reader: CheckpointReader, entries, slice_infos, path: str,
                 reshape: bool) -> dict:
    """Placeholder -> value for each of a Saver's `entries`, read from `reader` (the
    checkpoint at `path`) and checked. Raises NotFoundError for a missing key and
    InvalidArgumentError for a dtype or shape that does not match."""
    feed, wholes = {}, {}
    for (key, ref, placeholder), info in zip(entries, slice_infos):
        if info is None:
            if not reader.has_tensor(key):
                key = (_head_scope_legacy_key(reader, key)
                       or _unscoped_slot_key(reader, key) or key)
            feed[placeholder] = _checked_value(reader, key, ref, path, reshape,
                                               value=placeholder)
        elif not reader.has_tensor(key) and reader.has_tensor(own := _op_name_of(ref)):
            # an older flowgraph checkpoint: one entry per part, by its own name
            feed[placeholder] = _checked_value(reader, own, ref, path, reshape,
                                               value=placeholder)
        elif not reader.has_tensor(key) and (whole := _whole_slot_key(reader, key, info)):
            # a checkpoint written before the variable was partitioned (flowgraph's
            # canned linear models until session 12, DNN ones until session 15): the
            # slot saved whole as `A/S`
            feed[placeholder] = _part_value(reader, whole, ref, info, path, wholes,
                                            placeholder)
        else:
            feed[placeholder] = _part_value(reader, key, ref, info, path, wholes,
                                            placeholder)
    return feed


_PART_SLOT = re.compile(r"^(.+)/[^/]+/([^/]+)$")
_HEAD_SCOPED = re.compile(r"^(?:.+/)?head/([^/]+)$")


def _whole_slot_key(reader, key: str, info) -> str | None:
    """For a partitioned slot saved as ``A/X/S`` (TensorFlow's key: ``X`` is ``part_k``,
    or ``t_k`` for a slot made inside a variable scope, as the canned DNN's), the key
    ``A/S`` under which an unpartitioned variable's slot of the same full shape was
    saved, when the checkpoint has it; else None."""
    m = _PART_SLOT.match(key)
    if m is None:
        return None
    whole = f"{m.group(1)}/{m.group(2)}"
    if not reader.has_tensor(whole) or list(reader.tensor_shape(whole)) != list(
            info.full_shape):
        return None
    return whole


def _head_scope_legacy_key(reader, key: str) -> str | None:
    """For a variable of a canned estimator's head scope (``dnn/head/beta1_power``, as
    TF's v1 heads name Adam's), the key ``training/beta1_power`` that flowgraph used
    until session 15, when the checkpoint has it; else None."""
    m = _HEAD_SCOPED.match(key)
    if m is None or not reader.has_tensor(old := f"training/{m.group(1)}"):
        return None
    return old


def _unscoped_slot_key(reader, key: str) -> str | None:
    """For a slot made inside a variable scope (``opt/dense/kernel/Adam``: TF's name, and
    flowgraph's since session 15), the key ``dense/kernel/Adam`` under which flowgraph
    saved it before, at the root: the longest tail of `key` that the checkpoint holds
    together with the variable it is a slot of (``dense/kernel``); else None."""
    parts = key.split("/")
    for start in range(1, len(parts) - 1):
        tail = "/".join(parts[start:])
        if reader.has_tensor(tail) and reader.has_tensor(tail.rsplit("/", 1)[0]):
            return tail
    return None


def _part_value(reader, key: str, ref: Tensor, info, path: str,
                wholes: dict, value: Tensor | None = None) -> np.ndarray:
    """The region of checkpoint tensor `key` that the partitioned variable's part `ref`
    holds, from whichever saved slices cover it (any partitioning, or none, may have
    written it; TensorFlow saves a partitioned slot as one slice of a full-shaped entry).
    A one-file flowgraph checkpoint holds whole tensors: that one is read once and cut."""
    declared = reader.tensor_shape(key) if reader.has_tensor(key) else None
    if declared is not None and list(declared) != list(info.full_shape):
        raise errors.InvalidArgumentError(
            None, None,
            f"Restoring partitioned variable '{key}' from checkpoint {path}: the "
            f"variable has full shape {list(info.full_shape)} but the checkpoint's "
            f"tensor has shape {list(declared)}. Build the graph that wrote the "
            "checkpoint.")
    get_slice = getattr(reader, "get_slice", None)
    if get_slice is not None:
        _checked_value(reader, key, ref, path, False, whole=None,  # presence and dtype
                       value=value)
        return get_slice(key, info.var_offset, info.var_shape)
    if key not in wholes:
        wholes[key] = _checked_value(reader, key, ref, path, False, whole=True,
                                     value=value)
    where = tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape))
    return wholes[key][where]


# TensorFlow's openings of a failed restore (graph and checkpoint disagree; a key is
# missing), each followed by the error of the op that failed.
_MISMATCH = ("Restoring from checkpoint failed. This is most likely due to a mismatch "
             "between the current graph and the graph from the checkpoint. ")
_MISSING = ("Restoring from checkpoint failed. This is most likely due to a Variable "
            "name or other graph key that is missing from the checkpoint. ")
_ORIGINAL = ("Please ensure that you have not altered the graph expected based on the "
             "checkpoint. Original error:\n\n")
# TensorFlow's names of dtypes in kernel errors (``DT_FLOAT`` is ``float``).
_KERNEL_DTYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _restore_error(cls, opening: str, core: str, op, hint: str):
    """A failed-restore error worded as TensorFlow's (its opening, the failing op's own
    message and node), with flowgraph's `hint` (variable, file, remedy) last."""
    name = op.name if op is not None else "save/RestoreV2"
    return cls(errors._NODE_DEF_OF_OP if op is not None else None, op,
               f"{opening}{_ORIGINAL}{core}\n\t [[{{{{node {name}}}}}]]\n{hint}")


def _assign_of(value: Tensor):
    """The restore op that assigns `value` (a RestoreV2 output), else its own op."""
    for op in value.consumers():
        if op.type in ("Assign", "AssignVariableOp"):
            return op
    return value.op


def _checked_value(reader: CheckpointReader, key: str, ref: Tensor, path: str,
                   reshape: bool, whole: bool | None = False,
                   value: Tensor | None = None) -> np.ndarray | None:
    """The checked tensor `key` for `ref`; `value` is the restore graph's tensor that
    takes it (its op, or the Assign it feeds, is the failing op of an error)."""
    op = value.op if value is not None else None
    if not reader.has_tensor(key):
        raise _restore_error(
            errors.NotFoundError, _MISSING, f"Key {key} not found in checkpoint", op,
            f"Variable '{_op_name_of(ref)}' is missing from checkpoint {path} (it has "
            f"{len(reader.get_variable_to_shape_map())} tensors; list them with "
            "tf.train.list_variables). Make sure the graph matches the one that wrote "
            "the checkpoint, or pass a var_list mapping checkpoint names to variables.")
    # The declared dtype and shape are checked before anything is read, so a file
    # declaring a huge tensor fails here without allocating it.
    dtype = ref.dtype.base_dtype
    found = reader.tensor_dtype(key)
    if found != dtype:
        def kernel_name(d):
            return _KERNEL_DTYPE_NAMES.get(d.name, d.name)
        raise _restore_error(
            errors.InvalidArgumentError, _MISMATCH,
            f"tensor_name = {key}; expected dtype {kernel_name(dtype)} does not equal "
            f"original dtype {kernel_name(found)}", op,
            f"Restoring variable '{_op_name_of(ref)}' from checkpoint {path}: tensor '{key}' "
            f"has dtype {found.name} in the checkpoint but the variable is {dtype.name}.")
    if whole is None:  # checks only: the caller reads a region
        return None
    if whole:  # the full tensor of a partitioned variable, checked by the caller
        return reader.get_tensor(key)
    shape, declared = ref.shape, reader.tensor_shape(key)
    reshaped = False
    if not shape.is_compatible_with(declared):
        reshaped = (reshape and shape.is_fully_defined()
                    and shape.num_elements() == int(np.prod(declared, dtype=object)))
        if not reshaped:
            def dims(d):
                return "[" + ",".join(str(n) for n in d) + "]"
            raise _restore_error(
                errors.InvalidArgumentError, _MISMATCH,
                "Assign requires shapes of both tensors to match. lhs shape= "
                f"{dims(shape.as_list())} rhs shape= {dims(declared)}",
                _assign_of(value) if value is not None else None,
                f"Restoring variable '{_op_name_of(ref)}' from checkpoint {path}: shape "
                f"mismatch, the variable has shape {shape} but tensor '{key}' in the "
                f"checkpoint has shape {list(declared)}. Build the graph that wrote the "
                "checkpoint, or pass reshape=True when only the layout differs.")
    value = reader.get_tensor(key)
    return value.reshape(shape.as_list()) if reshaped else value
