"""Pass 2, rewrite: common-subexpression elimination and constant folding.

`rewrite` runs both, as the session's `OptimizerOptions` ask. They work on the pruned op
list (topological order) and never change results:

* CSE maps each pure op to the first earlier op with the same type, attributes, device,
  (canonical) inputs and control inputs; its outputs are replaced by the earlier op's.
* Constant folding evaluates, once at plan time on the CPU backend, every pure op whose
  inputs are all constants (``Const`` or already folded) and whose outputs are small;
  its outputs become constants of the plan.

Stateful ops (variables, random numbers, queues, I/O), ops with ref inputs or outputs,
and control-flow ops are never merged or folded::

    x ──> sin ──┐          x ──> sin ──> add(sin, sin)
    x ──> sin ──┴─> add    (second sin merged into the first)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost

MAX_FOLDED_BYTES = 10 * 1024 * 1024


@dataclass
class Rewrites:
    """What the rewrite pass found: merged tensors and values known at plan time."""

    replace: dict[Tensor, Tensor] = field(default_factory=dict)  # tensor -> stand-in
    known: dict[Tensor, object] = field(default_factory=dict)  # tensor -> its value


def rewrite(ops: list[Operation], fed: set[Tensor], options, host_kernel) -> Rewrites:
    """Merge common subexpressions and fold constants in `ops` (topological order).

    `options` is an `OptimizerOptions` (``do_common_subexpression_elimination``,
    ``do_constant_folding``, ``max_folded_constant_in_bytes``); `host_kernel(op)`
    returns a CPU kernel for folding, or None. Without folding, only ``Const`` values
    are known.
    """
    replace: dict[Tensor, Tensor] = {}
    if options.do_common_subexpression_elimination:
        replace = eliminate_common_subexpressions(ops, fed)
    # A constant with control inputs (a constant inside a tf.cond branch or a loop body)
    # must run where it is: its control inputs make it dead or tie it to an iteration.
    gated = {op._outputs[0] for op in ops if op.type == "Const" and op._control_inputs}
    if options.do_constant_folding:
        known = fold_constants(ops, fed | gated, replace, host_kernel,
                               options.max_folded_constant_in_bytes)
    else:
        known = {op._outputs[0]: op.attrs["value"] for op in ops
                 if op.type == "Const" and op._outputs[0] not in fed
                 and op._outputs[0] not in gated}
    return Rewrites(replace, known)


def _is_pure(op: Operation) -> bool:
    d = op.op_def
    return not (d.stateful or d.ref_inputs or d.ref_outputs or d.control_flow
                or d.cost is OpCost.ASYNC or any(t.dtype.is_ref_dtype for t in op._inputs))


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
        if not _is_pure(op) or any(t in fed for t in op._outputs):
            continue
        inputs = tuple(id(replace.get(t, t)) for t in op._inputs)
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
                   find_kernel, max_bytes: int = MAX_FOLDED_BYTES) -> dict:
    """Return a map tensor -> NumPy value for every tensor computable at plan time.

    `find_kernel(op)` returns a host-callable kernel for `op`, or None.
    """
    known: dict[Tensor, object] = {}
    for op in ops:
        if op.type == "Const":
            if op._outputs[0] not in fed:
                known[op._outputs[0]] = op.attrs["value"]
            continue
        if not _is_pure(op) or op._control_inputs or not op._inputs:
            continue
        if any(t in fed for t in op._outputs):
            continue
        inputs = [replace.get(t, t) for t in op._inputs]
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
        outs = result if len(op._outputs) != 1 else (result,)
        if len(op._outputs) == 0:
            continue
        if sum(getattr(v, "nbytes", 0) for v in outs) > max_bytes:
            continue
        for t, v in zip(op._outputs, outs):
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
            known[t] = v
    return known
