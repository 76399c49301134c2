"""Declaration of ``NumpyBatchSource``, the op behind `tf.estimator.inputs.numpy_input_fn`,
and the table of the in-memory arrays it reads.

``NumpyBatchSource()`` has no inputs and one output per column: the next batch of rows
(``[None, *shape]``, dtypes from its ``dtypes`` attr). It is stateful: its kernel
(`flowgraph/backends/cpu/kernels_input.py`) keeps a cursor per session. The arrays
cannot be attributes (graphs serialize to JSON), so `register_arrays` keeps them while
the graph lives and the op carries their ``key``; a graph loaded elsewhere has none.

Example
-------
>>> import numpy as np, flowgraph as tf
>>> g = tf.Graph()
>>> key = register_arrays(g, (np.arange(3),))
>>> lookup_arrays(key)[0].tolist()
[0, 1, 2]
"""

from __future__ import annotations

import itertools
import threading
import weakref

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["lookup_arrays", "register_arrays"]


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


# key -> [arrays, number of live graphs whose ops read them].
_SOURCES: dict[str, list] = {}
# The keys of array sets still alive in the caller's hands: ids of the arrays -> (key,
# weak references to them). The same arrays get the same key for as long as they live.
_KEYS: dict[tuple, tuple] = {}
_lock = threading.RLock()  # a weak-reference callback may run while it is held


def register_arrays(graph, arrays: tuple) -> str:
    """Keep `arrays` while `graph` lives; returns the key for the op's ``key`` attr.

    The same array objects get the same key for as long as they live, whichever other
    graphs come and go in between: an Estimator builds the same graph on every `train`
    call (and an evaluation graph in between), and a stable key keeps it the same graph
    by content, so its serialized `.meta`, graph event and ``graph.pbtxt`` are cached.

    Example
    -------
    >>> import numpy as np, flowgraph as tf
    >>> x = np.zeros(2)
    >>> key = register_arrays(tf.Graph(), (x,))
    >>> key.startswith("numpy_source_"), register_arrays(tf.Graph(), (x,)) == key
    (True, True)
    """
    arrays = tuple(arrays)
    ids = tuple(map(id, arrays))
    with _lock:
        known = _KEYS.get(ids)
        if known is not None and all(ref() is a for ref, a in zip(known[1], arrays)):
            key = known[0]
        else:
            key = _new_key(ids, arrays)
        _SOURCES.setdefault(key, [arrays, 0])[1] += 1  # one more graph reads them
    weakref.finalize(graph, _release, key)
    return key


def _new_key(ids: tuple, arrays: tuple) -> str:
    """A key no live array set holds (the smallest free number), remembered for
    `arrays` while they all live (arrays without weak references get none)."""
    taken = set(_SOURCES) | {key for key, _ in _KEYS.values()}
    key = next(k for k in (f"numpy_source_{n}" for n in itertools.count()) if k not in taken)
    try:
        refs = tuple(weakref.ref(a, lambda _, ids=ids: _forget(ids)) for a in arrays)
    except TypeError:
        return key
    _KEYS[ids] = (key, refs)
    return key


def _forget(ids: tuple) -> None:
    with _lock:
        _KEYS.pop(ids, None)


def _release(key: str) -> None:
    with _lock:
        entry = _SOURCES.get(key)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _SOURCES[key]


def lookup_arrays(key: str) -> tuple | None:
    """The arrays `register_arrays` kept under `key`, or None once their graphs are gone."""
    entry = _SOURCES.get(key)
    return None if entry is None else entry[0]
