"""The OpenCL backend's core: discovery, the probe, devices, transfers, placement.

Kernels and their parity with the CPU backend are tests/backends/test_opencl_parity.py.
Without an OpenCL device these tests skip, except in CI (CI=true), which installs PoCL
and must run them.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.opencl import _runtime, backend
from tests.backends.opencl_support import opencl_devices


def _devices():
    return opencl_devices()


_devices()




def test_import_flowgraph_does_not_import_pyopencl():
    code = "import sys, flowgraph; print('pyopencl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_opencl_devices_are_gpu_devices_after_the_cpu():
    names = [d.name for d in tf.Session().list_devices()]
    assert names[0].endswith("/device:CPU:0")
    assert names[1] == "/job:localhost/replica:0/task:0/device:GPU:0"
    gpu = _devices()[0]
    assert gpu.memory_limit > 0 and gpu.description.startswith("OpenCL: ")
    from flowgraph.python.client import device_lib

    local = {d.name: d for d in device_lib.list_local_devices()}
    assert local[gpu.name].memory_limit == gpu.memory_limit


def test_device_count_zero_hides_them():
    config = tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(config=config) as sess:
        assert [d.device_type for d in sess.list_devices()] == ["CPU"]


@pytest.mark.parametrize("value", [np.arange(12, dtype=np.float32).reshape(3, 4),
                                   np.float32(2.5), np.zeros((0, 3), np.float64),
                                   np.arange(5, dtype=np.int32)[::2]])
def test_transfers_round_trip(value):
    device = _devices()[0]
    on_device = backend.from_host(np.asarray(value), device)
    back = backend.to_host(on_device, device)
    assert back.dtype == np.asarray(value).dtype
    np.testing.assert_array_equal(back, value)


def test_an_op_without_an_opencl_kernel_needs_soft_placement():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/gpu:0"):
            y = tf.cumsum(x)
        feed = {x: [1.0, 2.0, 3.0]}
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="Cumsum"):
            sess.run(y, feed)
        soft = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=soft) as sess:
            np.testing.assert_allclose(sess.run(y, feed), [1.0, 3.0, 6.0])


def test_a_device_that_cannot_build_kernels_is_skipped_with_one_warning(monkeypatch):
    monkeypatch.setattr(_runtime, "_probe", lambda cl, device: "LogicError: build failed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = _runtime.discover.__wrapped__()
    assert found == ()
    texts = [str(w.message) for w in caught]
    assert texts and all("cannot build kernels and is skipped" in t for t in texts)
    assert "pocl-opencl-icd" in texts[0]


def test_the_probe_reports_a_failing_driver():
    class Broken:
        def Context(self, devices):
            raise RuntimeError("no compiler")

    assert _runtime._probe(Broken(), object()) == "RuntimeError: no compiler"


def test_programs_and_kernel_objects_are_built_once():
    rt = _runtime.discover()[0]
    src = "__kernel void twice(__global float* a) { a[get_global_id(0)] *= 2.0f; }"
    assert rt.kernel(src, "twice") is rt.kernel(src, "twice")
    x = rt.to_device(np.arange(4, dtype=np.float32))
    rt.kernel(src, "twice")(rt.queue, (4,), None, x.data)
    np.testing.assert_array_equal(x.get(), [0.0, 2.0, 4.0, 6.0])
    assert _runtime.runtime_of(x) is rt


def test_feeds_move_to_the_device_and_fetches_come_back_as_numpy():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2])
        with tf.device("/gpu:0"):
            y = tf.identity(x)
        with tf.Session() as sess:
            opts = tf.RunOptions(output_partition_graphs=True)
            md = tf.RunMetadata()
            out = sess.run(y, {x: [[1.0, 2.0], [3.0, 4.0]]}, options=opts, run_metadata=md)
    assert type(out) is np.ndarray and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    gpu = next(p for p in md.partition_graphs if p["device"].endswith("GPU:0"))
    assert sorted(n["op"] for n in gpu["node"]) == ["Identity", "_ToDevice"]


def test_device_to_host_copies_complete_on_the_completion_thread():
    """`_Send` uses `read_async`: contiguous, strided and empty arrays arrive whole, and
    a failing copy reports through `failed`."""
    import threading

    rt = _runtime.discover()[0]
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    arrays = [rt.to_device(base), rt.to_device(base)[:, ::2], rt.empty((0, 3), np.float32)]
    wants = [base, base[:, ::2], np.empty((0, 3), np.float32)]
    got, threads, arrived = [], set(), threading.Event()

    def done(host):
        got.append(host)
        threads.add(threading.current_thread().name)
        if len(got) == len(arrays):
            arrived.set()

    for a in arrays:
        rt.read_async(a, done, lambda e: pytest.fail(f"copy failed: {e}"))
    assert arrived.wait(10)
    for g, w in zip(got, wants, strict=True):
        np.testing.assert_array_equal(g, w)
    assert threads and all(t.startswith("flowgraph-opencl-") for t in threads)
    failures = []
    rt.read_async(object(), lambda h: None, failures.append)  # not a device array
    assert failures and isinstance(failures[0], Exception)


def test_values_cross_from_the_device_to_cpu_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 4])
        with tf.device("/gpu:0"):
            y = tf.nn.relu(x) * 2.0
        z = tf.sin(y)  # no OpenCL kernel: on the CPU, after a _Send/_Recv pair
        with tf.Session() as sess:
            xs = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
            for _ in range(3):
                np.testing.assert_allclose(sess.run(z, {x: xs}), np.sin(np.maximum(xs, 0) * 2),
                                           rtol=1e-6)
