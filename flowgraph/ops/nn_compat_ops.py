"""More of TF1's ``tf.nn`` composed from existing ops: `conv_transpose`, the ``_v2``
backprop spellings and `conv3d_backprop_filter`, `with_space_to_batch`,
`max_pool_with_argmax`, `dilation2d`/`erosion2d` (grayscale morphology), and the CTC
helpers `collapse_repeated` and `ctc_greedy_decoder`.

`max_pool_with_argmax` is TensorFlow's ``MaxPoolWithArgmax`` op
(`flowgraph.ops.nn_pool_argmax`). The morphology ops gather each window from the padded
input (static spatial sizes), so their gradients follow from the gather and the
reduction, as TensorFlow's do (the maximum's position receives the gradient).

Example
-------
>>> import flowgraph as tf
>>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> out, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
>>> tf.Session().run(argmax).ravel().tolist()
[5, 7, 13, 15]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_extra_ops import (
    batch_to_space_nd,
    required_space_to_batch_paddings,
    space_to_batch_nd,
)
from flowgraph.ops.array_index_ops import boolean_mask, where
from flowgraph.ops.array_join_ops import concat, stack
from flowgraph.ops.array_shape_ops import fill, reshape, shape, zeros
from flowgraph.ops.math_ops import cast, logical_and, not_equal
from flowgraph.ops.math_reduce import cumsum, reduce_max
from flowgraph.ops.nn_pool_argmax import max_pool_with_argmax

__all__ = ["collapse_repeated", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2",
           "conv3d_backprop_filter", "conv3d_backprop_filter_v2", "conv_transpose",
           "ctc_greedy_decoder", "dilation2d", "erosion2d", "max_pool_with_argmax",
           "with_space_to_batch"]


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,
                   dilations=None, name=None):
    """`conv1d_transpose`, `conv2d_transpose` or `conv3d_transpose`, chosen by the length
    of `output_shape` (3, 4 or 5).

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.conv_transpose(tf.ones([1, 2, 2, 3]), tf.ones([2, 2, 4, 3]),
    ...                          [1, 4, 4, 4], [1, 2, 2, 1])
    >>> y.shape.as_list()
    [1, 4, 4, 4]
    """
    from flowgraph.ops.nn_conv3d_ops import conv3d_transpose
    from flowgraph.ops.nn_conv_ops import conv2d_transpose
    from flowgraph.ops.nn_extra_ops import conv1d_transpose

    sizes = convert_to_tensor(output_shape, name="output_shape")
    n = sizes.shape[0].value if sizes.shape.ndims == 1 else None
    if n not in (3, 4, 5):
        raise ValueError(f"tf.nn.conv_transpose: output_shape must have 3, 4 or 5 entries "
                         f"(1-D, 2-D or 3-D convolution), got shape {sizes.shape}")
    if n == 3:
        stride = strides if isinstance(strides, int) else list(strides)[-2 if len(
            list(strides)) == 3 else 0]
        return conv1d_transpose(input, filters, output_shape, stride, padding,
                                data_format=data_format or "NWC", dilations=dilations,
                                name=name)
    if n == 4:
        return conv2d_transpose(input, filters, output_shape, strides, padding,
                                data_format=data_format or "NHWC", name=name,
                                dilations=dilations)
    return conv3d_transpose(input, filters, output_shape, strides, padding,
                            data_format=data_format or "NDHWC", name=name,
                            dilations=dilations)


def _filter_gradient(conv, input, filter_sizes, out_backprop, name):
    from flowgraph.ops.gradients import gradients

    with name_scope(name, "filter_gradient", [input, out_backprop]) as scope:
        x = convert_to_tensor(input, name="input")
        f = zeros(filter_sizes, dtype=x.dtype.base_dtype)
        static = constant_value(convert_to_tensor(filter_sizes))
        if static is not None:
            f.set_shape([int(d) for d in static])
        y = conv(x, f)
        (grad,) = gradients(y, f, grad_ys=convert_to_tensor(out_backprop,
                                                            dtype=x.dtype.base_dtype))
        return reshape(grad, filter_sizes, name=scope)


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,
                              data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """The gradient of `conv3d` with respect to its filter, of shape `filter_sizes`.

    Example
    -------
    >>> import flowgraph as tf
    >>> df = tf.nn.conv3d_backprop_filter_v2(tf.ones([1, 2, 2, 2, 1]), [1, 1, 1, 1, 1],
    ...                                      tf.ones([1, 2, 2, 2, 1]), [1] * 5, "VALID")
    >>> float(tf.Session().run(df).sum())
    8.0
    """
    from flowgraph.ops.nn_conv3d_ops import conv3d

    return _filter_gradient(
        lambda x, f: conv3d(x, f, strides, padding, data_format=data_format,
                            dilations=dilations), input, filter_sizes, out_backprop,
        name or "conv3d_backprop_filter")


def conv3d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None):
    """TF 2.15's ``tf.compat.v1.nn.conv3d_backprop_filter``: `conv3d_backprop_filter_v2`
    itself (the filter's shape, `filter_sizes`, as a 1-D int tensor)."""
    return conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,
                                     data_format, dilations, name)


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,
                              use_cudnn_on_gpu=True, explicit_paddings=(),
                              data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """`tf.nn.conv2d_backprop_filter` taking the filter itself (its shape is used)."""
    from flowgraph.ops.nn_conv_ops import conv2d_backprop_filter

    return conv2d_backprop_filter(input, shape(filter), out_backprop, strides, padding,
                                  data_format=data_format, dilations=dilations, name=name)


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,
                             use_cudnn_on_gpu=True, explicit_paddings=(), data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None):
    """`tf.nn.conv2d_backprop_input` taking the input itself (its shape is used)."""
    from flowgraph.ops.nn_conv_ops import conv2d_backprop_input

    return conv2d_backprop_input(shape(input), filter, out_backprop, strides, padding,
                                 data_format=data_format, dilations=dilations, name=name)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,
                        spatial_dims=None, data_format=None):
    """Run ``op(converted_input, num_spatial_dims, padding)`` as a dilated operation: the
    input is moved into the batch with `space_to_batch_nd` (block = `dilation_rate`), `op`
    runs with ``"VALID"`` padding, and the result is moved back.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.ones([1, 5, 5, 1])
    >>> def pool(x, num_spatial_dims, padding):
    ...     return tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], padding)
    >>> tf.nn.with_space_to_batch(x, [2, 2], "VALID", pool).shape.as_list()
    [1, 3, 3, 1]
    """
    x = convert_to_tensor(input, name="input")
    rate = [int(r) for r in np.asarray(dilation_rate).reshape(-1)]
    n = len(rate)
    if spatial_dims is not None and list(spatial_dims) != list(range(1, n + 1)):
        raise ValueError(f"tf.nn.with_space_to_batch: spatial_dims must be "
                         f"{list(range(1, n + 1))} (channels-last), got {spatial_dims}")
    if data_format not in (None, "NWC", "NHWC", "NDHWC"):
        raise ValueError(f"tf.nn.with_space_to_batch: data_format {data_format!r} is not "
                         "supported; use a channels-last layout")
    if all(r == 1 for r in rate):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("tf.nn.with_space_to_batch: filter_shape is required for "
                             "SAME padding")
        k = [int(d) for d in np.asarray(filter_shape).reshape(-1)[:n]]
        extra = [(kk - 1) * r for kk, r in zip(k, rate)]
        base = [[e // 2, e - e // 2] for e in extra]
    elif padding == "VALID":
        base = [[0, 0]] * n
    else:
        raise ValueError(f"tf.nn.with_space_to_batch: padding must be 'SAME' or 'VALID', "
                         f"got {padding!r}")
    spatial = shape(x)[1:n + 1]
    paddings, crops = required_space_to_batch_paddings(spatial, rate, base)
    converted = space_to_batch_nd(x, rate, paddings)
    return batch_to_space_nd(op(converted, n, "VALID"), rate, crops)


def _morphology(x, filters, strides, rates, padding, sign, what, name):
    """One ``Dilation2D`` op (`sign` 1), or erosion as TensorFlow builds it (`sign` -1):
    ``-Dilation2D(-x, reversed filter)``."""
    from flowgraph.ops.array_join_ops import reverse
    from flowgraph.ops.math_ops import negative
    from flowgraph.ops.op_util import make_tensor

    for arg, value in (("strides", strides), ("rates", rates)):
        if value is None or len(value) != 4:
            raise ValueError(f"tf.nn.{what}: {arg} must be a list of 4 ints, got {value!r}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.nn.{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"strides": [int(v) for v in strides], "rates": [int(v) for v in rates],
             "padding": padding}
    if sign > 0:
        x = convert_to_tensor(x, name="input")
        f = convert_to_tensor(filters, dtype=x.dtype.base_dtype, name="filters")
        return make_tensor("Dilation2D", [x, f], attrs, name=name or "Dilation2D")
    with name_scope(name, what, [x, filters]) as scope:
        x = convert_to_tensor(x, name="value")
        f = convert_to_tensor(filters, dtype=x.dtype.base_dtype, name="kernel")
        out = make_tensor("Dilation2D", [negative(x), reverse(f, [0, 1])], attrs,
                          name=scope)
        return negative(out)


def dilation2d(input, filter=None, strides=None, rates=None, padding=None, name=None,
               filters=None, dilations=None, data_format="NHWC"):
    """Grayscale dilation: ``max over the window of input + filter`` per channel
    (``rates`` dilate the window).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.constant([0.0, 1.0, 5.0, 2.0]), [1, 2, 2, 1])
    >>> y = tf.nn.dilation2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y).ravel().tolist()
    [5.0]
    """
    filters = filter if filter is not None else filters
    rates = rates if rates is not None else dilations
    if data_format != "NHWC":
        raise ValueError(f"tf.nn.dilation2d: data_format must be NHWC, got {data_format!r}")
    return _morphology(input, filters, strides, rates or [1, 1, 1, 1], padding, 1,
                       "dilation2d", name)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Grayscale erosion: ``min over the window of value - kernel`` (with the kernel
    reflected), the dual of `dilation2d`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.reshape(tf.constant([0.0, 1.0, 5.0, 2.0]), [1, 2, 2, 1])
    >>> y = tf.nn.erosion2d(x, tf.ones([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y).ravel().tolist()
    [-1.0]
    """
    return _morphology(value, kernel, strides, rates, padding, -1, "erosion2d", name)


def collapse_repeated(labels, seq_length, name=None):
    """Merge runs of equal labels in each row of the padded batch `labels` (``[batch,
    max_len]``, valid up to `seq_length`): ``(collapsed, new_seq_length)``, padded with 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, n = tf.nn.collapse_repeated([[1, 1, 2, 2, 2, 3]], [6])
    >>> tf.Session().run([out, n])
    [array([[1, 2, 3]], dtype=int32), array([3], dtype=int32)]
    """
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = cast(convert_to_tensor(seq_length, name="seq_length"), _dtypes.int32)
        keep = _keep_mask(labels, seq_length, None)
        return _compact(labels, keep)


def _keep_mask(labels, seq_length, blank):
    from flowgraph.ops.array_gen_ops import range as _range

    width = shape(labels)[1]
    first = fill(concat([shape(labels)[:1], [1]], 0), True)
    changed = concat([first, not_equal(labels[:, 1:], labels[:, :-1])], 1)
    valid = _range(width)[None, :] < seq_length[:, None]
    keep = logical_and(changed, valid)
    if blank is not None:
        keep = logical_and(keep, not_equal(labels, cast(blank, labels.dtype.base_dtype)))
    return keep


def _compact(labels, keep):
    """Kept entries of each row moved left (zero padded) and the count per row."""
    from flowgraph.ops.scatter_ops import tensor_scatter_nd_update

    counts = reduce_sum_int(keep)
    width = reduce_max(counts)
    positions = cumsum(cast(keep, _dtypes.int32), axis=1) - 1
    where_kept = where(keep)  # [n, 2] of (row, column)
    rows = cast(where_kept[:, 0], _dtypes.int32)
    cols = boolean_mask(positions, keep)
    out = zeros(stack([shape(labels)[0], width]), dtype=labels.dtype.base_dtype)
    out = tensor_scatter_nd_update(out, stack([rows, cols], 1), boolean_mask(labels, keep))
    return out, counts


def reduce_sum_int(mask):
    from flowgraph.ops.math_reduce import reduce_sum

    return reduce_sum(cast(mask, _dtypes.int32), axis=1)


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Best-path CTC decoding of time-major logits ``[max_time, batch, num_classes]``:
    the most likely class per step, repeats merged (with `merge_repeated`), the blank
    class (the last) removed. Returns ``([decoded SparseTensor], neg_sum_logits)``.

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> steps = np.eye(3, dtype=np.float32)[[0, 0, 2, 1, 1]][:, None, :]  # 2 = blank
    >>> (decoded,), _ = tf.nn.ctc_greedy_decoder(steps, [5])
    >>> tf.Session().run(decoded.values).tolist()
    [0, 1]
    """
    from flowgraph.ops.op_util import make_op, op_scope

    with op_scope(None, "CTCGreedyDecoder", [inputs, sequence_length]) as scope:
        x = convert_to_tensor(inputs, name="inputs")
        lengths = convert_to_tensor(sequence_length, dtype=_dtypes.int32,
                                    name="sequence_length")
        op = make_op("CTCGreedyDecoder", [x, lengths],
                     {"merge_repeated": bool(merge_repeated),
                      "blank_index": -1 if blank_index is None else int(blank_index)},
                     name=scope)
    indices, values, dense_shape, log_prob = op.outputs
    return [SparseTensor(indices, values, dense_shape)], log_prob
