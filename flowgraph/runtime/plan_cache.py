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

Beside the front, an entry keeps the finished plan (`store_finished`: every pass after
the front done, control edges included) when it runs on host devices without loops or a
memory schedule. A session then skips all passes for a graph that fingerprints the same
(`restore_finished`; `Session._compile` emits the executor plan): only the session's class
kernels (variables, constants, input sources, queues) are bound again, other kernels are
shared, with the ops they name for errors made the new graph's. An Estimator's second
`train` call compiles none of its eight plans.

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

import dataclasses
import functools
import hashlib
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass
from operator import is_ as _is

import numpy as np

from flowgraph.framework.dtypes import DType
from flowgraph.framework.graph_release import release_ops
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import get_op_def
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.placement import kernel_dtype
from flowgraph.runtime.rewrite import Rewrites
from flowgraph.runtime.rewrite_arith import is_pure

__all__ = ["Finished", "Front", "clear", "forget_texts", "plan_key", "restore", "restore_finished",
           "stats", "store", "store_finished"]

MAX_ENTRIES = 256  # least recently used entries beyond this are dropped; 0: off
MAX_BYTES = 64 << 20  # the plan constants the entries hold, all together

_lock = threading.Lock()
_entries: OrderedDict[bytes, _Snapshot] = OrderedDict()
_counts = {"bytes": 0, "finished_hits": 0, "hits": 0, "misses": 0, "uncacheable": 0}


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
    texts = _texts_of(env)
    try:
        for op in ops:
            h.update(_op_bytes(op) if texts is None else texts.get(op))
    except _Uncacheable:
        _counts["uncacheable"] += 1
        return None
    return h.digest()


def _op_bytes(op: Operation) -> bytes:
    return _op_text(op).encode()


class _OpTexts:
    """The encoded `_op_text` of the ops of one finalized graph, for one session.

    A session compiles several plans of the same graph (an Estimator's: restore, the
    readiness checks, the saves, two train steps), whose pruned ops overlap; each op's
    text is made once. An entry is used again only while what the text reads cannot have
    changed: the graph is finalized at the version it had (no op, consumer or control
    edge added) and the op's device and output shapes are the very objects the text was
    made from (`Tensor.set_shape` and `_set_device` replace them).
    """

    def __init__(self, graph) -> None:
        self.version = graph._version
        self._entries: dict[Operation, tuple] = {}

    def get(self, op: Operation) -> bytes:
        entry = self._entries.get(op)
        if entry is not None:
            text, device, shapes = entry
            if op._device is device and all(
                    t._shape is s for t, s in zip(op._outputs, shapes)):
                return text
        text = _op_text(op).encode()
        self._entries[op] = (text, op._device, tuple(t._shape for t in op._outputs))
        return text


def _texts_of(env) -> _OpTexts | None:
    """`env`'s memo of op texts (kept on the session's `CompileEnv`, dropped when it
    closes: `forget_texts`), or None while its graph is not finalized."""
    graph = env.graph
    if not graph._finalized:
        return None
    texts = env.__dict__.get("_plan_key_texts")
    if texts is None or texts.version != graph._version:
        texts = env.__dict__["_plan_key_texts"] = _OpTexts(graph)
    return texts


def forget_texts(env) -> None:
    """Drop `env`'s memo of op texts (a closing session: it names the graph's ops)."""
    env.__dict__.pop("_plan_key_texts", None)


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
            dropped, entry = _entries.popitem(last=False)
            _counts["bytes"] -= entry.nbytes
            _finished.pop(dropped, None)  # it holds the same constants


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


# -- finished plans ------------------------------------------------------------------------
# Beside a front, an entry may keep the plan that every later pass finished from it (the
# table after binding, fusion, scheduling and the in-place pass, its control edges), for
# plans on host devices without loops or a memory schedule. Kernels are what a session
# owns: a class kernel (a variable, a constant, an input source, a queue) is bound again
# from the new session's `KernelCache`; any other kernel is kept only when nothing it
# reaches belongs to a session (`_relink`), and is shared, as the runs of one session share
# it; the ops it names (a fused group's members, for errors) are kept as references and
# made the new graph's. A plan with any other kernel is not kept.
_finished: OrderedDict[bytes, _Finished] = OrderedDict()


@dataclass(frozen=True)
class _FinishedNode:
    op: str | int  # as in `_Snapshot`: a graph op by name, a plan op by number
    fused: tuple[str | int, ...] | None
    kernel: object  # shared as it is; None: bind `kdef` for the op in the new session
    kdef: object
    relink: bool  # `kernel` names ops (as `_OpRef`s): copied with the new graph's ops
    fields: dict  # NodeInfo's plain fields (name, slots, flags, ...)


@dataclass(frozen=True)
class _Finished:
    nodes: tuple[_FinishedNode, ...]
    naming: frozenset  # ids of the kept kernels' parts that lead to an `_OpRef`
    edges: tuple[tuple[int, int], ...]  # every successor pair, control edges among them
    initial: tuple
    uses: tuple[int, ...]
    feed_slots: tuple[tuple[tuple[str, int], int], ...]
    fetch_slots: tuple[int, ...]
    partition_graphs: tuple
    slots: dict  # CompiledPlan's per-node and per-slot tables for step statistics


@dataclass
class Finished:
    """A finished plan rebuilt for a new session: `emit` turns `table` into its plan."""

    table: NodeTable
    fetch_slots: list[int]
    plan_ops: list[Operation]  # made for this plan; released with it
    partition_graphs: list
    slots: dict


_NODE_FIELDS = ("name", "op_type", "device", "inputs", "hand_off", "in_place",
                "input_slots", "out_base", "n_out", "flags")
_SHARED_LEAVES = (type(None), bool, int, float, str, bytes, np.ndarray, np.generic, np.dtype,
                  DType, TensorShape, Dimension, type(len), type(np.add))


@functools.cache
def _shared_leaf_types() -> tuple:
    # The fused-expression program is immutable after it is built (`_fused.Program`),
    # and a device or backend object is process-wide.
    from flowgraph.backends.base import Backend, Device
    from flowgraph.backends.cpu._fused import Program

    return (*_SHARED_LEAVES, Program, Device, Backend)


@dataclass(frozen=True)
class _OpRef:
    """An op inside a kept kernel (a fused group's members name theirs in errors)."""

    ref: str | int


def _relink(obj, subst, memo: dict, depth: int = 0, only: frozenset | None = None):
    """`obj` (a kernel) with every op it reaches passed through `subst`: the functions,
    partials, containers and plan nodes on the way are copied, everything else shared.

    Only plain data, functions of modules and known process-wide objects are shared (as
    the runs of one session share them); anything else (a class kernel inside a wrapper,
    an object of a session) raises `_Uncacheable`."""
    if only is not None and id(obj) not in only:
        return obj  # nothing below names an op
    known = memo.get(id(obj))
    if known is not None:
        return known[1]
    if depth > 60:
        raise _Uncacheable
    if isinstance(obj, _shared_leaf_types()) or \
            type(obj).__name__ == "cython_function_or_method":
        return obj
    deeper = depth + 1

    def each(items):
        return [_relink(item, subst, memo, deeper, only) for item in items]

    if isinstance(obj, Operation | _OpRef):
        new = subst(obj)
    elif type(obj) is NodeInfo:  # a fused group's member, for its errors
        new = dataclasses.replace(
            obj, op=None if obj.op is None else subst(obj.op), inputs=list(obj.inputs),
            input_slots=list(obj.input_slots),
            kernel=_relink(obj.kernel, subst, memo, deeper, only),
            fused=None if obj.fused is None else [subst(m) for m in obj.fused])
    elif type(obj) is functools.partial:
        func, *args = each((obj.func, *obj.args))
        values = each(obj.keywords.values())
        new = obj if func is obj.func and all(map(_is, args, obj.args)) and all(
            map(_is, values, obj.keywords.values())) else functools.partial(
                func, *args, **dict(zip(obj.keywords, values)))
    elif type(obj) is types.FunctionType:
        cells = obj.__closure__ or ()
        try:
            contents = [c.cell_contents for c in cells]
        except ValueError:  # an empty cell: a function still being defined
            raise _Uncacheable from None
        new_contents = each(contents)
        defaults = obj.__defaults__
        new_defaults = None if defaults is None else tuple(each(defaults))
        attrs = obj.__dict__
        new_attrs = dict(zip(attrs, each(attrs.values())))
        kwdefaults = obj.__kwdefaults__ or {}
        new_kwdefaults = dict(zip(kwdefaults, each(kwdefaults.values())))
        if all(map(_is, new_contents, contents)) and (defaults is None or all(
                map(_is, new_defaults, defaults))) and all(
                new_attrs[k] is attrs[k] for k in attrs) and all(
                new_kwdefaults[k] is kwdefaults[k] for k in kwdefaults):
            new = obj
        else:
            new = types.FunctionType(obj.__code__, obj.__globals__, obj.__name__, new_defaults,
                                     tuple(types.CellType(c) for c in new_contents))
            new.__qualname__ = obj.__qualname__
            new.__kwdefaults__ = new_kwdefaults or None
            new.__dict__.update(new_attrs)
    elif type(obj) in (list, tuple):
        items = each(obj)
        new = obj if all(map(_is, items, obj)) else type(obj)(items)
    elif type(obj) is dict:
        values = each(obj.values())
        new = obj if all(map(_is, values, obj.values())) else dict(zip(obj, values))
    else:
        raise _Uncacheable
    memo[id(obj)] = (obj, new)  # the original too: its id stays taken while memo lives
    return new


def store_finished(key: bytes | None, env, cp) -> None:
    """Keep the finished plan `cp` (compiled on `env`) beside the front under `key`;
    nothing when the front was not kept, or when the plan has anything this module
    cannot bind again (see the comment above)."""
    with _lock:
        snapshot = _entries.get(key) if key is not None else None
    if snapshot is None or cp.memory_schedule is not None or cp.async_devices \
            or cp.fetch_to_host or cp.needs_rendezvous or cp.measured_sizes is not None:
        return
    graph = env.graph
    by_name = graph._ops_by_name
    plan_op_number = {}
    for i, p in enumerate(snapshot.plan_ops):
        plan_op_number[p.name] = None if p.name in plan_op_number else i

    def ref(op: Operation) -> str | int:
        if by_name.get(op._name) is op:
            return op._name
        number = plan_op_number.get(op._name)
        if number is None or snapshot.plan_ops[number].op_type != op._op_def.name:
            raise _Uncacheable
        return number

    memo: dict = {}
    try:
        nodes = []
        for n in cp.nodes:
            op = n.op
            if op is None or op.op_def.control_flow or not n.placed_on.backend.host_memory:
                raise _Uncacheable
            kernel, kdef = n.kernel, None
            # A stateful op's strings (the state it names) are not in the key: its kernel,
            # which binds them, is bound again from the new op, never shared.
            named = not is_pure(op) and any(type(v) in (str, bytes)
                                            for v in op._attrs.values())
            if env.kernels._bound.get((op, n.placed_on.name)) is kernel:
                kdef = n.placed_on.backend.find_kernel(op.type, kernel_dtype(op))
                if kdef is not None and (kdef.is_class or named):
                    kernel = None  # the session's own kernel for the op: bound again
                else:
                    kdef = None
            if kernel is not None and named:
                raise _Uncacheable  # wrapped: the wrapper would keep the old strings
            relink = False
            if kernel is not None:  # its ops as references: the entry holds no graph
                original, kernel = kernel, _relink(kernel, lambda op: _OpRef(ref(op)), memo)
                relink = kernel is not original
            nodes.append(_FinishedNode(
                ref(op), None if n.fused is None else tuple(ref(m) for m in n.fused),
                kernel, kdef, relink, {f: (list(v) if type(v) is list else v)
                                       for f in _NODE_FIELDS for v in (getattr(n, f),)}))
        plan = cp.plan
        finished = _Finished(
            nodes=tuple(nodes),
            naming=frozenset(id(new) for old, new in memo.values() if new is not old),
            edges=tuple((a, b) for a in range(len(nodes)) for b in plan.successors(a)),
            initial=tuple(plan.initial_values), uses=tuple(cp.slot_uses),
            feed_slots=tuple(((ref(t._op), t._value_index), s)
                             for t, s in cp.feed_slots.items()),
            fetch_slots=tuple(cp.fetch_slots), partition_graphs=tuple(cp.partition_graphs),
            slots={f: getattr(cp, f) for f in ("node_inputs", "node_outputs", "slot_uses",
                                               "slot_device", "source_slots")})
    except _Uncacheable:
        return
    with _lock:
        _finished[key] = finished
        while len(_finished) > MAX_ENTRIES:
            _finished.popitem(last=False)


def restore_finished(key: bytes | None, env) -> Finished | None:
    """The finished plan kept under `key`, its ops and class kernels those of `env`'s
    graph and session, or None."""
    if key is None:
        return None
    with _lock:
        finished = _finished.get(key)
        if finished is not None:
            _finished.move_to_end(key)
    if finished is None:
        return None
    front = restore(key, env)  # the plan ops, made again on this graph
    if front is None:
        return None
    plan_ops = list(front.rewrites.plan_ops)
    by_name = env.graph._ops_by_name
    devices = {d.name: d for d in env.devices}
    memo: dict = {}
    try:
        def op_of(ref):
            return by_name[ref] if type(ref) is str else plan_ops[ref]

        table = NodeTable()
        for f in finished.nodes:
            op = op_of(f.op)
            node = NodeInfo(**f.fields, op=op, placed_on=devices[f.fields["device"]])
            node.input_slots = list(node.input_slots)
            node.inputs = list(node.inputs)
            if f.fused is not None:
                node.fused = [op_of(r) for r in f.fused]
            if f.kdef is not None:
                node.kernel = env.kernels.bound(op, node.placed_on, f.kdef)
            elif f.relink:
                node.kernel = _relink(f.kernel, lambda r: op_of(r.ref), memo,
                                      only=finished.naming)
            else:
                node.kernel = f.kernel
            table.nodes.append(node)
        table.initial = list(finished.initial)
        table.uses = list(finished.uses)
        table.control_edges = list(finished.edges)
        table.feed_slots = {op_of(r)._outputs[i]: s for (r, i), s in finished.feed_slots}
    except (KeyError, IndexError, _Uncacheable):  # not for a matching key; a miss is safe
        release_ops(plan_ops)
        return None
    _counts["finished_hits"] += 1
    return Finished(table, list(finished.fetch_slots), plan_ops,
                    list(finished.partition_graphs), finished.slots)


def stats() -> dict:
    """Counts of cache hits, misses and uncacheable plans since the last `clear`, the
    number of entries and the bytes of plan constants they hold.

    >>> sorted(stats())
    ['bytes', 'entries', 'finished_hits', 'hits', 'misses', 'uncacheable']
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
        _finished.clear()
        for k in _counts:
            _counts[k] = 0
