"""tf.image against TensorFlow 1.x (values recorded with the tf-oracle) and against a
loop-by-loop NumPy reference of TF1's legacy resize coordinates."""

from __future__ import annotations

import io

import numpy as np
import pytest

import flowgraph as tf

IMG = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2) ** 1.3

# First 24 values of each result, from TensorFlow 2.15 (tf.compat.v1) on IMG.
TF_VALUES = {
    "bil": [0.0, 1.0, 3.6625, 5.4819, 8.868, 11.0674, 8.9571, 10.8392, 14.5039, 16.839,
            20.9653, 23.5595, 19.2945, 21.8734, 26.3725, 29.1461, 33.914, 36.8555, 32.3924,
            35.2978, 40.2956, 43.3531, 48.5656, 51.7593],
    "bil_ac": [0.0, 1.0, 1.2311, 2.5856, 2.4623, 4.1712, 4.2626, 6.1372, 6.0629, 8.1033,
               8.1667, 10.3264, 10.2706, 12.5495, 7.4643, 9.1993, 9.3359, 11.2886, 11.2075,
               13.3778, 13.4418, 15.7304, 15.676, 18.0829],
    "near_ac": [0.0, 1.0, 6.0629, 8.1033, 10.2706, 12.5495, 36.7583, 39.7726, 49.1291,
                52.3462, 55.6096, 58.9177, 62.2694, 65.6632, 76.0861, 79.6374, 83.2257,
                86.8501, 120.9701, 124.9163, 136.9268, 140.9861, 145.0725, 149.1857],
    "std": [-1.4135, -1.3586, -1.2785, -1.1848, -1.0811, -0.9693, -0.8505, -0.7256, -0.5952,
            -0.4598, -0.3198, -0.1755, -0.0272, 0.1248, 0.2803, 0.4393, 0.6014, 0.7666,
            0.9348, 1.1058, 1.2795, 1.4559, 1.6347, 1.8161],
    "resize_u8": [0.0, 1.0, 6.0, 8.0, 25.0, 28.0, 37.0, 40.0, 62.0, 65.0, 76.0, 79.0, 105.0,
                  109.0, 120.5, 124.5],
}


def reference_resize(img, out_h, out_w, align_corners, nearest):
    """TF1's legacy resize, one output pixel at a time."""
    n, h, w, c = img.shape
    sy = (h - 1) / (out_h - 1) if align_corners and out_h > 1 else h / out_h
    sx = (w - 1) / (out_w - 1) if align_corners and out_w > 1 else w / out_w
    out = np.zeros((n, out_h, out_w, c))
    for y in range(out_h):
        for x in range(out_w):
            fy, fx = y * sy, x * sx
            if nearest:
                # TF rounds halves away from zero (roundf), Python's round to even
                iy = min(int(np.floor(fy + 0.5) if align_corners else np.floor(fy)), h - 1)
                ix = min(int(np.floor(fx + 0.5) if align_corners else np.floor(fx)), w - 1)
                out[:, y, x] = img[:, iy, ix]
                continue
            y0, x0 = int(np.floor(fy)), int(np.floor(fx))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = fy - y0, fx - x0
            top = img[:, y0, x0] * (1 - dx) + img[:, y0, x1] * dx
            bottom = img[:, y1, x0] * (1 - dx) + img[:, y1, x1] * dx
            out[:, y, x] = top * (1 - dy) + bottom * dy
    return out


def _run(x):
    with tf.Session() as sess:
        return sess.run(x)


def test_values_match_tensorflow():
    x = tf.constant(IMG)
    outs = {
        "bil": tf.image.resize_images(x, [5, 3]),
        "bil_ac": tf.image.resize_images(x, [5, 7], align_corners=True),
        "near_ac": tf.image.resize_images(x, [2, 3], method=1, align_corners=True),
        "std": tf.image.per_image_standardization(x[0]),
        "resize_u8": tf.image.resize_images(tf.constant(IMG.astype(np.uint8)), [2, 2]),
    }
    assert outs["bil"].shape.as_list() == [2, 5, 3, 2]
    assert outs["resize_u8"].dtype == tf.float32
    got = _run(outs)
    for key, want in TF_VALUES.items():
        np.testing.assert_allclose(got[key].reshape(-1)[:len(want)], want, atol=2e-4,
                                   err_msg=key)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("nearest", [False, True])
@pytest.mark.parametrize("size", [(5, 7), (2, 3), (1, 1), (3, 4)])
def test_resize_matches_reference(align_corners, nearest, size):
    img = np.random.RandomState(0).uniform(-3, 3, (2, 3, 4, 2))
    fn = tf.image.resize_nearest_neighbor if nearest else tf.image.resize_bilinear
    got = _run(fn(img, list(size), align_corners=align_corners))
    # as TF's, the bilinear resize computes and returns float32 (float64 images too)
    np.testing.assert_allclose(got, reference_resize(img, *size, align_corners, nearest),
                               atol=1e-12 if nearest else 1e-5)


def test_resize_images_shapes_dtypes_and_same_size():
    u8 = tf.zeros([5, 4, 3], tf.uint8)
    assert tf.image.resize(u8, [10, 8]).shape.as_list() == [10, 8, 3]
    near = tf.image.resize_images(u8, [10, 8], tf.image.ResizeMethod.NEAREST_NEIGHBOR)
    assert near.dtype == tf.uint8
    assert tf.image.resize_images(u8, [5, 4]) is not None
    assert tf.image.resize_images(u8, [5, 4]).dtype == tf.uint8  # unchanged, as in TF
    kept = tf.image.resize_images(tf.zeros([4, 8, 1]), [4, 4], preserve_aspect_ratio=True)
    assert kept.shape.as_list() == [2, 4, 1]
    bicubic = tf.image.resize_images(u8, [2, 2], method=tf.image.ResizeMethod.BICUBIC)
    assert bicubic.dtype == tf.float32  # values: tests/compat/test_tf1_programs_wild2.py
    with pytest.raises(ValueError, match="Resize method is not implemented"):
        tf.image.resize_images(u8, [2, 2], method=7)
    with pytest.raises(ValueError, match="3-D"):
        tf.image.resize_images(tf.zeros([4, 4]), [2, 2])


def test_standardization_flat_image_and_integers():
    flat = _run(tf.image.per_image_standardization(tf.fill([2, 2, 1], 5.0)))
    np.testing.assert_array_equal(flat, np.zeros((2, 2, 1)))
    ints = tf.image.per_image_standardization(tf.constant([[[0], [2]]], tf.uint8))
    assert ints.dtype == tf.float32
    np.testing.assert_allclose(_run(ints).ravel(), [-1.0, 1.0])


def test_random_ops():
    img = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4, 1)
    tf.set_random_seed(5)
    flips = tf.image.random_flip_left_right(img[0])
    batch = tf.image.random_flip_left_right(img)
    crop = tf.image.random_crop(img[0], [2, 2, 1])
    bright = tf.image.random_brightness(img[0], 0.5)
    assert crop.shape.as_list() == [2, 2, 1]
    seen_flip, seen_keep = False, False
    with tf.Session() as sess:
        for _ in range(20):
            f, b, c, br = sess.run([flips, batch, crop, bright])
            if np.array_equal(f, img[0][:, ::-1]):
                seen_flip = True
            else:
                np.testing.assert_array_equal(f, img[0])
                seen_keep = True
            for k in range(2):
                assert (np.array_equal(b[k], img[k]) or np.array_equal(b[k], img[k][:, ::-1]))
            r0, c0 = np.argwhere(img[0, :, :, 0] == c[0, 0, 0])[0]
            np.testing.assert_array_equal(c, img[0, r0:r0 + 2, c0:c0 + 2])
            delta = br - img[0]
            assert np.ptp(delta) < 1e-5 and abs(delta.flat[0]) <= 0.5
    assert seen_flip and seen_keep
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Need value\.shape >= size"):
        _run(tf.image.random_crop(img[0], [5, 2, 1]))  # at run time, as in TF


def test_png_and_jpeg_decoding():
    from PIL import Image

    pixels = np.random.RandomState(1).randint(0, 255, (3, 5, 3)).astype(np.uint8)
    png = tf.image.encode_png(pixels)
    decoded = tf.image.decode_png(png)
    np.testing.assert_array_equal(_run(decoded), pixels)
    gray = _run(tf.image.decode_png(png, channels=1))
    assert gray.shape == (3, 5, 1)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=95)
    jpeg = _run(tf.image.decode_jpeg(buf.getvalue(), channels=3))
    assert jpeg.shape == (3, 5, 3) and jpeg.dtype == np.uint8
    np.testing.assert_array_equal(jpeg, np.asarray(Image.open(io.BytesIO(buf.getvalue()))))
    # TF 2.15: decode_image is one DecodeImage op whatever the format
    assert tf.image.decode_image(buf.getvalue()).op.type == "DecodeImage"
    np.testing.assert_array_equal(_run(tf.image.decode_image(buf.getvalue())), jpeg)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
            sess.run(tf.image.decode_png(b"not an image"))
        # TF 2.15's DecodePng is the DecodeImage kernel: JPEG data decodes too
        np.testing.assert_array_equal(sess.run(tf.image.decode_png(buf.getvalue())), jpeg)


def test_missing_pillow_is_named(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pil(name, *args, **kw):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("no PIL")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    with tf.Session() as sess, pytest.raises(tf.errors.UnimplementedError, match="Pillow"):
        sess.run(tf.image.decode_png(b"\x89PNG"))
