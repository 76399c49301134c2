"""`tf.data.Options` and `ThreadingOptions`, ``Dataset.with_options``/``options()``, the
cardinality constants, and `NumpyIterator` (the elements of a dataset as NumPy values).

flowgraph's input pipelines run each transformation in order on the session's threads,
so the options are recorded (and merged as TensorFlow merges them) but change nothing
about the elements produced: ``deterministic=False`` or a private thread pool are
permissions TensorFlow may use for speed, never a change of results.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> opts = tf.data.Options()
>>> opts.threading.private_threadpool_size = 4
>>> ds = tf.data.Dataset.range(3).with_options(opts)
>>> ds.options().threading.private_threadpool_size
4
>>> [int(x) for x in tf.data.NumpyIterator(ds)]
[0, 1, 2]
"""

from __future__ import annotations

from flowgraph.framework import errors

from .dataset import Dataset

__all__ = ["INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "NumpyIterator", "Options",
           "ThreadingOptions"]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class _OptionGroup:
    """Named options whose unset value is None; `merge` keeps the set ones of both."""

    _NAMES: tuple[str, ...] = ()
    _GROUPS: dict[str, type] = {}

    def __init__(self) -> None:
        for n in self._NAMES:
            object.__setattr__(self, n, None)
        for n, cls in self._GROUPS.items():
            object.__setattr__(self, n, cls())

    def __setattr__(self, name, value) -> None:
        if name not in self._NAMES and name not in self._GROUPS:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}; the "
                                 f"options are {', '.join(self._NAMES + tuple(self._GROUPS))}")
        object.__setattr__(self, name, value)

    def _merge_into(self, out, other) -> None:
        for n in self._NAMES:
            mine, theirs = getattr(self, n), getattr(other, n)
            if mine is not None and theirs is not None and mine != theirs:
                raise ValueError(f"Cannot merge incompatible values ({mine!r} and "
                                 f"{theirs!r}) of option: {n}")
            object.__setattr__(out, n, theirs if mine is None else mine)
        for n in self._GROUPS:
            getattr(self, n)._merge_into(getattr(out, n), getattr(other, n))

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({vars(self)})"


class ThreadingOptions(_OptionGroup):
    """``max_intra_op_parallelism`` and ``private_threadpool_size`` of a pipeline."""

    _NAMES = ("max_intra_op_parallelism", "private_threadpool_size")


class _OptimizationOptions(_OptionGroup):
    _NAMES = ("apply_default_optimizations", "filter_fusion", "map_and_batch_fusion",
              "map_and_filter_fusion", "map_fusion", "map_parallelization", "noop_elimination",
              "parallel_batch", "shuffle_and_repeat_fusion", "inject_prefetch")


class _DistributeOptions(_OptionGroup):
    _NAMES = ("auto_shard_policy", "num_devices")


class _AutotuneOptions(_OptionGroup):
    _NAMES = ("enabled", "cpu_budget", "ram_budget", "autotune_algorithm")


class Options(_OptionGroup):
    """Options of an input pipeline (`Dataset.with_options`).

    Attributes: ``deterministic`` (``experimental_deterministic`` is its old name),
    ``experimental_slack``, ``experimental_external_state_policy``,
    ``experimental_symbolic_checkpoint``, ``experimental_warm_start``, and the groups
    ``threading`` (`ThreadingOptions`; ``experimental_threading`` is its old name),
    ``experimental_optimization``, ``experimental_distribute`` and ``autotune``.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> a, b = tf.data.Options(), tf.data.Options()
    >>> a.deterministic, b.experimental_slack = False, True
    >>> merged = a.merge(b)
    >>> merged.deterministic, merged.experimental_slack
    (False, True)
    """

    _NAMES = ("deterministic", "experimental_slack", "experimental_external_state_policy",
              "experimental_symbolic_checkpoint", "experimental_warm_start")
    _GROUPS = {"threading": ThreadingOptions, "experimental_optimization": _OptimizationOptions,
               "experimental_distribute": _DistributeOptions, "autotune": _AutotuneOptions}
    _ALIASES = {"experimental_deterministic": "deterministic",
                "experimental_threading": "threading"}

    def __getattr__(self, name):
        if name in Options._ALIASES:
            return getattr(self, Options._ALIASES[name])
        raise AttributeError(f"Options has no option {name!r}")

    def __setattr__(self, name, value) -> None:
        super().__setattr__(Options._ALIASES.get(name, name), value)

    def merge(self, options: Options) -> Options:
        """A new Options with the set values of both; a value set differently in each is a
        ValueError."""
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge expects tf.data.Options, got "
                            f"{type(options).__name__}")
        out = Options()
        self._merge_into(out, options)
        return out


class _OptionsDataset(Dataset):
    """``dataset.with_options(options)``: the same elements, with options attached."""

    def __init__(self, input_dataset: Dataset, options: Options) -> None:
        if not isinstance(options, Options):
            raise TypeError(f"with_options expects tf.data.Options, got "
                            f"{type(options).__name__}")
        self._input = input_dataset
        self._structure = input_dataset._structure
        self._options = _dataset_options(input_dataset).merge(options)

    def _inputs(self):
        return [self._input]

    def _iter(self, rc):
        return self._input._iter(rc)


def _dataset_options(dataset: Dataset) -> Options:
    """The options of `dataset`: those attached along its chain of inputs, merged."""
    out = Options()
    stack, seen = [dataset], set()
    while stack:
        ds = stack.pop()
        if id(ds) in seen:
            continue
        seen.add(id(ds))
        if isinstance(ds, _OptionsDataset):
            out = out.merge(ds._options)
        else:
            stack.extend(ds._inputs())
    return out


def with_options(self: Dataset, options: Options) -> Dataset:
    """A dataset with the same elements and `options` (merged with any set upstream).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> opts = tf.data.Options()
    >>> opts.experimental_deterministic = False
    >>> tf.data.Dataset.range(2).with_options(opts).options().deterministic
    False
    """
    return _OptionsDataset(self, options)


def options(self: Dataset) -> Options:
    """The options of this dataset (`with_options`), a fresh `Options` when none."""
    return _dataset_options(self)


class NumpyIterator:
    """Iterate over a dataset's elements as NumPy values (nested like the elements),
    running the dataset in a graph and session of its own.

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2]})
    >>> [int(e["a"]) for e in tf.data.NumpyIterator(ds)]
    [1, 2]
    """

    def __init__(self, dataset: Dataset) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"NumpyIterator expects a tf.data.Dataset, got "
                            f"{type(dataset).__name__}")
        self._dataset = dataset
        self._session = None
        self._next = None

    def _start(self) -> None:
        from flowgraph.framework.graph import Graph
        from flowgraph.runtime.session import Session

        from .iterator import make_one_shot_iterator

        graph = Graph()
        with graph.as_default():
            self._next = make_one_shot_iterator(self._dataset).get_next()
        self._session = Session(graph=graph)

    def __iter__(self):
        return self

    def __next__(self):
        if self._session is None:
            self._start()
        try:
            return self._session.run(self._next)
        except errors.OutOfRangeError:
            self._session.close()
            raise StopIteration from None

    def __repr__(self) -> str:
        return f"NumpyIterator(iterator={self._dataset!r})"
