"""The OpenCL devices' memory: the limit, out-of-memory errors, reuse, step statistics.

Without an OpenCL device these tests skip, except in CI (CI=true), which installs PoCL
and must run them.
"""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends import list_devices
from flowgraph.backends.opencl import _runtime
from flowgraph.backends.opencl.memory import DeviceAllocator
from tests.backends.opencl_support import opencl_devices


def _devices():
    return opencl_devices()


_devices()



GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.fixture
def rt():
    """The first OpenCL device's runtime, its limit restored after the test (the limit
    is process-wide)."""
    rt = _runtime.discover()[0]
    before = (rt.pool.limit, rt.pool.fraction)
    yield rt
    rt.pool.limit, rt.pool.fraction = before


def _config(fraction: float = 0.0, **kwargs):
    return tf.ConfigProto(gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=fraction),
                          inter_op_parallelism_threads=1, **kwargs)


def _fraction_for(rt, nbytes: int) -> float:
    return nbytes / rt.memory


def test_the_pool_of_each_device_is_its_limiting_allocator(rt):
    assert isinstance(rt.pool, DeviceAllocator)
    assert rt.pool.limit == rt.memory == _devices()[0].memory_limit
    x = rt.empty((10, 10), np.float32)
    assert x.base_data is not None
    assert rt.pool.stats()["bytes_in_use"] >= 400


def test_an_op_past_the_limit_raises_resource_exhausted_naming_it(rt):
    """1 MiB above what the device holds already: the two 4 kB feeds fit, and so do the
    packed operands of a tiled GPU product (2 x 64 KiB), but not the 4 MB result. The limit
    counts from what the process holds: a GPU copies feeds and constants into its pool, and
    earlier tests' device arrays still alive in caches count (67,444 bytes on an H100
    once, past a plain 64 KiB limit at the feed's upload), where PoCL wraps host arrays
    outside the pool."""
    gc.collect()  # device arrays of earlier tests that only wait for the collector
    rt.pool.free_held()
    limit = rt.pool.managed_bytes + (1 << 20)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [1000, 1])
        b = tf.placeholder(tf.float32, [1, 1000])
        with tf.device("/gpu:0"):
            outer = tf.matmul(a, b, name="outer")  # 4 MB: past the limit
        feed = {a: np.ones((1000, 1), np.float32), b: np.ones((1, 1000), np.float32)}
        with tf.Session(config=_config(_fraction_for(rt, limit))) as sess:
            assert rt.pool.limit == limit
            with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                sess.run(outer, feed)
    text = str(info.value)
    assert "[[node outer (MatMul)" in text and GPU0 in text
    assert "OOM when allocating 4000000 bytes" in text
    live = re.search(r"(\d+) bytes (\([\d.]+ MiB\) )?are in use by live tensors", text)
    # the feeds among them: wrapped on a CPU-type device, copied into the pool on a GPU
    assert live and int(live[1]) >= (0 if rt.shares_host_memory else 8000), text
    assert f"the limit is {limit} bytes" in text
    assert "per_process_gpu_memory_fraction" in text and "smaller batch" in text
    assert rt.pool.stats()["bytes_allocated"] <= limit


def test_a_value_arriving_past_the_limit_names_its_recv(rt):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1000, 1])
        with tf.device("/cpu:0"):
            wide = tf.tile(x, [1, 100])  # 400 kB, copied to the device
        with tf.device("/gpu:0"):
            y = tf.square(wide)
        with tf.Session(config=_config(_fraction_for(rt, 1 << 16))) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError,
                               match=r"(?s)OOM when allocating 400000 bytes.*_Recv\) on "):
                sess.run(y, {x: np.ones((1000, 1), np.float32)})


def test_cached_blocks_are_freed_before_a_request_is_refused(rt):
    pool = rt.pool
    pool.free_held()
    before = pool.managed_bytes
    block = rt.empty((40000,), np.float32)  # 160 kB, then cached
    del block
    assert pool.held_blocks >= 1 and pool.managed_bytes >= before + 160000
    # Room for a 200 kB request only once the cached 160 kB block is given back.
    pool.set_fraction((before + 220000) / rt.memory)
    other = rt.empty((50000,), np.float32)
    assert pool.managed_bytes <= pool.limit
    assert pool.held_blocks == 0
    del other


def test_a_cached_block_of_the_size_class_is_reused_near_the_limit(rt):
    pool = rt.pool
    pool.free_held()
    block = rt.empty((40000,), np.float32)
    del block
    held = pool.managed_bytes
    pool.set_fraction((held + 1000) / rt.memory)  # no room for a second such block
    again = rt.empty((40000,), np.float32)
    assert pool.managed_bytes == held and pool.held_blocks == 0
    del again


def test_a_run_within_the_limit_reports_allocated_and_peak_bytes(rt):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1000])
        with tf.device("/gpu:0"):
            y = tf.reduce_sum(tf.square(x) + 1.0)
        with tf.device("/cpu:0"):
            y = y * 1.0
        value = np.ones((500, 1000), np.float32)  # 2 MB, the largest tensor
        with tf.Session(config=_config(_fraction_for(rt, 64 << 20))) as sess:
            md = tf.RunMetadata()
            out = sess.run(y, {x: value},
                           options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                           run_metadata=md)
    assert out == pytest.approx(1e6)
    gpu = next(d for d in md.step_stats.dev_stats if d.device == GPU0)
    assert gpu.allocator_peak_bytes >= value.nbytes
    assert gpu.allocator_peak_bytes >= gpu.allocated_bytes > 0
    assert gpu.allocator_limit_bytes == rt.pool.limit
    assert gpu.allocated_bytes <= gpu.allocator_limit_bytes
    assert gpu.peak_bytes >= value.nbytes  # the replayed live bytes, as before
    cpu = next(d for d in md.step_stats.dev_stats if d.device.endswith("CPU:0"))
    assert cpu.allocated_bytes == cpu.allocator_peak_bytes == 0  # no allocator counters


def test_later_steps_reuse_the_blocks_of_the_first(rt):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [256, 256])
        with tf.device("/gpu:0"):
            h = tf.nn.relu(tf.matmul(x, x) - 1.0)
            y = tf.reduce_mean(tf.sigmoid(h) * h)
        feed = {x: np.random.default_rng(0).random((256, 256), dtype=np.float32)}
        with tf.Session(config=_config()) as sess:
            sess.run(y, feed)
            after_first = rt.pool.managed_bytes
            allocs = rt.pool.num_allocs
            for _ in range(3):
                sess.run(y, feed)
            assert rt.pool.managed_bytes == after_first
            assert rt.pool.num_allocs > allocs  # it did allocate: from the cache


def test_the_latest_session_setting_a_fraction_wins(rt):
    gpu = _devices()[0]
    with tf.Session(config=_config(0.5)) as first:
        assert rt.pool.limit == int(0.5 * rt.memory)
        assert first.list_devices()[1].memory_limit == rt.pool.limit
        with tf.Session(config=_config()):  # no fraction: the limit stays
            assert rt.pool.limit == int(0.5 * rt.memory)
        with tf.Session(config=_config(0.25)):  # process-wide: the first one's too
            assert rt.pool.limit == int(0.25 * rt.memory)
    assert rt.pool.limit == int(0.25 * rt.memory)  # closing a session keeps it
    assert next(d for d in list_devices() if d.name == gpu.name).memory_limit == rt.pool.limit
    with tf.Session(config=_config(1.0)):
        assert rt.pool.limit == rt.memory


@pytest.mark.parametrize("fraction", [-0.5, 1.5])
def test_a_fraction_outside_zero_one_is_invalid(rt, fraction):
    with pytest.raises(tf.errors.InvalidArgumentError, match="per_process_gpu_memory_fraction"):
        tf.Session(config=_config(fraction))
    assert rt.pool.limit == rt.memory


def test_allow_growth_is_accepted_and_nothing_is_preallocated(rt):
    rt.pool.free_held()
    before = rt.pool.managed_bytes
    for growth in (False, True):
        config = _config(0.5)
        config.gpu_options.allow_growth = growth
        with tf.Session(config=config):
            assert rt.pool.managed_bytes == before


def test_a_request_past_the_largest_buffer_is_resource_exhausted(rt):
    pool = rt.pool
    with pytest.raises(tf.errors.ResourceExhaustedError, match="in one buffer"):
        pool(pool.max_alloc + 1)


def test_allocator_stats_through_the_backend(rt):
    device = _devices()[0]
    stats = device.backend.memory_stats(device)
    assert set(stats) >= {"bytes_allocated", "bytes_in_use", "peak_bytes_allocated",
                          "bytes_limit"}
    assert stats["peak_bytes_allocated"] >= stats["bytes_allocated"] >= stats["bytes_in_use"]
    cpu = list_devices()[0]
    assert cpu.backend.memory_stats(cpu) is None
