"""TensorFlow's layout and normalization op types of the 2015-2017 image models: ``LRN``
(with ``LRNGrad``), ``SpaceToDepth`` / ``DepthToSpace``, the 4-D ``SpaceToBatch`` /
``BatchToSpace`` (one ``block_size`` for both spatial dimensions),
``BatchNormWithGlobalNormalization`` (with its gradient op), ``MaxPoolV2`` (window and
strides as tensors, with ``MaxPoolGradV2`` and ``MaxPoolGradGradV2``),
``DataFormatDimMap`` / ``DataFormatVecPermute`` (the layout optimizer's index maps) and
the morphological ``Dilation2D`` with its two backprop ops.

`tf.nn.lrn`, `tf.nn.space_to_depth`, `tf.nn.depth_to_space`, `tf.nn.dilation2d` and
`tf.nn.erosion2d` build these op types, as TensorFlow's do; the others come from frozen
graphs and `tf.raw_ops`. Kernels: `flowgraph/backends/cpu/kernels_nn_layout.py`.

Example
-------
>>> import flowgraph as tf
>>> y = tf.raw_ops.SpaceToDepth(input=tf.zeros([1, 4, 6, 2]), block_size=2)
>>> y.op.type, y.shape.as_list()
('SpaceToDepth', [1, 2, 3, 8])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.nn_ops import window_output_size
from flowgraph.ops.op_util import make_op, make_tensor

__all__: list[str] = []

_LRN_ATTRS = {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}


def _rank4(op, s: TensorShape, what: str) -> TensorShape:
    if s.ndims is not None and s.ndims != 4:
        raise op.shape_error(f"{what} must be 4-D, got rank {s.ndims}")
    return s if s.ndims is not None else TensorShape([None] * 4)


def _attr_names(op, *names):
    return {k: op.attrs[k] for k in names}


# -- LRN ---------------------------------------------------------------------------------
@register_op("LRN", attrs=dict(_LRN_ATTRS), cost=OpCost.EXPENSIVE)
def _lrn_shape(op, x):
    return [_rank4(op, x, "input")]


@register_op("LRNGrad", attrs=dict(_LRN_ATTRS), cost=OpCost.EXPENSIVE)
def _lrn_grad_shape(op, dy, x, y):
    out = _rank4(op, dy, "input_grads")
    for s, what in ((x, "input_image"), (y, "output_image")):
        s = _rank4(op, s, what)
        if not out.is_compatible_with(s):
            raise op.shape_error(f"input_grads {out} and {what} {s} must have one shape")
        out = out.merge_with(s)
    return [out]


@register_gradient("LRN")
def _lrn_grad(op, grad):
    return [make_tensor("LRNGrad", [grad, op.inputs[0], op.outputs[0]],
                        _attr_names(op, *_LRN_ATTRS))]


# -- SpaceToDepth / DepthToSpace -----------------------------------------------------------
def _block(op) -> int:
    b = int(op.attrs["block_size"])
    if b < 2:
        raise op.shape_error(f"block_size must be at least 2, got {b}")
    return b


def _layout_axes(op):
    fmt = op.attrs["data_format"]
    if fmt not in ("NHWC", "NCHW"):
        raise op.shape_error(f"data_format must be 'NHWC' or 'NCHW' (flowgraph has no "
                             f"NCHW_VECT_C), got {fmt!r}")
    return (2, 3, 1) if fmt == "NCHW" else (1, 2, 3)


@register_op("SpaceToDepth", attrs={"block_size": None, "data_format": "NHWC"})
def _space_to_depth_shape(op, x):
    b = _block(op)
    x = _rank4(op, x, "input")
    h, w, c = _layout_axes(op)
    dims = x.as_list()
    for axis, what in ((h, "height"), (w, "width")):
        if dims[axis] is not None and dims[axis] % b:
            raise op.shape_error(f"the {what} ({dims[axis]}) must be divisible by "
                                 f"block_size {b}")
        dims[axis] = None if dims[axis] is None else dims[axis] // b
    dims[c] = None if dims[c] is None else dims[c] * b * b
    return [TensorShape(dims)]


@register_op("DepthToSpace", attrs={"block_size": None, "data_format": "NHWC"})
def _depth_to_space_shape(op, x):
    b = _block(op)
    x = _rank4(op, x, "input")
    h, w, c = _layout_axes(op)
    dims = x.as_list()
    if dims[c] is not None and dims[c] % (b * b):
        raise op.shape_error(f"the depth ({dims[c]}) must be divisible by block_size * "
                             f"block_size = {b * b}")
    for axis in (h, w):
        dims[axis] = None if dims[axis] is None else dims[axis] * b
    dims[c] = None if dims[c] is None else dims[c] // (b * b)
    return [TensorShape(dims)]


@register_gradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    return [make_tensor("DepthToSpace", [grad], _attr_names(op, "block_size", "data_format"))]


@register_gradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    return [make_tensor("SpaceToDepth", [grad], _attr_names(op, "block_size", "data_format"))]


# -- SpaceToBatch / BatchToSpace (4-D, one block size) ------------------------------------
def _pairs(op, index: int, what: str):
    """The static ``[2, 2]`` paddings or crops (None where unknown)."""
    value = constant_value(op.inputs[index])
    if value is None:
        return None
    value = np.asarray(value)
    if value.shape != (2, 2):
        raise op.shape_error(f"{what} must be a 2x2 matrix, got shape {list(value.shape)}")
    if (value < 0).any():
        raise op.shape_error(f"{what} must be non-negative, got {value.tolist()}")
    return value.astype(np.int64)


@register_op("SpaceToBatch", attrs={"block_size": None})
def _space_to_batch_shape(op, x, paddings):
    b = _block(op)
    x = _rank4(op, x, "input")
    pads = _pairs(op, 1, "paddings")
    n, h, w, c = x.as_list()
    out = [None if n is None else n * b * b, None, None, c]
    if pads is not None:
        for i, size in enumerate((h, w)):
            if size is None:
                continue
            full = size + int(pads[i].sum())
            if full % b:
                raise op.shape_error(f"padded spatial dimension {i} ({full}) must be "
                                     f"divisible by block_size {b}")
            out[i + 1] = full // b
    return [TensorShape(out)]


@register_op("BatchToSpace", attrs={"block_size": None})
def _batch_to_space_shape(op, x, crops):
    b = _block(op)
    x = _rank4(op, x, "input")
    cuts = _pairs(op, 1, "crops")
    n, h, w, c = x.as_list()
    if n is not None and n % (b * b):
        raise op.shape_error(f"the batch ({n}) must be divisible by block_size * block_size "
                             f"= {b * b}")
    out = [None if n is None else n // (b * b), None, None, c]
    if cuts is not None:
        for i, size in enumerate((h, w)):
            if size is not None:
                full = size * b - int(cuts[i].sum())
                if full < 0:
                    raise op.shape_error(f"crops {cuts[i].tolist()} exceed spatial dimension "
                                         f"{i} ({size * b})")
                out[i + 1] = full
    return [TensorShape(out)]


@register_gradient("SpaceToBatch")
def _space_to_batch_grad(op, grad):
    return [make_tensor("BatchToSpace", [grad, op.inputs[1]],
                        {"block_size": op.attrs["block_size"]}), None]


@register_gradient("BatchToSpace")
def _batch_to_space_grad(op, grad):
    return [make_tensor("SpaceToBatch", [grad, op.inputs[1]],
                        {"block_size": op.attrs["block_size"]}), None]


# -- BatchNormWithGlobalNormalization ------------------------------------------------------
_BN_ATTRS = {"variance_epsilon": None, "scale_after_normalization": None}


def _vector_like(op, shapes, depth):
    for s, what in shapes:
        if s.ndims is not None and s.ndims != 1:
            raise op.shape_error(f"{what} must be 1-D, got rank {s.ndims}")
        if s.ndims == 1:
            if not depth.is_compatible_with(s[0]):
                raise op.shape_error(f"{what} has {s[0]} entries, the input's depth is {depth}")
            depth = depth.merge_with(s[0])
    return depth


@register_op("BatchNormWithGlobalNormalization", attrs=dict(_BN_ATTRS))
def _bn_global_shape(op, t, m, v, beta, gamma):
    t = _rank4(op, t, "t")
    depth = _vector_like(op, [(m, "m"), (v, "v"), (beta, "beta"), (gamma, "gamma")], t[3])
    return [TensorShape([t[0], t[1], t[2], depth])]


@register_op("BatchNormWithGlobalNormalizationGrad", attrs=dict(_BN_ATTRS), num_outputs=5)
def _bn_global_grad_shape(op, t, m, v, gamma, backprop):
    t = _rank4(op, t, "t")
    if not t.is_compatible_with(backprop):
        raise op.shape_error(f"backprop {backprop} must have the shape of t {t}")
    t = t.merge_with(backprop)
    depth = _vector_like(op, [(m, "m"), (v, "v"), (gamma, "gamma")], t[3])
    vec = TensorShape([depth])
    return [TensorShape([t[0], t[1], t[2], depth]), vec, vec, vec, vec]


@register_gradient("BatchNormWithGlobalNormalization")
def _bn_global_grad(op, grad):
    t, m, v, _, gamma = op.inputs
    dx, dm, dv, db, dg = make_op("BatchNormWithGlobalNormalizationGrad",
                                 [t, m, v, gamma, grad],
                                 _attr_names(op, *_BN_ATTRS)).outputs
    return [dx, dm, dv, db, dg]


# -- MaxPoolV2 family ----------------------------------------------------------------------
_POOL_V2_ATTRS = {"padding": None, "data_format": "NHWC"}


def _four_ints(op, index: int, what: str):
    value = constant_value(op.inputs[index])
    if value is None:
        return None
    value = [int(v) for v in np.reshape(value, -1)]
    if len(value) != 4:
        raise op.shape_error(f"{what} must have 4 elements, got {value}")
    return value


def _pool_v2_out(op, x: TensorShape, first: int = 1) -> TensorShape:
    """The pooled shape of `x`, with ksize and strides the op's inputs `first`, `first + 1`."""
    x = _rank4(op, x, "input")
    h, w, c = _layout_axes(op)
    ksize, strides = _four_ints(op, first, "ksize"), _four_ints(op, first + 1, "strides")
    dims = x.as_list()
    if ksize is None or strides is None:
        if op.attrs["padding"] == "SAME" and strides is not None:
            dims[h] = None if dims[h] is None else -(-dims[h] // strides[h])
            dims[w] = None if dims[w] is None else -(-dims[w] // strides[w])
            return TensorShape(dims)
        dims[h] = dims[w] = None
        return TensorShape(dims)
    if ksize[0] != 1 or strides[0] != 1:
        raise op.shape_error(f"pooling over the batch is not supported: ksize {ksize}, "
                             f"strides {strides}")
    if ksize[c] != 1 or strides[c] != 1:
        raise op.shape_error(f"pooling over the depth is not supported by flowgraph's "
                             f"MaxPoolV2: ksize {ksize}, strides {strides}")
    for axis in (h, w):
        dims[axis] = window_output_size(op, x[axis], ksize[axis], strides[axis], 1,
                                        op.attrs["padding"])
    return TensorShape(dims)


@register_op("MaxPoolV2", attrs=dict(_POOL_V2_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_v2_shape(op, x, ksize, strides):
    return [_pool_v2_out(op, x)]


@register_op("MaxPoolGradV2", attrs=dict(_POOL_V2_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_grad_v2_shape(op, x, y, grad, ksize, strides):
    return [_rank4(op, x, "orig_input")]


@register_op("MaxPoolGradGradV2", attrs=dict(_POOL_V2_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_grad_grad_v2_shape(op, x, y, grad, ksize, strides):
    return [_rank4(op, y, "orig_output").merge_with(_pool_v2_out(op, x, 3))]


@register_gradient("MaxPoolV2")
def _max_pool_v2_grad(op, grad):
    x, ksize, strides = op.inputs
    return [make_tensor("MaxPoolGradV2", [x, op.outputs[0], grad, ksize, strides],
                        _attr_names(op, *_POOL_V2_ATTRS)), None, None]


@register_gradient("MaxPoolGradV2")
def _max_pool_grad_v2_grad(op, grad):
    x, y, _, ksize, strides = op.inputs
    return [zeros_like(x), zeros_like(y),
            make_tensor("MaxPoolGradGradV2", [x, y, grad, ksize, strides],
                        _attr_names(op, *_POOL_V2_ATTRS)), None, None]


# -- DataFormatDimMap / DataFormatVecPermute -----------------------------------------------
_FORMAT_ATTRS = {"src_format": "NHWC", "dst_format": "NCHW"}


@register_op("DataFormatDimMap", attrs=dict(_FORMAT_ATTRS))
def _dim_map_shape(op, x):
    return [x]


@register_op("DataFormatVecPermute", attrs=dict(_FORMAT_ATTRS))
def _vec_permute_shape(op, x):
    if x.ndims is not None and x.ndims not in (1, 2):
        raise op.shape_error(f"input must be a vector or a 2-D tensor, got rank {x.ndims}")
    return [x]


# -- Dilation2D ------------------------------------------------------------------------------
_DILATION_ATTRS = {"strides": None, "rates": None, "padding": None}


def _dilation_out(op, x: TensorShape, f: TensorShape) -> TensorShape:
    x = _rank4(op, x, "input")
    if f.ndims is not None and f.ndims != 3:
        raise op.shape_error(f"filter must be 3-D [filter_height, filter_width, depth], got "
                             f"rank {f.ndims}")
    f = f if f.ndims is not None else TensorShape([None] * 3)
    if not x[3].is_compatible_with(f[2]):
        raise op.shape_error(f"the input's depth {x[3]} and the filter's {f[2]} differ")
    strides, rates = op.attrs["strides"], op.attrs["rates"]
    if len(strides) != 4 or len(rates) != 4:
        raise op.shape_error(f"strides and rates must have 4 elements, got {list(strides)}, "
                             f"{list(rates)}")
    dims = [x[0].value]
    for axis in (1, 2):
        dims.append(window_output_size(op, x[axis], f[axis - 1], strides[axis],
                                       rates[axis], op.attrs["padding"]))
    return TensorShape([*dims, x[3].merge_with(f[2]).value])


@register_op("Dilation2D", attrs=dict(_DILATION_ATTRS), cost=OpCost.EXPENSIVE)
def _dilation_shape(op, x, f):
    return [_dilation_out(op, x, f)]


@register_op("Dilation2DBackpropInput", attrs=dict(_DILATION_ATTRS), cost=OpCost.EXPENSIVE)
def _dilation_backprop_input_shape(op, x, f, dy):
    _dilation_out(op, x, f)
    return [_rank4(op, x, "input")]


@register_op("Dilation2DBackpropFilter", attrs=dict(_DILATION_ATTRS), cost=OpCost.EXPENSIVE)
def _dilation_backprop_filter_shape(op, x, f, dy):
    _dilation_out(op, x, f)
    return [f if f.ndims is not None else TensorShape([None] * 3)]


@register_gradient("Dilation2D")
def _dilation_grad(op, grad):
    x, f = op.inputs
    attrs = _attr_names(op, *_DILATION_ATTRS)
    return [make_tensor("Dilation2DBackpropInput", [x, f, grad], attrs),
            make_tensor("Dilation2DBackpropFilter", [x, f, grad], attrs)]


# TensorFlow registers no gradient for these (tf.gradients raises LookupError): LRNGrad,
# BatchNormWithGlobalNormalizationGrad, MaxPoolGradGradV2, DataFormatDimMap,
# DataFormatVecPermute, Dilation2DBackpropInput, Dilation2DBackpropFilter.
