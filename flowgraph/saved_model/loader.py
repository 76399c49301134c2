"""`tf.saved_model.loader.load`: import a SavedModel's meta graph into a session.

Loading reads and validates ``saved_model.json`` (`flowgraph.saved_model.format`: a
strict schema, registered op types only), imports the graph def of the meta graph whose
tags match into ``sess.graph``, rebuilds its `tf.Variable` objects and their
collections, restores their values from ``variables/variables`` (read with
``allow_pickle=False``; every value checked against its variable's dtype and shape; a
part of a partitioned variable is cut from the whole tensor at its entry's slice), and
runs the main op. Every file the graph reads must be an asset: a regular file inside
``assets/`` (`flowgraph.saved_model.assets` checks them before the graph is imported).
Nothing in the directory is ever executed as Python.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> from flowgraph import saved_model
>>> d = os.path.join(tempfile.mkdtemp(), "1")
>>> with tf.Graph().as_default():
...     w = tf.Variable([3.0], name="w")
...     y = tf.multiply(tf.placeholder(tf.float32, [None], name="x"), w, name="y")
...     with tf.Session() as sess:
...         sess.run(w.initializer)
...         saved_model.simple_save(sess, d, {"x": sess.graph.get_tensor_by_name("x:0")},
...                                 {"y": y})
>>> with tf.Graph().as_default():
...     with tf.Session() as sess:
...         meta = load(sess, ["serve"], d)
...         sig = meta.signature_def["serving_default"]
...         print(sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [1.0, 2.0]}))
[3. 6.]
"""

from __future__ import annotations

import logging
import os

from flowgraph.framework import errors
from flowgraph.framework.graph import GraphKeys
from flowgraph.framework.tf_formats.bundle import bundle_data_files, index_file, is_bundle
from flowgraph.framework.tf_formats.bundle_slices import parse_slice_spec
from flowgraph.saved_model import constants
from flowgraph.saved_model.assets import confine_graph_files, resolve_asset
from flowgraph.saved_model.format import (
    MetaGraphDef,
    SavedModel,
    SavedModelFormatError,
    contained_path,
    read_saved_model,
)
from flowgraph.saved_model.meta_graph_message import meta_graph_message
from flowgraph.saved_model.tf_saved_model import (
    check_signatures_runnable,
    is_tf_saved_model,
    read_tf_saved_model,
)

__all__ = ["load", "maybe_saved_model_directory"]

logger = logging.getLogger("tensorflow")


def _as_str(path) -> str:
    path = os.fspath(path)
    return os.fsdecode(path) if isinstance(path, bytes) else path


def maybe_saved_model_directory(export_dir) -> bool:
    """Whether `export_dir` looks like a SavedModel (holds ``saved_model.json``)."""
    export_dir = _as_str(export_dir)
    return os.path.isfile(os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_JSON)) \
        or is_tf_saved_model(export_dir)


contains_saved_model = maybe_saved_model_directory


def _tags_of(tags) -> set[str]:
    if isinstance(tags, str | bytes):
        tags = [tags]
    return {t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in tags or []}


def find_meta_graph(model: SavedModel, tags, export_dir: str) -> MetaGraphDef:
    """The meta graph whose tag set equals `tags` (RuntimeError listing those present)."""
    wanted = _tags_of(tags)
    for mg in model.meta_graphs:
        if set(mg.meta_info_def.tags) == wanted:
            return mg
    available = [set(mg.meta_info_def.tags) for mg in model.meta_graphs]
    # TensorFlow's words: the tags as passed, the tag sets present as Python sets
    raise RuntimeError(
        f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be found in "
        f"SavedModel, with available tags '{available}'. To inspect available tag-sets in "
        "the SavedModel, please use the SavedModel CLI: `saved_model_cli`.")


def _scoped(name: str, prefix: str) -> str:
    return name if not prefix else (f"^{prefix}{name[1:]}" if name.startswith("^")
                                    else prefix + name)


def _check_names_free(graph, mg: MetaGraphDef, prefix: str, export_dir: str) -> None:
    in_use = getattr(graph, "_names_in_use", {})
    if prefix:
        taken = [prefix.rstrip("/")] if prefix.rstrip("/").lower() in in_use else []
    else:
        taken = [n["name"] for n in mg.graph_def["node"]
                 if n["name"] in graph or n["name"].lower() in in_use]
    if taken:
        raise ValueError(
            f"Cannot load SavedModel {export_dir} into this graph: it already uses the names "
            f"{taken[:5]}{' ...' if len(taken) > 5 else ''}. Load into a fresh graph "
            "(tf.Session(graph=tf.Graph())) or pass another import_scope.")


def _rebuild_variables(graph, mg: MetaGraphDef, prefix: str) -> None:
    """Python `Variable` objects for the imported variable ops, in their collections."""
    from flowgraph.train.meta_graph_import import rebuild_variable

    for vd in mg.variables:
        try:
            var = rebuild_variable(graph, vd, lambda name: _scoped(name, prefix))
        except (KeyError, ValueError) as e:
            logger.warning("SavedModel: could not rebuild variable %s: %s",
                           vd.variable_name, e)
            continue
        for key in vd.collections:
            graph.add_to_collection(key, var)


def restore_variables(sess, mg: MetaGraphDef, export_dir: str, prefix: str = "") -> None:
    """Restore the variables of `mg` from ``export_dir/variables/variables``."""
    from flowgraph.train.checkpoint_utils import CheckpointReader

    rd = mg.saver_def
    if rd is None or not rd.entries:
        return
    path = contained_path(export_dir, constants.VARIABLES_DIRECTORY,
                          constants.VARIABLES_FILENAME)
    if not os.path.isfile(path) and not is_bundle(path):  # is_bundle: TensorFlow's format
        raise errors.NotFoundError(
            None, None, f"SavedModel {export_dir} has variables but no variables file at "
                        f"{path}.")
    if is_bundle(path):  # TensorFlow's layout: its index and data files are confined too
        for file in (index_file(path), *bundle_data_files(path)):
            contained_path(export_dir, constants.VARIABLES_DIRECTORY, os.path.basename(file))
    graph = sess.graph
    feed, wholes = {}, {}
    with CheckpointReader(path) as reader:
        for e in rd.entries:
            placeholder = graph.get_tensor_by_name(_scoped(e.placeholder, prefix))
            feed[placeholder] = _entry_value(reader, e, placeholder, export_dir, path, wholes)
    sess.run(graph.get_operation_by_name(_scoped(rd.restore_op_name, prefix)), feed)


def _entry_value(reader, e, placeholder, export_dir: str, path: str, wholes: dict):
    """The value of restore entry `e` from `reader`, checked against `placeholder`: the
    whole tensor under ``e.key``, or the part ``e.slice`` of it (the whole tensor of a
    partitioned variable is read once, into `wholes`)."""
    if not reader.has_tensor(e.key):
        raise errors.NotFoundError(
            None, None, f"Variable '{e.key}' of SavedModel {export_dir} is missing "
                        f"from {path}.")
    # Declared dtype and shape first: nothing is allocated for a mismatch.
    dtype, found = placeholder.dtype.base_dtype, reader.tensor_dtype(e.key)
    if found != dtype:
        raise SavedModelFormatError(
            f"Invalid SavedModel {export_dir}: variable '{e.key}' is stored in {path} "
            f"as {found.name}, but the graph declares {dtype.name}.")
    declared = list(reader.tensor_shape(e.key))
    what = f"variable '{e.key}'"
    if e.slice:
        try:
            full, starts, lengths = parse_slice_spec(e.slice)
        except ValueError as exc:
            raise SavedModelFormatError(
                f"Invalid SavedModel {export_dir}: variable '{e.key}' has a malformed slice "
                f"spec in its saver: {exc}") from None
        if declared != full:
            raise SavedModelFormatError(
                f"Invalid SavedModel {export_dir}: partitioned variable '{e.key}' is stored "
                f"in {path} with shape {declared}, but its saver's slice spec '{e.slice}' "
                f"gives the full shape {full}.")
        declared, what = lengths, f"the part '{e.slice}' of variable '{e.key}'"
    if not placeholder.shape.is_compatible_with(declared):
        raise SavedModelFormatError(
            f"Invalid SavedModel {export_dir}: {what} is stored in {path} with shape "
            f"{declared}, but the graph declares {placeholder.shape}.")
    if not e.slice:
        return reader.get_tensor(e.key)
    if e.key not in wholes:
        wholes[e.key] = reader.get_tensor(e.key)
    return wholes[e.key][tuple(slice(o, o + n) for o, n in zip(starts, lengths))]


def asset_feed(graph, mg: MetaGraphDef, export_dir: str, prefix: str = "") -> dict:
    """Asset tensor -> absolute path of its file under ``assets/`` (checked by
    `flowgraph.saved_model.assets.resolve_asset`)."""
    feed = {}
    for a in mg.asset_file_def:
        path = resolve_asset(export_dir, a.filename)
        feed[graph.get_tensor_by_name(_scoped(a.tensor_info.name, prefix))] = \
            path.encode("utf-8")
    return feed


def load(sess, tags, export_dir, import_scope: str | None = None, **saver_kwargs):
    """Load the meta graph tagged `tags` from `export_dir` into `sess` and restore it.

    Returns TensorFlow's ``MetaGraphDef`` message (``tf.MetaGraphDef``) of that tag set,
    as the export holds it (names without `import_scope`): ``signature_def``,
    ``collection_def``, ``meta_info_def`` (tags, versions, ``stripped_op_list``),
    ``graph_def``, ``saver_def``, ``asset_file_def``. For a ``saved_model.pb`` export it is
    the file's message; for ``saved_model.json`` one built as ``tf.train.export_meta_graph``
    writes it (`flowgraph.saved_model.meta_graph_message`).
    ``meta.signature_def[key].inputs[name].name`` is the tensor to feed (prefix it with
    ``import_scope + "/"`` when one is given).

    Raises
    ------
    OSError
        `export_dir` holds no ``saved_model.pb`` (or ``.pbtxt``, TensorFlow's format)
        and no ``saved_model.json`` (flowgraph's).
    RuntimeError
        No meta graph has exactly these tags.
    SavedModelFormatError (ValueError)
        The SavedModel is malformed or was tampered with; nothing was imported.
    """
    del saver_kwargs  # TensorFlow passes them to its Saver; ours needs none
    export_dir = _as_str(export_dir)
    model = (read_tf_saved_model(export_dir) if is_tf_saved_model(export_dir)
             else read_saved_model(export_dir))
    mg = find_meta_graph(model, tags, export_dir)
    check_signatures_runnable(mg, export_dir)
    graph = sess.graph
    prefix = f"{import_scope.rstrip('/')}/" if import_scope else ""
    _check_names_free(graph, mg, prefix, export_dir)
    from flowgraph.framework.importer import import_graph_def
    from flowgraph.train.meta_graph_import import restore_collections

    message = mg.message if mg.message is not None else meta_graph_message(mg)
    with graph.as_default(), graph.name_scope(None):
        import_graph_def(confine_graph_files(mg, export_dir), name=prefix.rstrip("/"))
        _rebuild_variables(graph, mg, prefix)
        # As TensorFlow's loader: the export's other collections too (user collections,
        # table initializers, the main op, assets, losses, ...).
        restore_collections(graph, message, lambda name: _scoped(name, prefix),
                            f"SavedModel {export_dir}", with_variables=False)
    restore_variables(sess, mg, export_dir, prefix)
    feed = asset_feed(graph, mg, export_dir, prefix)
    if mg.main_op is not None:
        sess.run(graph.get_operation_by_name(_scoped(mg.main_op, prefix)), feed or None)
    if mg.train_op is not None:
        train_op = graph.get_operation_by_name(_scoped(mg.train_op, prefix))
        if train_op not in graph.get_collection(GraphKeys.TRAIN_OP):
            with graph.as_default():
                graph.add_to_collection(GraphKeys.TRAIN_OP, train_op)
    logger.info("Restored SavedModel %s (tags %s)", export_dir, sorted(_tags_of(tags)))
    return message
