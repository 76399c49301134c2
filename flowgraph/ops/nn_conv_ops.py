"""Convolutions built from the Conv2D family of ops: `conv2d_transpose`, `conv1d`,
`atrous_conv2d`, `separable_conv2d` (the `tf.nn` functions).

None of them adds an op type. A transposed convolution is the gradient of a convolution
with respect to its input, so `conv2d_transpose` emits ``Conv2DBackpropInput`` (whose own
gradients are a ``Conv2D`` and a ``Conv2DBackpropFilter``); a 1-D convolution is a 2-D one
over an inserted axis of length 1; an atrous convolution is a dilated one; a separable
convolution is a depthwise convolution followed by a 1x1 one.

Example
-------
>>> import flowgraph as tf
>>> x = tf.ones([1, 3, 3, 2])
>>> y = tf.nn.conv2d_transpose(x, tf.ones([2, 2, 4, 2]), [1, 6, 6, 4], strides=2)
>>> y.shape.as_list()
[1, 6, 6, 4]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops, nn_grad, nn_ops, nn_ops3d  # noqa: F401  (ops)
from flowgraph.ops.nn_space_to_batch import dilated_by_space_to_batch
from flowgraph.ops.op_util import make_tensor


def _pair(value) -> list[int]:
    """A per-spatial-dimension argument of a 2-D convolution as two ints (1 for None)."""
    if value is None:
        return [1, 1]
    v = [int(a) for a in (value if isinstance(value, list | tuple) else
                          getattr(value, "tolist", lambda: value)())] \
        if not isinstance(value, int) else [int(value)]
    return v * 2 if len(v) == 1 else v[-3:-1] if len(v) == 4 else v

__all__: list[str] = []  # tf.nn.* only; see flowgraph/nn/__init__.py


def _one_of(a, b, names: str, what: str):
    if a is not None and b is not None:
        raise ValueError(f"{what}: pass either {names}, not both")
    return a if a is not None else b


def _conv_attrs(strides, padding, data_format, dilations, what: str) -> dict:
    """The strides, dilations, data_format and padding attributes of a 2-D conv op."""
    fmt = nn_ops._check_format(data_format, what)
    attrs = {"strides": nn_ops._four(strides, "strides", fmt, what),
             "dilations": nn_ops._four(dilations, "dilations", fmt, what),
             "data_format": fmt}
    attrs["padding"], attrs["explicit_paddings"] = nn_ops._padding_attrs(padding, fmt, what)
    return attrs


# -- conv2d_transpose -------------------------------------------------------------------
def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,
                     padding="SAME", data_format="NHWC", name=None, input=None,
                     filters=None, dilations=None):
    """The transpose (gradient) of `conv2d`: maps ``[batch, h, w, in_channels]`` to
    `output_shape`, sometimes called deconvolution.

    Parameters
    ----------
    value : Tensor
        ``[batch, height, width, in_channels]`` (NHWC) or ``[batch, in_channels, height,
        width]`` (NCHW); `input` is an alias.
    filter : Tensor
        ``[height, width, output_channels, in_channels]`` (note the order: the filter of
        the convolution being transposed); `filters` is an alias.
    output_shape : 1-D int Tensor or list of 4 ints
        The shape of the result; convolving a tensor of that shape with `filter`,
        `strides` and `padding` must give `value`'s shape.
    strides, dilations : int or list of 1, 2 or 4 ints
    padding : 'SAME' or 'VALID'

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([[[[1.0], [2.0]]]])                      # [1, 1, 2, 1]
    >>> y = tf.nn.conv2d_transpose(x, tf.ones([1, 2, 1, 1]), [1, 1, 4, 1], strides=[1, 2],
    ...                            padding="VALID")
    >>> tf.Session().run(y).reshape(-1)
    array([1., 1., 2., 2.], dtype=float32)
    """
    value = _one_of(value, input, "value or input", "conv2d_transpose")
    filter = _one_of(filter, filters, "filter or filters", "conv2d_transpose")
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError("conv2d_transpose() needs value, filter, output_shape and strides")
    attrs = _conv_attrs(strides, padding, data_format, dilations, "conv2d_transpose")
    fmt = attrs["data_format"]
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        x, f = nn_ops._conv_inputs(value, filter, "conv2d_transpose")
        sizes = convert_to_tensor(output_shape, name="input_sizes")  # TF's input name
        channel = 3 if fmt == "NHWC" else 1
        if not sizes.shape.is_compatible_with(TensorShape([4])):
            raise ValueError(f"conv2d_transpose: output_shape must have shape (4,), got "
                             f"{sizes.shape}")
        in_depth = x.shape[channel] if x.shape.ndims == 4 else None
        if in_depth is not None and f.shape.ndims == 4 and \
                not in_depth.is_compatible_with(f.shape[3]):
            raise ValueError(
                f"conv2d_transpose: input channels {in_depth} (value shape {x.shape}) must "
                f"match the filter's last dimension {f.shape[3]} (filter shape {f.shape} = "
                f"[height, width, output_channels, in_channels])")
        known = constant_value(sizes)
        if known is not None and f.shape.ndims == 4 and f.shape[2].value is not None \
                and int(known[channel]) != f.shape[2].value:
            raise ValueError(
                f"conv2d_transpose: output_shape[{channel}] = {int(known[channel])} must "
                f"match the filter's output channels {f.shape[2].value} (filter shape "
                f"{f.shape} = [height, width, output_channels, in_channels])")
        return make_tensor("Conv2DBackpropInput", [sizes, f, x], attrs, name=scope)


# -- conv1d -----------------------------------------------------------------------------
def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):
    """1-D convolution of ``[batch, width, in_channels]`` (NWC) or ``[batch, in_channels,
    width]`` (NCW) with ``filters`` of shape ``[width, in_channels, out_channels]``.

    Runs `conv2d` on an inserted axis of length 1, as TensorFlow does; `stride` and
    `dilations` are an int or a list of 1 or 3 ints.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([[[1.0], [2.0], [3.0], [4.0]]])           # [1, 4, 1]
    >>> y = tf.nn.conv1d(x, tf.constant([[[1.0]], [[-1.0]]]), stride=1, padding="VALID")
    >>> tf.Session().run(y).reshape(-1)
    array([-1., -1., -1.], dtype=float32)
    """
    del use_cudnn_on_gpu
    value = _one_of(value, input, "value or input", "conv1d")
    if value is None or filters is None or stride is None or padding is None:
        raise TypeError("conv1d() needs value, filters, stride and padding")
    fmt = data_format or "NWC"
    if fmt not in ("NWC", "NCW", "NHWC", "NCHW"):
        raise ValueError(f"conv1d: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    last = fmt in ("NWC", "NHWC")

    def widen(v, what):
        seq = [1] if v is None else ([int(v)] if isinstance(v, int) else [int(s) for s in v])
        if len(seq) == 3:
            seq = [seq[1] if last else seq[2]]
        if len(seq) != 1:
            raise ValueError(f"conv1d: {what} should be an int or a list of 1 or 3 ints, "
                             f"got {v!r}")
        return [1, seq[0]]

    with name_scope(name, "conv1d", [value, filters]) as scope:
        x = array_shape_ops.expand_dims(value, 1 if last else 2, name="ExpandDims")
        f = array_shape_ops.expand_dims(filters, 0, name="ExpandDims_1")
        y = nn_ops.conv2d(x, f, strides=widen(stride, "stride"), padding=padding,
                          data_format="NHWC" if last else "NCHW",
                          dilations=widen(dilations, "dilations"), name=scope)
        return array_shape_ops.squeeze(y, [1 if last else 2], name="Squeeze")


# -- atrous and separable ---------------------------------------------------------------
def atrous_conv2d(value, filters, rate, padding, name=None):
    """`conv2d` with the filter taps `rate` pixels apart (dilated, "with holes"), stride 1.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.ones([1, 5, 5, 1])
    >>> tf.nn.atrous_conv2d(x, tf.ones([2, 2, 1, 1]), rate=2, padding="VALID").shape.as_list()
    [1, 3, 3, 1]
    """
    if not isinstance(rate, int) or rate < 1:
        raise ValueError(f"atrous_conv2d: rate {rate!r} cannot be less than one; pass a "
                         f"positive integer (1 is an ordinary convolution)")
    # TensorFlow's atrous_conv2d is `convolution` with dilation_rate=[rate, rate]
    return convolution(value, filters, padding, dilation_rate=[rate, rate], name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution followed by a 1x1 convolution mixing the channels.

    `depthwise_filter` is ``[height, width, in_channels, multiplier]``,
    `pointwise_filter` is ``[1, 1, in_channels * multiplier, out_channels]``; `strides`
    and `rate` (alias `dilations`) apply to the depthwise step.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.ones([2, 6, 6, 3])
    >>> y = tf.nn.separable_conv2d(x, tf.ones([3, 3, 3, 2]), tf.ones([1, 1, 6, 5]),
    ...                            [1, 1, 1, 1], "SAME")
    >>> y.shape.as_list()
    [2, 6, 6, 5]
    """
    rate = _one_of(rate, dilations, "rate or dilations", "separable_conv2d")
    with name_scope(name, "separable_conv2d",
                    [input, depthwise_filter, pointwise_filter]) as scope:
        dw = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pw = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        if pw.shape.ndims is not None:
            if pw.shape.ndims != 4 or not (pw.shape[0].is_compatible_with(1)
                                           and pw.shape[1].is_compatible_with(1)):
                raise ValueError(f"separable_conv2d: pointwise_filter must be [1, 1, "
                                 f"in_channels * multiplier, out_channels], got {pw.shape}")
            if dw.shape.ndims == 4 and None not in (dw.shape[2].value, dw.shape[3].value,
                                                    pw.shape[2].value) \
                    and dw.shape[2].value * dw.shape[3].value != pw.shape[2].value:
                raise ValueError(
                    f"separable_conv2d: pointwise_filter's input channels {pw.shape[2]} "
                    f"must equal in_channels * multiplier = {dw.shape[2]} * {dw.shape[3]} "
                    f"(depthwise_filter shape {dw.shape})")
        depthwise = nn_ops.depthwise_in_scope(input, dw, strides, padding, rate, data_format,
                                              "depthwise")
        return nn_ops.conv2d(depthwise, pw, [1, 1, 1, 1], padding="VALID",
                             data_format=data_format or "NHWC", name=scope)


# -- TF1's lower-level spellings ----------------------------------------------------------
def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None):
    """The gradient of `conv2d` with respect to its input, of shape `input_sizes`
    (the ``Conv2DBackpropInput`` op; `conv2d_transpose` with the arguments reordered).

    Example
    -------
    >>> import flowgraph as tf
    >>> dx = tf.nn.conv2d_backprop_input([1, 4, 4, 1], tf.ones([2, 2, 1, 1]),
    ...                                  tf.ones([1, 2, 2, 1]), [1, 2, 2, 1], "VALID")
    >>> float(tf.Session().run(dx).sum())
    16.0
    """
    del use_cudnn_on_gpu
    return conv2d_transpose(out_backprop, _one_of(filter, filters, "filter or filters",
                                                  "conv2d_backprop_input"),
                            input_sizes, strides, padding, data_format=data_format,
                            name=name or "Conv2DBackpropInput", dilations=dilations)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           use_cudnn_on_gpu=True, data_format="NHWC",
                           dilations=(1, 1, 1, 1), name=None):
    """The gradient of `conv2d` with respect to its filter, of shape `filter_sizes`
    (the ``Conv2DBackpropFilter`` op).

    Example
    -------
    >>> import flowgraph as tf
    >>> df = tf.nn.conv2d_backprop_filter(tf.ones([1, 3, 3, 1]), [2, 2, 1, 1],
    ...                                   tf.ones([1, 2, 2, 1]), [1, 1, 1, 1], "VALID")
    >>> tf.Session().run(df).reshape(-1)
    array([4., 4., 4., 4.], dtype=float32)
    """
    del use_cudnn_on_gpu
    attrs = _conv_attrs(strides, padding, data_format, dilations, "conv2d_backprop_filter")
    with name_scope(name, "conv2d_backprop_filter", [input, out_backprop]) as scope:
        x, dy = nn_ops._conv_inputs(input, out_backprop, "conv2d_backprop_filter")
        sizes = convert_to_tensor(filter_sizes, name="filter_sizes")
        return make_tensor("Conv2DBackpropFilter", [x, sizes, dy], attrs, name=scope)


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",
                            dilations=(1, 1, 1, 1), name=None):
    """The ``DepthwiseConv2dNative`` op with 4-element `strides` and `dilations`; see
    `tf.nn.depthwise_conv2d`.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.depthwise_conv2d_native(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 2, 1]),
    ...                                   [1, 1, 1, 1], "VALID")
    >>> y.shape.as_list()
    [1, 2, 2, 2]
    """
    fmt = nn_ops._check_format(data_format, "depthwise_conv2d_native")
    rate = nn_ops._four(dilations, "dilations", fmt, "depthwise_conv2d_native")
    h, w, _ = nn_ops._hw_axes(fmt)
    return nn_ops.depthwise_conv2d(input, filter, strides, padding, rate=[rate[h], rate[w]],
                                   name=name or "DepthwiseConv2dNative", data_format=fmt)


def convolution(input, filter, padding, strides=None, dilation_rate=None, name=None,
                data_format=None, filters=None, dilations=None):
    """An N-D convolution for N = 1, 2 or 3, picked by the rank of `input` (3, 4 or 5);
    `strides` and `dilation_rate` hold one entry per spatial dimension.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.convolution(tf.ones([1, 5, 2]), tf.ones([3, 2, 4]), "VALID").shape.as_list()
    [1, 3, 4]
    """
    filter = _one_of(filter, filters, "filter or filters", "convolution")
    dilation_rate = _one_of(dilation_rate, dilations, "dilation_rate or dilations",
                            "convolution")
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank == 3:
        fmt = "NCW" if data_format in ("NCW", "NCHW") else "NWC"
        rate = _ints_of(dilation_rate, 1)
        with name_scope(name, "convolution", [x, filter]) as scope:
            if rate != [1] and fmt == "NWC" and _ints_of(strides, 1) == [1] and \
                    padding in ("SAME", "VALID"):
                # as TensorFlow: SpaceToBatchND, conv1d (ExpandDims, Conv2D, Squeeze),
                # BatchToSpaceND
                f = convert_to_tensor(filter, name="filter")
                return dilated_by_space_to_batch(
                    x, rate, padding, f.shape.as_list() if f.shape.ndims else None,
                    lambda t, p: conv1d(t, f, 1, p, name=scope))
            return conv1d(x, filter, strides or 1, padding, data_format=fmt, name=scope,
                          dilations=dilation_rate)
    if rank == 4:
        fmt = "NCHW" if data_format in ("NCW", "NCHW") else "NHWC"
        rate = _pair(dilation_rate)
        with name_scope(name, "convolution", [x, filter]) as scope:
            if rate != [1, 1] and fmt == "NHWC" and _pair(strides) == [1, 1] and \
                    padding in ("SAME", "VALID"):
                # TensorFlow's dilated convolution: SpaceToBatchND, Conv2D, BatchToSpaceND
                f = convert_to_tensor(filter, name="filter")
                return dilated_by_space_to_batch(
                    x, rate, padding, f.shape.as_list() if f.shape.ndims else None,
                    lambda t, p: nn_ops.conv2d(t, f, 1, p, name=scope))
            return nn_ops.conv2d(x, filter, strides or 1, padding, data_format=fmt,
                                 dilations=dilation_rate or 1, name=scope)
    if rank == 5:
        fmt = "NCDHW" if str(data_format or "").startswith("NC") else "NDHWC"
        rate = _triple(dilation_rate)
        step = _triple(strides)
        with name_scope(name, "convolution", [x, filter]) as scope:
            f = convert_to_tensor(filter, dtype=x.dtype.base_dtype, name="filter")

            def conv(t, pad, s=(1, 1, 1), d=(1, 1, 1)):
                attrs = {"strides": _five_in(s, fmt), "padding": pad, "data_format": fmt,
                         "dilations": _five_in(d, fmt)}
                return make_tensor("Conv3D", [t, f], attrs, name=scope)

            if rate != [1, 1, 1] and fmt == "NDHWC" and step == [1, 1, 1] and \
                    padding in ("SAME", "VALID"):
                # as TensorFlow: SpaceToBatchND, Conv3D, BatchToSpaceND
                return dilated_by_space_to_batch(
                    x, rate, padding, f.shape.as_list() if f.shape.ndims else None, conv)
            return conv(x, padding, step, rate)
    raise ValueError(f"convolution: input must have rank 3 (1-D), 4 (2-D) or 5 (3-D) with "
                     f"a known rank; got shape {x.shape}")


def _ints_of(value, n: int) -> list[int]:
    """A stride / dilation argument of `n` spatial dimensions as a list (None: all 1)."""
    if value is None:
        return [1] * n
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


def _triple(value) -> list[int]:
    if value is None:
        return [1, 1, 1]
    values = [int(value)] * 3 if isinstance(value, int) else [int(v) for v in value]
    if len(values) != 3:
        raise ValueError(f"convolution: a 3-D convolution takes 3 strides / dilation rates, "
                         f"got {value!r}")
    return values


def _five_in(spatial, fmt: str) -> list[int]:
    return [1, 1, *spatial] if fmt == "NCDHW" else [1, *spatial, 1]
