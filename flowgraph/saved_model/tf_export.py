"""SavedModels in TensorFlow's own format, for TensorFlow and TensorFlow Serving.

`SavedModelBuilder(export_dir)` (and `simple_save`, and Estimator exports) writes by
default what TensorFlow 1.x's builder writes (``format="flowgraph"`` writes flowgraph's
``saved_model.json`` instead)::

    export_dir/
      saved_model.pb                      SavedModel message: one MetaGraphDef per tag set
      variables/variables.index           tensor bundle (`tf_formats.bundle`)
      variables/variables.data-00000-of-00001
      assets/                             files the graph reads (tables' vocabularies)

Each MetaGraphDef is what ``tf.train.export_meta_graph`` writes (TensorFlow's GraphDef,
the collections, the Saver's ``save/`` subgraph rewritten as TensorFlow's
``SaveV2``/``RestoreV2`` nodes, `tf_formats.saver_graph`) plus the tags, the signatures,
the assets in the ``saved_model_assets`` collection (``asset_file_def`` stays empty, as
TensorFlow 1.x leaves it) and the main op in the ``saved_model_main_op`` collection, which
TensorFlow's loader runs after restoring the variables, with each asset tensor fed the
asset's path. Vocabulary-file lookups become tables that the main op fills from their
assets (`tf_export_tables`); other flowgraph-only ops are written as TensorFlow ops by
`tf_formats.op_rewrites`. The bytes are staged and renamed into place by the builder, as for
flowgraph's format.

Which format a builder writes when none is named is process-wide state, "tensorflow" at
start: `set_export_format` sets it, `export_format` sets it for a ``with`` block (this
is how an Estimator's ``export_saved_model`` writes flowgraph's format). A graph holding
an op TensorFlow lacks is still exported, with one warning naming the op (flowgraph
loads the export, TensorFlow refuses it); never silently in the other format.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> export_dir = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     y = tf.matmul(x, tf.Variable([[1.0], [2.0]], name="w"), name="y")
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
>>> sorted(os.listdir(export_dir)), sorted(os.listdir(os.path.join(export_dir, "variables")))
(['saved_model.pb', 'variables'], ['variables.data-00000-of-00001', 'variables.index'])
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading

from flowgraph.framework.event_format import TensorShapeProto
from flowgraph.framework.tf_formats.bundle import write_bundle
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    CollectionDefProto,
    MetaGraphDefProto,
    SavedModelProto,
    SignatureDefProto,
    TensorInfoProto,
)
from flowgraph.framework.tf_formats.saver_graph import SAVER_OPS
from flowgraph.framework.tf_formats.text_format import message_to_text
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS
from flowgraph.saved_model import constants
from flowgraph.saved_model.constants_tf import (
    ASSETS_KEY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    TRAIN_OP_KEY,
)
from flowgraph.saved_model.tf_export_tables import vocabulary_files_as_tables

__all__ = ["FORMATS", "check_format", "export_format", "get_export_format",
           "set_export_format", "signature_message", "tensor_info_message", "tf_meta_graph",
           "write_tf_saved_model", "write_tf_variables"]

logger = logging.getLogger("tensorflow")

FORMATS = ("flowgraph", "tensorflow")
_state = {"format": "tensorflow"}
_lock = threading.Lock()


def check_format(format, what: str = "SavedModelBuilder") -> str:
    """`format` when it is one of `FORMATS`; the process-wide default when None."""
    if format is None:
        return _state["format"]
    if format not in FORMATS:
        raise ValueError(f"{what}: format must be 'flowgraph' (saved_model.json, flowgraph's "
                         f"own) or 'tensorflow' (saved_model.pb, which TensorFlow and "
                         f"TensorFlow Serving load); got {format!r}")
    return format


def get_export_format() -> str:
    """The format SavedModel exports write when none is named ('tensorflow' at start:
    ``saved_model.pb``, as TensorFlow writes; 'flowgraph': ``saved_model.json``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.saved_model.get_export_format()
    'tensorflow'
    """
    return _state["format"]


def set_export_format(format: str) -> str:
    """Make `format` ('flowgraph' or 'tensorflow') the format of every later SavedModel
    export that names none (builders, `simple_save`, Estimator exports); returns the
    previous one.

    Example
    -------
    >>> import flowgraph as tf
    >>> previous = tf.saved_model.set_export_format("flowgraph")
    >>> tf.saved_model.set_export_format(previous)
    'flowgraph'
    """
    format = check_format(format, "set_export_format")
    with _lock:
        previous, _state["format"] = _state["format"], format
    return previous


@contextlib.contextmanager
def export_format(format: str):
    """Within the ``with`` block, SavedModel exports that name no format write `format`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.saved_model.export_format("flowgraph"):   # doctest: +SKIP
    ...     estimator.export_saved_model(export_base, serving_input_receiver_fn)
    """
    previous = set_export_format(format)
    try:
        yield format
    finally:
        set_export_format(previous)


# -- messages -------------------------------------------------------------------------------
def tensor_info_message(info) -> TensorInfoProto:
    """TensorFlow's TensorInfo of a flowgraph `TensorInfo` (name, dtype, shape)."""
    shape = info.tensor_shape
    proto_shape = (TensorShapeProto(unknown_rank=True) if shape.unknown_rank else
                   TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d.size))
                                         for d in shape.dim]))
    return TensorInfoProto(name=info.name, dtype=int(info.dtype), tensor_shape=proto_shape)


def asset_collection(asset_defs) -> CollectionDefProto:
    """The ``saved_model_assets`` collection as TF1's SavedModelBuilder writes it: one
    ``Any`` holding each asset's ``AssetFileDef`` (`tf.get_collection` gives those
    ``Any`` messages back after a load)."""
    return CollectionDefProto(any_list=CollectionDefProto.AnyList(value=[
        CollectionDefProto.Any(
            type_url="type.googleapis.com/tensorflow.AssetFileDef",
            value=a.SerializeToString())
        for a in asset_defs]))


def signature_message(sig) -> SignatureDefProto:
    """TensorFlow's SignatureDef of a flowgraph `SignatureDef`."""
    out = SignatureDefProto(method_name=sig.method_name)
    for key, info in sig.inputs.items():
        out.inputs[key] = tensor_info_message(info)
    for key, info in sig.outputs.items():
        out.outputs[key] = tensor_info_message(info)
    return out


def tf_meta_graph(graph, graph_def: dict, tags, signatures: dict, saver, main_op: str | None,
                  assets: list, clear_devices: bool,
                  strip_default_attrs: bool = False,
                  train_op: str | None = None) -> MetaGraphDefProto:
    """TensorFlow's MetaGraphDef of `graph` for one tag set.

    `graph_def` is `graph`'s (with asset paths already replaced by asset names),
    `signatures` flowgraph `SignatureDef`s, `saver` the Saver whose variables are saved
    (None or empty: no SaverDef), `main_op` and `train_op` op names (collections
    ``saved_model_main_op`` and ``saved_model_train_op``), `assets` `AssetFileDef`s.
    `strip_default_attrs` drops each attribute whose value is its default in TensorFlow's
    OpDef (TensorFlow's loaders put them back).
    """
    from flowgraph.train.meta_graph_export import export_meta_graph

    graph_def, main_op, table_assets = vocabulary_files_as_tables(graph_def, main_op)
    saver_def = None if saver is None or saver._is_empty else saver.saver_def
    mg = export_meta_graph(graph=graph, graph_def=graph_def, saver_def=saver_def,
                           clear_devices=clear_devices)
    mg.meta_info_def.tags.extend(tags)
    for key, sig in signatures.items():
        mg.signature_def[key] = signature_message(sig)
    asset_defs = [AssetFileDefProto(tensor_info=tensor_info_message(a.tensor_info),
                                    filename=a.filename) for a in assets]
    for tensor_name, filename in table_assets:
        asset_defs.append(AssetFileDefProto(
            tensor_info=TensorInfoProto(name=tensor_name, dtype=7,  # DT_STRING
                                        tensor_shape=TensorShapeProto()),
            filename=filename))
    # TF1's SavedModelBuilder records assets only in the saved_model_assets collection;
    # the asset_file_def field stays empty (TF2's builder fills that one).
    if asset_defs:
        mg.collection_def[ASSETS_KEY] = asset_collection(asset_defs)
    if main_op:
        mg.collection_def[MAIN_OP_KEY] = CollectionDefProto(
            node_list=CollectionDefProto.NodeList(value=[main_op]))
    if train_op:
        mg.collection_def[TRAIN_OP_KEY] = CollectionDefProto(
            node_list=CollectionDefProto.NodeList(value=[train_op]))
    if strip_default_attrs:
        _strip_default_attrs(mg)
    _warn_flowgraph_only_ops(mg, tags)
    return mg


def _strip_default_attrs(mg: MetaGraphDefProto) -> None:
    # Compared as serialized AttrValues, the form OP_DEFS records the defaults in.
    for node in mg.graph_def.node:
        op_def = OP_DEFS.get(node.op)
        if op_def is None:
            continue
        for name, default in op_def[2]:
            if (default is not None and name in node.attr
                    and node.attr[name].SerializeToString().hex() == default):
                del node.attr[name]


def _warn_flowgraph_only_ops(mg: MetaGraphDefProto, tags) -> None:
    # OP_DEFS holds TensorFlow's OpDef of every flowgraph op TensorFlow has.
    missing: dict[str, str] = {}
    for node in mg.graph_def.node:
        if node.op not in OP_DEFS and node.op not in SAVER_OPS:
            missing.setdefault(node.op, node.name)
    if missing:
        logger.warning(
            "SavedModel in TensorFlow's format, tags %s: TensorFlow has no op %s, so "
            "TensorFlow and TensorFlow Serving will refuse to load this meta graph; "
            "flowgraph (its loader, `flowgraph serve`) loads it. For TensorFlow, build the "
            "exported graph from ops TensorFlow has; if only flowgraph will load it, "
            "export with format=\"flowgraph\" to say so.", list(tags),
            ", ".join(f"{op} (node '{name}')" for op, name in sorted(missing.items())))


def write_tf_variables(sess, saver, directory: str) -> None:
    """Save the variables of `saver` from `sess` as the tensor bundle
    ``directory/variables/variables``."""
    if saver is None or saver._is_empty:
        return
    values = sess.run([ref for _, ref, _ in saver._entries])
    prefix = os.path.join(directory, constants.VARIABLES_DIRECTORY,
                          constants.VARIABLES_FILENAME)
    write_bundle(prefix, *saver._checkpoint_tensors(values))  # partitioned ones as slices


def write_tf_saved_model(directory: str, meta_graphs: list[MetaGraphDefProto],
                         as_text: bool = False) -> str:
    """Write ``saved_model.pb`` (``saved_model.pbtxt`` with `as_text`) holding
    `meta_graphs` into `directory`, fsynced; returns its path."""
    proto = SavedModelProto(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION,
                            meta_graphs=list(meta_graphs))
    name = SAVED_MODEL_FILENAME_PBTXT if as_text else SAVED_MODEL_FILENAME_PB
    data = message_to_text(proto).encode("utf-8") if as_text else proto.SerializeToString()
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return path
