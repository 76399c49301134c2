"""Checkpoint files: writing, reading, and `tf.train.init_from_checkpoint`.

`tf.train.Saver` writes TensorFlow's format by default (`flowgraph.framework.tf_formats.
bundle`); the readers here (`CheckpointReader`, `list_variables`, ...) open either that
or flowgraph's one-file format, which this module writes (``Saver(format="flowgraph")``):

A checkpoint ``model.ckpt-STEP`` is ONE NumPy ``.npz`` file (a zip of ``.npy`` members)
whose file name is exactly the prefix that `Saver.save` returns; there is no suffix.
Keys are the variables' names (``dense/kernel``). NumPy reads it with
``np.load(path, allow_pickle=False)``; nothing in it is ever unpickled or executed.

String tensors (object arrays of bytes) cannot be stored without pickle, so a string
tensor ``N`` is stored as its concatenated bytes (``N``, uint8) plus the end offset of
every element (``_flowgraph/string_ends/N``, int64, the tensor's shape). Keys starting
with ``_flowgraph/`` are reserved (TensorFlow names never start with ``_``).

A missing file raises `NotFoundError`; a truncated or corrupt one (bad zip directory,
CRC mismatch, malformed member) raises `DataLossError`; both name the file. Reading
(`CheckpointReader`) lives in `flowgraph.framework.checkpoint_file`, so that the
``RestoreV2`` kernel can use it without importing this module.

Example
-------
>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
>>> write_checkpoint(path, {"w": np.ones((2, 3), np.float32), "s": np.array([b"hi"], object)})
>>> list_variables(path)
[('s', [1]), ('w', [2, 3])]
>>> load_variable(path, "s")
array([b'hi'], dtype=object)
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.checkpoint_file import (
    RESERVED_PREFIX,
    STRING_ENDS_PREFIX,
    CheckpointReader,
    encode_strings,
)
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.ops.io_ops import restore_v2 as _restore_v2
from flowgraph.train import checkpoint_state as _state

__all__ = [
    "CheckpointReader",
    "NewCheckpointReader",
    "init_from_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


# -- writing ------------------------------------------------------------------------------------
def write_checkpoint(path: str, tensors: dict[str, np.ndarray]) -> None:
    """Write `tensors` (name -> array) to one-file checkpoint `path`, crash-safely
    (flowgraph's format: ``tf.train.Saver(format="flowgraph")``)."""
    data = checkpoint_bytes(tensors)
    _state.atomic_write(path, lambda f: f.write(data))


def checkpoint_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    """The bytes of a one-file (flowgraph format) checkpoint holding `tensors`."""
    members: list[tuple[str, np.ndarray]] = []
    for name, value in tensors.items():
        if name.startswith(RESERVED_PREFIX):
            raise ValueError(f"checkpoint key '{name}' uses the reserved prefix {RESERVED_PREFIX}")
        arr = np.asarray(value)
        if arr.dtype == object or arr.dtype.kind in "SU":
            data, ends = encode_strings(arr)
            members += [(name, data), (STRING_ENDS_PREFIX + name, ends)]
        else:
            members.append((name, arr))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in members:
            with zf.open(key + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, arr, allow_pickle=False)
    return buffer.getvalue()


# -- reading ------------------------------------------------------------------------------------
def NewCheckpointReader(filepattern: str) -> CheckpointReader:
    """A `CheckpointReader` for the checkpoint prefix `filepattern`.

    Example
    -------
    >>> import os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-3")
    >>> write_checkpoint(path, {"b": np.arange(3)})
    >>> NewCheckpointReader(path).get_tensor("b").tolist()
    [0, 1, 2]
    """
    return _PublicReader(CheckpointReader(filepattern))


def _scalar_as_tf(value):
    """TensorFlow's readers give a scalar as a NumPy scalar (``bytes`` for a string),
    not a 0-d array."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


class _PublicReader:
    """The reader ``tf.train.NewCheckpointReader``/``load_checkpoint`` return: a
    `CheckpointReader` (of either format) whose ``get_tensor`` gives scalars as
    TensorFlow's does."""

    def __init__(self, reader) -> None:
        self._reader = reader

    def get_tensor(self, tensor_str: str):
        return _scalar_as_tf(self._reader.get_tensor(tensor_str))

    def __getattr__(self, name: str):
        return getattr(self._reader, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._reader.close()


def _checkpoint_filename(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        path = _state.latest_checkpoint(ckpt_dir_or_file)
        if path is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                f"{ckpt_dir_or_file}")
        return path
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader for a checkpoint prefix, or for the latest checkpoint of a directory."""
    return _PublicReader(CheckpointReader(_checkpoint_filename(ckpt_dir_or_file)))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``[(name, shape)]`` of every tensor in a checkpoint, sorted by name.

    Example
    -------
    >>> import os, tempfile, numpy as np
    >>> d = tempfile.mkdtemp()
    >>> write_checkpoint(os.path.join(d, "m"), {"a/b": np.zeros((2, 5))})
    >>> list_variables(os.path.join(d, "m"))
    [('a/b', [2, 5])]
    """
    with load_checkpoint(ckpt_dir_or_file) as reader:
        return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The value of variable `name` (a trailing ``:0`` is ignored) in a checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    with load_checkpoint(ckpt_dir_or_file) as reader:
        return reader.get_tensor(name)


# -- init_from_checkpoint ------------------------------------------------------------------------
def _is_variable(x) -> bool:
    return hasattr(x, "initializer") and hasattr(x, "_ref") and hasattr(x, "op")


def _variable_store() -> dict:
    graph = get_default_graph()
    store = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(key):
            if _is_variable(v):
                store.setdefault(v.op.name, v)
    return store


def _lookup(name: str, store: dict):
    """The variable named `name`, the list of its partitions, or None."""
    if name in store:
        return store[name]
    parts = [v for n, v in sorted(store.items()) if n.startswith(name + "/part_")]
    return parts or None


def _set_checkpoint_initializer(var, ckpt_file: str, tensor_name: str,
                                shapes: dict, dtypes: dict) -> None:
    info = getattr(var, "_save_slice_info", None)
    if info is not None and list(info.full_shape) != list(shapes[tensor_name]):
        raise ValueError(
            f"Shape of partitioned variable {info.full_name} ({info.full_shape}) doesn't "
            f"match with shape of tensor {tensor_name} ({shapes[tensor_name]}) from "
            "checkpoint reader.")
    if info is None and not var.shape.is_compatible_with(shapes[tensor_name]):
        raise ValueError(
            f"Shape of variable {var.name} ({var.shape}) doesn't match with shape of tensor "
            f"{tensor_name} ({shapes[tensor_name]}) from checkpoint reader.")
    if dtypes[tensor_name] != var.dtype.base_dtype:
        raise ValueError(
            f"dtype of variable {var.name} ({var.dtype.base_dtype.name}) doesn't match dtype "
            f"{dtypes[tensor_name].name} of tensor {tensor_name} in checkpoint {ckpt_file}.")
    graph = var.graph
    with graph.as_default(), graph.control_dependencies(None), graph.device("/cpu:0"):
        (value,) = _restore_v2(ckpt_file, [tensor_name], [var.dtype.base_dtype],
                               name="checkpoint_initializer")
        if info is not None:  # this part's slice of the whole tensor
            from flowgraph.ops.array_index_ops import slice as _slice

            value.set_shape(info.full_shape)
            value = _slice(value, list(info.var_offset), list(info.var_shape))
        value.set_shape(var.shape)
    from flowgraph.ops import state_ops

    with graph.as_default(), graph.control_dependencies(None), graph.colocate_with(var.op):
        restored = value
        if var._variable.dtype.base_dtype == _dtypes.resource:
            from flowgraph.ops.array_ops import identity

            restored = identity(value)  # as TF: a resource variable assigns an Identity
        init = state_ops.assign(var, restored)
        # TF keeps the ref variable's Assign output tensor (``Assign:0``) as its initializer
        var._initializer_op = init.op if restored is not value else init
    var._initial_value = value


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: dict) -> None:
    """Make variables' initializers load their values from a checkpoint.

    `assignment_map` maps checkpoint names to current names: ``{'old/w': 'new/w'}`` (one
    variable; the value may also be a Variable or a list of partition Variables),
    ``{'old_scope/': 'new_scope/'}`` (every variable under ``new_scope/`` loads the tensor
    of the same relative name under ``old_scope/``), or ``{'/': 'scope/'}`` (relative to
    the checkpoint's root). Running the variables' initializers (e.g.
    ``tf.global_variables_initializer()`` created afterwards) then reads the checkpoint.

    Example
    -------
    >>> import os, tempfile, numpy as np, flowgraph as tf
    >>> d = tempfile.mkdtemp()
    >>> write_checkpoint(os.path.join(d, "m"), {"old/w": np.full(2, 7.0, np.float32)})
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(tf.zeros([2]), name="new/w")
    ...     init_from_checkpoint(os.path.join(d, "m"), {"old/": "new/"})
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(w))
    [7. 7.]
    """
    ckpt_file = _checkpoint_filename(ckpt_dir_or_file)
    with CheckpointReader(ckpt_file) as reader:
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
    store = _variable_store()

    def assign_one(target, tensor_name):
        targets = list(target) if isinstance(target, list) or hasattr(
            target, "_get_variable_list") else [target]
        for part in targets:  # the parts of a partitioned variable each take their slice
            _set_checkpoint_initializer(part, ckpt_file, tensor_name, shapes, dtypes)

    for ckpt_name, current in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        if _is_variable(current) or hasattr(current, "_get_variable_list") or (
                isinstance(current, list) and current
                and all(_is_variable(v) for v in current)):
            var = current
        else:
            var = _lookup(current, store) if isinstance(current, str) else None
        if var is not None:
            if ckpt_name not in shapes:
                raise ValueError(
                    f"Tensor {ckpt_name} is not found in {ckpt_dir_or_file} checkpoint "
                    f"{dict(sorted(shapes.items()))}")
            assign_one(var, ckpt_name)
            continue
        if not isinstance(current, str):
            raise TypeError(
                f"init_from_checkpoint: assignment_map values must be variable names, "
                f"scopes ending in '/', Variables or lists of Variables; got {current!r}")
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not ckpt_name.endswith("/"):
            raise ValueError(
                f"Assignment map with scope only name {scopes} should map to scope only "
                f"{ckpt_name}. Should be 'scope/': 'other_scope/'.")
        names = set()
        for var_name in store:
            if not scopes or var_name.startswith(scopes + "/"):
                if "/part_" in var_name:
                    var_name = var_name[:var_name.index("/part_")]
                names.add(var_name)
        for var_name in sorted(names):
            full = var_name[len(scopes):]
            if current != "/":
                full = full[1:]
            if ckpt_name != "/":
                full = ckpt_name + full
            full = full.rstrip("/")
            if full not in shapes:
                raise ValueError(
                    f"Tensor {full} ({var_name[len(scopes) + 1:]} in {ckpt_name}) is not "
                    f"found in {ckpt_dir_or_file} checkpoint")
            assign_one(_lookup(var_name, store), full)
