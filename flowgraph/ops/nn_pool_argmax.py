"""`tf.nn.max_pool_with_argmax`: TensorFlow's ``MaxPoolWithArgmax`` op, a max pool that
also gives where each maximum came from, and the ``MaxPoolGradWithArgmax`` op its
gradient scatters through.

The index of input element ``[b, y, x, c]`` is ``(y * width + x) * channels + c``, plus
``b * height * width * channels`` with ``include_batch_in_index``. Within a window the
first maximum in row-major input order wins (TensorFlow's CPU kernel). Static shapes are
a max pool's: an unknown height or width leaves that output dimension unknown.

Example
-------
>>> import flowgraph as tf
>>> x = tf.reshape(tf.constant([1.0, 5.0, 3.0, 2.0]), [1, 2, 2, 1])
>>> out, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
>>> with tf.Session() as sess:
...     print(sess.run(argmax).ravel())
[1]
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.nn_ops import window_output_size
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["max_pool_with_argmax"]

_ATTRS = {"ksize": None, "strides": None, "padding": "VALID", "Targmax": _dtypes.int64,
          "include_batch_in_index": False}
_REALS = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64, _dtypes.int8,
          _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.uint16,
          _dtypes.uint32, _dtypes.uint64)


def _pooled_shape(op, x: TensorShape) -> TensorShape:
    if x.ndims is not None and x.ndims != 4:
        raise op.shape_error(f"input must be 4-D but has rank {x.ndims}")
    if x.ndims is None:
        x = TensorShape([None] * 4)
    k, s, padding = op.attrs["ksize"], op.attrs["strides"], op.attrs["padding"]
    return TensorShape([x[0], window_output_size(op, x[1], k[1], s[1], 1, padding),
                        window_output_size(op, x[2], k[2], s[2], 1, padding), x[3]])


@register_op("MaxPoolWithArgmax", attrs=dict(_ATTRS), num_outputs=2, cost=OpCost.EXPENSIVE,
             dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype,
                                  _dtypes.as_dtype(op.attrs["Targmax"])])
def _max_pool_with_argmax_shape(op, x):
    out = _pooled_shape(op, x)
    return [out, out]


@register_op("MaxPoolGradWithArgmax", attrs=dict(_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_grad_with_argmax_shape(op, x, grad, argmax):
    return [x]


@register_gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, unused_argmax_grad):
    attrs = {name: op.attrs[name] for name in _ATTRS}
    return [make_tensor("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], attrs,
                        name="MaxPoolGradWithArgmax")]


# MaxPoolGradWithArgmax has no gradient in TensorFlow (tf.gradients raises LookupError).

MaxPoolWithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def _four(value, name: str) -> list[int]:
    v = [int(value)] * 4 if isinstance(value, int) else [int(a) for a in value]
    if len(v) == 1:
        v = [1, v[0], v[0], 1]
    elif len(v) == 2:
        v = [1, v[0], v[1], 1]
    if len(v) != 4 or v[0] != 1 or v[3] != 1:
        raise ValueError(f"tf.nn.max_pool_with_argmax: {name} must be [1, rows, cols, 1] "
                         f"(pooling over batch or depth is not supported), got {value}")
    return v


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None,
                         name=None, output_dtype=None, include_batch_in_index=False):
    """Max pooling of a 4-D NHWC `input`, and the flat input index of each maximum.

    Parameters
    ----------
    input : Tensor
        ``[batch, height, width, channels]``, a real dtype.
    ksize, strides : list of int
        ``[1, rows, cols, 1]`` (or 1 or 2 ints).
    padding : str
        ``"SAME"`` or ``"VALID"``.
    output_dtype : DType
        int64 (default) or int32, the dtype of ``argmax`` (`Targmax` is its old name).
    include_batch_in_index : bool
        Count the index over the whole batch instead of within each image.

    Returns
    -------
    MaxPoolWithArgmax
        ``(output, argmax)``, both of the pooled shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None, 4, None, 2])
    >>> tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME").argmax.shape
    TensorShape([Dimension(None), Dimension(2), Dimension(None), Dimension(2)])
    """
    if data_format != "NHWC":
        raise ValueError(f"`data_format` values other  than 'NHWC' are not supported. "
                         f"Received: data_format={data_format}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.nn.max_pool_with_argmax: padding must be 'SAME' or 'VALID', "
                         f"got {padding!r}")
    if Targmax is not None and output_dtype is not None and \
            _dtypes.as_dtype(Targmax) != _dtypes.as_dtype(output_dtype):
        raise ValueError("Cannot specify both 'Targmax' and 'output_dtype'")
    argmax_dtype = _dtypes.as_dtype(Targmax if Targmax is not None else
                                    output_dtype if output_dtype is not None else _dtypes.int64)
    if argmax_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"tf.nn.max_pool_with_argmax: output_dtype must be int32 or int64, "
                        f"got {argmax_dtype.name}")
    attrs = {"ksize": _four(ksize, "ksize"), "strides": _four(strides, "strides"),
             "padding": padding, "Targmax": argmax_dtype,
             "include_batch_in_index": bool(include_batch_in_index)}
    with name_scope(name, "MaxPoolWithArgmax", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        if x.dtype.base_dtype not in _REALS:
            raise TypeError(f"Value passed to parameter 'input' has DataType "
                            f"{x.dtype.base_dtype.name} not in list of allowed values: "
                            f"{', '.join(d.name for d in _REALS)}")
        op = make_op("MaxPoolWithArgmax", [x], attrs, name=scope)
    return MaxPoolWithArgmax(*op.outputs)
