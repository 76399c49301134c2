"""Box ops of `tf.image` (flowgraph/ops/image_boxes_ops.py): values recorded from
TensorFlow 2.15 (tf.compat.v1) with the tf-oracle; crop_and_resize's gradients are also
checked against finite differences by tests/ops/test_gradient_registry.py."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                  [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_non_max_suppression_matches_tensorflow():
    assert run(tf.image.non_max_suppression(BOXES, SCORES, 3, 0.5)).tolist() == [3, 0, 5]
    assert run(tf.image.non_max_suppression(BOXES, SCORES, 5, 0.5,
                                            score_threshold=0.4)).tolist() == [3, 0]
    # equal scores: the lower index first
    ties = tf.image.non_max_suppression(BOXES[[0, 3, 5]], np.full(3, 0.5, np.float32), 3)
    assert run(ties).tolist() == [0, 1, 2]
    # corners in either order describe one box
    flipped = tf.image.non_max_suppression([[1, 1, 0, 0], [0, 0, 1, 1]], [0.9, 0.8], 2, 0.5)
    assert run(flipped).tolist() == [0]
    # an IoU equal to the threshold does not suppress
    half = tf.image.non_max_suppression([[0, 0, 1, 1], [0, 0, 1, 0.5]], [0.9, 0.8], 2, 0.5)
    assert run(half).tolist() == [0, 1]


def test_soft_nms_scores_match_tensorflow():
    idx, sc = tf.image.non_max_suppression_with_scores(BOXES, SCORES, 6, 0.5,
                                                       soft_nms_sigma=0.5)
    i, s = run([idx, sc])
    assert i.tolist() == [3, 0, 1, 5, 4, 2]
    np.testing.assert_allclose(s, [0.95, 0.9, 0.384, 0.3, 0.256, 0.197], atol=6e-4)
    idx, sc = tf.image.non_max_suppression_with_scores(BOXES, SCORES, 6, 0.5)
    i, s = run([idx, sc])
    assert i.tolist() == [3, 0, 5]
    np.testing.assert_allclose(s, [0.95, 0.9, 0.3])
    same = tf.image.non_max_suppression_with_scores([[0, 0, 1, 1], [0, 0, 1, 1]], [0.9, 0.8],
                                                    2, 0.5, soft_nms_sigma=0.5)
    np.testing.assert_allclose(run(same[1]), [0.9, 0.8 * np.exp(-1.0)], rtol=1e-6)


def test_padded_and_overlaps():
    idx, n = tf.image.non_max_suppression_padded(BOXES, SCORES, 5, 0.5,
                                                 pad_to_max_output_size=True)
    assert idx.shape.as_list() == [5]
    i, v = run([idx, n])
    assert i.tolist() == [3, 0, 5, 0, 0] and v == 3
    idx, n = tf.image.non_max_suppression_padded(BOXES, SCORES, 5, 0.5)
    assert run(idx).tolist() == [3, 0, 5]
    ov = np.array([[1, .7, .2], [.7, 1, .1], [.2, .1, 1]], np.float32)
    keep = tf.image.non_max_suppression_overlaps(ov, [.5, .9, .3], 3, 0.6)
    assert run(keep).tolist() == [1, 2]


def test_combined_non_max_suppression():
    cb = np.array([[[[0, 0, 1, 1]], [[0, 0.1, 1, 1.1]], [[0, 5, 1, 6]]]], np.float32)
    cs = np.array([[[0.9, 0.1], [0.8, 0.7], [0.3, 0.6]]], np.float32)
    out = tf.image.combined_non_max_suppression(cb, cs, 3, 4, 0.5, 0.0)
    assert [t.shape.as_list() for t in out] == [[1, 4, 4], [1, 4], [1, 4], [1]]
    boxes, scores, classes, valid = run(out)
    np.testing.assert_allclose(boxes[0], [[0, 0, 1, 1], [0, 0.1, 1, 1], [0, 1, 1, 1],
                                          [0, 1, 1, 1]], atol=1e-6)
    np.testing.assert_allclose(scores, [[0.9, 0.7, 0.6, 0.3]], atol=1e-6)
    assert classes.tolist() == [[0, 1, 1, 0]] and valid.tolist() == [4]
    out = tf.image.combined_non_max_suppression(cb * 0.5, cs, 3, 3, 0.5, 0.2,
                                                pad_per_class=True, clip_boxes=False)
    boxes, scores, classes, valid = run(out)
    np.testing.assert_allclose(boxes[0], [[0, 0, 0.5, 0.5], [0, 0.05, 0.5, 0.55],
                                          [0, 2.5, 0.5, 3.0]], atol=1e-6)
    assert classes.tolist() == [[0, 1, 1]] and valid.tolist() == [3]


IMG = np.arange(2 * 4 * 5 * 2, dtype=np.float32).reshape(2, 4, 5, 2)
CROP = np.array([[0, 0, 1, 1], [0.1, 0.2, 0.6, 0.9], [0.5, 0.5, 1.2, 0.2]], np.float32)


def test_crop_and_resize_matches_tensorflow():
    out = run(tf.image.crop_and_resize(IMG, CROP, [0, 1, 0], [3, 2]))
    np.testing.assert_allclose(out[..., 0], [[[0, 8], [15, 23], [30, 38]],
                                             [[44.6, 50.2], [52.1, 57.7], [59.6, 65.2]],
                                             [[19, 16.6], [29.5, 27.1], [0, 0]]], atol=1e-4)
    near = run(tf.image.crop_and_resize(IMG, CROP, [0, 1, 0], [3, 2], method="nearest",
                                        extrapolation_value=-1.0))
    np.testing.assert_allclose(near[..., 1], [[[1, 9], [21, 29], [31, 39]],
                                              [[43, 49], [53, 59], [63, 69]],
                                              [[25, 23], [35, 33], [-1, -1]]])
    center = run(tf.image.crop_and_resize(IMG, CROP, [0, 1, 0], [1, 1]))
    np.testing.assert_allclose(center[:, 0, 0, 0], [19.0, 54.9, 28.3], atol=1e-4)
    assert tf.image.crop_and_resize(IMG.astype(np.uint8), CROP, [0, 1, 0],
                                    [3, 2]).dtype == tf.float32


def test_crop_and_resize_gradients_match_tensorflow():
    x, b = tf.constant(IMG), tf.constant(CROP)
    y = tf.image.crop_and_resize(x, b, [0, 1, 0], [3, 2])
    w = tf.constant(np.linspace(-1, 1, 36).reshape(3, 3, 2, 2).astype(np.float32))
    gx, gb = run(tf.gradients(tf.reduce_sum(y * w), [x, b]))
    np.testing.assert_allclose(gb, [[-41.1429, 0.0, -41.1429, 0.0],
                                    [-27.4286, -2.7429, 27.4286, 2.7429],
                                    [96.0, 0.0, 41.1429, 20.1143]], atol=2e-3)
    np.testing.assert_allclose(gx[0, 0, :, 0], [-1.0, 0.0, 0.0, 0.0, -0.8857], atol=1e-4)
    np.testing.assert_allclose(gx[1, 2, :, 1], [0.0317, 0.1269, 0.0, 0.1023, 0.1534],
                               atol=1e-4)


def test_crop_and_resize_errors():
    # TF 2.15: OutOfRangeError "box_index has values outside [0, batch_size)"
    with pytest.raises(tf.errors.OutOfRangeError, match=r"box_index has values outside"):
        run(tf.image.crop_and_resize(IMG, CROP, [0, 5, 0], [3, 2]))
    with pytest.raises(ValueError, match="method"):
        tf.image.crop_and_resize(IMG, CROP, [0, 1, 0], [3, 2], method="bicubic")


def test_draw_bounding_boxes_matches_tensorflow():
    out = run(tf.image.draw_bounding_boxes(np.zeros((1, 5, 6, 3), np.float32),
                                           [[[0.2, 0.1, 0.8, 0.7]]]))
    mask = np.zeros((5, 6), bool)
    mask[0, :4] = mask[3, :4] = mask[:4, 0] = mask[:4, 3] = True
    np.testing.assert_array_equal(out[0], np.where(mask[..., None], [1.0, 1.0, 0.0], 0.0))
    out = run(tf.image.draw_bounding_boxes(np.zeros((1, 4, 4, 4), np.float32),
                                           [[[0.0, 0.0, 0.5, 0.5]]]))
    assert out[0, 0, 0].tolist() == [1, 1, 0, 1] and out[0, 2, 2].tolist() == [0, 0, 0, 0]
    colored = run(tf.image.draw_bounding_boxes(np.zeros((1, 5, 6, 3), np.float32),
                                               [[[0.2, 0.1, 0.8, 0.7], [0, 0, 1, 1]]],
                                               colors=[[0.5, 0.2, 0.1, 1.0]]))
    np.testing.assert_allclose(colored[0, 4, 5], [0.5, 0.2, 0.1])


def test_sample_distorted_bounding_box_satisfies_its_constraints():
    begin, size, box = tf.image.sample_distorted_bounding_box(
        [40, 50, 3], [[[0.2, 0.2, 0.6, 0.6]]], seed=3, min_object_covered=0.5,
        area_range=(0.1, 0.5), aspect_ratio_range=(0.5, 2.0))
    assert [t.dtype for t in (begin, size, box)] == [tf.int32, tf.int32, tf.float32]
    assert box.shape.as_list() == [1, 1, 4]
    with tf.Session() as sess:
        for _ in range(10):
            b, s, bx = sess.run([begin, size, box])
            assert b[2] == 0 and s[2] == -1
            assert 0 <= b[0] and b[0] + s[0] <= 40 and 0 <= b[1] and b[1] + s[1] <= 50
            y1, x1, y2, x2 = bx[0, 0]
            np.testing.assert_allclose([y1, x1, y2, x2], [b[0] / 40, b[1] / 50,
                                                          (b[0] + s[0]) / 40,
                                                          (b[1] + s[1]) / 50], rtol=1e-6)
            ih = max(0.0, min(y2, 0.6) - max(y1, 0.2))
            iw = max(0.0, min(x2, 0.6) - max(x1, 0.2))
            assert ih * iw / 0.16 >= 0.5 - 1e-6
            assert 0.1 * 2000 * 0.8 <= s[0] * s[1] <= 0.5 * 2000 * 1.2


def test_extract_glimpse_matches_tensorflow():
    img = np.arange(42, dtype=np.float32).reshape(1, 6, 7, 1)
    g = run(tf.image.extract_glimpse(img, [3, 3], [[0.0, 0.0]]))
    assert g[0, :, :, 0].tolist() == [[9, 10, 11], [16, 17, 18], [23, 24, 25]]
    g = run(tf.image.extract_glimpse(img, [3, 2], [[0.5, -0.5]]))
    assert g[0, :, :, 0].tolist() == [[21, 22], [28, 29], [35, 36]]
    noise = run(tf.image.extract_glimpse(img, [2, 3], [[1.0, -2.0]], centered=False,
                                         normalized=False))
    assert noise.shape == (1, 2, 3, 1) and (noise >= 0).all() and (noise <= 41).all()
    zero = run(tf.image.extract_glimpse(img, [2, 3], [[1.0, -2.0]], centered=False,
                                        normalized=False, noise="zero"))
    assert not zero.any()


@pytest.mark.parametrize("module", ["flowgraph.ops.image_boxes_ops",
                                    "flowgraph.ops.image_extra2_ops",
                                    "flowgraph.ops.image_codec_ops",
                                    "flowgraph.ops.parsing_sequence_batch_ops",
                                    "flowgraph.io.match_filenames"])
def test_module_examples(module):
    from module_examples import assert_examples_pass

    assert_examples_pass(module)


def test_sample_distorted_bounding_box_is_a_seeded_sequence():
    tf.set_random_seed(5)
    _, size, _ = tf.image.sample_distorted_bounding_box([100, 120, 3],
                                                        [[[0.1, 0.1, 0.9, 0.9]]], seed=7)
    with tf.Session() as sess:
        first = [sess.run(size).tolist() for _ in range(5)]
    with tf.Session() as sess:
        again = [sess.run(size).tolist() for _ in range(5)]
    assert first == again and len({tuple(s) for s in first}) > 1
