"""`tf.saved_model.builder.SavedModelBuilder`: write a SavedModel directory.

The builder stages everything in a hidden sibling directory: the variables are saved
there by `add_meta_graph_and_variables` (a `tf.train.Saver` checkpoint at
``variables/variables``), assets are copied there as each meta graph is added, and
`save` writes ``saved_model.pb``, fsyncs it and renames the staging directory to
`export_dir`. A crash at any point leaves either no `export_dir` or a complete one, so a
server watching the parent directory never sees a half-written model.

By default that is TensorFlow's layout (``saved_model.pb`` and a tensor bundle in
``variables/``, see `flowgraph.saved_model.tf_export`), which TensorFlow's loader and
TensorFlow Serving load. With ``format="flowgraph"`` (or under
`flowgraph.saved_model.tf_export.export_format`) the same staging writes flowgraph's
``saved_model.json`` instead.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> from flowgraph.saved_model import predict_signature_def
>>> export_dir = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     w = tf.Variable([[1.0], [2.0]], name="w")
...     y = tf.matmul(x, w, name="y")
...     with tf.Session() as sess:
...         sess.run(w.initializer)
...         builder = SavedModelBuilder(export_dir)
...         sig = predict_signature_def({"x": x}, {"y": y})
...         builder.add_meta_graph_and_variables(
...             sess, ["serve"], signature_def_map={"serving_default": sig})
...         path = builder.save()
>>> os.path.basename(path), sorted(os.listdir(export_dir))
(b'saved_model.pb', ['saved_model.pb', 'variables'])
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import weakref

from flowgraph.framework.dtypes import resource
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import get_op_def, has_op_def
from flowgraph.framework.serialization import encode_attr
from flowgraph.framework.versions import __version__
from flowgraph.saved_model import constants
from flowgraph.saved_model.assets import AssetCopier, collect_assets
from flowgraph.saved_model.format import (
    MetaGraphDef,
    MetaInfoDef,
    RestoreDef,
    RestoreEntry,
    SavedModel,
    SaveSliceInfoDef,
    SignatureDef,
    VariableDef,
    write_saved_model,
)
from flowgraph.saved_model.signature_def_utils import build_signature_def
from flowgraph.saved_model.tf_export import (
    check_format,
    tf_meta_graph,
    write_tf_saved_model,
    write_tf_variables,
)

__all__ = ["SavedModelBuilder"]

logger = logging.getLogger("tensorflow")


def _as_str_path(path) -> str:
    path = os.fspath(path)
    return os.fsdecode(path) if isinstance(path, bytes) else path


def _check_tags(tags) -> list[str]:
    if isinstance(tags, str | bytes):
        tags = [tags]
    if tags is None:
        raise ValueError("tags must be a list of strings, e.g. [tf.saved_model.SERVING]")
    out = []
    for t in tags:
        if isinstance(t, bytes):
            t = t.decode("utf-8")
        if not isinstance(t, str) or not t:
            raise TypeError(f"Each tag must be a non-empty string; got {t!r}")
        out.append(t)
    return out


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class SavedModelBuilder:
    """Builds a SavedModel at `export_dir` (TensorFlow 1.x's ``SavedModelBuilder``).

    Call `add_meta_graph_and_variables` once (it saves the variables), then
    `add_meta_graph` for more tag sets of the same variables, then `save`.

    Parameters
    ----------
    export_dir : str, bytes or PathLike
        Must not exist yet, or be an empty directory.
    format : {"flowgraph", "tensorflow"}, optional
        A flowgraph extension, as for ``tf.train.Saver``: "tensorflow" writes
        TensorFlow's SavedModel (``saved_model.pb`` + a tensor bundle), which TensorFlow
        1.x/2.x's ``tf.compat.v1.saved_model.loader.load`` and TensorFlow Serving load;
        "flowgraph" writes ``saved_model.json`` + the variables checkpoint. Default: the
        process-wide `tf.saved_model.get_export_format()` ("tensorflow" unless set).
        flowgraph's loader reads both.
    """

    def __init__(self, export_dir, format: str | None = None) -> None:
        self._format = check_format(format)
        export_dir = _as_str_path(export_dir)
        if os.path.exists(export_dir):
            if not os.path.isdir(export_dir) or os.listdir(export_dir):
                raise AssertionError(
                    f"Export directory {export_dir} already exists, and isn't empty. Please "
                    "choose a different export directory, or delete all the contents of "
                    "the specified directory: it is not empty, and a SavedModel is "
                    "written into a new or empty directory.")
        self._export_dir = export_dir
        self._meta_graphs: list[MetaGraphDef] = []
        self._tf_meta_graphs: list = []
        self._has_saved_variables = False
        self._saved = False
        self._train_op = None
        parent = os.path.dirname(os.path.abspath(export_dir))
        os.makedirs(parent, exist_ok=True)
        self._staging = tempfile.mkdtemp(
            prefix=f".tmp-{os.path.basename(os.path.abspath(export_dir))}-", dir=parent)
        self._assets = AssetCopier(self._staging)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._staging, True)

    # -- meta graphs ---------------------------------------------------------------------------
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices: bool = False, main_op=None,
                                     strip_default_attrs: bool = False, saver=None) -> None:
        """Save the variables of `sess` and add its graph as the meta graph for `tags`.

        `signature_def_map` maps keys to `SignatureDef`s; `assets_collection` is a list of
        string constant tensors holding file paths (copied into ``assets/``, as is every
        vocabulary or table file the graph reads; the export records only their names
        there, see `flowgraph.saved_model.assets`); `main_op`
        (or the older `legacy_init_op`) runs after the variables are restored at load
        time; `saver` defaults to a new Saver of every saveable variable.
        """
        if self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has already been saved. Please "
                "invoke `add_meta_graph()` instead (add_meta_graph_and_variables runs once "
                "per builder).")
        self._check_open()
        graph = sess.graph
        saver = self._maybe_create_saver(graph, saver)
        variables_dir = os.path.join(self._staging, constants.VARIABLES_DIRECTORY)
        os.makedirs(variables_dir, exist_ok=True)
        if self._format == "tensorflow":
            write_tf_variables(sess, saver, self._staging)
        elif not saver._is_empty:  # one key per variable (a partitioned one's parts too)
            saver.write_own_keys(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME))
        self._add(graph, tags, signature_def_map, assets_collection, legacy_init_op,
                  clear_devices, main_op, strip_default_attrs, saver)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices: bool = False, main_op=None,
                       strip_default_attrs: bool = False, saver=None) -> None:
        """Add the default graph as the meta graph for `tags`, sharing the variables
        saved by `add_meta_graph_and_variables` (which must come first)."""
        self._check_open()
        if not self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has not been saved yet; call "
                "add_meta_graph_and_variables() first.")
        graph = get_default_graph()
        saver = self._maybe_create_saver(graph, saver)
        self._add(graph, tags, signature_def_map, assets_collection, legacy_init_op,
                  clear_devices, main_op, strip_default_attrs, saver)

    def _add_train_op(self, train_op) -> None:
        """Record `train_op` in the next meta graph (used by Estimator exports)."""
        if train_op is not None and not isinstance(train_op, Tensor | Operation):
            raise TypeError(f"train_op needs to be a Tensor or Op: {train_op!r}")
        self._train_op = train_op

    # -- save ----------------------------------------------------------------------------------
    def save(self, as_text: bool = False) -> bytes:
        """Write ``saved_model.pb`` (``saved_model.pbtxt`` when `as_text`; flowgraph's
        format: ``saved_model.json``, indented when `as_text`) and move the staged
        directory into place; returns the path of that file (bytes, as TF)."""
        self._check_open()
        if self._format == "tensorflow":
            written = write_tf_saved_model(self._staging, self._tf_meta_graphs, as_text)
        else:
            written = write_saved_model(self._staging, SavedModel(
                meta_graphs=self._meta_graphs, flowgraph_version=_flowgraph_version()),
                as_text=as_text)
        for sub in (constants.VARIABLES_DIRECTORY, constants.ASSETS_DIRECTORY, ""):
            if os.path.isdir(os.path.join(self._staging, sub)):
                _fsync_dir(os.path.join(self._staging, sub))
        if os.path.isdir(self._export_dir):
            os.rmdir(self._export_dir)  # empty (checked in __init__); rename needs it gone
        os.rename(self._staging, self._export_dir)
        _fsync_dir(os.path.dirname(os.path.abspath(self._export_dir)))
        self._cleanup.detach()
        self._saved = True
        logger.info("SavedModel written to: %s", self._export_dir)
        return os.fsencode(os.path.join(self._export_dir, os.path.basename(written)))

    # -- internals -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._saved:
            raise AssertionError(f"This SavedModelBuilder has already saved "
                                 f"{self._export_dir}; create a new builder.")

    @staticmethod
    def _maybe_create_saver(graph, saver):
        from flowgraph.train.saver import Saver

        if saver is None:
            with graph.as_default():
                saver = Saver(sharded=True, allow_empty=True)
        if not hasattr(saver, "_entries") or not hasattr(saver, "saver_def"):
            raise TypeError(f"saver must be a tf.train.Saver; got {type(saver).__name__}")
        saver.build()
        return saver

    def _add(self, graph, tags, signature_def_map, assets_collection, legacy_init_op,
             clear_devices, main_op, strip_default_attrs, saver) -> None:
        tags = _check_tags(tags)
        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Pass either main_op or legacy_init_op (they mean the same), "
                             "not both.")
        main_op = main_op if main_op is not None else legacy_init_op
        signatures = self._check_signatures(graph, signature_def_map or {})
        graph_def = graph.as_graph_def()
        for node in graph_def["node"]:
            if clear_devices:
                node["device"] = ""
            if strip_default_attrs and self._format == "flowgraph":
                # TensorFlow's defaults are not always flowgraph's: tf_meta_graph strips
                # its format's nodes against TensorFlow's OpDefs.
                _strip_default_attrs(node)
        if self._format != "tensorflow":
            _without_saver_file_ops(graph, graph_def)
        mg = MetaGraphDef(meta_info_def=MetaInfoDef(tags=tags, meta_graph_version="",
                                                    flowgraph_version=_flowgraph_version()),
                          graph_def=graph_def, signature_def=signatures)
        mg.saver_def = _restore_def(saver)
        mg.variables = _variable_defs(graph)
        mg.main_op = _op_name(main_op, "main_op", graph)
        if mg.main_op is not None:
            # As TensorFlow: one main op per graph, kept in its collection (a second
            # add_meta_graph of the same graph passes none).
            for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
                if graph.get_collection(key):
                    raise ValueError("Graph already contains one or more main ops under "
                                     f"the collection {key}.")
            graph.add_to_collection(constants.MAIN_OP_KEY, graph.get_operation_by_name(
                mg.main_op))
        mg.train_op = _op_name(self._train_op, "train_op", graph)
        self._train_op = None
        mg.asset_file_def = collect_assets(graph, graph_def, assets_collection, self._assets)
        if self._format == "tensorflow":
            self._tf_meta_graphs.append(tf_meta_graph(
                graph, graph_def, tags, signatures, saver, mg.main_op, mg.asset_file_def,
                clear_devices, strip_default_attrs, train_op=mg.train_op))
            return
        self._meta_graphs.append(mg)

    @staticmethod
    def _check_signatures(graph, signature_def_map) -> dict[str, SignatureDef]:
        if not isinstance(signature_def_map, dict):
            raise TypeError("signature_def_map must be a dict of key -> SignatureDef")
        out = {}
        for key, sig in signature_def_map.items():
            if not isinstance(key, str):
                raise TypeError(f"signature_def_map keys must be strings; got {key!r}")
            if not isinstance(sig, SignatureDef):
                raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef (from "
                                f"tf.saved_model.predict_signature_def, ...); got "
                                f"{type(sig).__name__}")
            for part in ("inputs", "outputs"):
                for name, info in getattr(sig, part).items():
                    if not info.name or not info.dtype:
                        raise AssertionError(
                            f"Signature '{key}': {part}[{name!r}] must have a tensor name "
                            f"and dtype; got {info!r}")
                    try:
                        graph.get_tensor_by_name(info.name)
                    except (KeyError, ValueError):
                        raise ValueError(
                            f"Signature '{key}': {part}[{name!r}] names tensor "
                            f"'{info.name}', which is not in the session's graph") from None
            out[key] = build_signature_def(dict(sig.inputs), dict(sig.outputs),
                                           sig.method_name)
        return out


def _flowgraph_version() -> str:
    return __version__


def _op_name(op, what: str, graph) -> str | None:
    if op is None:
        return None
    if isinstance(op, Tensor):
        op = op.op
    if not isinstance(op, Operation):
        raise TypeError(f"{what} needs to be an Operation: {op!r}")
    if op.graph is not graph:
        raise ValueError(f"{what} '{op.name}' is not from the graph being saved")
    return op.name


def _without_saver_file_ops(graph, graph_def: dict) -> None:
    """Make `graph_def` (flowgraph's format) loadable: the loader refuses ops that read or
    write files (`assets.REFUSED_FILE_OPS`), and flowgraph Savers' in-graph ops are
    TensorFlow's (``save/SaveV2``, ``save/RestoreV2``). Their save branch (whatever
    depends on ``SaveV2``/``MergeV2Checkpoints``) is left out; each ``RestoreV2`` becomes
    ``IdentityN`` of one placeholder per output, under the same name, so that the
    entries' tensors (``save/RestoreV2:1``), which the loader feeds, keep their names."""
    own = set()
    for _, _, names in graph.__dict__.get("_saver_entries", {}).values():
        own |= set(names or ())
    nodes = graph_def["node"]
    drop = {n["name"] for n in nodes
            if n["name"] in own and n["op"] in ("SaveV2", "MergeV2Checkpoints")}
    grew = True
    while grew:  # and the nodes waiting on them
        grew = False
        for n in nodes:
            if n["name"] in own and n["name"] not in drop and any(
                    r.lstrip("^").partition(":")[0] in drop for r in n.get("input", [])):
                drop.add(n["name"])
                grew = True
    kept = []
    for n in nodes:
        if n["name"] in drop:
            continue
        if n["name"] in own and n["op"] == "RestoreV2":
            dtypes = n.get("output_dtypes", [])
            for i, dtype in enumerate(dtypes):
                kept.append({"name": f"{n['name']}/value_{i}", "op": "Placeholder", "input": [],
                             "device": n.get("device", ""),
                             "attr": {"dtype": {"dtype": dtype}, "shape": {"shape": None}},
                             "output_shapes": [{"shape": None}], "output_dtypes": [dtype]})
            n = {"name": n["name"], "op": "IdentityN", "device": n.get("device", ""),
                 "input": [f"{n['name']}/value_{i}:0" for i in range(len(dtypes))],
                 "attr": {},  # (flowgraph's IdentityN takes its dtypes from its inputs)
                 "output_shapes": n.get("output_shapes"), "output_dtypes": dtypes}
        kept.append(n)
    graph_def["node"] = kept


def _restore_def(saver) -> RestoreDef | None:
    if saver._is_empty or saver.saver_def is None:
        return None
    sd = saver.saver_def
    return RestoreDef(restore_op_name=sd.restore_op_name,
                      filename_tensor_name=sd.filename_tensor_name,
                      save_tensor_name=sd.save_tensor_name,
                      entries=[RestoreEntry(key, ref.name, placeholder.name)
                               for key, (_, ref, placeholder) in zip(saver._own_keys(),
                                                                     saver._entries)])


def _slice_info_def(var) -> SaveSliceInfoDef | None:
    info = getattr(var, "_save_slice_info", None)
    if info is None:
        return None
    return SaveSliceInfoDef(full_name=info.full_name, full_shape=list(info.full_shape),
                            var_offset=list(info.var_offset), var_shape=list(info.var_shape))


def _variable_defs(graph) -> list[VariableDef]:
    """The Python variables of `graph` and the variable collections holding each."""
    seen: dict[int, VariableDef] = {}
    order = []
    for key in GraphKeys._VARIABLE_COLLECTIONS:
        for var in graph.get_collection(key):
            if not all(hasattr(var, a) for a in ("_variable", "_snapshot", "initializer")):
                continue
            vd = seen.get(id(var))
            if vd is None:
                initial = getattr(var, "_initial_value", None)
                vd = VariableDef(variable_name=var._variable.name,
                                 initializer_name=var.initializer.name,
                                 snapshot_name=var._snapshot.name,
                                 initial_value_name=initial.name if isinstance(
                                     initial, Tensor) else "",
                                 trainable=bool(getattr(var, "trainable", True)),
                                 save_slice_info_def=_slice_info_def(var),
                                 is_resource=var._variable.dtype.base_dtype == resource)
                seen[id(var)] = vd
                order.append(vd)
            vd.collections.append(key)
    return order


def _strip_default_attrs(node: dict) -> None:
    if not has_op_def(node["op"]):
        return
    defaults = get_op_def(node["op"]).attrs
    for key in [k for k in node.get("attr", {}) if k in defaults]:
        try:
            if encode_attr(defaults[key]) == node["attr"][key]:
                del node["attr"][key]
        except TypeError:
            pass
