"""Pass 7, schedule: what the executor needs to order nodes and to free values.

- *Control edges*: an op's control inputs that the plan runs become executor edges.
- *Use counts*: per slot, the nodes reading it plus the fetches; the executor frees a
  value when its count reaches zero.
- *Hand-off*: whether a ready node may run on another executor thread
  (`FLAG_HAND_OFF`). Handing a node over costs tens of microseconds, so only ops of
  cost class `OpCost.EXPENSIVE` or `OpCost.BLAS` qualify, as the backend decides
  (`Backend.hand_off`), and not:

  * optimizer updates of small variables (`HAND_OFF_MIN_ELEMENTS`), cheaper than the
    hand-over;
  * any node of a device whose matrix products already run on a multi-threaded BLAS,
    when the plan has such products: BLAS's threads already use the cores, and a second
    executor thread only competes with them (the MLP step: 2-5 % slower with it).

Loop frames, also scheduling, are `frames.py`'s.
"""

from __future__ import annotations

import math

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable

# An optimizer update of a variable with fewer elements than this runs where it becomes
# ready: handing a node to another thread costs tens of microseconds (a wake-up and GIL
# hand-overs), more than such an update takes.
HAND_OFF_MIN_ELEMENTS = 1 << 15


def schedule(table: NodeTable, fetch_tensors: list[Tensor]) -> list[int]:
    """Set hand-off flags, control edges and use counts on `table`; return the fetches'
    slots."""
    _mark_hand_off(table)
    for i, node in table.op_nodes():
        for c in node.op._control_inputs:
            j = table.node_of.get(c)
            if j is not None:
                table.control_edges.append((j, i))
    uses = [0] * table.num_slots
    for node in table.nodes:
        for s in node.input_slots:
            uses[s] += 1
    fetch_slots = [table.tensor_slot(t) for t in fetch_tensors]
    for s in fetch_slots:
        uses[s] += 1
    table.uses = uses
    return fetch_slots


def _mark_hand_off(table: NodeTable) -> None:
    blas_devices = {n.placed_on for _, n in table.op_nodes()
                    if n.op.op_def.cost is OpCost.BLAS}
    blas_bound = {d.name for d in blas_devices if d.backend.blas_is_parallel()}
    for _, node in table.op_nodes():
        backend = node.placed_on.backend
        if backend.hand_off(node.op.op_def.cost) and not _known_small(node.op) and \
                node.device not in blas_bound:
            node.flags |= _executor.FLAG_HAND_OFF
            node.hand_off = True


def _known_small(op: Operation) -> bool:
    """True for an update op (`Apply*`, its ref output is the variable, so its work is
    the variable's size) whose variable has a known shape below `HAND_OFF_MIN_ELEMENTS`.
    Other ops' work is not bounded by their outputs' size (a matmul to a scalar, a sleep).
    """
    if not op.op_def.ref_outputs:
        return False
    shape = op._outputs[0].shape
    return shape.is_fully_defined() and \
        math.prod(shape.as_list()) < HAND_OFF_MIN_ELEMENTS
