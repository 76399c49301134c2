"""OpenCL devices as flowgraph sees them: discovery, a probe, one runtime per device.

`discover()` lists every OpenCL device once per process (GPUs first, then CPU-type
devices such as PoCL, so that the backend is testable without a GPU) and keeps only
those that build and run a tiny kernel: PyPI's PoCL, for one, cannot build kernels on
some CPUs ("unknown target CPU 'generic'"); such a device is skipped with one warning
naming its platform and the fix. Each kept device gets a `DeviceRuntime`: its context,
an in-order command queue, a caching memory pool (pyopencl's, with size bins reused
across steps, behind the device's memory limit: `flowgraph.backends.opencl.memory`) and
a cache of built programs.

Threads: executor threads share a device's runtime. Kernel launches (setting a shared
kernel object's arguments and enqueueing it is one step), copies from the host and
allocations from the pool (a new block is migrated to the device through the queue)
are enqueued under the device's `DeviceRuntime.lock`. pyopencl holds the GIL through
every OpenCL call except transfers and waits, so the GIL serialized all of these but
the uploads: a non-blocking ``clEnqueueWriteBuffer`` runs without the GIL, and several
threads' uploads, launches and allocations entered the driver at once on one queue. A
CPU-type device never sees that: it wraps or copies host memory while creating a
buffer, with the GIL. On an H100 the several-thread test crashed outside any Python
thread in just that situation (issue 12). Copies to the host stay outside the lock: a
blocking read returns only once the queue has drained, and holding the lock that long
would stall every other thread's launches (`read`; `read_async`, whose wait is the
completion thread's; ``queue.finish()``).

pyopencl is imported here only, on first use: ``import flowgraph`` never loads it.
"""

from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from flowgraph.backends.opencl.memory import DeviceAllocator

MAX_UPLOADS = 1024  # copy events kept between step ends (`DeviceRuntime.hold_upload`)
_PROBE = "__kernel void probe(__global float* a) { a[get_global_id(0)] += 1.0f; }"
_lock = threading.Lock()


class DeviceRuntime:
    """One OpenCL device's context, queue, allocator (`pool`, a `DeviceAllocator`) and
    program cache."""

    def __init__(self, cl, device) -> None:
        import pyopencl.tools

        self.cl = cl
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context)
        self.has_fp64 = "cl_khr_fp64" in device.extensions
        self.name = device.name.strip()
        self.platform = device.platform.name.strip()
        self.memory = int(device.global_mem_size)
        # The submission lock (see the module docstring): held while a command is put on
        # `queue` (launches, uploads, pool allocations), never while waiting for one.
        # Re-entrant: pyopencl collects garbage when an allocation or an upload runs out
        # of memory, and no finalizer run then may deadlock on it.
        self.lock = threading.RLock()
        # Every device array comes from `pool` (pass it as pyopencl's `allocator`): the
        # device's caching MemoryPool behind its memory limit, allocating under `lock`.
        self.pool = DeviceAllocator(
            pyopencl.tools.MemoryPool(pyopencl.tools.ImmediateAllocator(self.queue)),
            memory=self.memory, name=self.name, max_alloc=int(device.max_mem_alloc_size),
            lock=self.lock)
        self.is_gpu = bool(device.type & cl.device_type.GPU)
        self.is_cpu = bool(device.type & cl.device_type.CPU)  # a CPU-type device (PoCL)
        self.shares_host_memory = self.is_cpu
        self._programs: dict[tuple[str, str], object] = {}
        self._kernels: dict[tuple[str, str, str], object] = {}
        self._programs_lock = threading.RLock()
        self._array_protos: dict[tuple, tuple] = {}  # (shape, dtype) -> (class, fields)
        self._checks: list[tuple] = []  # deferred checks: (flag array, fine value, error)
        self._checks_lock = threading.Lock()
        # Events of host-to-device copies in flight (`hold_upload`), released once the
        # queue has run (`release_uploads`).
        self._uploads: list = []
        self._completions = None  # queue.SimpleQueue served by a thread (`read_async`)
        self.gemm_choice: dict[str, str] | None = None  # `gemm.choose`'s tiles, once known
        self.scratch: dict[str, object] = {}  # device buffers kernels write and never read
        self.launches: dict = {}  # signature -> `launches.Launch` (prepared once)

    def program(self, source: str, options: str = ""):
        """The built program for `source` (built once per device and kept)."""
        key = (source, options)
        prg = self._programs.get(key)
        if prg is None:
            with self._programs_lock:
                prg = self._programs.get(key)
                if prg is None:
                    prg = self.cl.Program(self.context, source).build(options=options)
                    self._programs[key] = prg
        return prg

    def kernel(self, source: str, name: str, options: str = ""):
        """A kernel object of `source`, built once and kept (never retrieved per call).

        A kernel object holds its arguments between `set_args` and the launch, and
        executor threads share it, so it is launched under `lock`
        (`kernels_elementwise.launch`)."""
        key = (source, options, name)
        k = self._kernels.get(key)
        if k is None:
            prg = self.program(source, options)
            with self._programs_lock:
                k = self._kernels.get(key)
                if k is None:
                    k = self._kernels[key] = self.cl.Kernel(prg, name)
        return k

    def read_async(self, array, done, failed) -> None:
        """Enqueue a copy of device array `array` to a new host array without waiting;
        ``done(host)`` (or ``failed(exc)``) runs on this device's completion thread once
        the copy has finished. The queue is in order, so one thread waiting on the
        copies' events in turn serves them all."""
        try:
            host, finish = _host_buffer(array)
            event = None
            if host.nbytes:
                event = self.cl.enqueue_copy(self.queue, host, array.base_data,
                                             src_offset=array.offset, is_blocking=False)
        except Exception as e:
            failed(e)
            return
        self._completions_queue().put((event, host, lambda h: done(finish(h)), failed))

    def read(self, array) -> np.ndarray:
        """A host copy of device array `array` (views with any strides too); waits."""
        host, finish = _host_buffer(array)
        if host.nbytes:
            self.cl.enqueue_copy(self.queue, host, array.base_data, src_offset=array.offset,
                                 is_blocking=True)
        return finish(host)

    def _completions_queue(self):
        if self._completions is None:
            with self._checks_lock:
                if self._completions is None:
                    import queue

                    self._completions = queue.SimpleQueue()
                    threading.Thread(target=self._complete, args=(self._completions,),
                                     name=f"flowgraph-opencl-{self.name}",
                                     daemon=True).start()
        return self._completions

    @staticmethod
    def _complete(pending) -> None:
        """The completion thread's loop. It owns each copy's event and host array (no
        other thread holds them), waits without any lock, and outlives a callback that
        raises: an exception of ``done`` goes to ``failed``, so that one bad callback
        cannot stop every later `read_async` of the device from completing."""
        while True:
            event, host, done, failed = pending.get()
            try:
                if event is not None:
                    event.wait()
                done(host)
            except Exception as e:
                try:
                    failed(e)
                except Exception as lost:  # nobody left to tell: report, serve the rest
                    threading.excepthook(threading.ExceptHookArgs(
                        (type(lost), lost, lost.__traceback__, threading.current_thread())))

    def defer_check(self, flag, fine: int, error) -> None:
        """Check device array `flag` (one int) once the queue has run instead of waiting
        now: when its value is not `fine`, `error(value)` is raised by the next
        `run_deferred_checks` (the Session's end-of-step synchronize). The closure keeps
        whatever the message needs alive."""
        with self._checks_lock:
            self._checks.append((flag, fine, error))

    def run_deferred_checks(self) -> None:
        """Read every deferred flag (after ``queue.finish()``); raise the first failure."""
        with self._checks_lock:
            checks, self._checks = self._checks, []
        for flag, fine, error in checks:
            value = int(flag.get()[0])
            if value != fine:
                raise error(value)

    def hold_upload(self, event) -> None:
        """Keep the event of a non-blocking host-to-device copy until the step ends.

        pyopencl's event of such a copy holds the host array and, when it is dropped
        before the copy has run, *waits* for it (holding the GIL): dropping it at once
        made every upload wait for all the kernels queued before it (40 ms behind six
        16M-element adds). Kept here, it is dropped by `release_uploads` once the queue
        has finished; past `MAX_UPLOADS` (no step end, e.g. kernels called directly)
        the oldest half is dropped, those copies being long done or nearly so."""
        with self._checks_lock:
            self._uploads.append(event)
            if len(self._uploads) > MAX_UPLOADS:
                old = self._uploads[:MAX_UPLOADS // 2]
                del self._uploads[:MAX_UPLOADS // 2]
            else:
                old = None
        del old  # outside the lock: dropping may wait

    def release_uploads(self) -> None:
        """Drop the kept copy events (call after ``queue.finish()``: they are complete)."""
        with self._checks_lock:
            done, self._uploads = self._uploads, []
        del done

    def to_device(self, value: np.ndarray, wrap: bool = False):
        """A device array holding a copy of host array `value` (with `wrap`, on a device
        that reads host memory: `value` itself, which must then stay unchanged until the
        step ends: feeds and the plan's constants).

        The copy is enqueued without waiting (a blocking one would wait for every kernel
        queued before it): its event, kept until the step ends (`hold_upload`), keeps the
        host array alive until the copy is done, and the Session synchronizes each device
        at the end of a step (`OpenCLBackend.synchronize`), so a fed array may be changed
        once `run` returns.
        """
        # np.require keeps a 0-d array 0-d (np.ascontiguousarray would make it 1-d).
        host = np.require(value, requirements="C")
        if self.shares_host_memory and host.nbytes:
            # A CPU-type device reads host memory: wrap the array, or copy it while
            # creating the buffer (one memcpy on this thread, no command in the queue).
            # Only a wrap may share: a CPU kernel's output goes back to the CPU's buffer
            # pool once sent, before a device kernel reads it.
            flags = self.cl.mem_flags
            how = flags.USE_HOST_PTR if wrap else flags.COPY_HOST_PTR
            buf = self.cl.Buffer(self.context, flags.READ_ONLY | how, hostbuf=host)
            return self.empty(host.shape, host.dtype, data=buf)
        out = self.empty(host.shape, host.dtype)
        if host.nbytes:
            with self.lock:  # the copy runs without the GIL: see the module docstring
                event = self.cl.enqueue_copy(self.queue, out.base_data, host,
                                             is_blocking=False)
            self.hold_upload(event)
        return out

    def upload(self, value: np.ndarray):
        """A device buffer holding a copy of host array `value` (not empty), made as
        `to_device` makes one but without the device array around it (1 to 2 µs less),
        for a kernel that only needs the buffer. Non-blocking, like `to_device`."""
        host = np.require(value, requirements="C")
        if self.shares_host_memory:
            flags = self.cl.mem_flags
            return self.cl.Buffer(self.context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                                  hostbuf=host)
        buf = self.pool(host.nbytes)
        with self.lock:
            event = self.cl.enqueue_copy(self.queue, buf, host, is_blocking=False)
        self.hold_upload(event)
        return buf

    def empty(self, shape, dtype, data=None):
        """An uninitialised device array from the pool.

        pyopencl's `Array` constructor costs about 14 µs in Python (most of a small
        kernel's host time); an array of a shape and dtype made before is a copy of that
        one's attributes with a buffer of its own, 1 to 2 µs. `data`: a buffer to use
        instead of one from the pool."""
        if type(shape) is not tuple:
            shape = tuple(shape)
        if not isinstance(dtype, np.dtype):
            dtype = np.dtype(dtype)
        proto = self._array_protos.get((shape, dtype))
        if proto is None:
            import pyopencl.array as cla

            arr = cla.empty(self.queue, shape, dtype, allocator=self.pool)
            if data is not None:
                arr.base_data = data
            if len(self._array_protos) >= 4096:
                self._array_protos.clear()
            fields = dict(arr.__dict__)
            fields["base_data"], fields["events"] = None, None
            self._array_protos[(shape, dtype)] = (type(arr), fields)
            return arr
        cls, fields = proto
        arr = object.__new__(cls)
        arr.__dict__.update(fields)
        arr.events = []
        if data is not None:
            arr.base_data = data
        elif arr.nbytes:
            arr.base_data = self.pool(arr.nbytes)
        return arr


def _host_buffer(array):
    """(host buffer to copy `array`'s bytes into, function making the result from it).
    A strided view copies the span of its buffer that it covers and is gathered on the
    host (pyopencl's own ``get`` refuses views that are not contiguous)."""
    if array.flags.c_contiguous or array.size == 0:
        return np.empty(array.shape, array.dtype), lambda h: h
    if any(st < 0 for st in array.strides):
        raise ValueError("device arrays with negative strides cannot be copied to the host")
    item = array.dtype.itemsize
    span = item + sum((n - 1) * st for n, st in zip(array.shape, array.strides, strict=True))
    raw = np.empty(span, np.uint8)
    shape, strides, dtype = array.shape, array.strides, array.dtype

    def gather(h):  # strides are whole elements, so the span is too
        return np.lib.stride_tricks.as_strided(h.view(dtype), shape, strides).copy()

    return raw, gather


def _probe(cl, device) -> str | None:
    """None when `device` builds and runs a tiny kernel, else the reason."""
    try:
        ctx = cl.Context([device])
        queue = cl.CommandQueue(ctx)
        host = np.zeros(4, np.float32)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        cl.Program(ctx, _PROBE).build().probe(queue, (4,), None, buf)
        cl.enqueue_copy(queue, host, buf)
        queue.finish()
    except Exception as e:  # any driver or compiler failure: the device is unusable
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else e}"
    if not np.array_equal(host, np.ones(4, np.float32)):
        return f"the probe kernel computed {host.tolist()} instead of [1, 1, 1, 1]"
    return None


@functools.cache
def discover() -> tuple[DeviceRuntime, ...]:
    """The usable OpenCL devices of this process, GPUs first (see the module docstring).

    Without pyopencl, or without an OpenCL platform, there are none.
    """
    with _lock:
        try:
            import pyopencl as cl
        except ImportError:
            return ()
        try:
            platforms = cl.get_platforms()
        except Exception:  # no ICD loader configuration: no platform
            return ()
        found = []
        for platform in platforms:
            try:
                devices = platform.get_devices()
            except Exception:
                continue
            for device in devices:
                reason = _probe(cl, device)
                if reason is not None:
                    warnings.warn(
                        f"flowgraph: OpenCL device '{device.name.strip()}' of platform "
                        f"'{platform.name.strip()}' cannot build kernels and is skipped "
                        f"({reason}). On AMD EPYC hosts PyPI's PoCL fails this way; install "
                        "Debian's PoCL (apt-get install pocl-opencl-icd) instead.",
                        RuntimeWarning, stacklevel=2)
                    continue
                found.append(DeviceRuntime(cl, device))
        found.sort(key=lambda r: not r.is_gpu)  # real GPUs first
        return tuple(found)


def runtime_of(array) -> DeviceRuntime:
    """The `DeviceRuntime` whose context holds device array `array`."""
    ctx = array.context
    for r in discover():
        if r.context == ctx:
            return r
    raise ValueError("the array does not belong to any flowgraph OpenCL device")
