"""`tf.estimator.inputs`: input functions over in-memory NumPy arrays and pandas frames.

`numpy_input_fn` / `pandas_input_fn` return an ``input_fn`` that builds one
``NumpyBatchSource`` op: a stateful, input-less op whose CPU kernel owns a cursor over
the arrays (one per session, like a one-shot iterator) and emits the next batch of every
column in one call. Batches run across epoch boundaries exactly as TF's queue-fed
version does (with 5 rows, batch 2 and 2 epochs: ``[0 1] [2 3] [4 0] [1 2] [3 4]``); only
the very last batch may be smaller, and the op raises `OutOfRangeError` once
`num_epochs` are consumed, which ends `evaluate`/`predict` and stops `train`. With
``shuffle=True`` each epoch is a fresh permutation drawn from the op's seeds (so
``RunConfig(tf_random_seed=...)`` makes the order reproducible). There are no feeding
threads: a step costs one kernel call and one fancy-index per column.

The arrays stay in this process (the op refers to them by a key, and serialized graphs
do not carry them), as with TF's feeding functions.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> input_fn = numpy_input_fn({"x": np.arange(5.0)}, np.arange(5), batch_size=2,
...                           shuffle=False)
>>> with tf.Graph().as_default():
...     features, labels = input_fn()
...     with tf.Session() as sess:
...         print(sess.run(labels), sess.run(labels), sess.run(features["x"]))
[0 1] [2 3] [4.]
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.graph import get_default_graph, get_seed, name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["numpy_input_fn", "pandas_input_fn"]

_TARGET_KEY = "__target_key__"
_DIRECT_KEY = "__direct_np_input__"

# key -> tuple of arrays; an entry lives as long as the graph holding its op.
_SOURCES: dict[str, tuple] = {}
_keys = itertools.count()


def _source_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["dtypes"]]


@register_op("NumpyBatchSource", attrs={"key": "", "dtypes": [], "shapes": [],
                                        "batch_size": 1, "num_epochs": -1, "shuffle": False,
                                        "seed": 0, "seed2": 0},
             num_outputs=lambda op: len(op.attrs["dtypes"]), dtype_fn=_source_dtypes,
             stateful=True)
def _numpy_batch_source_shape(op):
    return [TensorShape([None, *shape]) for shape in op.attrs["shapes"]]


not_differentiable("NumpyBatchSource")


@cpu_kernel("NumpyBatchSource")
class _NumpyBatchSource:
    """Next batch of every column; a cursor over an endless (or `num_epochs`-long)
    stream of row indices, one permutation per epoch when shuffling."""

    def __init__(self, ctx, *, key, dtypes, shapes, batch_size, num_epochs, shuffle, seed,
                 seed2):
        if key not in _SOURCES:
            raise errors.FailedPreconditionError(
                None, None, f"NumpyBatchSource {ctx.op.name}: its arrays are gone (the graph "
                f"was serialized or rebuilt in another process); call the input_fn again.")
        self._arrays = _SOURCES[key]
        self._n = len(self._arrays[0])
        self._batch = batch_size
        self._epochs_left = None if num_epochs < 0 else num_epochs
        self._rng = None
        if shuffle:
            from flowgraph.backends.cpu.kernels_random import make_generator

            self._rng = make_generator(seed, seed2)
        self._order = np.empty(0, np.int64)
        self._pos = 0
        self._lock = threading.Lock()

    def _next_indices(self) -> np.ndarray | None:
        parts, want = [], self._batch
        while want:
            if self._pos == len(self._order):
                if self._epochs_left == 0:
                    break
                if self._epochs_left is not None:
                    self._epochs_left -= 1
                self._order = (self._rng.permutation(self._n) if self._rng is not None
                               else np.arange(self._n))
                self._pos = 0
            take = self._order[self._pos:self._pos + want]
            self._pos += len(take)
            want -= len(take)
            parts.append(take)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def __call__(self):
        with self._lock:
            idx = self._next_indices()
        if idx is None:
            raise errors.OutOfRangeError(None, None, "End of numpy input (all epochs read).")
        if self._rng is None and idx[-1] - idx[0] == len(idx) - 1:
            idx = slice(int(idx[0]), int(idx[-1]) + 1)  # sequential: a view, no copy
        out = tuple(a[idx] for a in self._arrays)
        return out if len(out) > 1 else out[0]


def _storable(array) -> np.ndarray:
    array = np.asarray(array)
    if array.ndim == 0:
        raise ValueError("numpy_input_fn needs arrays with a batch dimension; got a scalar")
    if array.dtype.kind in "OUS":  # strings: object arrays of bytes, as tf.string holds
        array = np.array([v.encode() if isinstance(v, str) else v for v in array.ravel()],
                         dtype=object).reshape(array.shape)
    return np.ascontiguousarray(array)


def _batch_source(columns: dict, batch_size: int, num_epochs, shuffle: bool, name: str):
    """Build the source op for `columns` (name -> array); return name -> Tensor."""
    graph = get_default_graph()
    key = f"numpy_source_{next(_keys)}"
    names = list(columns)
    arrays = tuple(_storable(columns[n]) for n in names)
    _SOURCES[key] = arrays
    weakref.finalize(graph, _SOURCES.pop, key, None)
    seed, seed2 = get_seed(None)
    attrs = {
        "key": key,
        "dtypes": [_dtype_name(a) for a in arrays],
        "shapes": [list(a.shape[1:]) for a in arrays],
        "batch_size": int(batch_size),
        "num_epochs": -1 if num_epochs is None else int(num_epochs),
        "shuffle": bool(shuffle), "seed": seed or 0, "seed2": seed2 or 0,
    }
    with name_scope(name):
        op = graph.create_op("NumpyBatchSource", [], attrs, name="source")
    return dict(zip(names, op.outputs))


def _dtype_name(array: np.ndarray) -> str:
    return "string" if array.dtype == object else _dtypes.as_dtype(array.dtype).name


def _check_common(batch_size, num_epochs, shuffle) -> None:
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is "
                         f"recommended to set it as True for training); got {shuffle}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
    if num_epochs is not None and (not isinstance(num_epochs, (int, np.integer))
                                   or num_epochs <= 0):
        raise ValueError(f"num_epochs must be None (repeat forever) or a positive integer; "
                         f"got {num_epochs!r}")


def _as_columns(x, what: str) -> dict:
    if isinstance(x, dict):
        if not x:
            raise ValueError(f"{what} cannot be an empty dict")
        return {k: np.asarray(v) for k, v in sorted(x.items(), key=lambda kv: kv[0])}
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError(f"{what} cannot be an empty array")
        return {_DIRECT_KEY: x}
    raise TypeError(f"{what} must be a dict or array; got {type(x).__name__}")


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn feeding NumPy arrays in batches: ``(features, labels)``.

    Parameters
    ----------
    x : np.ndarray or dict of np.ndarray
        Features; an array gives a features Tensor, a dict a dict of Tensors.
    y : np.ndarray or dict of np.ndarray, optional
        Labels; without them the input_fn returns features only.
    batch_size : int, default 128
    num_epochs : int or None, default 1
        None repeats forever.
    shuffle : bool
        Required (no default, as in TF).
    queue_capacity, num_threads : int
        Accepted for compatibility; there is no queue (see the module docstring).

    Example
    -------
    >>> numpy_input_fn(np.zeros((3, 2)), shuffle=None)
    Traceback (most recent call last):
    ...
    ValueError: shuffle must be provided and explicitly set as boolean (it is recommended \
to set it as True for training); got None
    """
    _check_common(batch_size, num_epochs, shuffle)
    if num_threads is not None and num_threads <= 0:
        raise ValueError(f"num_threads must be positive; got {num_threads}")
    if queue_capacity is not None and queue_capacity <= 0:
        raise ValueError(f"queue_capacity must be positive; got {queue_capacity}")
    features = _as_columns(x, "x")
    if isinstance(y, np.ndarray):
        if y.size == 0:
            raise ValueError("y cannot be an empty array")
        labels = {_TARGET_KEY: y}
    elif isinstance(y, dict) and not y:
        raise ValueError("y cannot be empty dict, use None instead.")
    else:
        labels = None if y is None else _as_columns(y, "y")
    if labels is not None:
        dup = sorted(set(features) & set(labels))
        if dup:
            raise ValueError(f"{len(dup)} duplicate keys are found in both x and y: {dup}")
        x_shapes = {k: v.shape for k, v in features.items()}
        lengths = {len(v) for v in features.values()} | {len(v) for v in labels.values()}
        if len(lengths) > 1:
            y_shapes = {k: v.shape for k, v in labels.items()}
            raise ValueError(f"Length of tensors in x and y is mismatched. All elements in x "
                             f"and y must have the same length.\nShapes in x: {x_shapes}\n"
                             f"Shapes in y: {y_shapes}\n")
    elif len({len(v) for v in features.values()}) > 1:
        raise ValueError(f"All arrays in x must have the same length; got shapes "
                         f"{ {k: v.shape for k, v in features.items()} }")

    def input_fn():
        columns = dict(features)
        if labels is not None:
            columns.update(labels)
        tensors = _batch_source(columns, batch_size, num_epochs, shuffle, "numpy_input")
        feats = {k: tensors[k] for k in features}
        if _DIRECT_KEY in feats:
            feats = feats[_DIRECT_KEY]
        if labels is None:
            return feats
        labs = {k: tensors[k] for k in labels}
        if _TARGET_KEY in labs:
            labs = labs[_TARGET_KEY]
        return feats, labs

    return input_fn


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("pandas_input_fn needs pandas, which is not installed; install it "
                          "with `pip install pandas`, or use numpy_input_fn.") from None
    return pandas


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                    num_threads=1, target_column="target"):
    """An input_fn feeding a pandas DataFrame in batches: ``(features dict, labels)``.

    Features are the DataFrame's columns; `y` (a Series, or a DataFrame for several label
    columns) must have the same index as `x`.

    Example
    -------
    >>> import pandas as pd, flowgraph as tf  # doctest: +SKIP
    >>> df = pd.DataFrame({"a": [1.0, 2.0, 3.0]})  # doctest: +SKIP
    >>> input_fn = pandas_input_fn(df, pd.Series([0, 1, 0]), batch_size=3,
    ...                            shuffle=False)  # doctest: +SKIP
    >>> with tf.Graph().as_default():  # doctest: +SKIP
    ...     features, labels = input_fn()
    ...     print(sorted(features), labels.shape.as_list())
    ['a'] [None]
    """
    pd = _pandas()
    _check_common(batch_size, num_epochs, shuffle)
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    if not isinstance(x, pd.DataFrame):
        raise TypeError(f"x must be a pandas DataFrame; got {type(x).__name__}")
    features = {str(c): x[c].to_numpy() for c in x.columns}
    labels = None
    if y is not None:
        if target_column in x.columns:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame "
                             f"already has a column with that name: {list(x.columns)}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\n"
                             f"Index for y: {y.index}\n")
        if isinstance(y, pd.DataFrame):
            labels = {str(c): y[c].to_numpy() for c in y.columns}
            dup = sorted(set(labels) & set(features))
            if dup:
                raise ValueError(f"Cannot use name(s) {dup} for target columns: DataFrame x "
                                 f"already has columns with those names.")
        else:
            labels = {_TARGET_KEY: np.asarray(y)}
    if not features:
        raise ValueError("x cannot be a DataFrame without columns")
    return numpy_input_fn(features, labels, batch_size=batch_size, num_epochs=num_epochs,
                          shuffle=shuffle, queue_capacity=queue_capacity,
                          num_threads=num_threads)
