"""TensorArray ops: ``TensorArrayV3`` and the ops that write, read, gather, scatter,
concatenate, split, size and close it, plus ``TensorArrayGradV3``, with their gradients.
The Python class `tf.TensorArray` that wraps them is in ``tensor_array.py``.

A TensorArray lives in the step
-------------------------------
``TensorArrayV3`` outputs a *handle* whose run-time value is the array itself (a fresh
object each time the op runs: once per `Session.run` step, and once per frame instance
inside a loop, like the stacks of ``stack_ops.py``) and a *flow*, a float32 scalar that
carries no data. Every op that changes the array takes a flow and returns a new one;
every op that reads it takes a flow. Threading the flow through the graph orders the
reads after the writes they depend on, also across the iterations of a `tf.while_loop`
(where the flow is a loop variable) and in the backward pass.

Gradients
---------
The gradient of an array is another array of the same size, made on first use by
``TensorArrayGradV3(handle, flow, source=...)`` and remembered by the forward array under
`source` (one per `tf.gradients` call), so every gradient op of one pass writes to and
reads from the same one. Writing to an index of a gradient array twice adds the values
(two reads of one forward element both contribute). Reading an index that was never
written gives zeros of the element's shape. Each rule mirrors its forward op::

    read(i)      <->  grad.write(i, g)         write(i, v)  <->  g_v = grad.read(i)
    gather(idx)  <->  grad.scatter(idx, g)     scatter(idx) <->  g_v = grad.gather(idx)
    concat()     <->  grad.split(g, lengths)   split(v, l)  <->  g_v = grad.concat()

Example
-------
>>> import flowgraph as tf
>>> ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
>>> with tf.Session() as sess:
...     print(sess.run(ta.stack()).tolist())
[[1.0, 2.0], [3.0, 4.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.array_ops import zeros_like
from flowgraph.ops.gradient_util import _dense as dense
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, op_scope

__all__: list[str] = []  # the public API is tf.TensorArray (tensor_array.py)

_FLOW = _dtypes.float32


# -- registrations ---------------------------------------------------------------------------
def _check_handle(op, handle) -> None:
    t = op.inputs[0]
    # (a TensorArray/TensorArrayV2 handle of an old graph is a 2-vector: its gradients
    # are built of these ops too, `tensor_array_v1_ops`)
    if t.dtype.base_dtype != _dtypes.string or not (
            handle.ndims in (None, 0) or handle.is_compatible_with(TensorShape([2]))):
        raise op.shape_error(f"input 'handle' must be a TensorArray handle (a string "
                             f"scalar), found {t.dtype.base_dtype.name} of shape {handle}")


def _check_flow(op, pos: int) -> None:
    t = op.inputs[pos]
    if t.dtype.base_dtype != _FLOW:
        raise op.shape_error(f"input 'flow_in' must be a float32 flow tensor (the `flow` "
                             f"of a TensorArray), found {t.dtype.base_dtype.name}")


def _check_int(op, pos: int, name: str, rank: int) -> None:
    t = op.inputs[pos]
    if not t.dtype.base_dtype.is_integer:
        raise op.shape_error(f"input '{name}' must be an integer tensor, found "
                             f"{t.dtype.base_dtype.name}")
    if t.shape.ndims not in (None, rank):
        raise op.shape_error(f"input '{name}' must have rank {rank}, found shape {t.shape}")


def _element_shape(op, key: str = "element_shape") -> TensorShape:
    return as_shape(op.attrs.get(key))


@register_op("TensorArrayV3", attrs={
    "dtype": None, "element_shape": None, "dynamic_size": False, "clear_after_read": True,
    "identical_element_shapes": False, "tensor_array_name": ""}, num_outputs=2,
    dtype_fn=fixed_dtype(_dtypes.string, _FLOW), stateful=True)
def _tensor_array_shape(op, size):
    _check_int(op, 0, "size", 0)
    return [TensorShape([]), TensorShape([])]


@register_op("TensorArrayGradV3", attrs={"source": ""}, num_outputs=2,
             dtype_fn=fixed_dtype(_dtypes.string, _FLOW), stateful=True)
def _tensor_array_grad_shape(op, handle, flow):
    _check_handle(op, handle)
    _check_flow(op, 1)
    return [TensorShape([]), TensorShape([])]


@register_op("TensorArrayWriteV3", dtype_fn=fixed_dtype(_FLOW), stateful=True)
def _write_shape(op, handle, index, value, flow):
    _check_handle(op, handle)
    _check_int(op, 1, "index", 0)
    _check_flow(op, 3)
    return [TensorShape([])]


@register_op("TensorArrayReadV3", attrs={"dtype": None}, dtype_fn=attr_dtype("dtype"),
             stateful=True)
def _read_shape(op, handle, index, flow):
    _check_handle(op, handle)
    _check_int(op, 1, "index", 0)
    _check_flow(op, 2)
    return [TensorShape(None)]  # the wrapper sets the element shape it inferred


@register_op("TensorArrayGatherV3", attrs={"dtype": None, "element_shape": None},
             dtype_fn=attr_dtype("dtype"), stateful=True)
def _gather_shape(op, handle, indices, flow):
    _check_handle(op, handle)
    _check_int(op, 1, "indices", 1)
    _check_flow(op, 2)
    # As TensorFlow: the indices' length joins the element shape the array was created
    # with (what later writes taught the wrapper, it sets after this).
    elem = _created_element_shape(op.inputs[0])
    return [TensorShape([indices[0] if indices.ndims == 1 else None]).concatenate(elem)
            if elem.ndims is not None else TensorShape(None)]


def _created_element_shape(handle) -> TensorShape:
    src = handle.op
    while src.type in ("Enter", "Identity") and src.inputs:
        src = src.inputs[0].op
    return _element_shape(src) if src.type == "TensorArrayV3" else TensorShape(None)


@register_op("TensorArrayScatterV3", dtype_fn=fixed_dtype(_FLOW), stateful=True)
def _scatter_shape(op, handle, indices, value, flow):
    _check_handle(op, handle)
    _check_int(op, 1, "indices", 1)
    _check_flow(op, 3)
    if value.ndims == 0:
        raise op.shape_error("input 'value' must have rank >= 1 (one row per index), "
                             "found a scalar")
    return [TensorShape([])]


@register_op("TensorArrayConcatV3", attrs={"dtype": None, "element_shape_except0": None},
             num_outputs=2, dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["dtype"]),
                                                 _dtypes.int64], stateful=True)
def _concat_shape(op, handle, flow):
    _check_handle(op, handle)
    _check_flow(op, 1)
    rest = _element_shape(op, "element_shape_except0")
    value = TensorShape([None]).concatenate(rest) if rest.ndims is not None else \
        TensorShape(None)
    return [value, TensorShape([None])]


@register_op("TensorArraySplitV3", dtype_fn=fixed_dtype(_FLOW), stateful=True)
def _split_shape(op, handle, value, lengths, flow):
    _check_handle(op, handle)
    _check_int(op, 2, "lengths", 1)
    _check_flow(op, 3)
    if value.ndims == 0:
        raise op.shape_error("input 'value' must have rank >= 1, found a scalar")
    return [TensorShape([])]


@register_op("TensorArraySizeV3", dtype_fn=fixed_dtype(_dtypes.int32), stateful=True)
def _size_shape(op, handle, flow):
    _check_handle(op, handle)
    _check_flow(op, 1)
    return [TensorShape([])]


@register_op("TensorArrayCloseV3", num_outputs=0, dtype_fn=lambda op: [], stateful=True)
def _close_shape(op, handle):
    _check_handle(op, handle)
    return []


not_differentiable("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3",
                   "TensorArrayCloseV3")


# -- raw wrappers (TensorFlow's gen_data_flow_ops names) ---------------------------------------
def tensor_array_v3(size, dtype, element_shape=None, dynamic_size=False,
                    clear_after_read=True, identical_element_shapes=False,
                    tensor_array_name="", name=None) -> tuple[Tensor, Tensor]:
    """A new TensorArray for this run: ``(handle, flow)``. Use `tf.TensorArray`."""
    op = make_op("TensorArrayV3", [size], {
        "dtype": _dtypes.as_dtype(dtype).base_dtype, "element_shape": as_shape(element_shape),
        "dynamic_size": bool(dynamic_size), "clear_after_read": bool(clear_after_read),
        "identical_element_shapes": bool(identical_element_shapes),
        "tensor_array_name": tensor_array_name}, name=name or "TensorArray")
    return op.outputs[0], op.outputs[1]


def tensor_array_grad_v3(handle, flow_in, source: str, name=None) -> tuple[Tensor, Tensor]:
    """The gradient TensorArray of `handle` for `source`: ``(grad_handle, flow_out)``."""
    op = make_op("TensorArrayGradV3", [handle, flow_in], {"source": source},
                 name=name or "TensorArrayGradV3")
    return op.outputs[0], op.outputs[1]


def _int32_op(op_type: str, inputs: list, arg: int, arg_name: str, attrs=None, name=None):
    """`op_type` with input `arg` converted to int32 inside the op's own name scope when it
    is not a tensor yet (``TensorArrayReadV3/index``), as TensorFlow's op wrappers do."""
    with op_scope(name, op_type, [inputs[arg]]) as scope:
        inputs = list(inputs)
        if not isinstance(inputs[arg], Tensor):
            inputs[arg] = convert_to_tensor(inputs[arg], dtype=_dtypes.int32, name=arg_name)
        return make_op(op_type, inputs, attrs, name=scope)


def tensor_array_write_v3(handle, index, value, flow_in, name=None) -> Tensor:
    return _int32_op("TensorArrayWriteV3", [handle, index, value, flow_in], 1, "index",
                     name=name).outputs[0]


def tensor_array_read_v3(handle, index, flow_in, dtype, name=None) -> Tensor:
    return _int32_op("TensorArrayReadV3", [handle, index, flow_in], 1, "index",
                     {"dtype": _dtypes.as_dtype(dtype).base_dtype}, name=name).outputs[0]


def tensor_array_gather_v3(handle, indices, flow_in, dtype, element_shape=None,
                           name=None) -> Tensor:
    return _int32_op("TensorArrayGatherV3", [handle, indices, flow_in], 1, "indices", {
        "dtype": _dtypes.as_dtype(dtype).base_dtype,
        "element_shape": as_shape(element_shape)}, name=name).outputs[0]


def tensor_array_scatter_v3(handle, indices, value, flow_in, name=None) -> Tensor:
    return _int32_op("TensorArrayScatterV3", [handle, indices, value, flow_in], 1, "indices",
                     name=name).outputs[0]


def tensor_array_concat_v3(handle, flow_in, dtype, element_shape_except0=None,
                           name=None) -> tuple[Tensor, Tensor]:
    op = make_op("TensorArrayConcatV3", [handle, flow_in], {
        "dtype": _dtypes.as_dtype(dtype).base_dtype,
        "element_shape_except0": as_shape(element_shape_except0)},
        name=name or "TensorArrayConcatV3")
    return op.outputs[0], op.outputs[1]


def tensor_array_split_v3(handle, value, lengths, flow_in, name=None) -> Tensor:
    return make_op("TensorArraySplitV3", [handle, value, lengths, flow_in],
                   name=name or "TensorArraySplitV3").outputs[0]


def tensor_array_size_v3(handle, flow_in, name=None) -> Tensor:
    return make_op("TensorArraySizeV3", [handle, flow_in],
                   name=name or "TensorArraySizeV3").outputs[0]


def tensor_array_close_v3(handle, name=None) -> Operation:
    return make_op("TensorArrayCloseV3", [handle], name=name or "TensorArrayCloseV3")


# -- gradients ----------------------------------------------------------------------------
def grad_source(grad: Tensor | None) -> str:
    """The `tf.gradients` pass that `grad` belongs to: the leading ``gradients...``
    component of its name (each pass gets its own gradient arrays)."""
    if grad is None:
        return "gradients"
    for part in grad.op.name.split("/"):
        if part.startswith("gradients"):
            return part
    return "gradients"


def _grad_array(op: Operation, flow: Tensor, grad) -> Tensor:
    handle = op.inputs[0]
    g_handle, _ = tensor_array_grad_v3(handle, flow, grad_source(grad))
    return g_handle


def _dense(g):
    return None if g is None else dense(g)


def _flow_grad(op: Operation, flow_grad) -> Tensor:
    if flow_grad is not None:
        return _dense(flow_grad)
    return zeros_like(op.outputs[0])


@register_gradient("TensorArrayReadV3")
def _read_grad(op: Operation, grad):
    _, index, flow = op.inputs
    g = _grad_array(op, flow, grad)
    w = tensor_array_write_v3(g, index, _dense(grad), flow)
    return [None, None, w]


@register_gradient("TensorArrayWriteV3")
def _write_grad(op: Operation, flow_grad):
    _, index, value, _ = op.inputs
    flow = _flow_grad(op, flow_grad)
    g = _grad_array(op, flow, flow_grad)
    gv = tensor_array_read_v3(g, index, flow, value.dtype.base_dtype)
    gv.set_shape(value.shape)
    return [None, None, gv, flow]


@register_gradient("TensorArrayGatherV3")
def _gather_grad(op: Operation, grad):
    _, indices, flow = op.inputs
    g = _grad_array(op, flow, grad)
    w = tensor_array_scatter_v3(g, indices, _dense(grad), flow)
    return [None, None, w]


@register_gradient("TensorArrayScatterV3")
def _scatter_grad(op: Operation, flow_grad):
    _, indices, value, _ = op.inputs
    flow = _flow_grad(op, flow_grad)
    g = _grad_array(op, flow, flow_grad)
    gv = tensor_array_gather_v3(g, indices, flow, value.dtype.base_dtype,
                                value.shape[1:] if value.shape.ndims else None)
    gv.set_shape(value.shape)
    return [None, None, gv, flow]


@register_gradient("TensorArrayConcatV3")
def _concat_grad(op: Operation, grad, _lengths_grad=None):
    flow = op.inputs[1]
    g = _grad_array(op, flow, grad)
    w = tensor_array_split_v3(g, _dense(grad), op.outputs[1], flow)
    return [None, w]


@register_gradient("TensorArraySplitV3")
def _split_grad(op: Operation, flow_grad):
    _, value, _, _ = op.inputs
    flow = _flow_grad(op, flow_grad)
    g = _grad_array(op, flow, flow_grad)
    gv, _ = tensor_array_concat_v3(g, flow, value.dtype.base_dtype,
                                   value.shape[1:] if value.shape.ndims else None)
    gv.set_shape(value.shape)
    return [None, gv, None, flow]
