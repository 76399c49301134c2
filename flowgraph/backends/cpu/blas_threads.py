"""How many threads NumPy's BLAS runs a matrix product on (the CPU backend's MatMul,
convolutions and tensordot all call NumPy's BLAS), and a scoped limit on it.

The executor asks once per compiled plan: when BLAS is multi-threaded, matrix products
stay on the thread that made them ready instead of being handed to a second executor
thread, since two concurrent BLAS calls would each start all of BLAS's threads on the
same cores. The answer follows `threadpoolctl.threadpool_limits` and the
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` variables, as BLAS itself does.

Example
-------
>>> from flowgraph.backends.cpu.blas_threads import blas_threads
>>> blas_threads() >= 1
True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

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
        return _controllers


def blas_threads() -> int:
    """The largest thread count of the BLAS libraries loaded (1 when none is found)."""
    return max((c.num_threads for c in _blas_controllers()), default=1)


@contextlib.contextmanager
def blas_threads_limited(n: int) -> Iterator[None]:
    """Run BLAS on `n` threads inside the block, and restore the previous counts after.

    The setting is process-wide (BLAS has one thread pool), so two threads running
    blocks with different `n` at once see whichever was set last. Costs about 1 µs.

    >>> with blas_threads_limited(1):
    ...     blas_threads()
    1
    """
    controllers = _blas_controllers()
    previous = [c.num_threads for c in controllers]
    for c, p in zip(controllers, previous):
        if p != n:
            c.set_num_threads(n)
    try:
        yield
    finally:
        for c, p in zip(controllers, previous):
            if p != n:
                c.set_num_threads(p)
