"""`tf.train.Saver`: save variables to checkpoints and restore them.

`save` fetches the variables' values with one `Session.run` and writes them in
TensorFlow's checkpoint format (``PREFIX.index`` + ``PREFIX.data-00000-of-00001``, see
`flowgraph.framework.tf_formats.bundle`; a partitioned variable is one entry with its
slices, `bundle_slices`), or with ``format="flowgraph"`` in flowgraph's one-file format
(`flowgraph.train.checkpoint_utils`), plus the graph as ``PREFIX.meta``.

Order of operations of one save (`checkpoint_state.write_durably`), which keeps the
guarantee "when `save` returns, the checkpoint and the state file naming it are
durable, and a crash at any point leaves the previous checkpoint loadable" while the
disk waits overlap::

    1. write every temporary file: data, index, .meta, the new ``checkpoint`` state
       (hidden names in the checkpoint's directory)
    2. fsync them all at once (a small thread pool; fsync releases the GIL, and the
       file system commits concurrent fsyncs together)
    3. rename the checkpoint's files into place (data before index), fsync the directory
    4. rename the state file into place, fsync the directory
    5. delete checkpoints beyond `max_to_keep` (every file of each)

Three serial waits instead of one per file. A crash before 3 leaves only hidden
temporaries (removed by the next save in the directory); between 3 and 4 a complete new
checkpoint that the old state file does not name yet. A file that already holds exactly
the bytes to write (the same step saved again with the same values) is kept, and
fsynced only if this process has not made it durable already.

`restore` reads the file in Python, checks every variable against it (present, same
dtype, compatible shape: errors name the variable, the shapes and the file), and runs
the restore op built with the Saver, feeding those values: the Saver's ops are
TensorFlow's (``save/Const``, ``save/SaveV2``, ``save/RestoreV2`` + ``Assign`` per variable
under ``save/restore_all``; sharded: per device, with ``save/MergeV2Checkpoints`` and
``save/Identity``), fed at the ``RestoreV2`` outputs, so that running ``restore_all`` with
the filename fed, as a C++ loader does, restores too. Because restoring is an op of the
graph, it works in any session of that graph. A Saver given a ``saver_def`` whose ops the
graph already holds (TensorFlow's ``SaveV2``/``RestoreV2`` nodes of an imported ``.meta``) builds
nothing and runs those instead (`saver_by_name`), as TensorFlow's does.

The Saver's parts, one module each: which variables under which keys
(`saver_entries`), the restore graph and the values fed to it (`saver_restore`), the
files of one checkpoint per format (`saver_files`), which checkpoints are kept
(`saver_keep`); this module ties them into the `Saver` class.

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
import threading
import weakref

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import not_found
from flowgraph.framework.device_spec import canonical_device
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tf_formats.bundle import bundle_files
from flowgraph.framework.tf_formats.meta_graph_messages import SaverDefProto
from flowgraph.train import checkpoint_state as _state
from flowgraph.train.checkpoint_utils import CheckpointReader
from flowgraph.train.meta_graph_export import (
    export_meta_graph,
    meta_graph_bytes,
    register_saver_entries,
    saver_def_proto,
    scoped_saver_def,
)
from flowgraph.train.saver_by_name import find_graph_saver, wrap_restore_error
from flowgraph.train.saver_entries import (
    all_saveable_variables,
    saveable_entries,
    slice_offset,
)
from flowgraph.train.saver_files import checkpoint_files, checkpoint_tensors
from flowgraph.train.saver_keep import CheckpointKeeper
from flowgraph.train.saver_restore import build_restore_graph, restore_feed

__all__ = ["Saver", "SaverDef"]

logger = logging.getLogger("tensorflow")


class CheckpointNotFoundError(errors.NotFoundError, ValueError):
    """A checkpoint passed to `Saver.restore` does not exist.

    TensorFlow raises ValueError here (and NotFoundError from the readers); this class is
    both, so either ``except`` clause catches it.
    """


def _variable_op_name(ref) -> str:
    """The variable's op name for saved tensor `ref` (a resource variable's read: its
    handle's)."""
    return ref.op.inputs[0].op.name if ref.op.type == "ReadVariableOp" else ref.op.name


_directory_locks: dict[str, threading.Lock] = {}
_directory_locks_guard = threading.Lock()


def _directory_lock(directory: str) -> threading.Lock:
    """The process-wide lock that serializes saves into `directory`."""
    key = os.path.realpath(directory or ".")
    with _directory_locks_guard:
        return _directory_locks.setdefault(key, threading.Lock())


class SaverDef(SaverDefProto):
    """The names of a Saver's graph elements (TensorFlow's SaverDef message, with its
    defaults, bytes and protobuf's Message API)."""

    IMPLICIT_PRESENCE = True  # proto3, as in saver.proto

    def __init__(self, **fields) -> None:
        super().__init__(**fields)
        if "keep_checkpoint_every_n_hours" in self.__dict__:
            # a float (32-bit) field in TF's proto: 1e-07 reads back as 1.0000000116860974e-07
            self.keep_checkpoint_every_n_hours = float(
                np.float32(self.keep_checkpoint_every_n_hours))


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
    sharded : bool
        As TensorFlow's: one data file per device of the variables
        (``PREFIX.data-00000-of-00002`` for ``/job:ps/task:0``, ``-00001-`` for task 1);
        one file in all when they share a device.
    defer_build, allow_empty, pad_step_number, filename, ...
        As in TensorFlow. ``write_version=tf.train.SaverDef.V1`` (unsharded) writes
        TensorFlow's V1 format: one file named ``PREFIX`` (see `saver_files`).
    format : {"tensorflow", "flowgraph"}
        A flowgraph extension: the default "tensorflow" writes TensorFlow's checkpoint
        files (``PREFIX.index`` + ``PREFIX.data-00000-of-00001``), which TensorFlow
        reads; "flowgraph" writes flowgraph's older one-file format (a ``.npz`` named
        ``PREFIX``). Restore reads both.
    """

    def __init__(self, var_list=None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: str | None = None, restore_sequentially: bool = False, saver_def=None,
                 builder=None, defer_build: bool = False, allow_empty: bool = False,
                 write_version: int = 2, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: str | None = None,
                 format: str = "tensorflow") -> None:
        if format not in ("flowgraph", "tensorflow"):
            raise ValueError(f"Saver: format must be 'flowgraph' or 'tensorflow', got {format!r}")
        self._format = format
        self._write_version = write_version
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
        self._keeper = CheckpointKeeper(max_to_keep, keep_checkpoint_every_n_hours)
        self._is_built = False
        self._is_empty = False
        self._entries: list[tuple[str, Tensor, Tensor]] = []
        self._slice_infos: list = []  # per entry: the SaveSliceInfo of a part, or None
        self._by_name = None  # a saver subgraph of the graph that this Saver drives
        self.saver_def = saver_def
        if not defer_build:
            self.build()

    # -- graph construction ----------------------------------------------------------------------
    def build(self) -> None:
        """Create the Saver's ops (called by the constructor unless `defer_build`)."""
        if self._is_built:
            return
        graph = get_default_graph()
        if self.saver_def is not None and (self._share(graph) or self._adopt(graph)):
            return
        var_list = self._var_list
        if var_list is None:
            var_list = all_saveable_variables(graph)
        rows = saveable_entries(var_list)
        self._is_built = True
        if not rows:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        graph = rows[0][1].graph
        first_new = len(graph.get_operations())
        rows = sorted(rows, key=lambda r: (r[0], slice_offset(r[2])))
        built = build_restore_graph(graph, rows, self._name or "save",
                                    self._filename or "model", self._reshape,
                                    [self._tf_row(*row) for row in rows], self._sharded)
        own_ops = [op.name for op in graph.get_operations()[first_new:]]
        self._entries, self._slice_infos = built.entries, built.slice_infos
        restore_op, filename, save_tensor = built.restore_op, built.filename, built.save_tensor
        self._restore_op = restore_op
        self._graph = graph
        register_saver_entries(graph, restore_op.name, self._filename or "model", [
            self._tf_row(key, ref, info)
            for (key, ref, _), info in zip(self._entries, self._slice_infos)
            # a saveable object's tensors (tf.contrib.cudnn_rnn) have no variable to name
            if getattr(ref, "_saveable_restore", None) is None], own_ops)
        if self.saver_def is None:
            self.saver_def = SaverDef(
                filename_tensor_name=filename.name, save_tensor_name=save_tensor.name,
                restore_op_name=restore_op.name, max_to_keep=self._max_to_keep or 0,
                sharded=self._sharded,
                keep_checkpoint_every_n_hours=self._keep_every_n_hours,
                # sharded V1 files (``PREFIX-00000-of-00002``) are not written: V2
                version=SaverDef.V1 if self._write_version == SaverDef.V1
                and not self._sharded else SaverDef.V2)
        self._scope = built.scope
        graph.__dict__.setdefault("_savers_by_restore_op", weakref.WeakValueDictionary())[
            restore_op.name] = self

    _SHARED_STATE = ("_var_list", "_reshape", "_format", "_filename", "_entries",
                     "_slice_infos", "_restore_op", "_graph", "_scope")

    def _share(self, graph) -> bool:
        """Use the subgraph of the flowgraph Saver of `graph` whose restore op
        `saver_def` names (``Saver(saver_def=other.as_saver_def())``, ``from_proto``):
        TensorFlow's Saver builds no ops for a SaverDef; the checkpoints to keep come
        from `saver_def`. False when no such Saver (or an import scope is given)."""
        if self._name:
            return False
        sd = self.saver_def
        owner = graph.__dict__.get("_savers_by_restore_op", {}).get(
            getattr(sd, "restore_op_name", "") or "")
        if owner is None or owner._is_empty:
            return False
        for attr in self._SHARED_STATE:
            setattr(self, attr, getattr(owner, attr))
        self._sharded = owner._sharded  # the named ops' layout, as TensorFlow runs them
        self._max_to_keep = int(sd.max_to_keep)
        self._keep_every_n_hours = float(sd.keep_checkpoint_every_n_hours)
        self._keeper = CheckpointKeeper(self._max_to_keep, self._keep_every_n_hours)
        self.saver_def = SaverDef(
            filename_tensor_name=sd.filename_tensor_name,
            save_tensor_name=sd.save_tensor_name, restore_op_name=sd.restore_op_name,
            max_to_keep=self._max_to_keep, sharded=bool(sd.sharded),
            keep_checkpoint_every_n_hours=self._keep_every_n_hours,
            version=int(getattr(sd, "version", 2)))
        self._is_built = True
        return True

    def _adopt(self, graph) -> bool:
        """Drive the saver subgraph that `saver_def` names when `graph` holds one
        (TensorFlow's ``save/`` nodes of an imported graph; `saver_by_name`), as
        TensorFlow's Saver does: its names (under `name`, an import scope), sharding and
        checkpoints to keep come from `saver_def`. False when the graph holds none."""
        found = find_graph_saver(graph, self.saver_def, self._name)
        if found is None:
            return False
        sd = self.saver_def
        self._by_name = found
        self._graph = graph
        self._restore_op = found.restore_op
        self._sharded = bool(sd.sharded)
        self._max_to_keep = int(sd.max_to_keep)
        hours = float(sd.keep_checkpoint_every_n_hours)
        self._keep_every_n_hours = hours
        self._keeper = CheckpointKeeper(self._max_to_keep, hours)
        self.saver_def = SaverDef(
            **found.names, max_to_keep=self._max_to_keep, sharded=self._sharded,
            keep_checkpoint_every_n_hours=hours, version=int(getattr(sd, "version", 2)))
        self._scope = found.names["restore_op_name"].rpartition("/")[0] + "/"
        self._is_built = True
        return True

    def as_saver_def(self) -> SaverDef:
        return self.saver_def

    def to_proto(self, export_scope: str | None = None):
        """This Saver's ``SaverDef`` message (what a MetaGraphDef records); with
        `export_scope`, its names without that scope, or None when they lie outside it.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     _ = tf.Variable(1.0, name="v")
        ...     print(tf.train.Saver().to_proto().restore_op_name)
        save/restore_all
        """
        proto = saver_def_proto(self.saver_def)
        return scoped_saver_def(proto, export_scope) if export_scope else proto

    @staticmethod
    def from_proto(saver_def, import_scope: str | None = None) -> Saver:
        """A Saver from a ``SaverDef`` message (`to_proto`), named `import_scope`."""
        return Saver(saver_def=saver_def, name=import_scope)

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
        return self._keeper.paths

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        """DEPRECATED in TensorFlow: use `set_last_checkpoints_with_time`."""
        self._keeper.set_paths(last_checkpoints)

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Set the list of ``(prefix, timestamp)`` the Saver will manage."""
        self._keeper.set_paths_with_time(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        """Manage (and eventually delete) existing checkpoints, e.g. after a restart:
        ``saver.recover_last_checkpoints(state.all_model_checkpoint_paths)``."""
        existing = [p for p in checkpoint_paths if _state.checkpoint_exists(p)]
        mtimes = _state.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, mtimes)))

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
            # As TensorFlow: an unsharded save makes the checkpoint's own directory (one
            # level, not its parents); a sharded one makes none.
            if self._sharded or not os.path.isdir(os.path.dirname(parent) or "."):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't "
                                 "save. Create it first (os.makedirs).")
            os.makedirs(parent, exist_ok=True)
        if self._is_empty:
            return None
        # One save at a time per directory: a save reads the step and writes the state
        # file, so two overlapping saves (a Supervisor's checkpoint thread and the loop's
        # final save) could leave the older step recorded as the latest.
        with _directory_lock(parent):
            return self._save_in(sess, save_path, global_step, step_fetch, parent,
                                 latest_filename, meta_graph_suffix, write_meta_graph,
                                 write_state, strip_default_attrs)

    def _save_in(self, sess, save_path, global_step, step_fetch, parent, latest_filename,
                 meta_graph_suffix, write_meta_graph, write_state, strip_default_attrs):
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
        if self._by_name is not None:  # the graph's saver ops write the checkpoint
            sess.run(self._by_name.save_tensor, {self._by_name.filename: checkpoint_file})
            files = []
        else:
            files = checkpoint_files(self._file_format(), checkpoint_file,
                                     *self._checkpoint_tensors(values), self._shards())
        if write_meta_graph:
            meta = f"{checkpoint_file}.{meta_graph_suffix}"
            try:
                files.append((meta, self._meta_graph_bytes()))
            except (ValueError, TypeError, KeyError) as e:
                # The checkpoint is written; a graph TensorFlow's format cannot hold
                # must not make the save fail.
                logger.warning("Saver: checkpoint %s saved, but its graph could not be "
                               "written as %s: %s", checkpoint_file, meta, e)
        state = []
        if write_state:
            self._keeper.record(checkpoint_file)
            state.append(_state.checkpoint_state_file(
                parent or ".", checkpoint_file,
                all_model_checkpoint_paths=self.last_checkpoints or [checkpoint_file],
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths))
        # All temporaries written and fsynced together; the checkpoint's renamed (one
        # directory fsync) before the state file that names it (see the module docstring).
        _state.write_durably(files, then=state)
        if write_state:
            self._keeper.delete_old(meta_graph_suffix)
        return checkpoint_file

    def _file_format(self) -> str:
        """`saver_files.checkpoint_files`'s format: TensorFlow's V1 file when the
        SaverDef says V1 (and the Saver is not sharded)."""
        v1 = (self._format == "tensorflow" and not self._sharded
              and int(getattr(self.saver_def, "version", 2)) == SaverDef.V1)
        return "tensorflow_v1" if v1 else self._format

    def _checkpoint_tensors(self, values) -> tuple[dict, dict]:
        """The fetched `values` as ``(whole tensors, partitioned tensors)``
        (`saver_files.checkpoint_tensors`)."""
        return checkpoint_tensors([key for key, _, _ in self._entries], self._slice_infos,
                                  values)

    def _shards(self) -> dict | None:
        """A sharded Saver's data shard per entry, as TensorFlow's: one shard per device
        of the variables, numbered in the order of the device names
        (``model.ckpt-7.data-00001-of-00002`` holds ``/job:ps/task:1``'s); None when
        unsharded."""
        if not self._sharded:
            return None
        devices = [self._device_of(ref) for _, ref, _ in self._entries]
        number = {d: k for k, d in enumerate(sorted(set(devices)))}
        return {(key, tuple(info.var_offset) if info is not None else ()): number[d]
                for (key, _, _), info, d in zip(self._entries, self._slice_infos, devices)}

    @classmethod
    def _tf_row(cls, key: str, ref, info) -> tuple:
        """The row of `tf_formats.saver_graph.tf_saver_nodes` for one entry."""
        return (key, ref.op.name, ref.dtype.base_dtype.as_datatype_enum,
                ref.shape.as_list() if ref.shape.ndims is not None else None,
                info.spec if info is not None else "",
                # a resource variable: saved from its read, restored through its handle
                ref.op.inputs[0].op.name if ref.op.type == "ReadVariableOp" else "",
                cls._device_of(ref))  # its shard when sharded

    @staticmethod
    def _device_of(ref) -> str:
        """The canonical device of the variable saved from `ref` (a sharded Saver's
        shard: one per device)."""
        var = ref.op.inputs[0].op if ref.op.type == "ReadVariableOp" else ref.op
        return canonical_device(var.device)

    def _own_keys(self) -> list[str]:
        """Per entry, a key no other entry shares: its checkpoint key, or a part's own op
        name (``w/part_0``). flowgraph's SavedModel format restores each variable from
        its own key (`write_own_keys`)."""
        return [key if info is None else _variable_op_name(ref)
                for (key, ref, _), info in zip(self._entries, self._slice_infos)]

    def write_own_keys(self, sess, prefix: str) -> None:
        """Write the variables' values under `_own_keys` as checkpoint `prefix` (TensorFlow's
        files, crash-safe; no state file, no ``.meta``): the variables of a SavedModel in
        flowgraph's format, which names one key per variable."""
        if self._is_empty:
            return
        values = sess.run([ref for _, ref, _ in self._entries])
        tensors = {key: np.asarray(v) for key, v in zip(self._own_keys(), values)}
        _state.remove_stale_temps(os.path.dirname(prefix) or ".")
        _state.write_durably(bundle_files(prefix, tensors))

    def _meta_graph_bytes(self) -> bytes:
        # Keyed by content (`meta_graph_bytes`): exact even when a finalized graph's
        # collection item is replaced or a tensor's shape is set after the last save, and
        # the next graph built the same way (the next `train` call) finds its bytes.
        return meta_graph_bytes(self._graph, self.saver_def)

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
        logger.info("Restoring parameters from %s", save_path)  # as TF logs each restore
        if self._by_name is not None:  # the graph's restore op reads the checkpoint
            try:
                sess.run(self._restore_op, {self._by_name.filename: save_path})
            except (errors.NotFoundError, errors.InvalidArgumentError) as e:
                raise wrap_restore_error(e) from None
            return
        with CheckpointReader(save_path) as reader:
            feed = restore_feed(reader, self._entries, self._slice_infos, save_path,
                                self._reshape)
        sess.run(self._restore_op, feed_dict=feed)
