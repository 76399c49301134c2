"""conv2d, depthwise_conv2d, max_pool and avg_pool against nested-loop NumPy references."""

import math

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.errors import InvalidArgumentError

RNG = np.random.default_rng(0)


# -- references (plain loops, no tricks) --------------------------------------------------
def _pads(n, k, s, d, padding):
    e = (k - 1) * d + 1
    if padding == "VALID":
        return math.ceil((n - e + 1) / s), 0
    if padding == "SAME":
        out = math.ceil(n / s)
        return out, max((out - 1) * s + e - n, 0) // 2
    before, after = padding
    return (n + before + after - e) // s + 1, before


def _hpad(padding):
    return padding if isinstance(padding, str) else padding[1]


def _wpad(padding):
    return padding if isinstance(padding, str) else padding[2]


def ref_windows(x, kh, kw, strides, dilations, padding):
    """Yield (b, i, j, [(di, dj, row, col) for in-bounds taps])."""
    n, h, w, _ = x.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, pt = _pads(h, kh, sh, dh, _hpad(padding))
    ow, pl = _pads(w, kw, sw, dw, _wpad(padding))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                taps = []
                for di in range(kh):
                    for dj in range(kw):
                        r, c = i * sh + di * dh - pt, j * sw + dj * dw - pl
                        if 0 <= r < h and 0 <= c < w:
                            taps.append((di, dj, r, c))
                yield b, i, j, taps, (oh, ow)


def ref_conv(x, f, strides=(1, 1), dilations=(1, 1), padding="VALID"):
    kh, kw, _, co = f.shape
    out = None
    for b, i, j, taps, (oh, ow) in ref_windows(x, kh, kw, strides, dilations, padding):
        if out is None:
            out = np.zeros((x.shape[0], oh, ow, co))
        for di, dj, r, c in taps:
            out[b, i, j] += x[b, r, c].astype(np.float64) @ f[di, dj]
    return out


def ref_depthwise(x, f, strides=(1, 1), dilations=(1, 1), padding="VALID"):
    kh, kw, ci, m = f.shape
    out = None
    for b, i, j, taps, (oh, ow) in ref_windows(x, kh, kw, strides, dilations, padding):
        if out is None:
            out = np.zeros((x.shape[0], oh, ow, ci * m))
        for di, dj, r, c in taps:
            for ch in range(ci):
                for k in range(m):
                    out[b, i, j, ch * m + k] += x[b, r, c, ch] * f[di, dj, ch, k]
    return out


def ref_pool(x, kh, kw, strides, padding, kind):
    out = None
    for b, i, j, taps, (oh, ow) in ref_windows(x, kh, kw, strides, (1, 1), padding):
        if out is None:
            out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
        vals = np.array([x[b, r, c] for _, _, r, c in taps])
        out[b, i, j] = vals.max(axis=0) if kind == "max" else vals.mean(axis=0)
    return out


GEOMETRIES = [  # strides, dilations, padding
    ((1, 1), (1, 1), "VALID"),
    ((1, 1), (1, 1), "SAME"),
    ((2, 2), (1, 1), "VALID"),
    ((2, 2), (1, 1), "SAME"),
    ((2, 1), (1, 1), "SAME"),
    ((1, 1), (2, 2), "VALID"),
    ((1, 1), (2, 2), "SAME"),
    ((2, 2), (2, 1), "SAME"),
]


# -- conv2d -------------------------------------------------------------------------------
@pytest.mark.parametrize("strides,dilations,padding", GEOMETRIES)
def test_conv2d_matches_reference(sess, strides, dilations, padding):
    x = RNG.standard_normal((2, 9, 7, 3)).astype(np.float32)
    f = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
    y = tf.nn.conv2d(x, f, strides=[1, *strides, 1], padding=padding,
                     dilations=[1, *dilations, 1])
    out = sess.run(y)
    expected = ref_conv(x, f, strides, dilations, padding)
    assert out.dtype == np.float32
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_matches_tensorflow_values(sess):
    # Values printed by TensorFlow 2.15 (tf-oracle) for this input.
    x = np.arange(40, dtype=np.float32).reshape(1, 5, 4, 2)
    f = np.arange(36, dtype=np.float32).reshape(3, 2, 2, 3) - 6
    out = sess.run(tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"))
    expected = [[[[948, 992, 1036], [1476, 1552, 1628]],
                 [[3018, 3228, 3438], [3522, 3780, 4038]],
                 [[1284, 1520, 1756], [1428, 1696, 1964]]]]
    np.testing.assert_array_equal(out, expected)


def test_conv2d_explicit_padding_and_int_strides(sess):
    x = RNG.standard_normal((1, 6, 5, 2))
    f = RNG.standard_normal((3, 2, 2, 3))
    pads = [[0, 0], [1, 2], [0, 1], [0, 0]]
    y = tf.nn.conv2d(x, f, strides=2, padding=pads)
    assert y.dtype == tf.float64
    np.testing.assert_allclose(sess.run(y), ref_conv(x, f, (2, 2), (1, 1), pads))
    y1 = tf.nn.conv2d(x, f, strides=[2, 1], padding="SAME", filters=None)
    np.testing.assert_allclose(sess.run(y1), ref_conv(x, f, (2, 1), (1, 1), "SAME"))


def test_conv2d_nchw_equals_nhwc(sess):
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
    f = RNG.standard_normal((3, 2, 3, 5)).astype(np.float32)
    nchw = tf.nn.conv2d(x.transpose(0, 3, 1, 2), f, [1, 1, 2, 2], "SAME", data_format="NCHW")
    assert nchw.shape.as_list() == [2, 5, 4, 3]
    np.testing.assert_allclose(sess.run(nchw).transpose(0, 2, 3, 1),
                               ref_conv(x, f, (2, 2), (1, 1), "SAME"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32])
def test_conv2d_dtypes(sess, dtype):
    x = RNG.integers(-3, 4, (1, 5, 4, 2)).astype(dtype)
    f = RNG.integers(-2, 3, (2, 3, 2, 3)).astype(dtype)
    out = sess.run(tf.nn.conv2d(x, f, 1, "SAME"))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref_conv(x, f, padding="SAME"))


def test_conv2d_shape_inference_partial():
    x = tf.placeholder(tf.float32, [None, 7, None, 3])
    y = tf.nn.conv2d(x, tf.zeros([3, 2, 3, 4]), [1, 2, 2, 1], "VALID", dilations=[1, 2, 2, 1])
    assert y.shape.as_list() == [None, 2, None, 4]
    assert y.op.type == "Conv2D"
    assert tf.nn.conv2d(x, tf.zeros([3, 2, 3, 4]), 2, "SAME").shape.as_list() == [None, 4, None, 4]
    unknown = tf.nn.conv2d(tf.placeholder(tf.float32), tf.zeros([3, 2, 3, 4]), 1, "SAME")
    assert unknown.shape.as_list() == [None, None, None, 4]
    f = tf.placeholder(tf.float32, [None, None, 3, 6])
    assert tf.nn.conv2d(x, f, 1, "VALID").shape.as_list() == [None, None, None, 6]
    assert tf.nn.conv2d(x, f, 1, "SAME").shape.as_list() == [None, 7, None, 6]


def test_conv2d_errors():
    x = tf.placeholder(tf.float32, [None, 7, 5, 3])
    with pytest.raises(ValueError, match=r"input depth 3.*\(\?, 7, 5, 3\).*\(3, 2, 4, 2\)"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 4, 2]), 1, "VALID")
    with pytest.raises(ValueError, match="rank 3"):
        tf.nn.conv2d(tf.zeros([7, 5, 3]), tf.zeros([3, 2, 3, 2]), 1, "SAME")
    with pytest.raises(ValueError, match="rank 2"):
        tf.nn.conv2d(x, tf.zeros([3, 3]), 1, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.conv2d(x, tf.zeros([9, 2, 3, 2]), 1, "VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), 1, "same")
    with pytest.raises(ValueError, match="length 1, 2 or 4"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), [1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="batch or depth"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), 1, [[1, 0], [1, 2], [0, 1], [0, 0]])
    with pytest.raises(TypeError, match="float64"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2], tf.float64), 1, "SAME")
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), 1, "SAME", data_format="NWHC")


def test_conv2d_runtime_channel_mismatch(sess):
    x = tf.placeholder(tf.float32)
    y = tf.nn.conv2d(x, tf.zeros([3, 2, 3, 2]), 1, "SAME")
    with pytest.raises(InvalidArgumentError, match=r"\(1, 5, 4, 2\).*\(3, 2, 3, 2\)"):
        sess.run(y, {x: np.zeros((1, 5, 4, 2), np.float32)})


# -- depthwise_conv2d ---------------------------------------------------------------------
@pytest.mark.parametrize("strides,dilations,padding", GEOMETRIES)
def test_depthwise_matches_reference(sess, strides, dilations, padding):
    x = RNG.standard_normal((2, 8, 7, 3)).astype(np.float32)
    f = RNG.standard_normal((3, 2, 3, 2)).astype(np.float32)
    y = tf.nn.depthwise_conv2d(x, f, [1, *strides, 1], padding, rate=list(dilations))
    expected = ref_depthwise(x, f, strides, dilations, padding)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(sess.run(y), expected, rtol=1e-4, atol=1e-4)


def test_depthwise_matches_tensorflow_values_and_nchw(sess):
    x = np.arange(40, dtype=np.float32).reshape(1, 5, 4, 2)
    f = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) - 5
    expected = [[[[356, 392, 470, 512], [212, 248, 304, 344]],
                 [[836, 968, 1142, 1280], [404, 504, 624, 728]],
                 [[-86, 16, 121, 226], [-218, -144, -72, 4]]]]
    np.testing.assert_array_equal(sess.run(tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME")),
                                  expected)
    y = tf.nn.depthwise_conv2d(x.transpose(0, 3, 1, 2), f, [1, 1, 2, 2], "SAME",
                               data_format="NCHW", dilations=[1, 1])
    np.testing.assert_array_equal(sess.run(y).transpose(0, 2, 3, 1), expected)


def test_depthwise_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 7, 5, None])
    y = tf.nn.depthwise_conv2d(x, tf.zeros([3, 2, 3, 2]), [1, 1, 1, 1], "VALID", rate=[2, 2])
    assert y.shape.as_list() == [None, 3, 3, 6]
    # TF 2.15: a dilation is SpaceToBatchND, DepthwiseConv2dNative, BatchToSpaceND
    assert (y.op.type, y.op.inputs[0].op.type) == ("BatchToSpaceND", "DepthwiseConv2dNative")
    z = tf.nn.depthwise_conv2d(x, tf.placeholder(tf.float32, [3, 2, None, 2]), [1, 2, 2, 1],
                               "SAME")
    assert z.shape.as_list() == [None, 4, 3, None]
    known = tf.placeholder(tf.float32, [None, 7, 5, 3])
    with pytest.raises(ValueError, match=r"\(\?, 7, 5, 3\).*\(3, 2, 4, 2\)"):
        tf.nn.depthwise_conv2d(known, tf.zeros([3, 2, 4, 2]), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="rank 3"):
        tf.nn.depthwise_conv2d(known, tf.zeros([3, 2, 3]), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="rate or dilations"):
        tf.nn.depthwise_conv2d(known, tf.zeros([3, 2, 3, 1]), [1, 1, 1, 1], "VALID",
                               rate=[2, 2], dilations=[2, 2])


# -- pooling ------------------------------------------------------------------------------
POOLS = [  # ksize (h, w), strides, padding
    ((2, 2), (2, 2), "VALID"),
    ((3, 2), (2, 1), "SAME"),
    ((3, 3), (2, 2), "SAME"),
    ((2, 3), (1, 1), "SAME"),
    ((1, 3), (1, 2), "VALID"),
]


@pytest.mark.parametrize("ksize,strides,padding", POOLS)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_matches_reference(sess, kind, ksize, strides, padding):
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32) - 2.0  # all-negative inputs
    pool = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    y = pool(x, [1, *ksize, 1], [1, *strides, 1], padding)
    expected = ref_pool(x, *ksize, strides, padding, kind)
    assert y.shape.as_list() == list(expected.shape)
    out = sess.run(y)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_avg_pool_same_divides_by_valid_count(sess):
    # TensorFlow 2.15 gives these values (first window averages 6 real elements).
    x = np.arange(1, 31, dtype=np.float32).reshape(1, 6, 5, 1)
    out = sess.run(tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"))
    np.testing.assert_array_equal(out[0, :, :, 0], [[6.5, 8, 9.5], [16.5, 18, 19.5],
                                                    [24, 25.5, 27]])


def test_pool_nchw_int_and_float16(sess):
    x = RNG.integers(-50, 50, (2, 3, 7, 6)).astype(np.int32)
    y = tf.nn.max_pool(x, [1, 1, 3, 2], [1, 1, 2, 2], "SAME", data_format="NCHW")
    assert y.shape.as_list() == [2, 3, 4, 3]
    out = sess.run(y)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(
        out.transpose(0, 2, 3, 1), ref_pool(x.transpose(0, 2, 3, 1), 3, 2, (2, 2), "SAME", "max"))
    h = RNG.standard_normal((1, 5, 4, 2)).astype(np.float16)
    out16 = sess.run(tf.nn.avg_pool(h, 2, 2, "SAME"))
    assert out16.dtype == np.float16
    np.testing.assert_allclose(out16, ref_pool(h.astype(np.float64), 2, 2, (2, 2), "SAME", "avg"),
                               rtol=2e-3, atol=2e-3)


def test_pool_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 7, None, 3])
    assert tf.nn.max_pool(x, 2, 2, "SAME").shape.as_list() == [None, 4, None, 3]
    assert tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "VALID").shape.as_list() == \
        [None, 3, None, 3]
    assert tf.nn.max_pool(tf.placeholder(tf.float32), 2, 2, "VALID").shape.as_list() == \
        [None, None, None, None]
    assert tf.nn.max_pool(x, 2, 2, "SAME").op.type == "MaxPool"
    assert tf.nn.avg_pool(value=None, input=x, ksize=2, strides=1, padding="SAME").op.type == \
        "AvgPool"
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.max_pool(x, [1, 9, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.max_pool(x, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="rank 3"):
        tf.nn.avg_pool(tf.zeros([7, 5, 3]), 2, 2, "SAME")
    with pytest.raises(TypeError, match="int32"):
        tf.nn.avg_pool(tf.zeros([1, 4, 4, 1], tf.int32), 2, 2, "SAME")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.max_pool(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
