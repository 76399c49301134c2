"""Source datasets: tensor slices, single tensors, ranges, Python generators, text files
and file listings.

A source reads graph tensors (placeholders, constants) only through ``rc.resolve`` at
run time, so the iterator initializer can hand it new values; NumPy and Python values
are converted once, at construction.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> p = tf.data.Dataset.range(2, 8, 3)._make_pipeline([])
>>> [int(e[0]) for e in p.elements()]
[2, 5]
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib
from collections.abc import Mapping

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape

from .dataset import Dataset
from .dataset_ops_structure import (
    ComponentSpec,
    SparseValue,
    as_spec_structure,
    check_shape,
    flatten,
    map_structure,
    normalize_element,
    pack_as,
    same_kind,
    same_structure,
    scalar_param,
    spec_of,
    to_component,
)

_STRING_SCALAR = ComponentSpec(_dtypes.string, TensorShape([]))


def _row(a, i: int):
    """Slice `i` of `a` along dimension 0, always as an ndarray (0-d for vectors); of a
    sparse value, the entries whose first index is `i`."""
    if isinstance(a, SparseValue):
        keep = a.indices[:, 0] == i
        return SparseValue(a.indices[keep, 1:], np.asarray(a.values)[keep], a.dense_shape[1:])
    return a[i] if a.ndim > 1 else a[i:i + 1].reshape(())


def _size0(a):
    if isinstance(a, SparseValue):
        return int(a.dense_shape[0]) if len(a.dense_shape) else None
    return a.shape[0] if a.ndim else None


def _graph_tensors(flat) -> list:
    """The graph tensors among components (a SparseTensor's three)."""
    out = []
    for c in flat:
        if isinstance(c, Tensor):
            out.append(c)
        elif hasattr(c, "dense_shape") and isinstance(c.indices, Tensor):
            out += [c.indices, c.values, c.dense_shape]
    return out


def _values(rc, flat, specs) -> list[np.ndarray]:
    out = []
    for c, s in zip(flat, specs):
        if s.sparse and not isinstance(c, SparseValue):  # a graph SparseTensor
            out.append(to_component(SparseValue(rc.resolve(c.indices), rc.resolve(c.values),
                                                rc.resolve(c.dense_shape)), s))
            continue
        v = rc.resolve(c)
        out.append(v if isinstance(v, np.ndarray) and isinstance(c, np.ndarray)
                   else to_component(v, s))
    return out


class TensorSliceDataset(Dataset):
    """``Dataset.from_tensor_slices``: one element per index of the first dimension."""

    def __init__(self, tensors) -> None:
        self._components = normalize_element(tensors, "from_tensor_slices")
        self._flat = flatten(self._components)
        self._full = [spec_of(c) for c in self._flat]
        n = None
        for c, s in zip(self._flat, self._full):
            if s.shape.ndims == 0:
                raise ValueError(
                    "from_tensor_slices: every component needs a first dimension to slice, "
                    f"but {_label(c)} is a scalar. Use Dataset.from_tensors for one element")
            if s.shape.ndims is not None and s.shape[0].value is not None:
                if n is not None and n != s.shape[0].value:
                    raise ValueError(
                        "from_tensor_slices: all components must have the same size in "
                        f"dimension 0, got sizes {[_dim0(x) for x in self._full]}")
                n = s.shape[0].value
        self._structure = pack_as(self._components, [
            same_kind(s, s.dtype, s.shape[1:] if s.shape.ndims is not None else s.shape)
            for s in self._full])

    def _tensors(self):
        return _graph_tensors(self._flat)

    def _iter(self, rc):
        arrays = _values(rc, self._flat, self._full)
        sizes = {_size0(a) for a in arrays}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(
                None, None, "from_tensor_slices: all components must have the same size in "
                f"dimension 0, got shapes {[_shape_of(a) for a in arrays]}")
        for i in range(sizes.pop()):
            yield tuple(_row(a, i) for a in arrays)


class SparseTensorSliceDataset(Dataset):
    """``Dataset.from_sparse_tensor_slices``: for each row of a SparseTensor, the tuple
    ``(indices, values, dense_shape)`` of that row's entries (indices without the row
    coordinate), three dense int64/dtype/int64 tensors."""

    def __init__(self, sparse_tensor) -> None:
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError(f"from_sparse_tensor_slices: `sparse_tensor` must be a "
                            f"tf.SparseTensor, got {type(sparse_tensor).__name__}")
        self._rows = TensorSliceDataset(sparse_tensor)
        spec = self._rows._structure  # the SparseComponentSpec of one row
        rank = spec.shape.ndims
        self._structure = (ComponentSpec(_dtypes.int64, TensorShape([None, rank])),
                           ComponentSpec(spec.dtype, TensorShape([None])),
                           ComponentSpec(_dtypes.int64, TensorShape([rank])))

    def _inputs(self):
        return [self._rows]

    def _cardinality(self, rc, count_elements) -> int:
        return count_elements(self._rows, rc)  # one element per row

    def _iter(self, rc):
        for (row,) in self._rows._iter(rc):
            yield (row.indices, np.asarray(row.values, self._structure[1].dtype.as_numpy_dtype),
                   row.dense_shape)


def _shape_of(a) -> list:
    return a.dense_shape.tolist() if isinstance(a, SparseValue) else list(a.shape)


def _label(c) -> str:
    return f"'{c.name}'" if isinstance(c, Tensor) else f"the value of shape {np.shape(c)}"


def _dim0(s: ComponentSpec):
    return None if s.shape.ndims is None else s.shape[0].value


class TensorDataset(Dataset):
    """``Dataset.from_tensors``: the single element `tensors`."""

    def __init__(self, tensors) -> None:
        self._components = normalize_element(tensors, "from_tensors")
        self._flat = flatten(self._components)
        self._specs = [spec_of(c) for c in self._flat]
        self._structure = pack_as(self._components, self._specs)

    def _tensors(self):
        return _graph_tensors(self._flat)

    def _iter(self, rc):
        yield tuple(_values(rc, self._flat, self._specs))


class RangeDataset(Dataset):
    """``Dataset.range(stop)`` / ``range(start, stop[, step])``: int64 scalars."""

    def __init__(self, *args) -> None:
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        self._args = [scalar_param(a, _dtypes.int64, f"Dataset.range argument {n}")
                      for a, n in zip(args, ("start", "stop", "step"))]
        self._structure = ComponentSpec(_dtypes.int64, TensorShape([]))

    def _tensors(self):
        return [a for a in self._args if isinstance(a, Tensor)]

    def _iter(self, rc):
        start, stop, step = (int(rc.resolve(a)) for a in self._args)
        if step == 0:
            raise errors.InvalidArgumentError(
                None, None, "Dataset.range: step must be a non-zero integer, got 0")
        for v in range(start, stop, step):
            yield (np.asarray(v, dtype=np.int64),)


class GeneratorDataset(Dataset):
    """``Dataset.from_generator``: the values a Python generator yields."""

    def __init__(self, generator, output_types, output_shapes=None, args=None) -> None:
        if not callable(generator):
            raise TypeError(
                f"from_generator: `generator` must be callable (a generator function), got "
                f"{type(generator).__name__}")
        self._generator = generator
        if output_shapes is None:
            self._structure = as_spec_structure(output_types, None)
        else:
            self._structure = as_spec_structure(output_types, output_shapes)
        self._specs = flatten(self._structure)
        self._args = [] if args is None else [
            normalize_element(a, "from_generator args") for a in
            (args if isinstance(args, list | tuple) else [args])]

    def _tensors(self):
        return [a for a in self._args if isinstance(a, Tensor)]

    def _iter(self, rc):
        args = []
        for a in self._args:
            v = rc.resolve(a)
            args.append(v.item() if isinstance(v, np.ndarray) and v.ndim == 0
                        and v.dtype == object else v)
        try:
            for value in self._generator(*args):
                yield self._convert(value)
        except errors.OpError:
            raise
        except Exception as e:  # as TF's py_func: UnknownError unless a mapped kind
            from flowgraph.ops.script_ops import op_error_class

            raise op_error_class(e)(
                None, None, f"{type(e).__name__}: {e} (raised by the generator of "
                f"from_generator)") from e

    def _convert(self, value) -> tuple:
        structure = self._structure
        if isinstance(value, list) and isinstance(structure, tuple):
            value = tuple(value)
        if not same_structure(structure, value) or (
                not isinstance(structure, tuple | Mapping) and isinstance(value, tuple)):
            raise errors.InvalidArgumentError(
                None, None, "from_generator: `generator` yielded an element that did not "
                f"match the expected structure. Expected: {self._type_text()}; got: "
                f"{_short(value)}")
        flat = flatten(value) if isinstance(structure, tuple | Mapping) else [value]
        out = []
        for v, s in zip(flat, self._specs):
            try:
                arr = to_component(v, s)
            except (TypeError, ValueError) as e:
                raise errors.InvalidArgumentError(
                    None, None, f"from_generator: `generator` yielded an element that could "
                    f"not be converted to the expected type {s.dtype.name}: {_short(v)} "
                    f"({e})") from None
            if not check_shape(arr, s.shape):
                raise errors.InvalidArgumentError(
                    None, None, "from_generator: `generator` yielded an element of shape "
                    f"{list(arr.shape)} where an element of shape {s.shape} was expected.")
            out.append(arr)
        return tuple(out)

    def _type_text(self) -> str:
        return repr(map_structure(lambda s: s.dtype.name, self._structure))


def _short(v) -> str:
    text = repr(v)
    return text if len(text) < 200 else text[:197] + "..."


def _filenames(value, what: str) -> list[str]:
    arr = np.asarray(value, dtype=object).reshape(-1)
    out = []
    for x in arr:
        if isinstance(x, bytes):
            out.append(x.decode("utf-8"))
        elif isinstance(x, str | os.PathLike):
            out.append(os.fspath(x))
        else:
            raise errors.InvalidArgumentError(
                None, None, f"{what}: file names must be strings, got {x!r}")
    return out


def _names(source, rc, what: str):
    """The file names of a `_string_source` value, at run time."""
    if isinstance(source, Dataset):
        for elem in source._iter(rc):
            yield from _filenames(elem[0], what)
    else:
        yield from _filenames(rc.resolve(source), what)


def parallel_reads(value, what: str) -> int | None:
    """A reader's ``num_parallel_reads``: None (files one after the other) or the number
    of files read in turn (``tf.data.AUTOTUNE``: one per core)."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        from flowgraph.framework.constant_op import constant_value

        known = constant_value(value)
        if known is None:
            raise ValueError(f"{what}: num_parallel_reads must be known when the dataset is "
                             f"built; got the computed tensor '{value.name}'")
        value = known.item()
    value = int(value)
    if value == -1:
        return max(os.cpu_count() or 1, 1)
    if value < 1:
        raise ValueError(f"{what}: num_parallel_reads must be a positive integer or "
                         f"tf.data.AUTOTUNE, got {value}")
    return value


def interleave_files(names, read_one, cycle_length: int | None):
    """The records of the files `names` (each read by ``read_one(name)``), in the order
    TensorFlow's readers give them with ``num_parallel_reads=cycle_length``: that many
    files are open at once and give one record each in turn; a file that ends hands its
    place to the next file, which gives its first record on that place's next turn.
    With `cycle_length` None the files are read one after the other."""
    if cycle_length is None:
        for name in names:
            yield from read_one(name)
        return
    pending = iter(names)
    places: list = [None] * cycle_length
    more_files = True
    turn = 0
    while True:
        if places[turn] is None and more_files:
            name = next(pending, None)
            if name is None:
                more_files = False
            else:
                places[turn] = iter(read_one(name))
        reader = places[turn]
        if reader is not None:
            record = next(reader, None)
            if record is None:
                places[turn] = None
            else:
                yield record
        elif not more_files and all(place is None for place in places):
            return
        turn = (turn + 1) % cycle_length


def _source_inputs(source) -> list:
    return [source] if isinstance(source, Dataset) else []


def _source_tensors(source) -> list:
    return [source] if isinstance(source, Tensor) else []


def _string_source(value, what: str):
    """A file-name argument: a string Tensor, a NumPy object array of str, or (as in TF)
    a `Dataset` of scalar strings, such as ``Dataset.list_files``'s."""
    if isinstance(value, Dataset):
        spec = value._structure
        if not isinstance(spec, ComponentSpec) or spec.dtype.base_dtype != _dtypes.string:
            types = map_structure(lambda s: s.dtype.name, spec)
            raise TypeError(f"The `filenames` argument must contain `tf.string` elements. "
                            f"Got a dataset of `tf.{types}` elements.")
        if spec.shape.ndims != 0:
            raise TypeError(f"The `filenames` argument must contain `tf.string` elements of "
                            f"shape [] (i.e. scalars). Got a dataset of element shape "
                            f"{spec.shape!r}.")
        return value
    if isinstance(value, Tensor):
        if value.dtype.base_dtype != _dtypes.string:
            raise TypeError(f"{what}: `filenames` must be a string tensor, got "
                            f"{value.dtype.name} ('{value.name}')")
        if value.shape.ndims not in (None, 0, 1):
            raise ValueError(f"{what}: `filenames` must be a scalar or a vector, got shape "
                             f"{value.shape}")
        return value
    if isinstance(value, str | bytes | os.PathLike):
        value = [value]
    names = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
    return np.asarray(names, dtype=object)


class TextLineDataset(Dataset):
    """The lines of one or more text files (without line terminators), as strings.

    Parameters
    ----------
    filenames : str, list of str, string Tensor, or Dataset of scalar strings
        The files, read one after the other.
    compression_type : {None, '', 'GZIP', 'ZLIB'}
        How the files are compressed.
    buffer_size : int, optional
        Read buffer size in bytes.
    num_parallel_reads : int, optional
        How many files give lines in turn (one line each), as TensorFlow's reader
        interleaves them; None reads the files one after the other.
    name : str, optional
        Accepted for TensorFlow compatibility (a name for the dataset's op).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> ds = tf.data.TextLineDataset(["a.csv", "b.csv"]).skip(1)   # skip a header
    >>> ds.output_types
    tf.string
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None) -> None:
        del name
        self._filenames = _string_source(filenames, "TextLineDataset")
        self._parallel = parallel_reads(num_parallel_reads, "TextLineDataset")
        ctype = compression_type
        if isinstance(ctype, Tensor):
            from flowgraph.framework.constant_op import constant_value

            ctype = constant_value(ctype)
            ctype = None if ctype is None else ctype.item()
        ctype = (ctype.decode() if isinstance(ctype, bytes) else ctype) or ""
        if ctype.upper() not in ("", "GZIP", "ZLIB"):
            raise ValueError(f"TextLineDataset: compression_type must be None, '', 'GZIP' or "
                             f"'ZLIB', got {compression_type!r}")
        self._compression = ctype.upper()
        self._buffer_size = int(buffer_size) if buffer_size else 256 * 1024
        self._structure = _STRING_SCALAR

    def _inputs(self):
        return _source_inputs(self._filenames)

    def _tensors(self):
        return _source_tensors(self._filenames)

    def _iter(self, rc):
        yield from interleave_files(_names(self._filenames, rc, "TextLineDataset"),
                                    self._lines, self._parallel)

    def _open(self, name: str):
        try:
            if self._compression == "GZIP":
                return gzip.open(name, "rb")
            return open(name, "rb", buffering=self._buffer_size)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{name}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(None, None, f"{name}; Is a directory") from None

    def _lines(self, name: str):
        if self._compression == "ZLIB":
            with self._open(name) as f:
                data = zlib.decompress(f.read())
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                yield (_string_scalar(line[:-1] if line.endswith(b"\r") else line),)
            return
        with self._open(name) as f:
            for line in f:
                if line.endswith(b"\n"):
                    line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                yield (_string_scalar(line),)


def _string_scalar(b: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = b
    return out


class MatchingFilesDataset(Dataset):
    """The sorted file names matching glob patterns (expanded at run time)."""

    def __init__(self, file_pattern) -> None:
        self._patterns = _string_source(file_pattern, "list_files")
        self._structure = _STRING_SCALAR

    def _tensors(self):
        return [self._patterns] if isinstance(self._patterns, Tensor) else []

    def _iter(self, rc):
        patterns = _filenames(rc.resolve(self._patterns), "list_files")
        names = sorted({n for p in patterns for n in glob.glob(p)})
        if not names:
            raise errors.InvalidArgumentError(
                None, None, f"Expected 'file_pattern' to match at least one file, but no "
                f"files matched {patterns}")
        for n in names:
            yield (_string_scalar(n.encode("utf-8")),)


def ListFilesDataset(file_pattern, shuffle=None, seed=None) -> Dataset:
    """``Dataset.list_files``: matching file names, shuffled unless ``shuffle=False``."""
    files = MatchingFilesDataset(file_pattern)
    if shuffle is None or shuffle:
        return files.shuffle(2**31 - 1, seed=seed)
    return files
