"""Plan rewrites: common-subexpression elimination and constant folding.

Both work on the pruned op list (topological order) and never change results:

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

import numpy as np

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost

MAX_FOLDED_BYTES = 10 * 1024 * 1024


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
