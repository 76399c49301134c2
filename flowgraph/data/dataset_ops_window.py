"""Datasets of datasets: ``Dataset.window`` and ``tf.data.experimental.group_by_window``
(and `bucket_by_sequence_length`, built on it).

A window element is not a tensor: it is a `WindowSpec` leaf in the element structure,
whose value in the pipeline is the list of the window's component values. A function
that receives windows (``flat_map``/``interleave`` after ``window``, the `reduce_func`
of ``group_by_window``) is traced with a `WindowSource` dataset in place of each such
leaf; `TracedFunction.inner_context` puts a window's values where that source reads
them. A window dataset reaches the user's code only inside those functions, as in
TensorFlow 1.x programs::

    range(7).window(3, shift=2)        [0 1 2] [2 3 4] [4 5 6] [6]
        .flat_map(lambda w: w.batch(3))  -> [0 1 2], [2 3 4], [4 5 6], [6]

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(5).window(2).flat_map(lambda w: w.batch(2))
>>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.tensor_shape import TensorShape

from .dataset import Dataset
from .dataset_ops_function import TracedFunction
from .dataset_ops_structure import (
    ComponentSpec,
    describe,
    flatten,
    map_structure,
    pack_as,
    same_kind,
    scalar_param,
    static_int,
)

__all__ = ["BucketBySequenceLengthDataset", "GroupByWindowDataset", "WindowDataset",
           "WindowSource", "WindowSpec"]


class WindowSpec(ComponentSpec):
    """A leaf whose value is a window: the values of one component of several elements."""

    __slots__ = ()
    window = True

    def source(self) -> WindowSource:
        """The dataset a traced function receives for this leaf."""
        return WindowSource(self)

    def dataset_spec(self):
        """The leaf as TensorFlow describes it: a `DatasetSpec` of its component."""
        from flowgraph.ops.type_spec import TensorSpec

        from .dataset_spec import DatasetSpec

        return DatasetSpec(TensorSpec(self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"WindowSpec({self.dtype.name}, {self.shape})"


class WindowSource(Dataset):
    """The dataset a window function sees for one window leaf: it yields the values the
    surrounding node placed in the run context under this node."""

    window_source = True

    def __init__(self, spec: WindowSpec) -> None:
        self._structure = ComponentSpec(spec.dtype, spec.shape)

    def _iter(self, rc):
        for value in rc.values.get(self, ()):
            yield (value,)


def _windows_of(structure):
    return map_structure(lambda s: WindowSpec(s.dtype, s.shape), structure)


def _as_window_values(elements: list) -> tuple:
    """Flat element tuples -> one list of values per component."""
    return tuple(list(column) for column in zip(*elements)) if elements else ()


class WindowDataset(Dataset):
    """``dataset.window(size, shift, stride, drop_remainder)``: windows of `size`
    elements taken every `stride`-th, a new window every `shift` input elements."""

    def __init__(self, input_dataset, size, shift=None, stride=1,
                 drop_remainder=False) -> None:
        self._input = input_dataset
        self._size = static_int(scalar_param(size, _dtypes.int64, "size"))
        self._shift = (self._size if shift is None
                       else static_int(scalar_param(shift, _dtypes.int64, "shift")))
        self._stride = static_int(scalar_param(stride, _dtypes.int64, "stride"))
        for what, v in (("size", self._size), ("shift", self._shift),
                        ("stride", self._stride)):
            if v is None or v <= 0:
                raise ValueError(f"window: {what} must be a positive integer known when the "
                                 f"graph is built, got {v}")
        self._drop = bool(drop_remainder)
        self._structure = _windows_of(input_dataset._structure)
        self._ncomp = len(flatten(input_dataset._structure))

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        span = (self._size - 1) * self._stride + 1  # input elements one window covers
        buf: list = []
        start = 0  # input index of buf[0]
        next_start = 0
        for i, elem in enumerate(self._input._iter(rc)):
            buf.append(elem)
            while next_start + span - 1 == i:
                off = next_start - start
                yield _as_window_values(buf[off:off + span:self._stride])
                next_start += self._shift
            drop = min(next_start - start, len(buf))
            del buf[:drop]
            start += drop
        if self._drop:
            return
        while next_start - start < len(buf):
            off = next_start - start
            yield _as_window_values(buf[off:off + span:self._stride])
            next_start += self._shift


class GroupByWindowDataset(Dataset):
    """``group_by_window``: elements grouped by the int64 `key_func`; a full group (of
    `window_size`, or ``window_size_func(key)``) becomes the dataset
    ``reduce_func(key, window)``, whose elements are emitted; when the input ends, the
    groups left are reduced in increasing key order."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size=None,
                 window_size_func=None) -> None:
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified (group_by_window).")
        self._input = input_dataset
        self._key = TracedFunction(key_func, input_dataset._structure, "group_by_window")
        out = self._key.output_structure
        if (not isinstance(out, ComponentSpec) or out.dtype != _dtypes.int64
                or not out.shape.is_compatible_with(TensorShape([]))):
            raise ValueError(f"group_by_window: key_func must return a scalar tf.int64 "
                             f"tensor, but it returns {describe(out)}")
        key_spec = ComponentSpec(_dtypes.int64, TensorShape([]))
        self._size = None
        self._size_fn = None
        if window_size_func is not None:
            self._size_fn = TracedFunction(window_size_func, key_spec, "group_by_window")
        else:
            self._size = static_int(scalar_param(window_size, _dtypes.int64, "window_size"))
            if self._size is None or self._size <= 0:
                raise ValueError(f"group_by_window: window_size must be a positive integer, "
                                 f"got {window_size}")
        # As TensorFlow, `reduce_func` sees one dataset of whole elements: the windows of
        # a nested element's components are zipped back together.
        nested = not isinstance(input_dataset._structure, ComponentSpec)
        self._reduce = TracedFunction(
            (lambda key, windows: reduce_func(key, Dataset.zip(windows))) if nested
            else reduce_func, (key_spec, _windows_of(input_dataset._structure)),
            "group_by_window", expect_dataset=True)
        self._structure = self._reduce.output_structure

    def _inputs(self):
        return [self._input]

    def _window_size(self, rc, key: np.ndarray) -> int:
        if self._size_fn is None:
            return self._size
        size = int(self._size_fn.run(rc, (key,))[0])
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"group_by_window: window_size_func returned {size} for key "
                f"{int(key)}; window sizes must be positive")
        return size

    def _reduced(self, rc, key, elements):
        inner = self._reduce.dataset
        flat = (np.asarray(key, np.int64), *_as_window_values(elements))
        yield from inner._iter(self._reduce.inner_context(rc, flat))

    def _iter(self, rc):
        groups: dict = {}
        for elem in self._input._iter(rc):
            key = int(self._key.run(rc, elem)[0])
            group = groups.setdefault(key, [])
            group.append(elem)
            if len(group) >= self._window_size(rc, np.int64(key)):
                del groups[key]
                yield from self._reduced(rc, key, group)
        for key in sorted(groups):
            yield from self._reduced(rc, key, groups[key])


class BucketBySequenceLengthDataset(GroupByWindowDataset):
    """``bucket_by_sequence_length``: elements grouped by which interval of
    `bucket_boundaries` their length falls in, each group batched (padded) by its
    bucket's batch size; `group_by_window` with one prepared batching dataset per bucket.
    """

    def __init__(self, input_dataset, element_length_func, bucket_boundaries,
                 bucket_batch_sizes, padded_shapes=None, padding_values=None,
                 pad_to_bucket_boundary=False, no_padding=False,
                 drop_remainder=False) -> None:
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(
                f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                f"`len(bucket_batch_sizes)={len(sizes)}` and "
                f"`len(bucket_boundaries)={len(boundaries)}`.")
        if boundaries != sorted(boundaries):
            raise ValueError(f"bucket_by_sequence_length: bucket_boundaries must be sorted, "
                             f"got {boundaries}")
        self._input = input_dataset
        self._key = TracedFunction(element_length_func, input_dataset._structure,
                                   "bucket_by_sequence_length")
        out = self._key.output_structure
        if (not isinstance(out, ComponentSpec) or not out.dtype.is_integer
                or not out.shape.is_compatible_with(TensorShape([]))):
            raise ValueError(f"bucket_by_sequence_length: element_length_func must return a "
                             f"scalar integer tensor, but it returns {describe(out)}")
        self._boundaries, self._sizes = boundaries, sizes
        self._pad_to_boundary = bool(pad_to_bucket_boundary)
        self._size_fn = None
        self._size = None
        structure = input_dataset._structure
        self._sources = [WindowSource(s) for s in flatten(_windows_of(structure))]
        window = _pack_sources(structure, self._sources)
        self._buckets = []
        for b, size in enumerate(sizes):
            if no_padding:
                self._buckets.append(window.batch(size, drop_remainder))
                continue
            filler = boundaries[b] - 1 if pad_to_bucket_boundary and b < len(boundaries) \
                else None
            shapes = map_structure(lambda s, fill=filler: _fill_none(s, fill),
                                   structure if padded_shapes is None else padded_shapes)
            self._buckets.append(window.padded_batch(size, shapes, padding_values,
                                                     drop_remainder))
        # TensorFlow batches each bucket by a size (and pads to a boundary) looked up
        # from a tensor, so the batch dimension, and any dimension padded to a
        # boundary, are unknown in the element spec whatever the bucket
        self._structure = _unknown_batch(_relaxed([b._structure for b in self._buckets]))

    def _bucket(self, length: int) -> int:
        for b, bound in enumerate(self._boundaries):
            if length < bound:
                return b
        return len(self._boundaries)

    def _window_size(self, rc, key) -> int:
        return self._sizes[int(key)]

    def _tensors(self):
        # graph tensors the bucket batchings read (padding values given as tensors)
        return [t for b in self._buckets for t in b._captured()]

    def _reduced(self, rc, key, elements):
        if self._pad_to_boundary and key == len(self._boundaries):
            # as TensorFlow, checked when the last bucket's window is batched
            raise errors.InvalidArgumentError(
                None, None, "assertion failed: [When pad_to_bucket_boundary=True, elements "
                "must have length < max(bucket_boundaries).] [Condition x < y did not hold "
                f"element-wise:] [x = ] [{key}] [y = ] [{len(self._boundaries)}]")
        values = _as_window_values(elements)
        ctx = rc.child({**rc.values, **dict(zip(self._sources, values))})
        yield from self._buckets[key]._iter(ctx)

    def _iter(self, rc):
        groups: dict = {}
        for elem in self._input._iter(rc):
            key = self._bucket(int(self._key.run(rc, elem)[0]))
            group = groups.setdefault(key, [])
            group.append(elem)
            if len(group) >= self._sizes[key]:
                del groups[key]
                yield from self._reduced(rc, key, group)
        for key in sorted(groups):
            yield from self._reduced(rc, key, groups[key])


def _pack_sources(structure, sources):
    packed = pack_as(structure, sources)
    return packed if isinstance(packed, Dataset) else Dataset.zip(packed)


def _relaxed(structures):
    """The most specific structure every one of `structures` is compatible with."""
    leaves = [flatten(s) for s in structures]
    return pack_as(structures[0], [
        same_kind(specs[0], specs[0].dtype, _most_specific([x.shape for x in specs]))
        for specs in zip(*leaves)])


def _most_specific(shapes):
    out = shapes[0]
    for shape in shapes[1:]:
        out = out.most_specific_compatible_shape(shape)
    return out


def _unknown_batch(structure):
    def unknown(spec):
        if spec.shape.ndims is None or spec.shape.ndims == 0:
            return spec
        return same_kind(spec, spec.dtype, TensorShape([None, *spec.shape.as_list()[1:]]))
    return map_structure(unknown, structure)


def _fill_none(spec_or_shape, filler):
    shape = spec_or_shape.shape if isinstance(spec_or_shape, ComponentSpec) \
        else TensorShape(spec_or_shape)
    if shape.ndims is None:
        return shape
    return TensorShape([filler if d is None else d for d in shape.as_list()])
