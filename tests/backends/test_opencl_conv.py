"""The OpenCL convolution and pooling kernels (flowgraph/backends/opencl/kernels_conv.py)
beyond the per-op parity cases: a small CNN's gradients on /gpu:0 against /cpu:0, the
chunked im2col path, shape inputs read without waiting for the device, and the errors
for what the device does not compute."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import kernels_conv as cpu_conv
from tests.backends.opencl_support import opencl_devices

opencl_devices()

from flowgraph.backends.opencl import kernels_conv  # noqa: E402  (needs a device)

_rng = np.random.default_rng(7)
GPU_OPS = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "AvgPool",
           "MaxPoolGrad", "AvgPoolGrad"}


def _host(v):
    return np.asarray(v.get() if hasattr(v, "get") else v)


def _cnn_grads(device, data_format, values):
    """conv2d -> relu -> max_pool -> conv2d -> avg_pool -> dense -> softmax cross-entropy
    on 12x10 single-channel images; returns (loss and gradients, op types run on GPU:0)."""
    x_np, y_np, w1, w2, w3 = values
    nchw = data_format == "NCHW"
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 1, 12, 10] if nchw else [None, 12, 10, 1])
        labels = tf.placeholder(tf.float32, [None, 5])
        params = [tf.Variable(w, name=f"w{i}") for i, w in enumerate((w1, w2, w3))]

        def four(h, w):
            return [1, 1, h, w] if nchw else [1, h, w, 1]

        with tf.device(device):
            h = tf.nn.relu(tf.nn.conv2d(x, params[0], four(1, 1), "SAME",
                                        data_format=data_format))
            h = tf.nn.max_pool(h, four(2, 2), four(2, 2), "SAME", data_format=data_format)
            h = tf.nn.conv2d(h, params[1], four(1, 1), "VALID", data_format=data_format)
            h = tf.nn.avg_pool(h, four(2, 2), four(1, 1), "VALID", data_format=data_format)
            logits = tf.matmul(tf.reshape(h, [-1, 36]), params[2])
            loss = tf.reduce_mean(
                tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            grads = tf.gradients(loss, params)
        md = tf.RunMetadata()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run([loss, *grads], {x: x_np, labels: y_np}, run_metadata=md,
                           options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    ran = {graph.get_operation_by_name(n.node_name).type
           for d in md.step_stats.dev_stats if "GPU:0" in d.device
           for n in d.node_stats if not n.node_name.startswith("_")}
    return [_host(v) for v in out], ran


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_cnn_gradients_on_gpu_match_cpu(data_format):
    shape = (6, 1, 12, 10) if data_format == "NCHW" else (6, 12, 10, 1)
    values = (_rng.standard_normal(shape).astype(np.float32),
              np.eye(5, dtype=np.float32)[_rng.integers(0, 5, 6)],
              (_rng.standard_normal((3, 3, 1, 4)) * 0.5).astype(np.float32),
              (_rng.standard_normal((3, 3, 4, 6)) * 0.3).astype(np.float32),
              (_rng.standard_normal((36, 5)) * 0.3).astype(np.float32))
    gpu, ran = _cnn_grads("/gpu:0", data_format, values)
    cpu, _ = _cnn_grads("/cpu:0", data_format, values)
    assert GPU_OPS <= ran, f"ran on the GPU device: {sorted(ran)}"
    for g, c in zip(gpu, cpu, strict=True):
        assert g.shape == c.shape
        assert np.abs(c).max() > 1e-3  # a gradient that vanished would prove nothing
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-4 * np.abs(c).max())


def test_cnn_gradient_on_gpu_matches_finite_differences():
    """float64 on /gpu:0: the gradient along a random direction against central
    differences of the loss (conv with stride 2 and dilation, both pools)."""
    x = _rng.standard_normal((3, 9, 8, 2))
    shapes = [(3, 3, 2, 3), (2, 2, 3, 4)]
    with tf.Graph().as_default():
        params = [tf.placeholder(tf.float64, s) for s in shapes]
        with tf.device("/gpu:0"):
            h = tf.nn.conv2d(tf.constant(x), params[0], [1, 2, 1, 1], "SAME")
            h = tf.nn.max_pool(tf.tanh(h), [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
            h = tf.nn.conv2d(h, params[1], [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1])
            loss = tf.reduce_sum(tf.sin(tf.nn.avg_pool(h, [1, 2, 3, 1], [1, 2, 1, 1], "SAME")))
            grads = tf.gradients(loss, params)
        values = [_rng.standard_normal(s) for s in shapes]
        direction = [_rng.standard_normal(s) for s in shapes]
        eps = 1e-6
        md = tf.RunMetadata()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            g = sess.run(grads, dict(zip(params, values, strict=True)), run_metadata=md,
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
            up, down = (sess.run(loss, {p: v + sign * eps * d
                                        for p, v, d in zip(params, values, direction,
                                                           strict=True)})
                        for sign in (1, -1))
    on_gpu = {n.node_name.split("/")[-1] for d in md.step_stats.dev_stats
              if "GPU:0" in d.device for n in d.node_stats}
    assert {"Conv2DBackpropFilter", "MaxPoolGrad", "AvgPoolGrad"} <= on_gpu, on_gpu
    slope = sum(float(np.sum(_host(gi) * d)) for gi, d in zip(g, direction, strict=True))
    np.testing.assert_allclose((up - down) / (2 * eps), slope, rtol=1e-6)


def _check_all_kernels(x, f, strides, padding, data_format, dilations=(1, 1)):
    """The 7 OpenCL kernels against the CPU kernels on `x`, `f` (pooling with the filter's
    window size; `x` rounded to halves so that pooling windows hold ties)."""
    x = np.round(x * 2) / 2
    nchw = data_format == "NCHW"

    def four(h, w):
        return [1, 1, h, w] if nchw else [1, h, w, 1]

    conv = {"strides": four(*strides), "padding": padding, "data_format": data_format,
            "dilations": four(*dilations)}
    pool = {"ksize": four(*f.shape[:2]), "strides": four(*strides), "padding": padding,
            "data_format": data_format}
    y = cpu_conv.conv2d(x, f, **conv)
    dy = _rng.standard_normal(y.shape).astype(x.dtype)
    yp = cpu_conv.max_pool(x, **pool)
    dyp = _rng.standard_normal(yp.shape).astype(x.dtype)
    xs, fs = np.array(x.shape, np.int32), np.array(f.shape, np.int32)
    pairs = [
        (kernels_conv.conv2d(x, f, **conv), y),
        (kernels_conv.conv2d_backprop_input(xs, f, dy, **conv),
         cpu_conv.conv2d_backprop_input(xs, f, dy, **conv)),
        (kernels_conv.conv2d_backprop_filter(x, fs, dy, **conv),
         cpu_conv.conv2d_backprop_filter(x, fs, dy, **conv)),
        (kernels_conv.max_pool(x, **pool), yp),
        (kernels_conv.avg_pool(x, **pool), cpu_conv.avg_pool(x, **pool)),
        (kernels_conv.max_pool_grad(x, yp, dyp, **pool),
         cpu_conv.max_pool_grad(x, yp, dyp, **pool)),
        (kernels_conv.avg_pool_grad(xs, dyp, **pool), cpu_conv.avg_pool_grad(xs, dyp, **pool)),
    ]
    for k, (got, want) in enumerate(pairs):
        np.testing.assert_allclose(_host(got), want, rtol=1e-4,
                                   atol=1e-4 * max(np.abs(want).max(initial=0), 1),
                                   err_msg=f"kernel {k} of {x.shape} {conv}")


@pytest.mark.parametrize("cpu_shaped", [True, False])
def test_both_forms_match_the_cpu_kernels(monkeypatch, cpu_shaped):
    """The GPU form (one element per work-item, im2col by element) and the CPU-type form
    (runs of RUN elements, im2col by row), each forced on whatever device there is."""
    monkeypatch.setattr(kernels_conv, "_cpu_shaped", lambda rt: cpu_shaped)
    for shape, fshape, strides, padding, fmt, dil in [
            ((2, 9, 7, 3), (3, 2, 3, 4), (2, 1), "SAME", "NHWC", (1, 1)),
            ((1, 3, 8, 9), (3, 3, 3, 2), (1, 2), "VALID", "NCHW", (1, 1)),
            ((2, 10, 9, 2), (3, 2, 2, 3), (1, 1), "SAME", "NHWC", (2, 3)),
            ((3, 5, 6, 1), (2, 2, 1, 5), (2, 2), "SAME", "NHWC", (1, 1))]:
        _check_all_kernels(_rng.standard_normal(shape).astype(np.float32),
                           _rng.standard_normal(fshape).astype(np.float32),
                           strides, padding, fmt, dil)


def test_im2col_in_chunks_matches_cpu(monkeypatch):
    """A batch larger than IM2COL_BYTES runs image chunks: the Conv2D copies, the filter
    gradient's sums and col2im's batch offsets."""
    monkeypatch.setattr(kernels_conv, "IM2COL_BYTES", 2 * (7 * 8) * (3 * 3 * 2) * 4)  # 2 images
    _check_all_kernels(_rng.standard_normal((5, 2, 13, 8)).astype(np.float32),
                       _rng.standard_normal((3, 3, 2, 4)).astype(np.float32),
                       (2, 1), "SAME", "NCHW")


class _Unreadable:
    """A device value whose read-back fails the test."""

    def get(self):
        raise AssertionError("the shape input was read back from the device")


def test_shape_inputs_come_from_static_shapes_without_a_read_back():
    with tf.Graph().as_default():
        h = tf.placeholder(tf.float32, [None, 9, 7, 3])
        w = tf.placeholder(tf.float32, [3, 2, 3, 4])
        y = tf.nn.conv2d(h, w, [1, 2, 2, 1], "SAME")
        pooled = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(pooled), [h])
        ops = {op.type: op for op in tf.get_default_graph().get_operations()}
    attrs = {"strides": [1, 2, 2, 1], "padding": "SAME"}
    f = _rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    dy = _rng.standard_normal((2, 5, 4, 4)).astype(np.float32)
    dx = kernels_conv.conv2d_backprop_input(_Unreadable(), f, dy, op=ops["Conv2DBackpropInput"],
                                            **attrs)
    assert dx.shape == (2, 9, 7, 3)
    dp = _rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    dx = kernels_conv.avg_pool_grad(_Unreadable(), dp, ksize=[1, 2, 2, 1],
                                    strides=[1, 2, 2, 1], padding="VALID",
                                    op=ops["AvgPoolGrad"])
    assert dx.shape == (2, 9, 7, 3)


def test_what_the_device_does_not_compute_raises_naming_op_and_attribute():
    x = np.ones((1, 4, 4, 2), np.float32)
    with pytest.raises(NotImplementedError, match=r"MaxPool.*data_format.*NCHW_VECT_C"):
        kernels_conv.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID",
                              data_format="NCHW_VECT_C")
    with pytest.raises(TypeError, match=r"Conv2D.*float16"):
        kernels_conv.conv2d(x.astype(np.float16), np.ones((1, 1, 2, 1), np.float16),
                            strides=[1, 1, 1, 1], padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AvgPool.*does not fit"):
        kernels_conv.avg_pool(x, ksize=[1, 5, 2, 1], strides=[1, 1, 1, 1], padding="VALID")
