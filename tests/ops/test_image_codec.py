"""BMP/GIF decoding, JPEG encoding and header parsing (flowgraph/ops/image_codec_ops.py),
under `tf.image` and `tf.io`; shapes, dtypes and errors as TensorFlow 2.15 gives them."""

from __future__ import annotations

import io

import numpy as np
import pytest

import flowgraph as tf

PIL = pytest.importorskip("PIL.Image")
ARR = (np.arange(4 * 6 * 3).reshape(4, 6, 3) * 5 % 256).astype(np.uint8)
FLAT = np.full((8, 8, 3), 128, np.uint8)


def _encoded(fmt, frames=None):
    buf = io.BytesIO()
    if frames is None:
        PIL.fromarray(ARR).save(buf, format=fmt)
    else:
        imgs = [PIL.fromarray(f) for f in frames]
        imgs[0].save(buf, format=fmt, save_all=True, append_images=imgs[1:])
    return buf.getvalue()


def run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_decode_bmp_and_gif():
    bmp = _encoded("BMP")
    np.testing.assert_array_equal(run(tf.image.decode_bmp(bmp)), ARR)
    assert run(tf.io.decode_bmp(bmp, channels=4)).shape == (4, 6, 4)
    assert tf.image.decode_bmp(bmp).shape.as_list() == [None, None, None]
    frames = [np.full((3, 5, 3), v, np.uint8) for v in (0, 255)]
    gif = tf.io.decode_gif(_encoded("GIF", frames))
    assert gif.shape.as_list() == [None, None, None, 3]
    np.testing.assert_array_equal(run(gif), np.stack(frames))
    with pytest.raises(tf.errors.InvalidArgumentError, match="BMP format using a wrong op"):
        run(tf.image.decode_gif(bmp))


def test_encode_jpeg_round_trip_and_header():
    jpeg = tf.image.encode_jpeg(FLAT, quality=90)
    assert jpeg.dtype == tf.string and jpeg.shape.as_list() == []
    np.testing.assert_array_equal(run(tf.image.decode_jpeg(jpeg)), FLAT)
    assert run(tf.io.extract_jpeg_shape(tf.io.encode_jpeg(ARR))).tolist() == [4, 6, 3]
    gray = tf.image.extract_jpeg_shape(tf.image.encode_jpeg(ARR[:, :, :1]),
                                       output_type=tf.int64)
    assert gray.dtype == tf.int64 and run(gray).tolist() == [4, 6, 1]
    assert run([tf.image.is_jpeg(jpeg), tf.io.is_jpeg(_encoded("BMP"))]) == [True, False]
    with pytest.raises(tf.errors.InvalidArgumentError, match="format='grayscale'"):
        run(tf.image.encode_jpeg(FLAT, format="grayscale"))


def test_decode_and_crop_jpeg():
    jpeg = tf.image.encode_jpeg(FLAT)
    crop = tf.image.decode_and_crop_jpeg(jpeg, [1, 2, 3, 4], channels=3)
    assert crop.shape.as_list() == [3, 4, 3]
    np.testing.assert_array_equal(run(crop), FLAT[1:4, 2:6])
    with pytest.raises(tf.errors.InvalidArgumentError, match="crop window"):
        run(tf.io.decode_and_crop_jpeg(jpeg, [5, 5, 9, 9]))


def test_io_reexports():
    assert run(tf.io.decode_png(tf.io.encode_png(ARR))).tolist() == ARR.tolist()
    assert run(tf.io.decode_image(tf.io.encode_png(ARR))).shape == (4, 6, 3)


def test_adjust_and_random_jpeg_quality():
    flat = np.full((8, 8, 3), 0.5, np.float32)
    out = tf.image.adjust_jpeg_quality(flat, 50)
    assert out.dtype == tf.float32 and out.shape.as_list() == [None, None, 3]
    assert np.abs(run(out) - 0.5).max() < 0.02
    u8 = tf.image.adjust_jpeg_quality(np.full((8, 8, 3), 100, np.uint8), tf.constant(50))
    assert run(u8).dtype == np.uint8
    noisy = np.random.RandomState(0).uniform(0, 1, (16, 16, 3)).astype(np.float32)
    low, high = run([tf.image.adjust_jpeg_quality(noisy, 5),
                     tf.image.adjust_jpeg_quality(noisy, 95)])
    assert np.abs(low - noisy).mean() > np.abs(high - noisy).mean()
    assert run(tf.image.random_jpeg_quality(flat, 40, 60, seed=1)).shape == (8, 8, 3)
    with pytest.raises(ValueError, match="must be less than `max_jpeg_quality`"):
        tf.image.random_jpeg_quality(flat, 60, 40)
