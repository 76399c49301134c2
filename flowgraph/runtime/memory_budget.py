"""Memory budgets per device, the buffer pool's share of them, and `MemorySchedule`, the
record of what the memory schedule (`memory_schedule.py`) decided.

Budgets come from the run's or the config's spec, else from the device's default
(`default_budgets`: an OpenCL device's memory limit; none on the CPU). On a device whose
memory the CPU buffer pool shares (``pooled``) the pool is lent ``budget // 8`` (less
where a node needs more than the rest; `memory_values.device_plan`) and the schedule
works with the remainder; once the edges are in, the pool also gets what the gated step
can never hold (`memory_gating.window_peak`), and is capped at its share during the
plan's runs (`pool_cap`). A budget with room to spare thus leaves the pool every array
the step reuses (a tight one makes the step allocate them anew)::

    budget 16 MiB on CPU:0, gated peak 9 MiB
    pool allowance = 16 // 8 = 2 MiB, then + (14 - 9) = 7 MiB; the schedule keeps 14
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

__all__ = ["POOL_FRACTION", "MemorySchedule", "budget_key", "default_budgets",
           "device_budgets", "pool_cap"]

POOL_FRACTION = 8  # a pooled device lends at least 1/8 of its budget to the CPU pool


@dataclass
class MemorySchedule:
    """What the pass decided (kept on the compiled plan as ``cp.memory_schedule``).

    `budgets` and `sequential_peak` map device names to bytes; `order` is the global
    memory-frugal order (node indices); `edges` the control edges added; `unknown_sizes`
    names nodes whose outputs' shapes were unknown (counted as 0 bytes).

    >>> MemorySchedule({"/device:CPU:0": 1 << 20}).edges
    []
    """

    budgets: dict[str, int]
    order: list[int] = field(default_factory=list)
    sequential_peak: dict[str, int] = field(default_factory=dict)
    edges: list[tuple[int, int]] = field(default_factory=list)
    unknown_sizes: list[str] = field(default_factory=list)
    # Per pooled (CPU) device the bytes lent to the buffer pool; `pool_cap`, the pool's
    # cap during this plan's runs (None: no pooled device has a budget).
    pool_allowance: dict[str, int] = field(default_factory=dict)
    pool_cap: int | None = None
    # Per while-loop frame name its ``parallel_iterations`` as bounded here, and per
    # device the bytes counted for loop frames and the stacks of loop gradients.
    loop_parallel: dict[str, int] = field(default_factory=dict)
    loop_bytes: dict[str, int] = field(default_factory=dict)
    stack_bytes: dict[str, int] = field(default_factory=dict)
    # True when sizes the shapes cannot tell (unknown dims, stack depths) were guessed:
    # the session traces the plan's next run and recompiles with `measure_sizes`.
    needs_measure: bool = False
    # The pools `pool_cap` caps, found on the plan's first run (the step reuses them).
    pools: list | None = field(default=None, repr=False, compare=False)


def device_budgets(spec, device_names: list[str], defaults: dict[str, int] | None = None
                   ) -> dict[str, int]:
    """Per device name its budget in bytes, from a config value (0 or absent: the
    device's default from `defaults`, else none).

    `spec` is an int (every device) or a dict keyed by device name, short name
    (``/device:CPU:0``) or device type (``CPU``). `defaults` holds the default budgets
    (`default_budgets`: an OpenCL device's memory limit; none on the CPU).

    >>> device_budgets({"CPU": 1 << 20}, ["/job:localhost/replica:0/task:0/device:CPU:0"])
    {'/job:localhost/replica:0/task:0/device:CPU:0': 1048576}
    """
    out: dict[str, int] = {}
    defaults = defaults or {}
    for name in device_names:
        if isinstance(spec, dict):
            short = name[name.find("/device:"):] if "/device:" in name else name
            dtype = short.split(":")[-2] if short.count(":") >= 2 else short
            value = spec.get(name, spec.get(short, spec.get(dtype, 0)))
        else:
            value = spec or 0
        if value == 0 and not isinstance(value, bool):
            value = defaults.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"memory_budget_bytes for {name} must be a non-negative int "
                             f"(bytes; 0 for no budget), but got {value!r}")
        if value:
            out[name] = value
    return out


def budget_key(spec):
    """A hashable form of a budget spec, for plan caches.

    >>> budget_key({"CPU": 4096})
    (('CPU', 4096),)
    """
    return tuple(sorted(spec.items())) if isinstance(spec, dict) else spec


def default_budgets(devices) -> dict[str, int]:
    """The budget a device gets when the config sets none: its memory limit on devices
    with memory of their own (OpenCL, ``Device.memory_limit``); none on the CPU.

    >>> default_budgets([])
    {}
    """
    return {d.name: int(d.memory_limit) for d in devices
            if not d.backend.host_memory and d.memory_limit}


@contextlib.contextmanager
def pool_cap(schedule: MemorySchedule | None, devices=()):
    """Cap the buffer pools of `devices`' backends (the CPU's, `Backend.buffer_pool`)
    at ``schedule.pool_cap`` bytes while a budgeted step runs (nothing without one).

    >>> with pool_cap(None):
    ...     pass
    """
    if schedule is None or schedule.pool_cap is None:
        yield
        return
    pools = schedule.pools
    if pools is None:  # pools whose own limit the cap lowers, once per plan
        found = {id(p): p for p in (d.backend.buffer_pool() for d in devices)
                 if p is not None and schedule.pool_cap < getattr(p, "BUDGET", math.inf)}
        pools = schedule.pools = list(found.values())
    for pool in pools:
        pool.push_cap(schedule.pool_cap)
    try:
        yield
    finally:
        for pool in pools:
            pool.pop_cap(schedule.pool_cap)
