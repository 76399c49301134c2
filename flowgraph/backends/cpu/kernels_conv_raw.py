"""CPU kernels of `flowgraph/ops/nn_conv_raw_ops.py`: each is the unfused ops' kernels
run in turn (bilinear resize, mirror padding, 2-D convolution) or the backprop kernel
of the sizes-taking op with the sizes read off the tensor it was given."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_conv as _conv
from flowgraph.backends.cpu import kernels_conv3d as _conv3d
from flowgraph.backends.cpu.kernels_array_join import mirror_pad
from flowgraph.backends.cpu.kernels_image import resize_bilinear
from flowgraph.framework import errors

_FLOATS = ["float16", "float32", "float64"]


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


@cpu_kernel("Conv2DBackpropInputV2", fresh=True)
def conv2d_backprop_input_v2(x, f, dy, *, strides, padding, explicit_paddings=(),
                             dilations=(1, 1, 1, 1), data_format="NHWC"):
    return _conv.conv2d_backprop_input(np.array(x.shape, np.int64), f, dy, strides=strides,
                                       padding=padding, explicit_paddings=explicit_paddings,
                                       dilations=dilations, data_format=data_format)


@cpu_kernel("Conv2DBackpropFilterV2", fresh=True)
def conv2d_backprop_filter_v2(x, f, dy, *, strides, padding, explicit_paddings=(),
                              dilations=(1, 1, 1, 1), data_format="NHWC"):
    return _conv.conv2d_backprop_filter(x, np.array(f.shape, np.int64), dy, strides=strides,
                                        padding=padding, explicit_paddings=explicit_paddings,
                                        dilations=dilations, data_format=data_format)


@cpu_kernel("Conv3DBackpropInput", dtypes=_FLOATS, fresh=True)
def conv3d_backprop_input_v1(x, f, dy, *, strides, padding, dilations=(1, 1, 1, 1, 1)):
    return _conv3d.conv3d_backprop_input(np.array(x.shape, np.int64), f, dy, strides=strides,
                                         padding=padding, dilations=dilations)


@cpu_kernel("Conv3DBackpropFilter", dtypes=_FLOATS, fresh=True)
def conv3d_backprop_filter_v1(x, f, dy, *, strides, padding, dilations=(1, 1, 1, 1, 1)):
    return _conv3d.conv3d_backprop_filter(x, np.array(f.shape, np.int64), dy, strides=strides,
                                          padding=padding, dilations=dilations)


@cpu_kernel("MaxPoolGradGradWithArgmax", fresh=True)
def max_pool_grad_grad_with_argmax(x, grad, argmax, *, include_batch_in_index, op):
    if x.ndim != 4 or grad.shape != x.shape:
        raise _invalid(op, f"input and grad must be 4-D of one shape, got {list(x.shape)} "
                       f"and {list(grad.shape)}")
    if argmax.ndim != 4 or argmax.shape[0] != x.shape[0] or argmax.shape[3] != x.shape[3]:
        raise _invalid(op, f"argmax must be the pooled shape [batch, rows, cols, depth] of the "
                       f"input {list(x.shape)}, got {list(argmax.shape)}")
    b = x.shape[0]
    per_image = x[0].size
    idx = argmax.astype(np.int64).reshape(b, -1)
    if not include_batch_in_index:
        idx = idx + (np.arange(b) * per_image)[:, None]
    if idx.size and (idx.min() < 0 or idx.max() >= b * per_image):
        raise _invalid(op, f"argmax index {int(idx.max())} is outside the input's "
                       f"{b * per_image} elements")
    return np.ascontiguousarray(grad.reshape(-1)[idx.reshape(-1)].reshape(argmax.shape))


@cpu_kernel("Conv", dtypes=_FLOATS, fresh=True)
def conv(x, f, *, strides, padding, explicit_paddings=(), data_format="CHANNELS_LAST",
         dilations=(), batch_dims=1, groups=1, op):
    n = f.ndim - 2
    if n not in (2, 3) or x.ndim != batch_dims + n + 1 or groups != 1:
        raise _invalid(op, f"needs a 4-D or 5-D filter, an input of rank batch_dims + "
                       f"spatial + 1 and groups 1; got filter {list(f.shape)}, input "
                       f"{list(x.shape)}, batch_dims {batch_dims}, groups {groups}")
    last = data_format == "CHANNELS_LAST"
    batch = x.shape[:batch_dims]
    xs = x.reshape(-1, *x.shape[batch_dims:])
    if not last:  # to channels last
        xs = np.moveaxis(xs, 1, -1)
    strides = list(strides)
    dil = list(dilations) or [1] * (n + 2)
    if not last:
        strides, dil = [strides[0], *strides[2:], strides[1]], [dil[0], *dil[2:], dil[1]]
    if padding == "EXPLICIT":
        pairs = np.asarray(explicit_paddings, np.int64).reshape(-1, 2)
        if not last:
            pairs = np.concatenate([pairs[:1], pairs[2:], pairs[1:2]])
        xs = np.pad(xs, [tuple(p) for p in pairs.tolist()])
        padding = "VALID"
    if n == 2:
        y = _conv.conv2d(xs, f, strides=strides, padding=padding, dilations=dil)
    else:
        y = _conv3d.conv3d(xs, f, strides=strides, padding=padding, dilations=dil)
    if not last:
        y = np.moveaxis(y, -1, 1)
    return np.ascontiguousarray(y.reshape(*batch, *y.shape[1:]))


def _pad_conv(op, x, paddings, f, mode, strides, padding):
    if x.ndim != 4 or np.shape(paddings) != (4, 2):
        raise _invalid(op, f"input must be 4-D and paddings 4x2, got {list(x.shape)} and "
                       f"{list(np.shape(paddings))}")
    pads = np.asarray(paddings)
    if pads[0].any() or pads[3].any():
        raise _invalid(op, f"only the spatial dimensions may be padded, got {pads.tolist()}")
    padded = mirror_pad(x, paddings, mode=mode)
    return _conv.conv2d(padded, f, strides=strides, padding=padding)


@cpu_kernel("FusedPadConv2D", dtypes=_FLOATS, fresh=True)
def fused_pad_conv2d(x, paddings, f, *, mode, strides, padding, op):
    return _pad_conv(op, x, paddings, f, mode, strides, padding)


@cpu_kernel("FusedResizeAndPadConv2D", dtypes=_FLOATS, fresh=True)
def fused_resize_pad_conv2d(x, size, paddings, f, *, resize_align_corners, mode, strides,
                            padding, op):
    resized = resize_bilinear(x, size, align_corners=resize_align_corners,
                              half_pixel_centers=False).astype(x.dtype)
    return _pad_conv(op, resized, paddings, f, mode, strides, padding)
