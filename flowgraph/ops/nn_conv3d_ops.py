"""3-D convolution and pooling (`tf.nn.conv3d`, `conv3d_transpose`, `max_pool3d`,
`avg_pool3d`): the wrappers of TensorFlow's ``Conv3D``, ``Conv3DBackpropInputV2``,
``MaxPool3D`` and ``AvgPool3D`` op types (defined, with their gradients, in
`flowgraph.ops.nn_ops3d`).

`strides`, `dilations` and `ksize` are an int, a list of 3 (depth, height, width) or a
list of 5 in the data format's order (batch and channel entries 1); `padding` is 'SAME'
or 'VALID'; `data_format` 'NDHWC' (the default) or 'NCDHW'. Any dimension may be unknown
when the graph is built.

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
from flowgraph.ops import nn_conv_ops
from flowgraph.ops import nn_ops3d as _defs
from flowgraph.ops.op_util import make_tensor

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


def _check_padding(padding, what: str) -> str:
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return padding


def _in_format(values: list[int], fmt: str) -> list[int]:
    """An NDHWC-ordered 5-list in `fmt`'s order (the ops' attributes)."""
    return [values[i] for i in _TO_NCDHW] if fmt == "NCDHW" else values


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """3-D convolution of ``[batch, depth, height, width, in_channels]`` with a filter
    ``[depth, height, width, in_channels, out_channels]``.

    `strides` and `dilations` are lists of 5 (batch and channel entries 1), of 3, or an
    int; `padding` is 'SAME' or 'VALID'; one ``Conv3D`` op.

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
    _check_padding(padding, what)
    attrs = {"strides": _in_format(strides, fmt), "padding": padding, "data_format": fmt,
             "dilations": _in_format(dil, fmt)}
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        x = convert_to_tensor(input, name="input")
        f = convert_to_tensor(filter, dtype=x.dtype.base_dtype, name="filter")
        return make_tensor("Conv3D", [x, f], attrs, name=scope)


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None,
                     padding="SAME", data_format="NDHWC", name=None, input=None,
                     filters=None, dilations=None):
    """The transpose (gradient with respect to the input) of `conv3d`.

    `filter` is ``[depth, height, width, output_channels, in_channels]``; `output_shape`
    is the result's shape; one ``Conv3DBackpropInputV2`` op.

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
    what = "conv3d_transpose"
    fmt = _check_format(data_format, what)
    attrs = {"strides": _in_format(_five(strides, "strides", fmt, what), fmt),
             "padding": _check_padding(padding, what), "data_format": fmt,
             "dilations": _in_format(_five(dilations, "dilations", fmt, what), fmt)}
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        x = convert_to_tensor(value, name="value")
        f = convert_to_tensor(filter, dtype=x.dtype.base_dtype, name="filter")
        sizes = convert_to_tensor(output_shape, name="output_shape")
        static = constant_value_as_shape(sizes)
        if static.ndims is not None and static.ndims != 5:
            raise ValueError(f"{what}: output_shape must have 5 elements, got {static}")
        if static.ndims == 5 and f.shape.ndims == 5 and x.shape.ndims == 5:
            channels = 1 if fmt == "NCDHW" else 4
            if not static[channels].is_compatible_with(f.shape[3]):
                raise ValueError(f"{what}: output_shape's channels {static[channels]} do not "
                                 f"match the filter's output_channels {f.shape[3]} (filter "
                                 f"shape {f.shape})")
            forward = _defs.conv3d_output_shape(static, f.shape, attrs)
            if not forward.is_compatible_with(x.shape):
                raise ValueError(f"{what}: convolving output_shape {static} with the filter "
                                 f"gives shape {forward}, which does not match value's "
                                 f"shape {x.shape}")
        y = make_tensor("Conv3DBackpropInputV2", [sizes, f, x], attrs, name=scope)
        y.set_shape(y.shape.merge_with(static) if static.ndims == 5 else y.shape)
        return y


def _pool3d(op_type, what, input, ksize, strides, padding, data_format, name):
    fmt = _check_format(data_format, what)
    attrs = {"ksize": _in_format(_five(ksize, "ksize", fmt, what), fmt),
             "strides": _in_format(_five(strides, "strides", fmt, what), fmt),
             "padding": _check_padding(padding, what), "data_format": fmt}
    with name_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        return make_tensor(op_type, [x], attrs, name=scope)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Max over ``[depth, height, width]`` windows of a 5-D tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.max_pool3d(tf.ones([1, 4, 4, 4, 2]), 2, 2, "VALID").shape.as_list()
    [1, 2, 2, 2, 2]
    """
    return _pool3d("MaxPool3D", "max_pool3d", input, ksize, strides, padding, data_format,
                   name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Mean over ``[depth, height, width]`` windows; 'SAME' windows divide by their count
    of real elements, as TensorFlow does.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.avg_pool3d(tf.ones([1, 3, 4, 4, 2]), 2, 2, "SAME").shape.as_list()
    [1, 2, 2, 2, 2]
    """
    return _pool3d("AvgPool3D", "avg_pool3d", input, ksize, strides, padding, data_format,
                   name)
