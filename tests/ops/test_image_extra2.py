"""Image metrics, filters, gamma and color spaces of `tf.image`
(flowgraph/ops/image_extra2_ops.py), against values recorded from TensorFlow 2.15
(tf.compat.v1) with the tf-oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import flowgraph as tf

sys.path.insert(0, str(Path(__file__).parent))
from gradient_checker import check_gradient

A = (np.arange(16 * 16 * 3).reshape(1, 16, 16, 3) % 7 / 7.0).astype(np.float32)
B = (np.arange(16 * 16 * 3).reshape(1, 16, 16, 3) % 5 / 5.0).astype(np.float32)
C = np.sqrt(A * B + 0.1).astype(np.float32)
P = np.arange(60, dtype=np.float32).reshape(1, 5, 6, 2)


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_psnr_and_ssim_match_tensorflow():
    np.testing.assert_allclose(run(tf.image.psnr(A, B, 1.0)), [7.8821], atol=1e-4)
    np.testing.assert_allclose(run(tf.image.psnr(A, C, 1.0)), [12.62572193], rtol=1e-6)
    u8 = tf.image.psnr((A * 255).astype(np.uint8), (B * 255).astype(np.uint8), 255)
    np.testing.assert_allclose(run(u8), [7.8888], atol=1e-4)
    np.testing.assert_allclose(run(tf.image.ssim(A, C, 1.0)), [0.53909773], rtol=1e-5)
    two = tf.image.ssim(np.stack([A[0], B[0]]), np.stack([C[0], C[0]]), 1.0, filter_size=5)
    np.testing.assert_allclose(run(two), [0.53946906, 0.57878518], rtol=1e-5)
    assert run(tf.image.ssim(A, C, 1.0, filter_size=7, return_index_map=True)).shape == (
        1, 10, 10)
    np.testing.assert_allclose(run(tf.image.ssim(A, B, 1.0, filter_size=5, filter_sigma=1.0,
                                                 k1=0.02)), [0.0061], atol=1e-4)


def test_ssim_multiscale_matches_tensorflow():
    big1 = (np.sin(np.arange(180 * 180) * 0.37).reshape(1, 180, 180, 1) * 0.5 + 0.5)
    big1 = big1.astype(np.float32)
    big2 = np.sqrt(big1 * 0.8 + 0.05).astype(np.float32)
    # the coarse scales' variances (E[x^2] - E[x]^2 of near-constant 12x12 images) cancel
    # in float32, so the depthwise convolution's summation order shows at 2e-5
    np.testing.assert_allclose(run(tf.image.ssim_multiscale(big1, big2, 1.0)), [0.93154711],
                               rtol=3e-5)
    odd = tf.image.ssim_multiscale(big1[:, :170, :175], big2[:, :170, :175], 1.0,
                                   power_factors=(0.3, 0.3, 0.4))
    np.testing.assert_allclose(run(odd), [0.90230346], rtol=1e-5)


def test_ssim_gradient_matches_tensorflow():
    x, y = tf.constant(A), tf.constant(C)
    g = tf.gradients(tf.image.ssim(x, y, 1.0), [x])[0]
    np.testing.assert_allclose(run(tf.reduce_sum(g * g)), 0.0307872, rtol=1e-4)


def test_total_variation_and_gradients():
    assert run(tf.image.total_variation(tf.constant(P * P))).tolist() == [39884.0]
    assert run(tf.image.total_variation(tf.constant(P[0]))) == 676.0
    dy, dx = run(tf.image.image_gradients(tf.constant(P * P)))
    assert dy[0, 0, :3, 0].tolist() == [144, 192, 240] and not dy[0, 4].any()
    assert dx[0, 1, :, 1].tolist() == [56, 64, 72, 80, 88, 0]
    check_gradient(lambda x: tf.image.total_variation(x), [np.random.RandomState(1).uniform(
        -1, 1, (2, 3, 4, 2))])


def test_sobel_edges_matches_tensorflow():
    e = run(tf.image.sobel_edges(tf.constant(P * P)))
    assert e.shape == (1, 5, 6, 2, 2)
    assert e[0, 1, :, 0, 0].tolist() == [2496, 2688, 3072, 3456, 3840, 4032]
    assert e[0, 0, :, 1, 1].tolist() == [0, 288, 352, 416, 480, 0]
    assert e[0, 4, 1].tolist() == [[0, 1408], [0, 1440]]


def test_adjust_gamma_and_color_spaces():
    x = A[0, :2, :2]
    np.testing.assert_allclose(run(tf.image.adjust_gamma(x, 2.0, 0.5))[0, 1],
                               [0.0918, 0.1633, 0.2551], atol=1e-4)
    u8 = run(tf.image.adjust_gamma((x * 255).astype(np.uint8), 0.5))
    assert u8.dtype == np.uint8 and u8[0].tolist() == [[0, 96, 135], [167, 192, 215]]
    np.testing.assert_allclose(run(tf.image.rgb_to_yiq(x))[1, 0], [0.2726, 0.4649, 0.2257],
                               atol=1e-4)
    np.testing.assert_allclose(run(tf.image.yiq_to_rgb(x))[0, 1], [1.4183, -0.1892, 1.0135],
                               atol=1e-4)
    np.testing.assert_allclose(run(tf.image.rgb_to_yuv(x))[1, 0], [0.2726, -0.0638, 0.5128],
                               atol=1e-4)
    np.testing.assert_allclose(run(tf.image.yuv_to_rgb(x))[1, 0], [1.02, 0.7742, 0.8571],
                               atol=1e-4)
    # the published matrices are inverses to about four decimals
    np.testing.assert_allclose(run(tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(x))), x, atol=2e-4)
    np.testing.assert_allclose(run(tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(x))), x, atol=2e-4)


def test_tf2_names_of_existing_functions():
    pim = P
    patches = run(tf.image.extract_patches(pim, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                           "VALID"))
    assert patches.shape == (1, 2, 2, 12)
    assert patches[0, 1, 1].tolist() == [28, 29, 30, 31, 32, 33, 40, 41, 42, 43, 44, 45]
    same = run(tf.image.extract_image_patches(pim, [1, 2, 2, 1], [1, 3, 2, 1], [1, 2, 1, 1],
                                              "SAME"))
    assert same[0, 1, 0].tolist() == [36, 37, 38, 39, 0, 0, 0, 0]
    rcp = run(tf.image.resize_with_crop_or_pad(pim[0], 3, 8))
    assert rcp[:, 1, 0].tolist() == [12, 24, 36] and not rcp[:, 0].any()
    assert run(tf.image.transpose(pim)).shape == (1, 6, 5, 2)
