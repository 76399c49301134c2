"""The C normal and truncated-normal samplers (`flowgraph.framework._philox`): float32
values bitwise equal to a NumPy reference of TF's Box-Muller on its Philox stream, and
float64 values equal to TF 2.15's (the oracle's numbers inline: these are the positions
where NumPy's vectorized log/sin/cos were an ulp off the C library TensorFlow uses)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import kernels_random_stateless as sl
from flowgraph.framework.philox import philox_blocks


def _uniform32(words):
    return ((words & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - 1.0


def _box_muller32(x0, x1):
    u1 = np.maximum(_uniform32(x0), np.float32(1e-7))
    v1 = (2.0 * np.pi * _uniform32(x1).astype(np.float64)).astype(np.float32)
    log_u1 = np.log(u1.astype(np.float64)).astype(np.float32)
    r = np.sqrt(np.float32(-2.0) * log_u1)
    sin = np.sin(v1.astype(np.float64)).astype(np.float32)
    cos = np.cos(v1.astype(np.float64)).astype(np.float32)
    return sin * r, cos * r


def _reference_normal32(seed, n):
    key, counter = sl.key_counter(seed)
    words = philox_blocks(key, counter, -(-n // 4)).reshape(-1, 2)
    f0, f1 = _box_muller32(words[:, 0], words[:, 1])
    return np.stack([f0, f1], axis=1).reshape(-1)[:n]


def _reference_truncated32(seed, n):
    key, counter = sl.key_counter(seed)
    out = []
    for g in range(-(-n // 4)):
        block = g * 256
        group = []
        while len(group) < 4:
            words = philox_blocks(key, counter, 1, np.array([block], np.uint64))[0]
            block += 1
            f = _box_muller32(words[[0, 2]], words[[1, 3]])
            for value in (f[0][0], f[1][0], f[0][1], f[1][1]):
                if abs(value) < 2.0 and len(group) < 4:
                    group.append(value)
        out.extend(group)
    return np.array(out[:n], np.float32)


@pytest.mark.parametrize("seed", [(1, 2), (7, 0), (123456, 98765)])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 257])
def test_float32_samplers_equal_the_numpy_reference(seed, n):
    got = sl.normal(seed, (n,), np.float32)
    assert np.array_equal(got.view(np.uint32), _reference_normal32(seed, n).view(np.uint32))
    got = sl.truncated_normal(seed, (n,), np.float32)
    want = _reference_truncated32(seed, n)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.all(np.abs(got) < 2.0)


def test_float64_samples_are_tensorflows():
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        normal = tf.random_normal([40000], dtype=tf.float64, seed=3)
        truncated = tf.truncated_normal([40000], dtype=tf.float64, seed=4)
        with tf.Session() as sess:
            got_normal, got_truncated = sess.run([normal, truncated])
    # TF 2.15, the same program
    assert got_normal[[1054, 1882, 1883]].tolist() == [
        0.2250086653128862, -0.7272659233191247, -0.16651130749554124]
    assert got_truncated[[235, 842, 843]].tolist() == [
        -0.06748507532172507, -0.061005134557150106, -0.02644942588771422]
