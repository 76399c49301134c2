"""Op-contract cases for the quantization ops (`flowgraph/ops/quantize_ops.py`,
`flowgraph/ops/quantize_nn_ops.py`, `flowgraph/ops/quantize_dequantize_ops.py`), in the
``(inputs, build, options)`` form of `issue15_cov_cases.CONTRACT_CASES`:
`tests/ops/test_op_contract.py` runs them (and `test_quantize_contract` below runs them
too, in the static and unknown-rank modes). `GRADIENT_CASES` join
`test_gradient_registry.CASES` (finite differences) for the ops that have a gradient.

Codes enter as plain integer placeholders and are bitcast to the quantized type, so the
placeholders' shapes (static, unknown dimensions, unknown rank) reach the op.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf

R = np.random.RandomState(5)


def _u8(*shape):
    return R.randint(0, 256, size=shape).astype(np.uint8)


def _q8(x):
    return tf.bitcast(x, tf.quint8)


def _f32(*shape):
    return R.uniform(-1.0, 6.0, size=shape).astype(np.float32)


CONTRACT_CASES = {
    "QuantizeV2": [
        ([_f32(2, 3)], lambda x: tf.quantize(x, -1.0, 6.0, tf.quint8), {}),
        ([_f32(4, 3)], lambda x: tf.quantize(x, [-1.0, -2.0, 0.0], [1.0, 6.0, 2.0], tf.qint8,
                                             mode="SCALED", axis=1),
         {"modes": ("static", "batch", "dims")}),
        ([_f32(5)], lambda x: tf.quantize(x, -1.0, 6.0, tf.qint32, mode="MIN_FIRST"), {}),
    ],
    "Dequantize": [
        ([_u8(2, 3)], lambda x: tf.dequantize(_q8(x), -1.0, 6.0, mode="MIN_FIRST"), {}),
    ],
    "QuantizedConcat": [
        ([_u8(2, 3), _u8(1, 3)], lambda a, b: tf.quantized_concat(
            0, [_q8(a), _q8(b)], [0.0, -1.0], [1.0, 2.0]), {}),
    ],
    "QuantizedReluX": [
        ([_u8(3, 2)], lambda x: tf.nn.quantized_relu_x(_q8(x), 2.0, -1.0, 4.0), {}),
    ],
    "QuantizedMaxPool": [
        ([_u8(2, 5, 4, 3)], lambda x: tf.nn.quantized_max_pool(
            _q8(x), 0.0, 1.0, [1, 2, 3, 1], [1, 2, 1, 1], "SAME"), {}),
    ],
    "QuantizedAvgPool": [
        ([_u8(2, 5, 4, 3)], lambda x: tf.nn.quantized_avg_pool(
            _q8(x), 0.0, 1.0, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), {}),
    ],
    "QuantizedConv2D": [
        ([_u8(2, 5, 4, 3), _u8(3, 2, 3, 4)], lambda x, f: tf.nn.quantized_conv2d(
            _q8(x), _q8(f), -1.0, 2.0, -0.5, 0.5, [1, 2, 1, 1], "SAME"), {}),
        ([_u8(1, 5, 4, 3), _u8(3, 2, 3, 4)], lambda x, f: tf.nn.quantized_conv2d(
            _q8(x), _q8(f), -1.0, 2.0, -0.5, 0.5, [1, 1, 1, 1], "VALID"), {}),
    ],
}

# TensorFlow registers no gradient for these op types: they stay undeclared (neither a
# gradient nor `not_differentiable`), so that `tf.gradients` through them raises
# LookupError as TensorFlow's does. `test_gradient_registry.test_every_op_is_declared`
# should accept them.
NO_GRADIENT_LIKE_TENSORFLOW = frozenset(CONTRACT_CASES)

# -- simulated quantization (quantize_and_dequantize), which has gradients -------------
_QDQ = tf.quantization.quantize_and_dequantize
_QDQ_V2 = tf.quantization.quantize_and_dequantize_v2


def _qdq_grad(g):
    """The QuantizeAndDequantizeV4Grad op, built by differentiating ``..._v2``."""
    x = tf.constant(np.array([-1.5, 0.25, 0.6, 2.0]), dtype=g.dtype)
    y = _QDQ_V2(x, tf.constant(-1.0, g.dtype), tf.constant(1.0, g.dtype), range_given=True)
    return tf.gradients(y, x, grad_ys=g)[0]


CONTRACT_CASES.update({
    "QuantizeAndDequantizeV2": [
        ([_f32(2, 3)], lambda x: _QDQ(x, -1.0, 6.0), {}),
        ([_f32(4, 3)], lambda x: _QDQ(x, [-1.0, -2.0, 0.0], [1.0, 6.0, 2.0], num_bits=4,
                                      range_given=True, axis=1), {}),
    ],
    "QuantizeAndDequantizeV4": [
        ([_f32(3, 2)], lambda x: _QDQ_V2(x, 0.0, 4.0, signed_input=False, range_given=True,
                                         round_mode="HALF_UP"), {}),
        ([_f32(2, 3, 4)], lambda x: _QDQ_V2(x, [0.0] * 3, [0.0] * 3, narrow_range=True,
                                            axis=1), {}),
    ],
    "QuantizeAndDequantizeV4Grad": [
        ([_f32(4)], _qdq_grad, {}),
    ],
})

# Where finite differences are defined they agree with TensorFlow's rules: the range
# inputs without range_given (the output does not depend on them; the gradient is None),
# V4 outside the range (flat, and the mask is zero) and V4Grad (linear in the incoming
# gradient). Inside the range the straight-through gradient differs from the derivative
# of a step function by design; test_quantize_dequantize_ops.py checks it against
# TensorFlow's values.
GRADIENT_CASES = {
    "QuantizeAndDequantizeV2": [
        ([np.array(-1.0)], lambda mn: _QDQ(tf.constant([0.3, -2.0, 1.7], mn.dtype), mn,
                                           tf.constant(1.0, mn.dtype))),
    ],
    "QuantizeAndDequantizeV4": [
        ([np.array([-3.0, 2.5, -2.2])],
         lambda x: _QDQ_V2(x, tf.constant(-1.0, x.dtype), tf.constant(1.0, x.dtype),
                           range_given=True)),
        ([np.array([[-3.0, 2.5], [4.0, -1.5]])],
         lambda x: _QDQ_V2(x, tf.constant([-1.0, 0.0], x.dtype),
                           tf.constant([1.0, 0.5], x.dtype), range_given=True,
                           axis=1, num_bits=4)),
    ],
    "QuantizeAndDequantizeV4Grad": [([R.uniform(-1.0, 1.0, size=4)], _qdq_grad)],
}
