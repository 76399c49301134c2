"""`tf.contrib.image` and the ``ImageProjectiveTransformV2``/``V3`` ops, against values
recorded from TensorFlow 2.15 (`tf.raw_ops`) and TensorFlow Addons 0.23 (`tfa.image`, the
port of `tf.contrib.image`) with the tf-oracle."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu.kernels_image_transform import _project

IMG = np.arange(12, dtype=np.float32).reshape(1, 3, 4, 1)
T = [[0.9, 0.2, -1.3, -0.15, 1.1, 0.7, 0.02, -0.03]]

# TF 2.15: ImageProjectiveTransformV3(IMG, T, output_shape=[3, 5], fill_value=2.5)
TF_V3 = {
    ("NEAREST", "CONSTANT"): [2.5, 4, 0, 1, 2, 2.5, 8, 5, 6, 6, 2.5, 2.5, 2.5, 10, 11],
    ("NEAREST", "REFLECT"): [4, 4, 0, 1, 2, 8, 8, 5, 6, 6, 8, 8, 9, 10, 11],
    ("NEAREST", "WRAP"): [7, 7, 0, 1, 2, 11, 11, 5, 6, 6, 3, 0, 1, 2, 3],
    ("NEAREST", "NEAREST"): [4, 4, 0, 1, 2, 8, 8, 5, 6, 6, 8, 8, 9, 10, 11],
    ("BILINEAR", "CONSTANT"): [2.5, 2.2914, 2.0192, 2.2642, 2.5, 2.5, 5.8249, 6.6337, 6.7961,
                               6.9524, 2.5, 3.2448, 4.7268, 6.515, 8.5704],
    ("BILINEAR", "REFLECT"): [3.1, 2.1569, 2.0192, 2.2642, 2.5, 7.5567, 6.6667, 6.6337, 6.7961,
                              6.9524, 7.6596, 8.0, 8.9184, 9.8, 10.6471],
    ("BILINEAR", "WRAP"): [5.5, 5.1569, 2.0192, 2.2642, 2.5, 10.2887, 9.6667, 6.6337, 6.7961,
                           6.9524, 3.3404, 0.0, 0.9184, 1.8, 2.6471],
    ("BILINEAR", "NEAREST"): [2.8, 2.1569, 2.0192, 2.2642, 2.5, 7.4227, 6.6667, 6.6337, 6.7961,
                              6.9524, 8.0, 8.0, 8.9184, 9.8, 10.6471],
}


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("interp,mode", sorted(TF_V3))
def test_raw_v3_matches_tf_every_mode(interp, mode):
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=IMG, transforms=T, output_shape=[3, 5], fill_value=2.5,
        interpolation=interp, fill_mode=mode)
    assert out.shape.as_list() == [1, 3, 5, 1] and out.op.type == "ImageProjectiveTransformV3"
    value = _run(out)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value.reshape(-1), TF_V3[interp, mode], atol=1e-4)


def _reference(img, t, oh, ow, interp, fill):
    """A per-pixel loop in float64 (CONSTANT mode) to check the vectorized kernel."""
    b, h, w, c = img.shape
    out = np.full((b, oh, ow, c), fill, np.float64)

    def px(n, yy, xx):
        return img[n, yy, xx] if 0 <= yy < h and 0 <= xx < w else np.full(c, fill)

    for n in range(b):
        a = t[min(n, len(t) - 1)]
        for y in range(oh):
            for x in range(ow):
                k = a[6] * x + a[7] * y + 1
                sx, sy = (a[0] * x + a[1] * y + a[2]) / k, (a[3] * x + a[4] * y + a[5]) / k
                if interp == "NEAREST":
                    out[n, y, x] = px(n, int(np.floor(sy + 0.5)), int(np.floor(sx + 0.5)))
                else:
                    y0, x0 = int(np.floor(sy)), int(np.floor(sx))
                    fy, fx = sy - y0, sx - x0
                    top = (1 - fx) * px(n, y0, x0) + fx * px(n, y0, x0 + 1)
                    bottom = (1 - fx) * px(n, y0 + 1, x0) + fx * px(n, y0 + 1, x0 + 1)
                    out[n, y, x] = (1 - fy) * top + fy * bottom
    return out


@pytest.mark.parametrize("interp", ["NEAREST", "BILINEAR"])
def test_kernel_matches_loop_reference(interp):
    rng = np.random.RandomState(3)
    img = rng.rand(2, 5, 7, 3).astype(np.float32)
    t = np.array([[0.93, 0.21, -1.27, -0.13, 1.07, 0.61, 0.011, -0.017],
                  [1.13, -0.37, 2.19, 0.29, 0.83, -1.71, -0.009, 0.013]], np.float32)
    got = _project(img, t, np.array([6, 4]), interp, "CONSTANT", -1.0, "T")
    np.testing.assert_allclose(got, _reference(img, t.astype(np.float64), 6, 4, interp, -1.0),
                               atol=1e-5)


def test_uint8_bilinear_truncates_and_casts_fill_value():
    u8 = (np.arange(12).reshape(1, 3, 4, 1) * 20).astype(np.uint8)
    out = tf.raw_ops.ImageProjectiveTransformV3(images=u8, transforms=T, output_shape=[3, 4],
                                                fill_value=7.9, interpolation="BILINEAR")
    value = _run(out)
    assert value.dtype == np.uint8
    assert value.reshape(-1).tolist() == [7, 28, 40, 45, 7, 107, 132, 135, 7, 27, 66, 110]


def test_rotate_uint8_rank3_and_translate_rank2():
    u8 = (np.arange(12).reshape(3, 4, 1) * 20).astype(np.uint8)
    rot = tf.contrib.image.rotate(u8, 0.5)
    assert rot.shape.as_list() == [3, 4, 1] and rot.dtype == tf.uint8
    assert _run(rot).reshape(-1).tolist() == [0, 40, 40, 140, 0, 100, 120, 220, 80, 180, 180, 0]
    tr = tf.contrib.image.translate(IMG[0, :, :, 0], [0.5, -1.0], interpolation="bilinear")
    assert tr.shape.as_list() == [3, 4]
    np.testing.assert_allclose(_run(tr).reshape(-1),
                               [2, 4.5, 5.5, 6.5, 4, 8.5, 9.5, 10.5, 0, 0, 0, 0])
    assert tr.op.inputs[0].op.type == "ImageProjectiveTransformV2"


def test_transform_builders():
    a2p = tf.contrib.image.angles_to_projective_transforms([0.5, -1.0], 3.0, 4.0)
    np.testing.assert_allclose(_run(a2p).reshape(-1), [
        0.8776, -0.4794, 0.6631, 0.4794, 0.8776, -0.5967, 0, 0,
        0.5403, 0.8415, -0.1519, -0.8415, 0.5403, 1.7219, 0, 0], atol=1e-4)
    t2p = tf.contrib.image.translations_to_projective_transforms([[1.5, -0.5], [-2.0, 1.0]])
    np.testing.assert_allclose(_run(t2p), [[1, 0, -1.5, 0, 1, 0.5, 0, 0],
                                           [1, 0, 2, 0, 1, -1, 0, 0]])
    m = tf.contrib.image.flat_transforms_to_matrices(T)
    np.testing.assert_allclose(_run(m)[0], np.append(T[0], 1).reshape(3, 3), rtol=1e-6)
    back = tf.contrib.image.matrices_to_flat_transforms(m * 2.0)
    np.testing.assert_allclose(_run(back), T, rtol=1e-6)
    both = tf.contrib.image.compose_transforms(T, t2p[:1])
    expected = (np.append(T[0], 1).reshape(3, 3) @ np.array([[1, 0, -1.5], [0, 1, 0.5], [0, 0, 1]]))
    np.testing.assert_allclose(_run(both)[0], (expected.reshape(-1) / expected[2, 2])[:8],
                               rtol=1e-5)


def test_transform_output_shape_and_fill_mode():
    out = tf.contrib.image.transform(IMG, T, interpolation="BILINEAR", output_shape=[3, 5],
                                     fill_mode="wrap", fill_value=2.5)
    assert out.op.type == "ImageProjectiveTransformV3"
    np.testing.assert_allclose(_run(out).reshape(-1), TF_V3["BILINEAR", "WRAP"], atol=1e-4)
    ph = tf.placeholder(tf.float32, [None, None, None, 2])
    dyn = tf.contrib.image.transform(ph, T)
    assert dyn.shape.as_list() == [None, None, None, 2]
    assert _run_feed(dyn, {ph: np.ones((2, 3, 5, 2), np.float32)}).shape == (2, 3, 5, 2)


def _run_feed(t, feed):
    with tf.Session() as sess:
        return sess.run(t, feed)


def test_gradient_is_tensorflows_inverse_transform():
    x = tf.constant(IMG)
    y = tf.raw_ops.ImageProjectiveTransformV2(images=x, transforms=T, output_shape=[3, 4],
                                              interpolation="BILINEAR")
    (g,) = tf.gradients(tf.reduce_sum(y * IMG), [x])
    np.testing.assert_allclose(_run(g).reshape(-1), [
        0.8828, 1.9587, 0.3475, 0, 3.2093, 4.9831, 2.5302, 0, 6.3919, 8.1663, 6.4444, 0],
        atol=1e-4)


def test_gradient_exact_for_integer_translation():
    """Where the transform permutes pixels, TF's rule is the true adjoint."""
    rng = np.random.RandomState(0)
    x0 = rng.rand(2, 4, 5, 1).astype(np.float64)
    x = tf.constant(x0)
    y = tf.contrib.image.translate(x, [1.0, -2.0])
    w = rng.rand(2, 4, 5, 1)
    (g,) = tf.gradients(tf.reduce_sum(y * w), [x])
    eps, direction = 1e-6, rng.rand(*x0.shape)
    with tf.Session() as sess:
        grad = sess.run(g)
        plus = sess.run(tf.reduce_sum(y * w), {x: x0 + eps * direction})
        minus = sess.run(tf.reduce_sum(y * w), {x: x0 - eps * direction})
    np.testing.assert_allclose(np.sum(grad * direction), (plus - minus) / (2 * eps), rtol=1e-5)


FLOW = np.array([0.5, -0.25, 1.5, 0.75, -2.0, 0.3] * 4, np.float32).reshape(1, 3, 4, 2)


def test_dense_image_warp_values_and_gradients():
    x, flow = tf.constant(IMG), tf.constant(FLOW)
    w = tf.contrib.image.dense_image_warp(x, flow)
    gx, gf = tf.gradients(tf.reduce_sum(w * w), [x, flow])
    with tf.Session() as sess:
        value, vx, vf = sess.run([w, gx, gf])
    np.testing.assert_allclose(value.reshape(-1), [
        0.25, 0.25, 9.7, 3, 0, 8.7, 4.25, 2.25, 8, 7.25, 3.25, 10.7], atol=1e-5)
    np.testing.assert_allclose(vx.reshape(-1), [
        0.75, 2.6875, 7.375, 8.1875, 0, 7.875, 5.8125, 1.0625, 21.22, 23.4375, 21.8125,
        14.98], atol=1e-4)
    np.testing.assert_allclose(vf.reshape(-1), [
        0, -0.5, 0, -0.5, -77.6, -19.4, 0, 0, 0, 0, 0, -17.4, -34, -8.5, 0, -4.5, 0, 0,
        -58, -14.5, -26, -6.5, 0, -21.4], atol=1e-4)


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_images x 8"):
        _run(tf.raw_ops.ImageProjectiveTransformV2(images=IMG, transforms=[[1.0] * 8] * 2,
                                                   output_shape=[3, 4], interpolation="NEAREST"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
        _run(tf.raw_ops.ImageProjectiveTransformV2(images=IMG, transforms=T,
                                                   output_shape=[0, 4], interpolation="NEAREST"))
    with pytest.raises(ValueError, match="4-D"):  # TF: ValueError, "must be rank 4"
        tf.raw_ops.ImageProjectiveTransformV2(images=IMG[0], transforms=T, output_shape=[3, 4],
                                              interpolation="NEAREST")
    with pytest.raises(TypeError, match="rank between 2 and 4"):
        tf.contrib.image.transform(np.zeros((1, 1, 2, 2, 1), np.float32), T)
    with pytest.raises(TypeError, match="Invalid dtype"):
        tf.contrib.image.rotate(np.zeros((2, 2), np.bool_), 0.1)
    with pytest.raises(TypeError, match="rank 0 or 1"):
        tf.contrib.image.angles_to_projective_transforms([[0.1]], 2.0, 2.0)
    with pytest.raises(ValueError, match="interpolation"):
        tf.contrib.image.transform(IMG, T, interpolation="cubic")
    with pytest.raises(ValueError, match="at least 2"):
        tf.contrib.image.dense_image_warp(np.zeros((1, 1, 3, 1), np.float32),
                                          np.zeros((1, 1, 3, 2), np.float32))


def test_connected_components_numbering_and_dtypes():
    """TF Addons' custom op does not load in the oracle's environment; the semantics are
    its documented ones (4-connected equal nonzero pixels, numbered by first pixel over
    the batch, int32 after its renumbering) and SciPy's ``ndimage.label``."""
    from scipy import ndimage

    img = [[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 1]]
    out = tf.contrib.image.connected_components(img)
    assert out.dtype == tf.int32 and out.shape.as_list() == [3, 4]
    assert _run(out).tolist() == [[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 4]]
    rng = np.random.RandomState(1)
    mask = rng.rand(3, 9, 11) > 0.45
    labels = _run(tf.contrib.image.connected_components(mask))
    offset = 0
    for n in range(3):
        expected, count = ndimage.label(mask[n])
        expected = np.where(expected > 0, expected + offset, 0)  # scipy numbers by first pixel
        np.testing.assert_array_equal(labels[n], expected)
        offset += count
    floats = _run(tf.contrib.image.connected_components(np.array([[0.5, 0.5, 0.25]])))
    assert floats.tolist() == [[1, 1, 2]]
    with pytest.raises(TypeError, match="rank 2"):
        tf.contrib.image.connected_components(np.zeros((1, 1, 2, 2)))


SPLINE_RNG = np.random.RandomState(2)
SPLINE_C = SPLINE_RNG.rand(2, 6, 2)
SPLINE_F = SPLINE_RNG.rand(2, 6, 3)
SPLINE_Q = SPLINE_RNG.rand(2, 4, 2)
# TF Addons 0.23 interpolate_spline(SPLINE_C, SPLINE_F, SPLINE_Q, order, reg): first 8 values
TF_SPLINE = {
    (1, 0.0): [0.63996, 1.08151, 0.64378, 0.14559, 0.69472, 0.46805, 0.52286, 0.45519],
    (2, 0.0): [1.06207, 1.58395, 0.72254, -0.00951, 0.64027, 0.5396, 0.51018, 0.40987],
    (3, 0.1): [0.43295, 0.88518, 0.57161, 0.10934, 0.66349, 0.42545, 0.56565, 0.46244],
    (4, 0.0): [1.62611, 1.646, 1.45541, 0.63756, 0.90538, 0.54953, 0.45363, 0.43775],
    (5, 0.0): [4.99618, 4.85676, 2.60216, 0.87425, 0.3349, 3.90107, 0.32715, 0.24667],
    (6, 0.01): [-0.97619, 1.76789, 0.43627, -0.73594, 2.13415, 0.12849, 0.76511, 0.26238],
}


@pytest.mark.parametrize("order,reg", sorted(TF_SPLINE))
def test_interpolate_spline_matches_tf(order, reg):
    out = tf.contrib.image.interpolate_spline(SPLINE_C, SPLINE_F, SPLINE_Q, order,
                                              regularization_weight=reg)
    assert out.dtype == tf.float64
    value = _run(out)
    assert value.shape == (2, 4, 3)
    np.testing.assert_allclose(value.reshape(-1)[:8], TF_SPLINE[order, reg], atol=2e-5)


def test_interpolate_spline_interpolates_and_differentiates():
    fit = tf.contrib.image.interpolate_spline(SPLINE_C, SPLINE_F, SPLINE_C, 2)
    np.testing.assert_allclose(_run(fit), SPLINE_F, atol=1e-8)
    q = tf.constant(SPLINE_Q)
    out = tf.reduce_sum(tf.contrib.image.interpolate_spline(SPLINE_C, SPLINE_F, q, 3) ** 2)
    (g,) = tf.gradients(out, [q])
    direction, eps = SPLINE_RNG.rand(*SPLINE_Q.shape), 1e-6
    with tf.Session() as sess:
        grad = sess.run(g)
        plus = sess.run(out, {q: SPLINE_Q + eps * direction})
        minus = sess.run(out, {q: SPLINE_Q - eps * direction})
    np.testing.assert_allclose(np.sum(grad * direction), (plus - minus) / (2 * eps), rtol=1e-6)
