"""The sparse cross-entropy's prepared launch (`kernels_softmax`): a repeated step with
host-fed or device-made labels repeats one launch with new buffers, computes what NumPy
does, and still raises InvalidArgumentError naming the op for a label out of range."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()

_rng = np.random.default_rng(7)
_LOGITS = _rng.uniform(-2, 2, (6, 5)).astype(np.float32)


def _reference(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    grad = np.exp(logp)
    grad[rows, labels] -= 1
    return -logp[rows, labels], grad


def _kept_signatures():
    from flowgraph.backends.opencl._runtime import discover

    return [k for rt in discover() for k in rt.launches
            if isinstance(k, tuple) and k[0] == "SparseSoftmaxCrossEntropyWithLogits"]


def _graph(on_device_labels: bool):
    """Labels fed from the host, or made on the device by a Cast of fed floats."""
    with tf.device("/gpu:0"):
        if on_device_labels:
            fed = tf.placeholder(tf.float32, [6], name="fed")
            labels = tf.cast(fed, tf.int32)
        else:
            fed = labels = tf.placeholder(tf.int64, [6], name="fed")
        logits = tf.placeholder(tf.float32, [6, 5], name="logits")
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                              name="xent")
        (grad,) = tf.gradients(tf.reduce_sum(loss), [logits])
    return fed, logits, loss, grad


@pytest.mark.parametrize("on_device_labels", [False, True])
def test_repeated_steps_reuse_one_launch_and_match_numpy(on_device_labels):
    dtype = np.float32 if on_device_labels else np.int64
    with tf.Graph().as_default():
        fed, logits, loss, grad = _graph(on_device_labels)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            for step in range(4):
                labels = _rng.integers(0, 5, 6)
                got_loss, got_grad = sess.run([loss, grad], {fed: labels.astype(dtype),
                                                             logits: _LOGITS + step})
                want_loss, want_grad = _reference(_LOGITS + step, labels)
                np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-6)
            kept = [k for k in _kept_signatures() if k[1] == (6, 5)]
            assert kept, "no launch was kept for the sparse cross-entropy"
            assert any(k[7] is (not on_device_labels) for k in kept), kept


@pytest.mark.parametrize("on_device_labels", [False, True])
@pytest.mark.parametrize("bad", [5, -1, 9])
def test_bad_label_after_repeated_steps_raises_naming_the_op(on_device_labels, bad):
    dtype = np.float32 if on_device_labels else np.int64
    with tf.Graph().as_default():
        fed, logits, loss, _ = _graph(on_device_labels)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            good = np.array([0, 1, 2, 3, 4, 0], dtype)
            for _ in range(2):  # the second step takes the kept launch
                sess.run(loss, {fed: good, logits: _LOGITS})
            labels = good.copy()
            labels[3] = bad
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=rf"label value of {bad} which is outside the valid "
                               r"range of \[0, 5\)") as info:
                sess.run(loss, {fed: labels, logits: _LOGITS})
            assert "xent" in str(info.value)
            assert info.value.op is not None
            assert info.value.op.type == "SparseSoftmaxCrossEntropyWithLogits"
            # the session is still usable, and the kept launch still right
            got = sess.run(loss, {fed: good, logits: _LOGITS})
            np.testing.assert_allclose(got, _reference(_LOGITS, good.astype(int))[0],
                                       rtol=1e-5, atol=1e-6)


def test_non_contiguous_host_labels_on_the_kept_launch():
    from flowgraph.backends.opencl import backend
    from flowgraph.backends.opencl._runtime import discover

    backend.ensure_loaded()
    rt = discover()[0]
    fn = backend.find_kernel("SparseSoftmaxCrossEntropyWithLogits", tf.float32).fn
    x = rt.to_device(_LOGITS)
    for _ in range(2):
        wide = _rng.integers(0, 5, (6, 2))
        labels = wide[:, 1]  # a strided view
        loss, grad = fn(x, labels)
        want_loss, want_grad = _reference(_LOGITS, labels)
        np.testing.assert_allclose(loss.get(), want_loss, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad.get(), want_grad, rtol=1e-5, atol=1e-6)
