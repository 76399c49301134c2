"""The resource-variable ops: a variable reached through a handle.

A ``VarHandleOp`` outputs a scalar ``resource`` tensor, a handle to the variable's storage
in the session's resource container (the same `VariableState` a ``VariableV2`` of that
name would use). Every other op takes the handle as an ordinary input and reads or
writes through it::

    VarHandleOp(dtype, shape, shared_name)   -> handle
    ReadVariableOp(handle)                   -> the value (a snapshot)
    AssignVariableOp(handle, value)          (no outputs)
    AssignAdd/SubVariableOp(handle, delta)   (no outputs)
    VarIsInitializedOp(handle)               -> bool scalar
    ResourceGather(handle, indices)          -> rows
    ResourceScatter{Add,Sub,Mul,Div,Min,Max,Update}(handle, indices, updates)
    ResourceScatterNd{Update,Add,Sub,Max,Min}(handle, indices, updates)
    VariableShape(handle)                    -> the variable's shape
    ResourceCountUpTo(handle, limit)         -> the value before adding 1

Gradients flow from a read back to the handle: ``ReadVariableOp``'s is the incoming
gradient, ``ResourceGather``'s an `IndexedSlices`, so ``tf.gradients(loss, v)`` of a
resource variable differentiates with respect to ``v.handle``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     h = var_handle_op(tf.float32, [2], shared_name="v", name="v")
...     init = assign_variable_op(h, tf.constant([1.0, 2.0]))
...     read = read_variable_op(h, tf.float32)
...     with tf.Session() as sess:
...         sess.run(init)
...         print(h.dtype.name, read.shape.as_list(), sess.run(read))
resource [2] [1. 2.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import (
    OpCost,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor

__all__ = ["assign_variable_op", "handle_shape", "read_variable_op", "resource_count_up_to",
           "resource_gather", "resource_scatter", "resource_scatter_nd", "var_handle_op",
           "var_is_initialized_op", "variable_shape"]

SCATTER_KINDS = ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update")
SCATTER_ND_KINDS = ("Update", "Add", "Sub", "Max", "Min")


def handle_shape(handle) -> TensorShape:
    """The variable shape behind resource tensor `handle` (unknown when not a
    ``VarHandleOp``'s output)."""
    op = getattr(handle, "op", None)
    if op is not None and op.type == "VarHandleOp":
        return as_shape(op.attrs["shape"])
    known = getattr(handle, "_handle_shape", None)
    return known if known is not None else TensorShape(None)


def _no_dtypes(op):
    return []


def _none(op, *_):
    return []


def _check_handle(op, what: str) -> None:
    t = op.inputs[0]
    if t.dtype.base_dtype != _dtypes.resource:
        raise op.shape_error(f"{what}: input 0 must be a resource handle (a VarHandleOp's "
                             f"output), got {t.dtype.name} tensor '{t.name}'")


# -- definitions -------------------------------------------------------------------------
@register_op("VarHandleOp", attrs={"dtype": None, "shape": None, "container": "",
                                   "shared_name": "", "allowed_devices": ()},
             dtype_fn=fixed_dtype(_dtypes.resource), stateful=True)
def _var_handle_shape(op):
    return [TensorShape([])]


@register_op("ReadVariableOp", attrs={"dtype": None}, dtype_fn=attr_dtype("dtype"),
             stateful=True)
def _read_shape(op, handle):
    _check_handle(op, "ReadVariableOp")
    return [handle_shape(op.inputs[0])]


def _assign_variable_shape(op, handle, value):
    _check_handle(op, op.type)
    var = handle_shape(op.inputs[0])
    if op.type != "AssignVariableOp" or op.attrs.get("validate_shape", False):
        if not var.is_compatible_with(value):
            raise op.shape_error(f"the variable has shape {var} but the value has shape "
                                 f"{value}; the shapes must match")
    return []


register_op("AssignVariableOp", attrs={"dtype": None, "validate_shape": False},
            num_outputs=0, dtype_fn=_no_dtypes, stateful=True)(_assign_variable_shape)
for _kind in ("Add", "Sub"):
    register_op(f"Assign{_kind}VariableOp", attrs={"dtype": None}, num_outputs=0,
                dtype_fn=_no_dtypes, stateful=True)(_assign_variable_shape)


@register_op("VarIsInitializedOp", dtype_fn=fixed_dtype(_dtypes.bool), stateful=True)
def _is_initialized_shape(op, handle):
    return [TensorShape([])]


@register_op("VariableShape", attrs={"out_type": _dtypes.int32},
             dtype_fn=attr_dtype("out_type"), stateful=True)
def _variable_shape_shape(op, handle):
    return [TensorShape([handle_shape(op.inputs[0]).ndims])]


@register_op("ResourceGather", attrs={"batch_dims": 0, "validate_indices": True,
                                      "dtype": None, "Tindices": None},
             dtype_fn=attr_dtype("dtype"), stateful=True, cost=OpCost.EXPENSIVE)
def _resource_gather_shape(op, handle, indices):
    var = handle_shape(op.inputs[0])
    if var.ndims is None or indices.ndims is None:
        return [TensorShape(None)]
    bd = op.attrs["batch_dims"]
    if not 0 <= bd <= indices.ndims or var.ndims < bd + 1:
        raise op.shape_error(f"batch_dims={bd} must be in [0, rank(indices)={indices.ndims}] "
                             f"and below the rank of the variable's shape {var} (params "
                             "must be at least 1-D after its batch dimensions)")
    if not var[:bd].is_compatible_with(indices[:bd]):
        raise op.shape_error(f"the first batch_dims={bd} dimensions of the variable {var} "
                             f"and of indices {indices} must be equal")
    return [indices.concatenate(var[bd + 1:])]


def _scatter_shape(op, handle, indices, updates):
    var = handle_shape(op.inputs[0])
    if var.ndims is not None and indices.ndims is not None and updates.ndims is not None:
        want = indices.concatenate(var[1:])
        if updates.ndims and not updates.is_compatible_with(want):
            raise op.shape_error(f"updates must have shape indices.shape + var.shape[1:] = "
                                 f"{want} (or be a scalar), got {updates}")
    return []


for _kind in SCATTER_KINDS:
    register_op(f"ResourceScatter{_kind}", attrs={"dtype": None, "Tindices": None},
                num_outputs=0, dtype_fn=_no_dtypes, stateful=True)(_scatter_shape)


def _scatter_nd_shape(op, handle, indices, updates):
    _check_handle(op, op.type)
    var = handle_shape(op.inputs[0])
    if var.ndims is None or indices.ndims is None or updates.ndims is None or \
            not indices.ndims or indices.dims[-1].value is None:
        return []
    depth = indices.dims[-1].value
    if depth > var.ndims:
        raise op.shape_error(f"indices.shape[-1] is {depth} but the variable has only "
                             f"{var.ndims} dimensions ({var}); each index tuple addresses "
                             "at most rank(variable) dimensions")
    want = TensorShape(indices.dims[:-1] + var.dims[depth:])
    if not updates.is_compatible_with(want):
        raise op.shape_error(f"updates have shape {updates}; indices {indices} into a "
                             f"variable of shape {var} need shape {want} "
                             "(indices.shape[:-1] + shape[indices.shape[-1]:])")
    return []


for _kind in SCATTER_ND_KINDS:
    register_op(f"ResourceScatterNd{_kind}", attrs={"T": None, "Tindices": None,
                                                    "use_locking": True},
                num_outputs=0, dtype_fn=_no_dtypes, stateful=True)(_scatter_nd_shape)


@register_op("ResourceCountUpTo", attrs={"limit": 0, "T": None}, dtype_fn=attr_dtype("T"),
             stateful=True)
def _count_up_to_shape(op, handle):
    var = handle_shape(op.inputs[0])
    if not var.is_compatible_with(TensorShape([])):
        raise op.shape_error(f"the counter must be a scalar variable, got shape {var}")
    return [TensorShape([])]


not_differentiable("ResourceCountUpTo")
not_differentiable("VarHandleOp", "AssignVariableOp", "AssignAddVariableOp",
                   "AssignSubVariableOp", "VarIsInitializedOp", "VariableShape",
                   *(f"ResourceScatter{k}" for k in SCATTER_KINDS),
                   *(f"ResourceScatterNd{k}" for k in SCATTER_ND_KINDS))


# -- gradients ---------------------------------------------------------------------------
@register_gradient("ReadVariableOp")
def _read_grad(op, grad):
    return [grad]


@register_gradient("ResourceGather")
def _resource_gather_grad(op, grad):
    from flowgraph.ops import array_ops

    handle, indices = op.inputs
    graph = op.graph
    with graph.colocate_with(handle.op):
        params_shape = variable_shape(handle)
    if op.attrs["batch_dims"]:
        return [_batch_gather_grad(op, grad, params_shape), None]
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    values_shape = array_ops.concat([size, params_shape[1:]], 0)
    values = array_ops.reshape(grad, values_shape)
    flat_indices = array_ops.reshape(indices, size)
    return [IndexedSlices(values, flat_indices, params_shape), None]


def _batch_gather_grad(op, grad, params_shape):
    """The dense gradient of a ``ResourceGather`` with ``batch_dims=b``: the rows of the
    variable seen as ``[prod(shape[:b+1]), ...]``, row ``batch * shape[b] + index``,
    summed over repeats. (TensorFlow's gradient takes no account of `batch_dims`.)"""
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops import array_ops, math_ops
    from flowgraph.ops.array_gen_ops import range as range_
    from flowgraph.ops.math_reduce import reduce_prod
    from flowgraph.ops.segment_ops import unsorted_segment_sum

    indices = op.inputs[1]
    bd = op.attrs["batch_dims"]
    idx = math_ops.cast(indices, _dtypes.int64)
    ishape = array_ops.shape(idx, out_type=_dtypes.int64)
    batch = reduce_prod(ishape[:bd])
    per_batch = reduce_prod(ishape[bd:])
    rows = math_ops.cast(params_shape[bd], _dtypes.int64)
    offsets = array_ops.reshape(range_(batch, dtype=_dtypes.int64) * rows, [-1, 1])
    flat = array_ops.reshape(array_ops.reshape(idx, array_ops.stack([batch, per_batch]))
                             + offsets, [-1])
    inner = params_shape[bd + 1:]
    values = array_ops.reshape(grad, array_ops.concat(
        [constant([-1], dtype=params_shape.dtype), inner], 0))
    total = math_ops.cast(batch, _dtypes.int64) * rows
    summed = unsorted_segment_sum(values, flat, total)
    return array_ops.reshape(summed, params_shape)


# -- wrappers ----------------------------------------------------------------------------
def var_handle_op(dtype, shape, container: str = "", shared_name: str = "", name=None):
    """The raw handle op; `tf.Variable(..., use_resource=True)` builds one for you."""
    return make_tensor("VarHandleOp", [], {
        "dtype": _dtypes.as_dtype(dtype).base_dtype, "shape": as_shape(shape),
        "container": container, "shared_name": shared_name, "allowed_devices": []},
        name=name or "VarHandleOp")


def read_variable_op(handle, dtype, name=None):
    """A read of the variable behind `handle` (the value at the time the op runs)."""
    return make_tensor("ReadVariableOp", [handle],
                       {"dtype": _dtypes.as_dtype(dtype).base_dtype},
                       name=name or "ReadVariableOp")


def _value_for(handle, value, dtype, op_type: str):
    if hasattr(value, "_as_graph_element") or hasattr(value, "dtype"):
        value = convert_to_tensor(value)
        if value.dtype.base_dtype != dtype:
            raise TypeError(
                f"{op_type}: the value has dtype {value.dtype.base_dtype.name} but the "
                f"variable '{handle.op.name}' has dtype {dtype.name}; cast it with tf.cast "
                "first")
        return value
    return convert_to_tensor(value, dtype=dtype)


def assign_variable_op(handle, value, name=None, validate_shape: bool = False,
                       op_type: str = "AssignVariableOp", dtype=None):
    """Store `value` in the variable behind `handle`; returns the op (no outputs)."""
    dtype = _dtypes.as_dtype(dtype or handle.op.attrs["dtype"]).base_dtype
    value = _value_for(handle, value, dtype, op_type)
    attrs = {"dtype": dtype}
    if op_type == "AssignVariableOp":
        attrs["validate_shape"] = bool(validate_shape)
    return make_op(op_type, [handle, value], attrs, name=name or op_type)


def var_is_initialized_op(handle, name=None):
    """A bool scalar: does the variable behind `handle` hold a value in this session?"""
    return make_tensor("VarIsInitializedOp", [handle], name=name or "VarIsInitializedOp")


def variable_shape(handle, out_type=_dtypes.int32, name=None):
    """The shape of the variable behind `handle` (1-D `out_type`): a constant when the
    handle's shape is fully known (as TensorFlow does), else a ``VariableShape`` op."""
    static = handle_shape(handle)
    if static.is_fully_defined():
        from flowgraph.framework.constant_op import constant

        return constant(static.as_list(), dtype=out_type, name=name or "Const")
    return make_tensor("VariableShape", [handle],
                       {"out_type": _dtypes.as_dtype(out_type)},
                       name=name or "VariableShape")


def resource_gather(handle, indices, dtype, name=None, batch_dims: int = 0):
    """Rows `indices` of the variable behind `handle` (``ResourceGather``)."""
    idx = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
    if not idx.dtype.is_integer:
        raise TypeError(f"ResourceGather: indices must be int32 or int64, got "
                        f"{idx.dtype.name} ({idx.name})")
    return make_tensor("ResourceGather", [handle, idx], {
        "dtype": _dtypes.as_dtype(dtype).base_dtype, "Tindices": idx.dtype.base_dtype,
        "batch_dims": int(batch_dims), "validate_indices": True},
        name=name or "ResourceGather")


def resource_count_up_to(handle, limit: int, dtype, name=None):
    """``ResourceCountUpTo``: add 1 to the scalar integer variable behind `handle` and
    return its value from before; once that reached `limit`, `OutOfRangeError`."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"count_up_to: the variable must be int32 or int64, got {dtype.name}")
    return make_tensor("ResourceCountUpTo", [handle], {"limit": int(limit), "T": dtype},
                       name=name or "ResourceCountUpTo")


def resource_scatter(kind: str, handle, indices, updates, dtype, name=None):
    """``ResourceScatter<kind>``: combine `updates` into rows `indices`; returns the op."""
    if kind not in SCATTER_KINDS:
        raise ValueError(f"resource_scatter: kind must be one of {SCATTER_KINDS}, got "
                         f"{kind!r}")
    dtype = _dtypes.as_dtype(dtype).base_dtype
    idx = convert_to_tensor(indices, preferred_dtype=_dtypes.int32)
    upd = convert_to_tensor(updates, dtype=dtype)
    return make_op(f"ResourceScatter{kind}", [handle, idx, upd],
                   {"dtype": dtype, "Tindices": idx.dtype.base_dtype},
                   name=name or f"ResourceScatter{kind}")


def resource_scatter_nd(kind: str, handle, indices, updates, dtype, name=None):
    """``ResourceScatterNd<kind>`` (Update, Add, Sub, Max, Min): combine `updates` at the index
    tuples `indices` (``[..., depth]``) of the variable behind `handle`; returns the op."""
    if kind not in SCATTER_ND_KINDS:
        raise ValueError(f"resource_scatter_nd: kind must be one of {SCATTER_ND_KINDS}, "
                         f"got {kind!r}")
    dtype = _dtypes.as_dtype(dtype).base_dtype
    idx = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
    if idx.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"ResourceScatterNd{kind}: indices must be int32 or int64, got "
                        f"{idx.dtype.name} ({idx.name})")
    upd = _value_for(handle, updates, dtype, f"ResourceScatterNd{kind}")
    return make_op(f"ResourceScatterNd{kind}", [handle, idx, upd],
                   {"T": dtype, "Tindices": idx.dtype.base_dtype, "use_locking": True},
                   name=name or f"ResourceScatterNd{kind}")
