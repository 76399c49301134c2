"""OpenCL kernels launched from several executor threads at once.

Kernel objects are cached per device and hold their arguments between setting them and
the launch, so every launch goes through the device's lock (`kernels_elementwise.launch`,
``DeviceRuntime.lock``). These tests
run many batched products with different broadcast shapes back to back (buffers of the
pool reused between them) from several threads, with the interpreter switching threads
as often as it can, and compare each with NumPy. Before the per-matrix BatchMatMul form
wrote straight into its output, it copied each product into place with pyopencl's
``Array.__setitem__``, whose copy kernel ran outside the lock: one batch matrix in a few
hundred then held another product's values. (`test_opencl_parity` also fails any launch
outside the lock, deterministically.)

Each runs twice: on the device as it is, and on the path a GPU takes (`_gpu_path`):
uploads by non-blocking copies into pool buffers, and the tiled GPU kernels. A CPU-type
device (PoCL, CI's) otherwise copies host arrays while creating a buffer, with the GIL,
so that its uploads never ran beside another thread's launches; on an H100 they did, and
the first test crashed outside any Python thread (issue 12). Every upload, launch and
pool allocation now holds the device's lock, which
`test_uploads_launches_and_allocations_hold_the_device_lock` checks call by call; on a
GPU, ``benchmarks/opencl_threads_check.py`` runs the products with and without it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import flowgraph as tf
from tests.backends.opencl_support import opencl_devices

opencl_devices()

# (a, b) shapes before adj_x/adj_y; broadcasting batch dimensions of different ranks
SHAPES = [((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
          ((2, 5, 4), (2, 4, 7)), ((3, 1, 2, 9), (1, 4, 9, 3))]


def _operands(rng, sa, sb, adj_x, adj_y):
    a = rng.standard_normal((*sa[:-2], sa[-1], sa[-2]) if adj_x else sa).astype(np.float32)
    b = rng.standard_normal((*sb[:-2], sb[-1], sb[-2]) if adj_y else sb).astype(np.float32)
    want = np.matmul(np.swapaxes(a, -1, -2) if adj_x else a,
                     np.swapaxes(b, -1, -2) if adj_y else b)
    return a, b, want


@pytest.fixture(params=["as_is", "gpu_path"])
def _gpu_path(request, monkeypatch):
    """`gpu_path`: the device uploads and multiplies as a GPU does (see the docstring)."""
    if request.param == "gpu_path":
        from flowgraph.backends.opencl import kernels_nn
        from flowgraph.backends.opencl._runtime import discover

        for r in discover():
            monkeypatch.setattr(r, "shares_host_memory", False)
        monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: False)
    return request.param


@pytest.fixture
def _frequent_switches():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _products_from_threads(rt, threads: int = 4, steps: int = 120) -> list:
    """Batched products of `SHAPES` enqueued from `threads` threads at once, each read
    back after its thread has enqueued all of its `steps`; the ones that differ from
    NumPy."""
    from flowgraph.backends.opencl import kernels_nn

    wrong, errors = [], []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            results = []
            for it in range(steps):  # enqueue all, wait once: the launches overlap
                sa, sb = SHAPES[(seed + it) % len(SHAPES)]
                adj_x, adj_y = bool(it % 2), bool(it // 2 % 2)
                a, b, want = _operands(rng, sa, sb, adj_x, adj_y)
                got = kernels_nn.batch_matmul_v2(rt.to_device(a), rt.to_device(b),
                                                 adj_x=adj_x, adj_y=adj_y)
                results.append((got, want, (sa, sb, adj_x, adj_y)))
            for got, want, what in results:
                if not np.allclose(rt.read(got), want, rtol=1e-4, atol=1e-4):
                    wrong.append((seed, what))
        except Exception as e:  # reported by the main thread
            errors.append(e)

    pool = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors
    return wrong


@pytest.mark.usefixtures("_frequent_switches", "_gpu_path")
def test_batched_products_from_several_threads_match_numpy():
    from flowgraph.backends.opencl._runtime import discover

    wrong = _products_from_threads(discover()[0])
    assert not wrong, f"{len(wrong)} of 480 batched products differ from NumPy: {wrong[:4]}"


class _Recorded:
    """Stands in for pyopencl's MemoryPool: records each allocation made without the
    device's submission lock, and passes everything on."""

    def __init__(self, pool, rt, outside):
        self._pool, self._rt, self._outside = pool, rt, outside

    def allocate(self, size):
        if not self._rt.lock._is_owned():
            self._outside.append(f"pool allocation of {size} bytes")
        return self._pool.allocate(size)

    def __getattr__(self, name):
        return getattr(self._pool, name)


@pytest.mark.usefixtures("_frequent_switches")
def test_uploads_launches_and_allocations_hold_the_device_lock(monkeypatch):
    """On the GPU path, every upload (a copy into a device buffer), kernel launch and
    pool allocation of the several-thread products is made under ``rt.lock``; copies
    to the host are waits and are made outside it (see `_runtime`'s docstring)."""
    import pyopencl as cl

    from flowgraph.backends.opencl import kernels_nn
    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    monkeypatch.setattr(rt, "shares_host_memory", False)
    monkeypatch.setattr(kernels_nn, "_cpu_shaped", lambda rt, dtype: False)
    outside, counts = [], {"upload": 0, "launch": 0, "read": 0}
    enqueue_copy, enqueue_kernel = cl.enqueue_copy, cl.enqueue_nd_range_kernel

    def copy(queue, dest, src, **kwargs):
        what = "read" if isinstance(dest, np.ndarray) else "upload"
        counts[what] += 1
        if what == "upload" and not rt.lock._is_owned():
            outside.append("upload")
        return enqueue_copy(queue, dest, src, **kwargs)

    def kernel(queue, knl, *args, **kwargs):
        counts["launch"] += 1
        if not rt.lock._is_owned():
            outside.append(f"launch of {knl.function_name}")
        return enqueue_kernel(queue, knl, *args, **kwargs)

    monkeypatch.setattr(cl, "enqueue_copy", copy)
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", kernel)
    monkeypatch.setattr(rt.pool, "pool", _Recorded(rt.pool.pool, rt, outside))
    rt.pool.free_held()  # the products' first blocks are new ones, migrated to the device
    assert not _products_from_threads(rt, threads=3, steps=20)
    assert counts["upload"] == 120 and counts["launch"] >= 60 and counts["read"] == 60
    assert not outside, f"{len(outside)} calls without the device's lock: {outside[:5]}"


def test_the_completion_thread_outlives_a_callback_that_raises():
    """A `read_async` whose ``done`` raises reports to its ``failed``; the device's
    completion thread goes on serving the next copies."""
    import queue

    from flowgraph.backends.opencl._runtime import discover

    rt = discover()[0]
    results = queue.SimpleQueue()

    def bad_done(host):
        raise RuntimeError("the consumer is gone")

    x = rt.to_device(np.arange(6, dtype=np.float32))
    rt.read_async(x, bad_done, lambda e: results.put(("failed", str(e))))
    rt.read_async(x, lambda h: results.put(("done", h.tolist())), results.put)
    assert results.get(timeout=30) == ("failed", "the consumer is gone")
    assert results.get(timeout=30) == ("done", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])


@pytest.mark.usefixtures("_frequent_switches", "_gpu_path")
def test_parallel_batch_matmuls_in_one_session_match_numpy():
    """The same through the public API: independent BatchMatMulV2 nodes of one step,
    which the executor runs on several threads, repeated over steps."""
    rng = np.random.default_rng(7)
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches, wants = {}, [], []
        for i in range(16):
            sa, sb = SHAPES[i % len(SHAPES)]
            adj_x, adj_y = bool(i % 2), bool(i // 2 % 2)
            a, b, want = _operands(rng, sa, sb, adj_x, adj_y)
            pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
            with tf.device("/gpu:0"):
                fetches.append(tf.matmul(pa, pb, adjoint_a=adj_x, adjoint_b=adj_y))
            feeds.update({pa: a, pb: b})
            wants.append(want)
        config = tf.ConfigProto(inter_op_parallelism_threads=4)
        with tf.Session(graph=graph, config=config) as sess:
            for _ in range(6):
                for got, want in zip(sess.run(fetches, feeds), wants, strict=True):
                    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
