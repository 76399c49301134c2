"""Transformations: map, filter, interleave/flat_map, batch, padded_batch, unbatch,
zip, concatenate, repeat, take, skip, shard and cache.

Each node reads its input through ``input._iter(rc)`` and yields flat tuples of NumPy
arrays; functions (`map`, `filter`, `interleave`) are `TracedFunction`s run in a
private session per element. A parallel map keeps up to `num_parallel_calls` elements
in flight on a thread pool and yields them in input order::

    input:   e0 e1 e2 e3 ...      pool: [f(e0) f(e1) f(e2)]  ──> yield f(e0), submit f(e3)

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(7).filter(lambda x: x % 2 > 0).batch(2)
>>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
[[1, 3], [5]]
"""

from __future__ import annotations

import collections
import concurrent.futures
import os

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape

from .dataset import AUTOTUNE, Dataset
from .dataset_ops_function import TracedFunction
from .dataset_ops_structure import (
    ComponentSpec,
    SparseValue,
    describe,
    flatten,
    map_structure,
    pack_as,
    same_kind,
    same_structure,
    scalar_param,
    static_int,
    to_component,
)
from .options import parallel_map_options, take_next


def _check_dataset(ds, what: str) -> Dataset:
    if not isinstance(ds, Dataset):
        raise TypeError(f"{what} expects a tf.data.Dataset, got {type(ds).__name__}")
    return ds


class _Unary(Dataset):
    def __init__(self, input_dataset: Dataset, what: str) -> None:
        self._input = _check_dataset(input_dataset, what)
        self._structure = input_dataset._structure

    def _inputs(self):
        return [self._input]


def _tensor_params(*params) -> list:
    return [p for p in params if isinstance(p, Tensor)]


# -- map / filter / interleave --------------------------------------------------------------
def _parallelism(num_parallel_calls) -> int:
    if num_parallel_calls is None:
        return 1
    n = static_int(scalar_param(num_parallel_calls, _dtypes.int64, "num_parallel_calls"))
    if n is None or n == AUTOTUNE:
        return os.cpu_count() or 1
    if n <= 0:
        raise ValueError(f"num_parallel_calls must be positive or tf.data.experimental."
                         f"AUTOTUNE, got {n}")
    return n


class MapDataset(_Unary):
    """``dataset.map(map_func, num_parallel_calls)``."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None,
                 deterministic=None) -> None:
        super().__init__(input_dataset, "map")
        self._fn = TracedFunction(map_func, input_dataset._structure, "map")
        self._structure = self._fn.output_structure
        self._parallel = _parallelism(num_parallel_calls)
        self._deterministic = None if deterministic is None else bool(deterministic)

    def _iter(self, rc):
        if self._parallel <= 1:
            return _MapIterator(self._input, self._fn, rc)
        return self._parallel_iter(rc)

    def _parallel_iter(self, rc):
        fn = self._fn
        ordered, workers = parallel_map_options(rc, self._parallel, self._deterministic)
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="flowgraph-map")
        rc.add_closer(lambda: pool.shutdown(wait=False, cancel_futures=True))
        pending: collections.deque = collections.deque()
        try:
            for elem in self._input._iter(rc):
                pending.append(pool.submit(fn.run, rc, elem))
                if len(pending) >= self._parallel:
                    yield tuple(take_next(pending, ordered).result())
            while pending:
                yield tuple(take_next(pending, ordered).result())
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class _MapIterator:
    """A sequential ``map``'s elements. As in TensorFlow, an error of the function is
    that element's alone: it reaches the caller and the next call goes on with the next
    input element (a generator would be finished by the exception)."""

    __slots__ = ("_fn", "_input", "_rc", "_source")

    def __init__(self, input_dataset, fn, rc) -> None:
        self._input, self._fn, self._rc, self._source = input_dataset, fn, rc, None

    def __iter__(self):
        return self

    def __next__(self) -> tuple:
        if self._source is None:  # started on first use, as a generator would be
            self._source = iter(self._input._iter(self._rc))
        return tuple(self._fn.run(self._rc, next(self._source)))

    def close(self) -> None:
        close = getattr(self._source, "close", None)
        if close is not None:
            close()


class FilterDataset(_Unary):
    """``dataset.filter(predicate)``: `predicate` returns a scalar bool tensor."""

    def __init__(self, input_dataset, predicate) -> None:
        super().__init__(input_dataset, "filter")
        self._fn = TracedFunction(predicate, input_dataset._structure, "filter")
        out = self._fn.output_structure
        if (not isinstance(out, ComponentSpec) or out.dtype != _dtypes.bool
                or not out.shape.is_compatible_with(TensorShape([]))):
            raise ValueError(f"filter: the predicate must return a scalar tf.bool tensor, "
                             f"but it returns {describe(out)}")

    def _iter(self, rc):
        fn = self._fn
        for elem in self._input._iter(rc):
            if bool(fn.run(rc, elem)[0]):
                yield elem


def _schedulable_cores() -> int:
    """TensorFlow's AUTOTUNE cycle length: the cores this process may be scheduled on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class InterleaveDataset(_Unary):
    """``interleave(map_func, cycle_length, block_length)`` and ``flat_map``."""

    def __init__(self, input_dataset, map_func, cycle_length=1, block_length=1) -> None:
        super().__init__(input_dataset, "interleave")
        self._fn = TracedFunction(map_func, input_dataset._structure, "interleave",
                                  expect_dataset=True)
        self._structure = self._fn.output_structure
        cycle = static_int(scalar_param(cycle_length, _dtypes.int64, "cycle_length"))
        if cycle is None or cycle == AUTOTUNE:
            cycle = _schedulable_cores()
        block = static_int(scalar_param(block_length, _dtypes.int64, "block_length"))
        if cycle <= 0 or block is None or block <= 0:
            raise ValueError(f"interleave: cycle_length and block_length must be positive, "
                             f"got {cycle_length} and {block_length}")
        self._cycle, self._block = cycle, block

    def _iter(self, rc):
        fn, inner = self._fn, self._fn.dataset
        inputs = iter(self._input._iter(rc))
        slots: list = [None] * self._cycle
        idx, input_done = 0, False
        while True:
            it = slots[idx]
            if it is None:
                if input_done:
                    if all(s is None for s in slots):
                        return
                    idx = (idx + 1) % self._cycle
                    continue
                elem = next(inputs, None)
                if elem is None:
                    input_done = True
                    continue
                it = slots[idx] = iter(inner._iter(fn.inner_context(rc, elem)))
            for _ in range(self._block):
                e = next(it, None)
                if e is None:
                    slots[idx] = None
                    break
                yield e
            idx = (idx + 1) % self._cycle


# -- batching ---------------------------------------------------------------------------------
def _batch_dim(batch_size, drop_remainder: bool):
    return static_int(batch_size) if drop_remainder else None


def _stack_sparse(parts: list) -> SparseValue:
    """Sparse elements batched: a leading batch index on each entry, the dense shape the
    largest of the elements' in each dimension (as TensorFlow batches them)."""
    ranks = {len(p.dense_shape) for p in parts}
    if len(ranks) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot batch sparse tensors of different ranks {sorted(ranks)}")
    rank = ranks.pop()
    indices = [np.concatenate([np.full((len(p.indices), 1), k, np.int64), p.indices], axis=1)
               for k, p in enumerate(parts)]
    shape = np.max([p.dense_shape for p in parts], axis=0) if rank else np.zeros(0, np.int64)
    return SparseValue(np.concatenate(indices, axis=0).reshape(-1, rank + 1),
                       np.concatenate([np.asarray(p.values) for p in parts]),
                       np.concatenate([[len(parts)], shape]).astype(np.int64))


def _stack(batch: list, i: int) -> np.ndarray:
    parts = [e[i] for e in batch]
    if isinstance(parts[0], SparseValue):
        return _stack_sparse(parts)
    first = parts[0].shape
    for k, p in enumerate(parts):
        if p.shape != first:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component {i}. "
                f"First element had shape {list(first)} and element {k} had shape "
                f"{list(p.shape)}. Use padded_batch for elements of varying shapes")
    return np.stack(parts)


class BatchDataset(_Unary):
    """``dataset.batch(batch_size, drop_remainder)``."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False) -> None:
        super().__init__(input_dataset, "batch")
        self._size = scalar_param(batch_size, _dtypes.int64, "batch_size")
        self._drop = bool(drop_remainder)
        dim = _batch_dim(self._size, self._drop)
        self._structure = map_structure(
            lambda s: same_kind(s, s.dtype, TensorShape([dim]).concatenate(s.shape)),
            input_dataset._structure)
        self._fused = None
        if type(self) is BatchDataset and isinstance(input_dataset, MapDataset):
            from .dataset_ops_vectorize import vectorize

            self._fused = vectorize(input_dataset._fn)

    def _tensors(self):
        return _tensor_params(self._size)

    def _batches(self, rc, source=None):
        n = int(rc.resolve(self._size))
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Batch size must be greater than zero, got {n}.")
        buf: list = []
        for e in (source or self._input)._iter(rc):
            buf.append(e)
            if len(buf) == n:
                yield buf
                buf = []
        if buf and not self._drop:
            yield buf

    def _iter(self, rc):
        if self._fused is not None:  # map-then-batch fusion (dataset_ops_vectorize)
            fn = self._fused
            for buf in self._batches(rc, source=self._input._input):
                yield tuple(fn.run(rc, [_stack(buf, i) for i in range(len(buf[0]))]))
            return
        for buf in self._batches(rc):
            yield tuple(_stack(buf, i) for i in range(len(buf[0])))


class PaddedBatchDataset(BatchDataset):
    """``dataset.padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)``."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values=None,
                 drop_remainder=False) -> None:
        super().__init__(input_dataset, batch_size, drop_remainder)
        specs = flatten(input_dataset._structure)
        if any(s.sparse for s in specs):
            raise TypeError("padded_batch: sparse components cannot be padded; use batch(), "
                            "which batches a SparseTensor into one of rank + 1")
        shapes = _nested_like(input_dataset._structure, padded_shapes, "padded_shapes")
        self._shapes = []
        for k, (spec, shape) in enumerate(zip(specs, shapes)):
            shape = _padded_shape(shape)
            if spec.shape.ndims is not None and shape.ndims != spec.shape.ndims:
                raise ValueError(
                    f"The padded shape {shape} is not compatible with the shape "
                    f"{spec.shape} of the corresponding input component.")
            if not shape.is_compatible_with(spec.shape) and spec.shape.ndims is not None:
                for d, s in zip(shape.as_list(), spec.shape.as_list()):
                    if d is not None and s is not None and d < s:
                        raise ValueError(
                            f"padded_batch: padded shape {shape} of component {k} is smaller "
                            f"than the component's shape {spec.shape}")
            self._shapes.append(shape)
        if padding_values is None:
            self._pads = [None] * len(specs)
        else:
            if not isinstance(input_dataset._structure, ComponentSpec) and not isinstance(
                    padding_values, tuple | list | dict):
                # as TF: one value pads every component
                padding_values = map_structure(lambda _: padding_values,
                                               input_dataset._structure)
            values = _nested_like(input_dataset._structure, padding_values, "padding_values")
            self._pads = [_padding_value(v, s) for v, s in zip(values, specs)]
        dim = _batch_dim(self._size, self._drop)
        self._structure = pack_as(input_dataset._structure, [
            ComponentSpec(s.dtype, TensorShape([dim]).concatenate(shape))
            for s, shape in zip(specs, self._shapes)])

    def _tensors(self):
        return super()._tensors() + [p for p in self._pads if isinstance(p, Tensor)]

    def _iter(self, rc):
        specs = flatten(self._input._structure)
        pads = [rc.resolve(p) for p in self._pads]
        for buf in self._batches(rc):
            out = []
            for i, (spec, shape) in enumerate(zip(specs, self._shapes)):
                parts = [e[i] for e in buf]
                want = [d if d is not None else max(p.shape[j] for p in parts)
                        for j, d in enumerate(shape.as_list())]
                pad = pads[i]
                if pad is None:
                    pad = b"" if spec.dtype == _dtypes.string else 0
                elif isinstance(pad, np.ndarray):
                    pad = pad[()]  # a 0-d object array would be stored as one element
                arr = np.full((len(parts), *want), pad, dtype=parts[0].dtype)
                for k, p in enumerate(parts):
                    if p.ndim != len(want) or any(a > b for a, b in zip(p.shape, want)):
                        raise errors.DataLossError(  # TF's error class here
                            None, None, f"Attempted to pad to a smaller size than the input "
                            f"element (padded_batch: component {i} has shape "
                            f"{list(p.shape)}, padded shape is {want}).")
                    arr[(k, *(slice(0, n) for n in p.shape))] = p if p.ndim else p[()]
                out.append(arr)
            yield tuple(out)


def _padding_value(value, spec):
    """One component's padding value: a NumPy scalar, or a scalar graph Tensor (a constant
    or a placeholder, read when the iterator is initialized) of the component's dtype."""
    if isinstance(value, Tensor):
        if value.dtype.base_dtype != spec.dtype.base_dtype:
            raise TypeError(f"Invalid `padding_values`. `padding_values` values type "
                            f"{value.dtype} does not match type {spec.dtype} of the "
                            f"corresponding input component.")
        if not value.shape.is_compatible_with(TensorShape([])):
            raise ValueError(f"Invalid `padding_values`. `padding_values` values should be "
                             f"scalars, but got {tuple(value.shape.as_list())}.")
        return value
    # as TF: converted on its own (a Python int is int32, a float float32), then checked
    shape = np.shape(value)
    if shape != ():
        raise ValueError(f"Invalid `padding_values`. `padding_values` values should be "
                         f"scalars, but got {shape}.")
    dtype = _dtypes.dtype_of_value(value)
    if dtype != spec.dtype.base_dtype:
        raise TypeError(f"Invalid `padding_values`. `padding_values` values type "
                        f"{dtype} does not match type {spec.dtype} of the "
                        f"corresponding input component.")
    return to_component(value, spec)


def _nested_like(structure, value, what: str) -> list:
    """Flatten `value` (nested like `structure`; a list at a leaf is one item)."""
    if isinstance(structure, ComponentSpec):
        return [value]
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise ValueError(f"{what} {value!r} must be nested like the element "
                             f"{describe(structure)}")
        return [x for k in sorted(structure) for x in _nested_like(structure[k], value[k], what)]
    if not isinstance(value, tuple | list) or len(value) != len(structure):
        raise ValueError(f"{what} {value!r} must be nested like the element "
                         f"{describe(structure)}")
    return [x for s, v in zip(structure, value) for x in _nested_like(s, v, what)]


def _padded_shape(shape) -> TensorShape:
    if isinstance(shape, Tensor):
        from flowgraph.framework.constant_op import constant_value_as_shape

        return constant_value_as_shape(shape)
    if isinstance(shape, list | tuple):
        shape = [None if d is not None and int(d) == -1 else d for d in shape]
    return as_shape(shape)


class UnbatchDataset(_Unary):
    """``dataset.unbatch()``: one element per row of the input elements."""

    def __init__(self, input_dataset) -> None:
        super().__init__(input_dataset, "unbatch")
        for s in flatten(input_dataset._structure):
            if s.shape.ndims == 0:
                raise ValueError("unbatch: cannot unbatch an input with scalar components")
        self._structure = map_structure(
            lambda s: same_kind(s, s.dtype, s.shape[1:] if s.shape.ndims else s.shape),
            input_dataset._structure)

    def _iter(self, rc):
        for e in self._input._iter(rc):
            sizes = {_rows(a) for a in e}
            if len(sizes) != 1:
                raise errors.InvalidArgumentError(
                    None, None, "unbatch: all components must have the same size in "
                    f"dimension 0, got shapes {[_shape_of(a) for a in e]}")
            for i in range(sizes.pop()):
                yield tuple(_row(a, i) for a in e)


def _rows(a) -> int:
    return int(a.dense_shape[0]) if isinstance(a, SparseValue) else a.shape[0]


def _shape_of(a) -> list:
    return a.dense_shape.tolist() if isinstance(a, SparseValue) else list(a.shape)


def _row(a, i: int):
    if isinstance(a, SparseValue):
        # row i of a sparse batch: its entries, in the batch's dense shape less dimension 0
        keep = a.indices[:, 0] == i
        return SparseValue(a.indices[keep, 1:], np.asarray(a.values)[keep], a.dense_shape[1:])
    return a[i] if a.ndim > 1 else a[i:i + 1].reshape(())


# -- combining -------------------------------------------------------------------------------
class ZipDataset(Dataset):
    """``Dataset.zip(datasets)``: elements of a nested structure of datasets."""

    def __init__(self, datasets) -> None:
        if isinstance(datasets, list):
            raise TypeError("Dataset.zip expects a (nested) tuple or dict of datasets, got a "
                            "list; use a tuple")
        self._datasets = flatten(datasets)
        for d in self._datasets:
            _check_dataset(d, "Dataset.zip")
        self._structure = pack_as(datasets, [d._structure for d in self._datasets])

    def _inputs(self):
        return list(self._datasets)

    def _iter(self, rc):
        its = [iter(d._iter(rc)) for d in self._datasets]
        while True:
            out: list = []
            for it in its:
                e = next(it, None)
                if e is None:
                    return
                out.extend(e)
            yield tuple(out)


class ConcatenateDataset(Dataset):
    """``a.concatenate(b)``: the elements of `a`, then those of `b`."""

    def __init__(self, first, second) -> None:
        _check_dataset(second, "concatenate")
        a, b = first._structure, second._structure
        if not same_structure(a, b) or [s.dtype for s in flatten(a)] != [
                s.dtype for s in flatten(b)]:
            raise TypeError(f"Incompatible dataset elements:\n  {describe(a)} vs.   "
                            f"{describe(b)}\n(concatenate needs the same structure and "
                            f"dtypes)")
        self._first, self._second = first, second
        self._structure = pack_as(a, [
            same_kind(x, x.dtype, x.shape.most_specific_compatible_shape(y.shape))
            for x, y in zip(flatten(a), flatten(b))])

    def _inputs(self):
        return [self._first, self._second]

    def _iter(self, rc):
        yield from self._first._iter(rc)
        yield from self._second._iter(rc)


# -- counting ----------------------------------------------------------------------------------
class RepeatDataset(_Unary):
    """``dataset.repeat(count)``; forever when `count` is None or -1."""

    def __init__(self, input_dataset, count=None) -> None:
        super().__init__(input_dataset, "repeat")
        self._count = -1 if count is None else scalar_param(count, _dtypes.int64, "count")

    def _tensors(self):
        return _tensor_params(self._count)

    def _iter(self, rc):
        count = int(rc.resolve(self._count))
        epoch = 0
        while count < 0 or epoch < count:
            produced = False
            for e in self._input._iter(rc):
                produced = True
                yield e
            epoch += 1
            if not produced:
                return  # an empty input would otherwise repeat forever


class TakeDataset(_Unary):
    """``dataset.take(count)``; everything when `count` is -1."""

    def __init__(self, input_dataset, count) -> None:
        super().__init__(input_dataset, "take")
        self._count = scalar_param(count, _dtypes.int64, "count")

    def _tensors(self):
        return _tensor_params(self._count)

    def _iter(self, rc):
        count = int(rc.resolve(self._count))
        if count == 0:
            return
        for i, e in enumerate(self._input._iter(rc)):
            yield e
            if i + 1 == count:
                return


class SkipDataset(_Unary):
    """``dataset.skip(count)``; skips everything when `count` is -1."""

    def __init__(self, input_dataset, count) -> None:
        super().__init__(input_dataset, "skip")
        self._count = scalar_param(count, _dtypes.int64, "count")

    def _tensors(self):
        return _tensor_params(self._count)

    def _iter(self, rc):
        count = int(rc.resolve(self._count))
        if count < 0:
            return
        for i, e in enumerate(self._input._iter(rc)):
            if i >= count:
                yield e


class ShardDataset(_Unary):
    """``dataset.shard(num_shards, index)``: elements ``index, index + num_shards, ...``."""

    def __init__(self, input_dataset, num_shards, index) -> None:
        super().__init__(input_dataset, "shard")
        self._n = scalar_param(num_shards, _dtypes.int64, "num_shards")
        self._index = scalar_param(index, _dtypes.int64, "index")
        # as TF, bad values fail when the iterator starts (InvalidArgumentError)

    def _tensors(self):
        return _tensor_params(self._n, self._index)

    def _iter(self, rc):
        n, index = self._params(rc)
        for i, e in enumerate(self._input._iter(rc)):
            if i % n == index:
                yield e

    def _params(self, rc) -> tuple[int, int]:
        """(num_shards, index) of this run, checked as TensorFlow checks them."""
        n, index = int(rc.resolve(self._n)), int(rc.resolve(self._index))
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Number of shards must be greater than zero (currently "
                f"num_shards = {n}).")
        if not 0 <= index < n:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {n - 1} (currently index = "
                f"{index}).")
        return n, index


class CacheDataset(_Unary):
    """``dataset.cache(filename)``: replay the first complete epoch. With a `filename`
    (a Python string) the epoch is also written there in TensorFlow's format (a tensor
    bundle, ``filename.index`` and ``filename.data-00000-of-00001``, one entry per
    component named ``"{element:7d}_{component}"``), and an existing complete cache is
    read instead of the input, by this program or a later one, as TensorFlow does."""

    def __init__(self, input_dataset, filename="") -> None:
        super().__init__(input_dataset, "cache")
        self._filename = filename

    def _iter(self, rc):
        return _CacheIterator(self, rc)

    def _elements(self, rc):
        state = rc.node_state(self, lambda: {"complete": None})
        if state["complete"] is not None:
            yield from state["complete"]
            return
        path = os.fspath(self._filename) if isinstance(self._filename, str | os.PathLike) \
            else ""
        if path and os.path.isfile(path + ".index"):
            state["complete"] = _read_cache(path)
            yield from state["complete"]
            return
        lock = _take_cache_lock(path) if path else None
        try:
            recorded = []
            for e in self._input._iter(rc):
                recorded.append(e)
                yield e
            state["complete"] = recorded
            if path:
                _write_cache(path, recorded)
        finally:
            if lock is not None:
                os.remove(lock)


class _CacheIterator:
    """A cache's elements. As in TensorFlow, a cache file another iterator is still
    writing fails the call with `AlreadyExistsError` and leaves this iterator where it
    was, so a later call tries again (and reads the cache once it is complete)."""

    __slots__ = ("_dataset", "_gen", "_rc")

    def __init__(self, dataset, rc) -> None:
        self._dataset, self._rc, self._gen = dataset, rc, None

    def __iter__(self):
        return self

    def __next__(self):
        if self._gen is None:
            gen = self._dataset._elements(self._rc)
            e = next(gen)  # an AlreadyExistsError here leaves `_gen` unset
            self._gen = gen
            return e
        return next(self._gen)

    def close(self) -> None:
        if self._gen is not None:
            self._gen.close()


def _take_cache_lock(path: str) -> str:
    """Create TensorFlow's lockfile of a cache being written (shard 0), or raise
    `AlreadyExistsError` if another iterator holds it."""
    lock = f"{path}_0.lockfile"
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        raise errors.AlreadyExistsError(
            None, None, f"There appears to be a concurrent caching iterator running - cache "
            f"lockfile already exists ('{lock}'). If you are sure no other running TF "
            "computations are using this cache prefix, delete the lockfile and "
            "re-initialize the iterator.") from None
    os.close(fd)
    return lock


def _cache_key(element: int, component: int, components: int) -> str:
    return f"{element:7d}_{component:{len(str(max(components - 1, 0)))}d}"


def _write_cache(path: str, elements: list) -> None:
    from flowgraph.framework.tf_formats.bundle import write_bundle

    if any(not isinstance(c, np.ndarray | np.generic) for e in elements for c in e):
        return  # sparse or ragged components: kept in memory only
    tensors = {_cache_key(i, j, len(e)): np.asarray(c)
               for i, e in enumerate(elements) for j, c in enumerate(e)}
    write_bundle(path, tensors)


def _read_cache(path: str) -> list:
    from flowgraph.framework.tf_formats.bundle import BundleReader

    with BundleReader(path) as reader:
        keys = sorted(reader.get_variable_to_shape_map())
        if not keys:
            return []
        components = sum(1 for k in keys if k.split("_")[0].strip() == "0")
        count = len(keys) // max(components, 1)
        return [tuple(reader.get_tensor(_cache_key(i, j, components))
                      for j in range(components)) for i in range(count)]
