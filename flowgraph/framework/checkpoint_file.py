"""flowgraph's one-file checkpoint format, read side (``tf.train.Saver(format="flowgraph")``
writes it; the default is TensorFlow's format, `flowgraph.framework.tf_formats.bundle`,
and `CheckpointReader` opens either, and TensorFlow's V1 files:
`flowgraph.framework.tf_formats.tensor_slices`), as `RestoreV2`'s kernel and the
SavedModel loader read it.

A checkpoint ``model.ckpt-STEP`` is ONE NumPy ``.npz`` file (a zip of ``.npy`` members)
named exactly by its prefix. Keys are the tensors' names. A string tensor ``N`` is stored
as its concatenated bytes (``N``, uint8) plus the end offset of every element
(``_flowgraph/string_ends/N``, int64, the tensor's shape), so that nothing is ever
pickled; keys starting with ``_flowgraph/`` are reserved.

Members are read by `flowgraph.framework.npy_member`, which checks each declared dtype,
shape and size against the zip directory and the file's length before allocating (and
bounds decompression); `tensor_shape`/`tensor_dtype` read only the headers, so callers
compare them with their target before reading a value.

It lives in `flowgraph.framework` so that backend kernels can read checkpoints without
importing `flowgraph.train` (which writes them: `flowgraph.train.checkpoint_utils`).

Example
-------
>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
>>> data, ends = encode_strings(np.array([b"ab", b"c"], dtype=object))
>>> with open(path, "wb") as f:
...     np.savez(f, s=data, **{STRING_ENDS_PREFIX + "s": ends})
>>> CheckpointReader(path).get_tensor("s").tolist()
[b'ab', b'c']
"""

from __future__ import annotations

import glob
import os
import re
import zipfile

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.npy_member import ZIP_ERRORS, CorruptMember, read_array, read_header
from flowgraph.framework.tf_formats.bundle import BundleReader, is_bundle
from flowgraph.framework.tf_formats.tensor_slices import TensorSliceReader, is_tensor_slices

__all__ = ["RESERVED_PREFIX", "STRING_ENDS_PREFIX", "CheckpointReader", "encode_strings",
           "not_found"]

RESERVED_PREFIX = "_flowgraph/"
STRING_ENDS_PREFIX = "_flowgraph/string_ends/"


def encode_strings(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A string array as ``(bytes as uint8, end offset of every element)``."""
    items = [x if isinstance(x, bytes) else str(x).encode("utf-8") for x in arr.reshape(-1)]
    data = np.frombuffer(b"".join(items), dtype=np.uint8)
    ends = np.cumsum([len(x) for x in items], dtype=np.int64).reshape(arr.shape)
    return data, ends


def not_found(prefix: str) -> errors.NotFoundError:
    """The error for a checkpoint `prefix` with no file, naming checkpoints nearby."""
    return errors.NotFoundError(
        None, None, f"Failed to find any matching files for {prefix}" + _nearby_hint(prefix))


def _nearby_hint(prefix: str) -> str:
    directory = os.path.dirname(prefix) or "."
    if not os.path.isdir(directory):
        return f" (the directory {directory} does not exist)"
    found = set()
    for p in glob.glob(os.path.join(glob.escape(directory), "*.ckpt*")):
        if os.path.isfile(p) and not p.endswith(".meta"):
            # a prefix: the one-file checkpoint itself, or TensorFlow's files without suffix
            found.add(re.sub(r"\.(index|data-\d{5}-of-\d{5})$", "", p))
    found = sorted(found)
    if found:
        names = ", ".join(os.path.basename(p) for p in found[-3:])
        return (f" (checkpoints in {directory}: {names}; tf.train.latest_checkpoint finds "
                "the newest)")
    return ""


class CheckpointReader:
    """Reads one checkpoint file: ``get_tensor``, ``has_tensor``, the shape/dtype maps.

    Example
    -------
    >>> import os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "model.ckpt-3")
    >>> with open(path, "wb") as f:
    ...     np.savez(f, b=np.zeros(4, np.float32))
    >>> r = CheckpointReader(path)
    >>> r.has_tensor("b"), r.get_variable_to_shape_map()
    (True, {'b': [4]})
    """

    def __new__(cls, filepattern: str = ""):
        # A TensorFlow checkpoint (``prefix.index`` + data shards) gets its own reader.
        if cls is CheckpointReader and is_bundle(filepattern):
            return BundleReader(filepattern)
        if cls is CheckpointReader and is_tensor_slices(filepattern):
            return TensorSliceReader(filepattern)  # TensorFlow's V1 format
        return super().__new__(cls)

    def __init__(self, filepattern: str) -> None:
        self.path = os.fspath(filepattern)
        file = self.path
        if not os.path.isfile(file):
            raise errors.NotFoundError(
                None, None, "Unsuccessful TensorSliceReader constructor: "
                + str(not_found(self.path)))
        self._zip = None
        try:
            self._size = os.path.getsize(file)
            self._zip = zipfile.ZipFile(file, "r")
            names = self._zip.namelist()
        except ZIP_ERRORS as e:
            raise self._data_loss(e) from None
        self._members = {n[:-4] for n in names if n.endswith(".npy")}
        self._headers: dict[str, tuple[tuple, np.dtype]] = {}

    def _data_loss(self, cause) -> errors.DataLossError:
        return errors.DataLossError(
            None, None,
            f"Unable to read checkpoint {self.path}: the file is truncated or corrupted "
            f"({type(cause).__name__}: {cause}). Restore an older checkpoint "
            "(see tf.train.get_checkpoint_state(dir).all_model_checkpoint_paths).")

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        zf = getattr(self, "_zip", None)
        if zf is not None:
            zf.close()

    # -- members --------------------------------------------------------------------------------
    def _names(self) -> list[str]:
        return sorted(n for n in self._members if not n.startswith(RESERVED_PREFIX))

    def _header(self, key: str) -> tuple[tuple, np.dtype]:
        if key not in self._headers:
            try:
                shape, dtype, _ = read_header(self._zip, key + ".npy")
            except CorruptMember as e:
                raise self._data_loss(e) from None
            self._headers[key] = (tuple(shape), dtype)
        return self._headers[key]

    def _array(self, key: str) -> np.ndarray:
        try:
            return read_array(self._zip, key + ".npy", self._size)
        except CorruptMember as e:
            raise self._data_loss(e) from None

    def _is_string(self, name: str) -> bool:
        return STRING_ENDS_PREFIX + name in self._members

    # -- public API -----------------------------------------------------------------------------
    def has_tensor(self, tensor_str: str) -> bool:
        return tensor_str in self._members and not tensor_str.startswith(RESERVED_PREFIX)

    def get_tensor(self, tensor_str: str) -> np.ndarray:
        """The value of `tensor_str` (NotFoundError if the checkpoint lacks it)."""
        if not self.has_tensor(tensor_str):
            raise errors.NotFoundError(
                None, None, f"Key {tensor_str} not found in checkpoint {self.path}")
        if not self._is_string(tensor_str):
            return self._array(tensor_str)
        data = self._array(tensor_str).tobytes()
        ends = self._array(STRING_ENDS_PREFIX + tensor_str)
        if ends.dtype.kind not in "iu":
            raise self._data_loss(ValueError(f"string offsets of '{tensor_str}' are "
                                             f"{ends.dtype}, not integers"))
        flat = ends.reshape(-1)
        if flat.size and (np.any(np.diff(flat) < 0) or flat[0] < 0 or flat[-1] > len(data)):
            raise self._data_loss(ValueError(f"bad string offsets for '{tensor_str}'"))
        starts = np.concatenate([[0], flat[:-1]]) if flat.size else flat
        out = np.empty(flat.size, dtype=object)
        out[:] = [data[s:e] for s, e in zip(starts.tolist(), flat.tolist())]
        return out.reshape(ends.shape)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        out = {}
        for name in self._names():
            key = STRING_ENDS_PREFIX + name if self._is_string(name) else name
            out[name] = list(self._header(key)[0])
        return out

    def get_variable_to_dtype_map(self) -> dict[str, _dtypes.DType]:
        return {name: self.tensor_dtype(name) for name in self._names()}

    def tensor_shape(self, name: str) -> list[int]:
        """The shape `name` declares, read from its header alone (nothing allocated)."""
        key = STRING_ENDS_PREFIX + name if self._is_string(name) else name
        return list(self._header(key)[0])

    def tensor_dtype(self, name: str) -> _dtypes.DType:
        """The dtype `name` declares, read from its header alone."""
        if self._is_string(name):
            return _dtypes.string
        dtype = self._header(name)[1]
        try:
            return _dtypes.as_dtype(dtype.newbyteorder("=") if dtype.byteorder in "<>"
                                    else dtype)
        except TypeError as e:
            raise self._data_loss(e) from None

    def debug_string(self) -> bytes:
        """TensorFlow's listing: a ``name (DT_FLOAT) [2,3]`` line per tensor."""
        from flowgraph.framework.tf_formats.text_format import datatype_name

        shapes, dtypes = self.get_variable_to_shape_map(), self.get_variable_to_dtype_map()
        lines = [f"{n} ({datatype_name(dtypes[n].as_datatype_enum)}) "
                 f"[{','.join(str(d) for d in shapes[n])}]" for n in self._names()]
        return ("\n".join(lines) + "\n").encode("utf-8")
