"""Pass 6, bind kernels: the callable and executor flags of every op node.

Each op node gets its backend's kernel for the op's dtype with the op's attributes bound
(`KernelCache`, one per session: class kernels keep state such as a random generator or
a queue, so a session builds each once and every plan shares it). The pass then adapts
the kernel to the executor's calling convention:

- a ref input (a variable) that the op only reads is dereferenced to a read-only view
  of the variable's array before the call;
- an async kernel registers its completion with the step, so that cancelling the step
  completes it;
- the flags tell the executor to pass the step (`FLAG_NEEDS_STEP`), to call back
  (`FLAG_ASYNC`), that the node is a `Merge` (`FLAG_MERGE`) or has several outputs
  (`FLAG_MULTI_OUT`).

A `_ToDevice` node (`partition.py`) of a plan constant uploads it once per plan: the
device copy its first step made serves every later step (`upload_once`).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.base import Device, KernelContext, KernelDef, bind_kernel
from flowgraph.framework.operation import Operation
from flowgraph.framework.resources import VariableState
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable
from flowgraph.runtime.placement import kernel_dtype


class KernelCache:
    """Bound kernels per (op, device) for one session, built on first use.

    >>> from flowgraph.framework.resources import ResourceMgr   # doctest: +SKIP
    >>> cache = KernelCache(ResourceMgr(), session=None)        # doctest: +SKIP
    """

    def __init__(self, resources, session) -> None:
        self._resources = resources
        self._session = session
        self._bound: dict = {}

    def bound(self, op: Operation, device: Device, kdef: KernelDef):
        """The kernel callable for (op, device)."""
        key = (op, device.name)
        k = self._bound.get(key)
        if k is None:
            k = bind_kernel(kdef, op, lambda: KernelContext(op, device, self._resources,
                                                            self._session))
            self._bound[key] = k
        return k

    def host_kernel(self, host: Device, op: Operation):
        """A kernel for constant folding on `host`, or None: stateful, step-taking and
        async kernels never run at plan time."""
        kdef = host.backend.find_kernel(op.type, kernel_dtype(op))
        if kdef is None or kdef.is_class or kdef.needs_step or kdef.is_async:
            return None
        return self.bound(op, host, kdef)

    def clear(self) -> None:
        self._bound.clear()


def bind_kernels(table: NodeTable, cache: KernelCache, host: Device | None = None) -> None:
    """Set `kernel` and the kernel-derived `flags` of every op node of `table`.

    An integer or boolean op on a device without host memory also gets `host`'s kernel,
    used for a call whose inputs are all small host arrays (`_small_on_host`)."""
    for _, node in table.op_nodes():
        op, device = node.op, node.placed_on
        kdef = device.backend.find_kernel(op.type, kernel_dtype(op))
        kernel = cache.bound(op, device, kdef)
        if host is not None and not device.backend.host_memory and not kdef.is_async \
                and not kdef.needs_step and not op.op_def.stateful:
            dtype = kernel_dtype(op)
            if dtype is not None and (dtype.is_integer or dtype.is_bool):
                on_host = cache.host_kernel(host, op)
                if on_host is not None:
                    kernel = _small_on_host(kernel, on_host)
        flags = 0
        if kdef.needs_step:
            flags |= _executor.FLAG_NEEDS_STEP
        if kdef.is_async:
            flags |= _executor.FLAG_ASYNC
        if op.op_def.control_flow == "merge":
            flags |= _executor.FLAG_MERGE
        elif op.op_def.control_flow == "trigger":  # never dead: run like a _Send
            flags |= _executor.FLAG_TRANSFER
        if len(op._outputs) > 1:
            flags |= _executor.FLAG_MULTI_OUT
        read_refs = tuple(k for k, t in enumerate(op._inputs)
                          if t.dtype.is_ref_dtype and not op.op_def.is_ref_input(k))
        if read_refs:
            if kdef.is_async:
                kernel = _deref_async(kernel, read_refs, op.name)
            else:
                shift = 1 if kdef.needs_step else 0
                kernel = _deref(kernel, tuple(p + shift for p in read_refs), op.name)
        if kdef.host_inputs and not device.backend.host_memory:
            shift = 2 if kdef.is_async else (1 if kdef.needs_step else 0)
            kernel = _inputs_to_host(kernel, tuple(p + shift for p in kdef.host_inputs),
                                     device)
        if kdef.is_async:
            kernel = _cancellable_async(kernel)
        elif len(op._outputs) == 1 and callable(op.op_def.num_outputs):
            kernel = _one_of_many(kernel)
        node.kernel = kernel
        node.flags |= flags
    for node in table.nodes:
        if node.op is None and node.op_type == "_ToDevice" and \
                table.initial[node.input_slots[0]] is not None:
            node.kernel = upload_once(node.kernel)


def _one_of_many(kernel):
    """`kernel` of an op whose output count follows its attributes (``ShapeN``,
    ``DynamicPartition``, ``Split``), built with one output: its kernel returns a
    sequence of values, of which the executor takes the one."""
    def call(*args):
        result = kernel(*args)
        if isinstance(result, list | tuple) and len(result) == 1:
            return result[0]
        return result

    return call


def upload_once(kernel):
    """`kernel` (a `_ToDevice` of a plan constant) run on the first call only; later
    calls return its result again. Nothing writes into that device array: a `_ToDevice`
    result never counts as fresh, so no in-place kernel variant takes it (`in_place.py`),
    and variables copy what they are assigned."""
    cached: list = []

    def call(value):
        if cached and cached[0] is value:
            return cached[1]
        result = kernel(value)
        cached[:] = [value, result]
        return result

    return call


def readonly(value):
    """A read-only view of a variable's array. Kernels only read their inputs and
    Session.run copies non-writeable fetched arrays, so in-place updates (the optimizers'
    Apply* kernels) never change an array a user already fetched."""
    if type(value) is np.ndarray:
        value = value.view()
        value.flags.writeable = False
    return value


def _deref(kernel, positions: tuple[int, ...], op_name: str):
    def call(*args):
        args = list(args)
        for p in positions:
            v = args[p]
            if isinstance(v, VariableState):
                args[p] = readonly(v.read(op_name))
        return kernel(*args)

    return call


def _deref_async(kernel, positions: tuple[int, ...], op_name: str):
    def call(step, done, *args):
        args = list(args)
        for p in positions:
            if isinstance(args[p], VariableState):
                args[p] = readonly(args[p].read(op_name))
        return kernel(step, done, *args)

    return call


SMALL_ON_HOST = 4096  # elements, all inputs together


def _small_on_host(kernel, host_kernel):
    """Run integer arithmetic on small host inputs (shapes, sizes, indices from a feed)
    on the host, as TensorFlow keeps int32 tensors of a GPU in host memory: a device
    kernel would return a device array that the next shape input must wait for."""

    def call(*args):
        total = 0
        for a in args:
            if not isinstance(a, np.ndarray | np.generic):
                return kernel(*args)
            total += a.size
        if total > SMALL_ON_HOST:
            return kernel(*args)
        return host_kernel(*args)

    return call


def _inputs_to_host(kernel, positions: tuple[int, ...], device):
    """Hand the kernel's host inputs (`KernelDef.host_inputs`) over as host arrays: the
    planner never moves them to the device, but one computed there (a shape from device
    arithmetic) arrives as a device array and is copied back, which waits for the
    device."""
    backend = device.backend

    def call(*args):
        for p in positions:
            if p < len(args) and not isinstance(args[p], np.ndarray | np.generic):
                args = list(args)
                args[p] = backend.to_host(args[p], device)
        return kernel(*args)

    return call


def _cancellable_async(kernel):
    """Register an async kernel's completion with the step so a cancel can fire it."""

    def call(step, done, *args):
        step.pending_async.append(done)
        if step.cancelled is not None:
            done(None, step.cancelled)
            return None
        return kernel(step, done, *args)

    return call
