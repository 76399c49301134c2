"""Stateful ops on variables: `VariableV2`, `Assign`, `AssignAdd`, `AssignSub`,
`IsVariableInitialized`.

A `VariableV2` op outputs a *ref*: a handle to storage in the session's resource
container. Ops that declare the input in `ref_inputs` receive the handle (and may write
it); any other consumer receives the current value.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_tensor, op_scope


@register_op("VariableV2", attrs={"shape": None, "dtype": None, "container": "",
                                  "shared_name": ""},
             dtype_fn=attr_dtype("dtype"), ref_outputs=(0,), stateful=True)
def _variable_shape(op):
    return [as_shape(op.attrs["shape"])]


def _assign_shape(op, ref, value):
    if op.attrs.get("validate_shape", True) and not ref.is_compatible_with(value):
        raise op.shape_error(
            f"the variable has shape {ref} but the assigned value has shape {value}; "
            "assign a value of the variable's shape (or pass validate_shape=False to "
            "tf.assign to change the shape)"
        )
    return [ref.merge_with(value) if op.attrs.get("validate_shape", True) else value]


register_op("Assign", attrs={"validate_shape": True, "use_locking": True},
            ref_inputs=(0,), ref_outputs=(0,), stateful=True)(_assign_shape)
register_op("AssignAdd", attrs={"use_locking": False},
            ref_inputs=(0,), ref_outputs=(0,), stateful=True)(_assign_shape)
register_op("AssignSub", attrs={"use_locking": False},
            ref_inputs=(0,), ref_outputs=(0,), stateful=True)(_assign_shape)


@register_op("IsVariableInitialized", ref_inputs=(0,), stateful=True,
             dtype_fn=fixed_dtype(_dtypes.bool))
def _is_initialized_shape(op, ref):
    return [TensorShape([])]


not_differentiable("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized")


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """The raw variable op (a ref tensor); most code uses `tf.Variable` instead."""
    return make_tensor("VariableV2", [], {
        "shape": as_shape(shape), "dtype": _dtypes.as_dtype(dtype).base_dtype,
        "container": container, "shared_name": shared_name}, name=name)


class NotAVariableError(AttributeError, TypeError):
    """An assignment to something that is not a variable. TensorFlow raises
    AttributeError (the tensor has no ``assign``); older flowgraph code caught TypeError,
    so this error is both.

    >>> issubclass(NotAVariableError, AttributeError) and issubclass(NotAVariableError, TypeError)
    True
    """


def _ref_of(ref):
    t = getattr(ref, "_ref", None)
    if callable(t):
        return t()
    if not getattr(ref, "dtype", None) or not ref.dtype.is_ref_dtype:
        raise NotAVariableError(
            f"'{getattr(ref, 'name', ref)}' is not a variable (a ref tensor): only variables "
            "can be assigned to"
        )
    return ref


def _assign_like(op_type: str, ref, value, name, attrs):
    ref_t = _ref_of(ref)
    want = ref_t.dtype.base_dtype
    with op_scope(name, op_type, (value,)) as scope:  # a Python value: `<op>/value`
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            value = convert_to_tensor(value)
            if value.dtype.base_dtype != want:
                raise TypeError(
                    f"Input 'value' of '{op_type}' Op has type {value.dtype.base_dtype.name} "
                    f"that does not match type {want.name} of argument 'ref' (variable "
                    f"'{ref_t.op.name}'). Cast the value with tf.cast first."
                )
        else:
            value = convert_to_tensor(value, dtype=want, name="value")
        return make_tensor(op_type, [ref_t, value], attrs, name=scope)


def _resource_method(ref, method: str):
    """`ref`'s bound `method` when it is a resource variable (TensorFlow's state ops call
    the variable's own method then), else None."""
    handle = getattr(ref, "handle", None)
    if handle is not None and getattr(handle.dtype, "base_dtype", None) == _dtypes.resource:
        return getattr(ref, method)
    return None


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Store `value` in variable `ref`; returns the variable's ref after the write.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(0.0)
    >>> tf.assign(v, 3.0).op.type
    'Assign'
    """
    method = _resource_method(ref, "assign")
    if method is not None:
        return method(value, name=name)
    return _assign_like("Assign", ref, value, name, {
        "validate_shape": True if validate_shape is None else bool(validate_shape),
        "use_locking": True if use_locking is None else bool(use_locking)})


def assign_add(ref, value, use_locking=None, name=None):
    """Add `value` to variable `ref` in place."""
    method = _resource_method(ref, "assign_add")
    if method is not None:
        return method(value, name=name)
    return _assign_like("AssignAdd", ref, value, name, {"use_locking": bool(use_locking)})


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtract `value` from variable `ref` in place."""
    method = _resource_method(ref, "assign_sub")
    if method is not None:
        return method(value, name=name)
    return _assign_like("AssignSub", ref, value, name, {"use_locking": bool(use_locking)})


def is_variable_initialized(variable):
    """A scalar bool: has `variable` been initialized in this session?"""
    method = _resource_method(variable, "is_initialized")
    if method is not None:
        return method()
    return make_tensor("IsVariableInitialized", [_ref_of(variable)],
                       name="IsVariableInitialized")


@register_op("ReadVariableOrDefault", ref_inputs=(0,), stateful=True,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _read_or_default_shape(op, ref, default):
    return [default]


not_differentiable("ReadVariableOrDefault")


def read_variable_or_default(variable, default, name=None):
    """The variable's value if it is initialized in this session, else `default`.

    One op doing what ``tf.cond(tf.is_variable_initialized(v), v.read_value, lambda:
    default)`` does (the global step's shared read uses it on every training step).
    """
    return make_tensor("ReadVariableOrDefault",
                       [_ref_of(variable), convert_to_tensor(default)],
                       name=name or "ReadVariableOrDefault")
