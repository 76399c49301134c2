"""How plans on an OpenCL device treat plan constants: uploaded once per plan, never
written in place."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()


def test_a_plan_constant_is_uploaded_by_the_first_step_only(monkeypatch):
    from flowgraph.backends.opencl import backend

    uploads = []
    original = backend.wrap_host
    monkeypatch.setattr(backend, "wrap_host",
                        lambda value, device: (uploads.append(np.shape(value)),
                                               original(value, device))[1])
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [3, 5])
    with tf.device("/gpu:0"):
        w = tf.constant(w0)
        # Relu may write its result into MatMul's; the constant itself is never a target
        y = tf.nn.relu(tf.matmul(x, w)) + tf.constant(0.5)
        z = tf.reduce_sum(w * 2.0)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        for step in range(3):
            xs = rng.standard_normal((3, 5)).astype(np.float32)
            got_y, got_z = sess.run([y, z], {x: xs})
            np.testing.assert_allclose(got_y, np.maximum(xs @ w0, 0) + 0.5, rtol=1e-5,
                                       atol=1e-5)
            np.testing.assert_allclose(got_z, (w0 * 2).sum(), rtol=1e-5)
            if step == 0:
                first = len(uploads)
    assert (5, 4) in uploads[:first]
    assert uploads[first:] == [(3, 5)] * 2  # later steps upload only the feed
