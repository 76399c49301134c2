"""Issue 12 on a real GPU: the several-thread batched products of
``tests/backends/test_opencl_threads.py`` under four lockings of the device's queue, each
in a child process (a crash in the driver kills only that child). One JSON line per run:

* ``locked``: as flowgraph runs (uploads, launches, pool allocations under ``rt.lock``);
* ``before``: as before issue 12's fix: launches under one lock, uploads and pool
  allocations under none (the allocator's own lock only counts);
* ``reads_locked``: copies to the host under ``rt.lock`` too;
* ``before_events_kept``: ``before``, keeping every launch's event until the process
  ends (flowgraph drops them at once; the H100 also crashed single-threaded in
  ``test_opencl_uploads``' child, after dropping the event of a command the queue had
  not reached);
* ``none``: nothing locked, launches included: the control (kernel arguments then
  interleave, and even PoCL aborts in a driver thread now and then).

Reading it: ``before`` crashing where ``locked`` does not confirms issue 12's fix;
``locked`` crashing where ``reads_locked`` does not asks for the reads under the lock;
``before_events_kept`` alone surviving points at event lifetimes instead of threads.

``returncode`` -11 is a segmentation fault, -6 an abort. ``--gpu-path`` makes a CPU-type
device upload and multiply as a GPU does (the tests' ``gpu_path``). Run from the
repository root, on the machine with the GPU::

    python benchmarks/opencl_threads_check.py [--gpu-path] [repeats]
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARIANTS = ("locked", "before", "reads_locked", "before_events_kept", "none")


def child(variant: str, gpu_path: bool) -> int:
    """Run the products once under `variant`; print how many differed from NumPy."""
    sys.path.insert(0, ROOT)
    import numpy as np

    from flowgraph.backends.opencl import kernels_nn
    from flowgraph.backends.opencl._runtime import discover
    from tests.backends.test_opencl_threads import _products_from_threads

    rt = discover()[0]
    if gpu_path:
        rt.shares_host_memory = False
        kernels_nn._cpu_shaped = lambda rt, dtype: False
    if variant in ("before", "before_events_kept", "none"):  # uploads, allocations unlocked
        rt.pool._lock = threading.Lock()

        def to_device(value, wrap=False):
            host = np.require(value, requirements="C")
            if rt.shares_host_memory or not host.nbytes:
                return type(rt).to_device(rt, value, wrap)
            out = rt.empty(host.shape, host.dtype)
            rt.hold_upload(rt.cl.enqueue_copy(rt.queue, out.base_data, host,
                                              is_blocking=False))
            return out

        rt.to_device = to_device
    if variant == "none":  # launches too
        rt.lock = contextlib.nullcontext()
    if variant == "before_events_kept":
        import pyopencl as cl

        enqueue, kept = cl.enqueue_nd_range_kernel, []

        def keeping(*args, **kwargs):
            event = enqueue(*args, **kwargs)
            kept.append(event)
            return event

        cl.enqueue_nd_range_kernel = keeping
    elif variant == "reads_locked":
        read = rt.read

        def locked_read(array):
            with rt.lock:
                return read(array)

        rt.read = locked_read
    sys.setswitchinterval(1e-6)
    print(json.dumps({"wrong": len(_products_from_threads(rt)), "device": rt.name}))
    return 0


def main(argv: list[str]) -> int:
    gpu_path = "--gpu-path" in argv
    argv = [a for a in argv if a != "--gpu-path"]
    if argv and argv[0] == "--child":
        return child(argv[1], gpu_path)
    repeats = int(argv[0]) if argv else 3
    for variant in VARIANTS:
        for _ in range(repeats):
            run = subprocess.run([sys.executable, "-X", "faulthandler", __file__,
                                  "--child", variant,
                                  *(["--gpu-path"] if gpu_path else [])],
                                 capture_output=True, text=True, timeout=300)
            last = (run.stdout.strip().splitlines() or [""])[-1]
            found = json.loads(last) if last.startswith("{") else {
                "stderr": run.stderr.strip().splitlines()[:3],
                "python_thread_crashed": "Current thread" in run.stderr}
            print(json.dumps({"variant": variant, "returncode": run.returncode, **found}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
