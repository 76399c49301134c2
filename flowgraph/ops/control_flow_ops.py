"""Grouping and ordering ops: `no_op`, `group`, `tuple`.

The control-flow primitives (Switch, Merge, Enter, Exit, NextIteration, LoopCond) and
`cond`/`while_loop` join this module with the control-flow work.
"""

from __future__ import annotations

from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import make_op

__all__ = [
    "group",
    "no_op",
]



@register_op("NoOp", num_outputs=0, dtype_fn=lambda op: [])
def _no_op_shape(op):
    return []


not_differentiable("NoOp")


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.no_op(name="anchor").type
    'NoOp'
    """
    return make_op("NoOp", [], name=name or "NoOp")


def group(*inputs, name: str | None = None) -> Operation:
    """An op that runs after all of `inputs` (tensors or ops) have run.

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.constant(1), tf.constant(2)
    >>> tf.group(a, b).type
    'NoOp'
    """
    deps = []
    for x in _flatten(inputs):
        if hasattr(x, "_as_graph_element") and not isinstance(x, Tensor | Operation):
            x = x._as_graph_element()
        if isinstance(x, Tensor):
            x = x.op
        if not isinstance(x, Operation):
            raise TypeError(f"tf.group: expected tensors or ops, got {type(x).__name__}: {x!r}")
        if x not in deps:
            deps.append(x)
    graph = deps[0].graph if deps else get_default_graph()
    with graph.as_default(), graph.control_dependencies(deps):
        return no_op(name=name or "group_deps")


def _flatten(items):
    for x in items:
        if isinstance(x, list | tuple):
            yield from _flatten(x)
        elif isinstance(x, dict):
            yield from _flatten(list(x.values()))
        else:
            yield x


def tuple_(tensors, name: str | None = None, control_inputs=None):
    """Tensors with the same values as `tensors`, available only after all are computed
    (TensorFlow's ``tf.tuple``)."""
    from flowgraph.ops.array_ops import identity

    tensors = list(tensors)
    gate = group(*[t for t in tensors if t is not None], *(control_inputs or []))
    out = []
    with get_default_graph().control_dependencies([gate]):
        for t in tensors:
            out.append(None if t is None else identity(t))
    return out
