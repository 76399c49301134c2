"""`tf.train.Saver`: save variables to checkpoints and restore them.

`save` fetches the variables' values with one `Session.run` and writes them to one
checkpoint file (see `flowgraph.train.checkpoint_utils` for the format), then rewrites
the directory's ``checkpoint`` state file, then deletes checkpoints beyond
`max_to_keep`; each write is atomic (temporary file, fsync, rename), the checkpoint's
files share one directory fsync before the state file is renamed (and its directory
fsynced), so a crash at any moment leaves the previous checkpoint loadable.

`restore` reads the file in Python, checks every variable against it (present, same
dtype, compatible shape: errors name the variable, the shapes and the file), and runs
the restore op built with the Saver: one placeholder and one ``Assign`` per variable,
grouped into ``save/restore_all``. Because restoring is an op of the graph, it works in
any session of that graph.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> from flowgraph.train.saver import Saver
>>> d = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     saver = Saver()
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         path = saver.save(sess, os.path.join(d, "model.ckpt"), global_step=7)
...     with tf.Session() as sess:
...         saver.restore(sess, path)
...         print(os.path.basename(path), sess.run(v))
model.ckpt-7 [1. 2.]
"""

from __future__ import annotations

import logging
import numbers
import os
import time

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import not_found
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tf_formats.bundle import bundle_data_files, index_file, write_bundle
from flowgraph.framework.tf_formats.meta_graph import write_meta_graph_file
from flowgraph.train import checkpoint_state as _state
from flowgraph.train.checkpoint_utils import CheckpointReader, write_checkpoint
from flowgraph.train.meta_graph_export import (
    export_meta_graph,
    meta_graph_bytes,
    register_saver_entries,
)

__all__ = ["Saver", "SaverDef"]

logger = logging.getLogger("flowgraph")


class CheckpointNotFoundError(errors.NotFoundError, ValueError):
    """A checkpoint passed to `Saver.restore` does not exist.

    TensorFlow raises ValueError here (and NotFoundError from the readers); this class is
    both, so either ``except`` clause catches it.
    """


class SaverDef:
    """The names of a Saver's graph elements (TensorFlow's SaverDef message)."""

    V1, V2 = 1, 2

    def __init__(self, filename_tensor_name="", save_tensor_name="", restore_op_name="",
                 max_to_keep=5, sharded=False, keep_checkpoint_every_n_hours=10000.0,
                 version=2) -> None:
        self.filename_tensor_name = filename_tensor_name
        self.save_tensor_name = save_tensor_name
        self.restore_op_name = restore_op_name
        self.max_to_keep = max_to_keep
        self.sharded = sharded
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.version = version

    def __repr__(self) -> str:
        return "SaverDef(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"


def _is_variable(x) -> bool:
    return hasattr(x, "_ref") and hasattr(x, "initializer") and hasattr(x, "op")


def _saveable_tensor(key: str, var) -> Tensor:
    if _is_variable(var):
        return var._ref()
    if isinstance(var, Tensor) and var.dtype.is_ref_dtype:
        return var
    raise TypeError(
        f"Saver: '{key}' maps to {var!r}, which is not a variable; var_list must hold "
        "tf.Variable objects (or variable ref tensors).")


def _var_list_to_dict(var_list) -> dict[str, Tensor]:
    """name -> variable ref tensor, from a list (keyed by op names) or a dict."""
    if isinstance(var_list, dict):
        items = list(var_list.items())
        for key, _ in items:
            if not isinstance(key, str):
                raise TypeError(f"Saver: var_list dict keys must be strings, got {key!r}")
    else:
        flat = []
        for v in var_list:
            flat.extend(v if isinstance(v, list | tuple) else [v])
        items = []
        for v in flat:
            if not (_is_variable(v) or isinstance(v, Tensor)):
                raise TypeError(f"Saver: var_list items must be variables, got {v!r}")
            items.append((v.op.name, v))
    out: dict[str, Tensor] = {}
    for key, var in items:
        tensor = _saveable_tensor(key, var)
        if key in out:
            if out[key] is tensor:
                continue
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = tensor
    return out


def _all_saveable_variables(graph) -> list:
    out = list(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
    for v in graph.get_collection(GraphKeys.SAVEABLE_OBJECTS):
        if _is_variable(v) and all(v is not w for w in out):
            out.append(v)
    return out


class Saver:
    """Saves and restores variables (TensorFlow 1.x's ``tf.train.Saver``).

    Parameters
    ----------
    var_list : list, dict or None
        Variables to save: None (every saveable global variable), a list (saved under
        their op names, e.g. ``dense/kernel``), or a dict name -> variable.
    reshape : bool
        Allow restoring a value of a different shape with the same number of elements.
    max_to_keep : int or None
        Keep this many recent checkpoints (older ones are deleted after each successful
        save); 0 or None keeps all.
    keep_checkpoint_every_n_hours : float
        Additionally keep one checkpoint per this many hours.
    name : str, optional
        Name scope of the Saver's ops (default ``save``).
    defer_build, allow_empty, pad_step_number, filename, ...
        As in TensorFlow; `sharded` and `write_version` are accepted and ignored (one
        file per checkpoint).
    format : {"flowgraph", "tensorflow"}
        A flowgraph extension: "tensorflow" writes TensorFlow's checkpoint format
        (``PREFIX.index`` + ``PREFIX.data-00000-of-00001``), which TensorFlow's Saver
        reads; the default writes flowgraph's one-file format. Restore reads both.
    """

    def __init__(self, var_list=None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: str | None = None, restore_sequentially: bool = False, saver_def=None,
                 builder=None, defer_build: bool = False, allow_empty: bool = False,
                 write_version: int = 2, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: str | None = None,
                 format: str = "flowgraph") -> None:
        if format not in ("flowgraph", "tensorflow"):
            raise ValueError(f"Saver: format must be 'flowgraph' or 'tensorflow', got {format!r}")
        self._format = format
        if defer_build and var_list:
            raise ValueError(
                "If `var_list` is provided then build cannot be deferred. Either set "
                "defer_build=False or var_list=None.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._last_preserved_timestamp = time.time()
        self._is_built = False
        self._is_empty = False
        self._entries: list[tuple[str, Tensor, Tensor]] = []
        self.saver_def = saver_def
        if not defer_build:
            self.build()

    # -- graph construction ----------------------------------------------------------------------
    def build(self) -> None:
        """Create the Saver's ops (called by the constructor unless `defer_build`)."""
        if self._is_built:
            return
        graph = get_default_graph()
        var_list = self._var_list
        if var_list is None:
            var_list = _all_saveable_variables(graph)
        variables = _var_list_to_dict(var_list)
        self._is_built = True
        if not variables:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        graph = next(iter(variables.values())).graph
        from flowgraph.ops.array_ops import identity, placeholder
        from flowgraph.ops.control_flow_ops import group
        from flowgraph.ops.state_ops import assign

        with graph.as_default(), graph.control_dependencies(None), \
                graph.name_scope(self._name or "save") as scope:
            filename = constant(self._filename or "model", name="Const")
            save_tensor = identity(filename, name="control_dependency")
            assigns = []
            for key in sorted(variables):
                ref = variables[key]
                dtype = ref.dtype.base_dtype
                value = placeholder(dtype, ref.shape, name="RestoreV2")
                validate = not self._reshape and ref.shape.is_fully_defined()
                with graph.colocate_with(ref.op):
                    assigns.append(assign(ref, value, validate_shape=validate, name="Assign"))
                self._entries.append((key, ref, value))
            restore_op = group(*assigns, name="restore_all")
        self._restore_op = restore_op
        self._graph = graph
        register_saver_entries(graph, restore_op.name, self._filename or "model", [
            (key, ref.op.name, ref.dtype.base_dtype.as_datatype_enum,
             ref.shape.as_list() if ref.shape.ndims is not None else None)
            for key, ref, _ in self._entries])
        if self.saver_def is None:
            self.saver_def = SaverDef(
                filename_tensor_name=filename.name, save_tensor_name=save_tensor.name,
                restore_op_name=restore_op.name, max_to_keep=self._max_to_keep or 0,
                sharded=self._sharded,
                keep_checkpoint_every_n_hours=self._keep_every_n_hours)
        self._scope = scope

    def as_saver_def(self) -> SaverDef:
        return self.saver_def

    def export_meta_graph(self, filename=None, collection_list=None, as_text: bool = False,
                          export_scope=None, clear_devices: bool = False,
                          clear_extraneous_savers: bool = False,
                          strip_default_attrs: bool = False, save_debug_info: bool = False):
        """Write this Saver's graph, collections and SaverDef as a ``.meta`` file (see
        `flowgraph.train.meta_graph_export.export_meta_graph`); returns the
        MetaGraphDef."""
        return export_meta_graph(
            filename=filename, graph_def=None, saver_def=self.saver_def,
            collection_list=collection_list, as_text=as_text,
            graph=getattr(self, "_graph", None), export_scope=export_scope,
            clear_devices=clear_devices, clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info)

    # -- bookkeeping of recent checkpoints -------------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """The prefixes of the checkpoints not (yet) deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        """DEPRECATED in TensorFlow: use `set_last_checkpoints_with_time`."""
        if not isinstance(last_checkpoints, list):
            raise TypeError(f"last_checkpoints must be a list, got {type(last_checkpoints)}")
        self._last_checkpoints = [(p, np.inf) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Set the list of ``(prefix, timestamp)`` the Saver will manage."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list of (path, time)")
        self._last_checkpoints = [(p, float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        """Manage (and eventually delete) existing checkpoints, e.g. after a restart:
        ``saver.recover_last_checkpoints(state.all_model_checkpoint_paths)``."""
        existing = [p for p in checkpoint_paths if _state.checkpoint_exists(p)]
        mtimes = _state.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, mtimes)))

    def _record_last_checkpoint(self, path: str) -> None:
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp > self._next_checkpoint_time:
                # keep_checkpoint_every_n_hours: this one is kept for good.
                self._next_checkpoint_time += self._keep_every_n_hours * 3600
                self._last_preserved_timestamp = stamp
                continue
            try:
                _state.remove_checkpoint(path, meta_graph_suffix=meta_graph_suffix)
            except OSError as e:
                logger.warning("Ignoring: could not delete old checkpoint %s: %s", path, e)

    # -- save ------------------------------------------------------------------------------------
    def save(self, sess, save_path: str, global_step=None, latest_filename: str | None = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True,
             write_state: bool = True, strip_default_attrs: bool = False,
             save_debug_info: bool = False) -> str | None:
        """Save the variables; returns the checkpoint prefix (``save_path-STEP``).

        `global_step` may be an int or a tensor/variable (evaluated in `sess`). With
        `write_state`, the ``checkpoint`` file of the directory is updated and
        checkpoints beyond `max_to_keep` are deleted. With `write_meta_graph`, the graph
        is written next to the checkpoint as ``PREFIX.meta`` (TensorFlow's MetaGraphDef,
        see `export_meta_graph`; ``tf.train.import_meta_graph`` reads it back).
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        step_fetch = None
        if global_step is not None and not isinstance(global_step, numbers.Integral):
            step_fetch = global_step
        if global_step is None and os.path.basename(save_path) == latest_filename:
            raise ValueError(
                f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                f"'{save_path}'")
        parent = os.path.dirname(save_path)
        if not os.path.isdir(parent or "."):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if self._is_empty:
            return None
        fetches = [ref for _, ref, _ in self._entries]
        if step_fetch is not None:
            fetches.append(step_fetch)
        values = sess.run(fetches)
        if step_fetch is not None:
            global_step = int(np.asarray(values.pop()))
        if global_step is not None:
            fmt = "{}-{:08d}" if self._pad_step_number else "{}-{}"
            checkpoint_file = fmt.format(save_path, int(global_step))
        else:
            checkpoint_file = save_path
        _state.remove_stale_temps(parent)
        tensors = {key: np.asarray(value) for (key, _, _), value in zip(self._entries, values)}
        # The checkpoint's files are written (each fsynced, then renamed) and their
        # directory fsynced once, before the state file that names them is written.
        with _state.deferred_directory_syncs():
            self._write_files(checkpoint_file, tensors)
            if write_meta_graph:
                try:
                    self._write_meta_graph(f"{checkpoint_file}.{meta_graph_suffix}")
                except (ValueError, TypeError, KeyError) as e:
                    # The checkpoint is written; a graph TensorFlow's format cannot hold
                    # must not make the save fail.
                    logger.warning("Saver: checkpoint %s saved, but its graph could not be "
                                   "written as %s.%s: %s", checkpoint_file, checkpoint_file,
                                   meta_graph_suffix, e)
        if write_state:
            self._record_last_checkpoint(checkpoint_file)
            _state.update_checkpoint_state(
                parent or ".", checkpoint_file,
                all_model_checkpoint_paths=self.last_checkpoints or [checkpoint_file],
                latest_filename=latest_filename,
                all_model_checkpoint_timestamps=[
                    t for _, t in self._last_checkpoints if np.isfinite(t)] or None,
                last_preserved_timestamp=self._last_preserved_timestamp)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return checkpoint_file

    def _write_files(self, checkpoint_file: str, tensors: dict) -> None:
        if self._format == "tensorflow":
            write_bundle(checkpoint_file, tensors)
            # `write_bundle` renames without fsyncing: make its files durable here.
            for path in (*bundle_data_files(checkpoint_file), index_file(checkpoint_file)):
                _state.make_durable(path)
        elif _holds_exactly(checkpoint_file, tensors):
            # The same step saved again with the same values (a session that restored
            # this checkpoint saves it on creation): the file is kept, made durable.
            _state.make_durable(checkpoint_file)
        else:
            write_checkpoint(checkpoint_file, tensors)

    def _write_meta_graph(self, path: str) -> None:
        # A finalized graph (a MonitoredSession's, an Estimator's) is serialized once and
        # its bytes reused while no op or collection item is added.
        graph = self._graph
        key = None
        if graph.finalized:
            key = (graph.version, tuple((k, len(graph.get_collection(k)))
                                        for k in graph.get_all_collection_keys()))
        cached = self.__dict__.get("_meta_graph_cache")
        if key is None or cached is None or cached[0] != key:
            # The next graph built the same way (the next `train` call) finds its
            # bytes by content (`meta_graph_bytes`).
            data = meta_graph_bytes(graph, self.saver_def)
            self._meta_graph_cache = (key, data) if key is not None else None
        else:
            data = cached[1]
        if _state.same_bytes_on_disk(path, data):
            # The same graph saved again beside the same step.
            _state.make_durable(path)
        else:
            write_meta_graph_file(data, path)  # fsynced and renamed
            _state.note_renamed(path)

    # -- restore ---------------------------------------------------------------------------------
    def restore(self, sess, save_path: str) -> None:
        """Restore the variables from checkpoint prefix `save_path` in `sess`.

        Raises
        ------
        NotFoundError (also a ValueError)
            The checkpoint does not exist.
        NotFoundError
            A variable is missing from the checkpoint.
        InvalidArgumentError
            A value's shape or dtype does not match its variable.
        DataLossError
            The file is truncated or corrupt.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not _state.checkpoint_exists(save_path):
            raise CheckpointNotFoundError(
                None, None,
                f"The passed save_path is not a valid checkpoint: {save_path}. "
                f"{not_found(save_path)}")
        feed = {}
        with CheckpointReader(save_path) as reader:
            for key, ref, placeholder in self._entries:
                feed[placeholder] = self._checked_value(reader, key, ref, save_path)
        sess.run(self._restore_op, feed_dict=feed)

    def _checked_value(self, reader: CheckpointReader, key: str, ref: Tensor,
                       path: str) -> np.ndarray:
        if not reader.has_tensor(key):
            raise errors.NotFoundError(
                None, None,
                f"Key {key} not found in checkpoint {path}. Restoring from checkpoint "
                f"failed: variable '{ref.op.name}' is missing from the checkpoint (it has "
                f"{len(reader.get_variable_to_shape_map())} tensors; list them with "
                "tf.train.list_variables). Make sure the graph matches the one that wrote "
                "the checkpoint, or pass a var_list mapping checkpoint names to variables.")
        # The declared dtype and shape are checked before anything is read, so a file
        # declaring a huge tensor fails here without allocating it.
        dtype = ref.dtype.base_dtype
        found = reader.tensor_dtype(key)
        if found != dtype:
            raise errors.InvalidArgumentError(
                None, None,
                f"Restoring variable '{ref.op.name}' from checkpoint {path}: tensor '{key}' "
                f"has dtype {found.name} in the checkpoint but the variable is "
                f"{dtype.name}.")
        shape, declared = ref.shape, reader.tensor_shape(key)
        reshape = False
        if not shape.is_compatible_with(declared):
            reshape = (self._reshape and shape.is_fully_defined()
                       and shape.num_elements() == int(np.prod(declared, dtype=object)))
            if not reshape:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"Restoring variable '{ref.op.name}' from checkpoint {path}: shape "
                    f"mismatch, the variable has shape {shape} but tensor '{key}' in the "
                    f"checkpoint has shape {declared} (Assign requires shapes of both tensors "
                    "to match). Build the graph that wrote the checkpoint, or pass "
                    "reshape=True when only the layout differs.")
        value = reader.get_tensor(key)
        return value.reshape(shape.as_list()) if reshape else value


def _holds_exactly(path: str, tensors: dict[str, np.ndarray]) -> bool:
    """Whether the one-file checkpoint `path` exists and holds exactly `tensors`: the same
    keys, dtypes, shapes and bytes (NaNs compare by their bits). Anything unreadable is
    not the same."""
    if not os.path.isfile(path):
        return False
    try:
        with CheckpointReader(path) as reader:
            if set(reader._names()) != set(tensors):  # names only: no header parsed
                return False
            for key, value in tensors.items():
                found = reader.get_tensor(key)
                if found.dtype != value.dtype or found.shape != value.shape:
                    return False
                if value.dtype.hasobject:
                    if found.ravel().tolist() != value.ravel().tolist():
                        return False
                elif found.tobytes() != np.ascontiguousarray(value).tobytes():
                    return False
    except (errors.OpError, OSError, ValueError, KeyError):
        return False
    return True
