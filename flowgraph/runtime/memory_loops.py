"""While loops under the memory schedule: in-flight iterations and gradient stacks.

A node inside a `while_loop` frame is never gated (`memory_order.py`); its block counts
once per in-flight iteration of its frame and of every enclosing frame (the frame's
per-iteration live set, an upper bound: every block of the body). `bound_loops` lowers
``parallel_iterations`` (the largest first, one at a time) until each device's loop
bytes fit what the rest of the step leaves at its sequential peak::

    budget 10 MiB, the rest of the step peaks at 6 MiB: 4 MiB left for loops
    body 1 MiB per iteration, parallel_iterations=10 -> 10 MiB; lowered to 4 -> 4 MiB

The values that loop gradients keep on stacks (`StackPushV2`, `StackPushAt`) count for
the whole step (`stack_bytes`): the pushed value's size times the pushes measured in the
first run (before that, times the in-flight iterations).
"""

from __future__ import annotations

import logging

from flowgraph.runtime.memory_budget import MemorySchedule
from flowgraph.runtime.memory_gating import windows
from flowgraph.runtime.memory_sizes import STACK_PUSHES
from flowgraph.runtime.memory_values import DevicePlan
from flowgraph.runtime.node_table import NodeTable

__all__ = ["bound_loops", "in_flight", "stack_bytes"]

# One logger for the whole pass, whichever of its modules reports.
_log = logging.getLogger("flowgraph.runtime.memory_schedule")


def in_flight(frame: int, parallel: list[int], parent: list[int]) -> int:
    """How many iterations of `frame` can be in flight at once: the product of
    ``parallel`` over the frame and its enclosing frames (frame 0 is outside every loop).

    >>> in_flight(2, [1, 10, 4], [0, 0, 1])  # frame 2 (4 at once) inside frame 1 (10)
    40
    """
    m = 1
    while frame > 0:
        m *= parallel[frame]
        frame = parent[frame]
    return m


def stack_bytes(table: NodeTable, sizes: list[int], measured, node_frame: list[int],
                frames, result: MemorySchedule) -> dict[int, int]:
    """Per stack push node the bytes its stack keeps: the pushed value times the pushes
    measured in an earlier run, or, unmeasured, times the in-flight iterations (and then
    ``result.needs_measure`` is set).

    >>> stack_bytes(NodeTable(), [], None, [], None, MemorySchedule({}))
    {}
    """
    out = {}
    for i, n in enumerate(table.nodes):
        if n.op_type not in STACK_PUSHES or len(n.input_slots) < 2:
            continue
        seen = (measured or {}).get(n.name)
        if seen is not None:
            count = seen[1]
        else:
            result.needs_measure = True
            count = 1 if frames is None else in_flight(node_frame[i], frames.frame_parallel,
                                                       frames.frame_parent)
        out[i] = sizes[n.input_slots[1]] * count
    return out


def bound_loops(plans: list[DevicePlan], frames, result: MemorySchedule) -> None:
    """Lower ``parallel_iterations`` until every device's loop values (one
    per-iteration live set per in-flight iteration) fit what the rest of the step
    leaves of its budget at its sequential peak; then scale the loop values' sizes by
    their in-flight iterations (`frames.frame_parallel` and `result` get the bounds)."""
    parallel = list(frames.frame_parallel)
    parent = frames.frame_parent

    def loop_bytes(dp: DevicePlan) -> int:
        return sum(v.size * in_flight(v.frame, parallel, parent) for v in dp.values if v.frame)

    room = {}
    for dp in plans:
        rest = [v for v in dp.values if not v.frame]
        room[dp.device] = dp.budget - windows(rest, len(dp.gated), dp.budget)[1]
    while True:
        over = [dp for dp in plans if loop_bytes(dp) > room[dp.device]]
        chains = set()
        for dp in over:
            for v in dp.values:
                f = v.frame
                while f > 0:
                    chains.add(f)
                    f = parent[f]
        candidates = [f for f in chains if parallel[f] > 1]
        if not candidates:
            if over:
                _log.warning(
                    "memory budget on %s: one iteration of each while loop needs %d "
                    "bytes, more than the %d the rest of the step leaves; the loops run "
                    "one iteration at a time and may exceed it", over[0].device,
                    loop_bytes(over[0]), room[over[0].device])
            break
        f = max(candidates, key=lambda f: (parallel[f], -f))
        parallel[f] -= 1
    names = {fid: name for name, fid in frames.frame_id.items()}
    result.loop_parallel = {names.get(f, str(f)): parallel[f] for f in range(1, len(parallel))}
    frames.frame_parallel[:] = parallel
    for dp in plans:
        result.loop_bytes[dp.device] = loop_bytes(dp)
        for v in dp.values:
            if v.frame:
                v.size *= in_flight(v.frame, parallel, parent)
                v.frame = 0
