"""`tf.estimator.inputs`: input functions over in-memory NumPy arrays and pandas frames.

`numpy_input_fn` / `pandas_input_fn` return an ``input_fn`` that builds one
``NumpyBatchSource`` op (declared in `flowgraph/ops/input_ops.py`): a stateful,
input-less op whose CPU kernel (`flowgraph/backends/cpu/kernels_input.py`) owns a cursor
over the arrays (one per session, like a one-shot iterator) and emits the next batch of every
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

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph, get_seed, name_scope
from flowgraph.ops.input_ops import register_arrays

__all__ = ["numpy_input_fn", "pandas_input_fn"]

_TARGET_KEY = "__target_key__"
_DIRECT_KEY = "__direct_np_input__"


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
    names = list(columns)
    arrays = tuple(_storable(columns[n]) for n in names)
    key = register_arrays(graph, arrays)
    # TF's shuffling queue takes the graph's next op seed; its FIFO queue takes none, so a
    # model built after an unshuffled input draws the same initial values as TF's
    seed, seed2 = get_seed(None) if shuffle else (None, None)
    attrs = {
        "key": key,
        # DTypes, not names: a GraphDef import (another task's copy of the graph) checks
        # that a list(type) attribute holds types.
        "dtypes": [_dtypes.as_dtype(_dtype_name(a)) for a in arrays],
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
    target_key = _TARGET_KEY
    while target_key in features:  # TF renames its label key rather than clash
        target_key += "_n"
    if isinstance(y, np.ndarray):
        if y.size == 0:
            raise ValueError("y cannot be an empty array")
        labels = {target_key: y}
    elif isinstance(y, dict) and not y:
        raise ValueError("y cannot be empty dict, use None instead.")
    else:
        labels = None if y is None else _as_columns(y, "y")
    if labels is not None:
        dup = sorted(set(features) & set(labels))
        if dup:
            raise ValueError(f"{len(dup)} duplicate keys are found in both x and y: "
                             f"{set(dup)}")
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
        if target_key in labs:
            labs = labs[target_key]
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
