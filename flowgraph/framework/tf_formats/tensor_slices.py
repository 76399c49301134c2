"""TensorFlow's V1 checkpoint format ("tensor slices"), read and written without
TensorFlow: what the ``Save``/``SaveSlices`` ops write and ``Restore``/``RestoreSlice``
read (``tf.train.Saver(write_version=tf.train.SaverDef.V1)``, and the checkpoints of
TensorFlow's early releases).

A checkpoint is one file per shard (``model.ckpt``, or ``model.ckpt-00000-of-00002``
found by a glob pattern), a sorted table (see `table`) of ``SavedTensorSlices``
messages:

- the empty key holds the ``meta``: one ``SavedSliceMeta`` per tensor (name, full shape,
  dtype and the slices of it this file holds) and the format's ``VersionDef``;
- each slice's key (``bundle_slices.slice_key``: the name and the slice's extents, -1
  for a whole axis) holds a ``SavedSlice`` whose ``TensorProto`` carries the values in
  its typed repeated field (``float_val``, ``int64_val``, ``string_val``, ...).

Messages are decoded by flowgraph's own protobuf code; a file that does not parse raises
DataLossError naming it.

Example
-------
>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
>>> write_tensor_slices(path, [("w", np.ones((2, 3), np.float32), None)])
>>> reader = TensorSliceReader(path)
>>> reader.get("w").shape, reader.get("w", ([1, 0], [1, 3])).tolist()
((2, 3), [[1.0, 1.0, 1.0]])
"""

from __future__ import annotations

import glob
import os
import struct

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.event_format import Message, TensorShapeProto, VersionDef
from flowgraph.framework.event_messages import TensorProto
from flowgraph.framework.tf_formats.bundle_slices import (
    format_region,
    parse_slice,
    region_overlaps,
    slice_key,
    write_slice,
)
from flowgraph.framework.tf_formats.table import MAGIC, read_table, write_table

__all__ = ["TensorSliceReader", "is_tensor_slices", "tensor_slices_bytes",
           "write_tensor_slices"]

_CHECKPOINT_VERSION = 1  # TensorFlow's TF_CHECKPOINT_VERSION


class SavedSliceMeta(Message):
    PROTO_NAME = "tensorflow.SavedSliceMeta"
    FIELDS = ((1, "name", "string", False), (2, "shape", TensorShapeProto, False),
              (3, "type", "enum", False), (4, "slice", "bytes", True))


class SavedTensorSliceMeta(Message):
    PROTO_NAME = "tensorflow.SavedTensorSliceMeta"
    FIELDS = ((1, "tensor", SavedSliceMeta, True), (2, "versions", VersionDef, False))


class SavedSlice(Message):
    PROTO_NAME = "tensorflow.SavedSlice"
    FIELDS = ((1, "name", "string", False), (2, "slice", "bytes", False),
              (3, "data", TensorProto, False))


class SavedTensorSlices(Message):
    PROTO_NAME = "tensorflow.SavedTensorSlices"
    FIELDS = ((1, "meta", SavedTensorSliceMeta, False), (2, "data", SavedSlice, False))


# dtype -> the TensorProto field holding its values
_VALUE_FIELDS = {
    _dtypes.float32: "float_val", _dtypes.float64: "double_val", _dtypes.int32: "int_val",
    _dtypes.int16: "int_val", _dtypes.int8: "int_val", _dtypes.uint8: "int_val",
    _dtypes.int64: "int64_val", _dtypes.bool: "bool_val", _dtypes.string: "string_val",
    _dtypes.float16: "half_val",
}


def _field_of(dtype: _dtypes.DType, what: str) -> str:
    field = _VALUE_FIELDS.get(dtype)
    if field is None:
        raise errors.UnimplementedError(
            None, None, f"{what}: the V1 checkpoint format is supported for "
            f"{', '.join(sorted(d.name for d in _VALUE_FIELDS))} tensors, not {dtype.name}")
    return field


def _values_proto(arr: np.ndarray, dtype: _dtypes.DType, what: str) -> TensorProto:
    field = _field_of(dtype, what)
    flat = arr.reshape(-1)
    if dtype == _dtypes.float16:
        values = flat.astype(np.float16).view(np.uint16).astype(np.int64).tolist()
    elif dtype == _dtypes.string:
        values = [v if isinstance(v, bytes) else str(v).encode("utf-8") for v in flat]
    else:
        values = flat.tolist()
    return TensorProto(**{field: values})


def tensor_slices_bytes(items, what: str = "Save") -> bytes:
    """The bytes of a V1 checkpoint holding `items`: ``(name, array, slice)`` with slice
    None for the whole tensor or ``(full_shape, starts, lengths)`` for a part."""
    metas: dict[str, SavedSliceMeta] = {}
    entries = []
    for name, value, part in items:
        arr = np.asarray(value)
        dtype = _dtypes.string if arr.dtype.kind in "OSU" else _dtypes.as_dtype(arr.dtype)
        if part is None:
            full, starts, key_lengths = list(arr.shape), [0] * arr.ndim, [-1] * arr.ndim
        else:
            full, starts, lengths = part
            key_lengths = [-1 if (s == 0 and n == d) else n
                           for s, n, d in zip(starts, lengths, full)]
        raw_slice = write_slice(starts, key_lengths)
        meta = metas.get(name)
        if meta is None:
            meta = metas[name] = SavedSliceMeta(
                name=name, type=dtype.as_datatype_enum,
                shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in full]))
        elif meta.type != dtype.as_datatype_enum or \
                [int(d.size) for d in meta.shape.dim] != list(full):
            raise errors.InvalidArgumentError(
                None, None, f"{what}: tensor '{name}' is saved twice with different shapes "
                "or dtypes")
        meta.slice.append(raw_slice)
        data = SavedSlice(name=name, slice=raw_slice, data=_values_proto(arr, dtype, what))
        key = slice_key(name, starts, key_lengths)
        if any(k == key for k, _ in entries):
            raise errors.InvalidArgumentError(
                None, None, f"{what}: tensor '{name}' slice {format_region(starts, key_lengths)}"
                " is saved twice (duplicate key)")
        entries.append((key, SavedTensorSlices(data=data).SerializeToString()))
    header = SavedTensorSlices(meta=SavedTensorSliceMeta(
        tensor=[metas[n] for n in sorted(metas)],
        versions=VersionDef(producer=_CHECKPOINT_VERSION)))
    entries.append((b"", header.SerializeToString()))
    return write_table(sorted(entries))


def write_tensor_slices(path: str, items, what: str = "Save") -> None:
    """Write `items` (see `tensor_slices_bytes`) as the V1 checkpoint file `path`,
    through a temporary file renamed into place."""
    data = tensor_slices_bytes(items, what)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tempstate{os.getpid()}{os.urandom(6).hex()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _table_file(path: str) -> bool:
    """Whether `path` is a file ending in a table's magic number (8 bytes read)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < 48:
                return False
            f.seek(-8, os.SEEK_END)
            return struct.unpack("<Q", f.read(8))[0] == MAGIC
    except OSError:
        return False


def is_tensor_slices(pattern) -> bool:
    """Whether `pattern` names V1 checkpoint files: a file (or, for a glob, the first
    match) that is a table whose empty key holds a meta. Other files are told apart by
    their last 8 bytes, unread beyond that."""
    pattern = os.fspath(pattern)
    files = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    if not files or not os.path.isfile(files[0]) or not _table_file(files[0]):
        return False
    try:
        with open(files[0], "rb") as f:
            items = read_table(f.read())
        return bool(items) and items[0][0] == b"" and \
            SavedTensorSlices.FromString(items[0][1]).HasField("meta")
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error):
        return False


class TensorSliceReader:
    """Reads the V1 checkpoint files matching `pattern` (a path or a glob), with the
    methods of flowgraph's `CheckpointReader` (which returns one for such files)."""

    def __init__(self, pattern: str) -> None:
        self.path = os.fspath(pattern)
        files = sorted(glob.glob(self.path)) if glob.has_magic(self.path) else (
            [self.path] if os.path.isfile(self.path) else [])
        if not files:
            raise errors.NotFoundError(
                None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                f"matching files for {self.path}")
        # name -> (shape, dtype, [(starts, lengths, raw value bytes, file)])
        self._tensors: dict[str, tuple[list[int], _dtypes.DType, list]] = {}
        for file in files:
            self._load(file)

    def _load(self, file: str) -> None:
        try:
            with open(file, "rb") as f:
                items = dict(read_table(f.read()))
            meta = SavedTensorSlices.FromString(items[b""]).meta
            for t in meta.tensor:
                shape = [int(d.size) for d in t.shape.dim]
                dtype = _dtypes.as_dtype(int(t.type))
                known = self._tensors.setdefault(t.name, (shape, dtype, []))
                if known[0] != shape or known[1] != dtype:
                    raise ValueError(f"tensor '{t.name}' has another shape or dtype in "
                                     "another file")
                for raw in t.slice:
                    starts, lengths, key_lengths = parse_slice(raw, shape)
                    known[2].append((starts, lengths,
                                     items[slice_key(t.name, starts, key_lengths)], file))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            raise errors.DataLossError(
                None, None, f"Unable to read V1 checkpoint file {file}: it is truncated or "
                f"corrupted ({type(e).__name__}: {e})") from None

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def has_tensor(self, name: str) -> bool:
        return name in self._tensors

    def tensor_dtype(self, name: str) -> _dtypes.DType:
        return self.dtype(name)

    def tensor_shape(self, name: str) -> list[int]:
        return list(self._entry(name)[0])

    def get_tensor(self, name: str) -> np.ndarray:
        return self.get(name)

    def get_slice(self, name: str, starts, lengths) -> np.ndarray:
        return self.get(name, (list(starts), list(lengths)))

    def debug_string(self) -> bytes:
        return "".join(f"{n} ({v[1].name}) {v[0]}\n"
                       for n, v in sorted(self._tensors.items())).encode("utf-8")

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {n: list(v[0]) for n, v in sorted(self._tensors.items())}

    def get_variable_to_dtype_map(self) -> dict[str, _dtypes.DType]:
        return {n: v[1] for n, v in sorted(self._tensors.items())}

    def dtype(self, name: str) -> _dtypes.DType:
        return self._entry(name)[1]

    def _entry(self, name: str):
        if name not in self._tensors:
            raise errors.NotFoundError(None, None, f'Tensor name "{name}" not found in '
                                       f"checkpoint files {self.path} (Key {name} not "
                                       "found in checkpoint)")
        return self._tensors[name]

    def _part(self, name: str, dtype: _dtypes.DType, lengths, raw: bytes, file: str):
        try:
            proto = SavedTensorSlices.FromString(raw).data.data
            values = list(getattr(proto, _field_of(dtype, "Restore")))
        except (ValueError, KeyError, TypeError) as e:
            raise errors.DataLossError(None, None, f"Unable to read tensor '{name}' of V1 "
                                       f"checkpoint file {file}: {e}") from None
        count = int(np.prod(lengths, dtype=np.int64))
        if len(values) != count:
            raise errors.DataLossError(None, None, f"V1 checkpoint file {file}: a slice of "
                                       f"tensor '{name}' holds {len(values)} values, its "
                                       f"extents {lengths} need {count}")
        if dtype == _dtypes.float16:
            arr = np.array(values, np.int64).astype(np.uint16).view(np.float16)
        elif dtype == _dtypes.string:
            arr = np.empty(count, object)
            arr[:] = values
        else:
            arr = np.array(values, dtype.as_numpy_dtype)
        return arr.reshape(lengths)

    def get(self, name: str, region=None) -> np.ndarray:
        """Tensor `name`, or its region ``(starts, lengths)``, assembled from the saved
        slices that cover it."""
        shape, dtype, saved = self._entry(name)
        starts, lengths = region if region is not None else ([0] * len(shape), list(shape))
        needed, problem = region_overlaps(starts, lengths, [(s, n) for s, n, _, _ in saved])
        if problem is not None:
            have = ", ".join(format_region(s, n) for s, n, _, _ in saved) or "none"
            raise errors.InvalidArgumentError(
                None, None, f"Error copying slice data: the saved slices of tensor '{name}' "
                f"(shape {shape}) in {self.path} ({have}) "
                f"{'overlap' if problem == 'overlap' else 'do not cover'} the region "
                f"{format_region(starts, lengths)}")
        out = np.empty(lengths, object if dtype == _dtypes.string else dtype.as_numpy_dtype)
        for i, o_starts, o_lengths in needed:
            p_starts, p_lengths, raw, file = saved[i]
            part = self._part(name, dtype, p_lengths, raw, file)
            src = tuple(slice(a - p, a - p + n) for a, n, p in zip(o_starts, o_lengths,
                                                                  p_starts))
            dst = tuple(slice(a - r, a - r + n) for a, n, r in zip(o_starts, o_lengths,
                                                                  starts))
            out[dst] = part[src]
        return out
