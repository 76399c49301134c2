"""Keras HDF5 files (``model.save('m.h5')``, ``save_weights('w.h5')``) in the layout
TF 2.15's tf.keras writes, through the optional h5py (``pip install flowgraph[hdf5]``).

A weights group (the root of a weights file, ``model_weights`` in a model file)::

    attrs  backend="tensorflow", keras_version="2.15.0",
           layer_names=[every layer of model.layers, weightless ones too]
    <layer name>/               attrs weight_names=["dense/kernel:0", "dense/bias:0"]
    <layer name>/dense/kernel:0 one dataset per weight, at its variable's name
    top_level_model_weights/    attrs weight_names=[] (weights of no layer)

A model file adds root attributes ``model_config`` (JSON), ``training_config`` (JSON,
compiled models) and the group ``optimizer_weights`` (`flowgraph.keras.hdf5_optimizer`).
Name lists are variable-length UTF-8 strings, an empty list a float64 array of length
0 (h5py's rendering of ``[]``), a list larger than the 64 KB object-header limit split
into ``name0``, ``name1``, ... as Keras does.

Reading checks everything before it reads a value: the layer and weight counts, every
dataset's shape and dtype against the model's weights (a corrupt file may announce any
size), and only then reads the arrays and assigns them in one step, so a failed load
leaves the model as it was. Files are written to a temporary name next to the target,
fsynced and renamed (`atomic_h5_file`).

Example
-------
>>> import os, tempfile, numpy as np, flowgraph as tf
>>> from flowgraph import keras
>>> path = os.path.join(tempfile.mkdtemp(), "w.h5")
>>> with tf.Graph().as_default():
...     m = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
...     m.save_weights(path)
...     m2 = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
...     m2.load_weights(path)
...     print(all(np.array_equal(a, b) for a, b in zip(m.get_weights(), m2.get_weights())))
True
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import warnings

import numpy as np

__all__ = ["HDF5_SIGNATURE", "atomic_h5_file", "check_dataset", "check_global_heaps",
           "guarded", "has_attr", "has_member", "is_hdf5", "legacy_weights",
           "load_weights_from_group", "member", "open_h5", "read_dataset", "read_names",
           "read_scalar", "read_text_attr", "require_h5py", "save_weights_to_group",
           "write_names"]

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
KERAS_VERSION = "2.15.0"
_HEADER_LIMIT = 64512  # bytes of attributes HDF5 keeps in one object header (as Keras)


def require_h5py(what: str):
    """The h5py module, or an ImportError saying how to install it."""
    try:
        import h5py
    except ImportError as e:
        raise ImportError(f"{what} needs h5py, an optional dependency of flowgraph: "
                          f"`pip install flowgraph[hdf5]` (or `pip install h5py`); "
                          f"without it, save to a path without .h5 (a TensorFlow "
                          f"checkpoint / a model directory).") from e
    return h5py


def is_hdf5(path) -> bool:
    """Whether the file `path` starts with HDF5's signature (at 0 or a user-block
    offset: 512, 1024, 2048, ...)."""
    try:
        with open(path, "rb") as f:
            offset = 0
            while True:
                f.seek(offset)
                head = f.read(8)
                if head == HDF5_SIGNATURE:
                    return True
                if len(head) < 8:
                    return False
                offset = 512 if offset == 0 else offset * 2
    except OSError:
        return False


def _h5py():
    import h5py

    return h5py


# -- files ------------------------------------------------------------------------------------
@contextlib.contextmanager
def atomic_h5_file(path: str, what: str):
    """An h5py file open for writing at a temporary name next to `path`; on success it is
    closed, fsynced and renamed over `path` (a crash leaves the old file or the new one)."""
    from flowgraph.train.checkpoint_state import note_renamed, temp_path_for

    h5py = require_h5py(what)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"Cannot save {what} to {path}: the directory {directory} "
                                f"does not exist.")
    tmp = temp_path_for(path)
    try:
        with h5py.File(tmp, "w") as f:
            yield f
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    note_renamed(path)


# Attributes flowgraph reads; their variable-length strings are checked before HDF5
# reads them (it allocates a string's announced length before looking at the heap).
_TEXT_ATTRIBUTES = (b"model_config", b"training_config", b"layer_names", b"weight_names",
                    b"backend", b"keras_version")


def check_global_heaps(path: str) -> None:
    """Refuse a file whose variable-length strings would make HDF5 loop or allocate
    without bound. HDF5 keeps such strings (``model_config``, the name lists) in global
    heap collections, found here by their header (``GCOL``, version 1, three zero bytes,
    a size of at least 4096 that fits in the file) and walked as HDF5 walks them: an
    entry that does not advance (a free-space entry of size 0) would loop forever. Then
    each attribute message of the names flowgraph reads (`_TEXT_ATTRIBUTES`, layout
    version 1, as h5py and TF write) that holds variable-length strings must point at
    existing heap objects no shorter than the string: HDF5 allocates the announced
    length first (up to 4 GiB). Anything else is left to HDF5's own checks."""
    size = os.path.getsize(path)
    if size < 32:
        return
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        heaps = {}
        start = data.find(b"GCOL")
        while start >= 0:
            if data[start + 4:start + 8] == b"\x01\x00\x00\x00" and start + 16 <= size:
                length = struct.unpack_from("<Q", data, start + 8)[0]
                if 4096 <= length <= size - start:
                    heaps[start] = _walk_heap(data, start, start + length, path)
            start = data.find(b"GCOL", start + 4)
        for name in _TEXT_ATTRIBUTES:
            at = data.find(name + b"\x00")
            while at >= 0:
                _check_string_attribute(data, at, len(name) + 1, heaps, path)
                at = data.find(name + b"\x00", at + 1)


def _walk_heap(data, start: int, end: int, path: str) -> dict[int, int]:
    objects = {}
    p = start + 16
    while p + 16 <= end:
        index, _, _, length = struct.unpack_from("<HHIQ", data, p)
        need = length if index == 0 else 16 + (length + 7) // 8 * 8
        if need == 0:
            raise OSError(f"Unable to open {path}: its global heap at byte {start} is "
                          f"damaged (an empty free-space entry at byte {p}); the file is "
                          f"not a readable HDF5 file.")
        if index:
            objects[index] = length
        p += need
    return objects


def _pad8(n: int) -> int:
    return (n + 7) // 8 * 8


def _check_string_attribute(data, at: int, name_size: int, heaps: dict, path: str) -> None:
    """Check the attribute message whose name starts at byte `at` (see
    `check_global_heaps`); a layout this does not recognise is left alone."""
    if at < 8 or data[at - 8] != 1 or data[at - 7] != 0:
        return
    size, dt_size, ds_size = struct.unpack_from("<HHH", data, at - 6)
    if size != name_size or dt_size < 8 or ds_size < 8:
        return
    dtype = at + _pad8(name_size)
    space = dtype + _pad8(dt_size)
    values = space + _pad8(ds_size)
    if values > len(data) or data[dtype] & 0x0F != 9 or data[dtype + 1] & 0x03 != 1:
        return  # not a variable-length string
    if data[space] != 1:
        return  # a dataspace layout this does not read
    rank = data[space + 1]
    count = 1
    for d in range(rank):
        count *= struct.unpack_from("<Q", data, space + 8 + 8 * d)[0]
    if count * 16 > len(data) - values:
        raise OSError(f"Unable to open {path}: the attribute at byte {at} announces "
                      f"{count} strings, more than the file holds; it is damaged.")
    for i in range(count):
        length, address, index = struct.unpack_from("<IQI", data, values + 16 * i)
        if length == 0:
            continue  # an empty string: nothing to allocate
        if length > heaps.get(address, {}).get(index, -1):
            raise OSError(f"Unable to open {path}: a string of the attribute at byte {at} "
                          f"points at no heap object of {length} bytes (heap {address}, "
                          f"object {index}); the file is damaged.")


@contextlib.contextmanager
def open_h5(path, what: str):
    """`path` (a file name, or an open h5py File/Group used as it is) open for reading;
    a file HDF5 cannot open is an OSError naming it."""
    h5py = require_h5py(what)
    if isinstance(path, h5py.Group):
        yield path
        return
    if not os.path.isfile(path):
        raise OSError(f"No file or directory found at {path}")
    check_global_heaps(path)
    try:
        f = h5py.File(path, "r")
    except Exception as e:  # h5py raises OSError, but a damaged superblock may raise others
        raise OSError(f"Unable to open {what} {path}: not a readable HDF5 file ({e}).") \
            from e
    with f:
        yield f


# -- attributes -------------------------------------------------------------------------------
def write_names(group, name: str, names: list[str]) -> None:
    """Store a list of strings as attribute `name` (chunked past the header limit)."""
    names = [str(n) for n in names]
    if sum(len(n.encode("utf-8")) for n in names) > _HEADER_LIMIT:
        too_long = [n for n in names if len(n.encode("utf-8")) > _HEADER_LIMIT]
        if too_long:
            raise ValueError(f"Cannot save attribute {name!r}: the names {too_long[:3]} are "
                             f"longer than HDF5's object header limit ({_HEADER_LIMIT} "
                             f"bytes).")
        chunk, size, index = [], 0, 0
        for n in [*names, None]:
            length = 0 if n is None else len(n.encode("utf-8"))
            if n is None or size + length > _HEADER_LIMIT:
                group.attrs[f"{name}{index}"] = chunk
                chunk, size, index = [], 0, index + 1
            if n is not None:
                chunk.append(n)
                size += length
        return
    group.attrs[name] = names


def _utf8(value, what: str):
    """`value` decoded from UTF-8 when it is bytes (ValueError "<what> is not UTF-8")."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what} is not UTF-8 text ({e}).") from e


def _as_strings(value, where: str) -> list[str]:
    if isinstance(value, bytes | str):
        value = [value]
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{where} should be a list of names; found an array of shape "
                         f"{array.shape}.")
    out = []
    for item in array.tolist():
        item = _utf8(item, f"{where} holds a name that")
        if not isinstance(item, str):
            raise ValueError(f"{where} should be a list of names; found {item!r}.")
        out.append(item)
    return out


def guarded(where: str, fn, *args):
    """``fn(*args)``, an h5py call; whatever it raises on a damaged file (h5py raises
    OSError, KeyError, RuntimeError, ValueError, ...) becomes an OSError naming it."""
    try:
        return fn(*args)
    except Exception as e:
        raise OSError(f"{where}: cannot read the file ({type(e).__name__}: {e}); it is "
                      f"damaged or not a Keras HDF5 file.") from e


def has_attr(group, name: str, where: str) -> bool:
    return bool(guarded(where, lambda: name in group.attrs))


def has_member(group, name: str, where: str) -> bool:
    return bool(guarded(where, group.__contains__, name))


def read_names(group, name: str, where: str) -> list[str]:
    """The list of strings `write_names` stored (a missing attribute: ``[]``)."""
    if has_attr(group, name, where):
        return _as_strings(_read_attr(group, name, where), where)
    names, index = [], 0
    while has_attr(group, f"{name}{index}", where):
        names += _as_strings(_read_attr(group, f"{name}{index}", where), where)
        index += 1
    return names


def _read_attr(group, name: str, where: str):
    return guarded(f"{where} (attribute {name!r})", lambda: group.attrs[name])


def read_text_attr(group, name: str, where: str) -> str | None:
    """A string attribute (stored as str or bytes), or None when absent."""
    if not has_attr(group, name, where):
        return None
    value = _read_attr(group, name, where)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
    value = _utf8(value, f"{where}: attribute {name!r}")
    if not isinstance(value, str):
        raise ValueError(f"{where}: attribute {name!r} should be text; found "
                         f"{type(value).__name__}.")
    return value


# -- weights ----------------------------------------------------------------------------------
def legacy_weights(layer) -> list:
    """A layer's weights in the order of its HDF5 group: trainable first, then the rest
    (a nested model's batch-norm statistics after all its trainable weights), as Keras."""
    return layer.trainable_weights + layer.non_trainable_weights


def save_weights_to_group(group, model, values: dict | None = None) -> None:
    """Write every layer's weights of `model` into `group` (see the module docstring);
    `values` maps ``id(variable)`` to its array (read from the session when None)."""
    from flowgraph.keras import backend

    layers = list(model.layers)
    if values is None:
        weights = [w for layer in layers for w in layer.weights]
        values = dict(zip(map(id, weights), backend.batch_get_value(weights), strict=True))
    write_names(group, "layer_names", [layer.name for layer in layers])
    group.attrs["backend"] = "tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION
    seen: set = set()
    for layer in layers:
        if layer.name in seen:
            raise ValueError(f"Cannot save {model.name}: two layers are named "
                             f"{layer.name!r}; HDF5 files need unique layer names.")
        seen.add(layer.name)
        # as Keras: a '/' in a name nests groups, so 'exp/depthwise' may already have made
        # the group of a layer named 'exp' (MobileNetV3's names), which then holds both
        sub = group.require_group(layer.name)
        weights = legacy_weights(layer)
        names = [w.name for w in weights]
        write_names(sub, "weight_names", names)
        if len(set(names)) != len(names):
            raise ValueError(f"Cannot save layer {layer.name!r}: two of its weights have "
                             f"the same name ({names}).")
        for w, name in zip(weights, names, strict=True):
            sub.create_dataset(name, data=np.asarray(values[id(w)]))
    write_names(group.create_group("top_level_model_weights"), "weight_names", [])


def _saved_layers(group, source: str) -> list[tuple[str, list[tuple[str, object]]]]:
    """``[(layer name, [(weight name, dataset)])]`` of the saved layers with weights."""
    out = []
    for name in read_names(group, "layer_names", f"{source}: layer_names"):
        where = f"{source}, layer {name!r}"
        sub = member(group, name, where)
        datasets = []
        for wname in read_names(sub, "weight_names", f"{where}: weight_names"):
            ds = member(sub, wname, f"{where}, weight {wname!r}")
            if not isinstance(ds, _h5py().Dataset):
                raise ValueError(f"{where}: weight {wname!r} is not a dataset; the file is "
                                 f"damaged.")
            datasets.append((wname, ds))
        if datasets:
            out.append((name, datasets))
    return out


def member(group, name: str, where: str):
    """``group[name]``; missing or unreadable: an OSError naming `where`."""
    return guarded(f"{where}: {name!r} is missing or unreadable", group.__getitem__, name)


def check_dataset(var, wname: str, ds, where: str) -> str | None:
    """None when dataset `ds` fits variable `var`, else what is wrong."""
    want = tuple(var.shape.as_list())
    got, kind = guarded(f"{where}, weight {wname!r}",
                        lambda: (tuple(ds.shape or ()), ds.dtype.kind))
    if kind not in "biuf":
        return f"weight {wname!r} holds {ds.dtype} values, not numbers"
    if got != want:
        return (f"weight {var.name} has shape {want}, but the saved weight {wname!r} has "
                f"shape {got}")
    return None


def read_dataset(ds, var, wname: str, where: str) -> np.ndarray:
    value = guarded(f"{where}, weight {wname!r}", ds.__getitem__, ())
    return np.asarray(value).astype(var.dtype.base_dtype.as_numpy_dtype, copy=False)


def read_scalar(ds, name: str, where: str):
    """The value of a numeric scalar dataset (an optimizer's iteration count)."""
    shape, kind = guarded(where, lambda: (tuple(ds.shape or ()), ds.dtype.kind))
    if shape != () or kind not in "biuf":
        raise ValueError(f"{where}: {name!r} should be a numeric scalar; found shape "
                         f"{shape} of kind {kind!r}.")
    return guarded(where, ds.__getitem__, ())


def load_weights_from_group(group, model, source: str, by_name: bool = False,
                            skip_mismatch: bool = False) -> None:
    """Assign the weights saved in `group` to `model`'s layers: in order (the layers with
    weights, as Keras does), or with `by_name` to the layers of the same name
    (`skip_mismatch`: skip, with a warning, what does not fit instead of failing)."""
    from flowgraph.keras import backend

    saved = _saved_layers(group, source)
    pairs = []  # (variable, weight name, dataset, where)
    if by_name:
        index: dict = {}
        for layer in model.layers:
            index.setdefault(layer.name, []).append(layer)
        for name, datasets in saved:
            for layer in index.get(name, []):
                pairs += _match_layer(layer, name, datasets, source, skip_mismatch)
    else:
        layers = [layer for layer in model.layers if layer.weights]
        if len(layers) != len(saved):
            raise ValueError(
                f"Layer count mismatch when loading weights from file. Model expected "
                f"{len(layers)} layers, found {len(saved)} saved layers ({source}: the "
                f"model {model.name!r} has {len(layers)} layers with weights "
                f"({[la.name for la in layers]}), the file {len(saved)} "
                f"({[n for n, _ in saved]})). Pass by_name=True to load the layers of the "
                f"same name.")
        for layer, (name, datasets) in zip(layers, saved, strict=True):
            pairs += _match_layer(layer, name, datasets, source, False)
    values = [(var, read_dataset(ds, var, wname, where)) for var, wname, ds, where in pairs]
    backend.batch_set_value(values)


def _match_layer(layer, saved_name: str, datasets, source: str, skip_mismatch: bool) -> list:
    where = f"{source}, layer {layer.name!r} (saved as {saved_name!r})"
    weights = legacy_weights(layer)
    if len(weights) != len(datasets):
        message = (f"Weight count mismatch for layer {layer.name!r} loading {source}: the "
                   f"layer has {len(weights)} weight(s) ({[w.name for w in weights]}), the "
                   f"file {len(datasets)} for {saved_name!r} ({[n for n, _ in datasets]}).")
        if skip_mismatch:
            warnings.warn(f"Skipping loading of weights for layer {layer.name!r}: "
                          f"{message}", stacklevel=4)
            return []
        raise ValueError(message)
    pairs = []
    for var, (wname, ds) in zip(weights, datasets, strict=True):
        problem = check_dataset(var, wname, ds, where)
        if problem is None:
            pairs.append((var, wname, ds, where))
            continue
        message = f"{where}: {problem}."
        if getattr(layer, "reset_after", None) is not None and var is layer.bias:
            # a GRU's bias is (3u,) without reset_after, (2, 3u) with it
            saved = len(ds.shape or ()) == 2
            if saved != layer.reset_after:
                message = (f"GRU(reset_after={saved}) is not compatible with "
                           f"GRU(reset_after={layer.reset_after}): {message}")
        if skip_mismatch:
            warnings.warn(f"Skipping loading weight {var.name}: {message}", stacklevel=4)
            continue
        raise ValueError(message)
    return pairs
