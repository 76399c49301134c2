"""Transformations with state across elements, for ``tf.data.experimental``: `scan`,
`take_while`, `unique` and `ignore_errors`.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> ds = tf.data.Dataset.range(4).apply(
...     tf.data.experimental.scan(np.int64(0), lambda s, x: (s + x, s + x)))
>>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
[0, 1, 3, 6]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape

from .dataset import Dataset
from .dataset_ops_function import TracedFunction
from .dataset_ops_structure import (
    ComponentSpec,
    SparseComponentSpec,
    SparseValue,
    describe,
    flatten,
    map_structure,
    same_structure,
)

__all__ = ["ChooseFromDatasets", "DenseToSparseBatchDataset", "IgnoreErrorsDataset",
           "ScanDataset", "TakeWhileDataset", "UniqueDataset"]


class _Unary(Dataset):
    def __init__(self, input_dataset: Dataset, what: str) -> None:
        if not isinstance(input_dataset, Dataset):
            raise TypeError(f"{what} expects a tf.data.Dataset, got "
                            f"{type(input_dataset).__name__}")
        self._input = input_dataset
        self._structure = input_dataset._structure

    def _inputs(self):
        return [self._input]


class ScanDataset(_Unary):
    """``scan(initial_state, scan_func)``: ``scan_func(state, element)`` returns
    ``(new_state, output)``; the outputs are the elements."""

    def __init__(self, input_dataset, initial_state, scan_func) -> None:
        super().__init__(input_dataset, "scan")
        # A graph tensor is captured (fed by the iterator's initializer); a Python or
        # NumPy value is kept as its array, with the dtype TensorFlow would give it.
        self._init = map_structure(_state_value, initial_state)
        state_spec = map_structure(
            lambda v: ComponentSpec(v.dtype.base_dtype, v.shape) if isinstance(v, Tensor)
            else ComponentSpec(_dtypes.as_dtype(v.dtype), TensorShape(v.shape)), self._init)
        self._fn = TracedFunction(lambda state, element: _scan_call(scan_func, state, element),
                                  (state_spec, input_dataset._structure), "scan")
        out = self._fn.output_structure
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError(f"scan: scan_func must return a pair (new_state, output), got "
                            f"{describe(out)}")
        new_state, self._structure = out
        if not same_structure(new_state, state_spec) or [s.dtype for s in flatten(
                new_state)] != [s.dtype for s in flatten(state_spec)]:
            raise TypeError(f"scan: the new state {describe(new_state)} must have the "
                            f"structure and dtypes of the initial state {describe(state_spec)}")
        self._nstate = len(flatten(state_spec))

    def _tensors(self):
        return [v for v in flatten(self._init) if isinstance(v, Tensor)]

    def _iter(self, rc):
        state = [np.asarray(rc.resolve(v)) for v in flatten(self._init)]
        for elem in self._input._iter(rc):
            out = self._fn.run(rc, list(state) + list(elem))
            state, result = out[:self._nstate], out[self._nstate:]
            yield tuple(result)


def _state_value(v):
    if isinstance(v, Tensor):
        return v
    t = convert_to_tensor(v)
    value = constant_value(t)
    if value is None:
        raise TypeError(f"scan: initial_state must hold tensors or constant values, got {v!r}")
    return np.asarray(value, dtype=t.dtype.base_dtype.as_numpy_dtype)


def _scan_call(scan_func, state, element):
    # As TensorFlow: two arguments, the state and the element (a tuple stays packed).
    return scan_func(state, element)


class TakeWhileDataset(_Unary):
    """``take_while(predicate)``: the elements until `predicate` is first False."""

    def __init__(self, input_dataset, predicate) -> None:
        super().__init__(input_dataset, "take_while")
        self._fn = TracedFunction(predicate, input_dataset._structure, "take_while")
        out = self._fn.output_structure
        if (not isinstance(out, ComponentSpec) or out.dtype != _dtypes.bool
                or not out.shape.is_compatible_with(TensorShape([]))):
            raise ValueError(f"take_while: the predicate must return a scalar tf.bool "
                             f"tensor, but it returns {describe(out)}")

    def _iter(self, rc):
        for elem in self._input._iter(rc):
            if not bool(self._fn.run(rc, elem)[0]):
                return
            yield elem


class UniqueDataset(_Unary):
    """``unique()``: each distinct element once, in order of first appearance (one
    int32, int64 or string component, as TensorFlow)."""

    def __init__(self, input_dataset) -> None:
        super().__init__(input_dataset, "unique")
        spec = input_dataset._structure
        if not isinstance(spec, ComponentSpec) or spec.dtype not in (
                _dtypes.int32, _dtypes.int64, _dtypes.string):
            raise TypeError(f"unique: the dataset's elements must be single int32, int64 or "
                            f"string tensors, got {describe(spec)}")

    def _iter(self, rc):
        seen: set = set()
        for elem in self._input._iter(rc):
            key = np.asarray(elem[0]).tobytes() + repr(np.shape(elem[0])).encode()
            if key not in seen:
                seen.add(key)
                yield elem


class IgnoreErrorsDataset(_Unary):
    """``ignore_errors()``: an element whose computation raises an `OpError` is dropped
    and the input goes on with its next element. An input ``map`` (the usual source of
    such errors) is run here element by element, so that one failure does not end it;
    an error raised further up ends the input."""

    def __init__(self, input_dataset) -> None:
        super().__init__(input_dataset, "ignore_errors")

    def _iter(self, rc):
        fn, source = getattr(self._input, "_fn", None), getattr(self._input, "_input", None)
        if type(self._input).__name__ == "MapDataset" and fn is not None:
            for elem in source._iter(rc):
                try:
                    out = tuple(fn.run(rc, elem))
                except errors.OpError:
                    continue
                yield out
            return
        it = iter(self._input._iter(rc))
        while True:
            try:
                elem = next(it)
            except StopIteration:
                return
            except errors.OpError:
                continue
            yield elem


class ChooseFromDatasets(Dataset):
    """``choose_from_datasets``: the next element of ``datasets[c]`` for each int64 ``c``
    of `choice_dataset`; a choice of an exhausted dataset is skipped."""

    def __init__(self, datasets, choice_dataset, stop_on_empty: bool = False) -> None:
        self._stop_on_empty = stop_on_empty  # end at the first exhausted dataset
        datasets = list(datasets)
        if not datasets:
            raise ValueError("choose_from_datasets: `datasets` must not be empty")
        first = datasets[0]._structure
        for d in datasets[1:]:
            if not same_structure(d._structure, first) or [s.dtype for s in flatten(
                    d._structure)] != [s.dtype for s in flatten(first)]:
                raise TypeError(f"choose_from_datasets: the datasets' elements differ: "
                                f"{describe(first)} vs {describe(d._structure)}")
        spec = choice_dataset._structure
        if (not isinstance(spec, ComponentSpec) or spec.dtype != _dtypes.int64
                or not spec.shape.is_compatible_with(TensorShape([]))):
            raise TypeError(f"choose_from_datasets: choice_dataset must yield scalar int64 "
                            f"elements, got {describe(spec)}")
        self._datasets, self._choice = datasets, choice_dataset
        self._structure = first

    def _inputs(self):
        return [*self._datasets, self._choice]

    def _iter(self, rc):
        its = [iter(d._iter(rc)) for d in self._datasets]
        done = [False] * len(its)
        for (c,) in self._choice._iter(rc):
            k = int(c)
            if not 0 <= k < len(its):
                raise errors.InvalidArgumentError(
                    None, None, f"choose_from_datasets: selector index {k} out of range "
                    f"[0, {len(its)})")
            if done[k]:
                continue
            elem = next(its[k], None)
            if elem is None:
                done[k] = True
                if all(done) or self._stop_on_empty:
                    return
                continue
            yield elem


class DenseToSparseBatchDataset(_Unary):
    """``dense_to_sparse_batch(batch_size, row_shape)``: `batch_size` elements of rank
    ``len(row_shape)`` (each at most `row_shape`; a -1 entry takes the batch's largest)
    as one SparseTensor holding every value of each element at its position."""

    def __init__(self, input_dataset, batch_size, row_shape) -> None:
        super().__init__(input_dataset, "dense_to_sparse_batch")
        spec = input_dataset._structure
        if not isinstance(spec, ComponentSpec) or spec.sparse:
            raise TypeError(f"dense_to_sparse_batch: the elements must be single dense "
                            f"tensors, got {describe(spec)}")
        self._size = int(np.asarray(batch_size))
        self._row = [int(d) for d in np.asarray(row_shape).reshape(-1)]
        if spec.shape.ndims is not None and spec.shape.ndims != len(self._row):
            raise ValueError(f"dense_to_sparse_batch: row_shape {self._row} must have the "
                             f"rank of the elements, {spec.shape}")
        self._structure = SparseComponentSpec(
            spec.dtype, TensorShape([None] + [None if d < 0 else d for d in self._row]))

    def _batch(self, elements):
        shape = [max([np.shape(e)[k] for e in elements] + [0]) if d < 0 else d
                 for k, d in enumerate(self._row)]
        indices, values = [], []
        for b, e in enumerate(elements):
            e = np.asarray(e)
            if any(n > d for n, d in zip(e.shape, shape)):
                raise errors.InvalidArgumentError(
                    None, None, f"dense_to_sparse_batch: an element of shape {list(e.shape)} "
                    f"does not fit row_shape {shape}")
            for pos in np.ndindex(*e.shape):
                indices.append((b, *pos))
            values.append(e.reshape(-1))
        flat = np.concatenate(values) if values else np.zeros(0)
        return SparseValue(np.asarray(indices, np.int64).reshape(-1, len(shape) + 1), flat,
                           [len(elements), *shape])

    def _iter(self, rc):
        buf = []
        for (e,) in self._input._iter(rc):
            buf.append(e)
            if len(buf) == self._size:
                yield (self._batch(buf),)
                buf = []
        if buf:
            yield (self._batch(buf),)
