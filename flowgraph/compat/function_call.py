"""The results of a `tf.function` called inside a TF1 graph, as TensorFlow's call op
gives them.

TensorFlow calls the traced function with one ``PartitionedCall`` op
(``StatefulPartitionedCall`` when the body has stateful ops: random ops, resource
variable reads and writes...), so the results are ``PartitionedCall:0``,
``PartitionedCall:1``... in the order of `nest.flatten`, Python numbers among them
become tensors, and a returned argument is a new tensor. flowgraph builds the body's
ops inline (their names are flowgraph's own; TensorFlow keeps them in the function
library) and passes the tensor results through one ``IdentityN`` named as TensorFlow
names the call.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.constant([1.0, 2.0])
...     out = call_results(lambda: {"y": x * 2.0, "n": 3}, ())
>>> out["y"].name, out["n"].name, out["n"].dtype.name
('PartitionedCall:1', 'PartitionedCall:0', 'int32')
"""

from __future__ import annotations

import numbers

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.nest import flatten, pack_sequence_as
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import get_op_def, has_op_def

__all__ = ["call_results"]


def call_results(fn, args, kwargs=None):
    """``fn(*args, **kwargs)`` built into the default graph, its tensor results (and
    Python numbers and NumPy values) passed through one ``PartitionedCall`` /
    ``StatefulPartitionedCall`` ``IdentityN``; other results are returned as they are."""
    from flowgraph.ops.op_util import make_op

    graph = get_default_graph()
    first_new = len(graph.get_operations())
    result = fn(*args, **(kwargs or {}))
    flat = flatten(result)
    positions, tensors = [], []
    for i, item in enumerate(flat):
        if isinstance(item, Tensor):
            tensors.append(item)
        elif isinstance(item, numbers.Number | np.ndarray | np.generic):
            tensors.append(convert_to_tensor(item))
        else:
            continue
        positions.append(i)
    if not tensors:
        return result
    body = graph.get_operations()[first_new:]
    stateful = any(has_op_def(op.type) and get_op_def(op.type).stateful for op in body)
    op = make_op("IdentityN", tensors,
                 name="StatefulPartitionedCall" if stateful else "PartitionedCall")
    flat = list(flat)
    for i, t in zip(positions, op.outputs):
        flat[i] = t
    return pack_sequence_as(result, flat)
