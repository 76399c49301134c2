"""A process-wide cache of the front of plan compilation, keyed by a graph fingerprint.

Every `Estimator.train`, `evaluate` and `predict` call builds a new graph and a new
session, so a session's own plan cache never sees the same graph twice. The front passes
of `compile_plan` (prune, rewrite with constant folding, prune again, place, lay out
slots) depend only on what the plan's ops *are*, not on which Python objects hold them:
this cache keeps their result per fingerprint and replays it on the next graph that
fingerprints the same. Binding kernels and every pass after it run as usual (kernels
belong to the session: variables, random generators, queues).

The fingerprint (`plan_key`) covers everything the front passes read:

    per op of the pruned plan    name, type, requested device, colocation, every
                                 attribute (constant values by content; of a stateful
                                 op, not the strings naming its state), the names of
                                 its inputs, consumers and control edges, its output
                                 dtypes and shapes
    per run                      fetched tensors, target ops and fed tensors, in order;
                                 of a plan specialized to the fed shapes, those shapes
    per session                  device names, soft placement, optimizer and rewrite
                                 options

A plan is not cached (``plan_key`` returns None) when its front depends on anything
else: partial runs, memory budgets or measured sizes, several devices open to automatic
placement (placement by a session's cost model), device-placement logging, or an
attribute that is not plain data (a Python function).

The rewrites make ops of their own for a plan (`rewrite_arith.plan_op`: folded chains,
stand-in constants), outside the graph. A snapshot keeps them by value (type, name,
device, attributes, inputs as references to graph ops by name or to earlier plan ops
by number) and `restore` makes them again on the new graph, so an Estimator's train
step, whose gradients the rewrites simplify, hits like any other plan. References in a
snapshot name an op of the graph by its name and a plan op by its number::

    plan ops   0: Const "loss/folded"  value 2.0
               1: AddV2 "loss"         inputs ("x", 0), (0, 0)
    ops        "x", 1                  (the graph's placeholder, then plan op 1)

Entries are bounded in number (`MAX_ENTRIES`) and in the bytes of the plan constants
they hold (`MAX_BYTES`); ``MAX_ENTRIES = 0`` turns the cache off. Folded constants are
those of the kernels registered when the entry was made: a kernel registered later for
an existing op type is not seen by a graph that fingerprints like an earlier one (call
`clear`).

A snapshot holds names, slot numbers, device names, folded constant values and the
plan ops' descriptions, never an op, a tensor or a graph, so it keeps no graph alive.

Example
-------
>>> import flowgraph as tf
>>> def run_once():
...     with tf.Graph().as_default():
...         x = tf.placeholder(tf.float32, name="x")
...         y = tf.negative(x * 2.0, name="y")
...         with tf.Session() as sess:
...             return sess.run(y, {x: 3.0})
>>> clear()
>>> float(run_once()), float(run_once()), stats()["hits"] >= 1
(-6.0, -6.0, True)
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from flowgraph.framework.dtypes import DType
from flowgraph.framework.graph_release import release_ops
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import get_op_def
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.rewrite import Rewrites
from flowgraph.runtime.rewrite_arith import is_pure

__all__ = ["Front", "clear", "plan_key", "restore", "stats", "store"]

MAX_ENTRIES = 256  # least recently used entries beyond this are dropped; 0: off
MAX_BYTES = 64 << 20  # the plan constants the entries hold, all together

_lock = threading.Lock()
_entries: OrderedDict[bytes, _Snapshot] = OrderedDict()
_counts = {"bytes": 0, "hits": 0, "misses": 0, "uncacheable": 0}


@dataclass
class Front:
    """What the front passes produce, for the graph being compiled."""

    ops: list[Operation]  # after rewriting and pruning again, producers first
    rewrites: Rewrites
    placement: dict
    table: NodeTable  # laid out, before partitioning


@dataclass(frozen=True)
class _PlanOp:
    """A plan op (`rewrite_arith.plan_op`) by value; op references as in `_Snapshot`."""

    like: str | int  # the op it stands in for: source line and colocation from it
    op_type: str
    name: str
    device: str
    attrs: dict
    inputs: tuple[tuple[str | int, int], ...]
    control_inputs: tuple[str | int, ...]
    dtype: DType
    shape: TensorShape


@dataclass
class _Snapshot:
    plan_ops: tuple[_PlanOp, ...]  # in the order made (inputs first)
    # References: an op of the graph by name, a plan op by its number in `plan_ops`;
    # a tensor as (op reference, output index).
    ops: tuple[str | int, ...]
    placement: tuple[str, ...]  # device name per op of `ops`
    compose_unary: bool
    replace: tuple[tuple[tuple, tuple], ...]
    known: tuple[tuple[tuple, object], ...]
    nodes: tuple[tuple[str | int, tuple[int, ...], int, int], ...]  # op, inputs, base, n_out
    initial: tuple
    feed_slots: tuple[tuple[tuple, int], ...]
    slot_of: tuple[tuple[tuple, int], ...]
    constants: tuple[tuple, ...]
    nbytes: int = 0  # of the arrays in `initial`


class _Uncacheable(Exception):
    pass


_TABLE_FIELDS = set(vars(NodeTable()))


# -- fingerprint ---------------------------------------------------------------------------
_PLAIN = (type(None), bool, int, str, bytes, float)


def _canon(value) -> str:
    """A canonical, type-tagged text of an attribute value (constants by content)."""
    kind = type(value)
    if kind in _PLAIN:
        return f"{kind.__name__}:{value!r}"
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            items = arr.ravel().tolist()
            if not all(isinstance(item, str | bytes) for item in items):
                raise _Uncacheable
            return f"objarray{arr.shape}:{items!r}"
        digest = hashlib.blake2b(np.ascontiguousarray(arr).view(np.uint8).data,
                                 digest_size=16).hexdigest()
        return f"array:{arr.dtype.str}{arr.shape}:{digest}"
    if isinstance(value, DType):
        return f"dtype:{value.name}"
    if isinstance(value, TensorShape | Dimension):
        return f"shape:{value}"
    if isinstance(value, list | tuple):
        return f"{kind.__name__}[" + ",".join(map(_canon, value)) + "]"
    if isinstance(value, dict):
        return "dict{" + ",".join(f"{_canon(k)}={_canon(value[k])}"
                                  for k in sorted(value, key=repr)) + "}"
    raise _Uncacheable  # a function, a graph, an object: its behaviour has no fingerprint


def _op_text(op: Operation) -> str:
    # Consumers and control outputs too: a rewrite may keep a value another op reads.
    # Op names never hold the separators ("," and "\x1f").
    parts = [op._name, op._op_def.name, op._device, ",".join(op._colocation),
             ",".join(f"{t._op._name}:{t._value_index}" for t in op._inputs),
             ",".join(c._name for c in op._control_inputs),
             ",".join(c._name for c in op._control_outputs)]
    for t in op._outputs:
        dims = t._shape._dims
        shape = "?" if dims is None else ",".join(str(d._value) for d in dims)
        parts.append(f"{t._dtype.name}[{shape}]" + ",".join(c._name for c in t._consumers))
    attrs = op._attrs
    # Only pure ops are merged, folded or rewritten (`rewrite_arith.is_pure`); of a
    # stateful op the front passes read types and structure, never the strings that
    # name its state (a variable's shared_name, an input source's key), which are
    # bound with its kernel after the cached passes.
    names = None
    for k in sorted(attrs):
        value = attrs[k]
        if type(value) in (str, bytes):
            if names is None:
                names = not is_pure(op)
            if names:
                parts.append(f"{k}=str")
                continue
        parts.append(f"{k}={_canon(value)}")
    return "\x1f".join(parts) + "\x1e"


def plan_key(env, fetch_tensors, target_ops, feed_tensors, ops, *, done_ops=None,
             memory_budget=0, shape_specialized=False, measured_sizes=None,
             feed_shapes=None) -> bytes | None:
    """The fingerprint of a plan's front passes, or None when it must not be cached.

    `ops` is the first prune's result (the ops the plan may run, producers first); the
    other arguments are `compile_plan`'s (`feed_shapes` is read when `shape_specialized`).
    """
    config = env.config
    shapes = None
    if shape_specialized:
        try:
            shapes = [tuple(int(d) for d in feed_shapes[t]) for t in feed_tensors]
        except (KeyError, TypeError):
            shapes = None
    if (done_ops or memory_budget or getattr(config, "memory_budget_bytes", 0)
            or (shape_specialized and shapes is None) or measured_sizes
            or config.log_device_placement
            or sum(bool(d.auto_place) for d in env.devices) > 1 or MAX_ENTRIES <= 0):
        _counts["uncacheable"] += 1
        return None
    options = config.graph_options
    h = hashlib.blake2b(digest_size=32)
    h.update(repr(([d.name for d in env.devices], bool(config.allow_soft_placement),
                   repr(options.optimizer_options),
                   repr(getattr(options, "rewrite_options", None)),
                   [t.name for t in fetch_tensors], [op._name for op in target_ops],
                   [t.name for t in feed_tensors], shapes)).encode())
    try:
        for op in ops:
            h.update(_op_text(op).encode())
    except _Uncacheable:
        _counts["uncacheable"] += 1
        return None
    return h.digest()


# -- snapshot and restore ------------------------------------------------------------------
class _Refs:
    """References to the ops of one front: graph ops by name, plan ops by number."""

    def __init__(self, graph, plan_ops: dict) -> None:
        self.by_name = graph._ops_by_name
        self.number = {op: i for i, op in enumerate(plan_ops)}

    def op(self, op: Operation) -> str | int:
        if self.by_name.get(op._name) is op:
            return op._name
        number = self.number.get(op)
        if number is None:
            raise _Uncacheable  # an op neither the graph nor the rewrites account for
        return number

    def tensor(self, t: Tensor) -> tuple[str | int, int]:
        return self.op(t._op), t._value_index


def _used_plan_ops(front: Front) -> list[Operation]:
    """The plan ops `front` refers to, with the plan ops they read, in the order made."""
    made = front.rewrites.plan_ops
    if not made:
        return []
    todo = [op for op in front.ops if op in made]
    todo += [t._op for t in front.rewrites.replace.values() if t._op in made]
    todo += [t._op for t in front.rewrites.known if t._op in made]
    used: set[Operation] = set()
    while todo:
        op = todo.pop()
        if op in used:
            continue
        used.add(op)
        todo += [t._op for t in op._inputs if t._op in made]
        todo += [c for c in op._control_inputs if c in made]
    return [op for op in made if op in used]


def _describe(op: Operation, like: Operation, refs: _Refs) -> _PlanOp:
    if len(op._outputs) != 1:
        raise _Uncacheable
    out = op._outputs[0]
    return _PlanOp(refs.op(like), op._op_def.name, op._name, op._device, dict(op._attrs),
                   tuple(refs.tensor(t) for t in op._inputs),
                   tuple(refs.op(c) for c in op._control_inputs), out._dtype, out._shape)


def store(key: bytes | None, graph, front: Front) -> None:
    """Keep `front` (of a plan of `graph`) under `key`; nothing when `key` is None or the
    front refers to an op neither the graph nor the rewrites' plan ops account for."""
    if key is None:
        return
    table = front.table
    try:
        if set(vars(table)) != _TABLE_FIELDS or table.control_edges or table.uses:
            raise _Uncacheable  # a pass this module does not know filled the table
        for n in table.nodes:  # only what `lay_out_slots` sets, so that restore rebuilds it
            if n.op is None or n != NodeInfo(
                    n.op._name, n.op._op_def.name, n.placed_on.name, n.op,
                    placed_on=n.placed_on, input_slots=n.input_slots, out_base=n.out_base,
                    n_out=n.n_out):
                raise _Uncacheable
        plan_ops = _used_plan_ops(front)
        refs = _Refs(graph, plan_ops)
        made = front.rewrites.plan_ops
        tensor = refs.tensor
        snapshot = _Snapshot(
            plan_ops=tuple(_describe(op, made[op], refs) for op in plan_ops),
            ops=tuple(refs.op(op) for op in front.ops),
            placement=tuple(front.placement[op].name for op in front.ops),
            compose_unary=bool(front.rewrites.compose_unary),
            replace=tuple((tensor(a), tensor(b)) for a, b in front.rewrites.replace.items()),
            known=tuple((tensor(t), v) for t, v in front.rewrites.known.items()),
            nodes=tuple((refs.op(n.op), tuple(n.input_slots), n.out_base, n.n_out)
                        for n in table.nodes),
            initial=tuple(table.initial),
            feed_slots=tuple((tensor(t), s) for t, s in table.feed_slots.items()),
            slot_of=tuple((tensor(t), s) for t, s in table.slot_of.items()),
            constants=tuple(tensor(t) for t in table.constants))
    except _Uncacheable:
        return
    arrays = {id(v): v for v in snapshot.initial}
    arrays.update((id(p.attrs.get("value")), p.attrs.get("value")) for p in snapshot.plan_ops)
    snapshot.nbytes = sum(int(getattr(v, "nbytes", 0)) for v in arrays.values())
    if snapshot.nbytes > MAX_BYTES // 4:
        return  # large constants: recompiling costs less than holding them
    with _lock:
        old = _entries.pop(key, None)
        _counts["bytes"] += snapshot.nbytes - (old.nbytes if old is not None else 0)
        _entries[key] = snapshot
        while len(_entries) > MAX_ENTRIES or _counts["bytes"] > MAX_BYTES:
            _counts["bytes"] -= _entries.popitem(last=False)[1].nbytes


def restore(key: bytes | None, env) -> Front | None:
    """The front stored under `key`, rebuilt on `env`'s graph and devices, or None."""
    if key is None:
        return None
    with _lock:
        snapshot = _entries.get(key)
        if snapshot is not None:
            _entries.move_to_end(key)
    front = None
    if snapshot is not None:
        try:
            front = _rebuild(snapshot, env)
        except (KeyError, IndexError):  # cannot happen for a matching key; a miss is safe
            front = None
    _counts["hits" if front is not None else "misses"] += 1
    return front


def _rebuild(snapshot: _Snapshot, env) -> Front:
    graph = env.graph
    by_name = graph._ops_by_name
    devices = {d.name: d for d in env.devices}
    made: dict[Operation, Operation] = {}
    plan_ops: list[Operation] = []

    def op_of(ref: str | int) -> Operation:
        return by_name[ref] if type(ref) is str else plan_ops[ref]

    def tensor(ref: tuple) -> Tensor:
        return op_of(ref[0])._outputs[ref[1]]

    try:
        for p in snapshot.plan_ops:
            like = op_of(p.like)
            op = Operation(graph, get_op_def(p.op_type), p.name, [tensor(r) for r in p.inputs],
                           dict(p.attrs), [op_of(r) for r in p.control_inputs], p.device)
            op._colocation = list(like._colocation)
            op._source = like._source
            op._outputs = [Tensor(op, 0, p.dtype, p.shape)]
            plan_ops.append(op)
            made[op] = like
        ops = [op_of(ref) for ref in snapshot.ops]
        placement = {op: devices[d] for op, d in zip(ops, snapshot.placement)}
        rewrites = Rewrites(replace={tensor(a): tensor(b) for a, b in snapshot.replace},
                            known={tensor(ref): v for ref, v in snapshot.known},
                            compose_unary=snapshot.compose_unary, plan_ops=made)
        table = NodeTable()
        table.replace = rewrites.replace
        table.initial = list(snapshot.initial)
        table.feed_slots = {tensor(ref): s for ref, s in snapshot.feed_slots}
        table.slot_of = {tensor(ref): s for ref, s in snapshot.slot_of}
        table.constants = {tensor(ref) for ref in snapshot.constants}
        for ref, inputs, base, n_out in snapshot.nodes:
            op = op_of(ref)
            device = placement[op]
            node = NodeInfo(op._name, op._op_def.name, device.name, op, placed_on=device,
                            input_slots=list(inputs), out_base=base, n_out=n_out)
            table.node_of[op] = len(table.nodes)
            table.nodes.append(node)
    except BaseException:
        release_ops(plan_ops)  # a failed rebuild leaves no cycle naming the graph
        raise
    return Front(ops, rewrites, placement, table)


def stats() -> dict:
    """Counts of cache hits, misses and uncacheable plans since the last `clear`, the
    number of entries and the bytes of plan constants they hold.

    >>> sorted(stats())
    ['bytes', 'entries', 'hits', 'misses', 'uncacheable']
    """
    with _lock:
        return {**_counts, "entries": len(_entries)}


def clear() -> None:
    """Forget every entry and reset the counts.

    >>> clear(); stats()["entries"]
    0
    """
    with _lock:
        _entries.clear()
        for k in _counts:
            _counts[k] = 0
