"""``tf.train.import_meta_graph``: a ``.meta`` file (TensorFlow's ``MetaGraphDef``,
written by TensorFlow or by flowgraph) imported into the default graph, with its
collections, its `tf.Variable` objects and a Saver that restores them.

The file is parsed and checked first (`tf_formats.meta_graph`: lengths and constant
sizes bounded, binary or text). Any node that needs an op flowgraph does not have or
that calls Python objects of the writing process (`PROCESS_LOCAL_OPS`) is left out,
with the nodes depending on it (`tf_formats.saver_graph`; they are named in a warning);
the remaining nodes are imported op by op, registered ops only, so a file never runs
code. Variables come back from the ``VariableDef`` messages of their collections; ops
and tensors of ``node_list`` collections by name; loops and conds from
``while_context``/``cond_context`` (`meta_graph_contexts`). The file's saver nodes are
kept, as TensorFlow keeps them: the returned Saver runs them
(`flowgraph.train.saver_by_name`), and so may a program through the SaverDef's names
(``sess.run(sd.restore_op_name, {sd.filename_tensor_name: prefix})``). When they cannot
be kept (an op of theirs is missing), the Saver is a flowgraph Saver over the variables
the file's saver covered, under the same checkpoint keys (read from its ``RestoreV2``
node). Either way ``saver.restore(sess, prefix)`` reads a TensorFlow checkpoint or a
flowgraph one.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     y = tf.multiply(v, 3.0, name="y")
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         path = tf.train.Saver().save(sess, os.path.join(d, "model.ckpt"))
>>> with tf.Graph().as_default() as g, tf.Session() as sess:
...     saver = import_meta_graph(path + ".meta")
...     saver.restore(sess, path)
...     print(sess.run(g.get_tensor_by_name("y:0")))
[3. 6.]
"""

from __future__ import annotations

import logging
import os
import re

from flowgraph.framework import errors
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.tf_formats.bundle_slices import parse_slice_spec
from flowgraph.framework.tf_formats.graph_def import graph_def_to_dict
from flowgraph.framework.tf_formats.meta_graph import (
    parse_meta_graph,
    read_meta_graph_file,
)
from flowgraph.framework.tf_formats.meta_graph_messages import (
    MetaGraphDefProto,
    QueueRunnerDefProto,
    SaverDefProto,
    VariableDefProto,
)
from flowgraph.framework.tf_formats.saver_graph import (
    drop_saver_nodes,
    restore_keys,
    restore_slice_specs,
    saver_scope,
)
from flowgraph.ops.variable_def import rebuild_variable
from flowgraph.train.meta_graph_contexts import CONTEXT_COLLECTIONS, restore_contexts
from flowgraph.train.meta_graph_unbound import UNBOUND_INPUTS_KEY, check_unbound_inputs
from flowgraph.train.queue_runner import QueueRunner
from flowgraph.train.saver import Saver

__all__ = ["import_meta_graph"]

logger = logging.getLogger("tensorflow")

# Ops whose kernels call Python objects of the process that built the graph (numpy_input_fn's
# arrays, py_func's functions): another process has nothing for them to call.
PROCESS_LOCAL_OPS = frozenset({"NumpyBatchSource", "PyFunc", "PyFuncStateless",
                               "EagerPyFunc"})
_VALID_SCOPE = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")


def _saver_kept(graph_def: dict, saver_def) -> bool:
    """Whether `graph_def` (saver nodes kept) holds the nodes `saver_def` names and a
    ``RestoreV2`` for its restore op to run."""
    names = {n["name"] for n in graph_def["node"]}
    wanted = (saver_def.filename_tensor_name, saver_def.save_tensor_name,
              saver_def.restore_op_name)
    return all(name.rpartition(":")[0] in names if ":" in name else name in names
               for name in wanted)


def _as_meta_graph(meta_graph_or_file) -> tuple[MetaGraphDefProto, str]:
    if hasattr(meta_graph_or_file, "SerializeToString"):
        # Parsed again, as a file's bytes are: a message built in memory may hold str
        # where bytes belong, protobuf's own MetaGraphDef is read the same way, and its
        # resource variables are read as a file's are (`tf_formats.resource_variables`).
        source = "the MetaGraphDef"
        return parse_meta_graph(meta_graph_or_file.SerializeToString(), source), source
    path = os.fspath(meta_graph_or_file)
    return read_meta_graph_file(path), path


def _slice_info_from_spec(full_name: str, spec: str):
    """A `SaveSliceInfo` from TensorFlow's slice spec ``"200 3 0,67:0,3"``; None when the
    spec does not parse."""
    from flowgraph.ops.partitioned_variables import SaveSliceInfo

    try:
        return SaveSliceInfo(full_name, *parse_slice_spec(spec))
    except ValueError:
        return None


# Collections of TF's control-flow context protos, rebuilt by `meta_graph_contexts`.
_CONTROL_FLOW_CONTEXTS = frozenset(CONTEXT_COLLECTIONS)


# Collections whose bytes_list items TensorFlow writes as messages (VariableDefs, and
# the control-flow contexts skipped above), never as strings.
_MESSAGE_COLLECTIONS = frozenset({
    "variables", "trainable_variables", "local_variables", "model_variables",
    "moving_average_variables", "metric_variables", "global_step", "queue_runners",
    "savers", "cond_context", "while_context"})


def _variable_def_or_none(raw: bytes):
    """The VariableDef `raw` holds, or None when it is not one (a string item)."""
    try:
        vd = VariableDefProto.FromString(raw)
    except ValueError:
        return None
    return vd if vd.variable_name and vd.initializer_name else None


def _scoped_string(raw: bytes, scoped):
    # TensorFlow gives a string item back as it was written (bytes) unless the import has
    # a scope, which it prepends as to a name (giving str).
    text = raw.decode("utf-8", errors="replace")
    out = scoped(text)
    return raw if out == text else out


def _restore_queue_runners(graph, values, import_scope: str, source: str) -> None:
    """The ``queue_runners`` collection's QueueRunnerDefs as `QueueRunner`s over the
    imported queue and ops (`tf.train.start_queue_runners` starts them)."""
    for raw in values:
        try:
            runner = QueueRunner.from_proto(QueueRunnerDefProto.FromString(raw),
                                            import_scope=import_scope or None)
        except (ValueError, KeyError, TypeError) as e:
            logger.warning("import_meta_graph: %s: a queue runner of collection "
                           "'queue_runners' is left out: %s", source, e)
            continue
        graph.add_to_collection(GraphKeys.QUEUE_RUNNERS, runner)


def _collect_saver(graph, mg: MetaGraphDefProto, saver, source: str) -> None:
    """Put `saver` (the Saver `import_meta_graph` built for the file's own SaverDef) in
    the ``savers`` collection where the file lists that SaverDef there. flowgraph rebuilds
    only the file's own Saver; another listed SaverDef is left out with a log line."""
    col = mg.collection_def.get(GraphKeys.SAVERS)
    if col is None or not col.HasField("bytes_list"):
        return
    own = mg.saver_def.restore_op_name if mg.HasField("saver_def") else None
    for raw in col.bytes_list.value:
        try:
            restore_op = SaverDefProto.FromString(raw).restore_op_name
        except ValueError as e:
            restore_op, reason = None, f"not a SaverDef ({e})"
        else:
            reason = f"its restore op {restore_op!r} is not the file's Saver's"
        if saver is not None and restore_op == own:
            graph.add_to_collection(GraphKeys.SAVERS, saver)
        else:
            logger.warning("import_meta_graph: %s: a Saver of collection 'savers' is left "
                           "out: %s", source, reason)


def restore_collections(graph, mg: MetaGraphDefProto, scoped, source: str,
                        with_variables: bool = True, skip: str | None = None) -> dict:
    """Fill the graph's collections from `mg`; returns variable name -> Variable.

    Without `with_variables`, collections of ``VariableDef`` messages are left to the
    caller (the SavedModel loader rebuilds its variables itself). The collection
    `skip` (the unbound inputs of a scoped export) is not imported.
    """
    variables: dict = {}
    # TensorFlow's order: the trainable variables first, then by key
    for key, col in sorted(mg.collection_def.items(),
                           key=lambda kv: (kv[0] != GraphKeys.TRAINABLE_VARIABLES, kv[0])):
        if skip and key == skip:
            continue
        if not with_variables and col.HasField("bytes_list") and any(
                _variable_def_or_none(raw) is not None for raw in col.bytes_list.value):
            continue
        if key in _CONTROL_FLOW_CONTEXTS:
            if col.HasField("bytes_list"):  # WhileContextDef/CondContextDef messages
                restore_contexts(graph, key, col.bytes_list.value, scoped, source)
            continue
        if key == GraphKeys.QUEUE_RUNNERS and col.HasField("bytes_list"):
            _restore_queue_runners(graph, col.bytes_list.value, scoped(""), source)
            continue
        if key == GraphKeys.SAVERS:
            continue  # SaverDefs: `import_meta_graph` collects its Saver (`_collect_saver`)
        if col.HasField("bytes_list"):
            for raw in col.bytes_list.value:
                message = key in _MESSAGE_COLLECTIONS
                vd = None if message else _variable_def_or_none(raw)
                if vd is None and not message:
                    # a string item: TensorFlow prefixes it with the scope
                    graph.add_to_collection(key, _scoped_string(raw, scoped))
                    continue
                try:
                    vd = vd or VariableDefProto.FromString(raw)
                    if not vd.variable_name:
                        raise ValueError("not a VariableDef")
                    var = variables.get(vd.variable_name)
                    if var is None:
                        var = variables[vd.variable_name] = rebuild_variable(graph, vd,
                                                                             scoped)
                except (ValueError, KeyError) as e:
                    logger.warning("import_meta_graph: %s: an item of collection '%s' is "
                                   "left out: %s", source, key, e)
                    continue
                graph.add_to_collection(key, var)
        elif col.HasField("node_list"):
            absent = []
            for name in col.node_list.value:
                try:
                    graph.add_to_collection(key, graph.as_graph_element(scoped(name)))
                except (KeyError, ValueError, TypeError):
                    absent.append(name)
            if absent:
                logger.warning("import_meta_graph: %s: collection '%s' names %d element(s) "
                               "that are not in the imported graph (left out): %s", source,
                               key, len(absent), ", ".join(absent[:5]))
        elif col.HasField("int64_list"):
            for value in col.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif col.HasField("float_list"):
            for value in col.float_list.value:
                graph.add_to_collection(key, float(value))
        elif col.HasField("any_list"):  # e.g. a SavedModel's AssetFileDefs
            for value in col.any_list.value:
                graph.add_to_collection(key, value)
    return variables


def import_meta_graph(meta_graph_or_file, clear_devices: bool = False,
                      import_scope: str | None = None, **kwargs) -> Saver | None:
    """Import a ``.meta`` file (or a MetaGraphDef) into the default graph.

    Returns a `Saver` over the imported variables (its `restore` reads the checkpoint
    the file goes with), or None when the file has neither a saver nor variables.
    `import_scope` prefixes every imported name (``scope/x:0``); `clear_devices` drops
    the recorded device placements; other keyword arguments go to the Saver
    (``max_to_keep``, ``format``, ...).

    Raises
    ------
    NotFoundError (also an OSError)
        No such file.
    DataLossError
        The file is not a MetaGraphDef, or declares constants far larger than itself.
    ImportGraphDefError (a ValueError)
        The graph def does not import (a node references a missing input, ...).
    """
    mg, source = _as_meta_graph(meta_graph_or_file)
    input_map = kwargs.pop("input_map", None)
    unbound_key = kwargs.pop("unbound_inputs_col_name", UNBOUND_INPUTS_KEY)
    check_unbound_inputs(mg, input_map, unbound_key)
    restore_op = mg.saver_def.restore_op_name if mg.HasField("saver_def") else ""
    scope = saver_scope(restore_op) if restore_op else ""
    try:
        graph_def = graph_def_to_dict(mg.graph_def)
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        raise errors.DataLossError(
            None, None, f"Cannot import {source}: {type(e).__name__}: {e}. The file is "
            "corrupted, or holds a graph flowgraph cannot represent.") from None
    keys = restore_keys(graph_def, restore_op) if restore_op else {}
    specs = restore_slice_specs(graph_def, restore_op) if restore_op else {}
    kept, lost = drop_saver_nodes(graph_def, scope, PROCESS_LOCAL_OPS, keep_savers=True)
    by_name = bool(restore_op) and _saver_kept(kept, mg.saver_def)
    if by_name or not restore_op:
        # The saver's nodes import (the returned Saver drives them by name), or the file
        # names no saver: its save/restore nodes are plain nodes, imported as TF does.
        graph_def = kept
    else:
        graph_def, lost = drop_saver_nodes(graph_def, scope, PROCESS_LOCAL_OPS)
    if lost:
        logger.warning("import_meta_graph: %s: %d node(s) need ops flowgraph does not have, "
                       "or that read Python objects of the process that wrote the file, "
                       "and are left out: %s", source, len(lost), ", ".join(lost[:10]))
    if clear_devices:
        for n in graph_def["node"]:
            n["device"] = ""
    from flowgraph.framework.importer import import_graph_def

    graph = get_default_graph()
    prefix = f"{import_scope.rstrip('/')}/" if import_scope else ""

    def scoped(name: str) -> str:
        return prefix + name

    with graph.as_default(), graph.name_scope(None):
        import_graph_def(graph_def, input_map=input_map, name=prefix.rstrip("/"))
        variables = restore_collections(graph, mg, scoped, source, skip=unbound_key)
    saved = [v for name, v in variables.items()
             if v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
             or v in graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)]
    if keys:
        by_op = {name.rpartition(":")[0]: v for name, v in variables.items()}
        grouped: dict = {}  # the parts of a partitioned variable share a key
        for op, key in keys.items():
            if op in by_op:
                if op in specs and getattr(by_op[op], "_save_slice_info", None) is None:
                    # a part whose VariableDef does not say where it sits: the saver's
                    # shape_and_slices does
                    by_op[op]._save_slice_info = _slice_info_from_spec(key, specs[op])
                grouped.setdefault(key, []).append(by_op[op])
        var_list = {key: parts[0] if len(parts) == 1 else parts
                    for key, parts in grouped.items()}
    else:  # no saver in the file: a new one, parts keyed by their full name as TF does
        grouped = {}
        for v in saved:
            info = getattr(v, "_save_slice_info", None)
            name = info.full_name if info is not None else v.op.name
            grouped.setdefault(name[len(prefix):] if name.startswith(prefix) else name,
                               []).append(v)
        var_list = {key: parts[0] if len(parts) == 1 else parts
                    for key, parts in grouped.items()}
    if by_name:
        with graph.as_default():
            saver = Saver(saver_def=mg.saver_def, name=prefix.rstrip("/") or None)
        if saver._by_name is not None:
            _collect_saver(graph, mg, saver, source)
            return saver
    if not var_list:
        _collect_saver(graph, mg, None, source)
        return None
    sd = mg.saver_def
    options = {"max_to_keep": sd.max_to_keep or 5} if restore_op else {}
    if restore_op and sd.keep_checkpoint_every_n_hours:
        options["keep_checkpoint_every_n_hours"] = float(sd.keep_checkpoint_every_n_hours)
    options.update(kwargs)
    name = scope.rstrip("/")
    if not _VALID_SCOPE.match(name):
        name = "save"  # the file's saver scope is not a name flowgraph accepts
    if not restore_op:
        name, prefix = "save", ""  # TensorFlow's plain Saver() for a file without one
    with graph.as_default(), graph.name_scope(None):
        saver = Saver(var_list=var_list, name=prefix + name, **options)
    _collect_saver(graph, mg, saver, source)
    return saver
