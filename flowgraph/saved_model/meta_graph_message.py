"""TensorFlow's ``MetaGraphDef`` message of a meta graph of flowgraph's ``saved_model.json``:
what ``tf.saved_model.loader.load`` returns for such an export.

A ``saved_model.pb`` export already holds this message (the loader returns it as read).
A ``saved_model.json`` meta graph holds the same facts in flowgraph's own schema, and
`meta_graph_message` writes them as ``tf.train.export_meta_graph`` would have written them
from the exporting graph: TensorFlow's GraphDef, with the Saver's restore subgraph as
TensorFlow's ``SaveV2``/``RestoreV2`` nodes and the matching ``saver_def``; each variable
collection as serialized ``VariableDef``s; the main op in ``saved_model_main_op``, the
train op in ``train_op`` and ``saved_model_train_op``, asset tensors in
``saved_model_assets`` (``asset_file_def`` stays empty, as TensorFlow 1.x's builder
leaves it); and the export's tags and signatures.
Collections the JSON document does not record (losses, summaries, ...) cannot be
recovered and are absent.

Example
-------
>>> from flowgraph.saved_model import format as fmt
>>> mg = fmt.MetaGraphDef(meta_info_def=fmt.MetaInfoDef(tags=["serve"]),
...                       graph_def={"node": []}, main_op="init")
>>> msg = meta_graph_message(mg)
>>> list(msg.meta_info_def.tags), list(msg.collection_def["saved_model_main_op"].node_list.value)
(['serve'], ['init'])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.device_spec import canonical_device
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    CollectionDefProto,
    MetaGraphDefProto,
    SaverDefProto,
    SaveSliceInfoDefProto,
    VariableDefProto,
)
from flowgraph.saved_model import format as fmt
from flowgraph.saved_model.constants_tf import ASSETS_KEY, MAIN_OP_KEY, TRAIN_OP_KEY
from flowgraph.saved_model.tf_export import (
    asset_collection,
    signature_message,
    tensor_info_message,
)

__all__ = ["meta_graph_message"]

_TRAIN_OP_KEY = "train_op"  # GraphKeys.TRAIN_OP


def _node_list(names) -> CollectionDefProto:
    return CollectionDefProto(node_list=CollectionDefProto.NodeList(value=list(names)))


def _variable_def(vd: fmt.VariableDef) -> bytes:
    msg = VariableDefProto(variable_name=vd.variable_name,
                           initializer_name=vd.initializer_name,
                           snapshot_name=vd.snapshot_name,
                           initial_value_name=vd.initial_value_name,
                           trainable=bool(vd.trainable))
    if vd.is_resource:  # (a field left unset for a reference variable, as TF writes it)
        msg.is_resource = True
    info = vd.save_slice_info_def
    if info is not None:
        msg.save_slice_info_def = SaveSliceInfoDefProto(
            full_name=info.full_name, full_shape=list(info.full_shape),
            var_offset=list(info.var_offset), var_shape=list(info.var_shape))
    return msg.SerializeToString()


def _saver_rows(mg: fmt.MetaGraphDef) -> list[tuple]:
    """``(key, variable op, DataType number, shape, slice spec, "", device)`` per restore
    entry (the device: its shard of the builder's sharded Saver), the
    rows `tf_formats.saver_graph.tf_saver_nodes` builds TensorFlow's saver nodes from. A
    part of a partitioned variable is keyed as TensorFlow keys it: the whole variable's
    name and the part's slice spec (saved_model.json keys each part by its own name)."""
    by_name = {n["name"]: n for n in mg.graph_def.get("node", [])}
    slices = {vd.variable_name: vd.save_slice_info_def for vd in mg.variables
              if vd.save_slice_info_def is not None}
    rows = []
    for e in mg.saver_def.entries:
        op = e.variable.rpartition(":")[0] or e.variable
        node = by_name.get(op)
        if node is None or not node.get("output_dtypes"):
            return []  # not a variable this module understands: the nodes stay as written
        dtype = _dtypes.as_dtype(node["output_dtypes"][0]).base_dtype.as_datatype_enum
        shapes = node.get("output_shapes") or [{"shape": None}]
        info = slices.get(e.variable)
        key, spec = (info.full_name, info.spec) if info is not None and not e.slice \
            else (e.key, e.slice)
        try:
            device = canonical_device(node.get("device") or "")  # its shard
        except ValueError as e:
            raise fmt.SavedModelFormatError(
                f"saved_model.json: variable node '{op}' names no valid device: {e}"
            ) from None
        rows.append((key, op, dtype, shapes[0].get("shape"), spec, "", device))
    return rows


def _export(mg: fmt.MetaGraphDef) -> MetaGraphDefProto:
    """``export_meta_graph`` of the graph def and saver alone (no collections)."""
    from flowgraph.framework.graph import Graph
    from flowgraph.train.meta_graph_export import export_meta_graph, register_saver_entries

    restore, saver_def = mg.saver_def, None
    holder = Graph()  # carries only the saver's rows: export reads them from its graph
    if restore is not None and restore.restore_op_name:
        # saved_model.json records no Saver settings: a default Saver's, as the builder's
        saver_def = SaverDefProto(restore_op_name=restore.restore_op_name,
                                  filename_tensor_name=restore.filename_tensor_name,
                                  save_tensor_name=restore.save_tensor_name,
                                  max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
                                  sharded=True, version=SaverDefProto.V2)
        rows = _saver_rows(mg)
        if rows:
            register_saver_entries(holder, restore.restore_op_name, "model", rows)
    # An export whose nodes name no device was written with clear_devices: the saver
    # nodes written here (RestoreV2 names the CPU) lose theirs too.
    cleared = not any(n.get("device") for n in mg.graph_def.get("node", []))
    return export_meta_graph(graph=holder, graph_def=mg.graph_def, saver_def=saver_def,
                             collection_list=[], clear_devices=cleared)


def meta_graph_message(mg: fmt.MetaGraphDef) -> MetaGraphDefProto:
    """TensorFlow's ``MetaGraphDef`` of flowgraph meta graph `mg` (see the module
    docstring): what TensorFlow's loader would return had the export been TensorFlow's."""
    out = _export(mg)
    if mg.meta_info_def.meta_graph_version:  # proto3: an empty string is not written
        out.meta_info_def.meta_graph_version = mg.meta_info_def.meta_graph_version
    out.meta_info_def.tags.extend(mg.meta_info_def.tags)
    collections: dict[str, list[bytes]] = {}
    for vd in mg.variables:
        raw = _variable_def(vd)
        for key in vd.collections:
            collections.setdefault(key, []).append(raw)
    for key, values in collections.items():
        out.collection_def[key] = CollectionDefProto(
            bytes_list=CollectionDefProto.BytesList(value=values))
    if mg.train_op:
        out.collection_def[_TRAIN_OP_KEY] = _node_list([mg.train_op])
        out.collection_def[TRAIN_OP_KEY] = _node_list([mg.train_op])
    if mg.main_op:
        out.collection_def[MAIN_OP_KEY] = _node_list([mg.main_op])
    if mg.asset_file_def:
        out.collection_def[ASSETS_KEY] = asset_collection(
            AssetFileDefProto(tensor_info=tensor_info_message(a.tensor_info),
                              filename=a.filename) for a in mg.asset_file_def)
    for key, sig in mg.signature_def.items():
        out.signature_def[key] = signature_message(sig)
    return out  # asset_file_def stays empty: TF1's builder records assets in the collection
