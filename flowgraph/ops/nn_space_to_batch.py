"""Dilated ("atrous") convolutions built as TensorFlow builds them: the input moved into
the batch with ``SpaceToBatchND`` (blocks of the dilation rate), an undilated
convolution with ``VALID`` padding, and the result moved back with ``BatchToSpaceND``.

`tf.nn.atrous_conv2d`, `tf.nn.convolution` with a ``dilation_rate``, and
`tf.nn.depthwise_conv2d` / `separable_conv2d` with a ``rate`` use it. With the spatial
shape known statically, every padding and crop is a constant, named as TensorFlow names
them (``dilation_rate``, ``filter_shape``, ``stack``,
``required_space_to_batch_paddings/{input_shape,paddings,crops}``,
``SpaceToBatchND/{block_shape,paddings}``, ``BatchToSpaceND/{block_shape,crops}``), and
the static output shape is exact; otherwise they are computed from the input's shape at
run time.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 10, 12, 3])
>>> y = tf.nn.atrous_conv2d(x, tf.ones([3, 3, 3, 4]), 2, "SAME")
>>> y.name, y.shape.as_list()
('convolution/BatchToSpaceND:0', [None, 10, 12, 4])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import name_scope
from flowgraph.ops.op_util import make_tensor

__all__ = ["dilated_by_space_to_batch"]


def _const(value, name: str):
    return constant(np.asarray(value, np.int32), _dtypes.int32, name=name)


def dilated_by_space_to_batch(x, rate, padding: str, filter_shape, build,
                              filter_shape_is_tensor: bool = False):
    """``build(converted, "VALID")`` run on `x` (channels last: ``[batch, *spatial,
    depth]``) moved into the batch by `rate`, and moved back. `filter_shape` is the
    filter's static shape, a list (its spatial part is needed for ``"SAME"``);
    `filter_shape_is_tensor`: the caller already made it a tensor (depthwise's
    ``Shape``), so no ``filter_shape`` constant is added."""
    n = len(rate)
    filter_spatial = None if filter_shape is None or None in list(filter_shape)[:n] \
        else [int(d) for d in list(filter_shape)[:n]]
    spatial = x.shape.as_list()[1:n + 1] if x.shape.ndims is not None else [None] * n
    if None in spatial or (padding == "SAME" and filter_spatial is None):
        return _dynamic(x, rate, padding, filter_spatial, build)
    _const(rate, "dilation_rate")
    rate_np = np.asarray(rate, np.int64)
    if padding == "SAME":
        if not filter_shape_is_tensor:
            _const(list(filter_shape), "filter_shape")
        extra = (np.asarray(filter_spatial, np.int64) - 1) * rate_np
        base = np.stack([extra // 2, extra - extra // 2], axis=1)
        _const(base, "stack")
        named_base = False
    else:
        base = np.zeros([n, 2], np.int64)
        named_base = True
    with name_scope(None, "required_space_to_batch_paddings"):
        _const(spatial, "input_shape")
        if named_base:
            _const(base, "base_paddings")
        full = np.asarray(spatial, np.int64) + base[:, 0] + base[:, 1]
        extra_end = (rate_np - full % rate_np) % rate_np
        paddings = np.stack([base[:, 0], base[:, 1] + extra_end], axis=1)
        crops = np.stack([np.zeros(n, np.int64), extra_end], axis=1)
        _const(paddings, "paddings")
        _const(crops, "crops")
    with name_scope(None, "SpaceToBatchND") as scope:
        converted = make_tensor("SpaceToBatchND", [
            x, _const(rate, "block_shape"), _const(paddings, "paddings")], name=scope)
    result = build(converted, "VALID")
    with name_scope(None, "BatchToSpaceND") as scope:
        return make_tensor("BatchToSpaceND", [
            result, _const(rate, "block_shape"), _const(crops, "crops")], name=scope)


def _dynamic(x, rate, padding: str, filter_spatial, build):
    """The same with the paddings and crops computed from the input's shape at run time."""
    from flowgraph.ops.array_extra_ops import (
        batch_to_space_nd,
        required_space_to_batch_paddings,
        space_to_batch_nd,
    )
    from flowgraph.ops.array_shape_ops import shape

    n = len(rate)
    if padding == "SAME":
        if filter_spatial is None:
            raise ValueError("a dilated convolution with padding='SAME' needs the filter's "
                             "spatial shape statically")
        extra = (np.asarray(filter_spatial, np.int64) - 1) * np.asarray(rate, np.int64)
        base = np.stack([extra // 2, extra - extra // 2], axis=1).astype(np.int32)
    else:
        base = np.zeros([n, 2], np.int32)
    paddings, crops = required_space_to_batch_paddings(shape(x)[1:n + 1], rate, base)
    converted = space_to_batch_nd(x, rate, paddings)
    return batch_to_space_nd(build(converted, "VALID"), rate, crops)
