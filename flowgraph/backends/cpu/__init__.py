"""The CPU backend: NumPy/SciPy kernels (Cython for hot ops), host memory.

Kernel modules (`kernels_*.py` beside this file) register with `cpu_kernel` and are
imported the first time the backend's kernel table is needed.

Example
-------
>>> from flowgraph.backends.cpu import backend
>>> backend.device_type
'CPU'
"""

from __future__ import annotations

import importlib
import os
import pkgutil

from flowgraph.backends.base import Backend, Device


class CpuBackend(Backend):
    device_type = "CPU"
    host_memory = True
    _blas_threads = None  # the `blas_threads` module, once imported

    def list_devices(self, count: int | None = None) -> list[Device]:
        n = 1 if count is None else int(count)
        return [Device(self, "CPU", i, description="NumPy/SciPy on the host") for i in range(n)]

    def blas_is_parallel(self) -> bool:
        from flowgraph.backends.cpu.blas_threads import planned_blas_threads

        return planned_blas_threads() > 1

    def intra_op_limit(self, threads: int):
        """NumPy's BLAS and the kernel pool limited to `threads` threads (the previous
        counts restored after); for 0, the contention policy's limit or None."""
        blas_threads = self._blas_threads
        if blas_threads is None:  # imported once: the session asks before every run
            from flowgraph.backends.cpu import blas_threads
            self._blas_threads = blas_threads
        if threads > 0:
            return blas_threads.intra_op_limited(threads)
        return blas_threads.contention_limited()

    def buffer_pool(self):
        """The kernels' output-buffer pool (`_buffers`), which memory budgets count."""
        from flowgraph.backends.cpu import _buffers

        return _buffers

    def load_kernels(self) -> None:
        here = os.path.dirname(__file__)
        for info in pkgutil.iter_modules([here]):
            if info.name.startswith("kernels_"):
                importlib.import_module(f"{__name__}.{info.name}")


backend = CpuBackend()


def cpu_kernel(op_type: str, dtypes=None, needs_step: bool = False, is_async: bool = False,
               fresh: bool = False):
    """Decorator registering a CPU kernel (see `flowgraph.backends.base`); ``fresh=True``
    declares that it always returns an array nobody else references
    (`Backend.register_kernel`).

    Example
    -------
    >>> import numpy as np
    >>> @cpu_kernel("MyOp")                         # doctest: +SKIP
    ... def my_op(x, *, alpha):
    ...     return x * alpha
    """
    return backend.kernel(op_type, dtypes=dtypes, needs_step=needs_step, is_async=is_async,
                          fresh=fresh)


def cpu_in_place(op_type: str):
    """Decorator registering an in-place variant of a CPU kernel (see
    `Backend.register_in_place`).

    Example
    -------
    >>> @cpu_in_place("MyOp")                       # doctest: +SKIP
    ... def my_op_in_place(x, *, alpha):
    ...     x *= alpha
    ...     return x
    """

    return backend.in_place(op_type)
