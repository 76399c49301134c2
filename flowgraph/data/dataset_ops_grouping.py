"""Grouping and resampling for ``tf.data.experimental``: `Reducer` with
`group_by_reducer` (one reduced element per key), and `rejection_resample` (reshape
the class distribution of a dataset by rejecting elements).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> r = tf.data.experimental.Reducer(lambda k: np.int64(0), lambda s, x: s + x,
...                                  lambda s: s)
>>> ds = tf.data.Dataset.range(6).apply(tf.data.experimental.group_by_reducer(
...     lambda x: x % 2, r))
>>> [int(e[0]) for e in ds._make_pipeline([]).elements()]
[6, 9]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape

from .dataset import Dataset
from .dataset_ops_function import TracedFunction
from .dataset_ops_resample import resample_estimating_initial_dist, resample_with_initial_dist
from .dataset_ops_structure import ComponentSpec, describe, flatten

__all__ = ["Reducer", "group_by_reducer", "rejection_resample"]

_KEY = ComponentSpec(_dtypes.int64, TensorShape([]))


class Reducer:
    """How `group_by_reducer` folds the elements of one key: ``init_func(key)`` gives
    the initial state, ``reduce_func(state, element)`` the next state and
    ``finalize_func(state)`` the output element."""

    def __init__(self, init_func, reduce_func, finalize_func) -> None:
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


class GroupByReducerDataset(Dataset):
    """One element per distinct key, in the order keys first appear: the finalized
    fold of that key's elements."""

    def __init__(self, input_dataset: Dataset, key_func, reducer: Reducer) -> None:
        if not isinstance(reducer, Reducer):
            raise TypeError(f"group_by_reducer expects a tf.data.experimental.Reducer, got "
                            f"{type(reducer).__name__}")
        self._input = input_dataset
        self._key_fn = TracedFunction(key_func, input_dataset._structure, "key_func")
        out = self._key_fn.output_structure
        if not isinstance(out, ComponentSpec) or out.dtype != _dtypes.int64 or \
                out.shape.ndims != 0:
            types = out.dtype if isinstance(out, ComponentSpec) else describe(out)
            shapes = out.shape if isinstance(out, ComponentSpec) else "?"
            raise ValueError(
                "Invalid `key_func`. Expected `key_func` to return a scalar tf.int64 "
                f"tensor, but instead `key_func` has output types={types!r} and "
                f"shapes={shapes}.")
        self._init_fn = TracedFunction(reducer.init_func, _KEY, "init_func")
        state_spec = self._init_fn.output_structure
        self._reduce_fn = TracedFunction(lambda state, element: reducer.reduce_func(
            state, element), (state_spec, input_dataset._structure), "reduce_func")
        new_state = self._reduce_fn.output_structure
        if [s.dtype for s in flatten(new_state)] != [s.dtype for s in flatten(state_spec)]:
            raise TypeError(f"group_by_reducer: reduce_func returns a state "
                            f"{describe(new_state)}, but init_func's state is "
                            f"{describe(state_spec)}; their structures and dtypes must match")
        self._final_fn = TracedFunction(reducer.finalize_func, state_spec, "finalize_func")
        self._structure = self._final_fn.output_structure

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        states: dict = {}
        for elem in self._input._iter(rc):
            key = int(self._key_fn.run(rc, elem)[0])
            state = states.get(key)
            if state is None:
                state = self._init_fn.run(rc, [np.int64(key)])
            states[key] = self._reduce_fn.run(rc, list(state) + list(elem))
        for state in states.values():
            yield tuple(self._final_fn.run(rc, state))


def group_by_reducer(key_func, reducer):
    """Group elements by ``key_func(element)`` (a scalar int64) and fold each group with
    `reducer`; one output element per key. For `Dataset.apply`."""

    def apply(dataset):
        return GroupByReducerDataset(dataset, key_func, reducer)

    return apply


# -- rejection_resample ------------------------------------------------------------------------
def _distribution(value, what: str):
    if value is None:
        return None
    if isinstance(value, Tensor):
        value = constant_value(value)
        if value is None:
            raise ValueError(f"rejection_resample: {what} must be a constant distribution")
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or np.any(arr < 0) or abs(arr.sum() - 1.0) > 1e-5:
        raise ValueError(f"rejection_resample: {what} must be a 1-D probability vector "
                         f"summing to 1, got {arr.tolist()}")
    return arr


def _check_resample_arguments(dataset, class_func, target_dist, initial_dist) -> None:
    out = TracedFunction(class_func, dataset._structure, "class_func").output_structure
    if not isinstance(out, ComponentSpec) or out.dtype not in (
            _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.int8):
        found = out.dtype.name if isinstance(out, ComponentSpec) else describe(out)
        raise TypeError(
            "Value passed to parameter 'indices' has DataType "
            f"{found} not in list of allowed values: uint8, int8, int32, int64 "
            "(rejection_resample: class_func must return an integer class id)")
    target = _distribution(target_dist, "target_dist")
    initial = _distribution(initial_dist, "initial_dist")
    if initial is not None and initial.shape != target.shape:
        raise ValueError("rejection_resample: initial_dist and target_dist must have "
                         f"the same length, got {initial.size} and {target.size}")


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """Resample a dataset so its classes (``class_func(element)``, an integer) follow
    `target_dist`: elements ``(class, element)``. With `initial_dist` unknown it is
    estimated from the classes seen so far. The elements and random draws are
    TensorFlow's (see `dataset_ops_resample`). For `Dataset.apply`."""

    def apply(dataset):
        _check_resample_arguments(dataset, class_func, target_dist, initial_dist)
        if initial_dist is None:
            return resample_estimating_initial_dist(dataset, class_func, target_dist, seed)
        return resample_with_initial_dist(dataset, class_func, target_dist, initial_dist,
                                          seed)

    return apply
