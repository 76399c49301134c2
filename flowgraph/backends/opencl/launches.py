"""Kernel launches prepared once per signature, so that a repeated launch costs only the
buffers that change and the enqueue.

A plan runs the same node on the same shapes every step, yet a kernel computed its
launch from scratch each call: collapsed dimensions, strides, scalar arguments, work
sizes, and all arguments set again on a kernel object shared by every shape. Here a
kernel function describes its launch once, under a *signature* (a hashable key naming
the op and everything its scalar arguments and work sizes depend on: shapes, strides,
offsets, dtypes, attributes), and gets back a `Launch`: a kernel object of its own with
every scalar argument already set, the work sizes, and the positions of the buffer
arguments. A later call with the same signature sets only those buffers and enqueues::

    signature ('Add', (64,), (4,), 0, float32, ...)  ->  Launch(knl, global=(256,),
                                                                buffers at 0, 1, 3)
    call:  knl.set_arg(0, out) ; knl.set_arg(1, x) ; knl.set_arg(3, y) ; enqueue

A kernel function that launches several kernels (a reduction's passes, a product with
packing) keeps them together: `make` builds each `Launch` without keeping it, or a
`Recorder` stands in for the launching function during the first call and names every
buffer by its role (input k, output, temporary), so that a `Replay` repeats the
sequence with new inputs, a fresh output and fresh temporaries from the pool.

State: `DeviceRuntime.launches`, a dict per device (a signature never crosses devices),
emptied when it reaches `MAX_LAUNCHES` entries (plans whose shapes change every step
rebuild their launches rather than growing it). Invariant: a `Launch`'s kernel object is
used by nobody else, so its scalar arguments never change after `prepare`; setting its
buffers and enqueueing is one step under the device's submission lock
(``DeviceRuntime.lock``, which uploads and pool allocations take too), since executor
threads share launches.

Example
-------
>>> import numpy as np
>>> from flowgraph.backends.opencl.launches import buffer_positions
>>> buffer_positions([object(), np.int32(3), object()])
(0, 2)
"""

from __future__ import annotations

import numpy as np

MAX_LAUNCHES = 4096


def buffer_positions(args) -> tuple[int, ...]:
    """Indices of the arguments in `args` that are buffers (anything but NumPy scalars)."""
    return tuple(i for i, a in enumerate(args) if not isinstance(a, np.generic))


class Launch:
    """One prepared launch: its own kernel object with the scalar arguments set, the
    global and local work sizes, the positions of its buffer arguments, and what the
    kernel function needs to make the output (`shape`, `dtype`; None where unused)."""

    __slots__ = ("buffers", "cl", "dtype", "global_size", "knl", "local_size", "lock",
                 "queue", "shape")

    def __init__(self, rt, knl, global_size, local_size, args, shape=None, dtype=None):
        knl.set_arg_types([a.dtype if isinstance(a, np.generic) else None for a in args])
        knl.set_args(*args)  # a kernel of its own: nobody else sets its arguments yet
        self.knl = knl
        self.lock = rt.lock
        self.buffers = buffer_positions(args)
        self.global_size = tuple(int(g) for g in global_size)
        self.local_size = None if local_size is None else tuple(int(v) for v in local_size)
        self.queue = rt.queue
        self.cl = rt.cl  # the module: its enqueue function is looked up per call (tests wrap it)
        self.shape = shape
        self.dtype = dtype

    def __call__(self, *buffers) -> None:
        """Set the buffer arguments (in the order of `buffers`) and enqueue, under the
        device's submission lock (another thread may run this launch at the same time)."""
        knl = self.knl
        with self.lock:
            for pos, buf in zip(self.buffers, buffers, strict=True):
                knl.set_arg(pos, buf)
            self.cl.enqueue_nd_range_kernel(self.queue, knl, self.global_size, self.local_size)


def make(rt, source: str, name: str, global_size, local_size, args, shape=None,
         dtype=None) -> Launch:
    """A `Launch` of kernel `name` of `source` on device runtime `rt` with `args` (buffers
    and NumPy scalars) as its arguments, kept by nobody: a kernel launching several times
    keeps them together under one signature (`keep`)."""
    knl = rt.cl.Kernel(rt.program(source), name)  # a kernel object of its own
    return Launch(rt, knl, global_size, local_size, args, shape, dtype)


def keep(rt, signature, entry):
    """Keep `entry` (a `Launch`, or what a kernel makes of several) under `signature` in
    `rt.launches`; returns it."""
    table = rt.launches
    if len(table) >= MAX_LAUNCHES:
        table.clear()
    table[signature] = entry
    return entry


def prepare(rt, signature, source: str, name: str, global_size, local_size, args,
            shape=None, dtype=None) -> Launch:
    """Make and keep the `Launch` of kernel `name` of `source` under `signature` (`make`,
    `keep`); run it with ``launch(*buffers)``. `shape`/`dtype` are stored for the
    caller (the output it makes)."""
    entry = make(rt, source, name, global_size, local_size, args, shape, dtype)
    return keep(rt, signature, entry)


class Recorder:
    """Stands in for `kernels_elementwise.launch` during one call of a kernel function
    that launches several kernels: each launch runs at once through a kernel object of
    its own, and `finish` names each of its buffers by role: one of the call's `inputs`
    (by position), the call's output, or a temporary the call allocated. Only for kernel
    functions whose every other buffer is such a temporary (no scratch or constant
    buffers kept between calls) and that enqueue nothing but through the recorder."""

    def __init__(self, inputs) -> None:
        self.inputs = [x.base_data for x in inputs]
        self.steps: list[tuple[Launch, list]] = []

    def usable(self) -> bool:
        """Whether the inputs' buffers are distinct (else their roles are ambiguous)."""
        return len({id(b) for b in self.inputs}) == len(self.inputs)

    def __call__(self, rt, knl, global_size, local_size, *args) -> None:
        entry = Launch(rt, rt.cl.Kernel(knl.program, knl.function_name), global_size,
                       local_size, args)
        buffers = [args[i] for i in entry.buffers]
        self.steps.append((entry, buffers))
        entry(*buffers)

    def finish(self, out) -> Replay:
        """The `Replay` of the recorded launches, whose result is device array `out`."""
        temps: dict[int, tuple[int, int]] = {}  # id(buffer) -> (number, bytes)
        plan = []
        for entry, buffers in self.steps:
            roles = []
            for buf in buffers:
                found = [i for i, x in enumerate(self.inputs) if x is buf]
                if found:
                    roles.append(found[0])
                elif buf is out.base_data:
                    roles.append(OUT)
                else:
                    number, _ = temps.setdefault(id(buf), (len(temps), buf.size))
                    roles.append(TEMP - number)
            plan.append((entry, tuple(roles)))
        sizes = [size for _, size in sorted(temps.values())]
        return Replay(tuple(plan), sizes, out.shape, out.dtype, len(self.inputs))


OUT, TEMP = -1, -2  # roles of `Replay` buffers: input i >= 0, output, temporary TEMP - k


class Replay:
    """Launches recorded by a `Recorder`, repeated for new inputs: a fresh output of
    `shape`/`dtype` and temporaries of the recorded sizes come from the device's pool.

    Each launch's roles become positions in one list of a call's buffers (the inputs',
    the output's, the temporaries'), so that a call only indexes it."""

    __slots__ = ("dtype", "plan", "shape", "temps")

    def __init__(self, plan, temps, shape, dtype, n_inputs: int = 0) -> None:
        def position(r):
            return r if r >= 0 else n_inputs if r == OUT else n_inputs + 1 + (TEMP - r)

        self.plan = tuple((entry, tuple(position(r) for r in roles)) for entry, roles in plan)
        self.temps, self.shape, self.dtype = tuple(temps), shape, dtype

    def __call__(self, rt, *inputs):
        out = rt.empty(self.shape, self.dtype)
        buffers = [x.base_data for x in inputs]
        buffers.append(out.base_data)
        for size in self.temps:
            buffers.append(rt.pool(size))
        for entry, positions in self.plan:
            entry(*[buffers[i] for i in positions])
        return out
