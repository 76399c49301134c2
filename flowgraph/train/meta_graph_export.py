"""``tf.train.export_meta_graph``: a graph, its collections and its Saver as TensorFlow's
``MetaGraphDef`` (a ``.meta`` file), which TensorFlow's ``import_meta_graph`` reads.

The graph def is `Graph.as_graph_def()` converted to TensorFlow's GraphDef
(`tf_formats.graph_def`). A flowgraph Saver's restore subgraph (placeholders fed from
Python) is replaced by TensorFlow's (``SaveV2``/``RestoreV2``,
`tf_formats.saver_graph.tf_saver_nodes`), so TensorFlow can restore with it. Each
collection is written by the kind of its first item, as TensorFlow does: variables as
serialized ``VariableDef`` messages (a part of a partitioned variable with its
``save_slice_info_def``), ops and tensors by name, numbers as numbers; a
collection of anything else (a Saver, a queue runner) is left out with a log line.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0], name="v")
...     saver = tf.train.Saver()
...     meta = export_meta_graph(saver_def=saver.saver_def)
>>> meta.saver_def.restore_op_name, sorted(meta.collection_def)
('save/restore_all', ['trainable_variables', 'variables'])
"""

from __future__ import annotations

import hashlib
import logging
import numbers

from flowgraph.framework.content_cache import ContentCache, graph_def_snapshot
from flowgraph.framework.event_format import GraphDef
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tf_formats.graph_def import graph_def_from_dict
from flowgraph.framework.tf_formats.meta_graph import write_meta_graph_file
from flowgraph.framework.tf_formats.meta_graph_messages import (
    CollectionDefProto,
    MetaGraphDefProto,
    MetaInfoDefProto,
    SaverDefProto,
)
from flowgraph.framework.tf_formats.saver_graph import (
    saver_scope,
    tf_saver_nodes,
    tf_saver_tensor_names,
)
from flowgraph.framework.versions import __version__
from flowgraph.ops.control_flow_cond import ControlFlowContext
from flowgraph.ops.variable_def import variable_def_proto
from flowgraph.train.meta_graph_contexts import contexts_to_protos
from flowgraph.train.meta_graph_ops import add_output_shapes, stripped_op_list
from flowgraph.train.meta_graph_ops import strip_default_attrs as _strip_default_attrs
from flowgraph.train.meta_graph_unbound import UNBOUND_INPUT_PREFIX, UNBOUND_INPUTS_KEY
from flowgraph.train.queue_runner import QueueRunner

__all__ = ["export_meta_graph", "meta_graph_bytes", "meta_graph_cache_stats",
           "register_saver_entries", "saver_def_proto", "scoped_saver_def"]

logger = logging.getLogger("tensorflow")

# The TensorFlow release whose formats flowgraph writes (tensorflow_version).
_TF_VERSION = "2.15.1"


def register_saver_entries(graph, restore_op_name: str, filename: str, entries,
                           op_names=None) -> None:
    """Record a Saver's ``(key, variable op name, DataType number, shape)`` rows under
    its restore op, so that exporting can write TensorFlow's saver nodes for it in place
    of its own ops, `op_names` (None: every node of the restore op's scope)."""
    graph.__dict__.setdefault("_saver_entries", {})[restore_op_name] = (
        filename, entries, frozenset(op_names) if op_names is not None else None)


def _is_variable(x) -> bool:
    return hasattr(x, "_variable") and hasattr(x, "initializer") and hasattr(x, "op")


def _collected_savers(graph, collection_list) -> list:
    if collection_list is not None and GraphKeys.SAVERS not in collection_list:
        return []
    return [s for s in graph.get_collection(GraphKeys.SAVERS) if hasattr(s, "saver_def")]


def _record_savers(out: MetaGraphDefProto, graph, keys, export_scope, names: dict) -> None:
    """The ``savers`` collection as TensorFlow writes it: one SaverDef per Saver (the
    file's own Saver with the names its TensorFlow saver nodes have)."""
    savers = _collected_savers(graph, keys)
    if not savers:
        return
    values = []
    for saver in savers:
        proto = saver_def_proto(saver.saver_def)
        if out.HasField("saver_def") and (proto.restore_op_name
                                          == out.saver_def.restore_op_name):
            proto = saver_def_proto(out.saver_def)
        elif proto.restore_op_name in names:
            _name_tf_saver_tensors(proto, names[proto.restore_op_name])
        if export_scope:
            proto = scoped_saver_def(proto, export_scope)
            if proto is None:
                continue
        values.append(proto.SerializeToString())
    if values:
        out.collection_def[GraphKeys.SAVERS] = CollectionDefProto(
            bytes_list=CollectionDefProto.BytesList(value=values))


def scoped_saver_def(proto: SaverDefProto, export_scope: str):
    """`proto` with its names relative to `export_scope` (changed in place), or None
    when one of them lies outside it."""
    prefix = export_scope.rstrip("/") + "/"
    names = ("filename_tensor_name", "save_tensor_name", "restore_op_name")
    if not all(getattr(proto, n).startswith(prefix) for n in names):
        return None
    for n in names:
        setattr(proto, n, getattr(proto, n)[len(prefix):])
    return proto


def _as_text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _collection_def(key: str, items: list, strip, keep, export_scope=None,
                    quiet: bool = False) -> CollectionDefProto | None:
    first = items[0]
    if isinstance(first, ControlFlowContext):  # WhileContextDefs/CondContextDefs
        return CollectionDefProto(bytes_list=CollectionDefProto.BytesList(
            value=[p.SerializeToString() for p in contexts_to_protos(items, strip)]))
    if isinstance(first, QueueRunner):  # QueueRunnerDefs, those inside `export_scope`
        protos = [qr.to_proto(export_scope) for qr in items if isinstance(qr, QueueRunner)]
        return CollectionDefProto(bytes_list=CollectionDefProto.BytesList(
            value=[p.SerializeToString() for p in protos if p is not None]))
    if _is_variable(first):
        kind, convert = "bytes_list", (lambda v: variable_def_proto(v, strip).SerializeToString())
        accept = _is_variable
    elif isinstance(first, Operation | Tensor):
        kind, convert = "node_list", (lambda x: strip(x.name))
        accept = lambda x: isinstance(x, Operation | Tensor)  # noqa: E731
    elif isinstance(first, str | bytes):  # as TensorFlow: strings as bytes_list values
        kind, accept = "bytes_list", (lambda x: isinstance(x, str | bytes))
        convert = lambda x: x.encode("utf-8") if isinstance(x, str) else x  # noqa: E731
    elif isinstance(first, numbers.Integral) and not isinstance(first, bool):
        kind, convert, accept = "int64_list", int, (lambda x: isinstance(x, numbers.Integral))
    elif isinstance(first, numbers.Real):
        kind, convert, accept = "float_list", float, (lambda x: isinstance(x, numbers.Real))
    else:
        if not quiet:
            logger.info("export_meta_graph: collection '%s' holds %s objects, which a "
                        "MetaGraphDef cannot record; it is left out", key,
                        type(first).__name__)
        return None
    values = []
    for item in items:
        if not accept(item):
            if quiet:
                return None
            logger.warning("export_meta_graph: collection '%s' mixes %s and %s items; it "
                           "is left out", key, type(first).__name__, type(item).__name__)
            return None
        if (kind == "node_list" or _is_variable(item)) and not keep(item.name):
            continue
        if isinstance(item, str | bytes) and not keep(_as_text(item)):
            continue  # TensorFlow takes a string item for a node name
        values.append(convert(item))
    if not values and export_scope:
        return None  # nothing of it under the scope: TensorFlow leaves it out
    return CollectionDefProto(**{kind: getattr(CollectionDefProto, {
        "bytes_list": "BytesList", "node_list": "NodeList", "int64_list": "Int64List",
        "float_list": "FloatList"}[kind])(value=values)})


def saver_def_proto(saver_def) -> SaverDefProto:
    """TensorFlow's SaverDef message of a Saver's `SaverDef` (or a copy of a message)."""
    if isinstance(saver_def, SaverDefProto):
        return SaverDefProto.FromString(saver_def.SerializeToString())
    return _as_saver_def_proto(saver_def)


def _as_saver_def_proto(saver_def) -> SaverDefProto:
    if isinstance(saver_def, SaverDefProto):
        return saver_def
    if hasattr(saver_def, "SerializeToString"):
        return SaverDefProto.FromString(saver_def.SerializeToString())
    return SaverDefProto(
        filename_tensor_name=saver_def.filename_tensor_name,
        save_tensor_name=saver_def.save_tensor_name,
        restore_op_name=saver_def.restore_op_name,
        max_to_keep=int(saver_def.max_to_keep or 0), sharded=bool(saver_def.sharded),
        keep_checkpoint_every_n_hours=float(saver_def.keep_checkpoint_every_n_hours),
        version=int(getattr(saver_def, "version", 2)))


def _with_tf_saver(graph_def: GraphDef, graph, saver_def: SaverDefProto,
                   names: dict | None = None) -> GraphDef:
    """`graph_def` with the flowgraph Saver `saver_def` names replaced by TensorFlow's
    saver nodes (beside any other saver's, an imported one's say, under names of their
    own); `saver_def` (and `names`, restore op -> the nodes' names) point at them."""
    registered = graph.__dict__.get("_saver_entries", {}).get(saver_def.restore_op_name)
    if registered is None:
        return graph_def  # not a flowgraph Saver of this graph: written as it is
    filename, entries, own = registered
    scope = saver_scope(saver_def.restore_op_name)
    kept = [n for n in graph_def.node
            if (n.name not in own if own is not None else not n.name.startswith(scope))]
    nodes = tf_saver_nodes(scope, entries, filename, {n.name for n in kept},
                           saver_def.restore_op_name, sharded=bool(saver_def.sharded))
    out = GraphDef(node=kept + nodes, versions=graph_def.versions)
    found = tf_saver_tensor_names(nodes)
    _name_tf_saver_tensors(saver_def, found)
    if names is not None:
        names[saver_def.restore_op_name] = found
    return out


def _name_tf_saver_tensors(saver_def: SaverDefProto, names: tuple) -> None:
    """Point `saver_def` at the tensors of the TensorFlow saver nodes written for it
    (`names`: `tf_saver_tensor_names` of them)."""
    saver_def.filename_tensor_name, saver_def.save_tensor_name = names[:2]
    saver_def.version = SaverDefProto.V2


def _scoped_graph_def(graph_def: GraphDef, export_scope: str,
                      unbound: list) -> GraphDef:
    """The nodes under `export_scope`, without it. An input from outside the scope is
    renamed ``$unbound_inputs_<name>`` (as TensorFlow writes it, for an ``input_map`` to
    bind on import) and appended to `unbound`."""
    prefix = export_scope.rstrip("/") + "/"

    def strip(ref: str) -> str:
        hat = "^" if ref.startswith("^") else ""
        if not ref[len(hat):].startswith(prefix):
            unbound.append(hat + UNBOUND_INPUT_PREFIX + ref[len(hat):])
            return unbound[-1]
        return hat + ref[len(hat) + len(prefix):]

    nodes = []
    for n in graph_def.node:
        if not n.name.startswith(prefix):
            continue
        n.name = strip(n.name)
        inputs = list(n.input)
        n.ClearField("input")
        n.input.extend(strip(r) for r in inputs)
        nodes.append(n)
    return GraphDef(node=nodes, versions=graph_def.versions)


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text: bool = False, graph=None,
                      export_scope: str | None = None, clear_devices: bool = False,
                      clear_extraneous_savers: bool = False,
                      strip_default_attrs: bool = False, save_debug_info: bool = False,
                      **kwargs) -> MetaGraphDefProto:
    """Export `graph` (default: the default graph) as a ``MetaGraphDef``, written to
    `filename` when one is given (binary, or protobuf text with `as_text`).

    `saver_def` (``saver.saver_def``) names the Saver to record: its restore subgraph
    is written as TensorFlow's, so TensorFlow's ``import_meta_graph`` + ``restore`` work
    on the file (with a checkpoint written by ``Saver(format="tensorflow")``).
    `collection_list` limits the collections written (default: all). With
    `export_scope`, only the nodes under that name scope are written, without it.

    Example
    -------
    >>> import os, tempfile, flowgraph as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "graph.meta")
    >>> with tf.Graph().as_default():
    ...     y = tf.identity(tf.placeholder(tf.float32, [2], name="x"), name="y")
    ...     tf.add_to_collection("outputs", y)
    ...     meta = tf.train.export_meta_graph(path)
    >>> list(meta.collection_def["outputs"].node_list.value), os.path.isfile(path)
    (['y:0'], True)
    """
    del clear_extraneous_savers, save_debug_info, kwargs
    graph = graph if graph is not None else get_default_graph()
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if isinstance(graph_def, dict) and not (hasattr(graph_def, "message_changed")
                                            and graph_def.message_changed()):
        message = graph_def_from_dict(graph_def)
        add_output_shapes(message, graph_def)  # as TensorFlow's export writes them
    else:
        message = GraphDef.FromString(graph_def.SerializeToString())
    out = MetaGraphDefProto()
    names: dict = {}  # restore op -> the names of the TensorFlow saver nodes written
    if saver_def is not None:
        # a copy: the written names (a sharded saver's save/Identity) are TensorFlow's
        # nodes', never the in-memory Saver's
        saver_proto = saver_def_proto(saver_def)
        message = _with_tf_saver(message, graph, saver_proto, names)
        out.saver_def = saver_proto
    for saver in _collected_savers(graph, collection_list):
        # every Saver of the `savers` collection gets TensorFlow's saver nodes too
        if saver_def is None or saver.saver_def.restore_op_name != saver_proto.restore_op_name:
            message = _with_tf_saver(message, graph, saver_def_proto(saver.saver_def),
                                     names)
    if clear_devices:
        for n in message.node:
            n.ClearField("device")
    prefix = export_scope.rstrip("/") + "/" if export_scope else ""
    if prefix:
        unbound: list = []
        message = _scoped_graph_def(message, export_scope, unbound)
        # as TensorFlow, the graph's own collection records them (and is exported)
        graph.clear_collection(UNBOUND_INPUTS_KEY)
        if unbound:
            graph.get_collection_ref(UNBOUND_INPUTS_KEY).extend(unbound)

    def strip(name: str) -> str:
        return name[len(prefix):] if prefix and name.startswith(prefix) else name

    def keep(name: str) -> bool:
        return not prefix or name.startswith((prefix, UNBOUND_INPUT_PREFIX))

    if strip_default_attrs:
        _strip_default_attrs(message)
    out.graph_def = message
    info = MetaInfoDefProto(tensorflow_version=_TF_VERSION,
                            tensorflow_git_version=f"flowgraph-{__version__}",
                            stripped_op_list=stripped_op_list(message))
    if meta_info_def is not None:
        info.MergeFromString(meta_info_def.SerializeToString())
    out.meta_info_def = info
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        items = graph.get_collection(key)
        if items and key != GraphKeys.SAVERS:
            col = _collection_def(key, items, strip, keep, export_scope)
            if col is not None:
                out.collection_def[key] = col
    _record_savers(out, graph, keys, export_scope, names)
    if filename is not None:
        write_meta_graph_file(out, filename, as_text=as_text)
    return out


# -- serialized .meta files, by content -----------------------------------------------------------
_cache = ContentCache(max_entries=8, max_bytes=64 << 20)  # a graph with large constants is not kept


def meta_graph_bytes(graph, saver_def) -> bytes:
    """The serialized ``MetaGraphDef`` of `graph` with `saver_def`: what
    ``export_meta_graph(graph=graph, saver_def=saver_def).SerializeToString()`` returns.

    The bytes are kept process-wide (8 entries, 64 MiB in all) under a digest of
    everything the export reads: the graph def, the collections as they would be written, the saver
    and its restore entries. Each `Estimator.train` call builds the same graph again and
    saves it with every checkpoint; a digest costs a fraction of an export.

    Example
    -------
    >>> import flowgraph as tf
    >>> def build():
    ...     with tf.Graph().as_default() as g:
    ...         tf.Variable([1.0], name="v")
    ...         saver = tf.train.Saver()
    ...     return g, saver.saver_def
    >>> meta_graph_bytes(*build()) == meta_graph_bytes(*build())
    True
    """
    graph_def, graph_digest = graph_def_snapshot(graph, add_shapes=True)
    key = _content_key(graph, graph_digest, saver_def)
    data = _cache.get(key)
    if data is None:
        data = export_meta_graph(graph=graph, graph_def=graph_def,
                                 saver_def=saver_def).SerializeToString()
        _cache.put(key, data)
    return data


def _content_key(graph, graph_digest: bytes, saver_def) -> bytes:
    digest = hashlib.blake2b(graph_digest, digest_size=20)
    saver_proto = _as_saver_def_proto(saver_def) if saver_def is not None else None
    if saver_proto is not None:
        digest.update(saver_proto.SerializeToString())
        digest.update(repr(graph.__dict__.get("_saver_entries", {}).get(
            saver_proto.restore_op_name)).encode())
    digest.update(b"\0collections")
    for key in graph.get_all_collection_keys():
        items = graph.get_collection(key)
        col = _collection_def(key, items, str, lambda name: True, quiet=True) if items else None
        if col is not None:
            digest.update(repr(key).encode())
            digest.update(col.SerializeToString())
    return digest.digest()


def meta_graph_cache_stats() -> dict:
    """Hits and misses of `meta_graph_bytes` in this process, and its entries.

    Example
    -------
    >>> sorted(meta_graph_cache_stats())
    ['entries', 'hits', 'misses']
    """
    return _cache.stats()
