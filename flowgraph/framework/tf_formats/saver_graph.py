"""TensorFlow's saver subgraph in a GraphDef, and flowgraph's in its place.

TensorFlow's ``tf.train.Saver`` builds (scope ``save/``)::

    save/Const ─┬─> save/SaveV2(tensor_names, shape_and_slices, v0, v1, ...)
                └─> save/RestoreV2(tensor_names, shape_and_slices) ─:i─> save/Assign_i(v_i)
                                                   save/restore_all = NoOp(^save/Assign_*)

A flowgraph Saver builds these nodes in the program's graph too (it feeds the
``RestoreV2`` outputs from Python, `flowgraph.train.saver_restore`). Reading, the
checkpoint key of each variable is read from the ``RestoreV2`` node's ``tensor_names``
(`restore_keys`); the saver's nodes are kept (``import_meta_graph`` runs them,
`flowgraph.train.saver_by_name`) or left out (`drop_saver_nodes`: a SavedModel, whose
loader restores the variables itself), and so is any node depending on an op flowgraph
lacks. Writing, a flowgraph Saver's nodes are
replaced by TensorFlow's (`tf_saver_nodes`), so that TensorFlow's ``import_meta_graph``
+ ``restore`` work on flowgraph's ``.meta`` files.

Example
-------
>>> from flowgraph.framework.event_format import GraphDef
>>> from flowgraph.framework.tf_formats.graph_def import graph_def_to_dict
>>> nodes = tf_saver_nodes("save/", [("weights", "dense/w", 1, [2])], "model")
>>> [n.op for n in nodes][-3:]
['RestoreV2', 'Assign', 'NoOp']
>>> restore_keys(graph_def_to_dict(GraphDef(node=nodes)), "save/restore_all")
{'dense/w': 'weights'}
"""

from __future__ import annotations

import logging

import numpy as np

from flowgraph.framework import registry
from flowgraph.framework.event_format import AttrValue, NodeDef, shape_proto
from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.graph_def import tensor_proto

__all__ = ["SAVER_OPS", "drop_saver_nodes", "restore_keys", "restore_slice_specs", "saver_scope",
           "tf_saver_nodes", "tf_saver_tensor_names"]

logger = logging.getLogger("tensorflow")

# A graph may hold more savers than its SaverDef's (a training Saver as well).
SAVER_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "Save", "SaveSlices",
                       "Restore", "RestoreSlice", "ShardedFilename", "ShardedFilespec"})


def saver_scope(restore_op_name: str) -> str:
    """The name scope (with its ``/``) of the saver whose restore op is named so."""
    return restore_op_name.rpartition("/")[0] + "/" if "/" in restore_op_name else ""


def _source(ref: str) -> str:
    ref = ref.lstrip("^")
    return ref.rpartition(":")[0] if ":" in ref else ref


def drop_saver_nodes(graph_def: dict, scope: str, also_drop: frozenset = frozenset(),
                     keep_savers: bool = False) -> tuple[dict, list[str]]:
    """`graph_def` without the nodes in `scope` (``save/``), the savers' ops elsewhere,
    the nodes whose op flowgraph does not have or is in `also_drop`, and the nodes
    depending on any of them. With `keep_savers`, the savers' nodes stay (their ops run
    in flowgraph too) unless they depend on a node left out.

    Returns the new graph def and the names of the nodes dropped outside `scope` that
    are not savers' ops (so that a caller can say what was lost).
    """
    nodes = graph_def["node"]
    dropped = {n["name"] for n in nodes if not registry.has_op_def(n["op"])
               or n["op"] in also_drop
               or (not keep_savers and (n["op"] in SAVER_OPS
                                        or (scope and n["name"].startswith(scope))))}
    consumers: dict[str, list[str]] = {}
    for n in nodes:
        for ref in n.get("input", []):
            consumers.setdefault(_source(ref), []).append(n["name"])
    pending = list(dropped)
    while pending:
        for user in consumers.get(pending.pop(), ()):
            if user not in dropped:
                dropped.add(user)
                pending.append(user)
    lost = [n["name"] for n in nodes if n["name"] in dropped and n["op"] not in SAVER_OPS
            and not (scope and n["name"].startswith(scope))]
    return {**graph_def, "node": [n for n in nodes if n["name"] not in dropped]}, lost


def restore_keys(graph_def: dict, restore_op_name: str) -> dict[str, str]:
    """Variable op name -> checkpoint key, read from the ``Assign`` nodes of TensorFlow's
    saver (``save/Assign_i(v, save/RestoreV2:i)``) and the ``tensor_names`` constant of
    their ``RestoreV2`` node. Variables whose key cannot be read are left out."""
    return _restore_strings(graph_def, restore_op_name, 1)


def restore_slice_specs(graph_def: dict, restore_op_name: str) -> dict[str, str]:
    """Variable op name -> slice spec (``"200 3 0,67:0,3"``) of the parts of partitioned
    variables, read from the ``shape_and_slices`` constant of TensorFlow's ``RestoreV2``
    (whole variables, with an empty spec, are left out)."""
    return {k: v for k, v in _restore_strings(graph_def, restore_op_name, 2).items() if v}


def _restore_strings(graph_def: dict, restore_op_name: str, which: int) -> dict[str, str]:
    # input `which` of each variable's RestoreV2 (1: tensor_names, 2: shape_and_slices)
    by_name = {n["name"]: n for n in graph_def["node"]}
    restore = by_name.get(restore_op_name)
    if restore is None:
        return {}
    out: dict[str, str] = {}
    for assign in _restore_assigns(by_name, restore):
        var_ref, value_ref = assign["input"][0], assign["input"][1]
        source, _, index = value_ref.partition(":")
        reader = by_name.get(source)
        if reader is not None and reader["op"] == "Identity" and reader.get("input"):
            # A resource variable's restore reads through an Identity.
            source, _, index = reader["input"][0].partition(":")
            reader = by_name.get(source)
        if reader is None or reader["op"] != "RestoreV2" or len(reader["input"]) <= which:
            continue
        names = by_name.get(_source(reader["input"][which]))
        if names is None or names["op"] != "Const" or "value" not in names.get("attr", {}):
            continue
        try:
            keys = np.asarray(decode_attr(names["attr"]["value"])).reshape(-1)
            key = keys[int(index or 0)]
        except (TypeError, ValueError, KeyError, IndexError):
            continue
        key = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
        out[_source(var_ref)] = key
    return out


def _restore_assigns(by_name: dict, restore: dict) -> list[dict]:
    """The ``Assign`` (``AssignVariableOp``) nodes a restore op depends on, directly or
    through ``NoOp`` groups (a sharded saver's ``save/restore_all`` groups one
    ``save/restore_shard`` per device, as TensorFlow's SavedModel builder writes it)."""
    out, seen, pending = [], set(), list(restore.get("input", []))
    while pending:
        node = by_name.get(_source(pending.pop(0)))
        if node is None or node["name"] in seen:
            continue
        seen.add(node["name"])
        if node["op"] == "NoOp":
            pending.extend(node.get("input", []))
        elif node["op"] in ("Assign", "AssignVariableOp") and \
                len(node.get("input", [])) >= 2:  # a reference or a resource variable
            out.append(node)
    return out


def _const(name: str, value, device: str = "") -> NodeDef:
    proto = tensor_proto(np.asarray(value, dtype=object) if np.asarray(value).dtype.kind
                         in "SUO" else value)
    return NodeDef(name=name, op="Const", device=device or None,
                   attr={"dtype": AttrValue(type=int(proto.dtype)),
                         "value": AttrValue(tensor=proto)})


def tf_saver_nodes(scope: str, entries, filename: str, taken=frozenset(),
                   restore_name: str | None = None, sharded: bool = False) -> list[NodeDef]:
    """TensorFlow's V2 saver nodes (as TensorFlow 1.x's ``Saver`` builds them) for
    `entries`: ``(checkpoint key, variable op name, DataType number, shape list[, slice
    spec[, handle op name[, device]]])`` rows, sorted by key; a part of a partitioned
    variable has its full name as key and its slice spec (``"10 3 0,4:0,3"``); a resource
    variable names its read as variable and its ``VarHandleOp`` as handle (restored by
    ``AssignVariableOp``); `filename` is the default of the filename tensor. Names already
    in `taken` (the graph's other nodes: another saver's in the same scope) get
    TensorFlow's suffixes (``save/Const_1``); the restore op is `restore_name` when given.
    With `sharded`, TensorFlow's sharded saver: one ``SaveV2`` per device of the variables
    (the row's canonical device) writing a temporary shard, ``MergeV2Checkpoints`` into the
    prefix, and one ``RestoreV2`` + ``save/restore_shard`` per device (see
    `_sharded_nodes`). `tf_saver_tensor_names` reads the SaverDef's names back."""
    entries = sorted((*row, "", "", "")[:7] for row in entries)
    string = AttrValue(type=7)
    scalar = AttrValue(shape=shape_proto([]))
    used = set(taken)
    prefixes = {name.rsplit("/", k)[0] for name in used for k in range(1, name.count("/") + 1)}

    def fresh(base: str) -> str:  # TensorFlow's unique names: Assign, Assign_1, ...
        name, n = f"{scope}{base}", 0
        while name in used or name in prefixes:
            n += 1
            name = f"{scope}{base}_{n}"
        used.add(name)
        return name

    filename_op, const = fresh("filename"), fresh("Const")
    out = [
        _const(f"{filename_op}/input", np.array(filename.encode("utf-8"), dtype=object)),
        NodeDef(name=filename_op, op="PlaceholderWithDefault",
                input=[filename_op + "/input"], attr={"dtype": string, "shape": scalar}),
        NodeDef(name=const, op="PlaceholderWithDefault", input=[filename_op],
                attr={"dtype": string, "shape": scalar}),
    ]
    if sharded and entries:  # (a saver of iterators alone has no entries here: no shards)
        return out + _sharded_nodes(entries, const, fresh, restore_name)
    restore_op = ""
    for op in ("SaveV2", "RestoreV2"):
        device = "/device:CPU:0" if op == "RestoreV2" else ""
        name = _save_or_restore(out, op, fresh, const, entries, device)
        if op == "SaveV2":
            out.append(_control_dependency(fresh("control_dependency"), const, name))
        else:
            restore_op = name
    assigns = _assign_nodes(out, entries, restore_op, fresh)
    out.append(NodeDef(name=restore_name or fresh("restore_all"), op="NoOp",
                       input=[f"^{a}" for a in sorted(assigns)]))
    return out


def _save_or_restore(out: list, op: str, fresh, prefix: str, entries, device: str) -> str:
    """Append a ``SaveV2`` (of the rows' variables) or ``RestoreV2`` node reading or
    writing `prefix`, with its constants, on `device`; returns its name."""
    name = fresh(op)
    keys = [row[0].encode("utf-8") for row in entries]
    specs = [row[4].encode("utf-8") for row in entries]
    out.append(_const(f"{name}/tensor_names", np.array(keys, dtype=object), device))
    out.append(_const(f"{name}/shape_and_slices", np.array(specs, dtype=object), device))
    inputs = [prefix, f"{name}/tensor_names", f"{name}/shape_and_slices"]
    if op == "SaveV2":
        inputs += [row[1] for row in entries]
    dtypes = AttrValue(list=AttrValue.ListValue(type=[int(row[2]) for row in entries]))
    out.append(NodeDef(name=name, op=op, input=inputs, device=device or None,
                       attr={"dtypes": dtypes}))
    return name


def _control_dependency(name: str, source: str, after: str, device: str = "") -> NodeDef:
    """``Identity(source, ^after)``, colocated with `source` (the tensor a save returns)."""
    return NodeDef(name=name, op="Identity", input=[source, f"^{after}"],
                   device=device or None,
                   attr={"T": AttrValue(type=7), "_class": AttrValue(
                       list=AttrValue.ListValue(s=[f"loc:@{source}".encode()]))})


def _assign_nodes(out: list, entries, restore_op: str, fresh, device: str = "") -> list[str]:
    """Append the ops assigning output i of `restore_op` to row i's variable; returns
    their names."""
    assigns = []
    for i, (_, var, dtype, shape, _, handle, _) in enumerate(entries):
        restored = restore_op + (f":{i}" if i else "")
        if handle:  # a resource variable: AssignVariableOp(handle, Identity(restored))
            ident, name = fresh("Identity"), fresh("AssignVariableOp")
            out.append(NodeDef(name=ident, op="Identity", input=[restored],
                               device=device or None, attr={"T": AttrValue(type=int(dtype))}))
            out.append(NodeDef(name=name, op="AssignVariableOp", input=[handle, ident],
                               device=device or None,
                               attr={"dtype": AttrValue(type=int(dtype)),
                                     "validate_shape": AttrValue(b=False)}))
            assigns.append(name)
            continue
        name = fresh("Assign")
        assigns.append(name)
        out.append(NodeDef(
            name=name, op="Assign", input=[var, restored], device=device or None,
            attr={"T": AttrValue(type=int(dtype)),  # keys in protobuf's sorted order
                  "_class": AttrValue(list=AttrValue.ListValue(s=[f"loc:@{var}".encode()])),
                  "use_locking": AttrValue(b=True),
                  "validate_shape": AttrValue(b=shape is not None)}))
    return assigns


def _cpu0(device: str) -> str:
    """`device` (canonical) with device type CPU and index 0, where TensorFlow's sharded
    saver runs a shard's file ops: ``/job:ps/task:1`` -> ``/job:ps/task:1/device:CPU:0``."""
    return device.split("/device:")[0] + "/device:CPU:0"


def _sharded_nodes(entries, const: str, fresh, restore_name: str | None) -> list[NodeDef]:
    """TensorFlow's sharded save and restore after the filename nodes, shards by device
    in the order of the device names::

        save/StringJoin = Const + (".part" or, for s3://, "_temp/part")  temporary prefix
        save/ShardedFilename[_i] -> save/SaveV2[_i] -> save/control_dependency[_i]
        save/MergeV2Checkpoints(Pack(shard files), save/Const) -> save/Identity
        save/RestoreV2[_i] -> save/Assign... -> save/restore_shard[_i] -> save/restore_all
    """
    string = AttrValue(type=7)
    shards: dict[str, list] = {}
    for row in entries:
        shards.setdefault(row[6], []).append(row)
    devices = sorted(shards)
    anywhere = "/device:CPU:*"
    regex, part, temp = fresh("StaticRegexFullMatch"), fresh("Const"), fresh("Const")
    select, join, num = fresh("Select"), fresh("StringJoin"), fresh("num_shards")
    out = [
        NodeDef(name=regex, op="StaticRegexFullMatch", input=[const], device=anywhere,
                attr={"pattern": AttrValue(s=b"^s3://.*")}),
        _const(part, np.array(b".part", dtype=object), anywhere),
        _const(temp, np.array(b"_temp/part", dtype=object), anywhere),
        NodeDef(name=select, op="Select", input=[regex, part, temp], device=anywhere,
                attr={"T": string}),
        NodeDef(name=join, op="StringJoin", input=[const, select], device=anywhere,
                attr={"N": AttrValue(i=2), "separator": AttrValue(s=b"")}),
        _const(num, np.array(len(devices), dtype=np.int32)),
    ]
    files, saved = [], []
    for k, device in enumerate(devices):
        cpu = _cpu0(device)
        shard_file = fresh("ShardedFilename")
        out.append(_const(f"{shard_file}/shard", np.array(k, dtype=np.int32), cpu))
        out.append(NodeDef(name=shard_file, op="ShardedFilename",
                           input=[join, f"{shard_file}/shard", num], device=cpu))
        save = _save_or_restore(out, "SaveV2", fresh, shard_file, shards[device], cpu)
        saved.append(fresh("control_dependency"))
        out.append(_control_dependency(saved[-1], shard_file, save, cpu))
        files.append(shard_file)
    last = _cpu0(devices[-1])
    pack = fresh("MergeV2Checkpoints") + "/checkpoint_prefixes"
    out.append(NodeDef(name=pack, op="Pack", input=files + [f"^{c}" for c in saved],
                       device=last, attr={"N": AttrValue(i=len(files)), "T": string,
                                          "axis": AttrValue(i=0)}))
    merge = pack.rpartition("/")[0]
    out.append(NodeDef(name=merge, op="MergeV2Checkpoints", input=[pack, const], device=last,
                       attr={"allow_missing_files": AttrValue(b=False),
                             "delete_old_dirs": AttrValue(b=True)}))
    out.append(NodeDef(name=fresh("Identity"), op="Identity",
                       input=[const, f"^{merge}", *[f"^{c}" for c in saved]], device=last,
                       attr={"T": string}))
    restores = []
    for device in devices:
        rows = shards[device]
        restore = _save_or_restore(out, "RestoreV2", fresh, const, rows, _cpu0(device))
        assigns = _assign_nodes(out, rows, restore, fresh, device)
        restores.append((fresh("restore_shard"), device))
        out.append(NodeDef(name=restores[-1][0], op="NoOp", device=device or None,
                           input=[f"^{a}" for a in assigns]))
    restore_all = restore_name or fresh("restore_all")
    if len(restores) == 1:  # tf.group on one device: one NoOp
        out.append(NodeDef(name=restore_all, op="NoOp", input=[f"^{restores[0][0]}"]))
        return out
    groups = []
    for k, (shard, device) in enumerate(restores):  # tf.group: one NoOp per device
        groups.append(f"{restore_all}/NoOp" + (f"_{k}" if k else ""))
        out.append(NodeDef(name=groups[-1], op="NoOp", input=[f"^{shard}"],
                           device=device or None))
    out.append(NodeDef(name=restore_all, op="NoOp", input=[f"^{g}" for g in groups]))
    return out


def tf_saver_tensor_names(nodes: list[NodeDef]) -> tuple[str, str, str]:
    """``(filename_tensor_name, save_tensor_name, restore_op_name)`` of the saver nodes
    `tf_saver_nodes` made."""
    # (sharded: save/Identity, after the merge; else save/control_dependency)
    save = next(n for n in nodes if n.op == "Identity" and n.input[0] == nodes[2].name
                and any(r.startswith("^") for r in n.input))
    return f"{nodes[2].name}:0", f"{save.name}:0", nodes[-1].name
