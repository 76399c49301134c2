"""Op-contract cases for the quantization ops (`flowgraph/ops/quantize_ops.py`,
`flowgraph/ops/quantize_nn_ops.py`), in the ``(inputs, build, options)`` form of
`issue15_cov_cases.CONTRACT_CASES`: `tests/ops/test_op_contract.py` runs them (and
`test_quantize_contract` below runs them too, in the static and unknown-rank modes).

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
