"""Bitwise ops on integer tensors (`tf.bitwise`): ``BitwiseAnd``, ``BitwiseOr``,
``BitwiseXor``, ``LeftShift``, ``RightShift`` (NumPy broadcasting) and ``Invert``. They
have no gradient.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.bitwise.bitwise_and([12, 10], [10, 6])))
[8 2]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import broadcast_shape
from flowgraph.ops.math_ops import check_dtype
from flowgraph.ops.op_util import binary_inputs, make_tensor

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

_INTS = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
         _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)


def _binary_shape(op, x, y):
    try:
        return [broadcast_shape(x, y)]
    except ValueError:
        raise op.shape_error(f"shapes {x} and {y} cannot be broadcast together") from None


def _binary(op_type, fn_name, summary, call, result):
    register_op(op_type)(_binary_shape)

    def fn(x, y, name=None):
        x, y = binary_inputs(x, y, op_type, name)
        check_dtype(x, _INTS, op_type)
        return make_tensor(op_type, [x, y], name=name or op_type)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = (f"{summary}\n\nExample\n-------\n>>> import flowgraph as tf\n"
                  f">>> with tf.Session() as sess:\n...     print(sess.run(tf.bitwise.{call}))"
                  f"\n{result}\n")
    return fn


bitwise_and = _binary("BitwiseAnd", "bitwise_and", "Elementwise ``x & y``.",
                      "bitwise_and([12], [10])", "[8]")
bitwise_or = _binary("BitwiseOr", "bitwise_or", "Elementwise ``x | y``.",
                     "bitwise_or([12], [10])", "[14]")
bitwise_xor = _binary("BitwiseXor", "bitwise_xor", "Elementwise ``x ^ y``.",
                      "bitwise_xor([12], [10])", "[6]")
left_shift = _binary("LeftShift", "left_shift", "Elementwise ``x << y``; shift amounts are "
                     "clamped to ``[0, bits - 1]`` as on TensorFlow's CPU.",
                     "left_shift([1, 3], [2, 1])", "[4 6]")
right_shift = _binary("RightShift", "right_shift", "Elementwise ``x >> y`` (arithmetic "
                      "for signed integers); shift amounts are clamped to "
                      "``[0, bits - 1]``.", "right_shift([16, -8], [2, 1])", "[ 4 -4]")


@register_op("Invert")
def _invert_shape(op, x):
    return [x]


def invert(x, name=None):
    """Elementwise bitwise NOT, ``~x``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.bitwise.invert(tf.constant([0, 5], tf.uint8))))
    [255 250]
    """
    x = convert_to_tensor(x)
    check_dtype(x, _INTS, "Invert")
    return make_tensor("Invert", [x], name=name or "Invert")


not_differentiable("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift",
                   "Invert")
