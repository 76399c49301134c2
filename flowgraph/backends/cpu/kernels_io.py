"""CPU kernels for the saver ops (`flowgraph/ops/io_ops.py`): ``RestoreV2`` reads tensors
from a checkpoint file when the op runs (`tf.train.init_from_checkpoint`, TensorFlow's
saver graphs); ``SaveV2`` and ``MergeV2Checkpoints`` write TensorFlow's tensor-bundle
files through `flowgraph.framework.tf_formats.bundle`, each file to a temporary name
first, renamed when all are written (the index last); ``Save``/``SaveSlices`` and
``Restore``/``RestoreSlice`` write and read the V1 format
(`flowgraph.framework.tf_formats.tensor_slices`)."""

from __future__ import annotations

import contextlib
import os

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import CheckpointReader
from flowgraph.framework.tf_formats.bundle import (
    BundleReader,
    bundle_data_files,
    bundle_files,
    index_file,
)
from flowgraph.framework.tf_formats.bundle_slices import parse_slice_spec
from flowgraph.framework.tf_formats.tensor_slices import TensorSliceReader, write_tensor_slices


def _text(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _restored(reader, name: str, spec: str) -> np.ndarray:
    """Tensor `name` of `reader`'s checkpoint, or its slice `spec` (``"3 2 1,1:-"``)."""
    if not spec:
        return reader.get_tensor(name)
    try:
        full, starts, lengths = parse_slice_spec(spec)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, f"RestoreV2: tensor '{name}': {e}") \
            from None
    shape = reader.tensor_shape(name) if hasattr(reader, "tensor_shape") else full
    if list(shape) != full:
        raise errors.InvalidArgumentError(
            None, None, f"RestoreV2: tensor '{name}' in checkpoint {reader.path} has shape "
            f"{list(shape)}, but the slice spec '{spec}' is of a tensor of shape {full}")
    if not hasattr(reader, "get_slice"):
        return reader.get_tensor(name)[tuple(slice(a, a + n) for a, n in zip(starts,
                                                                              lengths))]
    return reader.get_slice(name, starts, lengths)


@cpu_kernel("RestoreV2")
def restore_v2(prefix, tensor_names, shape_and_slices, *, dtypes):
    """Read tensors `tensor_names` of the checkpoint file `prefix`, checking dtypes."""
    with CheckpointReader(_text(np.asarray(prefix).item())) as reader:
        outs = []
        specs = [_text(s) for s in np.asarray(shape_and_slices).reshape(-1)]
        for name, spec, dtype in zip(np.asarray(tensor_names).reshape(-1), specs, dtypes):
            value = _restored(reader, _text(name), spec)
            want = _dtypes.as_dtype(dtype).base_dtype
            if want != _dtypes.string and value.dtype != want.as_numpy_dtype:
                raise errors.InvalidArgumentError(
                    None, None,
                    f"RestoreV2: tensor '{_text(name)}' in checkpoint {reader.path} has dtype "
                    f"{value.dtype} but {want.name} was requested; restore it into a "
                    f"variable of dtype {value.dtype} or cast after restoring.")
            outs.append(value)
    return tuple(outs) if len(outs) != 1 else outs[0]


# -- writing: SaveV2, MergeV2Checkpoints, shard names -------------------------------------


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


def _write_files(files: list[tuple[str, bytes]]) -> None:
    """Write `files` (``[(path, bytes)]`` in `bundle_files`'s order) atomically: each to
    a temporary beside it, fsynced, then all renamed in order (the index last), so a
    reader never sees an index pointing at missing or partial data."""
    temps = []
    try:
        for path, data in files:
            directory = os.path.dirname(path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            tmp = f"{path}.tempstate{os.getpid()}{os.urandom(6).hex()}"
            temps.append((tmp, path))
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.remove(tmp)


@cpu_kernel("SaveV2")
def save_v2(prefix, tensor_names, shape_and_slices, *tensors, dtypes, op=None):
    """Write `tensors` under `tensor_names` as TensorFlow's bundle `prefix`."""
    what = f"SaveV2 '{getattr(op, 'name', '?')}'"
    if np.ndim(prefix) != 0:
        raise _invalid(f"{what}: prefix must be a scalar, got shape {list(np.shape(prefix))}")
    names = [_text(n) for n in np.asarray(tensor_names).reshape(-1)]
    specs = [_text(s) for s in np.asarray(shape_and_slices).reshape(-1)]
    if not len(names) == len(specs) == len(tensors):
        raise _invalid(f"{what}: tensor_names has {len(names)} entries and shape_and_slices "
                       f"{len(specs)}, but {len(tensors)} tensors are saved; all three must "
                       "have the same length")
    whole, parts = {}, {}
    for name, spec, value in zip(names, specs, tensors):
        value = np.asarray(value)
        if name in whole or (name in parts and not spec):
            raise _invalid(f"{what}: tensor name '{name}' is saved twice (duplicate key)")
        if not spec:
            whole[name] = value
            continue
        try:
            full, starts, lengths = parse_slice_spec(spec)
        except ValueError as e:
            raise _invalid(f"{what}: tensor '{name}': {e}") from None
        if list(value.shape) != lengths:
            raise _invalid(f"{what}: tensor '{name}' has shape {list(value.shape)} but its "
                           f"slice spec '{spec}' describes a slice of shape {lengths}")
        # the parts of a partitioned variable: one entry, its slices side by side
        shape, saved = parts.setdefault(name, (full, []))
        if shape != full or any(list(s) == list(starts) for s, _ in saved):
            raise _invalid(f"{what}: tensor '{name}': slice '{spec}' conflicts with another "
                           f"slice saved under that name (full shape {shape})")
        saved.append((starts, value))
    _write_files(bundle_files(_text(np.asarray(prefix).item()), whole, parts))


def _bundle_contents(reader: BundleReader, shard_base: int, tensors: dict, slices: dict,
                     shards: dict, what: str) -> None:
    """Add the tensors and slices of the bundle `reader` reads to the merge's tables."""
    for name in reader.get_variable_to_shape_map():
        if name in tensors or name in slices:
            raise _invalid(f"{what}: tensor '{name}' is in more than one of the checkpoints "
                           "to merge (duplicate key)")
        entry = reader._entry(name)
        if not entry.slices:
            tensors[name] = reader.get_tensor(name)
            shards[(name, ())] = shard_base + entry.shard_id
            continue
        full = reader.tensor_shape(name)
        for starts, lengths, key in reader._saved_slices(name, entry):
            part = reader._decode(reader._parts[key]) if key in reader._parts else None
            slices.setdefault(name, (full, []))[1].append(
                (starts, reader.get_slice(name, starts, lengths)))
            shards[(name, tuple(starts))] = shard_base + (part.shard_id if part else 0)


@cpu_kernel("MergeV2Checkpoints")
def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, *, delete_old_dirs=True,
                         allow_missing_files=False, op=None):
    """Merge the bundles `checkpoint_prefixes` into one bundle `destination_prefix` and
    delete them (and their directories, when `delete_old_dirs` and they are empty)."""
    what = f"MergeV2Checkpoints '{getattr(op, 'name', '?')}'"
    if np.ndim(destination_prefix) != 0:
        raise _invalid(f"{what}: destination_prefix must be a scalar, got shape "
                       f"{list(np.shape(destination_prefix))}")
    dest = _text(np.asarray(destination_prefix).item())
    sources = [_text(p) for p in np.asarray(checkpoint_prefixes).reshape(-1)]
    present = [p for p in sources if os.path.exists(index_file(p))]
    missing = [p for p in sources if p not in present]
    if missing and not allow_missing_files:
        raise _invalid(f"{what}: allow_missing_files was set to false and {missing[0]} did "
                       f"not exist (no {index_file(missing[0])})")
    if not present:
        raise _invalid(f"{what}: At least one prefix checkpoint file must exist, but none "
                       f"existed: {sources}")
    tensors, slices, shards, base = {}, {}, {}, 0
    for prefix in present:
        with BundleReader(prefix) as reader:
            _bundle_contents(reader, base, tensors, slices, shards, what)
            base += max(int(reader._header.num_shards), 1)
    _write_files(bundle_files(dest, tensors, slices, shards))
    for prefix in present:
        if os.path.abspath(prefix) == os.path.abspath(dest):
            continue
        for path in (*bundle_data_files(prefix), index_file(prefix)):
            if os.path.exists(path) and not _is_output(path, dest):
                os.remove(path)
        if delete_old_dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(prefix) or ".")


def _is_output(path: str, dest: str) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(dest) + ".")


def _scalar_int(x, name: str, what: str) -> int:
    if np.ndim(x) != 0:
        raise _invalid(f"{what}: {name} must be a scalar, got shape {list(np.shape(x))}")
    return int(x)


@cpu_kernel("ShardedFilename")
def sharded_filename(basename, shard, num_shards, *, op=None):
    """``BASENAME-SSSSS-of-NNNNN``, TensorFlow's name of one shard's file."""
    what = f"ShardedFilename '{getattr(op, 'name', '?')}'"
    base = _text(np.asarray(basename).item())
    return np.asarray(f"{base}-{_scalar_int(shard, 'shard', what):05d}-of-"
                      f"{_scalar_int(num_shards, 'num_shards', what):05d}".encode(), object)


@cpu_kernel("ShardedFilespec")
def sharded_filespec(basename, num_shards, *, op=None):
    """``BASENAME-?????-of-NNNNN``, the glob of all the shards' files."""
    what = f"ShardedFilespec '{getattr(op, 'name', '?')}'"
    base = _text(np.asarray(basename).item())
    return np.asarray(f"{base}-?????-of-{_scalar_int(num_shards, 'num_shards', what):05d}"
                      .encode(), object)


# -- the V1 format: Save, SaveSlices, Restore, RestoreSlice --------------------------------


def _v1_items(what: str, names, specs, data) -> list:
    names = [_text(n) for n in np.asarray(names).reshape(-1)]
    if len(names) != len(data) or (specs is not None and len(specs) != len(data)):
        raise _invalid(f"{what}: tensor_names has {len(names)} entries"
                       + ("" if specs is None else f" and shapes_and_slices {len(specs)}")
                       + f", but {len(data)} tensors are saved; they must match")
    items = []
    for k, (name, value) in enumerate(zip(names, data)):
        spec = specs[k] if specs is not None else ""
        part = None
        if spec:
            try:
                part = parse_slice_spec(spec)
            except ValueError as e:
                raise _invalid(f"{what}: tensor '{name}': {e}") from None
            if list(np.shape(value)) != part[2]:
                raise _invalid(f"{what}: tensor '{name}' has shape {list(np.shape(value))} "
                               f"but its slice spec '{spec}' describes {part[2]}")
        items.append((name, np.asarray(value), part))
    return items


@cpu_kernel("Save")
def save(filename, tensor_names, *data, T=(), op=None):
    """Write `data` under `tensor_names` as TensorFlow's V1 checkpoint file `filename`."""
    what = f"Save '{getattr(op, 'name', '?')}'"
    write_tensor_slices(_text(np.asarray(filename).item()),
                        _v1_items(what, tensor_names, None, data), what)


@cpu_kernel("SaveSlices")
def save_slices(filename, tensor_names, shapes_and_slices, *data, T=(), op=None):
    """`Save`, each tensor as the slice its ``shapes_and_slices`` entry names."""
    what = f"SaveSlices '{getattr(op, 'name', '?')}'"
    specs = [_text(s) for s in np.asarray(shapes_and_slices).reshape(-1)]
    write_tensor_slices(_text(np.asarray(filename).item()),
                        _v1_items(what, tensor_names, specs, data), what)


def _v1_restore(file_pattern, tensor_name, spec: str, dt, what: str):
    reader = TensorSliceReader(_text(np.asarray(file_pattern).item()))
    name = _text(np.asarray(tensor_name).item())
    want = _dtypes.as_dtype(dt).base_dtype
    have = reader.dtype(name)
    if have != want:
        raise _invalid(f"{what}: Expected to restore a tensor of type {want.name}, got a "
                       f"tensor of type {have.name} instead: tensor_name = {name}")
    region = None
    if spec:
        try:
            full, starts, lengths = parse_slice_spec(spec)
        except ValueError as e:
            raise _invalid(f"{what}: {e}") from None
        shape = reader.get_variable_to_shape_map()[name]
        if full != shape:
            raise _invalid(f"{what}: tensor '{name}' has shape {shape} in {reader.path}, "
                           f"the slice spec '{spec}' is of a tensor of shape {full}")
        region = (starts, lengths)
    return reader.get(name, region)


@cpu_kernel("Restore", fresh=True)
def restore(file_pattern, tensor_name, *, dt, preferred_shard=-1, op=None):
    """Tensor `tensor_name` of the V1 checkpoint files matching `file_pattern`."""
    return _v1_restore(file_pattern, tensor_name, "", dt,
                       f"Restore '{getattr(op, 'name', '?')}'")


@cpu_kernel("RestoreSlice", fresh=True)
def restore_slice(file_pattern, tensor_name, shape_and_slice, *, dt, preferred_shard=-1,
                  op=None):
    """The slice `shape_and_slice` (``"4 2 1,2:-"``) of a V1 checkpoint's tensor."""
    return _v1_restore(file_pattern, tensor_name, _text(np.asarray(shape_and_slice).item()),
                       dt, f"RestoreSlice '{getattr(op, 'name', '?')}'")
