"""Pass 2, rewrite: common-subexpression elimination, constant folding, algebra.

`rewrite` runs them as the session's `OptimizerOptions` and `RewriterConfig` ask
(`flowgraph.runtime.config.switches`). They work on the pruned op list (topological order):

* CSE maps each pure op to the first earlier op with the same type, attributes, device,
  (canonical) inputs and control inputs; its outputs are replaced by the earlier op's.
  Inputs of commutative ops (``Add``, ``Mul``, ``Maximum``, ...) compare as a multiset.
* Constant folding evaluates, once at plan time on the CPU backend, every pure op whose
  inputs are all constants (``Const`` or already folded) and whose outputs are small;
  its outputs become constants of the plan. ``Shape``, ``Size`` and ``Rank`` fold when
  their input's shape is known: from the graph, or, in a plan specialized to this
  run's fed shapes, inferred from them (`flowgraph/runtime/specialize.py`).
* Algebraic rewrites (`flowgraph/runtime/rewrite_arith.py`): chains by constants
  collapse, ``x*1`` and double negations vanish, ...; after placement,
  `rewrite_arith.compose_unary_chains` merges chains of unary math ops into one node.

CSE and folding never change results; the algebraic rewrites may, within 1 ulp per
folded op, where they reassociate floating-point arithmetic (see rewrite_arith.py).

Stateful ops (variables, random numbers, queues, I/O), ops with ref inputs or outputs,
and control-flow ops are never merged or folded::

    x ──> sin ──┐          x ──> sin ──> add(sin, sin)
    x ──> sin ──┴─> add    (second sin merged into the first)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.runtime.config import switches
from flowgraph.runtime.rewrite_arith import is_pure, plan_op, simplify
from flowgraph.runtime.specialize import SHAPE_OPS, infer_shapes, shape_value

MAX_FOLDED_BYTES = 10 * 1024 * 1024
# Ops whose result does not depend on the order of their inputs (IEEE addition and
# multiplication are commutative, so merging ``a + b`` with ``b + a`` is exact).
COMMUTATIVE_OPS = frozenset({
    "Add", "AddV2", "Mul", "Maximum", "Minimum", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "SquaredDifference",
})


@dataclass
class Rewrites:
    """What the rewrite pass found: merged tensors and values known at plan time."""

    replace: dict[Tensor, Tensor] = field(default_factory=dict)  # tensor -> stand-in
    known: dict[Tensor, object] = field(default_factory=dict)  # tensor -> its value
    compose_unary: bool = False  # run `rewrite_arith.compose_unary_chains` after binding
    # Ops made for this plan only (`rewrite_arith.plan_op`), in the order made, each
    # mapped to the graph op it stands in for: released with the plan, never the graph's.
    plan_ops: dict[Operation, Operation] = field(default_factory=dict)


def rewrite(ops: list[Operation], fed: set[Tensor], options, host_kernel,
            rewrite_options=None, feed_shapes: dict | None = None) -> Rewrites:
    """Merge common subexpressions, fold constants and simplify `ops` (topological order).

    `options` is an `OptimizerOptions` (``do_common_subexpression_elimination``,
    ``do_constant_folding``, ``opt_level``, ``max_folded_constant_in_bytes``),
    `rewrite_options` a `RewriterConfig` (see `config.switches`); `host_kernel(op)` returns a
    CPU kernel for folding, or None. Without folding, only ``Const`` values are known.
    `feed_shapes` (tensor -> this run's fed shape) specializes the plan to them.
    """
    on = switches(options, rewrite_options)
    replace: dict[Tensor, Tensor] = {}
    made: dict[Operation, Operation] = {}
    if on.cse:
        replace = eliminate_common_subexpressions(ops, fed)
    # A constant with control inputs (a constant inside a tf.cond branch or a loop body)
    # must run where it is: its control inputs make it dead or tie it to an iteration.
    gated = {op._outputs[0] for op in ops if op.type == "Const" and op._control_inputs}
    inferred = infer_shapes(ops, feed_shapes) if feed_shapes and on.shapes else {}
    if on.fold:
        shape_of = None
        if on.shapes:
            gone = _maybe_dead(ops)
            unknown = TensorShape(None)
            shape_of = lambda t: unknown if t in gone else inferred.get(t, t._shape)  # noqa: E731
        anchors: dict = {}
        known = fold_constants(ops, fed | gated, replace, host_kernel,
                               options.max_folded_constant_in_bytes, shape_of, anchors)
        if anchors:
            stand_ins = anchor_folded_shapes(ops, known, anchors, replace)
            made.update((u._op, t._op) for t, u in stand_ins.items())
            replace = {**replace, **stand_ins}
    else:
        known = {op._outputs[0]: op.attrs["value"] for op in ops
                 if op.type == "Const" and op._outputs[0] not in fed
                 and op._outputs[0] not in gated}
    if not on.arith:
        return Rewrites(replace, known, plan_ops=made)
    found = simplify(ops, fed | gated, known, replace, inferred)
    made.update(found.plan_ops)
    if found.replace:
        merged = {t: found.replace.get(u, u) for t, u in replace.items()}
        merged.update(found.replace)
        replace = merged
        known = {**known, **found.known}
    return Rewrites(replace, known, compose_unary=True, plan_ops=made)


def _maybe_dead(ops: list[Operation]) -> set[Tensor]:
    """Tensors computed after a control-flow op (a ``Switch``, a loop's ``Enter``): they
    may be dead, or differ per iteration, so their shape ops must run (folded, a
    ``ZerosLike`` of an untaken branch would become a live constant)."""
    tainted: set[Operation] = set()
    out: set[Tensor] = set()
    for op in ops:
        if op.op_def.control_flow or any(t._op in tainted for t in op._inputs) or \
                any(c in tainted for c in op._control_inputs):
            tainted.add(op)
            out.update(op._outputs)
    return out


def _attr_key(value):
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("objarr", value.shape, tuple(value.reshape(-1).tolist()))
        return ("arr", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(_attr_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _attr_key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def eliminate_common_subexpressions(ops: list[Operation], fed: set[Tensor]) -> dict:
    """Return a map tensor -> canonical tensor for duplicated pure ops."""
    replace: dict[Tensor, Tensor] = {}
    seen: dict[tuple, Operation] = {}
    for op in ops:
        if not is_pure(op) or any(t in fed for t in op._outputs):
            continue
        inputs = tuple(id(replace.get(t, t)) for t in op._inputs)
        if op.type in COMMUTATIVE_OPS:
            inputs = tuple(sorted(inputs))
        key = (op.type, op.device, inputs, tuple(sorted(id(c) for c in op._control_inputs)),
               tuple(sorted((k, _attr_key(v)) for k, v in op.attrs.items())))
        try:
            hash(key)
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = op
        else:
            for a, b in zip(op._outputs, first._outputs):
                replace[a] = b
    return replace


def fold_constants(ops: list[Operation], fed: set[Tensor], replace: dict,
                   find_kernel, max_bytes: int = MAX_FOLDED_BYTES, shape_of=None,
                   anchors: dict | None = None) -> dict:
    """Return a map tensor -> NumPy value for every tensor computable at plan time.

    `find_kernel(op)` returns a host-callable kernel for `op`, or None; `shape_of(t)`,
    when given, the `TensorShape` known for `t` (shape ops of known shapes fold). A
    value folded from the shape of a computed tensor still depends on that tensor's
    producer having run; `anchors`, when given, receives per such value the producers
    (see `anchor_folded_shapes`).
    """
    known: dict[Tensor, object] = {}
    anchors = {} if anchors is None else anchors
    for op in ops:
        if op.type == "Const":
            if op._outputs[0] not in fed:
                known[op._outputs[0]] = op.attrs["value"]
            continue
        if not is_pure(op) or op._control_inputs or not op._inputs:
            continue
        if any(t in fed for t in op._outputs):
            continue
        inputs = [replace.get(t, t) for t in op._inputs]
        if shape_of is not None and op.type in SHAPE_OPS and not all(
                t in known for t in inputs):
            values = shape_value(op, shape_of)
            if values is not None:
                after = frozenset().union(*(
                    anchors.get(t, frozenset()) if t in known else frozenset({t._op})
                    for t in inputs if t not in fed))
                for t, v in zip(op._outputs, values):
                    v.setflags(write=False)
                    known[t] = v
                    if after:
                        anchors[t] = after
            continue
        if not all(t in known for t in inputs):
            continue
        kernel = find_kernel(op)
        if kernel is None:
            continue
        try:
            with np.errstate(all="ignore"):
                result = kernel(*[known[t] for t in inputs])
            if isinstance(result, np.generic):
                result = np.asarray(result)
        except Exception:
            continue  # leave the error to run time, where it is reported with context
        if len(op._outputs) == 1 and callable(op.op_def.num_outputs) and \
                isinstance(result, list | tuple) and len(result) == 1:
            result = result[0]  # one output of a ShapeN, DynamicPartition, ... (bind.py)
        outs = result if len(op._outputs) != 1 else (result,)
        if len(op._outputs) == 0:
            continue
        if sum(getattr(v, "nbytes", 0) for v in outs) > max_bytes:
            continue
        after = frozenset().union(*(anchors.get(t, frozenset()) for t in inputs))
        for t, v in zip(op._outputs, outs):
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
            known[t] = v
            if after:
                anchors[t] = after
    return known


def anchor_folded_shapes(ops: list[Operation], known: dict, anchors: dict,
                         replace: dict) -> dict[Tensor, Tensor]:
    """Stand-ins for folded values that depend on a computed tensor's shape.

    ``Size(values)`` folded to 3 must still wait for `values`' producer, and fail or
    stay dead with it (an input pipeline at its end raises OutOfRangeError, and the ops
    after it must not run), as TensorFlow's constant folding keeps a control edge from
    the shape's source. Each such value read by an op that does not descend from the
    source, or by nothing in the plan (a fetch), is read through a plan ``Const`` with
    the sources as control inputs; values read only by other folded ops, or by ops that
    run after the sources anyway, need none.
    """
    readers: dict[Tensor, list[Operation]] = {}
    bit: dict[Operation, int] = {}
    before: dict[Operation, int] = {}  # per running op, its running ancestors (a bitset)
    for op in ops:
        if op._outputs and all(t in known for t in op._outputs):
            continue  # folded: it does not run
        bit[op] = 1 << len(bit)
        seen = 0
        for t in op._inputs:
            t = replace.get(t, t)
            readers.setdefault(t, []).append(op)
            if t not in known and t._op in bit:
                seen |= before[t._op] | bit[t._op]
        for c in op._control_inputs:
            if c in bit:
                seen |= before[c] | bit[c]
        before[op] = seen
    stand_in: dict[Tensor, Tensor] = {}
    for t, after in anchors.items():
        users = readers.get(t)
        if users is not None and all(
                all(a in bit and before[op] & bit[a] for a in after) for op in users):
            continue  # every reader runs after the sources anyway
        op = plan_op(t._op, "Const", [], value=known[t], control_inputs=sorted(
            after, key=lambda a: a._id))
        stand_in[t] = op._outputs[0]
    return stand_in
