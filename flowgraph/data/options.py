"""`tf.data.Options` and its option groups, ``Dataset.with_options``/``options()``, the
cardinality constants, and `NumpyIterator` (the elements of a dataset as NumPy values).

State it keeps
--------------
An options object holds one value per option, None while unset (TensorFlow's meaning:
"the default"), and one object per option group (``threading``, ``autotune``, ...).
Every option is a typed class attribute: assigning a value of another type (``1`` for
a bool, ``None`` after all) raises TensorFlow's TypeError, an unknown name an
AttributeError. `Options.merge` (and every ``with_options`` down a pipeline) keeps the
options set on either side; where both set one, the later value wins and a warning
names the change, as in TensorFlow 2 (a value equal to the option's default, such as
``auto_shard_policy=AUTO``, counts as unset and never overrides).

What acts in flowgraph
----------------------
The options of the dataset an iterator is made from apply to its whole pipeline:

* ``deterministic = False``: a parallel ``map`` hands on whichever of its in-flight
  elements is finished first, instead of waiting for the oldest;
* ``threading.private_threadpool_size = n``: a parallel ``map`` runs at most ``n``
  function calls at once (``num_parallel_calls`` stays the number of elements in
  flight).

The others are recorded and merged only: they are hints that TensorFlow's runtime may
use for speed (graph rewrites, autotuning, slack, thread limits inside functions,
checkpoint policies), and none of them changes the elements a pipeline produces.

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

import collections
import concurrent.futures
import enum
import logging

from flowgraph.framework import errors

from .dataset import Dataset

__all__ = ["INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy",
           "AutotuneAlgorithm", "AutotuneOptions", "DistributeOptions", "ExternalStatePolicy",
           "NumpyIterator", "OptimizationOptions", "Options", "ThreadingOptions"]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

_log = logging.getLogger("tensorflow")


# -- enums ------------------------------------------------------------------------------
class AutoShardPolicy(enum.IntEnum):
    """How a distributed input pipeline is split between workers."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class AutotuneAlgorithm(enum.Enum):
    """The algorithm tf.data's autotuner uses."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ExternalStatePolicy(enum.Enum):
    """What saving a pipeline with external state (e.g. a stateful function) does."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


# -- typed options ----------------------------------------------------------------------
class _Option:
    """One option: a class attribute whose instance value is type-checked on assignment.

    ``ty`` is a type, or a zero-argument callable naming an option group class (so a
    group can be declared before the class it holds exists)."""

    def __init__(self, ty, doc: str, default=None, group: bool = False) -> None:
        self._ty, self._default, self.group = ty, default, group
        self.__doc__ = doc

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    @property
    def ty(self) -> type:
        return self._ty() if self.group else self._ty

    def default(self):
        return self.ty() if self.group else self._default

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj._values[self.name]

    def __set__(self, obj, value) -> None:
        if not isinstance(value, self.ty):
            raise TypeError(f'Property "{self.name}" must be of type {self.ty}, got: {value} '
                            f'(type: {type(value)})')
        obj._values[self.name] = value


class _OptionGroup:
    """Named options whose unset value is None; `merge` keeps the set ones of both."""

    _ALIASES: dict[str, str] = {}

    @classmethod
    def _options(cls) -> dict[str, _Option]:
        out = {}
        for klass in reversed(cls.__mro__):
            out.update({k: v for k, v in vars(klass).items() if isinstance(v, _Option)})
        return out

    def __init__(self) -> None:
        object.__setattr__(self, "_values",
                           {n: o.default() for n, o in self._options().items()})

    def __setattr__(self, name, value) -> None:
        name = self._ALIASES.get(name, name)
        if name not in self._values:
            raise AttributeError(
                f"Cannot set the property {name} on {type(self).__name__}: it has no option "
                f"of that name; the options are {', '.join(sorted(self._values))}")
        object.__setattr__(self, name, value)

    def _merge_into(self, out, other) -> None:
        for name, opt in self._options().items():
            mine, theirs = self._values[name], other._values[name]
            if opt.group:
                mine._merge_into(out._values[name], theirs)
                continue
            if theirs is None or theirs == opt.default():  # unset: keeps mine (as TF)
                out._values[name] = mine
                continue
            if mine is not None and mine != theirs:
                _log.warning("Changing the value of option %s from %r to %r.", name, mine,
                             theirs)
            out._values[name] = theirs

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._values == other._values

    __hash__ = None  # mutable, as TensorFlow's

    def __repr__(self) -> str:
        set_ = ", ".join(f"{n}={v!r}" for n, v in self._values.items()
                         if v is not None and not isinstance(v, _OptionGroup))
        groups = ", ".join(f"{n}={v!r}" for n, v in self._values.items()
                           if isinstance(v, _OptionGroup) and v != type(v)())
        return f"{type(self).__name__}({', '.join(p for p in (set_, groups) if p)})"


def _bool(doc: str) -> _Option:
    return _Option(bool, doc + " If None, TensorFlow's default applies.")


def _int(doc: str) -> _Option:
    return _Option(int, doc)


class ThreadingOptions(_OptionGroup):
    """Thread use of an input pipeline (``options.threading``).

    Example
    -------
    >>> import flowgraph as tf
    >>> import flowgraph.data
    >>> t = tf.data.ThreadingOptions()
    >>> t.private_threadpool_size = 2
    >>> t.private_threadpool_size, t.max_intra_op_parallelism
    (2, None)
    """

    max_intra_op_parallelism = _int(
        "The most threads one op of the pipeline's functions may use (recorded only).")
    private_threadpool_size = _int(
        "A private pool of this many threads for the pipeline: in flowgraph, the most "
        "calls a parallel map runs at once. Unset or not positive: no limit.")


class OptimizationOptions(_OptionGroup):
    """Graph rewrites TensorFlow may apply to a pipeline (``experimental_optimization``).

    flowgraph records them; its pipelines run the transformations as written, which
    gives the elements every rewrite is required to give.
    """

    apply_default_optimizations = _bool("Whether to apply the default rewrites.")
    filter_fusion = _bool("Fuse consecutive filters.")
    filter_parallelization = _bool("Run filter predicates in parallel.")
    inject_prefetch = _bool("Add a prefetch after the last asynchronous transformation.")
    map_and_batch_fusion = _bool("Fuse a map followed by a batch.")
    map_and_filter_fusion = _bool("Fuse a map followed by a filter.")
    map_fusion = _bool("Fuse consecutive maps.")
    map_parallelization = _bool("Run stateless map functions in parallel.")
    noop_elimination = _bool("Remove transformations that do nothing.")
    parallel_batch = _bool("Copy batch elements in parallel.")
    shuffle_and_repeat_fusion = _bool("Fuse a shuffle followed by a repeat.")


class DistributeOptions(_OptionGroup):
    """How a distribution strategy splits the pipeline (``experimental_distribute``)."""

    auto_shard_policy = _Option(AutoShardPolicy, "How the input is sharded between workers.",
                                default=AutoShardPolicy.AUTO)
    num_devices = _int("The number of devices the pipeline feeds.")


class AutotuneOptions(_OptionGroup):
    """TensorFlow's autotuner (``options.autotune``; recorded only)."""

    autotune_algorithm = _Option(AutotuneAlgorithm, "The autotuning algorithm.")
    cpu_budget = _int("The CPU cores the autotuner may plan for.")
    enabled = _bool("Whether to autotune AUTOTUNE parameters.")
    ram_budget = _int("The bytes of memory the autotuner may plan for.")


class Options(_OptionGroup):
    """Options of an input pipeline (`Dataset.with_options`).

    Each option is None until set; the groups ``threading`` (`ThreadingOptions`),
    ``experimental_optimization`` (`OptimizationOptions`), ``experimental_distribute``
    (`DistributeOptions`) and ``autotune`` (`AutotuneOptions`) hold more.
    ``experimental_deterministic`` and ``experimental_threading`` are the old names of
    ``deterministic`` and ``threading``. See the module docstring for the options that
    act in flowgraph.

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

    autotune = _Option(lambda: AutotuneOptions, "Autotuning options.", group=True)
    deterministic = _bool("Whether elements come in a deterministic order (True when None); "
                          "False lets a parallel map hand on finished elements first.")
    experimental_distribute = _Option(lambda: DistributeOptions, "Distribution options.",
                                      group=True)
    experimental_external_state_policy = _Option(
        ExternalStatePolicy, "What saving a pipeline with external state does.")
    experimental_optimization = _Option(lambda: OptimizationOptions,
                                        "Graph rewrite options.", group=True)
    experimental_slack = _bool("Whether prefetching leaves slack for the consumer.")
    experimental_symbolic_checkpoint = _bool("Whether checkpoints record positions only.")
    experimental_warm_start = _bool("Whether background threads start at iterator creation.")
    threading = _Option(lambda: ThreadingOptions, "Threading options.", group=True)
    _ALIASES = {"experimental_deterministic": "deterministic",
                "experimental_threading": "threading"}

    experimental_deterministic = property(
        lambda self: self.deterministic,
        lambda self, value: setattr(self, "deterministic", value),
        doc="The old name of `deterministic`.")
    experimental_threading = property(
        lambda self: self.threading,
        lambda self, value: setattr(self, "threading", value),
        doc="The old name of `threading`.")

    def merge(self, options: Options) -> Options:
        """A new Options with the set values of both; where both set an option, the value
        of `options` wins (with a warning naming the change) unless it is the option's
        default."""
        if not isinstance(options, Options):
            raise TypeError(f"Could not merge incompatible options of type {type(options)} "
                            f"and {type(self)}.")
        out = Options()
        self._merge_into(out, options)
        return out


# -- what the options do in a pipeline ------------------------------------------------
def parallel_map_options(rc, parallel: int, deterministic: bool | None = None
                         ) -> tuple[bool, int]:
    """A parallel map's order and threads under the pipeline's tf.data.Options: ordered
    unless the map's `deterministic` (or, when None, the options') is False; at most
    ``threading.private_threadpool_size`` threads when that is positive."""
    opts = rc.options
    if opts is None:
        return deterministic is not False, parallel
    cap = opts.threading.private_threadpool_size
    workers = min(parallel, cap) if cap is not None and cap > 0 else parallel
    if deterministic is None:
        deterministic = opts.deterministic
    return deterministic is not False, workers


def take_next(pending: collections.deque, ordered: bool):
    """The next future to hand on: the oldest, or (unordered) the oldest finished one,
    waiting for the first to finish when none is."""
    if not ordered:
        done = next((f for f in pending if f.done()), None)
        if done is None:
            concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            done = next(f for f in pending if f.done())
        pending.remove(done)
        return done
    return pending.popleft()


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

    def next(self):
        """The next element (``next(iterator)``)."""
        return self.__next__()

    def __repr__(self) -> str:
        return f"NumpyIterator(iterator={self._dataset!r})"
