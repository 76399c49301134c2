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
from flowgraph.framework.registry import not_differentiable
from flowgraph.ops import math_ops as _m

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

_INTS = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
         _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)


def _binary(op_type, fn_name, summary, call, result):
    # math_ops' elementwise factory; the example calls the op through `tf.bitwise`.
    fn = _m._binary(op_type, fn_name, _INTS, summary, f"bitwise.{call}", result)
    fn.__module__ = __name__  # so that doctest and the API docs find it here
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


invert = _m._unary("Invert", "invert", _INTS, "Elementwise bitwise NOT, ``~x``.",
                   "bitwise.invert(tf.constant([0, 5], tf.uint8))", "[255 250]")
invert.__module__ = __name__


not_differentiable("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift",
                   "Invert")
