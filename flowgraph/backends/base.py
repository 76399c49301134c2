"""The backend contract: devices, kernel tables and host transfers.

A backend names a device type (``"CPU"``, ``"OPENCL"``), lists its devices for a session
config, registers kernels per op type and dtype, and moves tensors to and from host
memory (NumPy arrays). Kernels come in two shapes:

- a function ``fn(*inputs, **attrs)`` returning one array or a tuple of arrays; only
  the attributes named in its signature are passed, bound once per plan;
- a class ``K(ctx, **attrs)`` instantiated once per session and op, whose
  ``__call__(*inputs)`` computes; used by kernels that keep state (random generators,
  variables, queues). `ctx` is a `KernelContext`.

Flags: ``needs_step`` passes the running `Step` as the first argument (for Send/Recv,
queues, timeouts); ``is_async`` makes the kernel take ``(step, done, *inputs)`` and call
``done(outputs)`` or ``done(None, error)`` later, holding no executor thread meanwhile;
``fresh`` declares that the kernel always returns an array nobody else references, which
the plan may let a consumer's in-place variant overwrite (`Backend.fresh_outputs`).

Example
-------
>>> backend = CpuBackend()                     # doctest: +SKIP
>>> @backend.kernel("Add")                      # doctest: +SKIP
... def add(x, y):
...     return np.add(x, y)
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import OpCost


@dataclass
class KernelDef:
    op_type: str
    fn: Callable
    dtypes: frozenset | None = None  # accepted dtypes of the "T" input/attr; None: any
    needs_step: bool = False
    is_async: bool = False
    attr_names: tuple[str, ...] = ()
    takes_all_attrs: bool = False
    is_class: bool = False
    fresh: bool = False  # always returns an array nobody else references
    registered_at: tuple[str, int] | None = None  # (file, line) of the registration
    # Inputs the kernel reads as host NumPy arrays (shapes, axes, sizes) on a device
    # whose memory is not the host's: the planner never moves them to the device.
    host_inputs: tuple[int, ...] = ()

    def accepts(self, dtype) -> bool:
        return self.dtypes is None or dtype is None or dtype.base_dtype in self.dtypes


@dataclass
class Device:
    """One device of a backend, named like ``/job:localhost/replica:0/task:0/device:CPU:0``."""

    backend: Backend
    device_type: str
    index: int
    job: str = "localhost"
    task: int = 0
    memory_limit: int | None = None
    description: str = ""
    # Whether placement may put ops nobody assigned here (see runtime/placement.py).
    auto_place: bool = True

    @property
    def name(self) -> str:
        return (f"/job:{self.job}/replica:0/task:{self.task}/device:"
                f"{self.device_type}:{self.index}")

    @property
    def short_name(self) -> str:
        return f"/device:{self.device_type}:{self.index}"

    def __hash__(self) -> int:
        return hash(self.name)


@dataclass
class KernelContext:
    """What a class kernel gets at construction: its op, device and session resources."""

    op: Any
    device: Device
    resources: Any  # ResourceMgr of the session
    session: Any = None
    extra: dict = field(default_factory=dict)


def _registration_site() -> tuple[str, int] | None:
    """(file, line) of the innermost caller outside this module: the kernel module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def _kernel_def(op_type: str, fn: Callable, dtypes, needs_step: bool,
                is_async: bool, fresh: bool = False, host_inputs=()) -> KernelDef:
    is_class = inspect.isclass(fn)
    target = fn.__init__ if is_class else fn
    params = list(inspect.signature(target).parameters.values())
    if is_class:
        params = params[2:]  # self, ctx
    names = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
    takes_all = any(p.kind == p.VAR_KEYWORD for p in params)
    accepted = None
    if dtypes is not None:
        accepted = frozenset(_dtypes.as_dtype(d).base_dtype for d in dtypes)
    return KernelDef(op_type, fn, accepted, needs_step, is_async, names, takes_all, is_class,
                     fresh, _registration_site(), tuple(host_inputs))


_load_lock = threading.RLock()


class Backend:
    """Base class of device backends; subclasses set `device_type` and list devices."""

    device_type: str = "ABSTRACT"
    # Whether values on this backend's devices are host NumPy arrays. Fed values,
    # constants of the plan and fetched values cross to and from other devices
    # (`from_host`, `to_host`).
    host_memory: bool = False

    def __init__(self) -> None:
        self._kernels: dict[str, list[KernelDef]] = {}
        self._in_place: dict[str, KernelDef] = {}
        self._loaded = False
        self._fresh: frozenset[str] | None = None

    # -- kernels ----------------------------------------------------------------------
    def kernel(self, op_type: str, dtypes=None, needs_step: bool = False,
               is_async: bool = False, fresh: bool = False, host_inputs=()):
        """Decorator registering a kernel for `op_type` on this backend (see
        `register_kernel`)."""

        def decorate(fn):
            self.register_kernel(op_type, fn, dtypes=dtypes, needs_step=needs_step,
                                 is_async=is_async, fresh=fresh, host_inputs=host_inputs)
            return fn

        return decorate

    def register_kernel(self, op_type: str, fn: Callable, dtypes=None,
                        needs_step: bool = False, is_async: bool = False,
                        fresh: bool = False, host_inputs=()) -> None:
        """Register kernel `fn` for `op_type`.

        `host_inputs` lists the inputs `fn` reads as host arrays on a device with memory
        of its own (`KernelDef.host_inputs`).

        ``fresh=True`` promises that on every path `fn` returns an array that nobody else
        references (new, or recycled from a pool): an in-place variant of the consuming
        op may then overwrite it (see `register_in_place` and `fresh_outputs`). A kernel
        that may return one of its inputs, a view of one, or a cached array must not set
        it.
        """
        self._kernels.setdefault(op_type, []).append(
            _kernel_def(op_type, fn, dtypes, needs_step, is_async, fresh, host_inputs))
        self._fresh = None

    @property
    def fresh_outputs(self) -> frozenset[str]:
        """Op types all of whose kernels here were registered with ``fresh=True``.

        >>> b = Backend()
        >>> b.register_kernel("New", lambda x: x + 1, fresh=True)
        >>> b.register_kernel("Same", lambda x: x)
        >>> sorted(b.fresh_outputs)
        ['New']
        """
        if getattr(self, "_fresh", None) is None:
            kernels = self.kernels()
            self._fresh = frozenset(op for op, kdefs in kernels.items()
                                    if kdefs and all(k.fresh for k in kdefs))
        return self._fresh

    def in_place(self, op_type: str):
        """Decorator registering an in-place variant of `op_type`'s kernel (see
        `register_in_place`)."""

        def decorate(fn):
            self.register_in_place(op_type, fn)
            return fn

        return decorate

    def register_in_place(self, op_type: str, fn: Callable) -> None:
        """Register `fn` as a variant of `op_type`'s kernel that may write its result into
        its input 0 and return it.

        The plan uses it for a node whose input 0 is produced by an op in
        `fresh_outputs` on the same device and read by no one else (not fetched either):
        that array then has no other owner, so overwriting it saves an allocation and a
        pass over memory. `fn` takes the same arguments as the kernel and must still
        accept any input it does not handle in place (returning a new array)::

            MatMul ──> BiasAdd ──> Relu        BiasAdd adds into MatMul's result,
                                               Relu clamps BiasAdd's result in place
        """
        self._in_place[op_type] = _kernel_def(op_type, fn, None, False, False)

    def in_place_kernel(self, op) -> Callable | None:
        """The in-place variant of `op`'s kernel, attributes bound, or None."""
        self.ensure_loaded()
        kdef = self._in_place.get(op.type)
        return None if kdef is None else bind_kernel(kdef, op, None)

    def in_place_def(self, op_type: str) -> KernelDef | None:
        """The registered in-place variant of `op_type`'s kernel, or None."""
        self.ensure_loaded()
        return self._in_place.get(op_type)

    def kernels(self) -> dict[str, list[KernelDef]]:
        self.ensure_loaded()
        return self._kernels

    def find_kernel(self, op_type: str, dtype=None) -> KernelDef | None:
        for k in self.kernels().get(op_type, ()):
            if k.accepts(dtype):
                return k
        return None

    def ensure_loaded(self) -> None:
        """Import kernel modules on first use (subclasses override `load_kernels`).

        Other threads wait until the loading thread has finished (a server's threads
        asked for kernels while the first was still importing them and saw none); the
        loading thread itself, reaching here again from a kernel module, goes on."""
        if self._loaded:
            return
        with _load_lock:
            if self._loaded or getattr(self, "_loading", False):
                return
            self._loading = True
            try:
                self.load_kernels()
            finally:
                self._loading = False
            self._loaded = True

    def load_kernels(self) -> None:
        pass

    # -- scheduling -------------------------------------------------------------------
    def hand_off(self, cost: OpCost) -> bool:
        """Whether the executor may run a ready node of this op cost class on another
        thread when the current one has other work (`OpDef.cost`). Handing off costs
        tens of microseconds, so only expensive nodes are worth it.

        >>> Backend().hand_off(OpCost.EXPENSIVE), Backend().hand_off(OpCost.CHEAP)
        (True, False)
        """
        return cost in (OpCost.EXPENSIVE, OpCost.BLAS)

    def blas_is_parallel(self) -> bool:
        """Whether this device's `OpCost.BLAS` kernels (matrix products) already use several
        cores; the plan then keeps a plan with such kernels on one executor thread."""
        return False

    def intra_op_limit(self, threads: int):
        """A context manager that runs this backend's kernels on at most `threads`
        threads while it is open (``ConfigProto.intra_op_parallelism_threads``), or None
        when the backend has no such setting. The session asks before every run, also
        with 0 (no limit asked for), where a backend may return a limit of its own (the
        CPU's while other processes keep the cores busy) or None: keep that call cheap.

        >>> Backend().intra_op_limit(1) is None
        True
        """
        return None

    # -- fusion -----------------------------------------------------------------------
    _fusion = None  # (fusible, fused_kernel) from `register_fusion`

    def register_fusion(self, fusible: Callable, fused_kernel: Callable) -> None:
        """Declare this backend's elementwise fusion (`flowgraph/runtime/fusion.py`):
        ``fusible(op) -> bool`` and ``fused_kernel(ops, operands, n_inputs, fallback)``
        (see `fused_kernel`). A kernel module calls it when it loads."""
        self._fusion = (fusible, fused_kernel)

    def fusible(self, op) -> bool:
        """Whether `op` may join a fused elementwise group on this backend.

        >>> Backend().fusible(None)
        False
        """
        self.ensure_loaded()
        return self._fusion is not None and self._fusion[0](op)

    def fused_kernel(self, ops, operands, n_inputs: int, fallback):
        """One kernel computing a group of fusible `ops` (topological order, the last
        one's output is the result), or None (the group stays unfused).
        ``operands[i][k]`` is ``("in", j)`` (the kernel's input j), ``("op", m)`` (the
        output of ``ops[m]``) or ``("const", value)`` (a one-element constant of the
        plan); `fallback(*inputs)` runs the ops one by one, and the kernel calls it for
        inputs it cannot take, so that the failing op raises its own error."""
        self.ensure_loaded()
        if self._fusion is None:
            return None
        return self._fusion[1](ops, operands, n_inputs, fallback)

    # -- devices ----------------------------------------------------------------------
    def list_devices(self, count: int | None = None) -> list[Device]:
        raise NotImplementedError

    # -- memory -----------------------------------------------------------------------
    def set_memory_fraction(self, devices: list[Device], fraction: float) -> None:
        """Limit each of `devices` to `fraction` (0 < fraction <= 1) of its memory, for
        the whole process (``GPUOptions.per_process_gpu_memory_fraction``: a session
        calls it with the devices it uses when its config sets a fraction). A backend
        with its own device memory sets ``Device.memory_limit`` to the new limit. Here:
        nothing (host memory has no such limit).

        >>> Backend().set_memory_fraction([], 0.5)
        """

    def buffer_pool(self):
        """The pool of reusable output arrays the backend's kernels keep in host memory
        (``held_bytes()``, ``push_cap(n)`` / ``pop_cap(n)``; docs/memory.md), or None.

        >>> Backend().buffer_pool() is None
        True
        """
        return None

    def memory_stats(self, device: Device) -> dict | None:
        """The allocator counters of `device` (bytes: ``bytes_allocated``, taken from
        the device now, cache included; ``bytes_in_use``, by live tensors;
        ``peak_bytes_allocated``; ``bytes_limit``), or None when the backend keeps none.

        >>> Backend().memory_stats(None) is None
        True
        """
        return None

    # -- transfers --------------------------------------------------------------------
    def synchronize(self, device: Device) -> None:
        """Wait until the work enqueued on `device` has run (the Session calls it at the
        end of each step on devices without host memory; kernels there may return before
        their work is done)."""

    def to_host(self, value, device: Device):
        """Return `value` (this backend's representation) as a NumPy array."""
        return value

    def to_host_async(self, value, device: Device, done, failed) -> None:
        """Copy `value` to the host and call ``done(host_array)`` when it is there, or
        ``failed(exception)``; a backend whose copies are asynchronous returns at once
        (the `_Send` of a cross-device pair uses it, so no executor thread waits)."""
        try:
            host = self.to_host(value, device)
        except Exception as e:
            failed(e)
            return
        done(host)

    def from_host(self, value: np.ndarray, device: Device):
        """Return host array `value` in this backend's representation on `device`."""
        return value

    def wrap_host(self, value: np.ndarray, device: Device):
        """`from_host` for a value that nothing changes before the step ends (fed values,
        the plan's constants): a backend whose device reads host memory may share it."""
        return self.from_host(value, device)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} device_type={self.device_type}>"


def bind_kernel(kdef: KernelDef, op, ctx_factory: Callable[[], KernelContext]):
    """The callable the executor invokes for `op`: attrs bound, class kernels built."""
    attrs = op.attrs
    if kdef.takes_all_attrs:
        kwargs = {k: v for k, v in attrs.items() if not k.startswith("_")}
    else:
        kwargs = {k: attrs[k] for k in kdef.attr_names if k in attrs}
    if "op" in kdef.attr_names:
        kwargs["op"] = op
    if kdef.is_class:
        return kdef.fn(ctx_factory(), **kwargs)
    if not kwargs:
        return kdef.fn
    return functools.partial(kdef.fn, **kwargs)
