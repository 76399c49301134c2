"""Host-to-device copies (`DeviceRuntime.to_device`, `upload`) return before the queue
reaches them: pyopencl's copy event waits for the copy when dropped (holding the GIL), so
the runtime keeps it until the step ends. A queue stalled on a user event shows the
difference without timing anything; that check runs in a child process, since the old
behaviour would hang the process that tries it.

On an H100 (NVIDIA's OpenCL 3.0 driver) the child printed ``returned 2`` (the uploads
had returned, from pageable host memory, behind the stalled queue: the property holds
there too) and then died of a segmentation fault before ``released``, with no traceback.
The child now runs with Python's fault handler, keeps every event it enqueued (the
marker waiting on the user event included) until the queue has finished, and names each
stage it reaches, so that a crash on a device says where it happened.
"""

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

def stage(name):
    print("stage", name, flush=True)

backend.ensure_loaded()
rt = discover()[0]
rt.shares_host_memory = False  # copy with enqueued copies, as devices with memory do
values = np.arange(1000, dtype=np.float32) * 0.5
labels = np.array([3, 1, 4, 1, 5], np.int64)
gate = rt.cl.UserEvent(rt.context)
marker = rt.cl.enqueue_marker(rt.queue, wait_for=[gate])  # every later command waits
dev = rt.to_device(values.copy())  # only the copy's event keeps the host array alive
buf = rt.upload(labels)
gc.collect()
print("returned", len(rt._uploads), flush=True)
gate.set_status(rt.cl.command_execution_status.COMPLETE)
stage("gate open")
rt.queue.finish()
stage("queue finished")
back = np.empty_like(labels)
rt.cl.enqueue_copy(rt.queue, back, buf, is_blocking=True)
got = dev.get()
stage("read back")
assert np.array_equal(got, values), got
assert np.array_equal(back, labels), back
del marker
backend.synchronize(backend.list_devices()[0])
print("released", len(rt._uploads), flush=True)
"""


def test_uploads_return_while_the_queue_is_stalled():
    try:
        done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _STALLED],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a host-to-device copy waited for the stalled queue: {e.stdout!r}")
    out = done.stdout
    assert "returned 2" in out, f"the uploads did not return: {out!r} {done.stderr}"
    stages = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("stage")]
    assert done.returncode == 0, (
        f"the child exited with {done.returncode} after the uploads had returned, past the "
        f"stages {stages}:\n{done.stderr}")
    assert "released 0" in out, out


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
