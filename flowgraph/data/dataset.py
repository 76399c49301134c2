"""`tf.data.Dataset` (TensorFlow 1.15 / ``tf.compat.v1.data.Dataset`` semantics).

A `Dataset` is a Python-side description of an input pipeline: a chain of nodes, each
a transformation of its input datasets (`dataset_ops_sources`, `dataset_ops_transform`,
`dataset_ops_prefetch` hold the node classes). Nothing runs when a dataset is built,
except that the functions given to ``map``/``filter``/``interleave`` are traced once
into private graphs. A graph reaches the data through an iterator
(`flowgraph.data.iterator`): ``make_one_shot_iterator()`` or
``make_initializable_iterator()``, whose ``get_next()`` tensors yield one element per
``Session.run``.

Each node knows its element structure (`output_types`, `output_shapes`,
`output_classes`), the graph tensors it reads (`_tensors`: placeholders and constants
whose values the iterator's initializer passes in) and how to produce its elements
(``_iter(rc)``: a generator of flat tuples of NumPy arrays, see
`dataset_ops_function.RunContext`).

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4.0, 5.0, 6.0])).batch(2)
>>> ds.output_types
(tf.int32, tf.float32)
>>> nxt = ds.make_one_shot_iterator().get_next()
>>> with tf.Session() as sess:
...     print(sess.run(nxt))
(array([1, 2], dtype=int32), array([4., 5.], dtype=float32))
"""

from __future__ import annotations

from typing import Any

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor

from .dataset_ops_function import Pipeline, TracedFunction
from .dataset_ops_structure import component_class, map_structure

AUTOTUNE = -1



def _legacy(describe_leaf):
    """`describe_leaf` for a plain leaf; for a window leaf (an element that is itself a
    dataset, as `window` makes) its `DatasetSpec`, which TensorFlow's legacy
    ``output_types``/``output_shapes``/``output_classes`` all return."""
    def leaf(spec):
        if getattr(spec, "window", False):
            return spec.dataset_spec()
        return describe_leaf(spec)

    return leaf

class Dataset:
    """A (possibly infinite) sequence of elements, each a nested structure of tensors.

    Build one with a constructor (`from_tensor_slices`, `from_tensors`, `range`,
    `from_generator`, `zip`, `TextLineDataset`, ...) and chain transformations; read
    it in a graph through `make_one_shot_iterator` or `make_initializable_iterator`.
    """

    _structure: Any = None

    # -- the node protocol (subclasses) ----------------------------------------------
    def _inputs(self) -> list[Dataset]:
        """The datasets this one reads."""
        return []

    def _tensors(self) -> list[Tensor]:
        """The graph tensors this node itself reads (not its inputs')."""
        return []

    def _iter(self, rc):
        """A generator of elements: flat tuples of NumPy arrays of the declared dtypes."""
        raise NotImplementedError

    def _captured(self) -> list[Tensor]:
        """Every graph tensor of the whole pipeline, without repeats, in a stable order."""
        seen: dict = {}
        stack = [self]
        visited: set = set()
        while stack:
            ds = stack.pop()
            if id(ds) in visited:
                continue
            visited.add(id(ds))
            for t in ds._tensors():
                seen.setdefault(t, None)
            for fn in vars(ds).values():  # outer tensors its traced functions read
                for t in getattr(fn, "captured", ()) if isinstance(fn, TracedFunction) else ():
                    seen.setdefault(t, None)
            stack.extend(reversed(ds._inputs()))
        return list(seen)

    def _make_pipeline(self, values) -> Pipeline:
        """A fresh run of this dataset, the captured tensors taking `values`."""
        return Pipeline(self, dict(zip(self._captured(), values)))

    # -- element structure -------------------------------------------------------------
    @property
    def output_types(self):
        """The nested dtypes of an element (a window's `DatasetSpec`, as TensorFlow)."""
        return map_structure(_legacy(lambda s: s.dtype), self._structure)

    @property
    def output_shapes(self):
        """The nested static shapes of an element (unknown dimensions are None)."""
        return map_structure(_legacy(lambda s: s.shape), self._structure)

    @property
    def output_classes(self):
        """The nested Python classes of an element's components (`Tensor`, or
        `SparseTensor` for a sparse component)."""
        return map_structure(_legacy(component_class), self._structure)

    def __repr__(self) -> str:
        def shape(s):
            if s.shape.ndims is None:
                return "<unknown>"
            dims = ["?" if d is None else str(d) for d in s.shape.as_list()]
            return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

        shapes = repr(map_structure(shape, self._structure)).replace("'", "")
        types = repr(self.output_types)
        return f"<{type(self).__name__} shapes: {shapes}, types: {types}>"

    def __iter__(self):
        raise TypeError(
            "A tf.data.Dataset is not iterable in graph mode (TF1): create an iterator with "
            "dataset.make_one_shot_iterator() (or make_initializable_iterator()) and run "
            "its get_next() tensors in a tf.Session.")

    # -- iterators -----------------------------------------------------------------------
    def make_one_shot_iterator(self):
        """An iterator that runs through the dataset once, needing no initialization.

        The dataset may not depend on placeholders (use `make_initializable_iterator`).

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> x = tf.data.Dataset.range(2).make_one_shot_iterator().get_next()
        >>> with tf.Session() as sess:
        ...     print(sess.run(x), sess.run(x))
        0 1
        """
        return _iterator.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None):
        """An iterator whose ``initializer`` op (re)starts it, reading placeholders fed then.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> n = tf.placeholder(tf.int64, [])
        >>> it = tf.data.Dataset.range(n).make_initializable_iterator()
        >>> x = it.get_next()
        >>> with tf.Session() as sess:
        ...     sess.run(it.initializer, {n: 5})
        ...     print(sess.run(x), sess.run(x))
        0 1
        """
        return _iterator.make_initializable_iterator(self, shared_name)

    # -- constructors --------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """The slices of `tensors` along their first dimension.

        `tensors` is a tensor, NumPy array or list, or a tuple/dict nesting of them; every
        component must have the same first dimension.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0], [2.0]]}).output_shapes
        {'a': TensorShape([]), 'b': TensorShape([Dimension(1)])}
        """
        return _src.TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors) -> Dataset:
        """A dataset of one element, `tensors`.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> tf.data.Dataset.from_tensors([1, 2, 3]).output_shapes
        TensorShape([Dimension(3)])
        """
        return _src.TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None) -> Dataset:
        """The elements yielded by ``generator(*args)``, called anew for each epoch.

        `output_types` (and optionally `output_shapes`) give the element structure;
        every yielded value is converted to those dtypes and checked against the shapes.
        `args` are tensors or values whose NumPy values are passed to the generator.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> def gen():
        ...     yield from [(1, [1.0]), (2, [2.0, 3.0])]
        >>> ds = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32), ([], [None]))
        >>> ds.output_shapes
        (TensorShape([]), TensorShape([Dimension(None)]))
        """
        return _src.GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args) -> Dataset:
        """int64 values like Python's ``range(start, stop, step)``.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> tf.data.Dataset.range(1, 10, 3).output_types
        tf.int64
        """
        return _src.RangeDataset(*args)

    @staticmethod
    def zip(datasets) -> Dataset:
        """Elements combining the elements of a nested structure of datasets.

        Stops with the shortest dataset.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(5)
        >>> tf.data.Dataset.zip((a, b)).output_types
        (tf.int64, tf.int64)
        """
        return _tr.ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle: bool | None = None, seed: int | None = None):
        """The file names matching glob pattern(s) `file_pattern`, shuffled by default.

        The pattern is expanded when the iterator is initialized; no match is an
        `InvalidArgumentError`.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> tf.data.Dataset.list_files("/tmp/*.csv").output_types
        tf.string
        """
        return _src.ListFilesDataset(file_pattern, shuffle, seed)

    # -- transformations -------------------------------------------------------------------
    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements followed by `dataset`'s (same structure and dtypes)."""
        return _tr.ConcatenateDataset(self, dataset)

    def map(self, map_func, num_parallel_calls: int | None = None, deterministic=None,
            name: str | None = None) -> Dataset:
        """Apply `map_func` to each element.

        `map_func` receives the element's components as tensors (a tuple element is
        unpacked into arguments) and returns a nested structure of tensors; it is traced
        once into a private graph, so TensorFlow ops work inside it. With
        `num_parallel_calls` > 1 (or `AUTOTUNE`) several elements are processed at once
        by a thread pool; the order of elements is kept unless `deterministic` is false
        (None: the pipeline's ``tf.data.Options().deterministic``), which hands on
        finished elements first. `name` is accepted for TensorFlow's signature (a
        flowgraph dataset is not a graph op).

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> ds = tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) / 2)
        >>> ds.output_types
        tf.float32
        """
        del name
        return _tr.MapDataset(self, map_func, num_parallel_calls, deterministic)

    def flat_map(self, map_func) -> Dataset:
        """Map each element to a dataset (`map_func` returns one) and chain them."""
        return _tr.InterleaveDataset(self, map_func, 1, 1)

    def interleave(self, map_func, cycle_length: int = AUTOTUNE, block_length: int = 1,
                   num_parallel_calls: int | None = None) -> Dataset:
        """Map elements to datasets and interleave them.

        `cycle_length` input elements are open at once; `block_length` consecutive
        elements are taken from each in turn. The default `cycle_length`, AUTOTUNE, is
        the number of CPU cores this process may run on, as in TensorFlow (so the
        order of the elements then depends on the machine: pass it for a fixed order).

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> ds = tf.data.Dataset.range(1, 3).interleave(
        ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)
        >>> ds.output_types
        tf.int64
        """
        return _tr.InterleaveDataset(self, map_func, cycle_length, block_length)

    def filter(self, predicate) -> Dataset:
        """Keep the elements for which `predicate` (traced like a map function) is True."""
        return _tr.FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder: bool = False) -> Dataset:
        """Stack `batch_size` consecutive elements along a new first dimension.

        The last batch may be smaller unless `drop_remainder`; only then is the batch
        dimension of `output_shapes` known.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> tf.data.Dataset.range(10).batch(4).output_shapes
        TensorShape([Dimension(None)])
        >>> tf.data.Dataset.range(10).batch(4, drop_remainder=True).output_shapes
        TensorShape([Dimension(4)])
        """
        return _tr.BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder: bool = False) -> Dataset:
        """Batch elements of varying shapes, padding each to `padded_shapes`.

        A ``None`` (or -1) dimension pads to the longest element of the batch;
        `padding_values` (default 0 / empty string) fills the padding.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> ds = tf.data.Dataset.range(4).map(lambda x: tf.fill([x], x))
        >>> ds.padded_batch(2, [None]).output_shapes
        TensorShape([Dimension(None), Dimension(None)])
        """
        return _tr.PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                      drop_remainder)

    def unbatch(self) -> Dataset:
        """Split each element along its first dimension into several elements."""
        return _tr.UnbatchDataset(self)

    def shuffle(self, buffer_size, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None) -> Dataset:
        """Shuffle with a buffer of `buffer_size` elements.

        Seeds follow TensorFlow: the graph-level seed (`tf.set_random_seed`) and `seed`
        make the order reproducible; with `reshuffle_each_iteration` (default) each
        epoch of a following `repeat` has a different order.

        Example
        -------
        >>> import flowgraph as tf
        >>> import flowgraph.data
        >>> ds = tf.data.Dataset.range(5).shuffle(5, seed=1)
        >>> x = ds.make_one_shot_iterator().get_next()
        >>> with tf.Session() as sess:
        ...     print(sorted(int(sess.run(x)) for _ in range(5)))
        [0, 1, 2, 3, 4]
        """
        return _pf.ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None) -> Dataset:
        """Repeat the dataset `count` times (forever if None or -1)."""
        return _tr.RepeatDataset(self, count)

    def take(self, count) -> Dataset:
        """The first `count` elements (all of them if -1)."""
        return _tr.TakeDataset(self, count)

    def skip(self, count) -> Dataset:
        """All but the first `count` elements (e.g. a CSV header line)."""
        return _tr.SkipDataset(self, count)

    def shard(self, num_shards, index) -> Dataset:
        """Every `num_shards`-th element, starting at `index`."""
        return _tr.ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size) -> Dataset:
        """Produce up to `buffer_size` elements ahead on a background thread.

        Input processing then overlaps with the consumer's computation. `AUTOTUNE`
        (-1) picks a buffer size.
        """
        return _pf.PrefetchDataset(self, buffer_size)

    def cache(self, filename: str = "") -> Dataset:
        """Remember the elements of the first complete epoch and replay them afterwards.

        Without a `filename` the cache lives in memory for the life of the iterator. With
        one (a Python string), the complete epoch is also written there in TensorFlow's
        format (``filename.index``, ``filename.data-00000-of-00001``), and a cache already
        there, written by this program, an earlier one or TensorFlow, is read instead of
        the input.
        """
        return _tr.CacheDataset(self, filename)

    def apply(self, transformation_func) -> Dataset:
        """``transformation_func(self)``, which must return a Dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(
                f"apply(): the transformation must return a Dataset, got {type(out).__name__}")
        return out

    def window(self, size, shift=None, stride=1, drop_remainder: bool = False) -> Dataset:
        """Windows of `size` elements (every `stride`-th input element), a new one every
        `shift` elements (default `size`); each window is a dataset (per component of
        the element), to be consumed by ``flat_map``/``interleave``. The last windows
        may be shorter unless `drop_remainder`.

        Example
        -------
        >>> import flowgraph as tf
        >>> ds = tf.data.Dataset.range(6).window(3, shift=2, drop_remainder=True)
        >>> ds = ds.flat_map(lambda w: w.batch(3))
        >>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
        [[0, 1, 2], [2, 3, 4]]
        """
        return _win.WindowDataset(self, size, shift, stride, drop_remainder)

    def reduce(self, initial_state, reduce_func):
        """Tensors of `initial_state` folded over the elements with
        ``reduce_func(state, element)`` (see `flowgraph.data.iterator.reduce_dataset`)."""
        return _iterator.reduce_dataset(self, initial_state, reduce_func)

    def enumerate(self, start: int = 0) -> Dataset:
        """Elements ``(index, element)`` with an int64 index counting from `start`."""
        return Dataset.zip((Dataset.range(start, 2**62), self))

    # -- TF 2.x methods of the v1 Dataset: thin calls to the tf.data.experimental functions
    # (`name` is accepted for TF's signatures; the nodes carry no op names).
    @staticmethod
    def from_sparse_tensor_slices(sparse_tensor) -> Dataset:
        """The rows of a SparseTensor along its first dimension, each as a tuple
        ``(indices, values, dense_shape)`` of the row's entries (TF1's element form)."""
        return _src.SparseTensorSliceDataset(sparse_tensor)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None) -> Dataset:
        """`tf.data.experimental.sample_from_datasets` (`rerandomize_each_iteration`:
        the draws are the same at every iteration, as TF's default)."""
        if rerandomize_each_iteration:
            raise NotImplementedError(
                "Dataset.sample_from_datasets: rerandomize_each_iteration=True is not "
                "supported (each iteration draws the same choices)")
        return _exp.sample_from_datasets(datasets, weights, seed,
                                                  stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
        """`tf.data.experimental.choose_from_datasets`; by default (unlike that function)
        the dataset ends when the chosen dataset is exhausted, as TF's method."""
        return _exp.choose_from_datasets(datasets, choice_dataset,
                                                  stop_on_empty_dataset)

    @staticmethod
    def counter(start=0, step=1, dtype=_dtypes.int64, name=None) -> Dataset:
        """`tf.data.experimental.Counter`: `start`, ``start + step``, ... forever."""
        del name
        return _exp.Counter(start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None) -> Dataset:
        """`tf.data.experimental.RandomDataset`: endless pseudo-random int64 scalars."""
        del name
        if rerandomize_each_iteration:
            raise NotImplementedError(
                "Dataset.random: rerandomize_each_iteration=True is not supported (each "
                "iteration yields the same sequence)")
        return _exp.RandomDataset(seed)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None) -> Dataset:
        """`tf.data.experimental.group_by_window` applied to this dataset."""
        del name
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Dataset.group_by_window: exactly one of `window_size` and "
                             "`window_size_func` must be given")
        return self.apply(_exp.group_by_window(key_func, reduce_func, window_size,
                                                        window_size_func))

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None) -> Dataset:
        """`tf.data.experimental.bucket_by_sequence_length` applied to this dataset."""
        del name
        return self.apply(_exp.bucket_by_sequence_length(
            element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder))

    def scan(self, initial_state, scan_func, name=None) -> Dataset:
        """`tf.data.experimental.scan`: ``scan_func(state, element)`` returns
        ``(new_state, output_element)``."""
        del name
        return self.apply(_exp.scan(initial_state, scan_func))

    def unique(self, name=None) -> Dataset:
        """`tf.data.experimental.unique`: each distinct element once."""
        del name
        return self.apply(_exp.unique())

    def ignore_errors(self, log_warning=False, name=None) -> Dataset:
        """`tf.data.experimental.ignore_errors`: drop the elements whose computation
        fails."""
        del name
        return self.apply(_exp.ignore_errors(log_warning))

    def take_while(self, predicate, name=None) -> Dataset:
        """`tf.data.experimental.take_while`: the elements before the first for which
        `predicate` is False."""
        del name
        return self.apply(_exp.take_while(predicate))

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None,
                           name=None) -> Dataset:
        """`tf.data.experimental.rejection_resample` applied to this dataset: elements
        ``(class, element)`` whose classes follow `target_dist`."""
        del name
        return self.apply(_exp.rejection_resample(class_func, target_dist,
                                                           initial_dist, seed))

    def sparse_batch(self, batch_size, row_shape, name=None) -> Dataset:
        """`tf.data.experimental.dense_to_sparse_batch` applied to this dataset."""
        del name
        return self.apply(_exp.dense_to_sparse_batch(batch_size, row_shape))

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None) -> Dataset:
        """`tf.data.experimental.snapshot` applied to this dataset."""
        del name
        return self.apply(_exp.snapshot(path, compression, reader_func, shard_func))

    def rebatch(self, batch_size, drop_remainder=False, name=None) -> Dataset:
        """The elements (already batched) batched again by `batch_size`: as
        ``unbatch().batch(batch_size, drop_remainder)``."""
        del name
        if isinstance(batch_size, (list, tuple)) or getattr(
                getattr(batch_size, "shape", None), "ndims", 0):
            raise NotImplementedError(
                "Dataset.rebatch: a list of batch sizes is not supported; pass one "
                "batch size")
        return self.unbatch().batch(batch_size, drop_remainder)

    def cardinality(self):
        """`tf.data.experimental.cardinality` of this dataset: an int64 scalar tensor."""
        return _exp.cardinality(self)

    def get_single_element(self, name=None):
        """`tf.data.experimental.get_single_element` of this dataset: its one element's
        tensors."""
        del name
        return _exp.get_single_element(self)

    def map_with_legacy_function(self, map_func, num_parallel_calls=None,
                                 deterministic=None) -> Dataset:
        """``map`` (flowgraph traces every function one way, in graph mode)."""
        del deterministic
        return self.map(map_func, num_parallel_calls)

    def filter_with_legacy_function(self, predicate) -> Dataset:
        """``filter`` (flowgraph traces every function one way, in graph mode)."""
        return self.filter(predicate)

    def as_numpy_iterator(self):
        """Eager-only in TensorFlow: raises RuntimeError in graph mode (TF1)."""
        raise RuntimeError(
            "`tf.data.Dataset.as_numpy_iterator()` is only supported in eager mode; in graph "
            "mode (TF1) create an iterator with make_one_shot_iterator() and run its "
            "get_next() in a tf.Session.")


# -- the nodes and iterators ------------------------------------------------------------
# The nodes subclass Dataset (dataset_ops_sources, dataset_ops_transform,
# dataset_ops_prefetch) and the iterators take one (iterator), as do the
# tf.data.experimental functions (dataset_ops_experimental), so those modules import
# this one, which does not import them: the methods above reach them through these
# references, set by the `flowgraph.data` package once it has imported them
# (`_install_nodes`). Importing any flowgraph.data module runs the package first.
_src: Any = None
_tr: Any = None
_pf: Any = None
_iterator: Any = None
_win: Any = None
_exp: Any = None  # tf.data.experimental (the TF 2.x methods call its functions)


def _install_nodes(sources, transform, prefetch, iterator, window=None,
                   experimental=None) -> None:
    """Set the modules of the dataset nodes and of the iterators (by `flowgraph.data`)."""
    global _src, _tr, _pf, _iterator, _win, _exp
    _src, _tr, _pf, _iterator, _win = sources, transform, prefetch, iterator, window
    _exp = experimental
