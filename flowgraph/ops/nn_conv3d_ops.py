"""3-D convolution and pooling (`tf.nn.conv3d`, `conv3d_transpose`, `max_pool3d`,
`avg_pool3d`) composed from the 2-D ops.

A 3-D convolution is a sum over the filter's depth taps of 2-D convolutions: tap ``i``
convolves the input's depth slices ``i * dilation + d * stride`` (after padding the
depth axis) with ``filter[i]``, all output depths at once by folding depth into the
batch. So the values are the 2-D kernels' and the gradients are the gradients of
slicing, padding, reshaping and `conv2d`: no new op. The depth of the input must be
known when the graph is built (the number of depth slices is a graph property); batch,
height and width may be unknown. `conv3d_transpose` is the gradient of `conv3d` with
respect to its input, built with `tf.gradients`.

A pooling window is a box, and the max (or the mean, with TensorFlow's count of real
elements under 'SAME' padding, which is a product over the axes) of a box is the max of
the maxima (the mean of the means) over its axes: a 2-D pool over height and width, then
a pool over depth.

Example
-------
>>> import flowgraph as tf
>>> x = tf.ones([2, 5, 6, 6, 3])
>>> tf.nn.conv3d(x, tf.ones([3, 3, 3, 3, 4]), [1, 2, 2, 2, 1], "SAME").shape.as_list()
[2, 3, 3, 3, 4]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import constant_value_as_shape, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import (
    array_identity_ops,
    array_join_ops,
    array_shape_ops,
    gradients,
    math_reduce,
    nn_conv_ops,
    nn_ops,
)

__all__: list[str] = []  # tf.nn.* only; see flowgraph/nn/__init__.py

_TO_NDHWC, _TO_NCDHW = [0, 2, 3, 4, 1], [0, 4, 1, 2, 3]


def _five(value, name: str, fmt: str, what: str, default: int = 1) -> list[int]:
    """A 5-list in NDHWC order (N, C entries 1) from an int or a list of 1, 3 or 5."""
    if value is None:
        value = default
    seq = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    if len(seq) == 1:
        seq = seq * 3
    if len(seq) == 3:
        seq = [1, *seq, 1]
    elif len(seq) == 5 and fmt == "NCDHW":
        seq = [seq[i] for i in _TO_NDHWC]
    if len(seq) != 5:
        raise ValueError(f"{what}: {name} should be an int or a list of 1, 3 or 5 ints, got "
                         f"{value!r}")
    if seq[0] != 1 or seq[4] != 1:
        raise ValueError(f"{what}: {name}={list(value) if not isinstance(value, int) else value}"
                         f" must be 1 in the batch and channel dimensions")
    if any(v < 1 for v in seq):
        raise ValueError(f"{what}: {name}={seq} must all be positive")
    return seq


def _check_format(data_format, what: str) -> str:
    fmt = data_format or "NDHWC"
    if fmt not in ("NDHWC", "NCDHW"):
        raise ValueError(f"{what}: data_format must be 'NDHWC' or 'NCDHW', got "
                         f"{data_format!r}")
    return fmt


def _depth_geometry(depth, k: int, s: int, d: int, padding: str, what: str):
    """(output depth, front padding, back padding) along the depth axis."""
    if depth is None:
        raise ValueError(f"{what}: the input's depth dimension must be known when the graph "
                         f"is built (flowgraph composes 3-D ops from 2-D ones per depth "
                         f"tap); give the placeholder a static depth")
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-depth // s)
        total = max((out - 1) * s + eff - depth, 0)
        return out, total // 2, total - total // 2
    if depth < eff:
        raise ValueError(f"{what}: negative output depth: the input depth {depth} is smaller "
                         f"than the filter's dilated depth {eff}; use padding='SAME'")
    return (depth - eff) // s + 1, 0, 0


def _fold_depth(x):
    """[N, D, H, W, C] -> [N * D, H, W, C]."""
    shape = array_shape_ops.shape(x)
    return array_shape_ops.reshape(x, array_join_ops.concat([[-1], shape[2:]], 0))


def _unfold_depth(y, batch, depth: int):
    """[N * D, H, W, C] -> [N, D, H, W, C]."""
    shape = array_shape_ops.shape(y)
    return array_shape_ops.reshape(
        y, array_join_ops.concat([array_join_ops.stack([batch, depth]), shape[1:]], 0))


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D convolution of ``[batch, depth, height, width, in_channels]`` with a filter
    ``[depth, height, width, in_channels, out_channels]``.

    `strides` and `dilations` are lists of 5 (batch and channel entries 1), of 3, or an
    int; `padding` is 'SAME' or 'VALID'. NCDHW input is transposed to NDHWC and back.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.conv3d(tf.ones([1, 3, 3, 3, 1]), tf.ones([2, 2, 2, 1, 1]),
    ...                  [1, 1, 1, 1, 1], "VALID")
    >>> tf.Session().run(y).reshape(-1)[:2]
    array([8., 8.], dtype=float32)
    """
    filter = nn_conv_ops._one_of(filter, filters, "filter or filters", "conv3d")
    if filter is None or strides is None or padding is None:
        raise TypeError("conv3d() needs input, filter, strides and padding")
    what = "conv3d"
    fmt = _check_format(data_format, what)
    strides = _five(strides, "strides", fmt, what)
    dil = _five(dilations, "dilations", fmt, what)
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        x = convert_to_tensor(input, name="input")
        f = convert_to_tensor(filter, dtype=x.dtype.base_dtype, name="filter")
        if x.shape.ndims is not None and x.shape.ndims != 5:
            raise ValueError(f"{what}: input must be 5-D but has shape {x.shape}")
        if f.shape.ndims is not None and f.shape.ndims != 5:
            raise ValueError(f"{what}: filter must be 5-D [depth, height, width, in, out] but "
                             f"has shape {f.shape}")
        if fmt == "NCDHW":
            x = array_shape_ops.transpose(x, _TO_NDHWC)
        if x.shape.ndims is None or f.shape[0].value is None:
            raise ValueError(f"{what}: the input's rank and the filter's depth must be known "
                             f"when the graph is built; got {x.shape} and {f.shape}")
        if not x.shape[4].is_compatible_with(f.shape[3]):
            raise ValueError(f"{what}: input depth (channels) {x.shape[4]} (input shape "
                             f"{x.shape}) does not match the filter's in_channels "
                             f"{f.shape[3]} (filter shape {f.shape})")
        kd = f.shape[0].value
        od, front, back = _depth_geometry(x.shape[1].value, kd, strides[1], dil[1], padding,
                                          what)
        if front or back:
            x = array_join_ops.pad(x, [[0, 0], [front, back], [0, 0], [0, 0], [0, 0]])
        batch = array_shape_ops.shape(x)[0]
        taps = []
        for i in range(kd):
            start = i * dil[1]
            part = x[:, start:start + strides[1] * (od - 1) + 1:strides[1]]
            y = nn_ops.conv2d(_fold_depth(part), f[i], strides=[1, strides[2], strides[3], 1],
                              padding=padding, dilations=[1, dil[2], dil[3], 1])
            taps.append(_unfold_depth(y, batch, od))
        out = taps[0] if len(taps) == 1 else math_reduce.add_n(taps)
        out.set_shape(TensorShape([x.shape[0], od, *y.shape[1:]]))
        if fmt == "NCDHW":
            return array_shape_ops.transpose(out, _TO_NCDHW, name=scope)
        return array_identity_ops.identity(out, name=scope)


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None,
                     padding="SAME", data_format="NDHWC", name=None, input=None,
                     filters=None, dilations=None):
    """The transpose (gradient with respect to the input) of `conv3d`.

    `filter` is ``[depth, height, width, output_channels, in_channels]``; `output_shape`
    (whose depth must be known when the graph is built) is the result's shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.conv3d_transpose(tf.ones([1, 2, 2, 2, 3]), tf.ones([2, 2, 2, 4, 3]),
    ...                            [1, 4, 4, 4, 4], [1, 2, 2, 2, 1])
    >>> y.shape.as_list()
    [1, 4, 4, 4, 4]
    """
    for alias, target in ((input, "value"), (filters, "filter")):
        if alias is not None and (value if target == "value" else filter) is not None:
            raise ValueError(f"conv3d_transpose: pass either {target} or its alias, not both")
    value = input if value is None else value
    filter = filters if filter is None else filter
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError("conv3d_transpose() needs value, filter, output_shape and strides")
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        x = convert_to_tensor(value, name="value")
        sizes = convert_to_tensor(output_shape, name="output_shape")
        static = constant_value_as_shape(sizes)
        z = array_shape_ops.zeros(sizes, dtype=x.dtype.base_dtype)
        z.set_shape(static)
        y = conv3d(z, filter, strides, padding, data_format=data_format,
                   dilations=dilations if dilations is not None else 1)
        if not y.shape.is_compatible_with(x.shape):
            raise ValueError(f"conv3d_transpose: convolving output_shape {static} with the "
                             f"filter gives shape {y.shape}, which does not match value's "
                             f"shape {x.shape}")
        (dz,) = gradients.gradients(y, [z], grad_ys=[x])
        dz.set_shape(static)
        return array_shape_ops.reshape(dz, sizes, name=scope)


def _pool3d(pool2d, what, input, ksize, strides, padding, data_format, name):
    fmt = _check_format(data_format, what)
    k = _five(ksize, "ksize", fmt, what)
    s = _five(strides, "strides", fmt, what)
    with name_scope(name, what, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        if fmt == "NCDHW":
            x = array_shape_ops.transpose(x, _TO_NDHWC)
        if x.shape.ndims != 5:
            raise ValueError(f"{what}: input must be 5-D with a known rank, got {x.shape}")
        depth = x.shape[1].value
        od, _, _ = _depth_geometry(depth, k[1], s[1], 1, padding, what)
        batch = array_shape_ops.shape(x)[0]
        hw = pool2d(_fold_depth(x), [1, k[2], k[3], 1], [1, s[2], s[3], 1], padding)
        hw = _unfold_depth(hw, batch, depth)                       # [N, D, oh, ow, C]
        shape = array_shape_ops.shape(hw)
        flat = array_shape_ops.reshape(                            # [N, D, oh * ow, C]
            hw, array_join_ops.stack([shape[0], depth, shape[2] * shape[3], shape[4]]))
        pooled = pool2d(flat, [1, k[1], 1, 1], [1, s[1], 1, 1], padding)
        out = array_shape_ops.reshape(
            pooled, array_join_ops.stack([shape[0], od, shape[2], shape[3], shape[4]]))
        out.set_shape(TensorShape([x.shape[0], od, *hw.shape[2:]]))
        if fmt == "NCDHW":
            return array_shape_ops.transpose(out, _TO_NCDHW, name=scope)
        return out


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Max over ``[depth, height, width]`` windows of a 5-D tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.max_pool3d(tf.ones([1, 4, 4, 4, 2]), 2, 2, "VALID").shape.as_list()
    [1, 2, 2, 2, 2]
    """
    return _pool3d(nn_ops.max_pool, "max_pool3d", input, ksize, strides, padding,
                   data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Mean over ``[depth, height, width]`` windows; 'SAME' windows divide by their count
    of real elements, as TensorFlow does.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.avg_pool3d(tf.ones([1, 3, 4, 4, 2]), 2, 2, "SAME").shape.as_list()
    [1, 2, 2, 2, 2]
    """
    return _pool3d(nn_ops.avg_pool, "avg_pool3d", input, ksize, strides, padding,
                   data_format, name)
