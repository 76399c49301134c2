"""How long an op takes on a device, and a value takes to move between devices.

Placement (`flowgraph.runtime.placement`) asks this module when an op could run on more
than one device and nothing requested one. The estimates are deliberately simple:

* an op costs its device's fixed per-op time (`DeviceProfile.launch`: the executor's
  dispatch plus, on an OpenCL device, the host-side enqueue) plus its work at the
  device's rate: ``2·M·N·K`` flops at `DeviceProfile.gemm` for MatMul, BatchMatMul and
  the convolutions, and the bytes it reads and writes at `DeviceProfile.bandwidth` for
  everything else;
* a value crossing between devices costs, for each side whose memory is not the host's,
  `DeviceProfile.copy_latency` plus its bytes at `DeviceProfile.copy_bandwidth`;
* sizes come from static shapes; a dimension unknown when the graph was built takes the
  batch size of the first run's feeds (the leading dimension of the first fed value, the
  usual meaning of a ``None`` dimension), else 1.

Profiles are measured once per device (a few kernel calls: a tiny Add, Adds of 1M and
4M elements, MatMuls of two sizes, a 4 MB round trip through host memory) and kept on disk
(`flowgraph.backends.tuning_cache`). A traced run (``RunOptions(trace_level=FULL_TRACE)``)
refines them: `CostModel.observe` records each op's measured time on host-memory devices,
which replaces the estimate in plans compiled afterwards (on an OpenCL device a trace
times the enqueue only).

Example
-------
>>> p = DeviceProfile(launch=2e-6, gemm=1e11, bandwidth=2e10)
>>> round(p.op_time(flops=2e9, nbytes=0, gemm_like=True) * 1e3, 3)   # ms
20.002
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import asdict, dataclass

import numpy as np

from flowgraph.backends import tuning_cache
from flowgraph.backends.base import Device

CACHE_FILE = "device_profiles.json"
PROFILE_VERSION = 2  # part of the cache key: a new way of measuring measures again
_GEMM_OPS = {"MatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
             "Conv2DBackpropFilter", "DepthwiseConv2dNative"}


@dataclass
class DeviceProfile:
    """Measured rates of one device (seconds, flop/s, byte/s)."""

    launch: float
    gemm: float
    bandwidth: float
    copy_latency: float = 0.0
    copy_bandwidth: float = math.inf

    def op_time(self, flops: float, nbytes: float, gemm_like: bool) -> float:
        work = flops / self.gemm if gemm_like else nbytes / self.bandwidth
        return self.launch + work

    def copy_time(self, nbytes: float) -> float:
        if self.copy_bandwidth == math.inf:
            return 0.0
        return self.copy_latency + nbytes / self.copy_bandwidth


_profiles: dict[str, DeviceProfile] = {}
_profiles_lock = threading.Lock()


def _profile_key(device: Device) -> str:
    return (f"v{PROFILE_VERSION}|{type(device.backend).__name__}|{device.device_type}|"
            f"{device.description}|{os.cpu_count()}")


def set_profile(device: Device, profile: DeviceProfile | None) -> None:
    """Use `profile` for `device` in this process (None: measure again). For tests, and
    to describe a device that cannot be measured where the plan is made."""
    with _profiles_lock:
        if profile is None:
            _profiles.pop(_profile_key(device), None)
        else:
            _profiles[_profile_key(device)] = profile


def profile_of(device: Device) -> DeviceProfile:
    """The device's profile: this process's, else the disk cache's, else measured now."""
    key = _profile_key(device)
    p = _profiles.get(key)
    if p is None:
        with _profiles_lock:
            p = _profiles.get(key)
            if p is None:
                cached = tuning_cache.load(CACHE_FILE, key)
                try:
                    p = DeviceProfile(**cached) if isinstance(cached, dict) else None
                except TypeError:
                    p = None
                if p is None or not all(isinstance(v, float) and v >= 0
                                        for v in asdict(p).values()):
                    p = measure(device)
                    tuning_cache.store(CACHE_FILE, key, asdict(p))
                _profiles[key] = p
    return p


def measure(device: Device) -> DeviceProfile:
    """Measure `device` through its backend's own Add and MatMul kernels (see the module
    docstring). Rates are marginal: the difference in time between two sizes, so that
    the fixed per-call cost (host enqueue, packing launches) does not pass for slow
    work; the GEMM size doubles from 256 until a call takes 2 ms (or 4096). About 0.2 s
    on a CPU, a second or two where kernels are compiled (and GEMM tiles tuned) first."""
    from flowgraph.framework import dtypes

    backend = device.backend
    backend.ensure_loaded()
    add = backend.find_kernel("Add", dtypes.float32).fn
    matmul = backend.find_kernel("MatMul", dtypes.float32).fn
    rng = np.random.default_rng(0)
    last = []

    def sync():
        if last:
            backend.to_host(last[-1], device)
            last.clear()

    def per_call(fn, *args) -> float:
        call = lambda: last.append(fn(*args))  # noqa: E731
        once = tuning_cache.best_time(call, 1, sync, repeat=1)
        return tuning_cache.best_time(call, max(1, min(50, int(0.005 / max(once, 1e-7)))), sync)

    def on_device(shape):
        return backend.from_host(rng.standard_normal(shape, dtype=np.float32), device)

    executor_dispatch = 2e-6  # the executor's own per-node cost, on every device
    tiny = on_device(16)
    launch = per_call(add, tiny, tiny) + executor_dispatch
    small, big = on_device(1 << 20), on_device(1 << 22)
    bandwidth = _marginal_rate(3 * 4 * (1 << 20), per_call(add, small, small),
                               3 * 4 * (1 << 22), per_call(add, big, big))
    n, prev = 256, None
    while True:
        sq = on_device((n, n))
        t = per_call(matmul, sq, sq)
        if prev is not None and (t >= 2e-3 or n >= 4096):
            break
        prev, n = (n, t), n * 2
    gemm = _marginal_rate(2 * prev[0] ** 3, prev[1], 2 * n ** 3, t)
    if backend.host_memory:
        return DeviceProfile(launch, gemm, bandwidth)
    host = rng.standard_normal(1 << 20, dtype=np.float32)
    one = np.ones(1, np.float32)
    def round_trip_of(value):
        return lambda: backend.to_host(backend.from_host(value, device), device)

    latency = tuning_cache.best_time(round_trip_of(one), 20, lambda: None) / 2
    round_trip = tuning_cache.best_time(round_trip_of(host), 3, lambda: None)
    copy_bandwidth = 2 * host.nbytes / max(round_trip - 2 * latency, 1e-9)
    return DeviceProfile(launch, gemm, bandwidth, latency, copy_bandwidth)


def _marginal_rate(work1: float, t1: float, work2: float, t2: float) -> float:
    """Work per second between two measurements; when the larger one did not take
    clearly longer (noise, or a device still bound by its fixed costs), the plain rate
    of the larger one."""
    if t2 > 1.2 * t1:
        return (work2 - work1) / (t2 - t1)
    return work2 / max(t2, 1e-9)


class CostModel:
    """Estimates for one session: op and copy times per device, refined by traces.

    `feed_shapes` (tensor -> shape of the value fed in the first run) resolves dimensions
    the graph left unknown.
    """

    def __init__(self) -> None:
        self.observed: dict[tuple[str, str], float] = {}  # (op name, device name) -> s
        self.batch = 1

    def set_feed_shapes(self, feed_shapes: dict) -> None:
        for shape in feed_shapes.values():
            if len(shape) >= 1:
                self.batch = int(shape[0]) or 1
                return
        self.batch = 1

    def observe(self, step_stats, devices: list[Device]) -> None:
        """Record the measured time of every op of a traced step (``RunMetadata``) on a
        host-memory device. On other devices kernels return once enqueued, so a trace
        times the enqueue, not the work: their estimates stay."""
        host = {d.name for d in devices if d.backend.host_memory}
        for dev in step_stats.dev_stats:
            if dev.device not in host:
                continue
            for n in dev.node_stats:
                if n.node_name.startswith("_"):
                    continue
                micros = getattr(n, "all_end_rel_micros", 0) or getattr(
                    n, "op_end_rel_micros", 0)
                if micros:
                    key = (n.node_name, _short(dev.device))
                    old = self.observed.get(key)
                    seconds = micros * 1e-6
                    self.observed[key] = seconds if old is None else 0.5 * (old + seconds)

    # -- sizes ------------------------------------------------------------------------
    def elements(self, tensor) -> int:
        shape = tensor.shape
        dims = getattr(shape, "dims", None)
        if dims is None:
            return 1
        n = 1
        for d in shape.as_list():
            n *= self.batch if d is None else d
        return n

    def nbytes(self, tensor) -> int:
        try:
            size = tensor.dtype.base_dtype.as_numpy_dtype().itemsize
        except (TypeError, AttributeError):
            size = 8
        return self.elements(tensor) * size

    def flops(self, op) -> float:
        if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2"):
            a, b = (self._dims(t) for t in op._inputs[:2])
            if len(a) < 2 or len(b) < 2:
                return 0.0
            ta = op.attrs.get("transpose_a") or op.attrs.get("adj_x")
            tb = op.attrs.get("transpose_b") or op.attrs.get("adj_y")
            m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
            n = b[-2] if tb else b[-1]
            batch = max(1, int(np.prod(a[:-2], dtype=np.int64)) if len(a) > 2 else 1)
            return 2.0 * batch * m * n * k
        if op.type in _GEMM_OPS:
            # 2 x (output or input elements) x (filter elements / output channels)
            filt = next((self._dims(t) for t in op._inputs if len(self._dims(t)) == 4
                         and t is not op._inputs[0]), None)
            big = max((self.elements(t) for t in [*op._inputs, *op._outputs]), default=0)
            per = int(np.prod(filt[:-1], dtype=np.int64)) if filt else 1
            return 2.0 * big * per
        return 0.0

    def _dims(self, tensor) -> list[int]:
        shape = tensor.shape
        if getattr(shape, "dims", None) is None:
            return []
        return [self.batch if d is None else d for d in shape.as_list()]

    # -- times ------------------------------------------------------------------------
    def op_time(self, op, device: Device) -> float:
        seen = self.observed.get((op.name, device.short_name))
        if seen is not None:
            return seen
        nbytes = sum(self.nbytes(t) for t in [*op._inputs, *op._outputs]
                     if not t.dtype.is_ref_dtype)
        return profile_of(device).op_time(self.flops(op), nbytes, op.type in _GEMM_OPS)

    def copy_time(self, tensor, src: Device, dst: Device) -> float:
        if src is dst:
            return 0.0
        nbytes = self.nbytes(tensor)
        return profile_of(src).copy_time(nbytes) + profile_of(dst).copy_time(nbytes)


def _short(device_name: str) -> str:
    return "/device:" + device_name.rsplit("device:", 1)[-1]
