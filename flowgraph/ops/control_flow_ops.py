"""Grouping and ordering ops: `no_op`, `group`, `tuple`.

The control-flow primitives (Switch, Merge, Enter, Exit, NextIteration, LoopCond) and
`cond`/`while_loop` join this module with the control-flow work.
"""

from __future__ import annotations

from flowgraph.framework.graph import get_default_graph, graph_for
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


# TensorFlow's while-loop gradients order stack pushes and pops with it: a NoOp that is
# never dead, so its control successors run even when its predecessors were on an
# untaken branch (the executor runs it like a _Send, `runtime/bind.py`).
@register_op("ControlTrigger", num_outputs=0, dtype_fn=lambda op: [], control_flow="trigger")
def _control_trigger_shape(op):
    return []


not_differentiable("ControlTrigger")


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.no_op(name="anchor").type
    'NoOp'
    """
    return make_op("NoOp", [], name=name or "NoOp")


def group(*inputs, **kwargs) -> Operation:
    """An op that runs after all of `inputs` (tensors, ops, variables; nested lists are
    flattened) have run. It has no outputs.

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.constant(1), tf.constant(2)
    >>> tf.group(a, b).type
    'NoOp'
    """
    name = kwargs.pop("name", None)
    if kwargs:  # TensorFlow's signature takes **kwargs and refuses all but `name`
        raise ValueError(f"Unknown keyword arguments: {', '.join(kwargs)} (tf.group "
                         "takes only `name`)")
    deps: list[Operation] = []
    for x in _flatten(inputs):
        if hasattr(x, "_as_graph_element") and not isinstance(x, Tensor | Operation):
            x = x._as_graph_element()
        if isinstance(x, Tensor):
            x = x.op
        if not isinstance(x, Operation):
            raise TypeError(  # (TensorFlow's words first)
                f"'inputs' should be zero or more (nested) Tensors. Received '{x!r}' with "
                f"type '{type(x)}'. (tf.group() expects Tensor or Operation arguments.)"
            )
        if x not in deps:
            deps.append(x)
    graph = deps[0].graph if deps else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "group_deps") as scope:
        if not deps:
            return no_op(name=scope)
        # As TensorFlow: one NoOp on each device the inputs run on, in device order
        # (`<scope>/NoOp`, `NoOp_1`, ...), under the returned one; with a single device,
        # the returned NoOp runs there.
        by_device: dict[str, list[Operation]] = {}
        for op in deps:
            by_device.setdefault(op.device, []).append(op)
        if len(by_device) == 1:
            ((device, members),) = by_device.items()
            return _grouped_no_op(graph, device, members, scope)
        per_device = [_grouped_no_op(graph, device, by_device[device], None)
                      for device in sorted(by_device)]
        with graph.control_dependencies(per_device):
            return no_op(name=scope)


def _grouped_no_op(graph, device: str, deps: list, name) -> Operation:
    with graph.control_dependencies(deps):
        if not device:
            return no_op(name=name)
        with graph.device(device):
            return no_op(name=name)


def _flatten(items):
    for x in items:
        if isinstance(x, list | tuple):
            yield from _flatten(x)
        elif isinstance(x, dict):
            yield from _flatten(list(x.values()))
        else:
            yield x


def with_dependencies(dependencies, output_tensor, name: str | None = None) -> Tensor:
    """`output_tensor`'s value, available only after every op in `dependencies` ran.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(0)
    >>> with_dependencies([v.initializer], tf.constant(1)).op.type
    'Identity'
    """
    from flowgraph.framework.constant_op import convert_to_tensor

    graph = get_default_graph()
    with graph.name_scope(name or "control_dependency") as scope, \
            graph.colocate_with(output_tensor), graph.control_dependencies(dependencies):
        return make_op("Identity", [convert_to_tensor(output_tensor)], name=scope).outputs[0]


def tuple_(tensors, name: str | None = None, control_inputs=None) -> list:
    """Tensors with the same values as `tensors`, each available only after all of them
    (and all `control_inputs`) are computed (TensorFlow's ``tf.tuple``).

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = tf.tuple([tf.constant(1.0), tf.constant(2.0)])
    >>> a.op.type, len(a.op.control_inputs)
    ('Identity', 1)
    """
    from flowgraph.framework.constant_op import convert_to_tensor

    # As TensorFlow: Python values become constants, Operations are gated like tensors
    tensors = [t if t is None or isinstance(t, Tensor | Operation) else convert_to_tensor(t)
               for t in tensors]
    graph = graph_for([t for t in tensors if isinstance(t, Tensor | Operation)])
    with graph.as_default(), graph.name_scope(name or "tuple"):
        gating = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        for c in control_inputs or ():
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(
                    f"tf.tuple: control_inputs must hold Operations or Tensors, got {c!r}")
            gating.append(c)
        gating = sorted(set(gating), key=lambda op: op._id)
        if not gating:
            raise ValueError(f"tf.tuple: must have at least one Tensor: {tensors!r}")
        gate = group(*gating)
        out = []
        for t in tensors:
            if isinstance(t, Operation):
                with graph.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(None if t is None else with_dependencies([gate], t))
        return out
