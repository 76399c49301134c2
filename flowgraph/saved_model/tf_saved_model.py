"""TensorFlow 1.x SavedModels (``saved_model.pb`` + ``variables/``), read into flowgraph's
own SavedModel classes (`flowgraph.saved_model.format`) so that
``tf.saved_model.loader.load`` loads them like flowgraph's.

``saved_model.pb`` is a ``SavedModel`` protobuf message: meta graphs, each with its tags,
its GraphDef, a SaverDef, collections (the variables as serialized ``VariableDef``s, the
main op) and signatures. The messages are decoded with flowgraph's wire code
(`event_format`); the GraphDef is converted by `tf_formats.graph_def`. Nothing in the
file is executed: the graph is imported op by op, registered flowgraph ops only.

TensorFlow's saver nodes (``save/SaveV2``, ``save/RestoreV2``, ...) are not flowgraph
ops: they and the nodes that depend on them are left out, and a small restore subgraph
(``flowgraph_restore/``: a placeholder and an ``Assign`` per variable, grouped by a
``NoOp``) takes their place; the values come from ``variables/variables`` (a TensorFlow
checkpoint, read by `tf_formats.bundle`).

Example
-------
>>> import os
>>> is_tf_saved_model(os.path.dirname(__file__))
False
"""

from __future__ import annotations

import os

from flowgraph.framework import errors, registry
from flowgraph.framework.event_format import GraphDef, Message, TensorShapeProto
from flowgraph.framework.tf_formats.graph_def import graph_def_to_dict
from flowgraph.saved_model import constants
from flowgraph.saved_model import format as fmt

__all__ = ["SAVED_MODEL_FILENAME_PB", "is_tf_saved_model", "read_tf_saved_model"]

SAVED_MODEL_FILENAME_PB = "saved_model.pb"
_RESTORE_SCOPE = "flowgraph_restore"
_VARIABLE_COLLECTIONS = ("variables", "trainable_variables", "global_step",
                         "local_variables", "model_variables", "moving_average_variables")
_MAIN_OP_COLLECTIONS = ("saved_model_main_op", "legacy_init_op")
# A graph may hold more savers than its SaverDef's (a training Saver as well).
_SAVER_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "Save", "SaveSlices",
                        "Restore", "RestoreSlice", "ShardedFilename", "ShardedFilespec"})


# -- TensorFlow's messages (field numbers of meta_graph.proto and saved_model.proto) ---
class TensorInfoProto(Message):
    FIELDS = ((1, "name", "string", False), (2, "dtype", "enum", False),
              (3, "tensor_shape", TensorShapeProto, False))


class SignatureDefProto(Message):
    FIELDS = ((1, "inputs", ("map", "string", TensorInfoProto), True),
              (2, "outputs", ("map", "string", TensorInfoProto), True),
              (3, "method_name", "string", False))


class MetaInfoDefProto(Message):
    FIELDS = ((1, "meta_graph_version", "string", False), (4, "tags", "string", True),
              (5, "tensorflow_version", "string", False))


class SaverDefProto(Message):
    FIELDS = ((1, "filename_tensor_name", "string", False),
              (2, "save_tensor_name", "string", False),
              (3, "restore_op_name", "string", False))


class _StringList(Message):
    FIELDS = ((1, "value", "bytes", True),)


class CollectionDefProto(Message):
    FIELDS = ((1, "node_list", _StringList, False), (2, "bytes_list", _StringList, False))


class VariableDefProto(Message):
    FIELDS = ((1, "variable_name", "string", False), (2, "initializer_name", "string", False),
              (3, "snapshot_name", "string", False), (5, "is_resource", "bool", False),
              (6, "initial_value_name", "string", False), (7, "trainable", "bool", False))


class AssetFileDefProto(Message):
    FIELDS = ((1, "tensor_info", TensorInfoProto, False), (2, "filename", "string", False))


class MetaGraphDefProto(Message):
    FIELDS = ((1, "meta_info_def", MetaInfoDefProto, False), (2, "graph_def", GraphDef, False),
              (3, "saver_def", SaverDefProto, False),
              (4, "collection_def", ("map", "string", CollectionDefProto), True),
              (5, "signature_def", ("map", "string", SignatureDefProto), True),
              (6, "asset_file_def", AssetFileDefProto, True))


class SavedModelProto(Message):
    FIELDS = ((1, "saved_model_schema_version", "int64", False),
              (2, "meta_graphs", MetaGraphDefProto, True))


# -- conversion ------------------------------------------------------------------------
def is_tf_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a TensorFlow SavedModel (``saved_model.pb``) and no
    flowgraph one (``saved_model.json``)."""
    export_dir = os.fspath(export_dir)
    return (os.path.isfile(os.path.join(export_dir, SAVED_MODEL_FILENAME_PB)) and not
            os.path.isfile(os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_JSON)))


def _text(raw) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def _tensor_info(info: TensorInfoProto) -> fmt.TensorInfo:
    shape = info.tensor_shape
    return fmt.TensorInfo(name=info.name, dtype=int(info.dtype), tensor_shape=fmt.TensorShapeProto(
        dim=[fmt.Dim(int(d.size)) for d in shape.dim], unknown_rank=bool(shape.unknown_rank)))


def _variables(mg: MetaGraphDefProto) -> list[fmt.VariableDef]:
    found: dict[str, tuple[VariableDefProto, list[str]]] = {}
    for key in _VARIABLE_COLLECTIONS:
        col = mg.collection_def.get(key)
        if col is None:
            continue
        for raw in col.bytes_list.value:
            vd = VariableDefProto.FromString(raw)
            if vd.is_resource:
                raise fmt.SavedModelFormatError(
                    f"variable {vd.variable_name} is a resource variable; flowgraph loads "
                    "TensorFlow SavedModels with reference (TF1) variables only")
            found.setdefault(vd.variable_name, (vd, []))[1].append(key)
    return [fmt.VariableDef(variable_name=name, initializer_name=vd.initializer_name,
                            snapshot_name=vd.snapshot_name,
                            initial_value_name=vd.initial_value_name,
                            trainable="trainable_variables" in keys, collections=keys)
            for name, (vd, keys) in found.items()]


def _drop_saver_nodes(graph_def: dict, saver_scope: str) -> dict:
    """The graph def without TensorFlow's saver subgraph: the nodes in `saver_scope`
    (``save/``), the savers' ops elsewhere, those flowgraph has no op for, and the nodes
    depending on them."""
    nodes = graph_def["node"]
    dropped = {n["name"] for n in nodes if not registry.has_op_def(n["op"])
               or n["op"] in _SAVER_OPS
               or (saver_scope and n["name"].startswith(saver_scope))}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n["name"] in dropped:
                continue
            for ref in n.get("input", []):
                src = ref.lstrip("^").rpartition(":")[0] or ref.lstrip("^")
                if src in dropped:
                    dropped.add(n["name"])
                    changed = True
                    break
    kept = [n for n in nodes if n["name"] not in dropped]
    return {**graph_def, "node": kept}


def _restore_subgraph(graph_def: dict, variables: list[fmt.VariableDef]) -> fmt.RestoreDef:
    by_name = {n["name"]: n for n in graph_def["node"]}
    entries, control = [], []
    for i, vd in enumerate(variables):
        op_name = vd.variable_name.rpartition(":")[0] or vd.variable_name
        node = by_name.get(op_name)
        if node is None or node["op"] not in ("VariableV2", "Variable"):
            raise fmt.SavedModelFormatError(
                f"variable {vd.variable_name} has no VariableV2 node in the graph")
        value, assign = f"{_RESTORE_SCOPE}/value_{i}", f"{_RESTORE_SCOPE}/assign_{i}"
        graph_def["node"].append({"name": value, "op": "Placeholder", "input": [],
                                  "attr": {"dtype": node["attr"]["dtype"],
                                           "shape": node["attr"]["shape"]}})
        graph_def["node"].append({"name": assign, "op": "Assign",
                                  "input": [f"{op_name}:0", f"{value}:0"],
                                  "attr": {"validate_shape": True, "use_locking": True}})
        control.append(f"^{assign}")
        entries.append(fmt.RestoreEntry(key=op_name, variable=f"{op_name}:0",
                                        placeholder=f"{value}:0"))
    graph_def["node"].append({"name": f"{_RESTORE_SCOPE}/restore_all", "op": "NoOp",
                              "input": control, "attr": {}})
    return fmt.RestoreDef(restore_op_name=f"{_RESTORE_SCOPE}/restore_all", entries=entries)


def _meta_graph(mg: MetaGraphDefProto) -> fmt.MetaGraphDef:
    restore_op = mg.saver_def.restore_op_name
    scope = restore_op.rpartition("/")[0] + "/" if "/" in restore_op else ""
    graph_def = _drop_saver_nodes(graph_def_to_dict(mg.graph_def), scope)
    variables = _variables(mg)
    restore = _restore_subgraph(graph_def, variables) if variables else None
    main_op = None
    for key in _MAIN_OP_COLLECTIONS:
        col = mg.collection_def.get(key)
        if col is not None and col.node_list.value:
            main_op = _text(col.node_list.value[0])
            break
    info = mg.meta_info_def
    return fmt.MetaGraphDef(
        meta_info_def=fmt.MetaInfoDef(tags=list(info.tags),
                                      meta_graph_version=info.meta_graph_version),
        graph_def=graph_def,
        signature_def={k: fmt.SignatureDef(
            inputs={n: _tensor_info(t) for n, t in s.inputs.items()},
            outputs={n: _tensor_info(t) for n, t in s.outputs.items()},
            method_name=s.method_name) for k, s in mg.signature_def.items()},
        saver_def=restore, variables=variables, main_op=main_op,
        asset_file_def=[fmt.AssetFileDef(tensor_info=_tensor_info(a.tensor_info),
                                         filename=a.filename) for a in mg.asset_file_def])


def read_tf_saved_model(export_dir) -> fmt.SavedModel:
    """The SavedModel in `export_dir`'s ``saved_model.pb``, as flowgraph's classes.

    Raises DataLossError naming the file when it is not a SavedModel message, and
    SavedModelFormatError for what flowgraph cannot load (resource variables).
    """
    path = os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME_PB)
    with open(path, "rb") as f:
        data = f.read()
    try:
        proto = SavedModelProto.FromString(data)
        if not proto.meta_graphs:
            raise ValueError("it holds no meta graph")
        graphs = [_meta_graph(mg) for mg in proto.meta_graphs]
    except fmt.SavedModelFormatError as e:
        raise fmt.SavedModelFormatError(f"Cannot load TensorFlow SavedModel {path}: {e}") \
            from None
    except (ValueError, UnicodeDecodeError, TypeError, KeyError) as e:
        raise errors.DataLossError(
            None, None, f"Unable to read TensorFlow SavedModel {path}: the file is "
            f"truncated or corrupted, or not a SavedModel ({type(e).__name__}: {e}).") \
            from None
    return fmt.SavedModel(
        saved_model_schema_version=int(proto.saved_model_schema_version), meta_graphs=graphs)
