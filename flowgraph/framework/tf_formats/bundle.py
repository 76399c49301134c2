"""TensorFlow's checkpoint format (the "tensor bundle"), read and written without
TensorFlow.

A checkpoint with prefix ``model.ckpt-7`` is two or more files:

- ``model.ckpt-7.index``: a sorted table (see `table`) whose empty key holds a
  ``BundleHeaderProto`` (shard count, byte order, format version) and whose other keys
  are tensor names, each holding a ``BundleEntryProto``: dtype, shape, which data shard,
  offset and size there, and the masked CRC32C of those bytes.
- ``model.ckpt-7.data-00000-of-00001`` (one file per shard): the tensors' bytes, back to
  back. Numbers are raw little-endian arrays; a string tensor is the varint length of
  every element, a masked CRC32C of those lengths (4 bytes), then the elements' bytes.
  The CRCs of a string tensor are taken over each length as a uint32, not as its varint.

The messages are decoded with flowgraph's own protobuf wire code (`event_format`), so
reading builds only arrays and strings, never runs code from the file. A file that does
not parse or whose checksums do not match raises DataLossError naming it.

Example
-------
>>> import os, tempfile, numpy as np
>>> prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
>>> write_bundle(prefix, {"w": np.ones((2, 3), np.float32), "s": np.array([b"hi"], object)})
>>> is_bundle(prefix)
True
>>> r = BundleReader(prefix)
>>> r.get_variable_to_shape_map(), r.get_tensor("s").tolist()
({'s': [1], 'w': [2, 3]}, [b'hi'])
"""

from __future__ import annotations

import glob
import os
import struct

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.checksum import masked_crc32c
from flowgraph.framework.event_format import (
    Message,
    TensorShapeProto,
    VersionDef,
    iter_fields,
    read_varint,
    write_varint,
)
from flowgraph.framework.proto_text import datatype_name
from flowgraph.framework.tf_formats.bundle_slices import (
    format_region,
    parse_slice,
    region_overlaps,
    slice_key,
    write_slice,
)
from flowgraph.framework.tf_formats.table import read_table, write_table

__all__ = ["BundleReader", "SlicesNotCoveredError", "bundle_data_files", "bundle_files",
           "data_file", "index_file", "is_bundle", "write_bundle"]

_FORMAT_VERSION = 1  # TensorFlow's kTensorBundleVersion


class BundleHeaderProto(Message):
    PROTO_NAME = "tensorflow.BundleHeaderProto"
    FIELDS = ((1, "num_shards", "int32", False), (2, "endianness", "enum", False),
              (3, "version", VersionDef, False))


class BundleEntryProto(Message):
    PROTO_NAME = "tensorflow.BundleEntryProto"
    # Field 6 (crc32c, a fixed32) has no kind in `event_format`; it is read and written
    # by hand below, after the fields before it and before `slices`, as protobuf orders it.
    FIELDS = ((1, "dtype", "enum", False), (2, "shape", TensorShapeProto, False),
              (3, "shard_id", "int32", False), (4, "offset", "int64", False),
              (5, "size", "int64", False), (7, "slices", "bytes", True))


class SlicesNotCoveredError(errors.InvalidArgumentError, ValueError):
    """A region of a partitioned tensor that its saved slices do not cover: an
    InvalidArgumentError when restoring (as TF's Saver raises), a ValueError from
    ``reader.get_tensor`` (as TF's checkpoint reader raises)."""


def index_file(prefix: str) -> str:
    return prefix + ".index"


def data_file(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def bundle_data_files(prefix) -> list[str]:
    """The data shards (``prefix.data-*-of-*``) of a checkpoint in TensorFlow's format."""
    prefix = os.fspath(prefix)
    return sorted(glob.glob(glob.escape(prefix) + ".data-?????-of-?????"))


def is_bundle(prefix) -> bool:
    """Whether `prefix` names a checkpoint in TensorFlow's format (``prefix.index``
    exists and there is no flowgraph checkpoint file named `prefix` itself)."""
    prefix = os.fspath(prefix)
    return not os.path.isfile(prefix) and os.path.isfile(index_file(prefix))


def _entry_crc(raw: bytes) -> int | None:
    for number, wire, value in iter_fields(raw):
        if number == 6 and wire == 5:
            return struct.unpack("<I", value)[0]
    return None


class BundleReader:
    """Reads a TensorFlow checkpoint; the same methods as flowgraph's `CheckpointReader`.

    Example
    -------
    >>> import os, tempfile, numpy as np
    >>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> write_bundle(prefix, {"b": np.arange(3, dtype=np.int64)})
    >>> with BundleReader(prefix) as r:
    ...     r.get_tensor("b").tolist(), r.get_variable_to_dtype_map()["b"].name
    ([0, 1, 2], 'int64')
    """

    def __init__(self, prefix) -> None:
        self.path = os.fspath(prefix)
        index = index_file(self.path)
        try:
            with open(index, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find "
                f"any matching files for {self.path} (no {index})") from None
        try:
            items = read_table(raw)
            if not items or items[0][0] != b"":
                raise ValueError("the table has no header entry (empty key)")
            self._header = BundleHeaderProto.FromString(items[0][1])
            # Keys starting with NUL are the parts of partitioned tensors (bundle_slices).
            self._parts = {k: v for k, v in items[1:] if k.startswith(b"\x00")}
            self._entries = {k.decode("utf-8"): v for k, v in items[1:]
                             if not k.startswith(b"\x00")}
        except (ValueError, UnicodeDecodeError, struct.error) as e:
            raise self._data_loss(index, e) from None
        if self._header.endianness != 0:
            raise errors.UnimplementedError(
                None, None, f"Checkpoint {self.path} was written on a big-endian machine; "
                "only little-endian TensorFlow checkpoints can be read.")
        if self._header.version.producer > _FORMAT_VERSION:
            raise errors.DataLossError(
                None, None, f"Checkpoint {index} uses tensor bundle format version "
                f"{self._header.version.producer}; flowgraph reads version "
                f"{_FORMAT_VERSION}. Re-save it with an older TensorFlow.")
        self._decoded: dict[str, BundleEntryProto] = {}

    @staticmethod
    def _data_loss(file: str, cause) -> errors.DataLossError:
        return errors.DataLossError(
            None, None, f"Unable to read TensorFlow checkpoint file {file}: it is truncated "
            f"or corrupted ({type(cause).__name__}: {cause}). Restore an older checkpoint.")

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- entries --------------------------------------------------------------------------
    def _entry(self, name: str) -> BundleEntryProto:
        if name not in self._decoded:
            if name not in self._entries:
                raise errors.NotFoundError(
                    None, None, f"Key {name} not found in checkpoint {self.path}")
            self._decoded[name] = self._decode(self._entries[name])
        return self._decoded[name]

    def _decode(self, raw: bytes) -> BundleEntryProto:
        try:
            return BundleEntryProto.FromString(raw)
        except (ValueError, struct.error) as e:
            raise self._data_loss(index_file(self.path), e) from None

    def tensor_dtype(self, name: str) -> _dtypes.DType:
        """The dtype `name` declares in the index (no data read)."""
        enum = self._entry(name).dtype
        try:
            dtype = _dtypes.as_dtype(enum)
            np.dtype(dtype.as_numpy_dtype)
        except (TypeError, ValueError, KeyError):
            raise errors.UnimplementedError(
                None, None, f"Tensor '{name}' of checkpoint {self.path} has DataType enum "
                f"{enum}, which flowgraph cannot represent.") from None
        return dtype

    def tensor_shape(self, name: str) -> list[int]:
        """The shape `name` declares in the index (no data read)."""
        return [int(d.size) for d in self._entry(name).shape.dim]

    def _read(self, name: str, entry: BundleEntryProto, raw: bytes) -> tuple[bytes, str]:
        shards = max(int(self._header.num_shards), 1)
        file = data_file(self.path, int(entry.shard_id), shards)
        offset, size = int(entry.offset), int(entry.size)
        try:
            with open(file, "rb") as f:
                end = os.fstat(f.fileno()).st_size
                if offset < 0 or size < 0 or offset + size > end:
                    raise self._data_loss(file, ValueError(
                        f"tensor '{name}' needs {size} bytes at offset {offset}; the file "
                        f"holds {end}"))
                f.seek(offset)
                data = f.read(size)
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, f"Checkpoint {self.path}: data file {file} (holding tensor "
                f"'{name}') is missing; copy every .data-* file with the .index.") from None
        if len(data) != int(entry.size):
            raise self._data_loss(file, ValueError(
                f"tensor '{name}' needs {entry.size} bytes at offset {entry.offset}, the "
                f"file ends after {len(data)}"))
        shape = [int(d.size) for d in entry.shape.dim]
        if any(d < 0 for d in shape):
            raise self._data_loss(index_file(self.path), ValueError(
                f"tensor '{name}' has a negative dimension in {shape}"))
        crc = _entry_crc(raw)
        is_string = entry.dtype == _dtypes.string.as_datatype_enum
        if is_string and int(np.prod(shape, dtype=np.float64)) > len(data):
            raise self._data_loss(file, ValueError(
                f"string tensor '{name}' of shape {shape} cannot fit in {len(data)} bytes"))
        checked = _checksummed_strings(data, shape) if is_string else data
        if crc is not None and masked_crc32c(checked) != crc:
            raise self._data_loss(file, ValueError(f"checksum mismatch for tensor '{name}'"))
        return data, file

    # -- public API ----------------------------------------------------------------------
    def has_tensor(self, tensor_str: str) -> bool:
        return tensor_str in self._entries

    def get_tensor(self, tensor_str: str) -> np.ndarray:
        """The value of `tensor_str` (NotFoundError if the checkpoint lacks it)."""
        if not self.has_tensor(tensor_str):
            raise errors.NotFoundError(
                None, None, f"Key {tensor_str} not found in checkpoint {self.path}")
        entry = self._entry(tensor_str)
        if entry.slices:
            shape = self.tensor_shape(tensor_str)
            return self._assemble(tensor_str, entry, [0] * len(shape), shape)
        return self._value(tensor_str, entry, self._entries[tensor_str])

    def get_slice(self, tensor_str: str, starts, lengths) -> np.ndarray:
        """The region of `tensor_str` at `starts` with `lengths` (one per axis), from the
        whole tensor or from whichever saved slices cover it. Raises NotFoundError for a
        missing key and InvalidArgumentError for a region outside the tensor or not
        covered by its saved slices.

        Example
        -------
        >>> import os, tempfile, numpy as np
        >>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
        >>> write_bundle(prefix, {}, {"w": ([4], [([2], np.array([5.0, 6.0]))])})
        >>> BundleReader(prefix).get_slice("w", [3], [1]).tolist()
        [6.0]
        """
        if not self.has_tensor(tensor_str):
            raise errors.NotFoundError(
                None, None, f"Key {tensor_str} not found in checkpoint {self.path}")
        starts, lengths = [int(a) for a in starts], [int(n) for n in lengths]
        shape, entry = self.tensor_shape(tensor_str), self._entry(tensor_str)
        if len(starts) != len(shape) or len(lengths) != len(shape) or any(
                a < 0 or n < 0 or a + n > d for a, n, d in zip(starts, lengths, shape)):
            raise errors.InvalidArgumentError(
                None, None, f"Checkpoint {self.path}: the region "
                f"{format_region(starts, lengths)} does not fit tensor '{tensor_str}' of "
                f"shape {shape}; ask for a region within it.")
        if entry.slices:
            return self._assemble(tensor_str, entry, starts, lengths)
        value = self._value(tensor_str, entry, self._entries[tensor_str])
        return value[tuple(slice(a, a + n) for a, n in zip(starts, lengths))]

    def _value(self, name: str, entry: BundleEntryProto, raw: bytes) -> np.ndarray:
        dtype = self.tensor_dtype(name)
        data, file = self._read(name, entry, raw)
        shape = [int(d.size) for d in entry.shape.dim]
        count = int(np.prod(shape, dtype=np.int64))
        try:
            if dtype == _dtypes.string:
                return _decode_strings(data, count).reshape(shape)
            np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
            return np.frombuffer(data, dtype=np_dtype, count=count).reshape(shape) \
                .astype(np_dtype.newbyteorder("="))
        except ValueError as e:
            raise self._data_loss(file, ValueError(f"tensor '{name}': {e}")) from None

    def _saved_slices(self, name: str, entry: BundleEntryProto) -> list:
        shape, out = self.tensor_shape(name), []
        for raw_slice in entry.slices:
            try:
                starts, lengths, key_lengths = parse_slice(raw_slice, shape)
            except ValueError as e:
                raise self._data_loss(index_file(self.path),
                                      ValueError(f"tensor '{name}': {e}")) from None
            out.append((starts, lengths, slice_key(name, starts, key_lengths)))
        return out

    def _assemble(self, name: str, entry: BundleEntryProto, starts: list,
                  lengths: list) -> np.ndarray:
        """The region `starts`/`lengths` of a partitioned tensor from the saved slices
        that overlap it. The slices' extents are checked against the tensor's shape and
        their tiling of the region before any part is read, and every part read (its
        size checked against its file) before the region is allocated."""
        index, saved = index_file(self.path), self._saved_slices(name, entry)
        needed, problem = region_overlaps(starts, lengths, [(s, n) for s, n, _ in saved])
        region = format_region(starts, lengths)
        if problem == "overlap":
            raise self._data_loss(index, ValueError(
                f"tensor '{name}': two of its saved slices overlap in region {region}"))
        if problem == "short":
            have = ", ".join(format_region(s, n) for s, n, _ in saved) or "none"
            raise SlicesNotCoveredError(
                None, None, f"Checkpoint {self.path} does not have sufficient slices of "
                f"tensor '{name}' (shape {self.tensor_shape(name)}) to restore the region "
                f"{region}: the saved slices are {have}. Restore a region they cover (the "
                "checkpoint was written by a differently partitioned variable), or use the "
                "graph that wrote it.")
        pieces = []
        for i, overlap_starts, overlap_lengths in needed:
            part_starts, part_lengths, key = saved[i]
            if key not in self._parts:
                raise self._data_loss(index, ValueError(
                    f"tensor '{name}': the part at {part_starts} of shape {part_lengths} "
                    "is missing"))
            raw = self._parts[key]
            part = self._decode(raw)
            if part.dtype != entry.dtype or [int(d.size) for d in part.shape.dim] != \
                    part_lengths:
                raise self._data_loss(index, ValueError(
                    f"tensor '{name}': the part at {part_starts} does not have the slice's "
                    f"shape {part_lengths} and the tensor's dtype"))
            value = self._value(name, part, raw)
            src = tuple(slice(a - p, a - p + n) for a, n, p in
                        zip(overlap_starts, overlap_lengths, part_starts))
            dst = tuple(slice(a - r, a - r + n) for a, n, r in
                        zip(overlap_starts, overlap_lengths, starts))
            pieces.append((dst, value[src]))
        dtype = self.tensor_dtype(name)
        out = np.empty(lengths, dtype=object if dtype == _dtypes.string
                       else np.dtype(dtype.as_numpy_dtype))
        for dst, value in pieces:
            out[dst] = value
        return out

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: self.tensor_shape(name) for name in sorted(self._entries)}

    def get_variable_to_dtype_map(self) -> dict[str, _dtypes.DType]:
        return {name: self.tensor_dtype(name) for name in sorted(self._entries)}

    def debug_string(self) -> bytes:
        """TensorFlow's listing of the index: a ``KEY (DT_FLOAT) [2,3]`` line per entry
        in key order, where a partitioned tensor is listed as its parts (each under its
        binary slice key, with the part's shape)."""
        rows = []
        for name in self._entries:
            entry, dtype = self._entry(name), self.tensor_dtype(name)
            parts = self._saved_slices(name, entry) if entry.slices else []
            if not parts:
                rows.append((name.encode("utf-8"), dtype, self.tensor_shape(name)))
            rows += [(key, dtype, lengths) for _, lengths, key in parts]
        return b"".join(
            key + f" ({datatype_name(dtype.as_datatype_enum)}) "
                  f"[{','.join(str(d) for d in shape)}]\n".encode()
            for key, dtype, shape in sorted(rows, key=lambda r: r[0]))


def _checksummed_strings(data: bytes, shape: list[int]) -> bytes:
    # The bytes TensorFlow's CRC of a string tensor covers: lengths as uint32, the
    # lengths' checksum, the elements.
    count, lengths, pos = int(np.prod(shape, dtype=np.int64)), [], 0
    try:
        for _ in range(count):
            n, pos = read_varint(data, pos)
            lengths.append(n)
    except ValueError:
        return data
    if any(n >= 1 << 32 for n in lengths):
        return data  # a corrupt length: the CRC over the raw bytes will not match
    return struct.pack(f"<{count}I", *lengths) + data[pos:]


def _decode_strings(data: bytes, count: int) -> np.ndarray:
    lengths, pos = [], 0
    for _ in range(count):
        n, pos = read_varint(data, pos)
        lengths.append(n)
    if pos + 4 > len(data):
        raise ValueError("string tensor ends inside its length table")
    if any(n >= 1 << 32 for n in lengths):
        raise ValueError("a string length does not fit 32 bits")
    (stored,) = struct.unpack_from("<I", data, pos)
    if masked_crc32c(struct.pack(f"<{count}I", *lengths)) != stored:
        raise ValueError("checksum mismatch in the string lengths")
    pos += 4
    if pos + sum(lengths) != len(data):
        raise ValueError(f"string lengths add up to {sum(lengths)} bytes, the tensor "
                         f"holds {len(data) - pos}")
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = data[pos:pos + n]
        pos += n
    return out


# -- writing ----------------------------------------------------------------------------
def _tensor_bytes(arr: np.ndarray) -> tuple[bytes, _dtypes.DType]:
    if arr.dtype == object or arr.dtype.kind in "SU":
        items = [x if isinstance(x, bytes) else str(x).encode("utf-8") for x in arr.reshape(-1)]
        lengths = b"".join(write_varint(len(x)) for x in items)
        wide = struct.pack(f"<{len(items)}I", *map(len, items))
        check = struct.pack("<I", masked_crc32c(wide))
        return lengths + check + b"".join(items), _dtypes.string
    dtype = _dtypes.as_dtype(arr.dtype)
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes(), dtype


def _dim(size: int) -> TensorShapeProto.Dim:
    # proto3 leaves zero fields out; so does TensorFlow
    return TensorShapeProto.Dim(size=int(size)) if size else TensorShapeProto.Dim()


def bundle_files(prefix, tensors: dict, slices: dict | None = None,
                 shards: dict | None = None) -> list[tuple[str, bytes]]:
    """The files of a TensorFlow checkpoint holding `tensors` (name -> array), as
    ``[(path, bytes)]``: the data shard first, the index last (write them in this order,
    or all before renaming any, so that no index points at missing bytes).

    `slices` holds partitioned tensors, TensorFlow's way (see `bundle_slices`): name ->
    ``(full shape, [(starts of a part, part array), ...])``; a single part covering the
    whole tensor is written as a whole entry, as TensorFlow writes it.

    `shards` spreads the bytes over several data files, as a sharded `tf.train.Saver`
    writes one per device: ``(name, starts)`` -> shard number (``starts`` is ``()`` for a
    whole tensor, a part's offsets for a slice); the others go to shard 0. The files are
    ``PREFIX.data-0000K-of-0000N``, N the largest number plus one.

    The bytes depend only on the tensors (entries are sorted by name), so saving the same
    values again produces the same files.

    Example
    -------
    >>> import numpy as np
    >>> [p for p, _ in bundle_files("m", {"a": np.zeros(2, np.float32)})]
    ['m.data-00000-of-00001', 'm.index']
    """
    prefix = os.fspath(prefix)
    shards = shards or {}
    num_shards = max(shards.values(), default=0) + 1
    datas, entries = [bytearray() for _ in range(num_shards)], []
    slices = slices or {}
    # The data file holds the tensors in TensorFlow's order: by name, the parts of one
    # name by their offsets (the index sorts part keys, which start with NUL, first).
    items = [((name.encode("utf-8"), ()), name.encode("utf-8"), tensors[name])
             for name in tensors]
    for name, (full_shape, parts) in slices.items():
        if name in tensors:
            raise ValueError(f"tensor '{name}' is given both whole and as slices")
        full_shape = [int(d) for d in full_shape]
        if len(parts) == 1 and list(np.shape(parts[0][1])) == full_shape:
            # one part that is the whole tensor is saved whole, as TensorFlow does
            items.append(((name.encode("utf-8"), ()), name.encode("utf-8"), parts[0][1]))
            continue
        described = []
        for starts, part in sorted(parts, key=lambda p: list(p[0])):
            part = np.asarray(part)
            items.append(((name.encode("utf-8"), tuple(int(a) for a in starts)),
                          slice_key(name, starts, part.shape), part))
            described.append(write_slice(starts, part.shape))
        _, dtype = _tensor_bytes(np.asarray(parts[0][1])[:0])
        entry = BundleEntryProto(dtype=dtype.as_datatype_enum, slices=described,
                                 shape=TensorShapeProto(dim=[_dim(d) for d in full_shape]))
        entries.append((name.encode("utf-8"), entry.SerializeToString()))
    for (name, starts), key, arr in sorted(items, key=lambda item: item[0]):
        arr = np.asarray(arr)
        raw, dtype = _tensor_bytes(arr)
        checked = _checksummed_strings(raw, list(arr.shape)) if dtype == _dtypes.string \
            else raw
        entry = BundleEntryProto(dtype=dtype.as_datatype_enum,
                                 shape=TensorShapeProto(dim=[_dim(d) for d in arr.shape]))
        shard = shards.get((name.decode("utf-8"), starts), 0)
        data = datas[shard]
        if shard:
            entry.shard_id = shard
        if data:
            entry.offset = len(data)
        if raw:
            entry.size = len(raw)
        value = entry.SerializeToString() + b"\x35" + struct.pack("<I", masked_crc32c(checked))
        entries.append((key, value))
        data += raw
    header = BundleHeaderProto(num_shards=num_shards,
                               version=VersionDef(producer=_FORMAT_VERSION))
    entries.append((b"", header.SerializeToString()))
    return [*((data_file(prefix, k, num_shards), bytes(data)) for k, data in enumerate(datas)),
            (index_file(prefix), write_table(entries))]


def write_bundle(prefix, tensors: dict, slices: dict | None = None) -> None:
    """Write `tensors` (name -> array) as a TensorFlow checkpoint with prefix `prefix`
    (``prefix.index`` and ``prefix.data-00000-of-00001``), readable by TensorFlow's
    ``tf.train.Saver`` and ``tf.train.load_checkpoint``.

    Each file goes to a hidden temporary name, is fsynced and renamed; the data file
    first and the index last, so a crash leaves no index that points at missing bytes.
    (`tf.train.Saver` writes `bundle_files` itself, fsyncing all its files at once.)
    """
    for path, data in bundle_files(prefix, tensors, slices):
        directory, base = os.path.split(path)
        tmp = os.path.join(directory, f".{base}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
