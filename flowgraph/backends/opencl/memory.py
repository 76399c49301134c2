"""The memory limit of an OpenCL device: a counting, limiting front of its caching pool.

Every device array of the OpenCL backend comes from its device's `DeviceAllocator`
(``DeviceRuntime.pool``): a callable that pyopencl's array functions take as their
``allocator``. Behind it, pyopencl's `MemoryPool` rounds each request up to a size
class (the leading four bits of the size) and keeps the blocks of freed arrays for the
next request of the same class, so that a training loop stops asking the driver for
memory after its first step.

The allocator counts the device memory the pool has taken from the driver (the blocks
of live arrays plus the cached, unused ones), keeps its high-water mark, and refuses a
request that would take it past the device's limit: it first frees the cached blocks
and tries again, then raises `ResourceExhaustedError` naming the bytes asked, the bytes
in use and the limit. The executor adds the op that asked.

Threads: pyopencl's pool holds the GIL throughout ``allocate`` (its driver calls are
quick: create a buffer, migrate it through the queue) and a block returns to the pool
when its Python object dies, which also needs the GIL, on whichever thread drops it; so
two threads never change the pool's bins and counters at once (the pool itself has no
lock: the GIL serializes it). The allocator's lock keeps its own counters, the limit
and the cache-freeing retry consistent, and is the device's submission lock when the
device runtime passes it (``lock``): a new block is migrated through the device's
queue, like the other commands enqueued there (`flowgraph.backends.opencl._runtime`).

The limit is the device's global memory unless a session's
``ConfigProto(gpu_options=GPUOptions(per_process_gpu_memory_fraction=f))`` sets it to
``f`` times that (see `DeviceAllocator.set_fraction`). Memory is only ever taken on
demand: there is no preallocation, whatever ``allow_growth`` says.

Example
-------
>>> class Pool:  # stands in for pyopencl's MemoryPool in this example
...     managed_bytes = active_bytes = held_blocks = active_blocks = 0
...     def bin_number(self, size): return size
...     def alloc_size(self, bin_number): return bin_number
...     def allocate(self, size):
...         self.managed_bytes += size; self.active_bytes += size; return bytearray(size)
...     def free_held(self): pass
>>> a = DeviceAllocator(Pool(), memory=1000, name="example")
>>> len(a(600)), a.stats()["peak_bytes_allocated"]
(600, 600)
>>> try:
...     a(600)
... except errors.ResourceExhaustedError as e:
...     print(e.message.split(":")[0])
OOM when allocating 600 bytes, 600 bytes with its size class, on OpenCL device 'example'
"""

from __future__ import annotations

import threading

from flowgraph.framework import errors

_MIB = 1 << 20


def _size(n: int) -> str:
    """`n` bytes for a message: exact, and in MiB when that helps.

    >>> _size(512), _size(3 * 2**20)
    ('512 bytes', '3145728 bytes (3.0 MiB)')
    """
    return f"{n} bytes" if n < _MIB else f"{n} bytes ({n / _MIB:.1f} MiB)"


class DeviceAllocator:
    """Allocates device buffers from `pool` within a byte limit (see the module docstring).

    `pool` is a pyopencl `MemoryPool`; `memory` the device's global memory in bytes;
    `max_alloc` the largest single buffer the device allows (None: no such bound);
    `lock` the lock every request and counter update runs under (None: one of its own;
    the device runtime passes its submission lock, see the module docstring).
    Calling the allocator with a size returns a buffer (what ``pool.allocate`` returns).
    Thread-safe.
    """

    def __init__(self, pool, memory: int, name: str = "", max_alloc: int | None = None,
                 lock=None) -> None:
        self.pool = pool
        self.memory = int(memory)
        self.name = name
        self.max_alloc = max_alloc
        self.limit = self.memory
        self.fraction = 0.0  # 0: the default, the whole memory
        self.peak = 0
        self.num_allocs = 0
        self.num_refused = 0
        self._lock = threading.Lock() if lock is None else lock
        self._rounded: dict[int, int] = {}  # size -> its size class's bytes

    # -- the limit --------------------------------------------------------------------
    def set_fraction(self, fraction: float) -> None:
        """Limit this device to `fraction` (0 < fraction <= 1) of its memory.

        Cached blocks are returned to the driver at once when the pool holds more than
        the new limit; live arrays stay, and requests are refused until enough of them
        are freed.
        """
        fraction = float(fraction)
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"a memory fraction must be in (0, 1], got {fraction}")
        with self._lock:
            self.fraction = fraction
            self.limit = round(fraction * self.memory)  # int() lost a byte to rounding
            if self.pool.managed_bytes > self.limit:
                self.pool.free_held()

    def reset_limit(self) -> None:
        """Back to the default limit: the whole memory of the device."""
        with self._lock:
            self.fraction = 0.0
            self.limit = self.memory

    def reset_peak(self) -> None:
        """Restart the high-water mark from the bytes allocated now."""
        with self._lock:
            self.peak = self.pool.managed_bytes

    # -- allocation -------------------------------------------------------------------
    def __call__(self, size: int):
        size = int(size)
        pool = self.pool
        with self._lock:
            rounded = self._rounded.get(size)  # a step asks for the same sizes again
            if rounded is None:
                if self.max_alloc is not None and size > self.max_alloc:
                    self.num_refused += 1
                    raise errors.ResourceExhaustedError(
                        None, None,
                        f"OOM when allocating {_size(size)} on OpenCL device '{self.name}': "
                        f"the device allocates at most {_size(self.max_alloc)} in one "
                        "buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE). Use a smaller batch or "
                        "split the tensor.")
                rounded = pool.alloc_size(pool.bin_number(size))
                if len(self._rounded) < 4096:
                    self._rounded[size] = rounded
            if pool.managed_bytes + rounded <= self.limit:
                buf = self._allocate(size)
            else:
                buf = None
                if pool.held_blocks:
                    # A cached block of this size class takes nothing new; any other
                    # request past the limit frees the cache and asks again. (Such a
                    # new block lives only until the next line, past the limit.)
                    buf = self._allocate(size)
                    if pool.managed_bytes > self.limit:
                        buf.release()
                        buf = None
                        pool.free_held()
                if buf is None:
                    if pool.managed_bytes + rounded > self.limit:
                        self.num_refused += 1
                        raise self._refusal(size, rounded)
                    buf = self._allocate(size)
            self.num_allocs += 1
            managed = pool.managed_bytes
            if managed > self.peak:
                self.peak = managed
            return buf

    allocate = __call__

    def _allocate(self, size: int):
        try:
            return self.pool.allocate(size)
        except Exception as e:
            import pyopencl as cl

            if not isinstance(e, cl.MemoryError):
                raise
            # The pool has already freed its cache and tried again: the device itself
            # is full (other processes, or a limit above what the driver gives).
            self.num_refused += 1
            raise errors.ResourceExhaustedError(
                None, None,
                f"OOM when allocating {_size(size)} on OpenCL device '{self.name}': the "
                f"driver refused ({e}) with {_size(self.pool.managed_bytes)} allocated by "
                f"flowgraph and a limit of {_size(self.limit)}. Other processes may hold "
                "the device's memory; lower per_process_gpu_memory_fraction, free tensors "
                "or use a smaller batch.") from e

    def _refusal(self, size: int, rounded: int) -> errors.ResourceExhaustedError:
        pool = self.pool
        if self.fraction:
            limit = (f"the limit is {_size(self.limit)}: per_process_gpu_memory_fraction="
                     f"{self.fraction:g} of the device's {_size(self.memory)}.")
            fix = ("Raise ConfigProto(gpu_options=GPUOptions("
                   "per_process_gpu_memory_fraction=...)), free")
        else:
            limit = f"the limit is the device's memory, {_size(self.limit)}."
            fix = "Free"
        return errors.ResourceExhaustedError(
            None, None,
            f"OOM when allocating {_size(size)}, {rounded} bytes with its size class, on "
            f"OpenCL device '{self.name}': {_size(pool.active_bytes)} are in use by live "
            f"tensors, {pool.managed_bytes} bytes with their size classes, and {limit} {fix} "
            "tensors you no longer need (keep fewer device values alive, fetch fewer "
            "values) or use a smaller batch.")

    # -- statistics -------------------------------------------------------------------
    def stats(self) -> dict:
        """The allocator's counters (bytes unless named otherwise):

        ``bytes_allocated``: taken from the driver now (live tensors and the cache),
        what the limit counts; ``bytes_in_use``: asked for by live tensors (without
        the rounding to size classes); ``peak_bytes_allocated``:
        the high-water mark of ``bytes_allocated`` since the device was first used (or
        `reset_peak`); ``bytes_limit``; ``num_allocs`` and ``num_refused``: requests
        served and refused.
        """
        pool = self.pool
        with self._lock:
            allocated = int(pool.managed_bytes)
            in_use = int(pool.active_bytes)
            return {
                "bytes_allocated": allocated,
                "bytes_in_use": in_use,
                "peak_bytes_allocated": max(self.peak, allocated),
                "bytes_limit": self.limit,
                "num_allocs": self.num_allocs,
                "num_refused": self.num_refused,
            }

    def free_held(self) -> None:
        """Return the cached, unused blocks to the driver."""
        with self._lock:
            self.pool.free_held()

    # pyopencl's MemoryPool counters, for code that reads them off ``DeviceRuntime.pool``
    @property
    def managed_bytes(self) -> int:
        return self.pool.managed_bytes

    @property
    def active_bytes(self) -> int:
        return self.pool.active_bytes

    @property
    def held_blocks(self) -> int:
        return self.pool.held_blocks

    @property
    def active_blocks(self) -> int:
        return self.pool.active_blocks

    def __repr__(self) -> str:
        return (f"<DeviceAllocator '{self.name}' allocated={self.pool.managed_bytes} "
                f"limit={self.limit}>")

