"""Neural-network ops on quantized tensors: ``QuantizedReluX``, ``QuantizedMaxPool``,
``QuantizedAvgPool`` and ``QuantizedConv2D`` (`tf.nn.quantized_*`). Each takes the
codes plus the float range they stand for and returns codes plus a range, like the ops
of `flowgraph.ops.quantize_ops`. Pooling keeps the input's range; the convolution sums
products of zero-point-corrected codes into ``qint32`` and returns the range of one
output step times the ``qint32`` limits. None of them has a gradient (TensorFlow
registers none).

Example
-------
>>> import flowgraph as tf, numpy as np
>>> x = tf.bitcast(tf.constant(np.uint8(range(16)).reshape(1, 4, 4, 1)), tf.quint8)
>>> out, lo, hi = tf.nn.quantized_max_pool(x, 0.0, 1.0, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
>>> tf.Session().run(out).view("u1").ravel().tolist()
[5, 7, 13, 15]
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.op_util import make_op
from flowgraph.ops.quantize_ops import check_quantized

__all__ = ["quantized_avg_pool", "quantized_conv2d", "quantized_max_pool",
           "quantized_relu_x"]

_F32 = _dtypes.float32
QuantizedReluX = collections.namedtuple(
    "QuantizedReluX", ["activations", "min_activations", "max_activations"])
QuantizedMaxPool = collections.namedtuple("QuantizedMaxPool",
                                          ["output", "min_output", "max_output"])
QuantizedAvgPool = collections.namedtuple("QuantizedAvgPool",
                                          ["output", "min_output", "max_output"])
QuantizedConv2D = collections.namedtuple("QuantizedConv2D",
                                         ["output", "min_output", "max_output"])
_SCALAR = TensorShape([])


def _out_size(n, k, stride, padding):
    if n is None or k is None:
        return None
    if padding == "SAME":
        return -(-n // stride)
    return max(0, -(-(n - k + 1) // stride))


def _window_shape(op, x, kh, kw, channels):
    strides = op.attrs["strides"]
    if x.ndims is None:
        return TensorShape([None, None, None, channels])
    if x.ndims != 4:
        raise op.shape_error(f"input must be 4-D [batch, height, width, channels], got "
                             f"rank {x.ndims}")
    pad = op.attrs["padding"]
    oh = _out_size(Dimension(x[1]).value, kh, strides[1], pad)
    ow = _out_size(Dimension(x[2]).value, kw, strides[2], pad)
    return TensorShape([x[0], oh, ow, channels])


_POOL_ATTRS = {"T": None, "ksize": None, "strides": None, "padding": "VALID"}


def _pool_shape(op, x, mn, mx):
    k = op.attrs["ksize"]
    channels = x[3] if x.ndims == 4 else None
    return [_window_shape(op, x, k[1], k[2], channels), _SCALAR, _SCALAR]


def _same_and_ranges(op):
    return [op.inputs[0].dtype.base_dtype, _F32, _F32]


register_op("QuantizedMaxPool", attrs=_POOL_ATTRS, num_outputs=3, cost=OpCost.EXPENSIVE,
            dtype_fn=_same_and_ranges)(_pool_shape)
register_op("QuantizedAvgPool", attrs=_POOL_ATTRS, num_outputs=3, cost=OpCost.EXPENSIVE,
            dtype_fn=_same_and_ranges)(_pool_shape)


@register_op("QuantizedReluX", attrs={"Tinput": None, "out_type": _dtypes.quint8},
             num_outputs=3,
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["out_type"]), _F32, _F32])
def _relu_x_shape(op, x, max_value, mn, mx):
    return [x, _SCALAR, _SCALAR]


@register_op("QuantizedConv2D", num_outputs=3, cost=OpCost.BLAS,
             attrs={"Tinput": None, "Tfilter": None, "out_type": _dtypes.qint32,
                    "strides": None, "padding": "VALID", "dilations": [1, 1, 1, 1]},
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["out_type"]), _F32, _F32])
def _quantized_conv_shape(op, x, f, *ranges):
    if f.ndims is not None and f.ndims != 4:
        raise op.shape_error(f"filter must be 4-D [height, width, in, out], got rank "
                             f"{f.ndims}")
    known = f.ndims == 4
    if known and x.ndims == 4 and not Dimension(x[3]).is_compatible_with(f[2]):
        raise op.shape_error(f"input depth {x[3]} does not match the filter's in "
                             f"channels {f[2]}")
    kh, kw = (Dimension(f[0]).value, Dimension(f[1]).value) if known else (None, None)
    out = _window_shape(op, x, kh, kw, f[3] if known else None)
    return [out, _SCALAR, _SCALAR]


# -- wrappers ---------------------------------------------------------------------------

def _four(values, what, attr):
    values = [int(v) for v in values]
    if len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise ValueError(f"{what}: {attr} must be 4 numbers [1, h, w, 1] (no pooling or "
                         f"striding over batch or channels), got {values}")
    return values


def _padding(padding, what):
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return padding


def _range(value, name):
    return convert_to_tensor(value, dtype=_F32, name=name)


def _pool(op_type, result, input, min_input, max_input, ksize, strides, padding, name):
    what = "tf.nn." + ("quantized_max_pool" if op_type == "QuantizedMaxPool"
                       else "quantized_avg_pool")
    x = convert_to_tensor(input, name="input")
    attrs = {"T": check_quantized(x.dtype, what), "ksize": _four(ksize, what, "ksize"),
             "strides": _four(strides, what, "strides"), "padding": _padding(padding, what)}
    op = make_op(op_type, [x, _range(min_input, "min_input"), _range(max_input, "max_input")],
                 attrs, name=name or op_type)
    return result(*op.outputs)


def quantized_max_pool(input, min_input, max_input, ksize, strides, padding, name=None):
    """Max pooling of a 4-D quantized NHWC tensor; the range passes through unchanged.
    Returns ``(output, min_output, max_output)``.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.bitcast(tf.constant(np.uint8([[[[1], [9]], [[4], [3]]]])), tf.quint8)
    >>> y = tf.nn.quantized_max_pool(x, 0.0, 1.0, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y.output).view("u1").ravel().tolist()
    [9]
    """
    return _pool("QuantizedMaxPool", QuantizedMaxPool, input, min_input, max_input, ksize,
                 strides, padding, name)


def quantized_avg_pool(input, min_input, max_input, ksize, strides, padding, name=None):
    """Average pooling of a 4-D quantized NHWC tensor, on the codes in integer arithmetic
    (the sum over the window's valid positions divided by their count, truncated); the
    range passes through unchanged. Returns ``(output, min_output, max_output)``.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.bitcast(tf.constant(np.uint8([[[[1], [9]], [[4], [3]]]])), tf.quint8)
    >>> y = tf.nn.quantized_avg_pool(x, 0.0, 1.0, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y.output).view("u1").ravel().tolist()
    [4]
    """
    return _pool("QuantizedAvgPool", QuantizedAvgPool, input, min_input, max_input, ksize,
                 strides, padding, name)


def quantized_relu_x(features, max_value, min_features, max_features, out_type=_dtypes.quint8,
                     name=None):
    """Clamp quantized `features` to the codes of ``[0.0, max_value]`` (a ReLU capped at
    `max_value`); the range passes through unchanged. Returns
    ``(activations, min_activations, max_activations)``. (TensorFlow 2.15's CPU build
    declares this op but ships no kernel for it; flowgraph implements it.)

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.bitcast(tf.constant(np.uint8([0, 100, 255])), tf.quint8)   # [-1.0, 4.0]
    >>> y = tf.nn.quantized_relu_x(x, 2.0, -1.0, 4.0)
    >>> tf.Session().run(y.activations).view("u1").tolist()
    [51, 100, 153]
    """
    x = convert_to_tensor(features, name="features")
    tin = check_quantized(x.dtype, "tf.nn.quantized_relu_x", "Tinput")
    out_type = check_quantized(out_type, "tf.nn.quantized_relu_x", "out_type")
    op = make_op("QuantizedReluX", [x, _range(max_value, "max_value"),
                                    _range(min_features, "min_features"),
                                    _range(max_features, "max_features")],
                 {"Tinput": tin, "out_type": out_type}, name=name or "QuantizedReluX")
    return QuantizedReluX(*op.outputs)


def quantized_conv2d(input, filter, min_input, max_input, min_filter, max_filter, strides,
                     padding, out_type=_dtypes.qint32, dilations=(1, 1, 1, 1), name=None):
    """2-D convolution of quantized NHWC `input` with a quantized ``[h, w, in, out]``
    `filter`, each with its float range. The codes minus each operand's zero point
    (the code of 0.0) are multiplied and summed in 32-bit integers; padding contributes
    zero. Returns ``(output, min_output, max_output)`` with `output` of `out_type`
    (``qint32``) and the float range of its codes.

    Example
    -------
    >>> import flowgraph as tf, numpy as np
    >>> x = tf.bitcast(tf.constant(np.uint8([[[[10]], [[20]]]])), tf.quint8)
    >>> f = tf.bitcast(tf.constant(np.uint8([[[[3]]]])), tf.quint8)
    >>> y = tf.nn.quantized_conv2d(x, f, 0.0, 1.0, 0.0, 1.0, [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y.output).view("i4").ravel().tolist()
    [30, 60]
    """
    what = "tf.nn.quantized_conv2d"
    x = convert_to_tensor(input, name="input")
    f = convert_to_tensor(filter, name="filter")
    attrs = {"Tinput": check_quantized(x.dtype, what, "Tinput"),
             "Tfilter": check_quantized(f.dtype, what, "Tfilter"),
             "out_type": check_quantized(out_type, what, "out_type"),
             "strides": _four(strides, what, "strides"), "padding": _padding(padding, what),
             "dilations": [int(d) for d in dilations]}
    op = make_op("QuantizedConv2D",
                 [x, f, _range(min_input, "min_input"), _range(max_input, "max_input"),
                  _range(min_filter, "min_filter"), _range(max_filter, "max_filter")],
                 attrs, name=name or "QuantizedConv2D")
    return QuantizedConv2D(*op.outputs)
