"""What a `tf.train.Saver` saves: its `var_list` as rows of checkpoint key, variable and
slice.

A list is keyed by the variables' op names (``dense/kernel``), a dict by its keys; a
part of a partitioned variable (one with a ``_save_slice_info``) is keyed by the full
variable's name, so the parts share one key, as TensorFlow keeps them::

    var_list = [v, w]            # w partitioned in 2 parts along axis 0
    rows     = [("v",   v ref, None),
                ("w", w/part_0 ref, SaveSliceInfo("w", [10, 3], [0, 0], [5, 3])),
                ("w", w/part_1 ref, SaveSliceInfo("w", [10, 3], [5, 0], [5, 3]))]

Two rows may share a key only when all of them are parts.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     v = tf.Variable([1.0], name="v")
...     w = tf.get_variable("w", [4, 2], partitioner=tf.fixed_size_partitioner(2))
...     rows = saveable_entries(all_saveable_variables(g))
>>> [(key, ref.op.name, info.spec if info else "") for key, ref, info in rows]
[('v', 'v', ''), ('w', 'w/part_0', '4 2 0,2:0,2'), ('w', 'w/part_1', '4 2 2,2:0,2')]
"""

from __future__ import annotations

from flowgraph.framework.graph import GraphKeys
from flowgraph.framework.operation import Tensor

__all__ = ["all_saveable_variables", "is_saveable_object", "is_variable", "saveable_entries",
           "slice_offset"]


def is_variable(x) -> bool:
    """Whether `x` is a `tf.Variable` (has a ref tensor, an initializer and an op)."""
    return hasattr(x, "_ref") and hasattr(x, "initializer") and hasattr(x, "op")


def is_saveable_object(x) -> bool:
    """Whether `x` is a saveable object: ``specs`` (each a tensor and its checkpoint
    key ``name``) and ``restore(tensors, shapes)`` returning the op that restores them,
    as `tf.contrib.cudnn_rnn`'s saveables."""
    return hasattr(x, "specs") and callable(getattr(x, "restore", None))


def _expand_saveables(items: list) -> list:
    """Replace each saveable object by its spec tensors, each marked with
    ``_saveable_restore = (owner, index)`` for the restore graph."""
    out = []
    for v in items:
        if is_saveable_object(v):
            for k, spec in enumerate(v.specs):
                spec.tensor._saveable_restore = (v, k)
                out.append(spec.tensor)
        else:
            out.append(v)
    return out


def _saveable_tensor(key: str, var) -> Tensor:
    if isinstance(var, Tensor) and getattr(var, "_saveable_restore", None) is not None:
        return var
    if is_variable(var):
        if hasattr(var, "handle"):  # a resource variable: saved from its read
            return var._as_graph_element()
        return var._ref()
    if isinstance(var, Tensor) and var.dtype.is_ref_dtype:
        return var
    raise TypeError(
        f"Saver: '{key}' maps to {var!r}, which is not a variable; var_list must hold "
        "tf.Variable objects (or variable ref tensors).")


def _slice_info(var):
    return getattr(var, "_save_slice_info", None) if is_variable(var) else None


def _is_partitioned(value) -> bool:
    return isinstance(value, list | tuple) or hasattr(value, "_get_variable_list")


def saveable_entries(var_list) -> list[tuple[str, Tensor, object]]:
    """``(checkpoint key, variable ref tensor, SaveSliceInfo or None)`` rows, from a list
    (keyed by op names; a part of a partitioned variable by its full name) or a dict.
    The parts of a partitioned variable share their key, as in TensorFlow.

    Raises TypeError for an item that is not a variable and ValueError for two
    variables (not parts) under one key.
    """
    if isinstance(var_list, dict):
        items = []
        for key, value in var_list.items():
            if not isinstance(key, str):
                raise TypeError(f"Saver: var_list dict keys must be strings, got {key!r}")
            if _is_partitioned(value):
                items += [(key, part, True) for part in value]
            else:
                # a single variable under a dict key is saved whole, even a part of a
                # partitioned variable (TensorFlow ignores its slice info there)
                items.append((key, value, False))
    else:
        flat = []
        for v in var_list:
            if _is_partitioned(v):
                flat.extend(v)
            else:
                flat.append(v)
        flat = _expand_saveables(flat)
        items = []
        for v in flat:
            if not (is_variable(v) or isinstance(v, Tensor)):
                raise TypeError(f"Saver: var_list items must be variables, got {v!r}")
            info = _slice_info(v)
            owner = getattr(v, "_saveable_restore", None) if isinstance(v, Tensor) else None
            key = owner[0].specs[owner[1]].name if owner is not None else (
                info.full_name if info is not None else v.op.name)
            items.append((key, v, True))
    out: list[tuple[str, Tensor, object]] = []
    seen: dict[str, list] = {}
    key_of: dict[int, str] = {}  # id(ref tensor) -> its key
    for key, var, sliced in items:
        tensor, info = _saveable_tensor(key, var), _slice_info(var) if sliced else None
        rows = seen.setdefault(key, [])
        if key_of.get(id(tensor), key) != key:
            raise ValueError(f"The same saveable will be restored with two names: {key} "
                             f"(variable '{tensor.op.name}' is also saved as "
                             f"'{key_of[id(tensor)]}')")
        if rows and (info is None or any(i is None for _, i in rows)
                     or any(t is tensor for t, _ in rows)):
            raise ValueError(f"At least two variables have the same name: {key}")
        key_of[id(tensor)] = key
        rows.append((tensor, info))
        out.append((key, tensor, info))
    return out


def all_saveable_variables(graph) -> list:
    """The global variables of `graph`, then the variables among its saveable objects."""
    out = list(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
    for v in graph.get_collection(GraphKeys.SAVEABLE_OBJECTS):
        if (is_variable(v) or is_saveable_object(v)) and all(v is not w for w in out):
            out.append(v)
    return out


def slice_offset(info) -> list:
    """Where a part starts (`info` a SaveSliceInfo), ``[]`` for a whole variable: with the
    key, the order of the Saver's rows."""
    return list(info.var_offset) if info is not None else []
