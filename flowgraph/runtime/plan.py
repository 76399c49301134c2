"""Run-plan compilation: from (fetches, targets, feeds) to an executor `Plan`.

Passes, in order: prune (`prune.py`), rewrite (`rewrite.py`: CSE and constant
folding), prune again with folded tensors as sources, place (`placement.py`),
partition (one ``_Send``/``_Recv`` pair per tensor per destination device), bind
kernels, and flatten into the Cython executor's arrays. A compiled plan is cached by
the session per run signature, so a repeated `run` does no graph analysis.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flowgraph.backends.base import Device
from flowgraph.framework import errors
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost
from flowgraph.framework.resources import VariableState
from flowgraph.runtime import _executor
from flowgraph.runtime.placement import _kernel_dtype, place
from flowgraph.runtime.prune import needed_ops
from flowgraph.runtime.rewrite import eliminate_common_subexpressions, fold_constants


@dataclass
class NodeInfo:
    """Per executor node: what it is, for traces and error messages."""

    name: str
    op_type: str
    device: str
    op: Operation | None
    inputs: list[str] = field(default_factory=list)
    hand_off: bool = False  # may run on another thread when the ready one is busy
    in_place: bool = False  # its kernel writes its result into its input 0


class Rendezvous:
    """Per-step mailbox for `_Send`/`_Recv` pairs, keyed by tensor and devices."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}
        self._waiters: dict[str, Any] = {}

    def send(self, key: str, value) -> None:
        with self._lock:
            waiter = self._waiters.pop(key, None)
            if waiter is None:
                self._values[key] = value
                return
        waiter(value)

    def recv(self, key: str, done) -> None:
        with self._lock:
            if key in self._values:
                value = self._values.pop(key)
            else:
                self._waiters[key] = done
                return
        done(value)


_cancel_lock = threading.Lock()


class StepContext:
    """What kernels flagged ``needs_step`` receive: step id, options, rendezvous.

    It is also the step's cancellation point: `cancel(exc)` (a timeout, a closed session)
    aborts the executor `Step`, fails every async kernel still in flight (so the caller
    stops waiting for a completion that may never come), and sets `cancellation_event()`,
    on which a blocking kernel can wait instead of sleeping blindly.
    """

    __slots__ = ("_event", "cancelled", "options", "pending_async", "rendezvous", "session",
                 "step", "step_id")

    def __init__(self, step_id: int, session, options, rendezvous: bool = True) -> None:
        self.step_id = step_id
        self.session = session
        self.options = options
        self.rendezvous = Rendezvous() if rendezvous else None
        self.step = None
        self.cancelled: BaseException | None = None
        self.pending_async: list = []
        self._event: threading.Event | None = None

    def cancellation_event(self) -> threading.Event:
        """An Event set when the step is cancelled (created on first use)."""
        ev = self._event
        if ev is None:
            with _cancel_lock:
                if self._event is None:
                    self._event = threading.Event()
                    if self.cancelled is not None:
                        self._event.set()
                ev = self._event
        return ev

    def cancel(self, exc: BaseException) -> None:
        """Abort the step with `exc` (the first error wins)."""
        with _cancel_lock:
            if self.cancelled is None:
                self.cancelled = exc
            ev = self._event
        if ev is not None:
            ev.set()
        step = self.step
        if step is not None:
            step.cancel(exc)
        for done in list(self.pending_async):
            done(None, exc)


class CompiledPlan:
    """An executable plan plus what the session needs to feed and fetch it."""

    def __init__(self) -> None:
        self.plan: _executor.Plan | None = None
        self.feed_slots: dict[Tensor, int] = {}
        self.fetch_slots: list[int] = []
        self.deref_fetch: list[bool] = []
        self.nodes: list[NodeInfo] = []
        self.devices: list[Device] = []
        self.partition_graphs: list[dict] = []
        self.num_folded = 0
        self.num_cse = 0
        self.needs_rendezvous = False
        # For step statistics (read only when tracing): per node its input slots and
        # (first output slot, output count); per slot its initial use count and device.
        self.node_inputs: list[list[int]] = []
        self.node_outputs: list[tuple[int, int]] = []
        self.slot_uses: list[int] = []
        self.slot_device: list[str] = []
        self.source_slots: list[int] = []
        self.ops: list[Operation] = []


def _readonly(value):
    """A read-only view of a variable's array. Kernels only read their inputs and
    Session.run copies non-writeable fetched arrays, so in-place updates (the optimizers'
    Apply* kernels) never change an array a user already fetched."""
    if type(value) is np.ndarray:
        value = value.view()
        value.flags.writeable = False
    return value


# An optimizer update of a variable with fewer elements than this runs where it becomes
# ready: handing a node to another thread costs tens of microseconds (a wake-up and GIL
# hand-overs), more than such an update takes.
HAND_OFF_MIN_ELEMENTS = 1 << 15


def _known_small(op) -> bool:
    """True for an update op (`Apply*`, its ref output is the variable, so its work is
    the variable's size) whose variable has a known shape below `HAND_OFF_MIN_ELEMENTS`.
    Other ops' work is not bounded by their outputs' size (a matmul to a scalar, a sleep).
    """
    if not op.op_def.ref_outputs:
        return False
    shape = op._outputs[0].shape
    return shape.is_fully_defined() and \
        math.prod(shape.as_list()) < HAND_OFF_MIN_ELEMENTS


def _write_in_place(ops, node_of, placement, nodes, kernels, inputs, out_base,
                    uses) -> None:
    """Bind in-place kernel variants (`Backend.register_in_place`) where it is safe.

    A node may overwrite its input 0 when that slot is the output of a node whose op is in
    its backend's `fresh_outputs` (a new array nobody else references), on the same
    device, and this node is its only use (not fetched, not read by another node), also
    through a chain of `Identity` nodes (the gradients' `tf.tuple`) used once each::

        MatMul ──> BiasAdd ──> Relu ──┬─> MatMul      BiasAdd and Relu write in place
                                      └─> ReluGrad    (Relu's result is read twice: kept)
    """
    producer = {out_base[i]: i for i in range(len(nodes))}

    def owned(slot: int, device: str, fresh: frozenset) -> bool:
        """The slot's value is a fresh array read only by its one consumer on `device`;
        an `Identity` passes its input on as it is, so it is followed."""
        while True:
            p = producer.get(slot)
            if p is None or uses[slot] != 1 or nodes[p].op is None or \
                    nodes[p].device != device:
                return False
            if nodes[p].op_type in fresh:
                return True
            if nodes[p].op_type != "Identity":
                return False
            slot = inputs[p][0]

    for op in ops:
        i = node_of[op]
        if not inputs[i] or inputs[i][0] in inputs[i][1:] or \
                any(t.dtype.is_ref_dtype for t in op._inputs):  # (kernel wrapped to deref)
            continue
        backend = placement[op].backend
        if not owned(inputs[i][0], nodes[i].device, backend.fresh_outputs):
            continue
        kernel = backend.in_place_kernel(op)
        if kernel is not None:
            kernels[i] = kernel
            nodes[i].in_place = True


def _deref_wrapper(kernel, positions: tuple[int, ...], op_name: str):
    def call(*args):
        args = list(args)
        for p in positions:
            v = args[p]
            if isinstance(v, VariableState):
                args[p] = _readonly(v.read(op_name))
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


def _deref_async_wrapper(kernel, positions: tuple[int, ...], op_name: str):
    def call(step, done, *args):
        args = list(args)
        for p in positions:
            if isinstance(args[p], VariableState):
                args[p] = _readonly(args[p].read(op_name))
        return kernel(step, done, *args)

    return call


def compile_plan(session, fetch_tensors: list[Tensor], target_ops: list[Operation],
                 feed_tensors: list[Tensor], done_ops: set[Operation] | None = None
                 ) -> CompiledPlan:
    """Compile the plan computing `fetch_tensors` and running `target_ops`.

    `feed_tensors` are supplied at run time (their producers are cut off); ops in
    `done_ops` count as already run (partial runs) and never run again.
    """
    fed = set(feed_tensors)
    for t in feed_tensors:
        if not session.graph.is_feedable(t):
            raise ValueError(f"Tensor {t.name} may not be fed.")
    for t in fetch_tensors:
        if not session.graph.is_fetchable(t.op):
            raise ValueError(f"Operation '{t.op.name}' has been marked as not fetchable.")
    for op in target_ops:
        if not session.graph.is_fetchable(op):
            raise ValueError(f"Operation '{op.name}' has been marked as not fetchable.")
    ops = _prune_with_replacements(fetch_tensors, target_ops, fed, set(), {}, done_ops)
    opts = session.optimizer_options
    replace: dict[Tensor, Tensor] = {}
    if opts.do_common_subexpression_elimination:
        replace = eliminate_common_subexpressions(ops, fed)
    # A constant with control inputs (a constant inside a tf.cond branch or a loop body)
    # must run where it is: its control inputs make it dead or tie it to an iteration.
    gated = {op._outputs[0] for op in ops if op.type == "Const" and op._control_inputs}
    known: dict[Tensor, Any] = {}
    if opts.do_constant_folding:
        known = fold_constants(ops, fed | gated, replace, session._host_kernel,
                               opts.max_folded_constant_in_bytes)
    else:
        known = {op._outputs[0]: op.attrs["value"] for op in ops
                 if op.type == "Const" and op._outputs[0] not in fed
                 and op._outputs[0] not in gated}

    def canon(t: Tensor) -> Tensor:
        return replace.get(t, t)

    # Second prune: folded tensors are sources; CSE redirects edges.
    cut = set(known)
    fetch_canon = [canon(t) for t in fetch_tensors]
    ops = _prune_with_replacements(fetch_canon, target_ops, fed, cut, replace, done_ops)
    has_cf = any(op.op_def.control_flow for op in ops)
    placement = place(ops, session.devices, session.config.allow_soft_placement)
    if session.config.log_device_placement:
        for op in ops:
            session._log_placement(op, placement[op])

    cp = CompiledPlan()
    cp.num_cse = len({t.op for t in replace})
    cp.num_folded = sum(1 for t in known if t.op.type != "Const")
    kernels: list = []
    inputs: list[list[int]] = []
    out_base: list[int] = []
    n_out: list[int] = []
    flags: list[int] = []
    initial: list = []
    slot_of: dict[Tensor, int] = {}
    nodes: list[NodeInfo] = []

    def new_slot(value=None) -> int:
        initial.append(value)
        return len(initial) - 1

    for t in feed_tensors:
        slot_of[t] = new_slot()
        cp.feed_slots[t] = slot_of[t]
    for t, value in known.items():
        if t not in slot_of:
            slot_of[t] = new_slot(value)
    node_of: dict[Operation, int] = {}
    for op in ops:
        node_of[op] = len(kernels)
        base = len(initial)
        for t in op._outputs:
            slot = new_slot()
            if t not in fed and t not in known:
                slot_of[t] = slot
        out_base.append(base)
        n_out.append(len(op._outputs))
        kernels.append(None)
        inputs.append([])
        flags.append(0)
        nodes.append(NodeInfo(op.name, op.type, placement[op].name, op))

    def source_slot(t: Tensor) -> int:
        if t in fed:
            return slot_of[t]
        return slot_of[canon(t)]

    # Cross-device edges: one _Send/_Recv pair per tensor per destination device.
    recv_slot: dict[tuple[int, str], int] = {}
    send_pairs: list[tuple[int, int]] = []
    producer_device: dict[int, Device] = {}
    for op in ops:
        for k in range(len(op._outputs)):
            producer_device[out_base[node_of[op]] + k] = placement[op]
    partitions: dict[str, list[dict]] = {}
    for op in ops:
        dev = placement[op]
        for t in op._inputs:
            slot = source_slot(t)
            src_dev = producer_device.get(slot)
            if src_dev is None or src_dev is dev or t.dtype.is_ref_dtype:
                inputs[node_of[op]].append(slot)
                continue
            key = (slot, dev.name)
            if key not in recv_slot:
                rkey = f"{t.name};{src_dev.name};{dev.name}"
                send_node = len(kernels)
                kernels.append(_make_send(rkey, src_dev))
                inputs.append([slot])
                out_base.append(len(initial))
                n_out.append(0)
                flags.append(_executor.FLAG_NEEDS_STEP)
                nodes.append(NodeInfo(f"_send_{t.name}_to_{dev.short_name}", "_Send",
                                      src_dev.name, None, [t.name]))
                recv_node = len(kernels)
                rslot = new_slot()
                kernels.append(_make_recv(rkey, dev))
                inputs.append([])
                out_base.append(rslot)
                n_out.append(1)
                flags.append(_executor.FLAG_ASYNC)
                nodes.append(NodeInfo(f"_recv_{t.name}_on_{dev.short_name}", "_Recv",
                                      dev.name, None, [t.name]))
                recv_slot[key] = rslot
                send_pairs.append((send_node, recv_node))
                partitions.setdefault(src_dev.name, []).append(
                    {"name": nodes[send_node].name, "op": "_Send", "input": [t.name],
                     "attr": {"tensor_name": t.name, "recv_device": dev.name}})
                partitions.setdefault(dev.name, []).append(
                    {"name": nodes[recv_node].name, "op": "_Recv", "input": [],
                     "attr": {"tensor_name": t.name, "send_device": src_dev.name}})
            inputs[node_of[op]].append(recv_slot[key])
    for op in ops:
        partitions.setdefault(placement[op].name, []).append(
            {"name": op.name, "op": op.type,
             "input": [t.name for t in op._inputs] + [f"^{c.name}" for c in op._control_inputs]})
    cp.partition_graphs = [{"device": d, "node": n} for d, n in sorted(partitions.items())]

    # Kernels. On a device whose matrix products run on a multi-threaded BLAS, a plan with
    # such products keeps every node on the thread that made it ready: BLAS's threads
    # already use the cores, and a second executor thread only competes with them (the
    # MLP step: 2-5 % slower with it).
    blas_devices = {placement[op] for op in ops if op.op_def.cost is OpCost.BLAS}
    blas_bound = {d.name for d in blas_devices if d.backend.blas_is_parallel()}
    for op in ops:
        i = node_of[op]
        device = placement[op]
        kdef = device.backend.find_kernel(op.type, _kernel_dtype(op))
        bound = session._bound_kernel(op, device, kdef)
        f = 0
        if device.backend.hand_off(op.op_def.cost) and not _known_small(op) and \
                device.name not in blas_bound:
            f |= _executor.FLAG_HAND_OFF
            nodes[i].hand_off = True
        if kdef.needs_step:
            f |= _executor.FLAG_NEEDS_STEP
        if kdef.is_async:
            f |= _executor.FLAG_ASYNC
        if op.op_def.control_flow == "merge":
            f |= _executor.FLAG_MERGE
        if len(op._outputs) > 1:
            f |= _executor.FLAG_MULTI_OUT
        positions = tuple(
            k for k, t in enumerate(op._inputs)
            if t.dtype.is_ref_dtype and not op.op_def.is_ref_input(k)
        )
        if positions:
            if kdef.is_async:
                bound = _deref_async_wrapper(bound, positions, op.name)
            else:
                shift = 1 if kdef.needs_step else 0
                bound = _deref_wrapper(bound, tuple(p + shift for p in positions), op.name)
        if kdef.is_async:
            bound = _cancellable_async(bound)
        kernels[i] = bound
        flags[i] = f

    # Uses per slot: consumers plus fetches.
    uses = [0] * len(initial)
    for ins in inputs:
        for s in ins:
            uses[s] += 1
    for t in fetch_tensors:
        s = source_slot(t)
        uses[s] += 1
        cp.fetch_slots.append(s)
        cp.deref_fetch.append(t.dtype.is_ref_dtype)

    _write_in_place(ops, node_of, placement, nodes, kernels, inputs, out_base, uses)

    plan = _executor.Plan(len(initial), kernels, inputs, out_base, n_out, flags, uses,
                          initial, [n.name for n in nodes],
                          lambda node, exc, args: describe_error(nodes[node], exc, args))
    control = []
    for op in ops:
        for c in op._control_inputs:
            if c in node_of:
                control.append((node_of[c], node_of[op]))
    plan.add_control_edges(control)
    if has_cf:
        _set_frames(plan, ops, node_of, out_base, n_out, len(initial), inputs, cp.fetch_slots,
                    cp.feed_slots, source_slot, canon, fed, known, bool(send_pairs))
    plan.finish()
    cp.plan = plan
    cp.nodes = nodes
    cp.ops = ops
    cp.needs_rendezvous = bool(send_pairs)
    cp.node_inputs = inputs
    cp.node_outputs = list(zip(out_base, n_out))
    cp.slot_uses = uses
    default_dev = placement[ops[0]].name if ops else session.devices[0].name
    slot_device = [default_dev] * len(initial)
    produced = set()
    for i, (base, n) in enumerate(cp.node_outputs):
        for k in range(n):
            slot_device[base + k] = nodes[i].device
            produced.add(base + k)
    for i, ins in enumerate(inputs):  # sources (feeds, constants) live where consumed
        for s in ins:
            if s not in produced:
                slot_device[s] = nodes[i].device
    cp.slot_device = slot_device
    cp.source_slots = [s for s in range(len(initial)) if s not in produced]
    cp.devices = sorted({placement[op] for op in ops}, key=lambda d: d.name)
    return cp


def _prune_with_replacements(fetches, targets, fed, cut, replace,
                             done=None) -> list[Operation]:
    """The ops needed for `fetches` and `targets`, in topological order, with inputs
    seen through `replace`. A `NextIteration` feeding a loop's `Merge` is a back edge:
    it is walked after the merge, so the order is topological for every other edge."""
    if not replace:
        try:
            return needed_ops(fetches, targets, fed, cut, done)
        except ValueError as e:  # a while loop's back edge: walk again, knowing loops
            if "cycle" not in str(e):
                raise
    # Walk with canonical inputs: temporarily view each op's inputs through `replace`.
    order: list[Operation] = []
    state: dict[Operation, int] = {}
    done = done or ()
    roots = [op for op in targets if op not in done]
    roots += [t.op for t in fetches if t not in cut and t not in fed and t.op not in done]

    back_edges: list[Operation] = []

    def deps(op):
        merge = op.op_def.control_flow == "merge"
        for t in op._inputs:
            if t in fed:
                continue
            c = replace.get(t, t)
            if c not in cut and c.op not in done:
                if merge and c.op.op_def.control_flow == "next_iteration":
                    back_edges.append(c.op)
                    continue
                yield c.op
        for c in op._control_inputs:
            if c not in done and not (c._outputs and all(
                    t in fed or t in cut for t in c._outputs)):
                yield c

    roots.reverse()
    while roots:
        root = roots.pop()
        if root in state:
            continue
        state[root] = 1
        stack = [(root, deps(root))]
        while stack:
            op, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[op] = 2
                order.append(op)
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, deps(nxt)))
            elif state[nxt] == 1:
                raise ValueError(
                    f"The graph has a cycle through op '{nxt.name}' ({nxt.type}) that is "
                    "not a while loop; a run cannot be scheduled.")
        if not roots and back_edges:
            roots = back_edges[::-1]
            back_edges = []
    return order


_KIND = {"enter": _executor.KIND_ENTER, "exit": _executor.KIND_EXIT,
         "next_iteration": _executor.KIND_NEXT}


def _set_frames(plan, ops, node_of, out_base, n_out, n_slots, inputs, fetch_slots,
                feed_slots, source_slot, canon, fed, known, has_send) -> None:
    """Assign every node the loop frame it runs in (from the Enter/Exit structure) and
    hand the executor its frame tables. Frame 0 is the root."""
    frame_id = {"": 0}
    frame_parent = [-1]
    frame_parallel = [1]
    frame_of: dict[Operation, int] = {}  # frame an op runs in
    n = plan.num_nodes
    node_frame = [0] * n
    node_kind = [0] * n
    enter_child = [-1] * n

    def out_frame(p: Operation) -> int:
        f = frame_of[p]
        cf = p.op_def.control_flow
        if cf == "enter":
            return frame_id[p.attrs["frame_name"]]
        if cf == "exit":
            return frame_parent[f]
        return f

    for op in ops:
        cf = op.op_def.control_flow
        found: list[tuple[int, Operation]] = []
        for t in op._inputs:
            if t in fed:
                continue
            c = canon(t)
            if c in known:
                continue
            if c.op not in frame_of:
                if cf == "merge" and c.op.op_def.control_flow == "next_iteration":
                    node_kind[node_of[op]] = _executor.KIND_LOOP_MERGE
                    continue
                raise AssertionError(f"op {c.op.name} is not scheduled before {op.name}")
            found.append((out_frame(c.op), c.op))
        for c in op._control_inputs:
            if c in frame_of:
                found.append((out_frame(c), c))
        f = found[0][0] if found else 0
        for g, producer in found:
            if g != f:
                raise ValueError(
                    f"Op '{op.name}' ({op.type}) mixes values from different loop frames: "
                    f"'{found[0][1].name}' and '{producer.name}'. A tensor computed inside "
                    "a tf.while_loop can only be used outside it through the loop's "
                    "results, and an outside tensor enters a loop only through the loop's "
                    "own Enter ops (build the loop with tf.while_loop).")
        frame_of[op] = f
        i = node_of[op]
        node_frame[i] = f
        if cf == "enter":
            name = op.attrs["frame_name"]
            child = frame_id.get(name)
            if child is None:
                child = frame_id[name] = len(frame_parent)
                frame_parent.append(f)
                frame_parallel.append(max(1, int(op.attrs.get("parallel_iterations", 10))))
            elif frame_parent[child] != f:
                raise ValueError(f"Enter op '{op.name}' enters frame '{name}' from two "
                                 "different parent frames.")
            enter_child[i] = child
            node_kind[i] = (_executor.KIND_CONST_ENTER if op.attrs.get("is_constant")
                            else _executor.KIND_ENTER)
        elif cf in _KIND:
            node_kind[i] = _KIND[cf]
            if cf == "exit" and f == 0:
                raise ValueError(f"Exit op '{op.name}' is not inside a while loop frame.")
    slot_frame = [0] * n_slots
    for op in ops:
        i = node_of[op]
        f = out_frame(op)
        for k in range(n_out[i]):
            slot_frame[out_base[i] + k] = f
    if len(frame_parent) > 1:
        if has_send:
            raise ValueError("tf.while_loop across devices is not supported yet: place the "
                             "loop's ops on one device.")
        for s in fetch_slots:
            if slot_frame[s] != 0:
                raise ValueError(
                    "Cannot fetch a tensor computed inside a tf.while_loop: it has one value "
                    "per iteration. Fetch the loop's results (its Exit tensors) instead.")
        for t in feed_slots:
            for op in t.consumers():
                if op in frame_of and frame_of[op] != 0:
                    raise ValueError(
                        f"Cannot feed {t.name}: it is used inside a tf.while_loop.")
    plan.set_frames(node_frame, node_kind, enter_child, slot_frame, frame_parent,
                    frame_parallel)


def _make_send(key: str, device: Device):
    backend = device.backend

    def send(step, value):
        step.rendezvous.send(key, backend.to_host(value, device))

    return send


def _make_recv(key: str, device: Device):
    backend = device.backend

    def recv(step, done):
        step.rendezvous.recv(key, lambda v: done(backend.from_host(v, device)))

    return recv


_ERROR_MAP = [
    (errors.OpError, None),
    (MemoryError, errors.ResourceExhaustedError),
    (ZeroDivisionError, errors.InvalidArgumentError),
    (FloatingPointError, errors.InvalidArgumentError),
    (IndexError, errors.InvalidArgumentError),
    (ValueError, errors.InvalidArgumentError),
    (TypeError, errors.InvalidArgumentError),
    (KeyError, errors.InvalidArgumentError),
    (NotImplementedError, errors.UnimplementedError),
]


def _describe_value(v) -> str:
    if isinstance(v, np.ndarray):
        return f"{tuple(v.shape)} {v.dtype}"
    if isinstance(v, VariableState):
        return f"variable {v.name}"
    if isinstance(v, np.generic):
        return f"() {v.dtype}"
    return type(v).__name__


def describe_error(node: NodeInfo, exc: BaseException, args) -> BaseException:
    """Turn a kernel's exception into a TensorFlow error naming the op and its inputs."""
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        return exc
    cls = errors.InternalError
    for base, mapped in _ERROR_MAP:
        if isinstance(exc, base):
            cls = type(exc) if mapped is None else mapped
            break
    message = exc.message if isinstance(exc, errors.OpError) else f"{exc}"
    if isinstance(exc, errors.OpError) and "[[node " in message:
        return exc
    shown = [a for a in args if not isinstance(a, StepContext)]
    names = node.inputs or ([t.name for t in node.op._inputs] if node.op is not None else [])
    described = ", ".join(
        f"{n}={_describe_value(v)}" for n, v in zip(names, shown)
    ) or "no inputs"
    where = node.op.source_line() if node.op is not None else ""
    text = (f"{message}\n\t [[node {node.name} ({node.op_type}) on {node.device} with inputs "
            f"{described}]]")
    if where:
        text += f"\nThe op was created at {where}"
    if cls is errors.InternalError and not isinstance(exc, errors.OpError):
        text = f"{type(exc).__name__}: {text}"
    err = cls(None, node.op, text)
    err.__cause__ = exc
    return err
