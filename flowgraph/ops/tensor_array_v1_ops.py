"""The TensorArray op types of TensorFlow 1.0-1.2 graphs: ``TensorArray`` (v1, a ref
handle) and ``TensorArrayV2`` (a plain string handle) with their read, write, gather,
scatter, concat, split, size, close and grad ops, plus ``TensorArrayPack`` and
``TensorArrayUnpack`` (a gather or scatter of every element) and
``TensorArrayGradWithShape``.

A v1/v2 handle is a vector of two strings (TensorFlow's container and name); its value
at run time is the same `RunTensorArray` a ``TensorArrayV3`` handle carries, and each op
here computes what its ``V3`` form does (kernels: `flowgraph/backends/cpu/
kernels_tensor_array_v1.py`). TensorFlow refuses to *build* these op types in a graph
of its current GraphDef version (they are deprecated since versions 16 to 26), but it
imports and runs older graphs that hold them, and so does flowgraph. Their gradients
are the ``V3`` forms' (the gradient graph of an imported v1 loop holds ``V3`` ops).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.op_util import make_op
>>> h = make_op("TensorArrayV2", [tf.constant(2)], {"dtype": tf.float32}).outputs[0]
>>> f = make_op("TensorArrayUnpack", [h, tf.constant([[1.0, 2.0], [3.0, 4.0]]),
...             tf.constant(0.0)]).outputs[0]
>>> v = make_op("TensorArrayReadV2", [h, tf.constant(1), f],
...             {"dtype": tf.float32}).outputs[0]
>>> with tf.Session() as sess:
...     print(sess.run(v))
[3. 4.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import (
    get_op_def,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import tensor_array_ops
from flowgraph.ops.array_gen_ops import range as range_
from flowgraph.ops.op_util import attr_dtype, fixed_dtype
from flowgraph.ops.state_v1_ops import alias_shape_fn, check_handle

__all__: list[str] = []

_FLOW = _dtypes.float32
_CREATE_ATTRS = {"dtype": None, "element_shape": None, "dynamic_size": False,
                 "clear_after_read": True, "tensor_array_name": ""}


def _check_size(op, size):
    t = op.inputs[0]
    if not t.dtype.base_dtype.is_integer or size.ndims not in (None, 0):
        raise op.shape_error(f"input 'size' must be an int32 scalar, found "
                             f"{t.dtype.base_dtype.name} of shape {size}")
    return [TensorShape([2])]


register_op("TensorArray", attrs=_CREATE_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True, ref_outputs=(0,))(_check_size)
register_op("TensorArrayV2", attrs=_CREATE_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True)(_check_size)


def _grad_shape(op, handle, flow):
    check_handle(op, handle, 0)
    return [TensorShape([2])]


register_op("TensorArrayGrad", attrs={"source": None}, dtype_fn=fixed_dtype(_dtypes.string),
            stateful=True, ref_outputs=(0,))(_grad_shape)
register_op("TensorArrayGradV2", attrs={"source": None},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(_grad_shape)


@register_op("TensorArrayGradWithShape", attrs={"source": None}, num_outputs=2,
             dtype_fn=fixed_dtype(_dtypes.string, _FLOW), stateful=True)
def _grad_with_shape_shape(op, handle, flow, shape_to_prepend):
    if handle.ndims not in (None, 0):
        raise op.shape_error(f"input 'handle' must be a scalar, found shape {handle}")
    if shape_to_prepend.ndims not in (None, 1):
        raise op.shape_error(f"input 'shape_to_prepend' must be a vector, found shape "
                             f"{shape_to_prepend}")
    return [TensorShape([]), TensorShape([])]


# V3 form -> (v1 op type or None, v2 op type).
_FAMILY = {
    "TensorArrayReadV3": ("TensorArrayRead", "TensorArrayReadV2"),
    "TensorArrayWriteV3": ("TensorArrayWrite", "TensorArrayWriteV2"),
    "TensorArrayGatherV3": ("TensorArrayGather", "TensorArrayGatherV2"),
    "TensorArrayScatterV3": ("TensorArrayScatter", "TensorArrayScatterV2"),
    "TensorArrayConcatV3": ("TensorArrayConcat", "TensorArrayConcatV2"),
    "TensorArraySplitV3": ("TensorArraySplit", "TensorArraySplitV2"),
    "TensorArraySizeV3": ("TensorArraySize", "TensorArraySizeV2"),
    "TensorArrayCloseV3": ("TensorArrayClose", "TensorArrayCloseV2"),
}
# TensorFlow's gather and concat of a v1/v2 array know only the attributes' shapes.
_UNKNOWN = {"TensorArrayGatherV3": (0,)}

for _v3, _names in _FAMILY.items():
    _d = get_op_def(_v3)
    for _name, _ref in zip(_names, (True, False)):
        register_op(_name, attrs=_d.attrs, num_outputs=_d.num_outputs, dtype_fn=_d.dtype_fn,
                    stateful=True, cost=_d.cost, ref_inputs=(0,) if _ref else ())(
            alias_shape_fn(_d.shape_fn, (0,), _UNKNOWN.get(_v3, ())))
        if _d.differentiable:
            register_gradient(_name)(_d.gradient)
        else:
            not_differentiable(_name)


@register_op("TensorArrayPack", attrs={"dtype": None, "element_shape": None},
             dtype_fn=attr_dtype("dtype"), stateful=True, ref_inputs=(0,))
def _pack_shape(op, handle, flow):
    check_handle(op, handle, 0)
    elem = as_shape(op.attrs.get("element_shape"))
    return [TensorShape([None]).concatenate(elem) if elem.ndims is not None
            else TensorShape(None)]


@register_op("TensorArrayUnpack", dtype_fn=fixed_dtype(_FLOW), stateful=True,
             ref_inputs=(0,))
def _unpack_shape(op, handle, value, flow):
    check_handle(op, handle, 0)
    if value.ndims == 0:
        raise op.shape_error("input 'value' must have rank >= 1 (one row per element), "
                             "found a scalar")
    return [TensorShape([])]


def _all_indices(g, flow):
    return range_(tensor_array_ops.tensor_array_size_v3(g, flow))


@register_gradient("TensorArrayPack")
def _pack_grad(op, grad):
    flow = op.inputs[1]
    g = tensor_array_ops._grad_array(op, flow, grad)
    w = tensor_array_ops.tensor_array_scatter_v3(g, _all_indices(g, flow),
                                                 tensor_array_ops._dense(grad), flow)
    return [None, w]


@register_gradient("TensorArrayUnpack")
def _unpack_grad(op, flow_grad):
    value = op.inputs[1]
    flow = tensor_array_ops._flow_grad(op, flow_grad)
    g = tensor_array_ops._grad_array(op, flow, flow_grad)
    gv = tensor_array_ops.tensor_array_gather_v3(
        g, _all_indices(g, flow), flow, value.dtype.base_dtype,
        value.shape[1:] if value.shape.ndims else None)
    gv.set_shape(value.shape)
    return [None, gv, flow]


not_differentiable("TensorArray", "TensorArrayV2", "TensorArrayGrad", "TensorArrayGradV2",
                   "TensorArrayGradWithShape")
