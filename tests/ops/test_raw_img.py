"""The image, layout and TF1 normalization op types (`flowgraph/ops/image_raw_ops.py`,
`flowgraph/ops/nn_layout_ops.py`): values against TensorFlow 2.15's (inline, from the
tf-oracle) and NumPy references, the op types the public functions build, errors, and a
GraphDef that TensorFlow wrote (tests/data/tf_formats/raw_img/, made by the script
beside it) imported and run."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

X = (np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) - 11) / 7
IMG = np.array([[[[0.9, 0.2, 0.1], [0.3, 0.6, 0.8], [0.5, 0.5, 0.5]]]], np.float32)
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_img")


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def op_types(t):
    return [o.type for o in t.graph.get_operations() if o.type not in ("Const", "Placeholder")]


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


# -- LRN ---------------------------------------------------------------------------------
def test_lrn_matches_tensorflow_and_builds_one_op():
    y = tf.nn.lrn(X, 1, 1.5, 0.3, 0.75)
    assert op_types(y) == ["LRN"] and y.name == "LRN:0"
    np.testing.assert_allclose(run(y)[0, 0], [
        [-0.71583, -0.57706, -0.56403, -0.59498], [-0.59009, -0.47884, -0.42932, -0.3754],
        [-0.30417, -0.20219, -0.10381, 0.0]], atol=2e-5)
    assert tf.nn.lrn(X, name="norm1").name == "norm1:0"


def test_lrn_gradient_is_lrn_grad_with_tensorflows_values():
    x = tf.constant(X)
    w = np.linspace(-1, 1, 24, dtype=np.float32).reshape(1, 2, 3, 4)
    (g,) = tf.gradients(tf.nn.lrn(x, 1, 1.5, 0.3, 0.75) * w, [x])
    assert g.op.type == "LRNGrad"
    np.testing.assert_allclose(run(g)[0, 1], [
        [0.03034, 0.08494, 0.12309, 0.18052], [0.18055, 0.14391, 0.10517, 0.2027],
        [0.17507, 0.03613, -0.0272, 0.1351]], atol=2e-5)
    with pytest.raises(LookupError, match="LRNGrad"):
        tf.gradients(g, [x])


@pytest.mark.parametrize("radius", [0, 2, 11])
def test_lrn_matches_numpy_for_small_and_wide_windows(radius):
    x = np.random.RandomState(radius).standard_normal((2, 3, 2, 17))
    padded = np.pad(x * x, [(0, 0)] * 3 + [(radius, radius)])
    sums = sum(padded[..., k:k + 17] for k in range(2 * radius + 1))
    want = x / (0.5 + 0.1 * sums) ** 0.6
    np.testing.assert_allclose(run(tf.nn.lrn(x, radius, 0.5, 0.1, 0.6)), want, rtol=1e-12)


def test_lrn_rejects_other_ranks_at_build_time():
    with pytest.raises(ValueError, match=r"LRN.*must be 4-D"):
        tf.raw_ops.LRN(input=np.zeros([2, 3, 4], np.float32))


# -- layout ops --------------------------------------------------------------------------
def test_space_to_depth_and_back_build_single_ops():
    x = np.random.RandomState(0).standard_normal((2, 4, 6, 3)).astype(np.float32)
    s2d = tf.nn.space_to_depth(x, 2)
    back = tf.nn.depth_to_space(s2d, 2, name="dd")
    assert s2d.op.type == "SpaceToDepth" and back.name == "dd:0"
    want = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 3, 12)
    a, b = run([s2d, back])
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, x)
    with pytest.raises(ValueError, match="divisible by block_size 3"):
        tf.raw_ops.SpaceToDepth(input=x, block_size=3)


def test_space_to_batch_v1_matches_tensorflow():
    y = tf.raw_ops.SpaceToBatch(input=X[..., :1], paddings=[[0, 0], [0, 1]], block_size=2)
    np.testing.assert_allclose(run(y).reshape(4, 2), [
        [-1.57143, -0.42857], [-1.0, 0.0], [0.14286, 1.28571], [0.71429, 0.0]], atol=1e-5)
    back = tf.raw_ops.BatchToSpace(input=y, crops=[[0, 0], [0, 1]], block_size=2)
    np.testing.assert_array_equal(run(back), X[..., :1])
    with pytest.raises(ValueError, match="divisible by block_size 2"):
        tf.raw_ops.SpaceToBatch(input=X, paddings=[[0, 1], [0, 0]], block_size=2)


def test_data_format_maps_match_tensorflow():
    np.testing.assert_array_equal(run(tf.raw_ops.DataFormatDimMap(x=[-4, -1, 0, 1, 2, 3])),
                                  [0, 1, 0, 2, 3, 1])
    perm = tf.raw_ops.DataFormatVecPermute(x=[[1, 2], [3, 4], [5, 6], [7, 8]])
    np.testing.assert_array_equal(run(perm), [[1, 2], [7, 8], [3, 4], [5, 6]])
    spatial = tf.raw_ops.DataFormatVecPermute(x=[5, 6], src_format="NCHW", dst_format="NHWC")
    np.testing.assert_array_equal(run(spatial), [5, 6])
    with pytest.raises(errors.InvalidArgumentError, match=r"DataFormatVecPermute.*4 or 2"):
        run(tf.raw_ops.DataFormatVecPermute(x=[1, 2, 3]))
    with pytest.raises(errors.InvalidArgumentError, match=r"in \[-4, 4\)"):
        run(tf.raw_ops.DataFormatDimMap(x=[4]))


# -- MaxPoolV2 -----------------------------------------------------------------------------
def test_max_pool_v2_values_and_gradient_chain():
    x = tf.constant(X)
    y = tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 2, 2, 1], strides=[1, 1, 2, 1],
                             padding="SAME")
    assert y.shape.as_list() == [1, 2, 2, 4]
    np.testing.assert_allclose(run(y)[0, 0], [[0.71429, 0.85714, 1.0, 1.14286],
                                              [1.28571, 1.42857, 1.57143, 1.71429]], atol=1e-5)
    (g,) = tf.gradients(y, [x])
    (gg,) = tf.gradients(g, [x], grad_ys=[tf.ones_like(x)])
    assert g.op.type == "MaxPoolGradV2"
    assert "MaxPoolGradGradV2" in [o.type for o in tf.get_default_graph().get_operations()]
    want = run(tf.gradients(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 2, 1], "SAME"), [x])[0])
    np.testing.assert_array_equal(run(g), want)
    np.testing.assert_array_equal(run(gg), np.zeros_like(X))  # piecewise linear


def test_max_pool_v2_with_a_fed_window_has_unknown_spatial_dims():
    k = tf.placeholder(tf.int32, [4])
    y = tf.raw_ops.MaxPoolV2(input=X, ksize=k, strides=[1, 1, 1, 1], padding="VALID")
    assert y.shape.as_list() == [1, None, None, 4]
    assert run(y, {k: [1, 2, 3, 1]}).shape == (1, 1, 1, 4)


# -- BatchNormWithGlobalNormalization ------------------------------------------------------
@pytest.mark.parametrize("scale", [True, False])
def test_batch_norm_with_global_normalization_matches_numpy(scale):
    r = np.random.RandomState(1)
    t = r.standard_normal((2, 3, 2, 4))
    m, beta, gamma = r.standard_normal((3, 4))
    v = r.uniform(0.5, 2, 4)
    y = tf.raw_ops.BatchNormWithGlobalNormalization(
        t=t, m=m, v=v, beta=beta, gamma=gamma, variance_epsilon=0.01,
        scale_after_normalization=scale)
    want = (t - m) / np.sqrt(v + 0.01) * (gamma if scale else 1) + beta
    np.testing.assert_allclose(run(y), want, rtol=1e-12)
    grads = tf.gradients(y, [y.op.inputs[i] for i in range(5)])
    assert grads[0].op.type == "BatchNormWithGlobalNormalizationGrad"
    dx, dm, dv, db, dg = run(grads)
    gain = gamma if scale else 1
    np.testing.assert_allclose(dx, np.broadcast_to(gain / np.sqrt(v + 0.01), t.shape))
    np.testing.assert_allclose(dv, (t - m).sum((0, 1, 2)) * -0.5 * (v + 0.01) ** -1.5 * gain)
    np.testing.assert_allclose(db, np.full(4, 12.0))
    np.testing.assert_allclose(dm, -12 / np.sqrt(v + 0.01) * (gamma if scale else 1))
    np.testing.assert_allclose(dg, ((t - m) / np.sqrt(v + 0.01)).sum((0, 1, 2)) if scale
                               else np.zeros(4), atol=1e-12)


# -- Dilation2D ----------------------------------------------------------------------------
F = np.array([[[0.1] * 4, [0.3] * 4]], np.float32)


def test_dilation_and_erosion_build_tensorflows_ops_and_values():
    d = tf.nn.dilation2d(X, F, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    e = tf.nn.erosion2d(X, F, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    assert d.name == "Dilation2D:0" and e.name == "erosion2d/Neg_1:0"
    assert [o.type for o in e.op.graph.get_operations() if o.name.startswith("erosion2d")
            and o.type != "Const"] == ["Neg", "ReverseV2", "Dilation2D", "Neg"]
    dv, ev = run([d, e])
    np.testing.assert_allclose(dv[0, 0, :, 0], [-0.7, -0.12857, -0.32857], atol=1e-5)
    np.testing.assert_allclose(ev[0, 1, :, 3], [0.27143, 0.84286, 1.41429], atol=1e-5)


def test_dilation_backprops_route_to_the_winning_tap():
    x = np.array([[[[1.0], [5.0], [2.0]]]])  # 1x1x3x1
    f = np.array([[[0.0], [0.5]]])            # taps (0, 0) and (0, 1)
    xt, ft = tf.constant(x), tf.constant(f)
    y = tf.nn.dilation2d(xt, ft, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    gx, gf = tf.gradients(y, [xt, ft], grad_ys=[[[[[1.0], [10.0]]]]])
    assert gx.op.type == "Dilation2DBackpropInput"
    np.testing.assert_array_equal(run(y).ravel(), [5.5, 5.0])
    np.testing.assert_array_equal(run(gx).ravel(), [0.0, 11.0, 0.0])
    np.testing.assert_array_equal(run(gf).ravel(), [10.0, 1.0])


# -- color ---------------------------------------------------------------------------------
def test_hsv_conversions_and_adjustments_match_tensorflow():
    hsv = tf.image.rgb_to_hsv(IMG)
    rgb = tf.image.hsv_to_rgb(IMG)
    hue = tf.image.adjust_hue(IMG, 0.3)
    sat = tf.image.adjust_saturation(IMG, 0.4)
    con = tf.image.adjust_contrast(IMG, 1.5)
    assert (hsv.op.type, rgb.op.type) == ("RGBToHSV", "HSVToRGB")
    assert hue.name == "adjust_hue/Identity:0" and con.name == "adjust_contrast/Identity:0"
    got = run([hsv, rgb, hue, sat, con])
    want = [[[0.02083, 0.88889, 0.9], [0.56667, 0.625, 0.8], [0.0, 0.0, 0.5]],
            [[0.1, 0.08, 0.092], [0.416, 0.8, 0.32], [0.25, 0.5, 0.5]],
            [[0.16, 0.9, 0.1], [0.8, 0.3, 0.7], [0.5, 0.5, 0.5]],
            [[0.9, 0.62, 0.58], [0.6, 0.72, 0.8], [0.5, 0.5, 0.5]],
            [[1.06667, 0.08333, -0.08333], [0.16667, 0.68333, 0.96667],
             [0.46667, 0.53333, 0.51667]]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[0, 0], w, atol=2e-5)


def test_integer_images_convert_around_the_adjustment_like_tensorflow():
    u8 = tf.constant((IMG * 255).astype(np.uint8))
    hue = tf.image.adjust_hue(u8, 0.2)
    assert op_types(hue) == ["Cast", "Mul", "AdjustHue", "Mul", "Cast"]
    np.testing.assert_array_equal(run(hue)[0, 0], [[162, 229, 25], [152, 76, 204],
                                                   [127, 127, 127]])


def test_adjustments_have_no_gradient_as_in_tensorflow_but_rgb_to_hsv_has():
    x = tf.constant(IMG)
    with pytest.raises(LookupError, match="AdjustHue"):
        tf.gradients(tf.image.adjust_hue(x, 0.1), [x])
    assert tf.gradients(tf.image.hsv_to_rgb(x), [x]) == [None]
    (g,) = tf.gradients(tf.image.rgb_to_hsv(x)[..., 2], [x])   # d value / d max channel
    np.testing.assert_array_equal(run(g)[0, 0, :2], [[1, 0, 0], [0, 0, 1]])


def test_adjust_contrast_v1_clips_and_returns_float32():
    u8 = (IMG * 255).astype(np.uint8)
    y = tf.raw_ops.AdjustContrast(images=u8, contrast_factor=2.0, min_value=40.0,
                                  max_value=200.0)
    x = u8.astype(np.float32)
    mean = x.mean(axis=(1, 2), keepdims=True)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(run(y), np.clip((x - mean) * 2 + mean, 40, 200), rtol=1e-6)


# -- ScaleAndTranslate ---------------------------------------------------------------------
def test_scale_and_translate_matches_tensorflow_for_its_kernels():
    x = np.linspace(0, 1, 2 * 7 * 9 * 2, dtype=np.float32).reshape(2, 7, 9, 2) ** 2
    want = {"lanczos3": (26.6594, 0.00142, 0.00168), "box": (25.845, 0.00289, 0.00322),
            "mitchellcubic": (26.6576, 0.00288, 0.00321)}
    for kernel, (total, first, second) in want.items():
        y = tf.raw_ops.ScaleAndTranslate(images=x, size=[4, 5], scale=[4 / 7, 5 / 9],
                                         translation=[0.0, 0.0], kernel_type=kernel)
        assert y.shape.as_list() == [2, 4, 5, 2] and y.dtype == tf.float32
        v = run(y)
        np.testing.assert_allclose([v.sum(), v[0, 0, 0, 0], v[0, 0, 0, 1]],
                                   [total, first, second], rtol=2e-4, atol=1e-5)


def test_scale_and_translate_gradient_is_the_transposed_resize():
    r = np.random.RandomState(4)
    x = tf.constant(r.standard_normal((1, 5, 4, 1)).astype(np.float32))
    y = tf.raw_ops.ScaleAndTranslate(images=x, size=[3, 7], scale=[0.6, 1.75],
                                     translation=[0.2, -0.5], kernel_type="keyscubic")
    w = r.standard_normal((1, 3, 7, 1)).astype(np.float32)
    (g,) = tf.gradients(y, [x], grad_ys=[w])
    assert g.op.type == "ScaleAndTranslateGrad"
    # <w, A x> = <A^T w, x> for the linear resize A
    yv, gv, xv = run([y, g, x])
    np.testing.assert_allclose((w * yv).sum(), (gv * xv).sum(), rtol=1e-5)


# -- patches -------------------------------------------------------------------------------
def test_extract_patches_matches_tensorflow():
    p = tf.image.extract_patches(X[..., :1], [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
    assert p.op.type == "ExtractImagePatches" and p.shape.as_list() == [1, 2, 2, 4]
    np.testing.assert_allclose(run(p)[0], [
        [[-1.57143, -1.0, 0.14286, 0.71429], [-0.42857, 0.0, 1.28571, 0.0]],
        [[0.14286, 0.71429, 0.0, 0.0], [1.28571, 0.0, 0.0, 0.0]]], atol=1e-5)
    big = tf.raw_ops.ExtractImagePatches(images=X, ksizes=[1, 3, 1, 1], strides=[1, 1, 1, 1],
                                         rates=[1, 1, 1, 1], padding="VALID")
    assert big.shape.as_list() == [1, 0, 3, 12] and run(big).shape == (1, 0, 3, 12)


def test_patch_gradients_scatter_back_with_unknown_shapes():
    r = np.random.RandomState(3)
    x = tf.placeholder(tf.float64, [None, None, None, 2])
    p = tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
    (g,) = tf.gradients(p, [x], grad_ys=[tf.ones_like(p)])
    value = r.standard_normal((2, 5, 4, 2))
    # every pixel's gradient counts the patch entries that read it
    index = np.arange(1, 21, dtype=np.float64).reshape(1, 5, 4, 1)
    ids = run(tf.image.extract_patches(index, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1],
                                       "SAME"))
    counts = np.bincount(ids.astype(np.int64).ravel(), minlength=21)[1:].reshape(5, 4)
    np.testing.assert_array_equal(run(g, {x: value}), np.broadcast_to(
        counts[None, :, :, None], value.shape))


def test_volume_patches_build_one_op():
    v = np.arange(8.0).reshape(1, 2, 2, 2, 1)
    p = tf.extract_volume_patches(v, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID")
    assert p.op.type == "ExtractVolumePatches"
    np.testing.assert_array_equal(run(p).ravel(), np.arange(8.0))


# -- TF1 box ops ---------------------------------------------------------------------------
BOXES = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11]]


def test_non_max_suppression_v1_and_v2_match_tensorflow():
    v1 = tf.raw_ops.NonMaxSuppression(boxes=BOXES, scores=[0.8, 0.9, 0.7], max_output_size=3)
    v2 = tf.raw_ops.NonMaxSuppressionV2(boxes=BOXES, scores=[0.8, 0.9, 0.7],
                                        max_output_size=3, iou_threshold=0.9)
    np.testing.assert_array_equal(run(v1), [1, 2])
    np.testing.assert_array_equal(run(v2), [1, 0, 2])
    with pytest.raises(errors.InvalidArgumentError, match=r"NonMaxSuppressionV2.*iou_thresh"):
        run(tf.raw_ops.NonMaxSuppressionV2(boxes=BOXES, scores=[0.8, 0.9, 0.7],
                                           max_output_size=3, iou_threshold=1.5))


def test_sample_distorted_bounding_box_v1_draws_tensorflows_crop():
    _, size, box = tf.raw_ops.SampleDistortedBoundingBox(
        image_size=[40, 50, 3], bounding_boxes=[[[0.1, 0.2, 0.5, 0.6]]], seed=7, seed2=3,
        min_object_covered=0.3)
    assert box.shape.as_list() == [1, 1, 4]
    np.testing.assert_array_equal(run(size), [40, 39, -1])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_stateless_sample_distorted_bounding_box_draws_tensorflows_crop(dtype):
    boxes = [[[0.1, 0.2, 0.5, 0.6], [0.3, 0.3, 0.9, 0.8]]]
    seed = tf.placeholder(tf.int64, [2])
    outs = tf.raw_ops.StatelessSampleDistortedBoundingBox(
        image_size=np.array([40, 50, 3], dtype), bounding_boxes=boxes, min_object_covered=0.2,
        seed=seed, area_range=[0.1, 0.9])
    assert [t.dtype for t in outs] == [tf.as_dtype(dtype)] * 2 + [tf.float32]
    wrap = -1 if dtype == np.int32 else 255
    for value, (begin, size, box) in (
            ([1, 2], ([12, 3, 0], [26, 32, wrap], [0.3, 0.06, 0.95, 0.7])),
            ([123456789, -5], ([0, 0, 0], [37, 46, wrap], [0.0, 0.0, 0.925, 0.92]))):
        got = run(outs, {seed: value})
        np.testing.assert_array_equal(got[0], begin)
        np.testing.assert_array_equal(got[1], size)
        np.testing.assert_allclose(got[2].ravel(), box, rtol=1e-6)


def test_random_crop_op_draws_tensorflows_offsets():
    # TensorFlow runs this op only from GraphDefs older than version 8 (values from one)
    img = np.arange(7 * 9 * 2).reshape(7, 9, 2).astype(np.float32)
    for (seed, seed2), want in (((1, 2), [10, 28, 10, 58]), ((7, 0), [6, 24, 80, 4])):
        with tf.Graph().as_default():
            crop = tf.raw_ops.RandomCrop(image=img, size=np.array([3, 4], np.int64),
                                         seed=seed, seed2=seed2)
            assert crop.shape.as_list() == [3, 4, 2]
            with tf.Session() as sess:
                assert [sess.run(crop)[0, 0, 0] for _ in range(4)] == want
    with pytest.raises(errors.FailedPreconditionError, match="smaller than the crop"):
        run(tf.raw_ops.RandomCrop(image=img, size=np.array([8, 4], np.int64)))


def test_extract_glimpse_builds_the_v1_op_like_tf1():
    img = np.arange(30, dtype=np.float32).reshape(1, 5, 6, 1)
    g = tf.image.extract_glimpse(img, [2, 3], [[0.2, -0.4]])
    assert g.op.type == "ExtractGlimpse"
    np.testing.assert_array_equal(run(g)[0, :, :, 0], [[12, 13, 14], [18, 19, 20]])


# -- a GraphDef TensorFlow wrote ----------------------------------------------------------
FETCHES = ["RGBToHSV:0", "adjust_contrast/Identity:0", "conv1/Relu:0", "norm1:0",
           "pool1:0", "s2d:0", "b2s:0", "Dilation2D:0", "ExtractImagePatches:0",
           "logits:0", "nms:0", "nms_v1:0", "shape_nchw:0", "axes_nchw:0"]


def test_tensorflow_graph_with_tf1_image_ops_imports_and_runs():
    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    expected = np.load(os.path.join(DATA, "expected.npz"))
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        types = {o.type for o in g.get_operations()}
        assert {"BatchNormWithGlobalNormalization", "LRN", "MaxPoolV2", "AdjustHue",
                "SpaceToBatch", "Dilation2D", "NonMaxSuppression"} <= types
        with tf.Session(graph=g) as sess:
            values = sess.run(FETCHES, {"image:0": expected["image"]})
    for name, value in zip(FETCHES, values):
        want = expected[name.replace("/", "__").replace(":", "_")]
        assert value.dtype == want.dtype, name
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5, err_msg=name)


# -- speech front end and raw bytes --------------------------------------------------------
AUDIO = np.sin(np.arange(48, dtype=np.float32) / 2.0).reshape(48, 1)


def test_audio_spectrogram_and_mfcc_match_tensorflow():
    spec = tf.raw_ops.AudioSpectrogram(input=AUDIO, window_size=16, stride=16,
                                       magnitude_squared=True)
    mfcc = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=8000, upper_frequency_limit=3000.0,
                           lower_frequency_limit=100.0, filterbank_channel_count=6,
                           dct_coefficient_count=4)
    assert spec.shape.as_list() == [1, 3, 9] and mfcc.shape.as_list() == [1, 3, 4]
    s, m = run([spec, mfcc])
    np.testing.assert_allclose(s[0, :, :4], [[3.4004, 14.4223, 7.9226, 0.0783],
                                             [1.7093, 14.8629, 7.8267, 0.0824],
                                             [4.9482, 14.0189, 8.0103, 0.0746]], atol=2e-4)
    np.testing.assert_allclose(m[0], [[-1.973, 2.5876, -2.2398, -0.1529],
                                      [-1.9056, 2.5523, -2.1939, -0.1672],
                                      [-2.0416, 2.6253, -2.2866, -0.1367]], atol=2e-4)


def test_spectrogram_matches_numpy_and_mfcc_rejects_tensorflows_bad_settings():
    audio = np.random.RandomState(5).standard_normal((100, 2)).astype(np.float32)
    spec = run(tf.raw_ops.AudioSpectrogram(input=audio, window_size=20, stride=7))
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(20) / 20)
    frame = audio[14:34, 1] * hann                     # channel 1, frame 2
    np.testing.assert_allclose(spec[1, 2], np.abs(np.fft.rfft(frame, 32)), rtol=1e-4)
    assert spec.shape == (2, 12, 17)
    bad = tf.raw_ops.Mfcc(spectrogram=spec, sample_rate=16000, filterbank_channel_count=5)
    with pytest.raises(errors.InvalidArgumentError, match="Mfcc initialization failed"):
        run(bad)
    with pytest.raises(LookupError, match="AudioSpectrogram"):
        x = tf.constant(audio)
        tf.gradients(tf.raw_ops.AudioSpectrogram(input=x, window_size=20, stride=7), [x])


def test_decode_padded_raw_pads_and_cuts_records():
    y = tf.raw_ops.DecodePaddedRaw(input_bytes=[b"\x01\x02\x03", b"\x04\x05\x06\x07\x08\x09"],
                                   fixed_length=4, out_type=tf.int16)
    assert y.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(run(y), [[513, 3], [1284, 1798]])
    big = tf.raw_ops.DecodePaddedRaw(input_bytes=[[b"\x01\x02\x03"], [b"\x04"]],
                                     fixed_length=4, out_type=tf.uint16, little_endian=False)
    np.testing.assert_array_equal(run(big), [[[258, 768]], [[1024, 0]]])
    with pytest.raises(ValueError, match="multiple of the size"):
        tf.raw_ops.DecodePaddedRaw(input_bytes=[b"ab"], fixed_length=3, out_type=tf.int16)


# -- convolution spellings -----------------------------------------------------------------
def test_fused_pad_and_resize_convolutions_match_tensorflow():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    f = np.array([[[[1.0]], [[-1.0]]]], np.float32)
    pad = tf.raw_ops.FusedPadConv2D(input=x, paddings=[[0, 0], [1, 0], [0, 1], [0, 0]],
                                    filter=f, mode="SYMMETRIC", strides=[1, 1, 1, 1],
                                    padding="VALID")
    resize = tf.raw_ops.FusedResizeAndPadConv2D(
        input=x, size=[3, 3], paddings=[[0, 0], [0, 0], [1, 1], [0, 0]], filter=f,
        mode="REFLECT", strides=[1, 1, 1, 1], padding="VALID", resize_align_corners=True)
    assert pad.shape.as_list() == [1, 5, 4, 1] and resize.shape.as_list() == [1, 3, 4, 1]
    p, r = run([pad, resize])
    np.testing.assert_array_equal(p[0, :, :, 0], [[-1, -1, -1, 0]] * 5)
    np.testing.assert_array_equal(r[0, :, :, 0], [[1.5, -1.5, -1.5, 1.5]] * 3)


def test_backprop_spellings_that_take_tensors_match_the_sizes_taking_ops():
    r = np.random.RandomState(8)
    x, f, dy = r.standard_normal((2, 6, 5, 3)), r.standard_normal((3, 2, 3, 4)), \
        r.standard_normal((2, 3, 5, 4))
    attrs = {"strides": [1, 2, 1, 1], "padding": "SAME"}
    got = run([tf.raw_ops.Conv2DBackpropInputV2(input=x, filter=f, out_backprop=dy, **attrs),
               tf.raw_ops.Conv2DBackpropFilterV2(input=x, filter=f, out_backprop=dy, **attrs)])
    want = run([tf.raw_ops.Conv2DBackpropInput(input_sizes=x.shape, filter=f, out_backprop=dy,
                                               **attrs),
                tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=f.shape,
                                                out_backprop=dy, **attrs)])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    x5, f5, dy5 = (r.standard_normal(s) for s in ((1, 4, 5, 3, 2), (2, 2, 2, 2, 3),
                                                  (1, 3, 4, 2, 3)))
    attrs = {"strides": [1] * 5, "padding": "VALID"}
    got = run([tf.raw_ops.Conv3DBackpropInput(input=x5, filter=f5, out_backprop=dy5, **attrs),
               tf.raw_ops.Conv3DBackpropFilter(input=x5, filter=f5, out_backprop=dy5, **attrs)])
    want = run([tf.raw_ops.Conv3DBackpropInputV2(input_sizes=x5.shape, filter=f5,
                                                 out_backprop=dy5, **attrs),
                tf.raw_ops.Conv3DBackpropFilterV2(input=x5, filter_sizes=f5.shape,
                                                  out_backprop=dy5, **attrs)])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_generic_conv_matches_tensorflow_and_conv2d():
    r = np.random.RandomState(0)
    x = r.rand(2, 5, 6, 4).astype(np.float32)
    f = r.rand(3, 2, 4, 6).astype(np.float32)
    y = tf.raw_ops.Conv(input=x, filter=f, strides=[1, 2, 1, 1], padding="SAME")
    assert y.shape.as_list() == [2, 3, 6, 6]
    v = run(y)
    np.testing.assert_allclose(v.sum(), 868.64, rtol=1e-4)   # TensorFlow: 868.64
    np.testing.assert_allclose(v, run(tf.nn.conv2d(x, f, [1, 2, 1, 1], "SAME")), rtol=1e-5)
    x2 = x.reshape(1, 2, 5, 6, 4)
    batched = tf.raw_ops.Conv(input=x2, filter=f, strides=[1, 1, 1, 1], padding="VALID",
                              batch_dims=2)
    first = tf.raw_ops.Conv(input=x2.transpose(0, 1, 4, 2, 3), filter=f, strides=[1] * 4,
                            padding="VALID", batch_dims=2, data_format="CHANNELS_FIRST")
    assert batched.shape.as_list() == [1, 2, 3, 5, 6]
    b, c = run([batched, first])
    np.testing.assert_allclose(b.reshape(2, 3, 5, 6),
                               run(tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID")), rtol=1e-5)
    np.testing.assert_allclose(c, b.transpose(0, 1, 4, 2, 3), rtol=1e-6)
    with pytest.raises(ValueError, match="2 or 3 spatial"):
        tf.raw_ops.Conv(input=x[:, 0], filter=f[0], strides=[1, 1, 1], padding="SAME")


@pytest.mark.parametrize("with_batch", [False, True])
def test_max_pool_grad_grad_with_argmax_reads_the_routed_entries(with_batch):
    x = np.random.RandomState(9).standard_normal((2, 4, 4, 3)).astype(np.float32)
    _, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                           include_batch_in_index=with_batch)
    grad = x * 3 + 1
    y = tf.raw_ops.MaxPoolGradGradWithArgmax(input=x, grad=grad, argmax=argmax,
                                             ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                             padding="VALID",
                                             include_batch_in_index=with_batch)
    pooled = x.reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4))
    np.testing.assert_allclose(run(y), pooled * 3 + 1, rtol=1e-6)


def test_tensorflow_speech_front_end_graph_imports_and_runs():
    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "speech.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    expected = np.load(os.path.join(DATA, "speech_expected.npz"))
    names = ["spectrogram", "mfcc", "logits", "padded_raw", "pad_conv", "resize_pad_conv"]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        with tf.Session(graph=g) as sess:
            values = sess.run([n + ":0" for n in names],
                              {"wav_data:0": expected["wav"].tobytes()})
    for name, value in zip(names, values):
        want = expected[name]
        assert value.dtype == want.dtype and value.shape == want.shape, name
        np.testing.assert_allclose(value, want, rtol=1e-4, atol=1e-4, err_msg=name)


E4 = np.zeros([0, 4, 6, 3], np.float32)
EMPTY = {  # TensorFlow's output shapes for empty inputs
    "lrn": (lambda: tf.nn.lrn(E4), (0, 4, 6, 3)),
    "s2d": (lambda: tf.nn.space_to_depth(E4, 2), (0, 2, 3, 12)),
    "dilation": (lambda: tf.nn.dilation2d(E4, np.zeros([2, 2, 3], np.float32), [1] * 4,
                                          [1] * 4, "SAME"), (0, 4, 6, 3)),
    "patches": (lambda: tf.image.extract_patches(E4, [1, 2, 2, 1], [1] * 4, [1] * 4, "SAME"),
                (0, 4, 6, 12)),
    "hue": (lambda: tf.image.adjust_hue(E4, 0.2), (0, 4, 6, 3)),
    "contrast": (lambda: tf.image.adjust_contrast(np.zeros([1, 0, 6, 3], np.float32), 0.2),
                 (1, 0, 6, 3)),
    "nms": (lambda: tf.raw_ops.NonMaxSuppression(
        boxes=np.zeros([0, 4], np.float32), scores=np.zeros([0], np.float32),
        max_output_size=3), (0,)),
    "spectrogram": (lambda: tf.raw_ops.AudioSpectrogram(
        input=np.zeros([100, 0], np.float32), window_size=16, stride=8), (0, 11, 9)),
    "mfcc": (lambda: tf.raw_ops.Mfcc(spectrogram=np.zeros([1, 0, 33], np.float32),
                                     sample_rate=16000), (1, 0, 13)),
    "scale": (lambda: tf.raw_ops.ScaleAndTranslate(images=E4, size=[2, 3], scale=[0.5, 0.5],
                                                   translation=[0.0, 0.0]), (0, 2, 3, 3)),
    "volume": (lambda: tf.extract_volume_patches(np.zeros([0, 2, 2, 2, 1], np.float32),
                                                 [1, 2, 2, 2, 1], [1] * 5, "VALID"),
               (0, 1, 1, 1, 8)),
}


@pytest.mark.parametrize("case", sorted(EMPTY))
def test_empty_inputs_give_tensorflows_empty_shapes(case):
    build, want = EMPTY[case]
    assert run(build()).shape == want


@pytest.mark.parametrize("module", ["image_raw_ops", "nn_layout_ops", "signal_raw_ops",
                                    "nn_conv_raw_ops", "image_color_ops"])
def test_module_examples_run(module):
    from module_examples import assert_examples_pass

    assert_examples_pass(f"flowgraph.ops.{module}")
