"""The files a `tf.train.Saver` writes for one checkpoint, per format.

``format="tensorflow"`` (the default): TensorFlow's tensor bundle, ``PREFIX.index`` +
``PREFIX.data-00000-of-00001`` (`flowgraph.framework.tf_formats.bundle`), a partitioned
variable as one entry with its slices. ``format="tensorflow_v1"`` (a Saver with
``write_version=SaverDef.V1``): TensorFlow's V1 format, one file named ``PREFIX``
(`flowgraph.framework.tf_formats.tensor_slices`), a partitioned variable as its slices.
``format="flowgraph"``: flowgraph's one-file
format (`flowgraph.train.checkpoint_utils`), a partitioned variable put together whole.

Nothing here touches the disk but to compare: the files come back as
``[(path, bytes or None)]`` for `checkpoint_state.write_durably`, None keeping a file that
already holds exactly these values (the same step saved again).

Example
-------
>>> import numpy as np
>>> from flowgraph.ops.partitioned_variables import SaveSliceInfo
>>> parts = [SaveSliceInfo("w", [4], [0], [2]), SaveSliceInfo("w", [4], [2], [2])]
>>> tensors, slices = checkpoint_tensors(
...     ["v", "w", "w"], [None, *parts], [np.ones(2), np.zeros(2), np.ones(2)])
>>> sorted(tensors), whole_from_parts("w", *slices["w"])
(['v'], array([0., 0., 1., 1.]))
"""

from __future__ import annotations

import os

import numpy as np

from flowgraph.framework import errors
from flowgraph.framework.tf_formats.bundle import bundle_files
from flowgraph.framework.tf_formats.tensor_slices import tensor_slices_bytes
from flowgraph.train.checkpoint_utils import CheckpointReader, checkpoint_bytes

__all__ = ["checkpoint_files", "checkpoint_tensors", "holds_exactly", "whole_from_parts"]

def checkpoint_tensors(keys, slice_infos, values) -> tuple[dict, dict]:
    """The fetched `values` of a Saver's entries (their `keys` and `slice_infos`) as
    ``(whole tensors, partitioned tensors)``: key -> array, and key -> ``(full shape,
    [(offsets of a part, part array)])``."""
    tensors, slices = {}, {}
    for key, info, value in zip(keys, slice_infos, values):
        if info is None:
            tensors[key] = np.asarray(value)
        else:
            slices.setdefault(key, (info.full_shape, []))[1].append(
                (info.var_offset, np.asarray(value)))
    return tensors, slices


def checkpoint_files(format: str, checkpoint_file: str, tensors: dict,
                     slices: dict, shards: dict | None = None) -> list:
    """``[(path, bytes or None)]`` of checkpoint `checkpoint_file` in `format`
    ("tensorflow", "tensorflow_v1" or "flowgraph"); None keeps an existing file.
    `shards` (TensorFlow's V2 format only): ``(key, part offsets or ())`` -> data shard,
    see `bundle_files`."""
    if format == "tensorflow":
        return bundle_files(checkpoint_file, tensors, slices, shards)
    if format == "tensorflow_v1":
        items = [(key, value, None) for key, value in tensors.items()]
        items += [(key, value, (list(full), list(offset), list(np.shape(value))))
                  for key, (full, parts) in slices.items() for offset, value in parts]
        return [(checkpoint_file, tensor_slices_bytes(items))]
    tensors = {**tensors, **{key: whole_from_parts(key, *parts)
                             for key, parts in slices.items()}}
    if holds_exactly(checkpoint_file, tensors):
        # The same step saved again with the same values (a session that restored
        # this checkpoint saves it on creation): the file is kept (its zip entries'
        # times would differ).
        return [(checkpoint_file, None)]
    return [(checkpoint_file, checkpoint_bytes(tensors))]


def holds_exactly(path: str, tensors: dict[str, np.ndarray]) -> bool:
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


def whole_from_parts(key: str, full_shape, parts) -> np.ndarray:
    """A partitioned variable's parts (``[(offsets, array)]``) put together (flowgraph's
    one-file format keeps whole tensors). Raises ValueError when they leave a gap."""
    out = np.empty(full_shape, dtype=parts[0][1].dtype)
    covered = np.zeros(full_shape, dtype=bool)
    for offset, value in parts:
        where = tuple(slice(o, o + n) for o, n in zip(offset, value.shape))
        out[where] = value
        covered[where] = True
    if not covered.all():
        raise ValueError(f"Saver: the parts of partitioned variable '{key}' do not cover "
                         f"its full shape {list(full_shape)}; save every part together.")
    return out
