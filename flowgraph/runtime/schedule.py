"""Pass 7, schedule: what the executor needs to order nodes and to free values.

- *Control edges*: an op's control inputs that the plan runs become executor edges.
- *Use counts*: per slot, the nodes reading it plus the fetches; the executor frees a
  value when its count reaches zero.
- *Hand-off*: whether a ready node may run on another executor thread
  (`FLAG_HAND_OFF`). Handing a node over costs tens of microseconds, so only ops of
  cost class `OpCost.EXPENSIVE` or `OpCost.BLAS` qualify, as the backend decides
  (`Backend.hand_off`), and not:

  * optimizer updates of small variables (`HAND_OFF_MIN_ELEMENTS`), cheaper than the
    hand-over, and other expensive ops (a loss, a gather) over that few elements;
  * matrix products known to be small (`HAND_OFF_MIN_FLOPS`, from the static shapes or,
    where the graph left a dimension unknown, the shapes inferred from this compile's
    fed values): on one BLAS thread, two 2-MFLOP products took 44 µs inline and 78-92
    µs handed off. (A finished plan that `plan_cache` hands to an identical graph keeps
    the choices made for the shapes of its first compile: speed, never values.)
  * any node of a device whose matrix products already run on a multi-threaded BLAS,
    when the plan has such products: BLAS's threads already use the cores, and a second
    executor thread only competes with them (the MLP step: 2-5 % slower with it).

Loop frames, also scheduling, are `frames.py`'s.
"""

from __future__ import annotations

import math

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable
from flowgraph.runtime.specialize import infer_shapes

# An optimizer update of a variable with fewer elements than this runs where it becomes
# ready: handing a node to another thread costs tens of microseconds (a wake-up and GIL
# hand-overs), more than such an update takes.
HAND_OFF_MIN_ELEMENTS = 1 << 15
# A matrix product of fewer floating-point operations than this runs where it becomes
# ready. Measured on the 2-vCPU host with one BLAS thread, two independent products of
# a fed batch (best of 3 x 300 runs): 4.2 MFLOP each 78 µs inline vs 111 handed off,
# 8.4 MFLOP 148 vs 151, 9.4 MFLOP 160 vs 154 (the cut), 16.8 MFLOP 277 vs 213 (hand-off wins from
# here), 205 MFLOP 3,053 vs 1,666.
HAND_OFF_MIN_FLOPS = 9e6
_PRODUCTS = frozenset({"MatMul", "BatchMatMul", "BatchMatMulV2"})
# Expensive ops whose work is bounded by their operands' size (not a convolution, whose
# work grows with the filter, nor an op that waits or calls Python).
_SIZED = frozenset({
    "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Gather",
    "GatherV2", "GatherNd", "MaxPool", "MaxPoolV2", "AvgPool", "MaxPoolGrad",
    "MaxPoolGradV2", "AvgPoolGrad", "LRN", "LRNGrad"})


def schedule(table: NodeTable, fetch_tensors: list[Tensor],
             feed_shapes: dict | None = None) -> list[int]:
    """Set hand-off flags, control edges and use counts on `table`; return the fetches'
    slots. `feed_shapes` (tensor -> this compile's fed shape) sizes the matrix products
    whose static shapes leave a dimension unknown."""
    _mark_hand_off(table, feed_shapes)
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


def _mark_hand_off(table: NodeTable, feed_shapes: dict | None) -> None:
    blas_devices = {n.placed_on for _, n in table.op_nodes()
                    if n.op.op_def.cost is OpCost.BLAS}
    blas_bound = {d.name for d in blas_devices if d.backend.blas_is_parallel()}
    shape_of = _ShapesOf(table, feed_shapes)
    for _, node in table.op_nodes():
        backend = node.placed_on.backend
        if backend.hand_off(node.op.op_def.cost) and node.device not in blas_bound and \
                not _known_small(node.op, shape_of):
            node.flags |= _executor.FLAG_HAND_OFF
            node.hand_off = True


def _known_small(op: Operation, shape_of) -> bool:
    """True when `op` is known to take less than a hand-off (`shape_of`: tensor -> its
    shape in this compile):

    * an update op (`Apply*`: its ref output is the variable, so its work is the
      variable's size) whose variable has fewer than `HAND_OFF_MIN_ELEMENTS` elements;
    * a matrix product of fewer than `HAND_OFF_MIN_FLOPS`;
    * a loss, gather, pool or normalization (`_SIZED`: ops whose work is bounded by
      their operands' size) whose inputs and outputs hold fewer than
      `HAND_OFF_MIN_ELEMENTS` elements together (a loss over a [64, 10] batch).

    Ops of unknown shapes never are.
    """
    if op.type in _PRODUCTS:
        flops = _product_flops(op, shape_of)
        return flops is not None and flops < HAND_OFF_MIN_FLOPS
    if op.op_def.ref_outputs:
        shape = op._outputs[0].shape
        return shape.is_fully_defined() and \
            math.prod(shape.as_list()) < HAND_OFF_MIN_ELEMENTS
    if op.type not in _SIZED:
        return False
    total = 0
    for t in (*op._inputs, *op._outputs):
        shape = shape_of(t)
        if not shape.is_fully_defined():
            return False
        total += math.prod(shape.as_list())
    return total < HAND_OFF_MIN_ELEMENTS


class _ShapesOf:
    """tensor -> its shape in this compile: the static shape, or, when that leaves a
    dimension unknown, the one inferred from the fed shapes (`specialize.infer_shapes`
    over the plan's ops, run once and only when asked)."""

    def __init__(self, table: NodeTable, feed_shapes: dict | None) -> None:
        self._table, self._feed_shapes, self._inferred = table, feed_shapes, None

    def __call__(self, t: Tensor) -> TensorShape:
        shape = t.shape
        if shape.is_fully_defined() or not self._feed_shapes:
            return shape
        if self._inferred is None:
            ops = [op for _, n in self._table.op_nodes()
                   for op in (n.fused if n.fused else (n.op,))]
            self._inferred = infer_shapes(ops, self._feed_shapes)
        return self._inferred.get(t, shape)


def _product_flops(op: Operation, shape_of=None) -> float | None:
    """Floating-point operations of a `MatMul`/`BatchMatMul[V2]` from its inputs' shapes
    (`shape_of`: tensor -> shape; by default the static ones); None when a rank or a
    dimension is unknown."""
    dims = []
    for t in op._inputs[:2]:
        shape = t.shape if shape_of is None else shape_of(t)
        if shape.dims is None or len(shape.dims) < 2 or not shape.is_fully_defined():
            return None
        dims.append(shape.as_list())
    a, b = dims
    transpose_a = op.attrs.get("transpose_a") or op.attrs.get("adj_x")
    transpose_b = op.attrs.get("transpose_b") or op.attrs.get("adj_y")
    m, k = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    n = b[-2] if transpose_b else b[-1]
    stack = max(math.prod(a[:-2]), math.prod(b[:-2]), 1)
    return 2.0 * stack * m * n * k
