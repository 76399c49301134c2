"""`tf.contrib.compiler.xla.compile`: build a computation for XLA (here: as it is).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     out = tf.contrib.compiler.xla.compile(lambda x: x * 3.0, [tf.constant(2.0)])
...     [float(v) for v in tf.Session().run(out)]
[6.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies
from flowgraph.framework.nest import flatten, pack_sequence_as
from flowgraph.framework.operation import Operation
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_ops import group

__all__ = ["compile"]


def _is_flat(outputs) -> bool:
    if isinstance(outputs, Mapping):
        return False
    if isinstance(outputs, Sequence) and not isinstance(outputs, str | bytes):
        return not any(isinstance(o, Sequence | Mapping) and not isinstance(o, str | bytes)
                       for o in outputs)
    return True


def _flat_outputs(outputs):
    """Split flat outputs into (tensors, operations); tensors must come first."""
    if outputs is None:
        outputs = ()
    elif not isinstance(outputs, Sequence) or isinstance(outputs, str | bytes):
        outputs = (outputs,)
    items = [o if isinstance(o, Operation) else convert_to_tensor(o) for o in outputs]
    tensors = [o for o in items if not isinstance(o, Operation)]
    operations = [o for o in items if isinstance(o, Operation)]
    if items != tensors + operations:
        raise ValueError("xla.compile: the computation must return zero or more Tensors "
                         "followed by zero or more Operations; got an Operation before a "
                         "Tensor")
    return tensors, operations


def compile(computation, inputs=None):
    """Build ``computation(*inputs)`` into the default graph, as TensorFlow's
    ``xla.compile`` returns it (flowgraph has no XLA; the ops run as ordinary graph ops).

    A flat result (one value, or a list/tuple of Tensors followed by Operations) gives a
    list of tensors named ``output_0``, ``output_1``, ..., which run the returned
    Operations first; a result of Operations only (or None) gives one grouping
    Operation named ``output_0``. A nested result gives the same structure of tensors
    (Operations are not allowed in it).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     s, p = tf.contrib.compiler.xla.compile(lambda a, b: (a + b, a * b), [1.0, 2.0])
    ...     s.name, p.name
    ('output_0:0', 'output_1:0')
    """
    args = [convert_to_tensor(t) for t in (inputs or [])]
    outputs = computation(*args)
    if _is_flat(outputs):
        tensors, operations = _flat_outputs(outputs)
        if not tensors:
            return group(*operations, name="output_0")
    else:
        tensors, operations = [], []
        for o in flatten(outputs):
            if isinstance(o, Operation):
                raise ValueError(f"xla.compile: an Operation ('{o.name}') cannot be part of a "
                                 f"nested result; make it a control dependency of a "
                                 f"returned Tensor instead")
            tensors.append(convert_to_tensor(o))
    with control_dependencies(operations):
        results = [identity(t, name=f"output_{i}") for i, t in enumerate(tensors)]
    return results if _is_flat(outputs) else pack_sequence_as(outputs, results)
