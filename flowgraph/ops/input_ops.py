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


# key -> tuple of arrays; an entry lives as long as the graph holding its op.
_SOURCES: dict[str, tuple] = {}
_lock = threading.Lock()


def register_arrays(graph, arrays: tuple) -> str:
    """Keep `arrays` while `graph` lives; returns the key for the op's ``key`` attr.

    Example
    -------
    >>> import numpy as np, flowgraph as tf
    >>> register_arrays(tf.Graph(), (np.zeros(2),)).startswith("numpy_source_")
    True
    """
    with _lock:
        # The smallest free number, not a counter: an Estimator builds the same graph on
        # every `train` call, and a stable key keeps it the same graph by content (its
        # serialized `.meta` and graph event are then cached).
        number = next(n for n in itertools.count() if f"numpy_source_{n}" not in _SOURCES)
        key = f"numpy_source_{number}"
        _SOURCES[key] = tuple(arrays)
    weakref.finalize(graph, _SOURCES.pop, key, None)
    return key


def lookup_arrays(key: str) -> tuple | None:
    """The arrays `register_arrays` kept under `key`, or None once their graph is gone."""
    return _SOURCES.get(key)
