"""TF 1.x `tf.nn` helpers composed from existing ops: dense layers (`xw_plus_b`,
`relu_layer`), activations (`swish`, `crelu`), block rearrangement (`space_to_depth`,
`depth_to_space`), pooling spellings (`max_pool1d`, `avg_pool1d`, `max_pool_v2`,
`avg_pool_v2`, `pool`), transposed and depthwise-backprop convolutions
(`conv1d_transpose`, `atrous_conv2d_transpose`, `depthwise_conv2d_backprop_input` /
`_filter`), `zero_fraction`, `approx_max_k` / `approx_min_k` (`tf.math`'s, from
`misc_compat_ops`), and the distribution-strategy loss helpers (`compute_average_loss`,
`scale_regularization_loss`) for a single replica. The normalization helpers
(`lrn`, `fused_batch_norm`, moments) live in `nn_norm_ops`.

Each is a short composition, so its gradient is that of its parts.

Example
-------
>>> import flowgraph as tf
>>> tf.nn.space_to_depth(tf.zeros([1, 4, 6, 3]), 2).shape.as_list()
[1, 2, 3, 12]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import (
    array_join_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_conv3d_ops,
    nn_conv_ops,
    nn_ops,
)
from flowgraph.ops.misc_compat_ops import approx_max_k, approx_min_k  # noqa: F401 (tf.nn)
from flowgraph.ops.op_util import make_tensor

__all__ = ["depth_to_space", "space_to_depth"]  # also at the top level; the rest: tf.nn


# -- dense layers and activations ---------------------------------------------------------
def xw_plus_b(x, weights, biases, name=None):
    """``matmul(x, weights) + biases``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.xw_plus_b([[1.0, 2.0]], [[1.0], [1.0]], [0.5]))
    array([[3.5]], dtype=float32)
    """
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return nn_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    """``relu(matmul(x, weights) + biases)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.relu_layer([[1.0, -2.0]], [[1.0], [1.0]], [0.5]))
    array([[0.]], dtype=float32)
    """
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return nn_ops.relu(xw_plus_b(x, weights, biases), name=scope)


def swish(features, beta=1.0, name=None):
    """``features * sigmoid(beta * features)`` (also called SiLU).

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(tf.nn.swish(1.0))), 4)
    0.7311
    """
    with name_scope(name, "swish", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return math_ops.multiply(x, math_ops.sigmoid(x * beta), name=scope)


def crelu(features, name=None, axis=-1):
    """``concat([relu(features), relu(-features)], axis)``: twice the channels.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.crelu([1.0, -2.0]))
    array([1., 0., 0., 2.], dtype=float32)
    """
    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        return nn_ops.relu(array_join_ops.concat([x, math_ops.negative(x)], axis,
                                                 name=scope))


def zero_fraction(value, name=None):
    """The fraction of entries of `value` equal to zero, a float32 scalar.

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.nn.zero_fraction([0.0, 1.0, 0.0, 3.0])))
    0.5
    """
    with name_scope(name, "zero_fraction", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        zero = math_ops.cast(math_ops.equal(x, math_ops.cast(0, x.dtype.base_dtype)),
                             _dtypes.float32)
        return math_reduce.reduce_mean(zero, name=scope)


# -- space_to_depth / depth_to_space ---------------------------------------------------------
def _nhwc(x, data_format, what):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return x if data_format == "NHWC" else array_shape_ops.transpose(x, [0, 2, 3, 1])


def _back(y, data_format):
    return y if data_format == "NHWC" else array_shape_ops.transpose(y, [0, 3, 1, 2])


def _layout_op(op_type: str, input, block_size, name, data_format, what: str):
    b = int(block_size)
    if b < 2:
        raise ValueError(f"{what}: block_size must be at least 2, got {block_size}")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    x = convert_to_tensor(input, name="input")
    return make_tensor(op_type, [x], {"block_size": b, "data_format": data_format},
                       name=name or op_type)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    """Move each ``block_size x block_size`` spatial block into the channels:
    ``[n, h, w, c] -> [n, h / b, w / b, b * b * c]`` (block row, block column, channel);
    one ``SpaceToDepth`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.range(4), [1, 2, 2, 1])
    >>> tf.Session().run(tf.space_to_depth(x, 2)).reshape(-1)
    array([0, 1, 2, 3], dtype=int32)
    """
    return _layout_op("SpaceToDepth", input, block_size, name, data_format, "space_to_depth")


def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    """The inverse of `space_to_depth`: ``[n, h, w, b * b * c] -> [n, h * b, w * b, c]``;
    one ``DepthToSpace`` op.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.depth_to_space(tf.zeros([1, 2, 3, 8]), 2).shape.as_list()
    [1, 4, 6, 2]
    """
    return _layout_op("DepthToSpace", input, block_size, name, data_format, "depth_to_space")


# -- pooling spellings ------------------------------------------------------------------------
def _pool1d(fn, input, ksize, strides, padding, data_format, name, what):
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"{what}: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    last = data_format == "NWC"

    def one(v, arg):
        seq = [int(v)] if isinstance(v, int) else [int(s) for s in v]
        if len(seq) == 3:
            seq = [seq[1] if last else seq[2]]
        if len(seq) != 1:
            raise ValueError(f"{what}: {arg} should be an int or a list of 1 or 3 ints, got "
                             f"{v!r}")
        return [1, 1, seq[0], 1] if last else [1, 1, 1, seq[0]]

    with name_scope(name, what, [input]) as scope:
        x = array_shape_ops.expand_dims(input, 1 if last else 2)
        y = fn(x, one(ksize, "ksize"), one(strides, "strides"), padding,
               data_format="NHWC" if last else "NCHW")
        return array_shape_ops.squeeze(y, [1 if last else 2], name=scope)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """Max pooling over the width of ``[batch, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.max_pool1d([[[1.0], [3.0], [2.0]]], 2, 1, "VALID")).ravel()
    array([3., 3.], dtype=float32)
    """
    return _pool1d(nn_ops.max_pool, input, ksize, strides, padding, data_format, name,
                   "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """Average pooling over the width of ``[batch, width, channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.avg_pool1d([[[1.0], [3.0]]], 2, 1, "VALID")).ravel()
    array([2.], dtype=float32)
    """
    return _pool1d(nn_ops.avg_pool, input, ksize, strides, padding, data_format, name,
                   "AvgPool1D")


def _pool_nd(kind, input, ksize, strides, padding, data_format, name):
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank == 3:
        fn = max_pool1d if kind == "max" else avg_pool1d
        return fn(x, ksize, strides, padding, data_format=data_format or "NWC", name=name)
    if rank == 4:
        fn = nn_ops.max_pool if kind == "max" else nn_ops.avg_pool
        return fn(x, ksize, strides, padding, data_format=data_format or "NHWC", name=name)
    if rank == 5:
        fn = nn_conv3d_ops.max_pool3d if kind == "max" else nn_conv3d_ops.avg_pool3d
        return fn(x, ksize, strides, padding, data_format=data_format or "NDHWC", name=name)
    raise ValueError(f"{kind}_pool: input must have a known rank of 3, 4 or 5, got shape "
                     f"{x.shape}")


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):
    """Max pooling of a 3-D, 4-D or 5-D input (1, 2 or 3 spatial dimensions).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.max_pool_v2(tf.zeros([1, 4, 4, 1]), 2, 2, "VALID").shape.as_list()
    [1, 2, 2, 1]
    """
    return _pool_nd("max", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):
    """Average pooling of a 3-D, 4-D or 5-D input (1, 2 or 3 spatial dimensions).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.avg_pool_v2(tf.zeros([1, 4, 2]), 2, 2, "VALID").shape.as_list()
    [1, 2, 2]
    """
    return _pool_nd("avg", input, ksize, strides, padding, data_format, name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None,
         name=None, data_format=None, dilations=None):
    """``pooling_type`` 'MAX' or 'AVG' over `window_shape` (one entry per spatial
    dimension); dilated windows are not supported.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.pool(tf.zeros([1, 4, 6, 2]), [2, 3], "AVG", "VALID").shape.as_list()
    [1, 3, 4, 2]
    """
    rate = dilations if dilation_rate is None else dilation_rate
    if rate is not None and any(int(r) != 1 for r in rate):
        raise ValueError(f"pool: dilation_rate {list(rate)} is not supported in flowgraph; "
                         f"only 1")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    window = [int(w) for w in window_shape]
    step = [1] * len(window) if strides is None else [int(s) for s in strides]
    kind = "max" if pooling_type == "MAX" else "avg"
    return _pool_nd(kind, input, window if len(window) > 1 else window[0],
                    step if len(step) > 1 else step[0], padding, data_format, name)


# -- transposed and depthwise-backprop convolutions -----------------------------------------
def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",
                     data_format="NWC", dilations=None, name=None):
    """The transpose of `conv1d`: ``[batch, width, in]`` to `output_shape` ``[batch,
    out_width, out_channels]``; `filters` is ``[width, out_channels, in_channels]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.conv1d_transpose(tf.ones([1, 3, 2]), tf.ones([2, 4, 2]), [1, 6, 4], 2)
    >>> y.shape.as_list()
    [1, 6, 4]
    """
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"conv1d_transpose: data_format must be 'NWC' or 'NCW', got "
                         f"{data_format!r}")
    last = data_format == "NWC"

    def widen(v):
        seq = [1] if v is None else ([int(v)] if isinstance(v, int) else [int(s) for s in v])
        if len(seq) == 3:
            seq = [seq[1] if last else seq[2]]
        return [1, seq[0]]

    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        axis = 1 if last else 2
        x = array_shape_ops.expand_dims(input, axis)
        f = array_shape_ops.expand_dims(filters, 0)
        sizes = convert_to_tensor(output_shape, _dtypes.int32, name="output_shape")
        sizes = array_join_ops.concat([sizes[:axis], [1], sizes[axis:]], 0)
        y = nn_conv_ops.conv2d_transpose(x, f, sizes, widen(strides), padding,
                                         data_format="NHWC" if last else "NCHW",
                                         dilations=widen(dilations))
        return array_shape_ops.squeeze(y, [axis], name=scope)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of `atrous_conv2d` (stride 1, taps `rate` apart); `filters` is
    ``[height, width, out_channels, in_channels]``.

    Built as TensorFlow builds it: `value` zero-padded so that `rate` divides the spatial
    sizes and moved into the batch (``SpaceToBatchND``), an undilated VALID
    ``Conv2DBackpropInput``, and the blocks moved back with the padding cropped
    (``BatchToSpaceND``). A `rate` of 1 is a plain `conv2d_transpose`.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.atrous_conv2d_transpose(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 1, 2]),
    ...                                   [1, 5, 5, 1], 2, "VALID")
    >>> y.op.type, y.shape.as_list()
    ('BatchToSpaceND', [1, 5, 5, 1])
    """
    from flowgraph.ops.array_extra_ops import batch_to_space_nd, space_to_batch_nd

    what = "atrous_conv2d_transpose"
    with name_scope(name, what, [value, filters]) as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        channels = value.shape[3] if value.shape.ndims is not None else None
        if channels is not None and filters.shape.ndims is not None and \
                not channels.is_compatible_with(filters.shape[3]):
            raise ValueError(f"{what}: the input channels of value ({channels}) do not match "
                             f"the input channels of filters ({filters.shape[3]}).")
        if not isinstance(rate, int) or rate < 1:
            raise ValueError(f"{what}: rate {rate!r} cannot be less than one.")
        if rate == 1:
            return nn_conv_ops.conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1],
                                                padding, data_format="NHWC")
        sizes = convert_to_tensor(output_shape, name="output_shape")
        if not sizes.shape.is_compatible_with([4]):
            raise ValueError(f"{what}: output_shape must have shape (4,), got {sizes.shape}.")
        if isinstance(output_shape, tuple | np.ndarray):
            output_shape = list(output_shape)
        if isinstance(output_shape, list) and filters.shape.ndims is not None and \
                not filters.shape[2].is_compatible_with(output_shape[3]):
            raise ValueError(f"{what}: output_shape {output_shape} does not match the "
                             f"output channels of filters ({filters.shape[2]}).")
        if not isinstance(output_shape, list):
            output_shape = sizes
        if padding == "SAME":
            fshape = (filters.shape.as_list() if filters.shape.is_fully_defined()
                      else array_shape_ops.shape(filters))
            # the filter upsampled with rate - 1 zeros between taps (the same arithmetic
            # as TensorFlow's, so that a filter of unknown size gets the same ops)
            f_height, f_width = fshape[0], fshape[1]
            height_up = f_height + (f_height - 1) * (rate - 1)
            width_up = f_width + (f_width - 1) * (rate - 1)
            pad_h, pad_w = height_up - 1, width_up - 1
            top = pad_h // 2
            bottom = pad_h - top
            left = pad_w // 2
            right = pad_w - left
        elif padding == "VALID":
            top = bottom = left = right = 0
        else:
            raise ValueError(f"{what}: padding must be either VALID or SAME, got {padding!r}.")
        height = output_shape[1] + top + bottom
        width = output_shape[2] + left + right
        extra_h = (rate - height % rate) % rate  # more padding so that rate divides them
        extra_w = (rate - width % rate) % rate
        blocks = space_to_batch_nd(value, np.array([rate, rate], np.int64),
                                   [[0, extra_h], [0, extra_w]])
        input_sizes = [rate * rate * output_shape[0], (height + extra_h) // rate,
                       (width + extra_w) // rate, output_shape[3]]
        with name_scope(None, "Conv2DBackpropInput") as op_name:
            input_sizes = convert_to_tensor(input_sizes, _dtypes.int32, name="input_sizes")
            attrs = nn_conv_ops._conv_attrs([1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1], what)
            dx = make_tensor("Conv2DBackpropInput", [input_sizes, filters, blocks], attrs,
                             name=op_name)
        crops = [[top, bottom + extra_h], [left, right + extra_w]]
        out = batch_to_space_nd(dx, np.array([rate, rate], np.int64), crops)
    del scope
    return out


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,
                                    data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of `depthwise_conv2d_native` with respect to its input, of shape
    `input_sizes`.

    Example
    -------
    >>> import flowgraph as tf
    >>> dx = tf.nn.depthwise_conv2d_backprop_input([1, 3, 3, 1], tf.ones([2, 2, 1, 1]),
    ...                                            tf.ones([1, 2, 2, 1]), [1] * 4, "VALID")
    >>> float(tf.Session().run(dx).sum())
    16.0
    """
    what = "depthwise_conv2d_backprop_input"
    attrs = nn_conv_ops._conv_attrs(strides, padding, data_format, dilations, what)
    with name_scope(name, what, [filter, out_backprop]) as scope:
        f, dy = nn_ops._conv_inputs(filter, out_backprop, what)
        sizes = convert_to_tensor(input_sizes, _dtypes.int32, name="input_sizes")
        return make_tensor("DepthwiseConv2dNativeBackpropInput", [sizes, f, dy], attrs,
                           name=scope)


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                                     data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of `depthwise_conv2d_native` with respect to its filter, of shape
    `filter_sizes`.

    Example
    -------
    >>> import flowgraph as tf
    >>> df = tf.nn.depthwise_conv2d_backprop_filter(tf.ones([1, 3, 3, 1]), [2, 2, 1, 1],
    ...                                             tf.ones([1, 2, 2, 1]), [1] * 4, "VALID")
    >>> tf.Session().run(df).ravel()
    array([4., 4., 4., 4.], dtype=float32)
    """
    what = "depthwise_conv2d_backprop_filter"
    attrs = nn_conv_ops._conv_attrs(strides, padding, data_format, dilations, what)
    with name_scope(name, what, [input, out_backprop]) as scope:
        x, dy = nn_ops._conv_inputs(input, out_backprop, what)
        sizes = convert_to_tensor(filter_sizes, _dtypes.int32, name="filter_sizes")
        return make_tensor("DepthwiseConv2dNativeBackpropFilter", [x, sizes, dy], attrs,
                           name=scope)


# -- single-replica loss helpers ----------------------------------------------------------------
def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """``sum(per_example_loss * sample_weight) / global_batch_size`` (default: the batch
    size), flowgraph running one replica.

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.nn.compute_average_loss([1.0, 3.0], global_batch_size=4)))
    1.0
    """
    with name_scope(None, "compute_average_loss", [per_example_loss]):
        loss = convert_to_tensor(per_example_loss, name="per_example_loss")
        if sample_weight is not None:
            loss = loss * math_ops.cast(sample_weight, loss.dtype.base_dtype)
        if global_batch_size is None:
            global_batch_size = array_shape_ops.shape(loss)[0]
        total = math_reduce.reduce_sum(loss)
        return math_ops.div_no_nan(total, math_ops.cast(global_batch_size,
                                                        loss.dtype.base_dtype))


def scale_regularization_loss(regularization_loss):
    """`regularization_loss` summed and divided by the number of replicas (one).

    Example
    -------
    >>> import flowgraph as tf
    >>> float(tf.Session().run(tf.nn.scale_regularization_loss([0.5, 1.5])))
    2.0
    """
    return math_reduce.reduce_sum(convert_to_tensor(regularization_loss))
