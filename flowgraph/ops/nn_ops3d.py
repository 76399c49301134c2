"""TensorFlow's 3-D convolution and pooling op types: definitions, shape functions and
gradients. The wrappers (`tf.nn.conv3d`, `conv3d_transpose`, `max_pool3d`,
`avg_pool3d`) are in `flowgraph.ops.nn_conv3d_ops`; the CPU kernels in
`flowgraph/backends/cpu/kernels_conv3d.py`.

    op                      backward op(s)                           inputs
    Conv3D                  Conv3DBackpropInputV2                    (input_sizes, filter, dy)
                            Conv3DBackpropFilterV2                   (input, filter_sizes, dy)
    MaxPool3D               MaxPool3DGrad (-> MaxPool3DGradGrad)     (input, output, dy)
    AvgPool3D               AvgPool3DGrad                            (input_shape, dy)

Each backward op has a gradient too (each is linear in its gradient input), so second
derivatives work. As TensorFlow's CPU kernels: MaxPool3DGrad routes a window's gradient
to every element equal to its maximum, MaxPool3DGradGrad reads the first one.

Example
-------
>>> import flowgraph as tf
>>> y = tf.nn.conv3d(tf.ones([1, 3, 3, 3, 1]), tf.ones([2, 2, 2, 1, 1]), 1, "VALID")
>>> y.op.type, y.shape.as_list()
('Conv3D', [1, 2, 2, 2, 1])
"""

from __future__ import annotations

from flowgraph.framework.constant_op import constant_value_as_shape
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops as _a
from flowgraph.ops.array_grad import shape_of
from flowgraph.ops.nn_ops import window_output_size
from flowgraph.ops.op_util import make_tensor

__all__: list[str] = []  # op definitions only

_CONV_ATTRS = {"strides": None, "padding": "VALID", "data_format": "NDHWC",
               "dilations": [1, 1, 1, 1, 1]}
_POOL_ATTRS = {"ksize": None, "strides": None, "padding": "VALID", "data_format": "NDHWC"}


def _axes(data_format: str) -> tuple[list[int], int]:
    """(the spatial axes, the channel axis) of a 5-D tensor in `data_format`."""
    return ([2, 3, 4], 1) if data_format == "NCDHW" else ([1, 2, 3], 4)


def _five_d(op, shape: TensorShape, what: str) -> TensorShape:
    if shape.ndims is not None and shape.ndims != 5:
        raise op.shape_error(f"{what} must be 5-D but has rank {shape.ndims} (shape {shape})")
    return TensorShape([None] * 5) if shape.ndims is None else shape


def _output(op, x: TensorShape, window, channels) -> TensorShape:
    """The output shape of a window op over `x` with window sizes `window` (depth,
    height, width) and `channels` output channels."""
    spatial, c = _axes(op.attrs["data_format"])
    strides = op.attrs["strides"]
    dil = op.attrs.get("dilations") or [1] * 5
    dims = [None] * 5
    dims[0], dims[c] = x[0], channels
    for a, k in zip(spatial, window, strict=True):
        dims[a] = window_output_size(op, x[a], k, strides[a], dil[a], op.attrs["padding"])
    return TensorShape(dims)


def conv3d_output_shape(x: TensorShape, f: TensorShape, attrs: dict) -> TensorShape:
    """The shape of ``Conv3D`` of `x` with filter `f` under `attrs` (None where unknown;
    a negative 'VALID' size reads as unknown)."""
    spatial, c = _axes(attrs["data_format"])
    dims = [None] * 5
    dims[0], dims[c] = x[0].value, f[4].value
    for a, k in zip(spatial, (f[0].value, f[1].value, f[2].value), strict=True):
        n, s, d = x[a].value, attrs["strides"][a], attrs["dilations"][a]
        if n is None or (k is None and attrs["padding"] == "VALID"):
            continue
        if attrs["padding"] == "SAME":
            dims[a] = -(-n // s)
        elif n >= (k - 1) * d + 1:
            dims[a] = (n - (k - 1) * d - 1) // s + 1
    return TensorShape(dims)


@register_op("Conv3D", attrs=dict(_CONV_ATTRS), cost=OpCost.BLAS)
def _conv3d_shape(op, x, f):
    x, f = _five_d(op, x, "input"), _five_d(op, f, "filter")
    _, c = _axes(op.attrs["data_format"])
    if not x[c].is_compatible_with(f[3]):
        raise op.shape_error(f"input depth {x[c]} (input shape {x}) does not match the "
                             f"filter's in_channels {f[3]} (filter shape {f})")
    return [_output(op, x, [f[0], f[1], f[2]], f[4])]


@register_op("Conv3DBackpropInputV2", attrs=dict(_CONV_ATTRS), cost=OpCost.BLAS,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _conv3d_backprop_input_shape(op, sizes, f, dy):
    return [constant_value_as_shape(op.inputs[0]).merge_with(TensorShape([None] * 5))]


@register_op("Conv3DBackpropFilterV2", attrs=dict(_CONV_ATTRS), cost=OpCost.BLAS)
def _conv3d_backprop_filter_shape(op, x, sizes, dy):
    return [constant_value_as_shape(op.inputs[1]).merge_with(TensorShape([None] * 5))]


def _pool_shape(op, x):
    x = _five_d(op, x, "input")
    spatial, c = _axes(op.attrs["data_format"])
    k = op.attrs["ksize"]
    return [_output(op, x, [k[a] for a in spatial], x[c])]


register_op("MaxPool3D", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE)(_pool_shape)
register_op("AvgPool3D", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE)(_pool_shape)


@register_op("MaxPool3DGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE,
             dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype])
def _max_pool3d_grad_shape(op, x, y, dy):
    return [x]


@register_op("MaxPool3DGradGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool3d_grad_grad_shape(op, x, y, ddx):
    return [y]


@register_op("AvgPool3DGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _avg_pool3d_grad_shape(op, sizes, dy):
    return [constant_value_as_shape(op.inputs[0]).merge_with(TensorShape([None] * 5))]


# -- gradients ----------------------------------------------------------------------------------
def _attrs(op, keys) -> dict:
    return {k: op.attrs[k] for k in keys}


def conv3d_backprop_input(sizes, f, dy, attrs: dict, name: str = "Conv3DBackpropInputV2"):
    return make_tensor("Conv3DBackpropInputV2", [sizes, f, dy], attrs, name=name)


def conv3d_backprop_filter(x, sizes, dy, attrs: dict, name: str = "Conv3DBackpropFilterV2"):
    return make_tensor("Conv3DBackpropFilterV2", [x, sizes, dy], attrs, name=name)


@register_gradient("Conv3D")
def _conv3d_grad(op, grad):
    x, f = op.inputs
    attrs = _attrs(op, _CONV_ATTRS)
    sx, sf = _a.shape_n([x, f])
    return [conv3d_backprop_input(sx, f, grad, attrs), conv3d_backprop_filter(x, sf, grad, attrs)]


@register_gradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    attrs = _attrs(op, _CONV_ATTRS)
    return [None, conv3d_backprop_filter(grad, shape_of(f), dy, attrs),
            make_tensor("Conv3D", [grad, f], attrs, name="Conv3D")]


@register_gradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _attrs(op, _CONV_ATTRS)
    return [conv3d_backprop_input(shape_of(x), grad, dy, attrs), None,
            make_tensor("Conv3D", [x, grad], attrs, name="Conv3D")]


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    return [make_tensor("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad],
                        _attrs(op, _POOL_ATTRS), name="MaxPool3DGrad")]


@register_gradient("MaxPool3DGrad")
def _max_pool3d_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [_a.zeros_like(x), _a.zeros_like(y),
            make_tensor("MaxPool3DGradGrad", [x, y, grad], _attrs(op, _POOL_ATTRS),
                        name="MaxPool3DGradGrad")]


@register_gradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [_a.zeros_like(x), _a.zeros_like(y),
            make_tensor("MaxPool3DGrad", [x, y, grad], _attrs(op, _POOL_ATTRS),
                        name="MaxPool3DGrad")]


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    return [make_tensor("AvgPool3DGrad", [shape_of(op.inputs[0]), grad],
                        _attrs(op, _POOL_ATTRS), name="AvgPool3DGrad")]


@register_gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op, grad):
    return [None, make_tensor("AvgPool3D", [grad], _attrs(op, _POOL_ATTRS), name="AvgPool3D")]
