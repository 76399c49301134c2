"""Per-run stacks: ``StackV2``, ``StackPushV2``, ``StackPopV2``, ``StackCloseV2``, and the
indexed pair ``StackPushAt`` / ``StackReadAt`` that gradients through `tf.while_loop` use
to save forward values per iteration and replay them backwards.

A stack lives in the step, not in the session
---------------------------------------------
``StackV2`` outputs a handle whose run-time value *is* the stack: a fresh Python object
each time the op runs. So a stack exists once per `Session.run` step, and once per frame
instance when the op runs inside a loop (a loop nested in a loop's body gets a new stack
in every outer iteration). It is released, with everything it holds, when the executor
releases the handle after its last consumer ran. Nothing is shared between steps or
sessions, so concurrent `run` calls never see each other's values.

``StackPushV2``/``StackPopV2`` are TensorFlow's LIFO stack. The gradient machinery
(``control_flow_grad.py``) uses the indexed form instead: ``StackPushAt(handle, value,
index)`` records `value` under ``(slot, index)`` and ``StackReadAt(handle, index)``
returns it. Keys make the order of pushes and reads irrelevant, so forward and backward
iterations may overlap (``parallel_iterations > 1``) without extra synchronisation.

Deadness is replayed: ``StackPushAt`` runs even when its value is dead (the executor
treats it like a ``Merge``, calling it once all inputs arrived): a dead value, from a
`tf.cond` branch that did not run in that iteration, is not recorded, and the push still
completes so the forward loop's iteration counter can wait for it. ``StackReadAt`` of a
key that was never recorded returns a dead value, so the backward ops of that branch do
not run in the matching backward iteration either.

Example
-------
>>> import flowgraph as tf
>>> h = stack_v2(-1, tf.float32)
>>> push = stack_push_v2(h, tf.constant(1.5))
>>> with tf.control_dependencies([push]):
...     top = stack_pop_v2(h, tf.float32)
>>> with tf.Session() as sess:
...     print(sess.run(top))
1.5
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op

__all__: list[str] = []  # internal ops: no public tf.* names (as in TensorFlow 1.x)


# -- registrations ---------------------------------------------------------------------------
def _check_handle(op, handle) -> None:
    t = op.inputs[0]
    if t.dtype.base_dtype != _dtypes.string:
        raise op.shape_error(f"input 'handle' must be a stack handle (string), found "
                             f"{t.dtype.base_dtype.name}")
    if handle.ndims not in (None, 0):
        raise op.shape_error(f"input 'handle' must be a scalar, found shape {handle}")


def _check_index(op, index, pos: int) -> None:
    t = op.inputs[pos]
    if not t.dtype.base_dtype.is_integer:
        raise op.shape_error(f"input 'index' must be an integer, found "
                             f"{t.dtype.base_dtype.name}")
    if index.ndims not in (None, 0):
        raise op.shape_error(f"input 'index' must be a scalar, found shape {index}")


@register_op("StackV2", attrs={"elem_type": None, "stack_name": ""},
             dtype_fn=fixed_dtype(_dtypes.string), stateful=True)
def _stack_shape(op, max_size):
    if not op.inputs[0].dtype.base_dtype.is_integer or max_size.ndims not in (None, 0):
        raise op.shape_error("input 'max_size' must be an integer scalar")
    return [TensorShape([])]


@register_op("StackPushV2", attrs={"swap_memory": False}, dtype_fn=lambda op: [
    op.inputs[1].dtype.base_dtype], stateful=True)
def _stack_push_shape(op, handle, elem):
    _check_handle(op, handle)
    return [elem]


@register_op("StackPopV2", attrs={"elem_type": None}, dtype_fn=attr_dtype("elem_type"),
             stateful=True)
def _stack_pop_shape(op, handle):
    _check_handle(op, handle)
    return [TensorShape(None)]


@register_op("StackCloseV2", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _stack_close_shape(op, handle):
    _check_handle(op, handle)
    return []


# Flagged like a Merge (control_flow="merge"): the executor calls it once all inputs have
# arrived, dead or not, and its completion is never dead (see the module docstring).
@register_op("StackPushAt", attrs={"slot": 0}, num_outputs=0, dtype_fn=lambda op: [],
             stateful=True, control_flow="merge")
def _stack_push_at_shape(op, handle, elem, index):
    _check_handle(op, handle)
    _check_index(op, index, 2)
    return []


@register_op("StackReadAt", attrs={"slot": 0, "elem_type": None},
             dtype_fn=attr_dtype("elem_type"), stateful=True)
def _stack_read_at_shape(op, handle, index):
    _check_handle(op, handle)
    _check_index(op, index, 1)
    return [TensorShape(None)]


not_differentiable("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "StackPushAt",
                   "StackReadAt")


# -- wrappers (TensorFlow's gen_data_flow_ops names) -----------------------------------------
def stack_v2(max_size, elem_type, stack_name: str = "", name: str | None = None) -> Tensor:
    """A new, empty stack for this run (per step and per loop frame instance); returns
    its handle. `max_size` (< 0: unbounded) limits the number of elements.

    Example
    -------
    >>> import flowgraph as tf
    >>> stack_v2(-1, tf.float32).dtype.name
    'string'
    """
    with name_scope(name, "Stack") as scope:
        size = convert_to_tensor(max_size, dtype=_dtypes.int32, name="max_size")
        op = make_op("StackV2", [size], {"elem_type": _dtypes.as_dtype(elem_type).base_dtype,
                                         "stack_name": stack_name or scope[:-1]},
                     name=scope)
    return op.outputs[0]


def stack_push_v2(handle, elem, swap_memory: bool = False, name: str | None = None) -> Tensor:
    """Push `elem` on the stack `handle`; returns `elem`.

    Example
    -------
    >>> import flowgraph as tf
    >>> stack_push_v2(stack_v2(-1, tf.int32), tf.constant(3)).op.type
    'StackPushV2'
    """
    elem = convert_to_tensor(elem)
    return make_op("StackPushV2", [handle, elem], {"swap_memory": bool(swap_memory)},
                   name=name or "StackPushV2").outputs[0]


def stack_pop_v2(handle, elem_type, name: str | None = None) -> Tensor:
    """Pop the top element of stack `handle` (InvalidArgumentError when it is empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> stack_pop_v2(stack_v2(-1, tf.int32), tf.int32).dtype.name
    'int32'
    """
    return make_op("StackPopV2", [handle],
                   {"elem_type": _dtypes.as_dtype(elem_type).base_dtype},
                   name=name or "StackPopV2").outputs[0]


def stack_close_v2(handle, name: str | None = None) -> Operation:
    """Drop every element of stack `handle`.

    Example
    -------
    >>> import flowgraph as tf
    >>> stack_close_v2(stack_v2(-1, tf.int32)).type
    'StackCloseV2'
    """
    return make_op("StackCloseV2", [handle], name=name or "StackCloseV2")
