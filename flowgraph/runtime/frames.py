"""Pass 9, frames: the while-loop frame every node runs in (plans with control flow).

A `tf.while_loop` is an `Enter` → `Merge` → `Switch` → body → `NextIteration` cycle
closed by `Exit`. Frame 0 is the root; an `Enter` opens (or re-enters) the child frame
named by its ``frame_name`` attribute, an `Exit` returns to the parent. Every other node
runs in the frame of its inputs, which must agree: a value computed inside a loop leaves
it only through an `Exit`. The executor gets, per node, its frame and its kind (what it
does with its outputs), per `Enter` the frame it enters, per slot the frame its value
lives in, and per frame its parent and ``parallel_iterations``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowgraph.framework.operation import Operation
from flowgraph.framework.registry import OpCost
from flowgraph.runtime import _executor
from flowgraph.runtime.node_table import NodeTable

_KIND = {"enter": _executor.KIND_ENTER, "exit": _executor.KIND_EXIT,
         "next_iteration": _executor.KIND_NEXT}


@dataclass
class FrameTables:
    """The executor's frame tables (arguments of `Plan.set_frames`)."""

    node_frame: list[int]
    node_kind: list[int]
    enter_child: list[int]
    slot_frame: list[int] = field(default_factory=list)
    frame_parent: list[int] = field(default_factory=lambda: [-1])
    frame_parallel: list[int] = field(default_factory=lambda: [1])
    frame_id: dict[str, int] = field(default_factory=lambda: {"": 0})

    def as_args(self) -> tuple:
        return (self.node_frame, self.node_kind, self.enter_child, self.slot_frame,
                self.frame_parent, self.frame_parallel)


def assign_frames(table: NodeTable, fetch_slots: list[int]) -> FrameTables:
    """Frame tables for `table`; raises ValueError for loops the executor cannot run."""
    n = len(table.nodes)
    ft = FrameTables([0] * n, [0] * n, [-1] * n)
    frame_of: dict[Operation, int] = {}
    for i, node in table.op_nodes():
        frame_of[node.op] = ft.node_frame[i] = f = _input_frame(table, node.op, frame_of,
                                                                  ft, i)
        _enter_or_leave(node.op, f, i, ft)
    ft.slot_frame = [0] * table.num_slots
    for _, node in table.op_nodes():
        f = _out_frame(node.op, frame_of, ft)
        for k in range(node.n_out):
            ft.slot_frame[node.out_base + k] = f
    if len(ft.frame_parent) > 1:
        _check_loop_boundaries(table, fetch_slots, frame_of, ft)
        drawing = [i for i, node in table.op_nodes()
                   if ft.node_frame[i] and draws_from_stream(node.op)]
        producer = table.producers() if drawing else {}
        in_order = [i for i in drawing if not _waits_for_work(table, i, ft, producer)]
        for i in in_order:
            table.nodes[i].flags |= _executor.FLAG_IN_ORDER
        if in_order:
            for _, node in table.op_nodes():
                if node.op.op_def.cost is not OpCost.CHEAP:
                    node.flags |= _executor.FLAG_FLUSH_IN_ORDER
    return ft


def _waits_for_work(table: NodeTable, i: int, ft: FrameTables, producer: dict) -> bool:
    """Whether random op `i` depends, within one iteration of its loop (not through the
    loop's Merge), on an op that is not cheap (a matrix product: dropout on a cell's
    output whose batch is unknown). Then it becomes ready after its iteration's work,
    one iteration after another, and runs at once, so it draws in step order as in
    TensorFlow; the nodes it depends on are flagged ``FLAG_LEADS_IN_ORDER``, so that
    among the successors a node makes ready they run first, as under TensorFlow's
    first-in-first-out executor (LIFO, the loop's next iteration would run first)."""
    seen, todo, ancestors, work = {i}, [i], [], False
    while todo:
        k = todo.pop()
        node = table.nodes[k]
        sources = [producer.get(s) for s in node.input_slots]
        sources += [table.node_of.get(c) for c in node.op._control_inputs]
        for j in sources:
            if j is None or j in seen or ft.node_frame[j] != ft.node_frame[i]:
                continue
            seen.add(j)
            source = table.nodes[j]
            if source.op is None or source.op.op_def.control_flow == "merge":
                continue
            ancestors.append(source)
            work = work or source.op.op_def.cost is not OpCost.CHEAP
            todo.append(j)
    if work:
        for source in ancestors:
            source.flags |= _executor.FLAG_LEADS_IN_ORDER
    return work


def draws_from_stream(op: Operation) -> bool:
    """Whether each run of `op` takes the next values of a random stream (a seeded random
    op, or one drawing from a `tf.random` generator's state): inside a loop, the order
    of its iterations' runs then decides their values, and the executor follows
    TensorFlow's (`FLAG_IN_ORDER`)."""
    op_def = op.op_def
    return op_def.stateful and ("seed2" in op_def.attrs or op.type.startswith("Stateful"))


def _out_frame(op: Operation, frame_of: dict, ft: FrameTables) -> int:
    """The frame `op`'s outputs live in."""
    cf = op.op_def.control_flow
    if cf == "enter":
        return ft.frame_id[op.attrs["frame_name"]]
    if cf == "exit":
        return ft.frame_parent[frame_of[op]]
    return frame_of[op]


def _input_frame(table: NodeTable, op: Operation, frame_of: dict, ft: FrameTables,
                 i: int) -> int:
    """The frame `op` runs in: that of its (non-constant) inputs, which must agree."""
    found: list[tuple[int, Operation]] = []
    for t in op._inputs:
        if t in table.feed_slots:
            continue
        producer = table.replace.get(t, t)
        if producer in table.constants:
            continue
        p = producer.op
        if p not in frame_of:
            if op.op_def.control_flow == "merge" and \
                    p.op_def.control_flow == "next_iteration":
                ft.node_kind[i] = _executor.KIND_LOOP_MERGE
                continue
            raise AssertionError(f"op {p.name} is not scheduled before {op.name}")
        found.append((_out_frame(p, frame_of, ft), p))
    for c in op._control_inputs:
        if c in frame_of:
            found.append((_out_frame(c, frame_of, ft), c))
    f = found[0][0] if found else 0
    for g, producer in found:
        if g != f:
            raise ValueError(
                f"Op '{op.name}' ({op.type}) mixes values from different loop frames: "
                f"'{found[0][1].name}' and '{producer.name}'. A tensor computed inside "
                "a tf.while_loop can only be used outside it through the loop's "
                "results, and an outside tensor enters a loop only through the loop's "
                "own Enter ops (build the loop with tf.while_loop).")
    return f


def _enter_or_leave(op: Operation, f: int, i: int, ft: FrameTables) -> None:
    """Record what node `i` (running in frame `f`) does to frames: Enter, Exit, Next."""
    cf = op.op_def.control_flow
    if cf == "enter":
        name = op.attrs["frame_name"]
        child = ft.frame_id.get(name)
        if child is None:
            child = ft.frame_id[name] = len(ft.frame_parent)
            ft.frame_parent.append(f)
            ft.frame_parallel.append(max(1, int(op.attrs.get("parallel_iterations", 10))))
        elif ft.frame_parent[child] != f:
            raise ValueError(f"Enter op '{op.name}' enters frame '{name}' from two "
                             "different parent frames.")
        ft.enter_child[i] = child
        ft.node_kind[i] = (_executor.KIND_CONST_ENTER if op.attrs.get("is_constant")
                           else _executor.KIND_ENTER)
    elif cf in _KIND:
        ft.node_kind[i] = _KIND[cf]
        if cf == "exit" and f == 0:
            raise ValueError(f"Exit op '{op.name}' is not inside a while loop frame.")


def _check_loop_boundaries(table: NodeTable, fetch_slots: list[int], frame_of: dict,
                           ft: FrameTables) -> None:
    if any(n.op_type == "_Send" for n in table.nodes):
        raise ValueError("tf.while_loop across devices is not supported yet: place the "
                         "loop's ops on one device.")
    for s in fetch_slots:
        if ft.slot_frame[s] != 0:
            raise ValueError(
                "Cannot fetch a tensor computed inside a tf.while_loop: it has one value "
                "per iteration. Fetch the loop's results (its Exit tensors) instead.")
    for t in table.feed_slots:
        for op in t.consumers():
            if op in frame_of and frame_of[op] != 0:
                raise ValueError(f"Cannot feed {t.name}: it is used inside a tf.while_loop.")
