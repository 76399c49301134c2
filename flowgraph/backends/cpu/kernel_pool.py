"""The CPU backend's kernel thread pool: one large kernel's work split across cores.

A kernel that calls `parallel_for(n, chunk, grain=...)` has its index range ``[0, n)``
cut into equal chunks, each run as ``chunk(start, stop)``; the chunks run at once on the
calling thread and on the pool's worker threads. Chunks must write disjoint parts of
the output, and spend their time in code that releases the GIL (NumPy ufunc loops on
large arrays, ``np.take``, Cython ``nogil`` loops): otherwise they only take turns.

State it keeps
--------------
``_limit``: how many threads a kernel may use (``ConfigProto.intra_op_parallelism_threads``
through `threads_limited`; by default ``FLOWGRAPH_KERNEL_THREADS`` or the cores this
process may run on), capped by ``_available``, the cores other processes leave free
(`set_available`, from the contention policy of `blas_threads`). ``_workers``: daemon
threads, started on first need (at most ``_limit - 1``), blocked on ``_jobs``, a queue
of `_Job` references. A `_Job` holds the chunk bounds, the index of the next chunk not
yet taken, and how many chunks are done.

Invariants
----------
* The calling thread takes chunks too, until none is left, then waits for the chunks
  taken by workers. So a job finishes even when every worker is busy with another
  session's job (no deadlock), and a slow or descheduled worker delays the job by at
  most one chunk.
* A chunk runs exactly once: chunks are handed out under the job's lock.
* A kernel called from inside a chunk (nested) runs on one thread.
* The first exception a chunk raises is re-raised on the calling thread, after every
  chunk taken has finished (they write into the caller's arrays)::

      parallel_for(1000, f, grain=200), 2 threads
      caller: f(0, 500)                 worker: f(500, 1000)
      caller waits for the worker's chunk, then returns

Below ``2 * grain`` items (or with one thread) the kernel runs ``chunk(0, n)`` inline:
handing a chunk to another thread costs 10-50 µs, so each kernel family passes the
grain measured for it (`GRAIN`).

Example
-------
>>> import numpy as np
>>> x = np.arange(10.0)
>>> out = np.empty_like(x)
>>> parallel_for(x.size, lambda a, b: np.multiply(x[a:b], 2, out=out[a:b]), grain=2)
>>> out[:4]
array([0., 2., 4., 6.])
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import threading
from collections.abc import Callable, Iterator

# Minimum items per chunk per kernel family: below twice this the kernel stays on one
# core. Handing a chunk to a worker and waiting for it costs 20-40 µs (2 vCPUs of an AMD
# EPYC, Python 3.11), so a split pays when the one-thread kernel takes well over twice
# that: each grain is about half the size at which the family's one-thread time passes
# ~100 µs there (reduce: 63 µs at 2**18 elements, 230 at 2**20; softmax and the
# cross-entropies: ~110 µs at 2**16; gather: 45 µs at 2**18, 145 at 2**20; scatter
# (ufunc.at): 153 µs at 2**14; Adam update: 91 µs at 2**18).
# PROVISIONAL: these timings were taken while other jobs ran on the host, so both they
# and the grains derived from them are uncertain, and no two-thread speedup was measured.
# Re-measure on a quiet machine (each family at growing sizes inside `threads_limited(1)`
# and with its grain set to 16) before relying on them.
GRAIN = {
    "reduce": 1 << 18,      # elements read (Sum/Mean/Max/... along kept axes)
    "softmax": 1 << 15,     # logits (Softmax, LogSoftmax, the cross-entropies)
    "gather": 1 << 19,      # elements copied (GatherV2, Gather, SparseSegment*)
    "scatter": 1 << 13,     # elements scattered (ufunc.at: the segment reductions)
    # variable elements touched (Apply*, SparseApply* updates). 2**17 split the MLP
    # benchmark's 784x512 update in two and made its SGD step 2-3 % slower on 2 vCPUs
    # (the BLAS threads still spin after the products): such updates stay on one thread.
    # Adam's 784x512 update (118 us alone, at the divide/sqrt unit's pace) split in two
    # took 130-150 us while other processes used the second vCPU (best of 300; a handed-off
    # chunk starts 15-40 us late: the worker's vCPU wakes from idle). `bench_mlp.py
    # --pieces` reports both (`split_us`): re-measure alone before lowering this.
    "update": 1 << 18,
}

# Chunk boundaries are multiples of this many items, so two threads never write the
# same 64-byte cache line (and vector loops keep their alignment).
ALIGN = 16


def _default_threads() -> int:
    """``FLOWGRAPH_KERNEL_THREADS`` if set (1 turns splitting off, e.g. for an A/B
    timing), else the cores this process may run on."""
    value = os.environ.get("FLOWGRAPH_KERNEL_THREADS", "")
    if value.strip().isdigit() and int(value) >= 1:
        return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


_limit = _default_threads()
_available = _limit
_lock = threading.Lock()
_workers: list[threading.Thread] = []
_jobs: queue.SimpleQueue = queue.SimpleQueue()
_local = threading.local()


class _Job:
    """One `parallel_for` call: its chunks, handed out one at a time under `lock`."""

    __slots__ = ("bounds", "done", "error", "finished", "fn", "lock", "next")

    def __init__(self, fn: Callable[[int, int], object], bounds: list[int]) -> None:
        self.fn = fn
        self.bounds = bounds
        self.next = 0
        self.done = 0
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def work(self) -> None:
        """Run chunks until none is left to take."""
        chunks = len(self.bounds) - 1
        while True:
            with self.lock:
                k = self.next
                if k >= chunks:
                    return
                self.next = k + 1
            try:
                self.fn(self.bounds[k], self.bounds[k + 1])
            except BaseException as e:  # re-raised by the caller
                with self.lock:
                    if self.error is None:
                        self.error = e
            with self.lock:
                self.done += 1
                last = self.done == chunks
            if last:
                self.finished.set()


def _worker() -> None:
    _local.inside = True
    while True:
        job = _jobs.get()
        job.work()
        del job  # drop the reference to the kernel's arrays while idle


def _ensure_workers(n: int) -> None:
    with _lock:
        while len(_workers) < n:
            t = threading.Thread(target=_worker, name=f"flowgraph-kernel-{len(_workers)}",
                                 daemon=True)
            t.start()
            _workers.append(t)


def _after_fork() -> None:
    """A forked child has none of the parent's threads: start afresh on first need."""
    global _jobs, _lock
    _workers.clear()
    _jobs = queue.SimpleQueue()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def threads() -> int:
    """How many threads a kernel may split its work across now.

    >>> threads() >= 1
    True
    """
    return min(_limit, _available)


def set_available(n: int) -> None:
    """Cap the threads at `n` (>= 1), the cores that other processes leave free, until
    the next call (`blas_threads.ContentionPolicy`).

    >>> set_available(1); threads()
    1
    >>> set_available(_default_threads())
    """
    global _available
    _available = max(1, int(n))


@contextlib.contextmanager
def threads_limited(n: int) -> Iterator[None]:
    """Let kernels use at most `n` threads inside the block (the previous limit after).

    Process-wide, like BLAS's thread count: sessions that run at once with different
    limits see whichever was set last.

    >>> with threads_limited(1):
    ...     threads()
    1
    """
    global _limit
    if n < 1:
        raise ValueError(f"threads_limited: the thread count must be >= 1, got {n}")
    previous = _limit
    _limit = n
    try:
        yield
    finally:
        _limit = previous


def chunk_bounds(n: int, grain: int, limit: int, align: int = ALIGN) -> list[int]:
    """Boundaries ``[0, b1, ..., n]`` of at most `limit` near-equal chunks of at least
    `grain` items, inner boundaries rounded to multiples of `align`.

    >>> chunk_bounds(1000, 100, 2, align=16)
    [0, 496, 1000]
    >>> chunk_bounds(150, 100, 2)
    [0, 150]
    """
    count = max(1, min(limit, n // max(grain, 1)))
    inner = {(n * k // count) // align * align for k in range(1, count)}
    return [0, *sorted(b for b in inner if 0 < b < n), n]


def parallel_for(n: int, chunk: Callable[[int, int], object], *, grain: int,
                 align: int = ALIGN) -> None:
    """Run ``chunk(start, stop)`` over ``[0, n)`` split across the kernel threads.

    Each call must touch only its part of the output. Runs inline, as ``chunk(0, n)``,
    when ``n < 2 * grain``, with one thread, or inside another chunk.

    >>> import numpy as np
    >>> x = np.ones((64, 3))
    >>> out = np.empty(64)
    >>> parallel_for(64, lambda a, b: np.sum(x[a:b], axis=1, out=out[a:b]), grain=16)
    >>> float(out.sum())
    192.0
    """
    limit = threads()
    if n < 2 * grain or limit < 2 or getattr(_local, "inside", False):
        chunk(0, n)
        return
    bounds = chunk_bounds(n, grain, limit, align)
    if len(bounds) == 2:
        chunk(0, n)
        return
    job = _Job(chunk, bounds)
    helpers = len(bounds) - 2
    _ensure_workers(min(helpers, limit - 1))
    for _ in range(helpers):
        _jobs.put(job)
    _local.inside = True
    try:
        job.work()
    finally:
        _local.inside = False
    job.finished.wait()
    if job.error is not None:
        raise job.error


def claim_items(items: int, part: Callable[[int], object]) -> bool:
    """Run ``part(k)`` for every ``k < items`` on the kernel threads, each thread claiming
    the next item not yet taken when it finishes one, and return True; or run nothing
    and return False when there are fewer than two threads or two items (the caller
    then does the work its own way).

    A thread that gets less of its core (another process, a busy sibling) simply runs
    fewer items, so a job of several items per thread degrades gracefully where equal
    chunks (`parallel_for`) wait for the slowest thread.

    >>> import numpy as np
    >>> out = np.zeros(6)
    >>> done = claim_items(6, lambda k: out.__setitem__(k, k * k))
    >>> done == (threads() >= 2), (out.tolist() if done else [k * k for k in range(6)])
    (True, [0.0, 1.0, 4.0, 9.0, 16.0, 25.0])
    """
    limit = threads()
    if items < 2 or limit < 2:
        return False
    claim = itertools.count()  # next() on it is atomic under the GIL

    def worker(_start, _stop):
        k = next(claim)
        while k < items:
            part(k)
            k = next(claim)

    parallel_for(min(limit, items), worker, grain=1, align=1)
    return True
