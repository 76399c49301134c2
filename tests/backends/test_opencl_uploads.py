"""Host-to-device copies (`DeviceRuntime.to_device`, `upload`) return before the queue
reaches them: pyopencl's copy event waits for the copy when dropped (holding the GIL), so
the runtime keeps it until the step ends. A queue stalled on a user event shows the
difference without timing anything; that check runs in a child process, since the old
behaviour would hang the process that tries it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf  # noqa: F401  (registers the backends)
from tests.backends.opencl_support import opencl_devices

opencl_devices()

_STALLED = """
import gc
import numpy as np
from flowgraph.backends.opencl import backend
from flowgraph.backends.opencl._runtime import discover

backend.ensure_loaded()
rt = discover()[0]
rt.shares_host_memory = False  # copy with enqueued copies, as devices with memory do
values = np.arange(1000, dtype=np.float32) * 0.5
labels = np.array([3, 1, 4, 1, 5], np.int64)
gate = rt.cl.UserEvent(rt.context)
rt.cl.enqueue_marker(rt.queue, wait_for=[gate])  # every later command waits for it
dev = rt.to_device(values.copy())  # only the copy's event keeps the host array alive
buf = rt.upload(labels)
gc.collect()
print("returned", len(rt._uploads), flush=True)
gate.set_status(rt.cl.command_execution_status.COMPLETE)
rt.queue.finish()
back = np.empty_like(labels)
rt.cl.enqueue_copy(rt.queue, back, buf, is_blocking=True)
assert np.array_equal(dev.get(), values), dev.get()
assert np.array_equal(back, labels), back
backend.synchronize(backend.list_devices()[0])
print("released", len(rt._uploads), flush=True)
"""


def test_uploads_return_while_the_queue_is_stalled():
    try:
        done = subprocess.run([sys.executable, "-c", _STALLED], capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a host-to-device copy waited for the stalled queue: {e.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert "returned 2" in done.stdout and "released 0" in done.stdout, done.stdout


@pytest.fixture
def copying_rt(monkeypatch):
    """The first OpenCL device, made to copy host arrays with enqueued copies (the path
    of devices with memory of their own) even where it shares host memory."""
    from flowgraph.backends.opencl import backend
    from flowgraph.backends.opencl._runtime import discover

    backend.ensure_loaded()
    rt = discover()[0]
    monkeypatch.setattr(rt, "shares_host_memory", False)
    rt.release_uploads()
    return rt


def test_copy_events_are_kept_until_the_step_ends(copying_rt):
    from flowgraph.backends.opencl import backend

    rt = copying_rt
    dev = rt.to_device(np.arange(6, dtype=np.float32))
    assert len(rt._uploads) == 1
    backend.synchronize(backend.list_devices()[0])
    assert rt._uploads == []
    np.testing.assert_array_equal(dev.get(), np.arange(6, dtype=np.float32))


def test_kept_events_are_bounded_without_step_ends(copying_rt, monkeypatch):
    from flowgraph.backends.opencl import _runtime

    rt = copying_rt
    monkeypatch.setattr(_runtime, "MAX_UPLOADS", 8)
    arrays = [rt.to_device(np.full(4, k, np.float32)) for k in range(20)]
    assert len(rt._uploads) <= 8
    for k, a in enumerate(arrays):
        np.testing.assert_array_equal(a.get(), np.full(4, k, np.float32))
    rt.release_uploads()
