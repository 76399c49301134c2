"""How many threads NumPy's BLAS runs a matrix product on (the CPU backend's MatMul,
convolutions and tensordot all call NumPy's BLAS), a scoped limit on it, and the policy
that lowers it while other processes keep the cores busy.

The executor asks once per compiled plan: when BLAS is multi-threaded, matrix products
stay on the thread that made them ready instead of being handed to a second executor
thread, since two concurrent BLAS calls would each start all of BLAS's threads on the
same cores. The answer follows `threadpoolctl.threadpool_limits` and the
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` variables, as BLAS itself does.

Contention policy
-----------------
OpenBLAS splits each product evenly across its threads, and they wait for each other by
spinning. When another busy process shares a core, the thread on that core gets a
fraction of it while its partners spin: a 2-thread product then takes up to 10x its
time, where one thread would take about 2x (a 64x64 by 64x128 product: 1 MFLOP, 52-67
µs on one thread, 630-980 µs on two with a dozen processes runnable on 2 cores). So a
daemon thread (`ContentionPolicy`, started with the first plan that asks
`blas_threads`) reads ten times a second how many threads are runnable
(``/proc/loadavg``), subtracts itself and this process's own running threads (its CPU
time over the wall time), scales that to the cores this process may run on, and every
half second recommends the cores left free, rounded, at least 1. From
`SPLIT_MIN_OTHERS` busy threads on, a step also runs BLAS on one thread and splits each
large matrix product (``MatMul``, `kernels_math._split_matmul`) into row blocks that the
kernel threads claim one at a time: those threads block when idle instead of spinning,
so the process keeps its fair share of every core and a thread that gets less of its
core runs fewer blocks::

    2 cores, nothing else running      others 0.0   -> 2 BLAS threads
    one busy process per core          others ~2    -> products split on 2 kernel threads
    a dozen busy processes             others ~10   -> 1 BLAS thread, products split
    the busy processes end             others 0.0   -> 2 BLAS threads again

(The MLP step of `bench_mlp.py` beside 2 busy processes on 2 cores, median of 8 rounds:
10.7-11.6 ms split, 12.7-13.9 ms with 2 BLAS threads, 16.0-17.9 ms with the policy off;
quiet, 4.2 ms. Best rounds are closer, 6.5-8.1 ms for all three: the scheduler's luck
moves a round more than the threads do.)

(CPU time cannot tell these apart: other processes can use at most the cores there
are, however many wait for them; the policy measured it that way until session 20 and
so never acted.)

The kernel pool (`kernel_pool.set_available`) follows the recommendation at once. BLAS's
thread count is only changed on the thread that runs a step, for the step
(`contention_limited`, which the CPU backend's `intra_op_limit(0)` returns), never from
the sampling thread: OpenBLAS's own thread pool is not meant to be resized while
another thread is inside a product. The policy stands aside where the user decided:
``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``FLOWGRAPH_BLAS_POLICY=off`` in the
environment, ``intra_op_parallelism_threads`` in the session's config, and whenever
BLAS's thread count is not the one it had when the policy started (``threadpool_limits``
in user code). Without ``/proc/loadavg`` it does nothing.

Example
-------
>>> from flowgraph.backends.cpu.blas_threads import blas_threads
>>> blas_threads() >= 1
True
>>> ContentionPolicy.threads_for(cores=2, others=3.0)
1
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

from flowgraph.backends.cpu import kernel_pool

_lock = threading.Lock()
_controllers: list | None = None


def _blas_controllers() -> list:
    """threadpoolctl's handles on the BLAS libraries loaded in this process (found once:
    NumPy loads its BLAS when it is imported, before any plan is built)."""
    global _controllers
    with _lock:
        if _controllers is None:
            from threadpoolctl import ThreadpoolController

            _controllers = [c for c in ThreadpoolController().lib_controllers
                            if c.user_api == "blas"]
            ContentionPolicy.start(_controllers)
        return _controllers


def blas_threads() -> int:
    """The largest thread count of the BLAS libraries loaded (1 when none is found)."""
    return max((c.num_threads for c in _blas_controllers()), default=1)


_active_limits: list[int] = []  # the counts of the `blas_threads_limited` blocks open now
_base_counts: list[int] = []  # BLAS's counts before the first of them opened


@contextlib.contextmanager
def blas_threads_limited(n: int) -> Iterator[None]:
    """Run BLAS on `n` threads inside the block, and restore the previous counts after.

    The setting is process-wide (BLAS has one thread pool). Blocks may overlap on several
    threads: BLAS runs at the count of the most recently opened block still open, and
    returns to the counts it had before the first one once all are closed (whatever
    order they close in). Costs about 1 µs.

    >>> with blas_threads_limited(1):
    ...     blas_threads()
    1
    """
    controllers = _blas_controllers()
    entry = [n]  # a distinct object per block, removed by identity
    with _lock:
        if not _active_limits:
            _base_counts[:] = [c.num_threads for c in controllers]
        _active_limits.append(entry)
        _apply(controllers, [n] * len(controllers))
    try:
        yield
    finally:
        with _lock:
            for i, e in enumerate(_active_limits):
                if e is entry:
                    del _active_limits[i]
                    break
            wanted = ([_active_limits[-1][0]] * len(controllers) if _active_limits
                      else list(_base_counts))
            _apply(controllers, wanted)


def _apply(controllers: list, counts: list[int]) -> None:
    for c, k in zip(controllers, counts):
        if c.num_threads != k:
            _set_num_threads(c, k)


def _set_num_threads(controller, count: int) -> None:
    """Set `controller`'s BLAS thread count from whichever thread asks.

    threadpoolctl 3.8 lets only one Python thread (the first that set a limit, while it
    lives) change OpenBLAS's process-wide count; its ``set_num_threads`` silently does
    nothing on any other thread. flowgraph limits BLAS on the thread that runs a step
    (executor, Estimator, distributed stage threads), and serializes its own changes
    under `_lock`, so it calls the library's setter without that guard."""
    unguarded = getattr(controller, "_real_set_num_threads", None)
    (unguarded or controller.set_num_threads)(count)


@contextlib.contextmanager
def intra_op_limited(n: int) -> Iterator[None]:
    """BLAS and the kernel pool on at most `n` threads inside the block
    (``ConfigProto.intra_op_parallelism_threads``).

    >>> with intra_op_limited(1):
    ...     blas_threads(), kernel_pool.threads()
    (1, 1)
    """
    with blas_threads_limited(n), kernel_pool.threads_limited(n):
        yield


def contention_limited():
    """A context manager running BLAS on the threads `ContentionPolicy` recommends while
    other processes keep cores busy, or None when BLAS can keep its threads (no
    contention, no policy, or a thread count the user chose).

    >>> contention_limited() is None or hasattr(contention_limited(), "__enter__")
    True
    """
    policy = ContentionPolicy.current
    if policy is None:
        return None
    threads, split = policy.recommended, policy.split_products
    if threads >= policy.default and not split:
        return None
    now = max((c.num_threads for c in policy.controllers), default=1)
    if now != policy.default:  # a limit set by the user (threadpool_limits) wins
        return None
    return _policy_limited(1 if split else threads, split)


# Other processes' runnable threads (cores' worth) from which a step splits its large
# products across the kernel threads instead of BLAS's spinning ones.
SPLIT_MIN_OTHERS = 0.75

_policy_depth = 0  # how many `contention_limited` blocks are open
_split_depth = 0  # how many of them split products across the kernel threads


def products_split() -> bool:
    """Whether a step runs now in which the contention policy asks large matrix products
    to be split across the kernel threads, each part on one BLAS thread (see the module
    docstring); the CPU's MatMul asks before each large product.

    >>> products_split()
    False
    """
    return _split_depth > 0


@contextlib.contextmanager
def _policy_limited(threads: int, split: bool = False) -> Iterator[None]:
    global _policy_depth, _split_depth
    _policy_depth += 1
    _split_depth += split
    try:
        with blas_threads_limited(threads):
            yield
    finally:
        _policy_depth -= 1
        _split_depth -= split


def planned_blas_threads() -> int:
    """BLAS's thread count as plans should assume it: inside a step that the contention
    policy runs on fewer threads, the count it had before (a plan compiled during such a
    step outlives the step; its hand-off choices must not depend on the host's load).

    >>> planned_blas_threads() >= 1
    True
    """
    policy = ContentionPolicy.current
    if _policy_depth and policy is not None:
        return policy.default
    return blas_threads()


def _runnable(path: str = "/proc/loadavg") -> int | None:
    """Threads runnable on the whole machine now (the 4th field of ``/proc/loadavg``,
    "runnable/total"), or None where the file is missing or unreadable."""
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


class ContentionPolicy:
    """Recommends BLAS threads (and caps the kernel pool's) at the cores other processes
    leave free, re-decided every `interval` seconds on a daemon thread (see the module
    docstring). `current` is the running policy, if any."""

    interval = 0.5
    current: ContentionPolicy | None = None

    def __init__(self, controllers: list, cores: set[int]) -> None:
        self.controllers = controllers
        self.cores = cores
        self.default = max((c.num_threads for c in controllers), default=1)
        self.recommended = self.default
        self.split_products = False

    @staticmethod
    def threads_for(cores: int, others: float) -> int:
        """Threads for `cores` cores of which other processes used `others` cores' worth:
        all of them while the others fit beside them (``others <= cores``), else the
        cores the excess leaves, at least 1.

        Measured on 2 vCPUs (benchmarks/bench_mlp.py, SGD step): with two busy processes
        beside it (``others`` ~2), two BLAS threads beat one (15.8 vs 17.9 ms a step);
        with a dozen (load 7-14), one thread was 6x faster than two.

        >>> ContentionPolicy.threads_for(4, 2.6), ContentionPolicy.threads_for(4, 6.6)
        (4, 1)
        """
        if others <= cores:
            return cores
        return max(1, min(cores, int(2 * cores - others + 0.5)))

    @staticmethod
    def enabled(environ=None) -> bool:
        """False where the environment fixes BLAS's threads or turns the policy off.

        >>> ContentionPolicy.enabled({"FLOWGRAPH_BLAS_POLICY": "off"})
        False
        """
        env = os.environ if environ is None else environ
        return not (env.get("FLOWGRAPH_BLAS_POLICY", "").lower() in ("off", "0", "false")
                    or env.get("OPENBLAS_NUM_THREADS") or env.get("OMP_NUM_THREADS"))

    @classmethod
    def start(cls, controllers: list) -> None:
        """Start the policy's thread once per process, where it applies."""
        if cls.current is not None or not controllers or not cls.enabled():
            return
        try:
            cores = os.sched_getaffinity(0)
        except (AttributeError, OSError):
            return
        if len(cores) < 2 or max(c.num_threads for c in controllers) < 2 \
                or _runnable() is None:
            return
        cls.current = policy = cls(controllers, cores)
        threading.Thread(target=policy.run, name="flowgraph-blas-policy", daemon=True).start()

    def others(self, runnable: float, own: float) -> float:
        """Cores' worth of threads of other processes that want to run, on this
        process's cores: `runnable`, the machine's mean runnable threads over a sample
        (which counts the sampling thread), less `own`, this process's mean running
        threads (its CPU seconds per second), scaled to the share of the machine's
        cores this process may use."""
        share = len(self.cores) / max(os.cpu_count() or 1, len(self.cores))
        return max(0.0, runnable - 1.0 - own) * share

    def update(self, others: float) -> int:
        """Take a new sample's figure: the recommendation, whether to split products,
        and the kernel pool's cap."""
        self.recommended = self.threads_for(min(len(self.cores), self.default), others)
        self.split_products = len(self.cores) >= 2 and others >= SPLIT_MIN_OTHERS
        # Kernel threads block when idle, so a split product keeps its share of the cores
        # however busy they are; BLAS's threads spin, and are cut instead.
        kernel_pool.set_available(len(self.cores) if self.split_products
                                  else self.threads_for(len(self.cores), others))
        return self.recommended

    def run(self) -> None:
        polls = 5
        cpu, wall = time.process_time(), time.monotonic()
        while True:
            counts = []
            for _ in range(polls):
                time.sleep(self.interval / polls)
                count = _runnable()
                if count is None:
                    return
                counts.append(count)
            cpu_now, wall_now = time.process_time(), time.monotonic()
            own = (cpu_now - cpu) / max(wall_now - wall, 1e-3)
            self.update(self.others(sum(counts) / polls, own))
            cpu, wall = cpu_now, wall_now
