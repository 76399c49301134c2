"""Pass 7b, memory schedule: control edges that keep each device's live bytes in a budget.

Without it the executor runs whatever is ready, so a producer whose consumer also waits
for a slow chain makes its (possibly huge) value at once and holds it until the chain
ends. With a budget (``ConfigProto(memory_budget_bytes=...)`` or the per-run
``RunOptions(memory_budget_bytes=...)``, see `docs/memory.md`) this pass adds control
edges to the *plan* (the user's graph is never touched) so that producers wait until
enough memory has been released, while independent work still overlaps when the budget
allows. Without a budget it does not run.

The pass, step by step (each module opens with the part of the story it tells)::

    memory_budget     budgets per device, the buffer pool's share, `MemorySchedule`
    memory_sizes      per slot its bytes: shapes, fed shapes, sizes measured by a run
    memory_order      the plan's dependencies, the order `S`, the nodes never gated
    memory_transfers  `_Recv` nodes moved late in `S`; where a sent value counts
    memory_values     per device its values and their live ranges over `S_d`
    memory_loops      `parallel_iterations` bounded; stacks of loop gradients
    memory_gating     the windows ``K(a)`` and the control edges that enforce them

Invariants
----------
* Every edge added goes forward in `S`, a topological order of the plan's data edges,
  its control edges and each `_Send` -> `_Recv` pair, so the plan stays acyclic and no
  step can deadlock.
* Edges join nodes of one device only; no edge starts or ends at a control-flow node
  (`Switch`, `Merge`, `Enter`, `Exit`, `NextIteration`), an async node other than
  `_Recv` (queues may wait on other nodes of the step), or any node downstream of one.
  Such nodes are never gated, their values count as live for the whole step (loop
  values once per in-flight iteration), and the values they read live to the end too.
  An edge source is thus never dead and never inside a while-loop frame.
* If the budget holds the most frugal order's peak, the live bytes that step statistics
  replay stay within it (less the buffer pool's share); otherwise parts of the step run
  in `S` order and a warning gives that peak (`memory_gating.py`). A node whose own
  inputs plus outputs exceed a budget the user set is an error
  (`ResourceExhaustedError`) before anything runs.
"""

from __future__ import annotations

from flowgraph.runtime.memory_budget import (
    MemorySchedule,
    budget_key,
    default_budgets,
    device_budgets,
    pool_cap,
)
from flowgraph.runtime.memory_gating import schedule_device
from flowgraph.runtime.memory_loops import bound_loops, stack_bytes
from flowgraph.runtime.memory_order import control_flow_closure, frugal_order, predecessors
from flowgraph.runtime.memory_order import pair_key as _pair_key  # noqa: F401 (tests)
from flowgraph.runtime.memory_sizes import estimate_slot_bytes, infer_fed_shapes, measure_sizes
from flowgraph.runtime.memory_transfers import recv_alap_order
from flowgraph.runtime.memory_values import device_plan
from flowgraph.runtime.node_table import NodeTable

__all__ = ["MemorySchedule", "budget_key", "default_budgets", "device_budgets",
           "estimate_slot_bytes",
           "infer_fed_shapes", "measure_sizes", "memory_schedule", "pool_cap"]


def memory_schedule(table: NodeTable, fetch_slots: list[int], budget_spec, *,
                    defaults: dict[str, int] | None = None, pooled=(),
                    feed_shapes: dict | None = None,
                    measured: dict[str, tuple[int, int]] | None = None,
                    frames=None) -> MemorySchedule | None:
    """Add the control edges that keep `table` within `budget_spec` (see the module
    docstring); None when no device has a budget.

    `defaults`: budgets of devices the spec leaves at 0 (`default_budgets`); `pooled`:
    names of devices whose memory the CPU buffer pool shares; `feed_shapes` and
    `measured`: see `estimate_slot_bytes`; `frames` (`FrameTables`, plans with loops):
    its ``frame_parallel`` is lowered where the budget requires.

    >>> memory_schedule(NodeTable(), [], 0) is None
    True
    """
    nodes = table.nodes
    names = sorted({n.device for n in nodes})
    budgets = device_budgets(budget_spec, names, defaults)
    if not budgets:
        return None
    explicit = device_budgets(budget_spec, names)  # the others: OOM reports misfits
    sizes, unknown = estimate_slot_bytes(table, feed_shapes, measured)
    preds = predecessors(table)
    excluded = control_flow_closure(table, preds)
    order = recv_alap_order(table, frugal_order(preds), preds, excluded)
    result = MemorySchedule(budgets, order, unknown_sizes=unknown)
    node_frame = frames.node_frame if frames is not None else [0] * len(nodes)
    stacks = stack_bytes(table, sizes, measured, node_frame, frames, result)
    plans = [device_plan(table, [i for i in order if nodes[i].device == device], excluded,
                         sizes, set(fetch_slots), node_frame, stacks, device, budget,
                         device in pooled, device in explicit, preds, result)
             for device, budget in budgets.items()]
    if frames is not None and len(frames.frame_parent) > 1:
        bound_loops(plans, frames, result)
    for dp in plans:
        schedule_device(table, dp, preds, result)
    allowances = [result.pool_allowance[d] for d in budgets if d in pooled]
    result.pool_cap = min(allowances) if allowances else None
    result.needs_measure = measured is None and bool(unknown or result.needs_measure)
    table.control_edges.extend(result.edges)
    return result
