"""TF1 image augmentation and box programs, sweep 16 (area ``image2``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a cifar-style seeded augmentation chain (random flips,
brightness, contrast, saturation, hue, ``random_crop``, ``per_image_standardization``)
on float and uint8 images with the argument errors of the random adjustments; an SSD
training-time crop (op-seeded ``sample_distorted_bounding_box`` with coverage, aspect and
area ranges, ``tf.slice``, resize, seeded flip, ``adjust_gamma``, saturating
``convert_image_dtype``) feeding a small conv net trained with image summaries and a
Saver; the bounding-box sampler's seeded values, fallbacks and errors; a resize table of
float64, int16, half and uint8 images (every method, ``align_corners``,
``preserve_aspect_ratio``, ``resize_image_with_pad``, raw resizes, ``crop_and_resize``);
detection post-processing (NMS v3 with ``score_threshold``, padded, soft-NMS with
scores, overlaps, a dynamic ``max_output_size``, ``combined_non_max_suppression`` with
and without ``pad_per_class``/``clip_boxes``, and their errors); quality metrics and
colour ops (``total_variation``, ``sobel_edges``, ``image_gradients``, ``psnr``,
``ssim``, ``ssim_multiscale``, HSV/YUV/YIQ/grayscale, ``convert_image_dtype``,
``adjust_*``, ``extract_image_patches``/``extract_patches``); a segmentation input
pipeline's crop/pad helpers on images of unknown size with their run-time assertions;
slim's Inception preprocessing seeded by the graph seed alone (random method and colour
orderings selected by ``tf.cond``, so TF's op count fixes every op seed); the gradients
of resizes and ``crop_and_resize`` for float64 and half images.

Classes of discrepancy found and fixed (one focused test each below):

* Interpolating resizes (``ResizeBilinear``, ``ResizeBicubic``, ``ResizeArea``) and
  ``CropAndResize`` kept float64 images in float64; TensorFlow's ops always give
  float32 (bilinear now computes in float32 as TF's kernel does for every dtype), so
  ``resize_images``/``resize_image_with_pad`` of float64 images are float32 too (their
  gradients stay in the image's dtype). A bicubic resize of a half image had a
  gradient; TensorFlow differentiates only float32 and float64 ones (None otherwise).
* ``resize_images`` refused an unknown method before opening its ``resize`` scope; as
  TensorFlow it now raises inside it (the scope name is used up) and returns an image
  already of the requested size unchanged whatever the method; a 3-D image of that size
  comes back through TF's ``ExpandDims``/``Squeeze`` (``resize/Squeeze``), not as is.
* ``sample_distorted_bounding_box`` lacked TensorFlow's checks: when built, the ranks
  of ``image_size`` (1, with 3 elements), ``bounding_boxes`` (3, last dimension 4) and
  ``min_object_covered`` (0) raise ValueError; when run, the area and aspect ratio
  ranges (two positive values, area at most 1), ``max_attempts`` (positive; 0 was
  turned into the default 100), ``min_object_covered`` (non-negative scalar), the fed
  shapes and the image sizes raise InvalidArgumentError with TensorFlow's messages.
* ``crop_and_resize`` of an image with an empty height or width leaked NumPy's index
  error; TensorFlow raises "image dimensions must be positive" (InvalidArgumentError).
* ``adjust_gamma`` accepted a negative gamma: a Python one now raises ValueError and a
  tensor one gets TensorFlow's ``Assert`` (``control_dependency``), with TF's op names
  (``pow/y``, ``mul/x`` constants).
* ``convert_image_dtype(saturate=True)`` clipped float images to the target's limits
  as float (float32 -> int32 wrapped to the minimum at 1.0) and ignored ``saturate``
  between integer types (int8 -> uint8 wrapped negatives); it is now TensorFlow's
  ``saturate_cast`` (a ``clamp`` ClipByValue with ``Const``/``Const_1`` limits).

Left as is: when several ``Assert`` ops of one helper fail in the same run
(``pad_to_bounding_box`` of an image too large both ways), TensorFlow reports the
width check and flowgraph the height check (both InvalidArgumentError). Casting
out-of-range floats to uint8 without saturation is undefined in C++; TensorFlow's
constant-folded ``convert_image_dtype`` of a constant image gave saturated values
there, flowgraph wraps as ``tf.cast`` does. Unseeded ``sample_distorted_bounding_box``
ignores the graph seed in TF1 (nondeterministic, as here).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _r(x, d=4):
    return np.round(np.asarray(x, np.float64), d)


# -- cifar-style seeded augmentation -------------------------------------------------------
def test_seeded_augmentation_chain_values_and_names():
    tf.reset_default_graph()
    tf.set_random_seed(1234)
    img = np.random.RandomState(0).uniform(0, 1, size=(6, 6, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, [6, 6, 3], name="x")
    with tf.name_scope("augment"):
        a = tf.image.random_flip_left_right(x, seed=1)
        b = tf.image.random_flip_up_down(a, seed=2)
        c = tf.image.random_brightness(b, max_delta=0.3, seed=3)
        d = tf.image.random_contrast(c, 0.5, 1.5, seed=4)
        e = tf.image.random_saturation(d, 0.6, 1.4, seed=5)
        f = tf.image.random_hue(e, 0.1, seed=6)
        g = tf.image.random_crop(f, [4, 4, 3], seed=7)
        h = tf.image.per_image_standardization(g)
    assert [(t.name, t.shape.as_list()) for t in [a, b, c, d, e, f, g, h]] == [
        ("augment/random_flip_left_right/Merge:0", [6, 6, 3]),
        ("augment/random_flip_up_down/Merge:0", [6, 6, 3]),
        ("augment/adjust_brightness/Identity:0", [6, 6, 3]),
        ("augment/adjust_contrast/Identity:0", [6, 6, 3]),
        ("augment/adjust_saturation/Identity:0", [6, 6, 3]),
        ("augment/adjust_hue/Identity:0", [6, 6, 3]),
        ("augment/random_crop:0", [4, 4, 3]),
        ("augment/per_image_standardization:0", [4, 4, 3])]
    want = [[(81.7522, [0.3634, 0.2965, 1.1089]), (81.7522, [0.4402, 0.389, 1.0438]),
             (82.0793, [0.7112, 0.379, 1.0438]), (35.8023, [0.7112, 0.379, 1.0438]),
             (0.0, [-0.1457, -1.5398, 1.2502])],
            [(73.7006, [0.5203, 0.8691, 0.3335]), (73.7006, [0.452, 0.9682, 0.143]),
             (77.6844, [0.6751, 0.9682, 0.229]), (31.4309, [0.6441, 0.1252, 1.1835]),
             (0.0, [-0.0263, -1.297, 1.2947])],
            [(52.5948, [0.5825, 0.5983, 0.5786]), (52.5948, [0.5361, 0.5493, 0.5576]),
             (49.9947, [0.5328, 0.5576, 0.556]), (22.2217, [0.4335, 0.1761, 0.7197]),
             (0.0, [-0.1713, -1.6697, 1.4946])]]
    xb = tf.placeholder(tf.float32, [3, 2, 2, 1])
    fb = tf.image.random_flip_left_right(xb, seed=11)
    ub = tf.image.random_flip_up_down(xb, seed=12)
    assert (fb.name, ub.name) == ("random_flip_left_right/add:0", "random_flip_up_down/add:0")
    with tf.Session() as sess:
        for step in range(3):
            outs = sess.run([c, d, f, g, h], {x: img})
            for out, (total, corner) in zip(outs, want[step]):
                np.testing.assert_allclose(out.sum(), total, atol=2e-3)
                np.testing.assert_allclose(out[0, 0], corner, atol=2e-4)
        v = np.arange(12, dtype=np.float32).reshape(3, 2, 2, 1)
        assert sess.run(fb, {xb: v}).ravel().tolist() == list(range(12))
        assert sess.run(ub, {xb: v}).ravel().tolist() == [0, 1, 2, 3, 6, 7, 4, 5, 10, 11, 8, 9]


def test_seeded_uint8_random_adjustments_and_argument_errors():
    tf.reset_default_graph()
    tf.set_random_seed(1234)
    img = np.random.RandomState(0).uniform(0, 1, size=(6, 6, 3)).astype(np.float32)
    u = tf.constant((img * 255).astype(np.uint8))
    outs = [tf.image.random_brightness(u, 0.2, seed=21),
            tf.image.random_contrast(u, 0.2, 1.8, seed=22),
            tf.image.random_saturation(u, 0.2, 1.8, seed=23),
            tf.image.random_hue(u, 0.3, seed=24)]
    assert [(t.name, t.dtype) for t in outs] == [
        ("adjust_brightness/convert_image_1:0", tf.uint8),
        ("adjust_contrast/convert_image_1:0", tf.uint8),
        ("adjust_saturation/convert_image_1:0", tf.uint8),
        ("adjust_hue/convert_image_1:0", tf.uint8)]
    with tf.Session() as sess:
        got = [sess.run(t)[0, :2].tolist() for t in outs]
    assert got == [[[129, 172, 143], [128, 98, 154]], [[132, 164, 147], [131, 111, 155]],
                   [[144, 182, 157], [141, 115, 164]], [[139, 162, 182], [164, 108, 126]]]
    x = tf.zeros([4, 4, 3])
    for fn, msg in [(lambda: tf.image.random_contrast(x, 1.5, 0.5), "upper must be > lower."),
                    (lambda: tf.image.random_contrast(x, -1., 0.5), "lower must be non-negative."),
                    (lambda: tf.image.random_saturation(x, 1.5, 0.5), "upper must be > lower."),
                    (lambda: tf.image.random_hue(x, 0.7), "max_delta must be <= 0.5."),
                    (lambda: tf.image.random_brightness(x, -0.1),
                     "max_delta must be non-negative.")]:
        with pytest.raises(ValueError, match=msg):
            fn()


# -- SSD crop pipeline trained with a Saver ------------------------------------------------
def test_ssd_crop_pipeline_feeds_a_trained_classifier_with_summaries_and_saver(tmp_path):
    tf.reset_default_graph()
    tf.set_random_seed(42)
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 255, (4, 16, 16, 3)).astype(np.uint8)
    gt = np.array([[0.1, 0.1, 0.6, 0.7], [0.3, 0.2, 0.9, 0.8], [0.0, 0.5, 0.5, 1.0],
                   [0.2, 0.2, 0.4, 0.4]], np.float32)
    ph_img = tf.placeholder(tf.uint8, [16, 16, 3], name="image")
    ph_box = tf.placeholder(tf.float32, [4], name="box")
    with tf.name_scope("ssd_preprocess"):
        img = tf.image.convert_image_dtype(ph_img, tf.float32)
        begin, size, crop_box = tf.image.sample_distorted_bounding_box(
            tf.shape(img), tf.reshape(ph_box, [1, 1, 4]), seed=11, seed2=7,
            min_object_covered=0.3, aspect_ratio_range=(0.5, 2.0), area_range=(0.3, 1.0),
            max_attempts=50, use_image_if_no_bounding_boxes=True)
        crop = tf.image.resize_images(tf.slice(img, begin, size), [8, 8])
        crop = tf.image.random_flip_left_right(crop, seed=5)
        crop = tf.image.adjust_gamma(crop, 1.2)
        crop = tf.image.convert_image_dtype(crop * 1.3, tf.uint8, saturate=True)
        crop = tf.image.convert_image_dtype(crop, tf.float32)
    assert (crop.name, crop.shape.as_list()) == ("ssd_preprocess/convert_image_2:0", [8, 8, None])
    assert crop_box.name == ("ssd_preprocess/sample_distorted_bounding_box/"
                             "SampleDistortedBoundingBoxV2:2")
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.placeholder(tf.int32, [None])
    with tf.variable_scope("net"):
        h = tf.layers.conv2d(x, 4, 3, activation=tf.nn.relu,
                             kernel_initializer=tf.glorot_uniform_initializer(seed=1))
        logits = tf.layers.dense(tf.reduce_mean(h, [1, 2]), 2,
                                 kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    tf.summary.image("crops", x, max_outputs=2)
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    assert [v.name for v in tf.global_variables()] == [
        "net/conv2d/kernel:0", "net/conv2d/bias:0", "net/dense/kernel:0", "net/dense/bias:0"]
    assert merged.name == "Merge/MergeSummary:0"
    want_boxes = [
        [([1, 0, 0], [7, 13, -1], [0.0625, 0.0, 0.5, 0.8125]),
         ([3, 1, 0], [12, 14, -1], [0.1875, 0.0625, 0.9375, 0.9375]),
         ([4, 0, 0], [11, 15, -1], [0.25, 0.0, 0.9375, 0.9375]),
         ([2, 0, 0], [9, 16, -1], [0.125, 0.0, 0.6875, 1.0])],
        [([0, 1, 0], [16, 8, -1], [0.0, 0.0625, 1.0, 0.5625]),
         ([0, 0, 0], [16, 15, -1], [0.0, 0.0, 1.0, 0.9375]),
         ([2, 1, 0], [13, 14, -1], [0.125, 0.0625, 0.9375, 0.9375]),
         ([5, 1, 0], [10, 8, -1], [0.3125, 0.0625, 0.9375, 0.5625])],
        [([1, 2, 0], [8, 13, -1], [0.0625, 0.125, 0.5625, 0.9375]),
         ([1, 0, 0], [11, 16, -1], [0.0625, 0.0, 0.75, 1.0]),
         ([2, 0, 0], [8, 12, -1], [0.125, 0.0, 0.625, 0.75]),
         ([5, 0, 0], [8, 16, -1], [0.3125, 0.0, 0.8125, 1.0])]]
    want_steps = [(0.74765, 432.694), (0.69543, 437.663), (0.68925, 422.133)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            batch, info = [], []
            for i in range(4):
                c, b, sz, cb = sess.run([crop, begin, size, crop_box],
                                        {ph_img: images[i], ph_box: gt[i]})
                batch.append(c)
                info.append((b.tolist(), sz.tolist(), _r(cb.ravel()).tolist()))
            assert info == want_boxes[step]
            lv, _, _ = sess.run([loss, train, merged], {x: np.stack(batch), y: [0, 1, 0, 1]})
            np.testing.assert_allclose(lv, want_steps[step][0], atol=2e-5)
            np.testing.assert_allclose(np.stack(batch).sum(), want_steps[step][1], atol=2e-3)
        path = tf.train.Saver().save(sess, os.path.join(str(tmp_path), "model.ckpt"),
                                     global_step=3)
    assert os.path.basename(path) == "model.ckpt-3"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-3.data-00000-of-00001",
                                            "model.ckpt-3.index", "model.ckpt-3.meta"]


# -- the bounding-box sampler ------------------------------------------------------------
def test_seeded_sample_distorted_bounding_box_values_and_fallbacks():
    tf.reset_default_graph()
    sdb = tf.image.sample_distorted_bounding_box(
        [40, 60, 3], bounding_boxes=tf.constant([[[0.0, 0.0, 0.5, 0.5], [0.3, 0.3, 1.0, 1.0]]]),
        seed=5, seed2=9, min_object_covered=0.5, aspect_ratio_range=[0.5, 2.0],
        area_range=[0.1, 0.6], max_attempts=20)
    assert [t.name for t in sdb] == [
        f"sample_distorted_bounding_box/SampleDistortedBoundingBoxV2:{i}" for i in range(3)]
    assert [t.shape.as_list() for t in sdb] == [[3], [3], [1, 1, 4]]
    assert sdb.begin is sdb[0] and sdb.bboxes is sdb[2]
    no_boxes = tf.image.sample_distorted_bounding_box(
        tf.constant([10, 10, 1]), bounding_boxes=tf.zeros([1, 0, 4]), seed=3,
        min_object_covered=0.9, use_image_if_no_bounding_boxes=True, area_range=[0.5, 0.7])
    fallback = tf.image.sample_distorted_bounding_box(
        tf.constant([10, 10, 1]), bounding_boxes=tf.constant([[[0.4, 0.4, 0.45, 0.45]]]),
        seed=3, min_object_covered=1.0, area_range=[0.9, 1.0], max_attempts=3)
    missing = tf.image.sample_distorted_bounding_box(tf.constant([10, 10, 1]),
                                                     bounding_boxes=tf.zeros([1, 0, 4]))
    with tf.Session() as sess:
        got = [[_r(v).tolist() for v in sess.run(sdb)] for _ in range(3)]
        assert got == [
            [[3, 1, 0], [21, 38, -1], [[[0.075, 0.0167, 0.6, 0.65]]]],
            [[14, 10, 0], [24, 47, -1], [[[0.35, 0.1667, 0.95, 0.95]]]],
            [[6, 2, 0], [18, 27, -1], [[[0.15, 0.0333, 0.6, 0.4833]]]]]
        for op in (no_boxes, fallback):
            b, s, box = sess.run(op)
            assert (b.tolist(), s.tolist(), box.tolist()) == (
                [0, 0, 0], [10, 10, -1], [[[0.0, 0.0, 1.0, 1.0]]])
        with pytest.raises(errors.InvalidArgumentError,
                           match="No bounding boxes provided as input"):
            sess.run(missing)


def test_sample_distorted_bounding_box_checks_its_input_shapes_when_built():
    tf.reset_default_graph()
    box = tf.zeros([1, 1, 4])
    for kwargs, msg in [
            (dict(image_size=[10, 10, 1], bounding_boxes=tf.zeros([1, 1, 3])),
             "Dimension must be 4 but is 3"),
            (dict(image_size=[10, 10], bounding_boxes=box), "Dimension must be 3 but is 2"),
            (dict(image_size=[10, 10, 1], bounding_boxes=tf.zeros([1, 4])),
             "Shape must be rank 3 but is rank 2"),
            (dict(image_size=[[10, 10, 1]], bounding_boxes=box),
             "Shape must be rank 1 but is rank 2"),
            (dict(image_size=[10, 10, 1], bounding_boxes=box, min_object_covered=[0.1, 0.2]),
             "Shape must be rank 0 but is rank 1")]:
        with pytest.raises(ValueError, match=msg):
            tf.image.sample_distorted_bounding_box(**kwargs)
    # unknown shapes build: the kernel checks them when it runs
    ph = tf.placeholder(tf.int32, [None])
    op = tf.image.sample_distorted_bounding_box(ph, tf.placeholder(tf.float32), seed=1)
    assert [t.shape.as_list() for t in op] == [[3], [3], [1, 1, 4]]


def test_sample_distorted_bounding_box_checks_attributes_and_inputs_when_run():
    tf.reset_default_graph()
    boxes = [[[0.1, 0.1, 0.5, 0.5]]]
    cases = [
        (dict(area_range=[0.0, 1.0]), r"Area range must be non-negative: \[0, 1\]"),
        (dict(area_range=[0.1, 1.5]),
         r"Area range must be less then or equal to 1.0: \[0.1, 1.5\]"),
        (dict(area_range=[-0.1, 0.5]), r"Area range must be non-negative: \[-0.1, 0.5\]"),
        (dict(aspect_ratio_range=[0.5, 0.0]),
         r"Aspect ratio range must be non-negative: \[0.5, 0\]"),
        (dict(max_attempts=-1), "Max attempts must be non-negative: -1"),
        (dict(max_attempts=0), "Max attempts must be non-negative: 0"),
        (dict(area_range=[0.5]), "Area range field must specify 2 dimensions"),
        (dict(aspect_ratio_range=[0.5, 1, 2]),
         "Aspect ratio range field must specify 2 dimensions"),
        (dict(min_object_covered=-0.5), "Min object covered must be non-negative: -0.5")]
    ph = tf.placeholder(tf.int32, [None])
    bp = tf.placeholder(tf.float32)
    mp = tf.placeholder(tf.float32)
    dynamic = tf.image.sample_distorted_bounding_box(ph, bounding_boxes=bp, seed=1)
    by_cover = tf.image.sample_distorted_bounding_box([10, 10, 1], bounding_boxes=boxes,
                                                      seed=1, min_object_covered=mp)
    feeds = [({ph: [10, 10], bp: boxes}, r"image_size must contain 3 elements\[2\]"),
             ({ph: [10, 10, 1], bp: [[0.1, 0.1, 0.5, 0.5]]},
              r"input boxes must be 3-dimensional \[batch, num_boxes, coords\]: \[1,4\]"),
             ({ph: [10, 10, 1], bp: [[[0.1, 0.1, 0.5]]]},
              r"bounding boxes must have shape \[4\] or \[\*, 4\], got \[1,1,3\]"),
             ({ph: [-10, 10, 1], bp: boxes}, "image height cannot be >= int32 max")]
    with tf.Session() as sess:
        for kwargs, msg in cases:
            op = tf.image.sample_distorted_bounding_box([10, 10, 1], bounding_boxes=boxes,
                                                        seed=1, **kwargs)
            with pytest.raises(errors.InvalidArgumentError, match=msg):
                sess.run(op)
        for feed, msg in feeds:  # failed runs use up their draws, as in TF
            with pytest.raises(errors.InvalidArgumentError, match=msg):
                sess.run(dynamic, feed)
        two = sess.run(dynamic, {ph: [10, 10, 1],
                                 bp: [[[0.1, 0.1, 0.5, 0.5]], [[0.2, 0.2, 0.6, 0.6]]]})
        assert two[1].tolist() == [5, 4, -1]
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"All bounding box coordinates must be in \[0.0, 1.0\]: 1.5"):
            sess.run(dynamic, {ph: [10, 10, 1], bp: [[[0.1, 0.1, 1.5, 0.5]]]})
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"min_object_covered must be 0-D, got shape \[1\]"):
            sess.run(by_cover, {mp: [0.1]})
        # TF: these pass (a reversed area range falls back to the whole image)
        ok = [sess.run(tf.image.sample_distorted_bounding_box(
            [10, 10, 1], bounding_boxes=boxes, seed=1, **kw))[1].tolist()
            for kw in (dict(area_range=[0.5, 0.2]), dict(aspect_ratio_range=[2.0, 1.0]),
                       dict(min_object_covered=0.0), dict(min_object_covered=1.5))]
        assert ok == [[10, 10, -1], [5, 6, -1], [5, 6, -1], [10, 10, -1]]


# -- resize table -------------------------------------------------------------------------
def test_interpolating_resizes_and_crops_of_float64_images_give_float32():
    tf.reset_default_graph()
    img64 = tf.constant(np.arange(2 * 4 * 5 * 3, dtype=np.float64).reshape(2, 4, 5, 3) / 100.)
    R = tf.image.ResizeMethod
    outs = [tf.image.resize_images(img64, [3, 7], method=m, align_corners=ac)
            for m in [R.BILINEAR, R.NEAREST_NEIGHBOR, R.BICUBIC, R.AREA] for ac in [False, True]]
    outs += [tf.image.resize_images(img64[0], [6, 6], preserve_aspect_ratio=True),
             tf.image.resize_image_with_pad(img64[0], 6, 6),
             tf.image.resize_image_with_pad(img64[0], 6, 6, method=R.NEAREST_NEIGHBOR),
             tf.image.resize_bilinear(img64, [3, 3]),
             tf.image.resize_bicubic(img64, [3, 3], half_pixel_centers=True),
             tf.image.resize_area(img64, [3, 3]),
             tf.image.crop_and_resize(img64, tf.constant([[0.1, 0.2, 0.7, 0.9],
                                                          [0.5, 0.5, 1.2, 1.3]]), [0, 1], [2, 3])]
    want = [
        ("resize/ResizeBilinear:0", "float32", 72.206, [0., 0.01, 0.02, 0.0214]),
        ("resize_1/ResizeBilinear:0", "float32", 74.97, [0., 0.01, 0.02, 0.02]),
        ("resize_2/ResizeNearestNeighbor:0", "float64", 64.44, [0., 0.01, 0.02, 0.]),
        ("resize_3/ResizeNearestNeighbor:0", "float64", 78.12, [0., 0.01, 0.02, 0.03]),
        ("resize_4/ResizeBicubic:0", "float32", 72.974, [0., 0.01, 0.02, 0.0188]),
        ("resize_5/ResizeBicubic:0", "float32", 74.97, [0., 0.01, 0.02, 0.0172]),
        ("resize_6/ResizeArea:0", "float32", 74.97, [0.0375, 0.0475, 0.0575, 0.0555]),
        ("resize_7/ResizeArea:0", "float32", 77.58, [0.05, 0.06, 0.07, 0.065]),
        ("resize_8/Squeeze:0", "float32", 27.51, [0., 0.01, 0.02, 0.025]),
        ("resize_image_with_pad/Squeeze:0", "float32", 21.36, [0., 0.01, 0.02, 0.025]),
        ("resize_image_with_pad_1/Squeeze:0", "float64", 20.52, [0., 0.01, 0.02, 0.]),
        ("ResizeBilinear:0", "float32", 30.24, [0., 0.01, 0.02, 0.05]),
        ("ResizeBicubic:0", "float32", 32.13, [0.0227, 0.0327, 0.0427, 0.0755]),
        ("ResizeArea:0", "float32", 32.13, [0.0495, 0.0595, 0.0695, 0.0975]),
        ("CropAndResize:0", "float32", 10.122, [0.069, 0.079, 0.089, 0.111])]
    assert [(t.name, t.dtype.name) for t in outs] == [w[:2] for w in want]
    with tf.Session() as sess:
        got = sess.run(outs)
    for value, (name, dtype, total, head) in zip(got, want):
        assert value.dtype == np.dtype(dtype), name
        np.testing.assert_allclose(value.sum(), total, atol=2e-3, err_msg=name)
        np.testing.assert_allclose(value.ravel()[:4], head, atol=1e-4, err_msg=name)


def test_resizes_of_integer_and_half_images_and_crops_with_extrapolation():
    tf.reset_default_graph()
    img64 = tf.constant(np.arange(2 * 4 * 5 * 3, dtype=np.float64).reshape(2, 4, 5, 3) / 100.)
    i16 = tf.cast(img64 * 100, tf.int16)
    R = tf.image.ResizeMethod
    boxes = tf.constant([[0.1, 0.2, 0.7, 0.9], [0.5, 0.5, 1.2, 1.3]], tf.float32)
    outs = [tf.image.resize(img64, [3, 3]), tf.image.resize(img64, [3, 3], method="nearest"),
            tf.image.resize(img64, [3, 3], method="area"),
            tf.image.resize_images(i16, [3, 3]),
            tf.image.resize_images(i16, [3, 3], method=R.NEAREST_NEIGHBOR),
            tf.image.resize_images(tf.cast(i16, tf.float16), [3, 3], method=R.BICUBIC),
            tf.image.resize_images(tf.cast(i16, tf.uint8), [3, 3], method=R.AREA),
            tf.image.crop_and_resize(tf.cast(img64, tf.float32), boxes, [0, 1], [2, 3],
                                     method="nearest", extrapolation_value=-1.0),
            tf.image.crop_and_resize(i16, boxes, [0, 1], [2, 3])]
    want = [("resize/ResizeBilinear:0", "float32", 30.24, [0., 0.01, 0.02, 0.05]),
            ("resize_1/ResizeNearestNeighbor:0", "float64", 27.0, [0., 0.01, 0.02, 0.03]),
            ("resize_2/ResizeArea:0", "float32", 32.13, [0.0495, 0.0595, 0.0695, 0.0975]),
            ("resize_3/ResizeBilinear:0", "float32", 3021.556, [0., 1., 2., 5.]),
            ("resize_4/ResizeNearestNeighbor:0", "int16", 2700.0, [0., 1., 2., 3.]),
            ("resize_5/ResizeBicubic:0", "float32", 3054.639, [0., 1., 2., 4.8897]),
            ("resize_6/ResizeArea:0", "float32", 3209.85, [4.95, 5.95, 6.95, 9.75]),
            ("CropAndResize:0", "float32", -1.86, [0.03, 0.04, 0.05, 0.06]),
            ("CropAndResize_1:0", "float32", 1011.9, [6.9, 7.9, 8.9, 11.1])]
    assert [(t.name, t.dtype.name) for t in outs] == [w[:2] for w in want]
    with tf.Session() as sess:
        got = sess.run(outs)
    for value, (name, _, total, head) in zip(got, want):
        np.testing.assert_allclose(value.astype(np.float64).sum(), total, atol=2e-2, err_msg=name)
        np.testing.assert_allclose(value.ravel()[:4].astype(np.float64), head, atol=1e-3,
                                   err_msg=name)


def test_unknown_resize_method_is_refused_inside_the_resize_scope():
    tf.reset_default_graph()
    img = tf.zeros([1, 4, 5, 3])
    with pytest.raises(ValueError, match="Resize method is not implemented: lanczos3"):
        tf.image.resize(img, [3, 3], method="lanczos3")
    # TF opened the scope before refusing: the next resize is "resize_1"
    assert tf.image.resize(img, [3, 3], method="area").name == "resize_1/ResizeArea:0"
    # an image already of the requested size comes back unchanged whatever the method
    assert tf.image.resize_images(img, [4, 5], method="lanczos3") is img
    # a 3-D one goes through TF's batch of one (ExpandDims, then Squeeze)
    same = tf.image.resize_images(img[0], [4, 5])
    assert (same.name, same.op.inputs[0].op.type) == ("resize_3/Squeeze:0", "ExpandDims")


# -- detection post-processing ------------------------------------------------------------
def _detections():
    rng = np.random.RandomState(3)
    xy = rng.uniform(0, 1, (12, 2)).astype(np.float32)
    wh = rng.uniform(0.1, 0.4, (12, 2)).astype(np.float32)
    return np.concatenate([xy, xy + wh], 1), rng.uniform(0, 1, 12).astype(np.float32)


def test_nms_family_and_combined_nms_postprocessing():
    tf.reset_default_graph()
    bx, sc = _detections()
    boxes = tf.placeholder(tf.float32, [None, 4], name="boxes")
    scores = tf.placeholder(tf.float32, [None], name="scores")
    mos = tf.placeholder(tf.int32, [])
    ov = tf.placeholder(tf.float32, [None, None])
    with tf.name_scope("postprocess"):
        k1 = tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=0.3)
        k2 = tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=0.3, score_threshold=0.4)
        k3 = tf.image.non_max_suppression_padded(boxes, scores, 6, iou_threshold=0.3,
                                                 score_threshold=0.3, pad_to_max_output_size=True)
        k4 = tf.image.non_max_suppression_with_scores(boxes, scores, 6, iou_threshold=0.5,
                                                      score_threshold=0.1, soft_nms_sigma=0.5)
        k6 = tf.image.non_max_suppression(boxes, scores, mos, iou_threshold=0.3)
        k7 = tf.image.non_max_suppression_overlaps(ov, scores, 4, overlap_threshold=0.2,
                                                   score_threshold=0.1)
    assert [k1.name, k2.name, k6.name, k7.name] == [
        "postprocess/non_max_suppression/NonMaxSuppressionV3:0",
        "postprocess/non_max_suppression_1/NonMaxSuppressionV3:0",
        "postprocess/non_max_suppression_2/NonMaxSuppressionV3:0",
        "postprocess/non_max_suppression_overlaps/NonMaxSuppressionWithOverlaps:0"]
    assert k3[0].name == "postprocess/non_max_suppression_padded/Reshape:0"
    assert [t.shape.as_list() for t in k3] == [[6], []]
    assert [t.name for t in k4] == [
        f"postprocess/non_max_suppression_with_scores/NonMaxSuppressionV5:{i}" for i in range(2)]
    assert tf.gather(boxes, k2).shape.as_list() == [None, 4]
    cb = tf.placeholder(tf.float32, [2, 12, 1, 4])
    cs = tf.placeholder(tf.float32, [2, 12, 3])
    c1 = tf.image.combined_non_max_suppression(cb, cs, 4, 6, iou_threshold=0.5, score_threshold=0.2)
    c2 = tf.image.combined_non_max_suppression(cb, cs, 4, 6, iou_threshold=0.5,
                                               score_threshold=0.2, pad_per_class=True,
                                               clip_boxes=False)
    assert [t.shape.as_list() for t in c1] == [[2, 6, 4], [2, 6], [2, 6], [2]]
    assert [t.shape.as_list() for t in c2] == [[2, 6, 4], [2, 6], [2, 6], [2]]
    with tf.Session() as sess:
        fd = {boxes: bx, scores: sc, mos: 3,
              ov: np.abs(np.subtract.outer(sc, sc)).astype(np.float32)}
        got1, got2, got3, got4, got6, got7 = sess.run([k1, k2, k3, k4, k6, k7], fd)
        cbv = np.stack([bx, bx[::-1]])[:, :, None, :] * 1.2 - 0.1
        csv = np.stack([np.stack([sc, sc[::-1], sc ** 2], 1)] * 2)
        csv[1] *= 0.8
        r1, r2 = sess.run([c1, c2], {cb: cbv, cs: csv})
    assert got1.tolist() == got2.tolist() == [9, 8, 10, 11, 6]
    assert (got3[0].tolist(), int(got3[1])) == ([9, 8, 10, 11, 6, 1], 6)
    assert got4[0].tolist() == [9, 8, 10, 11, 6, 4]
    np.testing.assert_allclose(got4[1], [0.7467, 0.7077, 0.6911, 0.6892, 0.483, 0.4424],
                               atol=1e-4)
    assert got6.tolist() == [9, 8, 10] and got7.tolist() == [9, 8, 10, 11]
    np.testing.assert_allclose(r1[0][0, :3], [[0.2111, 0.3981, 0.428, 0.6232],
                                              [0.9715, 0.9756, 1.0, 1.0],
                                              [0.0, 0.5706, 0.1951, 0.8594]], atol=1e-4)
    np.testing.assert_allclose(r2[0][0, 1:3], [[0.9715, 0.9756, 1.2312, 1.4326],
                                               [-0.0712, 0.5706, 0.1951, 0.8594]], atol=1e-4)
    for r in (r1, r2):
        np.testing.assert_allclose(r[1], [[0.7467, 0.7467, 0.7077, 0.7077, 0.6911, 0.6911],
                                          [0.5974, 0.5974, 0.5661, 0.5661, 0.5529, 0.5529]],
                                   atol=1e-4)
        assert r[2].tolist() == [[0, 1, 0, 1, 0, 1]] * 2 and r[3].tolist() == [6, 6]


def test_nms_errors_when_built_and_when_run():
    tf.reset_default_graph()
    bx, sc = _detections()
    boxes = tf.placeholder(tf.float32, [None, 4])
    scores = tf.placeholder(tf.float32, [None])
    fd = {boxes: bx, scores: sc}
    with tf.Session() as sess:
        for op, feed, msg in [
                (tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=1.5), fd,
                 r"iou_threshold must be in \[0, 1\]"),
                (tf.image.non_max_suppression(boxes, scores, -1), fd,
                 "output size must be non-negative"),
                (tf.image.non_max_suppression(boxes, scores, 3), {boxes: bx, scores: sc[:5]},
                 "scores has incompatible shape")]:
            with pytest.raises(errors.InvalidArgumentError, match=msg):
                sess.run(op, feed)
    for fn in [lambda: tf.image.non_max_suppression(tf.zeros([3, 3]), tf.zeros([3]), 2),
               lambda: tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([3, 1]), 2),
               lambda: tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([4]), 2),
               lambda: tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([3]), [2]),
               lambda: tf.image.combined_non_max_suppression(tf.zeros([2, 3, 2, 4]),
                                                             tf.zeros([2, 3, 3]), 2, 4)]:
        with pytest.raises(ValueError):
            fn()


# -- quality metrics, colour ops and patches -----------------------------------------------
def test_quality_metrics_colour_conversions_adjustments_and_patches():
    tf.reset_default_graph()
    rng = np.random.RandomState(5)
    im = tf.constant(rng.uniform(0, 1, (2, 8, 8, 3)).astype(np.float32))
    im2 = tf.constant(np.clip(rng.uniform(0, 1, (2, 8, 8, 3)) * 0.2
                              + rng.uniform(0, 1, (2, 8, 8, 3)) * 0.8, 0, 1).astype(np.float32))
    big1 = tf.constant(rng.uniform(0, 1, (1, 48, 48, 1)).astype(np.float32))
    u8 = tf.constant((rng.uniform(0, 1, (2, 8, 8, 3)) * 255).astype(np.uint8))
    outs = [tf.image.total_variation(im), tf.image.total_variation(im[0]),
            tf.image.sobel_edges(im), *tf.image.image_gradients(im),
            tf.image.psnr(im, im2, max_val=1.0)]
    with pytest.raises(ValueError, match="Negative dimension size"):  # 8x8 < 11x11 filter
        tf.image.ssim(im, im2, max_val=1.0)
    outs += [tf.image.ssim(im, im2, max_val=1.0, filter_size=5, filter_sigma=1.0, k1=0.02,
                           k2=0.05),
             tf.image.ssim_multiscale(big1, big1 * 0.9 + 0.05, 1.0,
                                      power_factors=(0.5, 0.3, 0.2), filter_size=3),
             tf.image.psnr(u8, tf.image.flip_left_right(u8), max_val=255)]
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.image.ssim(tf.image.convert_image_dtype(u8, tf.float32), im, max_val=1.0)
    outs += [tf.image.rgb_to_hsv(im), tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(im)),
             tf.image.rgb_to_yuv(im), tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(im)),
             tf.image.rgb_to_yiq(im), tf.image.rgb_to_grayscale(im),
             tf.image.grayscale_to_rgb(tf.image.rgb_to_grayscale(im)),
             tf.image.rgb_to_grayscale(u8),
             tf.image.convert_image_dtype(im * 2 - 0.5, tf.uint8, saturate=True)]
    tf.image.convert_image_dtype(im * 2 - 0.5, tf.uint8)  # out of range: C++'s undefined cast
    outs += [tf.image.convert_image_dtype(u8, tf.int16),
             tf.image.convert_image_dtype(u8, tf.float16),
             tf.image.convert_image_dtype(tf.cast(u8, tf.int32) * 1000000, tf.uint8),
             tf.image.convert_image_dtype(im, tf.int32, saturate=True),
             tf.image.convert_image_dtype(im, tf.float64),
             tf.image.adjust_gamma(im, gamma=2.0, gain=0.5), tf.image.adjust_gamma(u8, gamma=0.5),
             tf.image.adjust_brightness(u8, 0.1), tf.image.adjust_contrast(u8, 1.5),
             tf.image.adjust_saturation(im, 0.3), tf.image.adjust_hue(im, -0.2),
             tf.image.per_image_standardization(u8),
             tf.image.extract_image_patches(im, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
             tf.extract_image_patches(im, ksizes=[1, 2, 2, 1], strides=[1, 3, 3, 1],
                                      rates=[1, 2, 2, 1], padding="SAME"),
             tf.image.extract_patches(im, sizes=[1, 2, 2, 1], strides=[1, 3, 3, 1],
                                      rates=[1, 1, 1, 1], padding="SAME")]
    want = [
        ("total_variation/add:0", 226.895, [116.9676, 109.927]),
        ("total_variation_1/add:0", 116.968, [116.9676]),
        ("Reshape:0", 34.25, [0., 0., 0.]), ("Reshape_1:0", 3.858, [0.1056, -0.7266, -0.0411]),
        ("Reshape_2:0", 2.82, [0.6966, -0.3823, 0.405]),
        ("PSNR/Identity_3:0", 17.269, [8.3952, 8.8739]),
        ("SSIM_1/Mean_2:0", 0.176, [0.0801, 0.0955]), ("MS-SSIM/Mean:0", 0.995, [0.9947]),
        ("PSNR_1/Identity:0", 14.061, [6.7804, 7.2808]),
        ("RGBToHSV:0", 242.733, [0.3295, 0.7626, 0.8707]),
        ("HSVToRGB:0", 194.0, [0.222, 0.8707, 0.2067]),
        ("Tensordot:0", 67.063, [0.6011, -0.1941, -0.3326]),
        ("Tensordot_2:0", 194.0, [0.222, 0.8707, 0.2067]),
        ("Tensordot_3:0", 70.361, [0.6011, -0.1732, -0.3439]),
        ("rgb_to_grayscale:0", 65.153, [0.601, 0.631, 0.5671]),
        ("grayscale_to_rgb:0", 195.46, [0.601, 0.601, 0.601]),
        ("rgb_to_grayscale_2:0", 16376.0, [167., 146., 170.]),
        ("convert_image_1:0", 49248.0, [0., 255., 0.]),
        ("convert_image_3:0", 6189440.0, [6016., 31360., 10496.]),
        ("convert_image_4:0", 189.626, [0.1843, 0.9609, 0.3215]),
        ("convert_image_5:0", 5569.0, [5., 29., 9.]),
        ("convert_image_6:0", 416612487031.0, [4.7673e+08, 1.8699e+09, 4.4393e+08]),
        ("convert_image_7:0", 194.0, [0.222, 0.8707, 0.2067]),
        ("adjust_gamma/Identity:0", 65.121, [0.0246, 0.3791, 0.0214]),
        ("adjust_gamma_1/convert_image_1:0", 64353.0, [109., 250., 144.]),
        ("adjust_brightness/convert_image_1:0", 57574.0, [72., 255., 107.]),
        ("adjust_contrast/convert_image_1:0", 48909.0, [10., 255., 60.]),
        ("adjust_saturation/Identity:0", 261.711, [0.6761, 0.8707, 0.6715]),
        ("adjust_hue/Identity:0", 197.067, [0.8707, 0.7227, 0.2067]),
        ("per_image_standardization:0", 0.0, [-1.0673, 1.5292, -0.6084]),
        ("ExtractImagePatches:0", 241.418, [0.222, 0.8707, 0.2067]),
        ("ExtractImagePatches_1:0", 72.404, [0.222, 0.8707, 0.2067]),
        ("ExtractImagePatches_2:0", 109.098, [0.222, 0.8707, 0.2067])]
    assert [t.name for t in outs] == [w[0] for w in want]
    with tf.Session() as sess:
        got = sess.run(outs)
    for value, (name, total, head) in zip(got, want):
        value = np.asarray(value, np.float64)
        np.testing.assert_allclose(value.sum(), total, rtol=1e-5, atol=2e-3, err_msg=name)
        np.testing.assert_allclose(value.ravel()[:len(head)], head, rtol=1e-4, atol=1e-4,
                                   err_msg=name)


def test_adjust_gamma_checks_gamma_as_tensorflow():
    tf.reset_default_graph()
    im = tf.placeholder(tf.float32, [2, 2, 1], name="im")
    g = tf.placeholder(tf.float32, [], name="g")
    a = tf.image.adjust_gamma(im, 2.0, 0.5)
    b = tf.image.adjust_gamma(im, g)
    c = tf.image.adjust_gamma(tf.cast(im * 255, tf.uint8), 0.5)
    assert (a.name, b.name, c.name) == ("adjust_gamma/Identity:0", "adjust_gamma_1/Identity:0",
                                        "adjust_gamma_2/convert_image_1:0")
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()
           if o.name.startswith("adjust_gamma")]
    assert ops[:15] == [
        ("adjust_gamma/pow/y", "Const"), ("adjust_gamma/pow", "Pow"),
        ("adjust_gamma/mul/x", "Const"), ("adjust_gamma/mul", "Mul"),
        ("adjust_gamma/Identity", "Identity"),
        ("adjust_gamma_1/GreaterEqual/y", "Const"), ("adjust_gamma_1/GreaterEqual", "GreaterEqual"),
        ("adjust_gamma_1/Assert/Const", "Const"), ("adjust_gamma_1/Assert/Assert/data_0", "Const"),
        ("adjust_gamma_1/Assert/Assert", "Assert"),
        ("adjust_gamma_1/control_dependency", "Identity"), ("adjust_gamma_1/pow", "Pow"),
        ("adjust_gamma_1/mul/x", "Const"), ("adjust_gamma_1/mul", "Mul"),
        ("adjust_gamma_1/Identity", "Identity")]
    fd = {im: np.array([0.1, 0.5, 0.9, 1.0], np.float32).reshape(2, 2, 1), g: 0.7}
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(b, fd).ravel(), [0.19953, 0.61557, 0.9289, 1.0],
                                   atol=1e-5)
        assert sess.run(c, fd).ravel().tolist() == [80, 180, 242, 255]
        with pytest.raises(errors.InvalidArgumentError,
                           match="Gamma should be a non-negative real number"):
            sess.run(b, {im: fd[im], g: -1.0})
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number"):
        tf.image.adjust_gamma(im, -0.5)


def test_convert_image_dtype_saturates_through_saturate_cast():
    tf.reset_default_graph()
    f = tf.placeholder(tf.float32, [None])
    i8 = tf.placeholder(tf.int8, [None])
    i32 = tf.placeholder(tf.int32, [None])
    u16 = tf.placeholder(tf.uint16, [None])
    conv = tf.image.convert_image_dtype
    outs = [conv(f, tf.int32, saturate=True), conv(f, tf.uint8, saturate=True),
            conv(f, tf.int16, saturate=True, name="to16"), conv(i8, tf.uint8, saturate=True),
            conv(i8, tf.uint8), conv(i32, tf.uint8, saturate=True), conv(i32, tf.uint8),
            conv(i32, tf.uint16, saturate=True), conv(u16, tf.int8, saturate=True),
            conv(u16, tf.int8), conv(i8, tf.int64, saturate=True),
            conv(f, tf.float16, saturate=True)]
    assert [t.name for t in outs] == (["convert_image:0", "convert_image_1:0", "to16:0"]
                                      + [f"convert_image_{i}:0" for i in range(2, 11)])
    ops = {o.name: o.type for o in tf.get_default_graph().get_operations()}
    assert {k: v for k, v in ops.items() if k.startswith(("convert_image/", "convert_image_2/",
                                                          "convert_image_9/"))} == {
        "convert_image/Mul/y": "Const", "convert_image/Mul": "Mul",
        "convert_image/Const": "Const", "convert_image/Const_1": "Const",
        "convert_image/clamp": "ClipByValue",
        "convert_image_2/saturate_cast/Const": "Const",
        "convert_image_2/saturate_cast/Const_1": "Const",
        "convert_image_2/saturate_cast/clamp": "ClipByValue",
        "convert_image_2/saturate_cast": "Cast", "convert_image_2/y": "Const",
        "convert_image_9/saturate_cast": "Cast", "convert_image_9/y": "Const"}
    with tf.Session() as sess:
        got = sess.run(outs, {f: [-0.5, 0.0, 0.5, 1.0, 2.0], i8: [-128, -1, 0, 1, 127],
                              i32: [-2**31, -1, 0, 2**24, 2**31 - 1],
                              u16: [0, 1, 255, 32768, 65535]})
    assert [v.tolist() for v in got] == [
        [-1073741824, 0, 1073741824, 2147483520, 2147483520], [0, 0, 127, 255, 255],
        [-16383, 0, 16383, 32767, 32767], [0, 0, 0, 2, 254], [0, 254, 0, 2, 254],
        [0, 0, 0, 2, 255], [0, 255, 0, 2, 255], [0, 0, 0, 512, 65535], [0, 0, 0, 64, 127],
        [0, 0, 0, 64, 127],
        [-9223372036854775808, -72057594037927936, 0, 72057594037927936, 9151314442816847872],
        [-0.5, 0.0, 0.5, 1.0, 2.0]]


# -- segmentation input pipeline: crop/pad helpers on images of unknown size ---------------
def test_crop_and_pad_helpers_on_dynamic_images_with_run_time_checks():
    tf.reset_default_graph()
    img = tf.placeholder(tf.float32, [None, None, 3], name="img")
    lbl = tf.placeholder(tf.int32, [None, None, 1], name="lbl")
    h, w = tf.shape(img)[0], tf.shape(img)[1]
    comb = tf.concat([img, tf.cast(lbl, tf.float32)], axis=2)
    padded = tf.image.pad_to_bounding_box(comb, 1, 2, tf.maximum(h + 1, 8), tf.maximum(w + 2, 8))
    crop = tf.random_crop(padded, [6, 6, 4], seed=3)
    ci, cl = crop[:, :, :3], tf.cast(crop[:, :, 3:], tf.int32)
    outs = [padded, crop, cl, tf.image.central_crop(ci, 0.5),
            tf.image.central_crop(tf.expand_dims(ci, 0), 0.66),
            tf.image.resize_image_with_crop_or_pad(ci, 9, 4),
            tf.image.crop_to_bounding_box(ci, 1, 1, 3, 4),
            tf.image.resize_image_with_pad(ci, 5, 9),
            tf.image.resize_image_with_pad(ci, 5, 9, method=tf.image.ResizeMethod.BICUBIC)]
    assert [(t.name, t.shape.as_list()) for t in outs[:2] + outs[3:]] == [
        ("pad_to_bounding_box/Squeeze:0", [None, None, 4]), ("random_crop:0", [6, 6, 4]),
        ("central_crop/Slice:0", [4, 4, 3]), ("central_crop_1/Slice:0", [1, 4, 4, 3]),
        ("resize_image_with_crop_or_pad/Squeeze:0", [9, 4, 3]),
        ("crop_to_bounding_box/Squeeze:0", [3, 4, 3]),
        ("resize_image_with_pad/Squeeze:0", [5, 9, 3]),
        ("resize_image_with_pad_1/Squeeze:0", [5, 9, 3])]
    rng = np.random.RandomState(2)
    fd = {img: rng.uniform(0, 1, (5, 7, 3)).astype(np.float32), lbl: rng.randint(0, 4, (5, 7, 1))}
    want = [[102.3311, 86.6821, 43.0, 22.121, 22.121, 27.6278, 16.4692, 30.3917, 30.9214],
            [102.3311, 66.3713, 34.0, 16.4112, 16.4112, 20.7233, 16.4112, 22.5133, 22.8385]]
    with tf.Session() as sess:
        for step in range(2):
            got = sess.run(outs, fd)
            assert [v.shape for v in got] == [(8, 9, 4), (6, 6, 4), (6, 6, 1), (4, 4, 3),
                                              (1, 4, 4, 3), (9, 4, 3), (3, 4, 3), (5, 9, 3),
                                              (5, 9, 3)]
            np.testing.assert_allclose([v.astype(np.float64).sum() for v in got], want[step],
                                       atol=2e-3)
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"height must be >= target \+ offset"):
            sess.run(tf.image.crop_to_bounding_box(img, 2, 2, 4, 4), fd)
        with pytest.raises(errors.InvalidArgumentError, match="width must be <= target - offset"):
            sess.run(tf.image.pad_to_bounding_box(img, 0, 2, 8, 4), fd)
    for fn, msg in [(lambda: tf.image.crop_to_bounding_box(img, -1, 0, 2, 2),
                     "offset_height must be >= 0"),
                    (lambda: tf.image.central_crop(img, 1.5), r"central_fraction must be within"),
                    (lambda: tf.image.resize_image_with_crop_or_pad(img, 0, 3),
                     "target_height must be > 0"),
                    (lambda: tf.image.crop_to_bounding_box(tf.zeros([4, 4, 1]), 2, 2, 4, 4),
                     r"width must be >= target \+ offset"),
                    (lambda: tf.image.pad_to_bounding_box(tf.zeros([4, 4, 1]), 2, 2, 4, 4),
                     "width must be <= target - offset")]:
        with pytest.raises(ValueError, match=msg):
            fn()


# -- Inception preprocessing seeded by the graph seed alone ---------------------------------
def test_inception_preprocessing_with_graph_seed_only_and_random_selectors():
    """Op seeds come from the graph's op counter: every helper must build TF's op count."""
    tf.reset_default_graph()
    tf.set_random_seed(2019)

    def apply_with_random_selector(x, func, num_cases, zero=None):
        sel = tf.random_uniform([], maxval=num_cases, dtype=tf.int32)
        return tf.add_n([tf.cond(tf.equal(sel, case), lambda c=case: func(x, c),
                                 lambda: tf.zeros_like(x) if zero is None else tf.zeros(zero))
                         for case in range(num_cases)])

    def distort_color(image, color_ordering=0):
        with tf.name_scope(None, "distort_color", [image]):
            if color_ordering == 0:
                image = tf.image.random_brightness(image, max_delta=32. / 255.)
                image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
                image = tf.image.random_hue(image, max_delta=0.2)
                image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
            else:
                image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
                image = tf.image.random_brightness(image, max_delta=32. / 255.)
                image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
                image = tf.image.random_hue(image, max_delta=0.2)
            return tf.clip_by_value(image, 0.0, 1.0)

    raw = tf.constant(np.random.RandomState(1).randint(0, 255, (12, 10, 3)).astype(np.uint8))
    image = tf.image.convert_image_dtype(raw, tf.float32)
    bbox = tf.constant([0.0, 0.0, 1.0, 1.0], dtype=tf.float32, shape=[1, 1, 4])
    begin, size, _ = tf.image.sample_distorted_bounding_box(tf.shape(image), bbox,
                                                            min_object_covered=0.1, seed=4)
    d = tf.slice(image, begin, size)
    d.set_shape([None, None, 3])
    d = apply_with_random_selector(
        d, lambda x, m: tf.image.resize_images(x, [8, 8], method=m), 4, zero=[8, 8, 3])
    d = tf.image.random_flip_left_right(d)
    d = apply_with_random_selector(d, distort_color, 2)
    d = tf.subtract(d, 0.5) * 2.0
    assert (d.name, d.shape.as_list()) == ("mul:0", [8, 8, 3])
    assert len(tf.get_default_graph().get_operations()) == 194
    r = tf.random_normal([3])
    u = tf.random_uniform([2])
    sh = tf.random_shuffle(tf.range(6))
    want = [(-21.482, [-0.0898, -0.9322, 0.1294]), (18.942, [-0.5572, -0.5918, 0.1546]),
            (-5.522, [-1.0, 0.6751, -0.3655])]
    with tf.Session() as sess:
        for total, corner in want:
            v = sess.run(d)
            np.testing.assert_allclose(v.sum(), total, atol=2e-3)
            np.testing.assert_allclose(v[0, 0], corner, atol=2e-4)
        np.testing.assert_allclose(sess.run(r), [0.5587, -0.2094, -0.4244], atol=1e-4)
        np.testing.assert_allclose(sess.run(u), [0.572, 0.029], atol=1e-4)
        assert sess.run(sh).tolist() == [2, 0, 3, 1, 4, 5]


def test_resize_and_crop_gradients_of_float64_and_half_images():
    tf.reset_default_graph()
    rng = np.random.RandomState(0)
    x64 = tf.constant(rng.uniform(0, 1, (1, 4, 5, 2)))
    x16 = tf.cast(x64, tf.float16)
    boxes = tf.constant([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0]], tf.float32)
    fns = [lambda x: tf.image.resize_bilinear(x, [3, 7]),
           lambda x: tf.image.resize_bicubic(x, [3, 7]),
           lambda x: tf.image.resize_nearest_neighbor(x, [3, 7]),
           lambda x: tf.image.crop_and_resize(x, boxes, [0, 0], [3, 3])]
    grads, described = [], []
    for x in (x64, x16):
        for fn in fns:
            y = fn(x)
            w = tf.constant(rng.uniform(-1, 1, y.shape.as_list()).astype(y.dtype.as_numpy_dtype))
            g = tf.gradients(tf.reduce_sum(y * w), [x, boxes] if y.op.type == "CropAndResize"
                             else [x])
            described.append((y.dtype.name, [None if t is None else t.dtype.name for t in g]))
            grads.append([t for t in g if t is not None])
    # TF: float32 results; gradients in the image's dtype; none for a half bicubic resize
    assert described == [
        ("float32", ["float64"]), ("float32", ["float64"]), ("float64", ["float64"]),
        ("float32", ["float64", "float32"]), ("float32", ["float16"]), ("float32", [None]),
        ("float16", ["float16"]), ("float32", ["float16", "float32"])]
    want = [[[-0.168, -0.377, 0.473, -0.433, -8.333]], [[-0.876, 0.477, 0.052, -0.888, 3.265]],
            [[-1.114, -0.184, 0.32, -0.42, 4.559]],
            [[0.732, 0.189, -0.547, -0.157, -5.275], [-1.08, -1.558, -0.063, -0.618, -2.861]],
            [[-0.516, -0.888, -0.474, -0.671, -2.959]], [],
            [[0.958, 0.236, -0.263, -0.726, -4.348]],
            [[-0.023, -0.42, -0.242, -0.135, -3.131], [0.558, 0.166, 1.192, -0.257, 3.565]]]
    with tf.Session() as sess:
        got = sess.run(grads)
    for values, expected in zip(got, want):
        for v, e in zip(values, expected):
            v = np.asarray(v, np.float64)
            np.testing.assert_allclose(v.ravel()[:4], e[:4], atol=2e-3)
            np.testing.assert_allclose(v.sum(), e[4], atol=1e-2)


def test_crop_and_resize_checks_its_inputs_when_run():
    tf.reset_default_graph()
    img = tf.placeholder(tf.float32, [None, None, None, 3])
    bx = tf.placeholder(tf.float32, [None, 4])
    bi = tf.placeholder(tf.int32, [None])
    cr = tf.image.crop_and_resize(img, bx, bi, [2, 2])
    assert (cr.name, cr.shape.as_list()) == ("CropAndResize:0", [None, 2, 2, 3])
    fd = {img: np.ones((2, 4, 4, 3), np.float32), bx: [[0, 0, 1, 1]], bi: [0]}
    with tf.Session() as sess:
        assert sess.run(cr, fd).shape == (1, 2, 2, 3)
        for update, error, msg in [
                ({bi: [2]}, errors.OutOfRangeError,
                 r"box_index has values outside \[0, batch_size\)"),
                ({bi: [-1]}, errors.OutOfRangeError, "box_index has values outside"),
                ({bi: [0, 1]}, errors.InvalidArgumentError, "box_index has incompatible shape"),
                ({img: np.ones((2, 0, 4, 3), np.float32)}, errors.InvalidArgumentError,
                 "image dimensions must be positive")]:
            with pytest.raises(error, match=msg):
                sess.run(cr, {**fd, **update})
        with pytest.raises(errors.InvalidArgumentError, match="crop dimensions must be positive"):
            sess.run(tf.image.crop_and_resize(img, bx, bi, [0, 2]), fd)
    with pytest.raises(ValueError):
        tf.image.crop_and_resize(img, bx, bi, [2, 2, 0])
