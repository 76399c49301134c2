"""TensorFlow 1.x SavedModels (``saved_model.pb`` + ``variables/``), read into flowgraph's
own SavedModel classes (`flowgraph.saved_model.format`) so that
``tf.saved_model.loader.load`` loads them like flowgraph's.

``saved_model.pb`` is a ``SavedModel`` protobuf message: meta graphs, each with its tags,
its GraphDef, a SaverDef, collections (the variables as serialized ``VariableDef``s, the
main op) and signatures. The messages are decoded with flowgraph's wire code
(`event_format`) as the messages of `tf_formats.meta_graph_messages`; the GraphDef is
converted by `tf_formats.graph_def`, TensorFlow's saver nodes dropped by
`tf_formats.saver_graph`. Nothing in the
file is executed: the graph is imported op by op, registered flowgraph ops only.

TensorFlow's saver nodes (``save/SaveV2``, ``save/RestoreV2``, ...) are not flowgraph
ops: they and the nodes that depend on them are left out, and a small restore subgraph
(``flowgraph_restore/``: a placeholder and an ``Assign`` per variable, grouped by a
``NoOp``) takes their place; the values come from ``variables/variables`` (a TensorFlow
checkpoint, read by `tf_formats.bundle`). A part of a partitioned variable is restored
from the whole tensor its saver names (``RestoreV2``'s ``tensor_names``), cut at the slice
its ``shape_and_slices`` gives (`RestoreEntry.slice`).

Example
-------
>>> import os
>>> is_tf_saved_model(os.path.dirname(__file__))
False
"""

from __future__ import annotations

import os

from flowgraph.framework import errors, registry
from flowgraph.framework.tf_formats.graph_def import graph_def_to_dict
from flowgraph.framework.tf_formats.meta_graph import check_graph_def_sizes
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    MetaGraphDefProto,
    SavedModelProto,
    TensorInfoProto,
    VariableDefProto,
)
from flowgraph.framework.tf_formats.resource_variables import meta_graph_as_refs, ref_op_of
from flowgraph.framework.tf_formats.saver_graph import (
    SAVER_OPS,
    drop_saver_nodes,
    restore_keys,
    restore_slice_specs,
    saver_scope,
)
from flowgraph.framework.tf_formats.text_parse import TextParseError, parse_text
from flowgraph.saved_model import constants
from flowgraph.saved_model import format as fmt

__all__ = ["SAVED_MODEL_FILENAME_PB", "check_signatures_runnable", "is_tf_saved_model",
           "read_tf_saved_model"]

SAVED_MODEL_FILENAME_PB = constants.SAVED_MODEL_FILENAME_PB
SAVED_MODEL_FILENAME_PBTXT = constants.SAVED_MODEL_FILENAME_PBTXT
_RESTORE_SCOPE = "flowgraph_restore"
_VARIABLE_COLLECTIONS = ("variables", "trainable_variables", "global_step",
                         "local_variables", "model_variables", "moving_average_variables",
                         "metric_variables")
_MAIN_OP_COLLECTIONS = ("saved_model_main_op", "legacy_init_op")
_ASSETS_COLLECTION = "saved_model_assets"
_TRAIN_OP_COLLECTION = "saved_model_train_op"  # estimators' train tag set


# -- conversion ------------------------------------------------------------------------
def is_tf_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a TensorFlow SavedModel (``saved_model.pb``, or the
    text form ``saved_model.pbtxt``) and no flowgraph one (``saved_model.json``)."""
    export_dir = os.fspath(export_dir)
    return (any(os.path.isfile(os.path.join(export_dir, name))
                for name in (SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT)) and not
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
            found.setdefault(vd.variable_name, (vd, []))[1].append(key)
    return [fmt.VariableDef(variable_name=name, initializer_name=vd.initializer_name,
                            snapshot_name=vd.snapshot_name,
                            initial_value_name=vd.initial_value_name,
                            trainable="trainable_variables" in keys, collections=keys,
                            save_slice_info_def=_slice_info(vd),
                            is_resource=bool(vd.is_resource))
            for name, (vd, keys) in found.items()]


def _restored_variables(variables: list[fmt.VariableDef], keys: dict[str, str],
                        has_saver: bool) -> list[fmt.VariableDef]:
    # TensorFlow's loader restores what the SaverDef's restore op restores; without one,
    # what a default Saver would (the global variables). Local variables are in neither:
    # the main op or legacy_init_op initializes them (their values were never saved).
    if has_saver:
        return [vd for vd in variables
                if (vd.variable_name.rpartition(":")[0] or vd.variable_name) in keys]
    return [vd for vd in variables if "variables" in vd.collections]


def _slice_info(vd: VariableDefProto) -> fmt.SaveSliceInfoDef | None:
    info = vd.save_slice_info_def
    if info is None or not info.full_name:
        return None
    return fmt.SaveSliceInfoDef(full_name=info.full_name,
                                full_shape=[int(d) for d in info.full_shape],
                                var_offset=[int(d) for d in info.var_offset],
                                var_shape=[int(d) for d in info.var_shape])


def _restore_subgraph(graph_def: dict, variables: list[fmt.VariableDef],
                      keys: dict[str, str], specs: dict[str, str]) -> fmt.RestoreDef:
    """flowgraph's restore subgraph for `variables`; `keys` and `specs` (variable op name
    -> checkpoint key, and -> slice spec for the parts of partitioned variables) come
    from TensorFlow's saver nodes."""
    by_name = {n["name"]: n for n in graph_def["node"]}
    entries, control = [], []
    for i, vd in enumerate(variables):
        op_name = vd.variable_name.rpartition(":")[0] or vd.variable_name
        node = by_name.get(op_name)
        if node is None or node["op"] not in ("VariableV2", "Variable", "VarHandleOp"):
            raise fmt.SavedModelFormatError(
                f"variable {vd.variable_name} has no VariableV2 (or VarHandleOp) node in "
                "the graph")
        value, assign = f"{_RESTORE_SCOPE}/value_{i}", f"{_RESTORE_SCOPE}/assign_{i}"
        graph_def["node"].append({"name": value, "op": "Placeholder", "input": [],
                                  "attr": {"dtype": node["attr"]["dtype"],
                                           "shape": node["attr"]["shape"]}})
        if node["op"] == "VarHandleOp":  # a resource variable: written through its handle
            graph_def["node"].append({"name": assign, "op": "AssignVariableOp",
                                      "input": [f"{op_name}:0", f"{value}:0"],
                                      "attr": {"dtype": node["attr"]["dtype"],
                                               "validate_shape": True}})
        else:
            graph_def["node"].append({"name": assign, "op": "Assign",
                                      "input": [f"{op_name}:0", f"{value}:0"],
                                      "attr": {"validate_shape": True, "use_locking": True}})
        control.append(f"^{assign}")
        entries.append(fmt.RestoreEntry(key=keys.get(op_name, op_name),
                                        variable=f"{op_name}:0",
                                        placeholder=f"{value}:0",
                                        slice=specs.get(op_name, "")))
    graph_def["node"].append({"name": f"{_RESTORE_SCOPE}/restore_all", "op": "NoOp",
                              "input": control, "attr": {}})
    return fmt.RestoreDef(restore_op_name=f"{_RESTORE_SCOPE}/restore_all", entries=entries)


def _asset_defs(mg: MetaGraphDefProto) -> list[AssetFileDefProto]:
    # TF2's builder writes asset_file_def; TF1's SavedModelBuilder (estimators,
    # simple_save) keeps them as Any messages in the collection saved_model_assets.
    found = {(a.tensor_info.name, a.filename): a for a in mg.asset_file_def}
    col = mg.collection_def.get(_ASSETS_COLLECTION)
    for item in (col.any_list.value if col is not None and col.any_list else []):
        if not item.type_url.endswith("tensorflow.AssetFileDef"):
            raise fmt.SavedModelFormatError(
                f"collection {_ASSETS_COLLECTION} holds a {item.type_url or 'untyped'} "
                "message; it must hold tensorflow.AssetFileDef messages")
        a = AssetFileDefProto.FromString(item.value)
        found.setdefault((a.tensor_info.name, a.filename), a)
    return list(found.values())


def _meta_graph(mg: MetaGraphDefProto) -> fmt.MetaGraphDef:
    check_graph_def_sizes(mg.graph_def)
    message = mg  # returned by the loader as the file holds it: copied before any rewrite
    if any(ref_op_of(n.op) for n in mg.graph_def.node):
        message = MetaGraphDefProto.FromString(mg.SerializeToString())
    # Resource variables stay resource variables when flowgraph runs all their ops (the
    # restore subgraph writes them with AssignVariableOp); else all become references.
    meta_graph_as_refs(mg)
    scope = saver_scope(mg.saver_def.restore_op_name)
    graph_def = graph_def_to_dict(mg.graph_def)
    keys = restore_keys(graph_def, mg.saver_def.restore_op_name) if scope else {}
    specs = restore_slice_specs(graph_def, mg.saver_def.restore_op_name) if scope else {}
    graph_def, _ = drop_saver_nodes(graph_def, scope)
    variables = _variables(mg)
    restored = _restored_variables(variables, keys, bool(scope))
    restore = _restore_subgraph(graph_def, restored, keys, specs) if restored else None
    main_op = None
    for key in _MAIN_OP_COLLECTIONS:
        col = mg.collection_def.get(key)
        if col is not None and col.node_list.value:
            main_op = _text(col.node_list.value[0])
            break
    if main_op is not None and main_op not in {n["name"] for n in graph_def["node"]}:
        raise fmt.SavedModelFormatError(
            f"its main op '{main_op}' (collection saved_model_main_op or legacy_init_op) "
            "is not a node of the graph")
    train = mg.collection_def.get(_TRAIN_OP_COLLECTION)
    train_op = _text(train.node_list.value[0]) if train is not None and \
        train.node_list.value else None
    if train_op is not None:
        train_op = train_op.partition(":")[0]
        if train_op not in {n["name"] for n in graph_def["node"]}:
            train_op = None  # computed with ops flowgraph lacks: the graph still serves
    info = mg.meta_info_def
    return fmt.MetaGraphDef(
        meta_info_def=fmt.MetaInfoDef(tags=list(info.tags),
                                      meta_graph_version=info.meta_graph_version),
        graph_def=graph_def,
        signature_def={k: fmt.SignatureDef(
            inputs={n: _tensor_info(t) for n, t in s.inputs.items()},
            outputs={n: _tensor_info(t) for n, t in s.outputs.items()},
            method_name=s.method_name) for k, s in mg.signature_def.items()},
        saver_def=restore, variables=variables, main_op=main_op, train_op=train_op,
        asset_file_def=[fmt.AssetFileDef(tensor_info=_tensor_info(a.tensor_info),
                                         filename=a.filename) for a in _asset_defs(mg)],
        message=message)


def check_signatures_runnable(mg: fmt.MetaGraphDef, export_dir: str) -> None:
    """Raise SavedModelFormatError when a signature of `mg` (read by
    `read_tf_saved_model`) reads a tensor computed from an op flowgraph does not have.

    Reading leaves such nodes out, with all that depends on them (a SavedModel's other
    tag sets, or a signature that does not need them, still load); loading this meta
    graph says which signature cannot run and why, rather than failing at its first run.
    """
    message = mg.message
    if message is None:
        return
    nodes = message.graph_def.node
    missing = {n.name: n.op for n in nodes if not registry.has_op_def(n.op)
               and n.op not in SAVER_OPS and not ref_op_of(n.op)}
    if not missing:
        return
    kept = {n["name"] for n in mg.graph_def["node"]}
    consumers: dict[str, list[str]] = {}
    for n in nodes:
        for ref in n.input:
            src = ref.lstrip("^").partition(":")[0]
            consumers.setdefault(src, []).append(n.name)
    reached: dict[str, set] = {}
    for root, op in missing.items():
        stack = [root]
        while stack:
            name = stack.pop()
            if op in reached.setdefault(name, set()):
                continue
            reached[name].add(op)
            stack.extend(consumers.get(name, ()))
    for key, sig in sorted(mg.signature_def.items()):
        for kind, infos in (("input", sig.inputs), ("output", sig.outputs)):
            for alias, info in sorted(infos.items()):
                node = info.name.partition(":")[0]
                ops = reached.get(node)
                if ops and node not in kept:
                    raise fmt.SavedModelFormatError(
                        f"Cannot load TensorFlow SavedModel {export_dir}: signature "
                        f"'{key}' {kind} '{alias}' ({info.name}) is computed with op(s) "
                        f"flowgraph does not have: {', '.join(sorted(ops))} (`flowgraph "
                        "ops` lists the ops it has; re-export the model without them)")


def read_tf_saved_model(export_dir) -> fmt.SavedModel:
    """The SavedModel in `export_dir`'s ``saved_model.pb`` (or ``saved_model.pbtxt``),
    as flowgraph's classes.

    Raises DataLossError naming the file when it is not a SavedModel message, and
    SavedModelFormatError for what flowgraph cannot load. Resource variables stay
    resource variables (``VarHandleOp``...) unless the graph holds a resource op flowgraph
    lacks; then all are read as reference variables (`tf_formats.resource_variables`).
    """
    path = os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME_PB)
    text = not os.path.isfile(path)
    if text:
        path = os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME_PBTXT)
    with open(path, "rb") as f:
        data = f.read()
    try:
        proto = (parse_text(data.decode("utf-8"), SavedModelProto) if text
                 else SavedModelProto.FromString(data))
        if not proto.meta_graphs:
            raise ValueError("it holds no meta graph")
        graphs = [_meta_graph(mg) for mg in proto.meta_graphs]
    except fmt.SavedModelFormatError as e:
        raise fmt.SavedModelFormatError(f"Cannot load TensorFlow SavedModel {path}: {e}") \
            from None
    except (ValueError, UnicodeDecodeError, TypeError, KeyError, OverflowError,
            TextParseError) as e:
        raise errors.DataLossError(
            None, None, f"Unable to read TensorFlow SavedModel {path}: the file is "
            f"truncated or corrupted, or not a SavedModel ({type(e).__name__}: {e}).") \
            from None
    return fmt.SavedModel(
        saved_model_schema_version=int(proto.saved_model_schema_version), meta_graphs=graphs)
