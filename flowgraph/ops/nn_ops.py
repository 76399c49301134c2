"""Neural-network ops: activations, softmax, bias_add, convolutions, pooling, l2_normalize.

The user-facing functions are TF1's ``tf.nn.*`` (re-exported by `flowgraph.nn`); none is
exposed at the top level, as in TensorFlow 1.x, so ``__all__`` is empty.

Window geometry (convolution and pooling) follows TensorFlow exactly. With an effective
kernel size ``e = (k - 1) * d + 1`` (``d`` the dilation) and stride ``s``::

    VALID     out = ceil((in - e + 1) / s)            (in < e is an error)
    SAME      out = ceil(in / s); the total padding max((out - 1) * s + e - in, 0) is split
              with the smaller half before (top/left) and the larger after
    EXPLICIT  out = (in + before + after - e) // s + 1

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 7, 5, 3])
>>> tf.nn.conv2d(x, tf.zeros([3, 2, 3, 4]), strides=2, padding="SAME").shape.as_list()
[None, 4, 3, 4]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import make_tensor, op_scope

__all__: list[str] = []  # tf.nn.* only; see flowgraph/nn/__init__.py

FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
REALS = (*FLOATS, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
         _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)


def _check_dtype(t: Tensor, allowed, op_type: str, param: str) -> None:
    if t.dtype.base_dtype not in allowed:
        raise TypeError(
            f"Value passed to parameter '{param}' of op {op_type} has DataType "
            f"{t.dtype.base_dtype.name} not in list of allowed values: "
            f"{', '.join(d.name for d in allowed)}"
        )


def _same_shape(op, x):
    return [x]


# -- Activations --------------------------------------------------------------------------
def _register_activation(op_type: str, fn_name: str, allowed, doc: str):
    register_op(op_type)(_same_shape)

    def fn(features, name=None):
        if (h := handler_for("unary", features)) is not None:  # a RaggedTensor
            return h(fn, features, name=name)
        with op_scope(name, op_type, (features,)) as scope:
            x = convert_to_tensor(features, name="features")
            _check_dtype(x, allowed, op_type, "features")
            return make_tensor(op_type, [x], name=scope)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = doc
    return fn


relu = _register_activation("Relu", "relu", REALS, """Rectified linear: ``max(features, 0)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.relu([-1.0, 2.0]))
    array([0., 2.], dtype=float32)
    """)
relu6 = _register_activation("Relu6", "relu6", REALS, """``min(max(features, 0), 6)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.relu6([-1.0, 7.0]))
    array([0., 6.], dtype=float32)
    """)
elu = _register_activation("Elu", "elu", FLOATS, """``exp(x) - 1`` for ``x < 0``, else ``x``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.elu([0.0, 2.0]))
    array([0., 2.], dtype=float32)
    """)
selu = _register_activation("Selu", "selu", FLOATS, """Scaled ELU (Klambauer et al., 2017).

    ``scale * x`` for ``x > 0`` and ``scale * alpha * (exp(x) - 1)`` otherwise, with
    ``alpha = 1.6732632423543772`` and ``scale = 1.0507009873554805``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.selu([0.0]))
    array([0.], dtype=float32)
    """)
softplus = _register_activation("Softplus", "softplus", FLOATS, """``log(exp(x) + 1)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> print(tf.Session().run(tf.nn.softplus([0.0])).round(4))
    [0.6931]
    """)
softsign = _register_activation("Softsign", "softsign", FLOATS, """``x / (abs(x) + 1)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.softsign([1.0, -3.0]))
    array([ 0.5 , -0.75], dtype=float32)
    """)


def _leaky_relu_dtype(op):
    dt = op.inputs[0].dtype.base_dtype
    return [_dtypes.float32 if dt.is_integer else dt]


@register_op("LeakyRelu", attrs={"alpha": 0.2}, dtype_fn=_leaky_relu_dtype)
def _leaky_relu_shape(op, x):
    return [x]


def leaky_relu(features, alpha=0.2, name=None):
    """``x`` for ``x >= 0``, else ``alpha * x``; integer inputs give float32, as in TF.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.leaky_relu([-1.0, 2.0]))
    array([-0.2,  2. ], dtype=float32)
    """
    with op_scope(name, "LeakyRelu", (features,)) as scope:
        x = convert_to_tensor(features, name="features")
        _check_dtype(x, REALS, "LeakyRelu", "features")
        return make_tensor("LeakyRelu", [x], {"alpha": float(alpha)}, name=scope)


# -- Softmax ------------------------------------------------------------------------------
def _softmax_shape(op, x):
    if x.ndims is not None and x.ndims < 1:
        raise op.shape_error(f"logits must have rank at least 1 but have rank {x.ndims}")
    return [x]


register_op("Softmax", attrs={"axis": -1})(_softmax_shape)
register_op("LogSoftmax", attrs={"axis": -1})(_softmax_shape)


def _softmax_op(op_type, logits, axis, name, dim):
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    axis = -1 if axis is None else int(axis)
    x = convert_to_tensor(logits)  # before any scope, as TensorFlow does: a plain `Const`
    _check_dtype(x, FLOATS, op_type, "logits")
    rank = x.shape.ndims
    if rank is not None and rank >= 1 and not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None,
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of "
            f"dimensions in the input. Received: dim={axis}",
        )
    if axis == -1 or rank is None or axis == rank - 1:
        # (an unknown rank keeps the op's own axis attribute: TensorFlow refuses it)
        return make_tensor(op_type, [x], {"axis": axis}, name=name or op_type)
    return _softmax_swapped(op_type, x, axis, rank, name)


def _softmax_swapped(op_type, x, axis, rank, name):
    """TensorFlow's graph for a softmax over another axis than the last: that axis
    swapped with the last by a ``Transpose`` (its permutation computed in the graph), the
    op on the last axis, and the same swap back (named `name`)."""
    from flowgraph.ops import math_ops
    from flowgraph.ops.array_gen_ops import range as _range
    from flowgraph.ops.array_join_ops import concat
    from flowgraph.ops.array_shape_ops import rank as _rank
    from flowgraph.ops.array_shape_ops import transpose

    def swap(t, dim_index, last_index, name="transpose"):
        perm = concat([_range(dim_index), [last_index], _range(dim_index + 1, last_index),
                       [dim_index]], 0)
        return transpose(t, perm, name=name)

    ndims = _rank(x)
    dim = axis + ndims if axis < 0 else axis
    input_rank = _rank(x)
    dim_axis = dim % rank
    out = make_tensor(op_type, [swap(x, dim_axis, math_ops.subtract(input_rank, 1))],
                      name=op_type)
    out = swap(out, dim_axis, math_ops.subtract(input_rank, 1), name=name or "transpose")
    out.set_shape(x.shape)
    return out


def softmax(logits, axis=None, name=None, dim=None):
    """``exp(logits) / reduce_sum(exp(logits), axis)``, computed stably.

    `dim` is TF1's deprecated alias of `axis` (default -1, the last dimension).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.softmax([[0.0, 0.0]]))
    array([[0.5, 0.5]], dtype=float32)
    """
    return _softmax_op("Softmax", logits, axis, name, dim)


def log_softmax(logits, axis=None, name=None, dim=None):
    """``logits - log(reduce_sum(exp(logits), axis))``, computed stably.

    Example
    -------
    >>> import flowgraph as tf
    >>> print(tf.Session().run(tf.nn.log_softmax([[0.0, 0.0]])).round(4))
    [[-0.6931 -0.6931]]
    """
    return _softmax_op("LogSoftmax", logits, axis, name, dim)


# -- BiasAdd ------------------------------------------------------------------------------
@register_op("BiasAdd", attrs={"data_format": "NHWC"})
def _bias_add_shape(op, value, bias):
    nchw = op.attrs["data_format"] == "NCHW"
    min_rank = 3 if nchw else 2
    if value.ndims is not None and value.ndims < min_rank:
        raise op.shape_error(
            f"value must have rank at least {min_rank} for data_format "
            f"{op.attrs['data_format']} but has rank {value.ndims}")
    if bias.ndims is not None and bias.ndims != 1:
        raise op.shape_error(f"bias must be 1-D but has rank {bias.ndims}")
    if value.ndims is None:
        return [value]
    channel = value[1] if nchw else value[-1]
    if bias.ndims is not None and not channel.is_compatible_with(bias[0]):
        where = "dimension 1 (NCHW)" if nchw else "the last dimension"
        raise op.shape_error(
            f"bias of shape {bias} must have as many elements as {where} of value "
            f"{value} ({channel} vs {bias[0]})")
    if bias.ndims is None or channel.value is not None:
        return [value]
    dims = value.as_list()
    dims[1 if nchw else -1] = bias[0].value
    return [TensorShape(dims)]


def bias_add(value, bias, data_format=None, name=None):
    """Add the 1-D `bias` along the channel dimension of `value`.

    `data_format` is ``"N...C"`` (channels last, the default) or ``"NC..."`` (channels in
    dimension 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.bias_add([[1.0, 2.0]], [10.0, 20.0]))
    array([[11., 22.]], dtype=float32)
    """
    if data_format is None:
        fmt = "NHWC"
    elif data_format.startswith("NC"):
        fmt = "NCHW"
    elif data_format.startswith("N") and data_format.endswith("C"):
        fmt = "NHWC"
    else:
        raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got "
                         f"{data_format!r}")
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        x = convert_to_tensor(value, name="input")
        _check_dtype(x, REALS, "BiasAdd", "value")
        b = convert_to_tensor(bias, dtype=x.dtype.base_dtype, name="bias")
        return make_tensor("BiasAdd", [x, b], {"data_format": fmt}, name=scope)


# -- Window geometry ----------------------------------------------------------------------
_PADDINGS = ("SAME", "VALID", "EXPLICIT")


def _hw_axes(data_format: str) -> tuple[int, int, int]:
    """(height axis, width axis, channel axis) of a 4-D tensor in `data_format`."""
    return (2, 3, 1) if data_format == "NCHW" else (1, 2, 3)


def _check_format(data_format, what: str) -> str:
    if data_format is None:
        return "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format


def _four(value, name: str, data_format: str, what: str) -> list[int]:
    """An int or a list of 1, 2 or 4 ints, as the 4-list TF ops take (N, C entries 1)."""
    if value is None:
        value = 1
    seq = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    h, w, c = _hw_axes(data_format)
    if len(seq) == 1:
        seq = seq * 2
    if len(seq) == 2:
        out = [1, 1, 1, 1]
        out[h], out[w] = seq
        seq = out
    if len(seq) != 4:
        raise ValueError(f"{what}: {name} should be of length 1, 2 or 4. Received: "
                         f"{name}={list(value)} of length {len(seq)}")
    if seq[0] != 1 or seq[c] != 1:
        raise ValueError(f"{what}: {name}={seq} with data_format {data_format}: {name} in the "
                         "batch and depth dimensions must be 1")
    if any(v < 1 for v in seq):
        raise ValueError(f"{what}: {name}={seq} must all be positive")
    return seq


def _padding_attrs(padding, data_format: str, what: str) -> tuple[str, list[int]]:
    """(padding, explicit_paddings) from 'SAME' / 'VALID' or a list of 4 pairs."""
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"{what}: padding must be 'SAME', 'VALID' or a list of 4 "
                             f"[before, after] pairs, got {padding!r}")
        return padding, []
    try:
        pairs = [[int(a), int(b)] for a, b in padding]
    except (TypeError, ValueError):
        raise ValueError(f"{what}: explicit padding must be 4 [before, after] pairs, got "
                         f"{padding!r}") from None
    if len(pairs) != 4:
        raise ValueError(f"{what}: explicit padding needs 4 [before, after] pairs, one per "
                         f"dimension, got {len(pairs)}")
    _, _, c = _hw_axes(data_format)
    if pairs[0] != [0, 0] or pairs[c] != [0, 0]:
        raise ValueError(f"{what}: nonzero explicit padding in the batch or depth dimensions "
                         f"is not supported (got {pairs})")
    if any(v < 0 for p in pairs for v in p):
        raise ValueError(f"{what}: explicit padding must be non-negative, got {pairs}")
    return "EXPLICIT", [v for p in pairs for v in p]


def window_output_size(op, in_dim: Dimension, k, s: int, d: int, padding: str,
                       pads: tuple[int, int] = (0, 0)) -> int | None:
    """Output length of one spatial dimension (None if unknown); see the module essay."""
    n = in_dim.value
    if n is None:
        return None
    if padding == "SAME":
        return -(-n // s)
    k = k.value if isinstance(k, Dimension) else k
    if k is None:
        return None
    eff = (k - 1) * d + 1
    n += pads[0] + pads[1]
    if n < eff:
        raise op.shape_error(
            f"Negative dimension size caused by subtracting {eff} (window of {k} with "
            f"dilation {d}) from {n}; use a smaller window or padding='SAME'")
    return (n - eff) // s + 1


def same_padding(n: int, k: int, s: int, d: int) -> tuple[int, int]:
    """(before, after) padding TF uses for padding='SAME'."""
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def _spatial_out(op, x: TensorShape, kh, kw) -> tuple[int | None, int | None]:
    h, w, _ = _hw_axes(op.attrs["data_format"])
    strides, dil = op.attrs["strides"], op.attrs.get("dilations", [1, 1, 1, 1])
    pads = op.attrs.get("explicit_paddings") or [0] * 8
    padding = op.attrs["padding"]
    return (
        window_output_size(op, x[h], kh, strides[h], dil[h], padding, pads[2 * h:2 * h + 2]),
        window_output_size(op, x[w], kw, strides[w], dil[w], padding, pads[2 * w:2 * w + 2]),
    )


def _make_nhwc(op, n, oh, ow, c) -> TensorShape:
    if op.attrs["data_format"] == "NCHW":
        return TensorShape([n, c, oh, ow])
    return TensorShape([n, oh, ow, c])


def _conv_inputs(input, filter, what: str) -> tuple[Tensor, Tensor]:
    x = convert_to_tensor(input, name="input")
    if isinstance(filter, Tensor):
        f = convert_to_tensor(filter, name="filter")
    else:
        f = convert_to_tensor(filter, dtype=x.dtype.base_dtype, name="filter")
    if f.dtype.base_dtype != x.dtype.base_dtype:
        raise TypeError(f"{what}: filter has dtype {f.dtype.base_dtype.name} but input has "
                        f"{x.dtype.base_dtype.name}; cast one of them with tf.cast")
    _check_dtype(x, REALS, what, "input")
    return x, f


# -- Conv2D -------------------------------------------------------------------------------
_CONV_ATTRS = {"strides": None, "padding": "VALID", "explicit_paddings": [],
               "dilations": [1, 1, 1, 1], "data_format": "NHWC"}


def _conv_operands(op, x, f, last: str):
    """`x` and `f` as 4-D shapes (all dimensions unknown where the rank is), checked:
    both 4-D, the input's depth that of the filter's ``in``; and the input's channel
    axis. `last` names the filter's last dimension in messages ('out', 'multiplier')."""
    layout = f"[height, width, in, {last}]"
    if x.ndims is not None and x.ndims != 4:
        raise op.shape_error(f"input must be 4-D but has rank {x.ndims}")
    if f.ndims is not None and f.ndims != 4:
        raise op.shape_error(f"filter must be 4-D {layout} but has rank {f.ndims}")
    x = TensorShape([None] * 4) if x.ndims is None else x
    f = TensorShape([None] * 4) if f.ndims is None else f
    _, _, c = _hw_axes(op.attrs["data_format"])
    if not x[c].is_compatible_with(f[2]):
        raise op.shape_error(
            f"input depth {x[c]} (input shape {x}) does not match the filter's input depth "
            f"{f[2]} (filter shape {f} = {layout})")
    return x, f, c


@register_op("Conv2D", attrs={**_CONV_ATTRS, "use_cudnn_on_gpu": True}, cost=OpCost.BLAS)
def _conv2d_shape(op, x, f):
    x, f, _ = _conv_operands(op, x, f, "out")
    oh, ow = _spatial_out(op, x, f[0], f[1])
    return [_make_nhwc(op, x[0], oh, ow, f[3])]


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """2-D convolution (cross-correlation) of a 4-D `input` with a 4-D `filter`.

    Parameters
    ----------
    input : Tensor
        ``[batch, height, width, in_channels]`` (``[batch, in, height, width]`` for NCHW).
    filter : Tensor
        ``[filter_height, filter_width, in_channels, out_channels]``; `filters` is an alias.
    strides, dilations : int or list of 1, 2 or 4 ints
        Per-dimension step of the window and spacing of the filter taps.
    padding : 'SAME', 'VALID' or a list of 4 ``[before, after]`` pairs
        See the module docstring for the output sizes.
    data_format : 'NHWC' or 'NCHW'
        TensorFlow's CPU kernel only supports NHWC; flowgraph supports both.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.ones([1, 4, 3, 1])
    >>> y = tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="VALID")
    >>> tf.Session().run(y)[0, :, :, 0]
    array([[4., 4.],
           [4., 4.],
           [4., 4.]], dtype=float32)
    """
    if filters is not None:
        if filter is not None:
            raise ValueError("conv2d: pass either filter or filters, not both")
        filter = filters
    if filter is None or strides is None or padding is None:
        raise TypeError("conv2d() needs input, filter, strides and padding")
    fmt = _check_format(data_format, "conv2d")
    attrs = {"strides": _four(strides, "strides", fmt, "conv2d"),
             "dilations": _four(dilations, "dilations", fmt, "conv2d"),
             "data_format": fmt, "use_cudnn_on_gpu": bool(use_cudnn_on_gpu)}
    attrs["padding"], attrs["explicit_paddings"] = _padding_attrs(padding, fmt, "conv2d")
    with name_scope(name, "Conv2D", [input, filter]) as scope:
        x, f = _conv_inputs(input, filter, "Conv2D")
        return make_tensor("Conv2D", [x, f], attrs, name=scope)


# -- DepthwiseConv2dNative ----------------------------------------------------------------
@register_op("DepthwiseConv2dNative", attrs=dict(_CONV_ATTRS), cost=OpCost.EXPENSIVE)
def _depthwise_shape(op, x, f):
    x, f, c = _conv_operands(op, x, f, "multiplier")
    oh, ow = _spatial_out(op, x, f[0], f[1])
    return [_make_nhwc(op, x[0], oh, ow, x[c].merge_with(f[2]) * f[3])]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """Depthwise 2-D convolution: each input channel has its own `multiplier` filters.

    `filter` is ``[height, width, in_channels, multiplier]``; the output has
    ``in_channels * multiplier`` channels, channel ``c * multiplier + m`` coming from input
    channel ``c`` and filter ``m``. `rate` (or its alias `dilations`) is the 2-element
    dilation. Unlike TensorFlow, which gives inconsistent output sizes when both `rate` and
    `strides` exceed 1, flowgraph computes the dilated, strided convolution exactly.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None, 7, 5, 3])
    >>> tf.nn.depthwise_conv2d(x, tf.ones([3, 2, 3, 2]), [1, 1, 1, 1], "SAME").shape.as_list()
    [None, 7, 5, 6]
    """
    if rate is not None and dilations is not None:
        raise ValueError("depthwise_conv2d: pass either rate or dilations, not both")
    rate = dilations if rate is None else rate
    with name_scope(name, "depthwise", [input, filter]) as scope:
        return depthwise_in_scope(input, filter, strides, padding, rate, data_format, scope)


def depthwise_in_scope(input, filter, strides, padding, rate, data_format, op_name: str):
    """TensorFlow's depthwise convolution layout in the current name scope
    (`depthwise_conv2d`, `separable_conv2d`): the filter's shape (``Shape``) and
    ``dilation_rate`` constants, then a dilation > 1 as SpaceToBatchND, an undilated
    DepthwiseConv2dNative named `op_name` and BatchToSpaceND
    (`flowgraph.ops.nn_space_to_batch`); otherwise the one DepthwiseConv2dNative."""
    from flowgraph.ops.array_shape_ops import shape

    fmt = _check_format(data_format, "depthwise_conv2d")
    attrs = {"strides": _four(strides, "strides", fmt, "depthwise_conv2d"),
             "dilations": _four(rate, "rate", fmt, "depthwise_conv2d"), "data_format": fmt}
    attrs["padding"], attrs["explicit_paddings"] = _padding_attrs(padding, fmt,
                                                                  "depthwise_conv2d")
    x, f = _conv_inputs(input, filter, "DepthwiseConv2dNative")
    from flowgraph.ops.nn_space_to_batch import dilated_by_space_to_batch

    shape(f)
    h, w, _ = _hw_axes(attrs["data_format"])
    rate = [attrs["dilations"][h], attrs["dilations"][w]]
    if rate != [1, 1] and attrs["strides"] == [1, 1, 1, 1] and \
            attrs["data_format"] == "NHWC" and attrs["padding"] in ("SAME", "VALID"):
        plain = {**attrs, "dilations": [1, 1, 1, 1]}

        def build(t, padding):
            return make_tensor("DepthwiseConv2dNative", [t, f], {**plain, "padding": padding},
                               name=op_name)

        return dilated_by_space_to_batch(x, rate, attrs["padding"],
                                         f.shape.as_list() if f.shape.ndims else None, build,
                                         filter_shape_is_tensor=True)
    convert_to_tensor([int(r) for r in rate], name="dilation_rate")
    return make_tensor("DepthwiseConv2dNative", [x, f], attrs, name=op_name)


# -- Pooling ------------------------------------------------------------------------------
def _pool_shape(op, x):
    if x.ndims is not None and x.ndims != 4:
        raise op.shape_error(f"input must be 4-D but has rank {x.ndims}")
    if x.ndims is None:
        x = TensorShape([None] * 4)
    h, w, c = _hw_axes(op.attrs["data_format"])
    k = op.attrs["ksize"]
    oh, ow = _spatial_out(op, x, k[h], k[w])
    return [_make_nhwc(op, x[0], oh, ow, x[c])]


register_op("MaxPool", attrs={"ksize": None, "strides": None, "padding": "VALID",
                              "data_format": "NHWC"}, cost=OpCost.EXPENSIVE)(_pool_shape)
register_op("AvgPool", attrs={"ksize": None, "strides": None, "padding": "VALID",
                              "data_format": "NHWC"}, cost=OpCost.EXPENSIVE)(_pool_shape)


def _pool(op_type, default_name, value, ksize, strides, padding, data_format, name, input,
          allowed):
    if input is not None:
        if value is not None:
            raise ValueError(f"{default_name}: pass either value or input, not both")
        value = input
    what = default_name
    fmt = _check_format(data_format, what)
    if not isinstance(padding, str) or padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"ksize": _four(ksize, "ksize", fmt, what),
             "strides": _four(strides, "strides", fmt, what),
             "padding": padding, "data_format": fmt}
    with name_scope(name, default_name, [value]) as scope:
        x = convert_to_tensor(value, name="input")
        _check_dtype(x, allowed, op_type, "value")
        return make_tensor(op_type, [x], attrs, name=scope)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """Max over windows of size `ksize` moved by `strides` (SAME pads with -inf).

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.max_pool(tf.ones([1, 3, 4, 1]), 2, 2, "SAME")
    >>> y.shape.as_list()
    [1, 2, 2, 1]
    """
    return _pool("MaxPool", "MaxPool", value, ksize, strides, padding, data_format, name,
                 input, REALS)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """Mean over windows; with padding='SAME' each window divides by its count of real
    (non-padding) elements, as TensorFlow does.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.avg_pool(tf.ones([1, 3, 4, 1]), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    >>> tf.Session().run(y)[0, :, :, 0]
    array([[1., 1.],
           [1., 1.]], dtype=float32)
    """
    return _pool("AvgPool", "AvgPool", value, ksize, strides, padding, data_format, name,
                 input, FLOATS)


# -- L2 normalization ---------------------------------------------------------------------
@register_op("L2Normalize", attrs={"axis": None, "epsilon": 1e-12})
def _l2_normalize_shape(op, x):
    axis = op.attrs["axis"]
    if x.ndims is not None and axis is not None:
        for a in axis:
            if not -x.ndims <= a < x.ndims:
                raise op.shape_error(f"axis {a} is out of range for a tensor of rank {x.ndims}")
    return [x]


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(reduce_sum(x**2, axis, keepdims=True), epsilon))``.

    `axis` is an int, a list of ints, or None (all dimensions); `dim` is TF1's alias.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.nn.l2_normalize([[3.0, 4.0]], axis=1))
    array([[0.6, 0.8]], dtype=float32)
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    from flowgraph.ops import math_ops, math_reduce

    with name_scope(name, "l2_normalize", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        if t.dtype.is_complex:  # TensorFlow normalizes the real and imaginary parts
            return _l2_normalize_complex(t, axis, epsilon, scope)
        _check_dtype(t, FLOATS, "L2Normalize", "x")
        # TensorFlow's graph: Square, Sum (keepdims), Maximum, Rsqrt, Mul (the op named
        # after the scope); flowgraph's fused L2Normalize op remains for stored graphs
        square_sum = math_reduce.reduce_sum(math_ops.square(t), axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(t, inv_norm, name=scope)


def _l2_normalize_complex(t, axis, epsilon, name):
    from flowgraph.ops import math_ops, math_reduce, spectral_ops

    re, im = spectral_ops.real(t), spectral_ops.imag(t)
    square_sum = math_reduce.reduce_sum(math_ops.square(re) + math_ops.square(im), axis,
                                        keepdims=True)
    inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
    return spectral_ops.complex(re * inv_norm, im * inv_norm, name=name)


def fused_l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """One ``L2Normalize`` op (flowgraph's own type) computing what `l2_normalize`
    builds from TensorFlow's ops; it remains for graphs that hold it.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_ops import fused_l2_normalize
    >>> fused_l2_normalize(tf.constant([[3.0, 4.0]]), 1).op.type
    'L2Normalize'
    """
    if axis is not None:
        axis = [int(axis)] if isinstance(axis, int) else [int(a) for a in axis]
    with name_scope(name, "l2_normalize", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        _check_dtype(t, FLOATS, "L2Normalize", "x")
        return make_tensor("L2Normalize", [t], {"axis": axis, "epsilon": float(epsilon)},
                           name=scope)


# -- Moments (composite, as in TensorFlow) ------------------------------------------------
def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and variance of `x` over `axes`; `shift` is accepted and unused, as in TF.

    float16 inputs are reduced in float32. Reduced axes are dropped unless `keepdims`
    (TF1 alias `keep_dims`).

    Example
    -------
    >>> import flowgraph as tf
    >>> mean, var = tf.nn.moments(tf.constant([[1.0, 2.0], [3.0, 6.0]]), axes=[0])
    >>> tf.Session().run([mean, var])
    [array([2., 4.], dtype=float32), array([1., 4.], dtype=float32)]
    """
    from flowgraph.ops import array_ops, math_ops, math_reduce

    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        t = convert_to_tensor(x, name="x")
        y = math_ops.cast(t, _dtypes.float32) if t.dtype == _dtypes.float16 else t
        mean = math_reduce.reduce_mean(y, axes, keepdims=True, name="mean")
        sq = math_ops.squared_difference(y, array_ops.stop_gradient(mean))
        variance = math_reduce.reduce_mean(sq, axes, keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if t.dtype == _dtypes.float16:
            return math_ops.cast(mean, t.dtype), math_ops.cast(variance, t.dtype)
        return mean, variance
