"""Convolution op types that graphs hold beside the ones `tf.nn` builds:
``Conv2DBackpropInputV2`` / ``Conv2DBackpropFilterV2`` (TensorFlow 2's spellings, taking
the input and filter tensors rather than their shapes), TF1's ``Conv3DBackpropInput`` /
``Conv3DBackpropFilter`` (likewise, ``NDHWC`` only), ``MaxPoolGradGradWithArgmax``,
TensorFlow 2's generic ``Conv`` (leading batch axes, 2 or 3 spatial axes), and the
mirror-pad (``FusedPadConv2D``) and resize-then-mirror-pad (``FusedResizeAndPadConv2D``)
convolutions that TensorFlow's graph transforms fuse for inference. None has a gradient
in TensorFlow (tf.gradients raises LookupError), here as there. Kernels:
`flowgraph/backends/cpu/kernels_conv_raw.py`, which call the convolution, padding and
resize kernels of the unfused ops.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> y = tf.raw_ops.FusedPadConv2D(input=np.ones([1, 4, 4, 1], np.float32),
...                               paddings=[[0, 0], [1, 1], [1, 1], [0, 0]],
...                               filter=np.ones([3, 3, 1, 2], np.float32), mode="REFLECT",
...                               strides=[1, 1, 1, 1], padding="VALID")
>>> y.shape.as_list()
[1, 4, 4, 2]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.nn_ops import window_output_size
from flowgraph.ops.nn_pool_argmax import _pooled_shape

__all__: list[str] = []

_CONV2D_V2_ATTRS = {"strides": None, "use_cudnn_on_gpu": True, "padding": None,
                    "explicit_paddings": (), "data_format": "NHWC",
                    "dilations": (1, 1, 1, 1)}
_CONV3D_V1_ATTRS = {"strides": None, "padding": None, "dilations": (1, 1, 1, 1, 1)}


def _ranked(op, s: TensorShape, rank: int, what: str) -> TensorShape:
    if s.ndims is not None and s.ndims != rank:
        raise op.shape_error(f"{what} must be {rank}-D, got rank {s.ndims}")
    return s if s.ndims is not None else TensorShape([None] * rank)


@register_op("Conv2DBackpropInputV2", attrs=dict(_CONV2D_V2_ATTRS), cost=OpCost.EXPENSIVE)
def _conv2d_input_v2_shape(op, x, f, dy):
    _ranked(op, f, 4, "filter")
    _ranked(op, dy, 4, "out_backprop")
    return [_ranked(op, x, 4, "input")]


@register_op("Conv2DBackpropFilterV2", attrs=dict(_CONV2D_V2_ATTRS), cost=OpCost.EXPENSIVE)
def _conv2d_filter_v2_shape(op, x, f, dy):
    _ranked(op, x, 4, "input")
    _ranked(op, dy, 4, "out_backprop")
    return [_ranked(op, f, 4, "filter")]


@register_op("Conv3DBackpropInput", attrs=dict(_CONV3D_V1_ATTRS), cost=OpCost.EXPENSIVE)
def _conv3d_input_v1_shape(op, x, f, dy):
    _ranked(op, f, 5, "filter")
    _ranked(op, dy, 5, "out_backprop")
    return [_ranked(op, x, 5, "input")]


@register_op("Conv3DBackpropFilter", attrs=dict(_CONV3D_V1_ATTRS), cost=OpCost.EXPENSIVE)
def _conv3d_filter_v1_shape(op, x, f, dy):
    _ranked(op, x, 5, "input")
    _ranked(op, dy, 5, "out_backprop")
    return [_ranked(op, f, 5, "filter")]


@register_op("MaxPoolGradGradWithArgmax",
             attrs={"ksize": None, "strides": None, "padding": None,
                    "include_batch_in_index": False},
             cost=OpCost.EXPENSIVE)
def _max_pool_grad_grad_argmax_shape(op, x, grad, argmax):
    return [_pooled_shape(op, x).merge_with(_ranked(op, argmax, 4, "argmax"))]


def _fused_conv_shape(op, x: TensorShape, f: TensorShape, size_index: int | None,
                      pad_index: int) -> TensorShape:
    x = _ranked(op, x, 4, "input")
    f = _ranked(op, f, 4, "filter")
    if op.attrs["mode"] not in ("REFLECT", "SYMMETRIC"):
        raise op.shape_error(f"mode must be 'REFLECT' or 'SYMMETRIC', got "
                             f"{op.attrs['mode']!r}")
    strides = list(op.attrs["strides"])
    if len(strides) != 4 or strides[0] != 1 or strides[3] != 1:
        raise op.shape_error(f"strides must be [1, h, w, 1], got {strides}")
    if not x[3].is_compatible_with(f[2]):
        raise op.shape_error(f"the input's depth {x[3]} and the filter's {f[2]} differ")
    dims = x.as_list()
    if size_index is not None:
        size = constant_value(op.inputs[size_index])
        dims[1:3] = [None, None] if size is None else [int(v) for v in np.reshape(size, -1)]
    pads = constant_value(op.inputs[pad_index])
    if pads is None:
        dims[1:3] = [None, None]
    else:
        pads = np.asarray(pads).reshape(4, 2)
        for axis in (1, 2):
            if dims[axis] is not None:
                dims[axis] += int(pads[axis].sum())
    padded = TensorShape(dims)
    out = [window_output_size(op, padded[axis], f[axis - 1], strides[axis], 1,
                              op.attrs["padding"]) for axis in (1, 2)]
    return TensorShape([padded[0], *out, f[3]])


@register_op("Conv", attrs={"strides": None, "padding": None, "explicit_paddings": (),
                            "data_format": "CHANNELS_LAST", "dilations": (), "batch_dims": 1,
                            "groups": 1}, cost=OpCost.EXPENSIVE)
def _conv_shape(op, x, f):
    """TensorFlow 2's N-D convolution: ``batch_dims`` leading batch axes, then the spatial
    axes and the channels (last, or first after the batch with ``CHANNELS_FIRST``)."""
    if f.ndims is None:
        return [TensorShape(None)]
    n = f.ndims - 2
    bd = int(op.attrs["batch_dims"])
    if n not in (2, 3) or bd < 1:
        raise op.shape_error(f"the filter must be 4-D or 5-D (2 or 3 spatial dimensions) and "
                             f"batch_dims at least 1, got rank {f.ndims} and batch_dims {bd}")
    if op.attrs["data_format"] not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise op.shape_error(f"data_format must be CHANNELS_LAST or CHANNELS_FIRST, got "
                             f"{op.attrs['data_format']!r}")
    if int(op.attrs["groups"]) != 1:
        raise op.shape_error(f"grouped convolution (groups={op.attrs['groups']}) is not "
                             "implemented on the CPU, as in TensorFlow")
    x = _ranked(op, x, bd + n + 1, "input")
    last = op.attrs["data_format"] == "CHANNELS_LAST"
    dims = x.as_list()
    spatial = dims[bd:bd + n] if last else dims[bd + 1:]
    strides = list(op.attrs["strides"])
    dil = list(op.attrs["dilations"]) or [1] * (n + 2)
    if len(strides) != n + 2 or len(dil) != n + 2:
        raise op.shape_error(f"strides and dilations must have {n + 2} entries, got "
                             f"{strides} and {dil}")
    pads = list(op.attrs["explicit_paddings"]) or [0] * (2 * n + 4)
    at = (lambda i: 1 + i) if last else (lambda i: 2 + i)
    out = []
    for i, size in enumerate(spatial):
        a = at(i)
        out.append(window_output_size(op, TensorShape([size])[0], f[i].value, strides[a],
                                      dil[a], op.attrs["padding"],
                                      tuple(pads[2 * a:2 * a + 2])))
    depth = dims[-1] if last else dims[bd]
    if depth is not None and f[n].value is not None and depth != f[n].value:
        raise op.shape_error(f"the input's depth {depth} and the filter's input depth "
                             f"{f[n].value} differ")
    channels = f[n + 1].value
    batch = dims[:bd]
    return [TensorShape([*batch, *out, channels] if last else [*batch, channels, *out])]


@register_op("FusedPadConv2D", attrs={"mode": None, "strides": None, "padding": None},
             cost=OpCost.EXPENSIVE)
def _fused_pad_conv_shape(op, x, paddings, f):
    return [_fused_conv_shape(op, x, f, None, 1)]


@register_op("FusedResizeAndPadConv2D",
             attrs={"resize_align_corners": False, "mode": None, "strides": None,
                    "padding": None}, cost=OpCost.EXPENSIVE)
def _fused_resize_pad_conv_shape(op, x, size, paddings, f):
    return [_fused_conv_shape(op, x, f, 1, 2)]
