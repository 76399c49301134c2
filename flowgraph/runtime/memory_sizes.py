"""The memory schedule's value sizes: per slot of a `NodeTable` its estimated bytes.

Sizes come from static shapes and dtypes (`estimate_slot_bytes`). Where a budget is set,
the session keys plans by the fed shapes too and static shape inference runs again with
them (`infer_fed_shapes`); what neither tells (a size that depends on a fed *value*) is
counted 0, listed in `MemorySchedule.unknown_sizes`, and measured by the plan's first
run (`measure_sizes`), after which the session compiles the plan again with the measured
sizes. Plan constants count by their value; a ref output (the variable itself) counts 0;
a `_Recv` has its `_Send`'s size and a `_ToDevice` its input's::

    x: placeholder [None, 256] float32, fed (64, 256)   -> 65536 bytes
    y = tf.unique(x)[0]                                 -> 0, unknown, measured later

The values that loop gradients keep on stacks (`STACK_PUSHES`) are measured by the
first run too, for how often they were pushed (`memory_loops.stack_bytes`).
"""

from __future__ import annotations

import math

from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.runtime.memory_order import pair_key
from flowgraph.runtime.node_table import NodeTable
from flowgraph.runtime.specialize import refine_outputs

__all__ = ["STACK_PUSHES", "estimate_slot_bytes", "infer_fed_shapes", "measure_sizes"]

STACK_PUSHES = ("StackPushV2", "StackPushAt")  # input 1 is kept until popped


def estimate_slot_bytes(table: NodeTable, feed_shapes: dict | None = None,
                        measured: dict[str, tuple[int, int]] | None = None
                        ) -> tuple[list[int], list[str]]:
    """Per slot its estimated bytes, and the names of nodes with unknown output sizes.

    Static shapes first; `feed_shapes` (tensor -> shape of the value fed) refines what
    they leave unknown (`infer_fed_shapes`); `measured` (`measure_sizes`) sizes the rest.

    >>> estimate_slot_bytes(NodeTable())
    ([], [])
    """
    sizes = [0] * table.num_slots
    unknown: list[str] = []
    inferred = infer_fed_shapes(table, feed_shapes) if feed_shapes else {}
    measured = measured or {}
    for s, value in enumerate(table.initial):
        if value is not None:
            sizes[s] = int(getattr(value, "nbytes", 0) or 0)
    for t, s in table.feed_slots.items():
        n = _static_bytes(t, inferred.get(t))
        sizes[s] = n or 0
    sent: dict[tuple[str, str], int] = {}
    for node in table.nodes:
        if node.op is not None:
            missing = False
            for k, t in enumerate(node.op._outputs[:node.n_out]):
                n = _static_bytes(t, inferred.get(t))
                missing = missing or n is None
                sizes[node.out_base + k] = n or 0
            if missing:
                seen = measured.get(node.name)
                if seen is None:
                    unknown.append(node.name)
                else:  # the block's largest measured size, less what shapes told
                    block = sum(sizes[node.out_base:node.out_base + node.n_out])
                    sizes[node.out_base] += max(0, seen[0] - block)
        elif node.op_type == "_Send":
            sent[pair_key(node)] = sizes[node.input_slots[0]]
        elif node.op_type == "_Recv" and node.n_out:
            sizes[node.out_base] = sent.get(pair_key(node), 0)
        elif node.n_out and node.input_slots:  # _ToDevice: a copy of its input
            sizes[node.out_base] = sizes[node.input_slots[0]]
    return sizes, unknown


def _static_bytes(t, shape: TensorShape | None = None) -> int | None:
    if t.dtype.is_ref_dtype:
        return 0
    shape = t.shape if shape is None else shape
    if not shape.is_fully_defined():
        return None
    # A string element is at least its pointer in a NumPy object array (TF counts 0).
    element = 8 if t.dtype.base_dtype.name == "string" else t.dtype.size
    return math.prod(shape.as_list()) * element


def infer_fed_shapes(table: NodeTable, feed_shapes: dict) -> dict:
    """Static shape inference re-run with the fed shapes: per tensor whose shape the
    feeds refine, its refined `TensorShape` (feeds included).

    Each op's shape function runs again, in the table's (topological) order, on its
    inputs' refined shapes; a shape function that fails or disagrees leaves the graph's
    shape as it is. Inputs are looked up by the slot they read, so a tensor the rewrite
    pass replaced (its consumers read another op's output) still gets its refined shape.

    >>> infer_fed_shapes(NodeTable(), {})
    {}
    """
    known: dict = {}
    by_slot: dict[int, TensorShape] = {}
    for t, shape in feed_shapes.items():
        try:
            known[t] = t.shape.merge_with(as_shape(tuple(shape)))
        except (TypeError, ValueError):
            continue
        if t in table.feed_slots:
            by_slot[table.feed_slots[t]] = known[t]
    for node in table.nodes:
        op = node.op
        if op is None or not node.n_out:
            continue
        ins = op._inputs
        slots = node.input_slots if len(node.input_slots) == len(ins) and \
            not getattr(node, "fused", None) else [None] * len(ins)
        shapes_in = [by_slot.get(s, known.get(t)) for t, s in zip(ins, slots)]
        if all(shape is None for shape in shapes_in):
            continue
        for k, merged in refine_outputs(op, [t.shape if shape is None else shape
                                             for t, shape in zip(ins, shapes_in)],
                                        feed_shapes):
            known[op._outputs[k]] = merged
            if k < node.n_out:
                by_slot[node.out_base + k] = merged
    return known


def measure_sizes(cp, trace) -> dict[str, tuple[int, int]]:
    """Per node name of a traced step its largest output block (bytes) and how often it
    ran, for the nodes the memory schedule could not size (``cp.memory_schedule``) and
    the stack pushes of loop gradients.

    `trace` holds ``(node, start, end, thread, output bytes, outputs)`` rows, as a
    traced step records them (the outputs' descriptions are not read here).

    >>> from types import SimpleNamespace as NS
    >>> cp = NS(nodes=[NS(name="unique", op_type="Unique")],
    ...         memory_schedule=NS(unknown_sizes=["unique"]))
    >>> measure_sizes(cp, [(0, 0.0, 1.0, 0, 4096), (0, 2.0, 3.0, 0, 1024)])
    {'unique': (4096, 2)}
    """
    want = set(cp.memory_schedule.unknown_sizes) if cp.memory_schedule else set()
    want.update(n.name for n in cp.nodes if n.op_type in STACK_PUSHES)
    out: dict[str, tuple[int, int]] = {}
    for node, _t0, _t1, _tid, out_bytes, *_outputs in trace:
        name = cp.nodes[node].name
        if name in want:
            big, count = out.get(name, (0, 0))
            out[name] = (max(big, int(out_bytes)), count + 1)
    return out
