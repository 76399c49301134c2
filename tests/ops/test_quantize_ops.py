"""The quantization ops: `tf.quantize`/`quantize_v2`, `tf.dequantize`,
`tf.quantized_concat` and `tf.nn.quantized_*`.

Expected codes and ranges marked "oracle" were printed by TensorFlow 2.15
(`tf.compat.v1`, CPU) through `/work/shared/tools/tf-oracle` for the same inputs; the
others come from NumPy references written here.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

X = [-1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.5, 6.0]


def _codes(v):
    v = np.asarray(v)
    return v.view(v.dtype[0]) if v.dtype.names else v


def _run(fetches, feed=None):
    with tf.Session() as sess:
        out = sess.run(fetches, feed)
    if isinstance(out, (list, tuple)):
        return [_codes(v) for v in out]
    return _codes(out)


def _q(values, dtype):
    return tf.bitcast(tf.constant(np.asarray(values).astype(dtype.as_numpy_dtype[0])), dtype)


# oracle: tf.quantize(X, -1.0, 6.0, T, mode, round_mode, narrow_range) -> codes, min, max
QUANTIZE = [
    ("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", False, tf.quint8,
     [0, 18, 36, 47, 55, 73, 127, 255], -1.0, 6.0),
    ("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", True, tf.qint8,
     [-128, -110, -92, -81, -73, -55, -1, 127], -1.0, 6.0),
    ("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", False, tf.quint16,
     [0, 4681, 9362, 12171, 14043, 18724, 32768, 65535], -1.0, 6.0),
    ("MIN_COMBINED", "HALF_AWAY_FROM_ZERO", False, tf.qint16,
     [-32768, -28087, -23406, -20597, -18725, -14044, -1, 32767], -1.0, 6.0),
    ("MIN_FIRST", "HALF_AWAY_FROM_ZERO", False, tf.quint8,
     [0, 18, 36, 47, 54, 72, 127, 255], -1.0, 6.0),
    ("MIN_FIRST", "HALF_AWAY_FROM_ZERO", False, tf.qint8,
     [-128, -110, -92, -81, -74, -56, -1, 127], -1.0, 6.0),
    ("MIN_FIRST", "HALF_AWAY_FROM_ZERO", True, tf.qint32,
     [-2147483648, -1840700288, -1533916928, -1349846912, -1227133568, -920350144, 0,
      2147483520], -1.0, 6.0),
    ("MIN_FIRST", "HALF_AWAY_FROM_ZERO", False, tf.quint16,
     [0, 4681, 9362, 12171, 14043, 18724, 32767, 65535], -1.0, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", False, tf.quint8,
     [0, 0, 0, 13, 21, 43, 106, 255], 0.0, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", False, tf.qint8,
     [-21, -11, 0, 6, 11, 21, 53, 127], -6.047244, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", True, tf.quint8,
     [1, 1, 1, 13, 21, 43, 106, 255], 0.023529412, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", True, tf.qint8,
     [-21, -11, 0, 6, 11, 21, 53, 127], -6.0, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", False, tf.qint16,
     [-5461, -2731, 0, 1638, 2731, 5461, 13653, 32767], -6.000183, 6.0),
    ("SCALED", "HALF_AWAY_FROM_ZERO", True, tf.quint16,
     [1, 1, 1, 3277, 5461, 10923, 27306, 65535], 9.155413e-05, 6.0),
    ("SCALED", "HALF_TO_EVEN", False, tf.quint8,
     [0, 0, 0, 13, 21, 42, 106, 255], 0.0, 6.0),
    ("SCALED", "HALF_TO_EVEN", False, tf.quint16,
     [0, 0, 0, 3277, 5461, 10922, 27306, 65535], 0.0, 6.0),
]


@pytest.mark.parametrize(("mode", "round_mode", "narrow", "dtype", "codes", "lo", "hi"),
                         QUANTIZE, ids=lambda v: getattr(v, "name", str(v)))
def test_quantize_matches_tensorflow(mode, round_mode, narrow, dtype, codes, lo, hi):
    q = tf.quantize(X, -1.0, 6.0, dtype, mode=mode, round_mode=round_mode,
                    narrow_range=narrow)
    assert q.output.dtype == dtype and q.output.shape.as_list() == [8]
    assert q.output_min.shape.as_list() == [] and q.output_min.dtype == tf.float32
    out, mn, mx = _run(list(q))
    assert out.dtype == np.dtype(dtype.as_numpy_dtype[0])
    np.testing.assert_array_equal(out, codes)
    np.testing.assert_allclose([mn, mx], [lo, hi], rtol=1e-6)


@pytest.mark.parametrize(("lo", "hi", "kwargs", "codes", "out_range"), [
    # oracle: the range widened to contain 0 and to span ensure_minimum_range
    (1.0, 6.0, {}, [0, 0, 0, 13, 21, 43, 106, 255], (0.0, 6.0)),
    (0.0, 0.001, {}, [0, 0, 0, 255, 255, 255, 255, 255], (0.0, 0.01)),
    (0.0, 0.001, {"ensure_minimum_range": 0.0}, [0, 0, 0, 255, 255, 255, 255, 255],
     (0.0, 0.001)),
])
def test_quantize_adjusts_the_range(lo, hi, kwargs, codes, out_range):
    out, mn, mx = _run(list(tf.quantize(X, lo, hi, tf.quint8, **kwargs)))
    np.testing.assert_array_equal(out, codes)
    np.testing.assert_allclose([mn, mx], out_range, rtol=1e-6)


def test_quantize_per_axis():
    x = tf.reshape(tf.constant(X), [4, 2])
    scaled = tf.quantize(x, [-1.0, -2.0], [1.0, 6.0], tf.qint8, mode="SCALED", axis=1)
    combined = tf.quantize(x, [-1.0, -2.0], [1.0, 6.0], tf.qint8, axis=1)
    assert scaled.output_min.shape.as_list() == [2]
    s, smin, smax = _run(list(scaled))
    np.testing.assert_allclose(smax, [1.0, 6.0])
    c, cmin, cmax = _run(list(combined))
    # oracle
    np.testing.assert_array_equal(s, [[-127, -11], [0, 6], [64, 21], [127, 127]])
    np.testing.assert_allclose(smin, [-1.007874, -6.047244], rtol=1e-6)
    np.testing.assert_array_equal(c, [[-128, -80], [-1, -55], [63, -32], [127, 127]])
    np.testing.assert_allclose([cmin, cmax], [[-1.0, -2.0], [1.0, 6.0]])


def test_per_axis_forms_match_tensorflow():
    x = np.array([[-1.0, -0.5], [0.0, 0.3], [0.5, 1.0], [2.5, 6.0]], np.float32)
    rows = tf.quantize(x, [-1.0, -2.0, 0.0, 1.0], [1.0, 6.0, 2.0, 3.0], tf.quint8,
                       mode="SCALED", axis=0)
    out, lo, hi = _run(list(rows))
    # oracle
    np.testing.assert_array_equal(out, [[0, 0], [0, 13], [64, 128], [213, 255]])
    np.testing.assert_array_equal([lo, hi], [[0.0] * 4, [1.0, 6.0, 2.0, 3.0]])
    q = _q([[-128, -1], [0, 1], [64, 127]], tf.qint8)
    combined = tf.dequantize(q, [-1.0, -2.0], [1.0, 6.0], axis=1)
    scaled = tf.dequantize(q, [-1.0, -2.0], [1.0, 6.0], mode="SCALED", axis=1)
    np.testing.assert_allclose(_run(combined), [  # oracle
        [-1.0, 1.98431], [0.00392, 2.04706], [0.50588, 6.0]], atol=1e-5)
    np.testing.assert_allclose(_run(scaled), [  # oracle
        [-1.00787, -0.04724], [0.0, 0.04724], [0.50394, 6.0]], rtol=1e-4)
    with pytest.raises(errors.UnimplementedError, match="MIN_FIRST"):
        tf.quantize(x, [-1.0, -2.0], [1.0, 6.0], tf.qint8, mode="MIN_FIRST", axis=1)
    with pytest.raises(errors.UnimplementedError, match="MIN_FIRST"):
        tf.dequantize(q, [-1.0, -2.0], [1.0, 6.0], mode="MIN_FIRST", axis=1)
    with pytest.raises(ValueError, match="min_range must be a vector of the 2 slices"):
        tf.quantize(x, [-1.0, -2.0, 0.0], [1.0, 6.0, 2.0], tf.qint8, axis=1)
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.quantize(x, [-1.0, -2.0], [1.0, 6.0], tf.qint8)


def test_quantize_errors_match_tensorflow():
    with pytest.raises(TypeError, match="parameter 'T' has DataType float32"):
        tf.quantize(X, -1.0, 6.0, tf.float32)
    with pytest.raises(ValueError, match="Attr 'mode' of 'QuantizeV2'"):
        tf.quantize(X, -1.0, 6.0, tf.quint8, mode="BAD")
    with pytest.raises(errors.InvalidArgumentError, match="input_max_range must be larger"):
        _run(tf.quantize(X, 3.0, 1.0, tf.qint8).output)
    with pytest.raises(errors.InvalidArgumentError, match="only supported for mode 'SCALED'"):
        _run(tf.quantize(X, -1.0, 6.0, tf.quint8, round_mode="HALF_TO_EVEN").output)


U8 = [0, 1, 18, 127, 128, 255]
S8 = [-128, -127, -1, 0, 1, 127]
# oracle: tf.dequantize(codes, -1.0, 6.0, mode) (narrow_range changes none of these)
DEQUANTIZE = [
    ("MIN_COMBINED", tf.quint8, U8,
     [-1.0, -0.972549, -0.505882, 2.486274, 2.513726, 6.0]),
    ("MIN_COMBINED", tf.qint8, S8,
     [-1.0, -0.972549, 2.486274, 2.513726, 2.541177, 6.0]),
    ("MIN_FIRST", tf.quint8, U8,
     [-0.988235, -0.960784, -0.494118, 2.498039, 2.525490, 6.011765]),
    ("MIN_FIRST", tf.qint8, S8,
     [-0.988235, -0.960784, 2.498039, 2.525490, 2.552941, 6.011765]),
    ("SCALED", tf.quint8, U8, [0.0, 0.023529, 0.423529, 2.988235, 3.011765, 6.0]),
    ("SCALED", tf.qint8, S8, [-6.047244, -6.0, -0.047244, 0.0, 0.047244, 6.0]),
    ("MIN_FIRST", tf.qint32, [-2147483648, 0, 5, 2147483647], [-1.0, 2.5, 2.5, 6.0]),
    ("MIN_COMBINED", tf.quint16, [0, 5, 65535], [-1.0, -0.999466, 6.0]),
]


@pytest.mark.parametrize(("mode", "dtype", "codes", "expected"), DEQUANTIZE,
                         ids=lambda v: getattr(v, "name", None))
def test_dequantize_matches_tensorflow(mode, dtype, codes, expected):
    y = tf.dequantize(_q(codes, dtype), -1.0, 6.0, mode=mode)
    assert y.dtype == tf.float32 and y.shape.as_list() == [len(codes)]
    np.testing.assert_allclose(_run(y), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["MIN_COMBINED", "MIN_FIRST", "SCALED"])
@pytest.mark.parametrize("dtype", [tf.quint8, tf.qint8, tf.qint16])
def test_round_trip_is_within_one_step(mode, dtype):
    x = np.linspace(-1.0, 6.0, 57).astype(np.float32)
    q = tf.quantize(x, -1.0, 6.0, dtype, mode=mode)
    y = tf.dequantize(q.output, q.output_min, q.output_max, mode=mode)
    back, lo, hi = _run([y, q.output_min, q.output_max])
    step = (hi - lo) / (2.0 ** (8 * np.dtype(dtype.as_numpy_dtype[0]).itemsize) - 1)
    # values below the range (SCALED quint8 starts at 0.0) come back clamped
    assert np.max(np.abs(back - np.maximum(x, lo))) <= step + 1e-6


def test_quantized_concat_matches_tensorflow():
    a = _q([[0, 100], [200, 255]], tf.quint8)
    b = _q([[10, 20]], tf.quint8)
    out = tf.quantized_concat(0, [a, b], [0.0, -2.0], [1.0, 3.0])
    assert out.output.shape.as_list() == [3, 2] and out.output.dtype == tf.quint8
    # oracle
    np.testing.assert_array_equal(_run(out.output), [[102, 122], [142, 153], [10, 20]])
    np.testing.assert_allclose(_run([out.output_min, out.output_max]), [-2.0, 3.0])
    pos = tf.quantized_concat(1, [_q([[1, 2]], tf.quint8), _q([[3, 4]], tf.quint8)],
                              [0.5, 1.0], [1.0, 2.0])
    np.testing.assert_array_equal(_run(pos.output), [[64, 64, 129, 130]])
    s32 = tf.quantized_concat(
        0, [_q([[-2147483648, 100], [0, 2147483647]], tf.qint32),
            _q([[-10, 20000000]], tf.qint32)], [-1.0, 0.5], [1.0, 3.0])
    out, mn, mx = _run(list(s32))
    np.testing.assert_array_equal(out, [[-715827904, 33], [0, 715827904],
                                        [1252698880, 1261032192]])
    assert (mn, mx) == (-3.0, 3.0)


def test_quantized_concat_has_tensorflows_kernels_only():
    bad = tf.quantized_concat(0, [_q([1], tf.qint8), _q([2], tf.qint8)], [0.0, 0.0],
                              [1.0, 1.0])
    with pytest.raises(errors.InvalidArgumentError, match="quint8 and qint32"):
        _run(bad.output)
    with pytest.raises(ValueError, match="one range per value"):
        tf.quantized_concat(0, [_q([1], tf.quint8)], [0.0, 1.0], [1.0])


IMG = np.arange(2 * 4 * 5 * 3).reshape(2, 4, 5, 3) * 7 % 256


def test_quantized_max_pool_matches_tensorflow():
    y = tf.nn.quantized_max_pool(_q(IMG, tf.quint8), -1.0, 2.0, [1, 2, 2, 1], [1, 2, 2, 1],
                                 "VALID")
    assert y.output.shape.as_list() == [2, 2, 2, 3]
    out, mn, mx = _run(list(y))
    # oracle
    np.testing.assert_array_equal(out, [
        [[[126, 133, 140], [168, 175, 182]], [[231, 238, 245], [252, 129, 136]]],
        [[[185, 192, 199], [227, 234, 241]], [[244, 251, 237], [181, 188, 195]]]])
    assert (mn, mx) == (-1.0, 2.0)
    same = tf.nn.quantized_max_pool(_q(IMG - 128, tf.qint8), -1.0, 2.0, [1, 3, 2, 1],
                                    [1, 2, 1, 1], "SAME")
    assert same.output.shape.as_list() == [2, 2, 5, 3]
    np.testing.assert_array_equal(_run(same.output)[0, 0], [  # oracle
        [103, 110, 117], [124, 110, 117], [124, 47, 54], [61, 68, 75], [61, 68, 75]])


def test_quantized_avg_pool_matches_tensorflow():
    y = tf.nn.quantized_avg_pool(_q(IMG, tf.quint8), -1.0, 2.0, [1, 3, 2, 1], [1, 2, 2, 1],
                                 "SAME")
    assert y.output.shape.as_list() == [2, 2, 3, 3]
    # oracle: averages over the valid positions, rounded half to even (115.5 -> 116,
    # 122.5 -> 122)
    np.testing.assert_array_equal(_run(y.output), [
        [[[116, 122, 130], [115, 79, 86], [104, 111, 118]],
         [[145, 152, 159], [123, 66, 73], [90, 98, 104]]],
        [[[109, 116, 123], [151, 158, 165], [182, 189, 111]],
         [[181, 188, 131], [95, 102, 109], [126, 134, 140]]]])
    valid = tf.nn.quantized_avg_pool(_q(IMG - 128, tf.qint8), -1.0, 2.0, [1, 2, 2, 1],
                                     [1, 1, 2, 1], "VALID")
    np.testing.assert_array_equal(_run(valid.output)[0], [  # oracle
        [[-65, -58, -51], [-23, -16, -9]], [[40, 47, 54], [18, -39, -32]],
        [[17, 24, 31], [-5, -62, -55]]])


CIN = np.arange(1 * 4 * 5 * 2).reshape(1, 4, 5, 2) * 13 % 256
CF = np.arange(3 * 2 * 2 * 3).reshape(3, 2, 2, 3) * 11 % 256


def _conv_reference(x, f, zx, zf, stride, padding):
    """Integer cross-correlation of (x - zx) and (f - zf), zero padding (NumPy)."""
    x = x.astype(np.int64) - zx
    f = f.astype(np.int64) - zf
    kh, kw = f.shape[:2]
    if padding == "SAME":
        oh, ow = -(-x.shape[1] // stride), -(-x.shape[2] // stride)
        ph, pw = max(0, (oh - 1) * stride + kh - x.shape[1]), max(
            0, (ow - 1) * stride + kw - x.shape[2])
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, f.shape[3]), np.int64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, f, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_quantized_conv2d_matches_tensorflow_and_numpy():
    y = tf.nn.quantized_conv2d(_q(CIN, tf.quint8), _q(CF, tf.quint8), -1.0, 2.0, -0.5, 0.5,
                               [1, 1, 1, 1], "SAME")
    assert y.output.shape.as_list() == [1, 4, 5, 3] and y.output.dtype == tf.qint32
    out, mn, mx = _run(list(y))
    # zero points: the codes of 0.0 are 85 (input) and 128 (filter)
    np.testing.assert_array_equal(out, _conv_reference(CIN, CF, 85, 128, 1, "SAME"))
    np.testing.assert_array_equal(out[0, 0], [  # oracle
        [-27916, -27960, -28004], [-29684, -27440, -25196], [-31452, -26920, -22388],
        [-33220, -26400, -19580], [-30714, -26732, -22750]])
    np.testing.assert_allclose([mn, mx], [-99076.53125, 99076.53125])  # oracle
    v = tf.nn.quantized_conv2d(_q(CIN, tf.quint8), _q(CF, tf.quint8), 0.0, 2.0, -0.5, 1.5,
                               [1, 2, 2, 1], "VALID")
    out, mn, mx = _run(list(v))
    np.testing.assert_array_equal(out, [[[[74958, 83428, 91898],  # oracle
                                          [95030, 110364, 125698]]]])
    np.testing.assert_allclose([mn, mx], [-132102.046875, 132102.046875])


def test_quantized_conv2d_errors_match_tensorflow():
    dil = tf.nn.quantized_conv2d(_q(CIN, tf.quint8), _q(CF, tf.quint8), -1.0, 2.0, -0.5, 0.5,
                                 [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1])
    with pytest.raises(errors.InvalidArgumentError, match="dilated rate as 1"):
        _run(dil.output)
    s8 = tf.nn.quantized_conv2d(_q(CIN - 128, tf.qint8), _q(CF - 128, tf.qint8), -1.0, 2.0,
                                -0.5, 0.5, [1, 1, 1, 1], "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="quint8 input and filter"):
        _run(s8.output)


def test_quantized_relu_x_clamps_to_the_codes_of_zero_and_max_value():
    # TensorFlow 2.15 ships no kernel for QuantizedReluX: NumPy reference. In the range
    # [-1, 4] of quint8, 0.0 is code 51 and 2.0 is code 153.
    codes = np.array([0, 50, 100, 150, 200, 255])
    y = tf.nn.quantized_relu_x(_q(codes, tf.quint8), 2.0, -1.0, 4.0)
    assert y.activations.dtype == tf.quint8 and y.activations.shape.as_list() == [6]
    out, mn, mx = _run(list(y))
    np.testing.assert_array_equal(out, np.clip(codes, 51, 153))
    assert (mn, mx) == (-1.0, 4.0)
    back = _run(tf.dequantize(y.activations, y.min_activations, y.max_activations,
                              mode="MIN_FIRST"))
    x = _run(tf.dequantize(_q(codes, tf.quint8), -1.0, 4.0, mode="MIN_FIRST"))
    np.testing.assert_allclose(back, np.clip(x, 0.0, 2.0), atol=0.02)


def test_no_gradients_as_in_tensorflow():
    x = tf.constant([0.5, 1.0])
    q = tf.quantize(x, 0.0, 2.0, tf.quint8)
    y = tf.dequantize(q.output, q.output_min, q.output_max)
    with pytest.raises(LookupError, match="No gradient defined for operation"):
        tf.gradients(y, x)


def test_fed_quantized_placeholder_dequantizes():
    p = tf.placeholder(tf.quint8, [3])
    y = tf.dequantize(p, 0.0, 255.0)
    np.testing.assert_allclose(_run(y, {p: np.array([1, 2, 3], np.uint8)}), [1, 2, 3])
    np.testing.assert_allclose(_run(y, {p: [1, 2, 3]}), [1, 2, 3])


def _contract_params():
    import quantize_cases

    return [pytest.param(name, k, mode, id=f"{name}-{k}-{mode}")
            for name, cases in quantize_cases.CONTRACT_CASES.items()
            for k, (_, _, options) in enumerate(cases)
            for mode in options.get("modes", ("static", "batch", "dims", "rank"))]


@pytest.mark.parametrize(("op_type", "k", "mode"), _contract_params())
def test_quantize_contract(op_type, k, mode):
    """Static shapes and dtypes agree with what the kernels return (the op-contract check
    of tests/ops/test_op_contract.py, on this module's cases)."""
    import quantize_cases
    from test_op_contract import Case, check_contract

    inputs, build, options = quantize_cases.CONTRACT_CASES[op_type][k]
    assert check_contract(op_type, Case(list(inputs), build, **options), mode) > 0
