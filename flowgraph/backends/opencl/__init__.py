"""The OpenCL backend (PyOpenCL): every usable OpenCL device is a flowgraph ``GPU`` device.

Real GPUs come first, then CPU-type OpenCL devices (PoCL), so ``tf.device('/gpu:0')``
runs on a GPU when there is one and the backend is testable everywhere;
``ConfigProto(device_count={'GPU': 0})`` hides them. Values on a device are
`pyopencl.array.Array` objects allocated from the device's caching pool, within the
device's memory limit (`flowgraph.backends.opencl.memory`); kernels enqueue
work on the device's in-order queue and return at once, and the host waits only where a
value is copied back (`to_host`: a `_Send` to a CPU node, or a fetch).

Kernels live in ``kernels_<family>.py`` beside this file and register with
`opencl_kernel`. Ops without an OpenCL kernel run on the CPU, and the planner inserts
the transfers. Install with ``pip install 'flowgraph[opencl]'`` and an OpenCL driver
(PoCL: ``apt-get install pocl-opencl-icd``).

Example
-------
>>> from flowgraph.backends.opencl import backend
>>> backend.device_type
'GPU'
"""

from __future__ import annotations

import importlib
import os
import pkgutil

import numpy as np

from flowgraph.backends.base import Backend, Device


class OpenCLBackend(Backend):
    device_type = "GPU"
    # CPU-type OpenCL devices (PoCL) share the host's cores: placement puts ops there only
    # when asked (`tf.device`), unless this is set (benchmarks of placement do).
    auto_place_cpu_devices = False

    def list_devices(self, count: int | None = None) -> list[Device]:
        from flowgraph.backends.opencl._runtime import discover

        found = discover()
        n = len(found) if count is None else min(int(count), len(found))
        return [Device(self, "GPU", i, memory_limit=r.pool.limit,
                       description=f"OpenCL: {r.name} ({r.platform})",
                       auto_place=r.is_gpu or self.auto_place_cpu_devices)
                for i, r in enumerate(found[:n])]

    def runtime(self, device: Device):
        """The `DeviceRuntime` (context, queue, pool, programs) of `device`."""
        from flowgraph.backends.opencl._runtime import discover

        return discover()[device.index]

    def set_memory_fraction(self, devices: list[Device], fraction: float) -> None:
        """Limit each OpenCL device of `devices` to `fraction` of its global memory, for
        every session of the process, until a later call (the latest session whose
        config sets a fraction wins; see docs/devices.md)."""
        for d in devices:
            if d.backend is self:
                allocator = self.runtime(d).pool
                allocator.set_fraction(fraction)
                d.memory_limit = allocator.limit

    def memory_stats(self, device: Device) -> dict | None:
        """The counters of `device`'s allocator (`DeviceAllocator.stats`)."""
        return self.runtime(device).pool.stats()

    def load_kernels(self) -> None:
        here = os.path.dirname(__file__)
        for info in pkgutil.iter_modules([here]):
            if info.name.startswith("kernels_"):
                importlib.import_module(f"{__name__}.{info.name}")

    def synchronize(self, device: Device) -> None:
        """Wait until everything enqueued on `device` has run, then raise the first error
        a kernel found on the device (`DeviceRuntime.defer_check`)."""
        rt = self.runtime(device)
        rt.queue.finish()
        rt.release_uploads()
        rt.run_deferred_checks()

    def to_host(self, value, device: Device):
        if hasattr(value, "get") and hasattr(value, "queue"):
            return self.runtime(device).read(value)
        return value

    def to_host_async(self, value, device: Device, done, failed) -> None:
        if not (hasattr(value, "get") and hasattr(value, "queue")):
            done(value)
            return
        self.runtime(device).read_async(value, done, failed)

    def from_host(self, value, device: Device, wrap: bool = False):
        if isinstance(value, np.ndarray | np.generic) and value.dtype != object:
            return self.runtime(device).to_device(np.asarray(value), wrap=wrap)
        return value

    def wrap_host(self, value, device: Device):
        return self.from_host(value, device, wrap=True)


backend = OpenCLBackend()


def opencl_kernel(op_type: str, dtypes=None, needs_step: bool = False, fresh: bool = False,
                  host_inputs=()):
    """Decorator registering an OpenCL kernel (see `flowgraph.backends.base`).

    The kernel receives device arrays (`pyopencl.array.Array`) and returns device arrays;
    ``x.queue`` and ``x.context`` say where to enqueue. Inputs listed in `host_inputs`
    (shapes, axes) arrive as host NumPy arrays instead, never copied to the device.
    """
    return backend.kernel(op_type, dtypes=dtypes, needs_step=needs_step, fresh=fresh,
                          host_inputs=host_inputs)
