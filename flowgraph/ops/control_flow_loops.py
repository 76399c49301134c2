"""Loops: the `Enter`, `Exit`, `NextIteration` and `LoopCond` primitives and
`tf.while_loop`.

How a loop is built
-------------------
``tf.while_loop(c, b, [x])`` becomes one *frame*::

    x ─ Enter ─ Merge ─┬─ (ops built by c) ─ LoopCond ─┐
                  ▲    └─────────────── Switch(·, LoopCond) ─┬─ [0] Exit ── result
                  │                                          └─ [1] Identity ─ (ops built by b)
                  └──────────────────── NextIteration ◄──────────────────────────────┘

`Enter` moves a value from the enclosing frame into iteration 0 of the loop's frame
(``is_constant=True``: into every iteration, for tensors from outside that the loop only
reads); `Merge` passes the `Enter` value in iteration 0 and the `NextIteration` value
afterwards; the `Switch` sends the value to the body while the predicate holds and to
`Exit` (back into the enclosing frame) when it fails. The executor runs each iteration
with its own tag, so iterations overlap up to ``parallel_iterations``.

`WhileContext` records, per loop, the ops that belong to it (``ops``), its structural
ops (enters, merges, switches, identities, next iterations, exits), the loop invariants
it entered (``external_values``) and the pivots that gate input-less ops. Names and op
order are TensorFlow's, since TF1 programs look loop nodes up by name: Switches, then
Identities, the body, NextIterations, Exits last; an invariant's Enter is named after its
first consumer (``while/mul/Enter``), and a value from outside an enclosing context is
gated by that context first (`gate_through`: ``while/while/mul/Enter``, then
``.../Enter_1``). Gradients
through a loop need the value of forward tensors *per iteration*:
``add_forward_value(t)`` registers such a tensor in ``forward_values``; the gradient
builder (``control_flow_grad.py``) turns each entry into a stack push in the forward loop
and a read in the backward loop, which runs the same number of iterations, recorded by a
counter it adds to the forward loop.

Example
-------
>>> import flowgraph as tf
>>> i = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
>>> with tf.Session() as sess:
...     print(sess.run(i))
10
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, get_default_graph, name_scope
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.control_flow_cond import (
    ControlFlowContext,
    _check_pred,
    nest_assert_same_structure,
    nest_flatten,
    nest_pack,
    update_input,
)
from flowgraph.ops.tensor_array import arrays_to_flows, flows_to_arrays

__all__ = ["while_loop"]


# -- primitives ------------------------------------------------------------------------------
def _same_shape(op, x):
    return [x]


def _keep_ref_dtype(op):
    return [op.inputs[0].dtype]


_ENTER_ATTRS = {"frame_name": "", "is_constant": False, "parallel_iterations": 10}
register_op("Enter", attrs=dict(_ENTER_ATTRS), control_flow="enter")(_same_shape)
register_op("RefEnter", attrs=dict(_ENTER_ATTRS), dtype_fn=_keep_ref_dtype, ref_inputs=(0,),
            ref_outputs=(0,), control_flow="enter")(_same_shape)
register_op("Exit", control_flow="exit")(_same_shape)
register_op("NextIteration", control_flow="next_iteration")(_same_shape)


@register_op("LoopCond", control_flow="loop_cond")
def _loop_cond_shape(op, pred):
    if op.inputs[0].dtype.base_dtype != _dtypes.bool:
        raise op.shape_error(
            f"the loop predicate must be bool, found {op.inputs[0].dtype.base_dtype.name}")
    if pred.ndims not in (None, 0):
        raise op.shape_error(f"the loop predicate must be a scalar, found shape {pred}")
    return [TensorShape([])]


not_differentiable("LoopCond")  # a bool predicate
# Gradients of Enter, RefEnter, Exit and NextIteration (and the backward loop):
# flowgraph/ops/control_flow_grad.py.


def _shape_le(s1: TensorShape, s2: TensorShape) -> bool:
    """Whether every shape matching `s1` also matches `s2` (s2 is no more specific)."""
    if s2.ndims is None:
        return True
    if s1.ndims != s2.ndims:
        return False
    return all(d2.value is None or d1.value == d2.value for d1, d2 in zip(s1.dims, s2.dims))


def _relaxed(s1: TensorShape, s2: TensorShape) -> TensorShape:
    if s1.ndims is None or s2.ndims is None or s1.ndims != s2.ndims:
        return TensorShape(None)
    return TensorShape([a.value if a.value == b.value else None
                        for a, b in zip(s1.dims, s2.dims)])


# -- WhileContext ----------------------------------------------------------------------------
class WhileContext(ControlFlowContext):
    """The bookkeeping of one `tf.while_loop` (see the module docstring)."""

    def __init__(self, graph, scope: str, parallel_iterations: int, back_prop: bool,
                 swap_memory: bool, maximum_iterations=None) -> None:
        super().__init__(graph, scope[:-1])
        self.scope = scope
        self.frame_name = scope[:-1]
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.maximum_iterations = maximum_iterations
        self.pivot: Tensor | None = None  # the LoopCond output
        self.pivot_for_pred: Tensor | None = None  # gates input-less ops of `cond`
        self.pivot_for_body: Tensor | None = None  # gates input-less ops of `body`
        self.loop_enters: list[Tensor] = []
        self.merges: list[Tensor] = []
        self.switches: list[Operation] = []
        self.identities: list[Tensor] = []
        self.next_iterations: list[Tensor] = []
        self.loop_exits: list[Tensor] = []
        self.invariant_enters: set[Operation] = set()
        self.forward_values: dict[Tensor, int] = {}
        self._carriers: dict[Operation, Operation] = {}
        self.start_id: int | None = None  # ops with a larger _id were made inside

    def made_before(self, t: Tensor) -> bool:
        start = getattr(self, "start_id", None)  # None: read back from a MetaGraphDef
        return start is not None and t.op._id <= start and not self.is_inside(t.op)

    # gating ----------------------------------------------------------------------------
    def enter(self, t: Tensor, is_constant: bool, name: str | None = None,
              scope: str | None = None) -> Tensor:
        g = self.graph
        op_type = "RefEnter" if t.dtype.is_ref_dtype else "Enter"
        name = name or op_type  # TensorFlow names a ref's enter after its type too
        # Loop-variable enters keep the enclosing control dependencies (the loop starts
        # after them); invariants are entered lazily, outside any user block.
        clear = g.control_dependencies(None) if is_constant else _nullcontext()
        with g.as_default(), g.name_scope(scope or self.scope), clear:
            op = g.create_op(op_type, [t], {
                "frame_name": self.frame_name, "is_constant": bool(is_constant),
                "parallel_iterations": self.parallel_iterations}, name=name)
        op._control_flow_context = self
        self.inside.add(op)
        return op.outputs[0]

    def gate_input(self, op: Operation, t: Tensor) -> Tensor:
        # As TensorFlow, an invariant's Enter is named after its first consumer
        # ("while/mul/Enter"), where graph lookups by name find it.
        before = len(self.graph._ops)
        v = self.gate(t, scope=f"{op.name}/")
        made = self.graph._ops[before:]
        if made:
            # (a context read back from a MetaGraphDef starts without the attribute)
            self.__dict__.setdefault("_gated_for", {}).setdefault(op, []).extend(made)
        return v

    def gate(self, t: Tensor, scope: str | None = None) -> Tensor:
        """A loop invariant: `t` entered once, visible in every iteration."""
        v = self.external_values.get(t)
        if v is None:
            v = self.enter(self.gate_through(t, scope), True, scope=scope)
            v.op._gate_ctx = self
            self.external_values[t] = v
            self.invariant_enters.add(v.op)
        return v

    def process(self, new_ops: list[Operation], skip=()) -> None:
        # An inner context may have had this one enter a value while this one was still
        # capturing (`gate_through`): those Enters are this loop's gates, not its ops.
        new_ops = self.without_gates(new_ops)
        start = len(self.graph._ops)
        super().process(new_ops, skip)
        self._place_gates(new_ops, start)

    def control_pivot(self) -> Operation:
        return (self.pivot_for_body if self.pivot_for_body is not None
                else self.pivot_for_pred).op

    def _carrier(self, c: Operation) -> Operation:
        """An op inside the loop that runs (each iteration) after outside op `c`."""
        carrier = self._carriers.get(c)
        if carrier is not None:
            return carrier
        g = self.graph
        src = c.outputs[0] if c.outputs and not c.outputs[0].dtype.is_ref_dtype else None
        if src is None:
            with g.as_default(), g.name_scope(self.scope), g.control_dependencies(None), \
                    g.control_dependencies([c]):
                src = constant(True, name="control_carrier")
        entered = self.gate(src)
        with g.as_default(), g.name_scope(self.scope), g.control_dependencies(None):
            carrier = g.create_op("Identity", [entered], name="control_carrier")
        carrier._control_flow_context = self
        carrier._add_control_input(self.control_pivot())
        self.inside.add(carrier)
        self.ops.append(carrier)
        self._carriers[c] = carrier
        return carrier

    def _process_control_inputs(self, op: Operation) -> None:
        external = [c for c in op._control_inputs if not self.is_inside(c)]
        if external:
            # Ops outside the loop run once, in the enclosing frame: wait for them through
            # an entered value instead of a control edge that would cross frames.
            for c in external:
                op._control_inputs.remove(c)
                if op in c._control_outputs:
                    c._control_outputs.remove(op)
            for c in external:
                op._add_control_input(self._carrier(c))
        if op._control_inputs:
            return
        if all(t.op in self.invariant_enters for t in op._inputs):
            # Input-less, or reading only loop invariants: without the pivot it would run
            # once more than the body (in the iteration whose predicate is false).
            op._add_control_input(self.control_pivot())

    # gradient support ------------------------------------------------------------------
    def add_forward_value(self, t: Tensor) -> int:
        """Register forward tensor `t` (inside this loop) whose per-iteration values a
        backward loop will read; returns its index in ``forward_values``."""
        if t.op not in self.inside:
            raise ValueError(f"{t.name} is not computed inside while loop '{self.name}'.")
        return self.forward_values.setdefault(t, len(self.forward_values))

    def __repr__(self) -> str:
        return (f"<WhileContext '{self.name}' vars={len(self.merges)} "
                f"ops={len(self.ops)} parallel_iterations={self.parallel_iterations}>")


# -- while_loop ------------------------------------------------------------------------------
def _check_invariant(i: int, x: Tensor, shape: TensorShape, name: str) -> None:
    if not _shape_le(x.shape, shape):
        raise ValueError(
            f"The shape invariant specified for {x.name} is not compatible with the initial "
            f"shape of the loop variable. It enters the loop with shape {x.shape}, but the "
            f"specified shape invariant is {shape}. (while_loop '{name}', loop variable {i}: "
            "give an invariant that the initial value satisfies, None where a dimension "
            "changes.)")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations: int = 10,
               back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
               maximum_iterations=None, return_same_structure: bool = False):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true.

    `loop_vars` is a (nested) list, tuple, namedtuple or dict of tensors (or values
    convertible to tensors); `cond` returns a scalar bool tensor, `body` the same
    structure as `loop_vars` with the same dtypes. A loop variable's static shape may not
    change across iterations unless `shape_invariants` (same structure, `TensorShape`s)
    allows it. Independent work of successive iterations overlaps, up to
    `parallel_iterations` iterations at a time. `maximum_iterations` bounds the number
    of iterations. With a single loop variable the result is that tensor (unless
    `return_same_structure`), as in TensorFlow 1.x.

    Example
    -------
    >>> import flowgraph as tf
    >>> n = tf.placeholder(tf.int32, [])
    >>> i, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i),
    ...                          [tf.constant(0), tf.constant(0)])
    >>> with tf.Session() as sess:
    ...     print(sess.run(total, {n: 5}))
    10
    """
    if not callable(cond):
        raise TypeError(f"'cond' must be callable. (while_loop got {cond!r}.)")
    if not callable(body):
        raise TypeError(f"'body' must be callable. (while_loop got {body!r}.)")
    if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, int) \
            or parallel_iterations < 1:
        raise TypeError(f"parallel_iterations must be a positive integer, got "
                        f"{parallel_iterations!r}.")
    single_tensor = not isinstance(loop_vars, list | tuple | dict)
    if single_tensor:
        loop_vars = [loop_vars]
        if shape_invariants is not None:
            shape_invariants = [shape_invariants]
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided. (while_loop got no loop variables.)")
    with name_scope(name, "while", nest_flatten(loop_vars)) as scope:
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError(  # (TensorFlow's words first)
                    "'maximum_iterations' must be a scalar. Received shape: "
                    f"{maximum_iterations.shape} (while_loop '{scope[:-1]}').")
            if not maximum_iterations.dtype.base_dtype.is_integer:
                raise TypeError(f"while_loop '{scope[:-1]}': maximum_iterations must be an "
                                f"integer, got {maximum_iterations.dtype.base_dtype.name}.")
            counter = constant(0, dtype=maximum_iterations.dtype.base_dtype,
                               name="iteration_counter")
            orig_cond, orig_body, limit = cond, body, maximum_iterations
            from flowgraph.ops import math_ops

            if try_to_pack:
                loop_vars = (counter, loop_vars[0])

                def cond(i, lv):
                    return math_ops.logical_and(i < limit, orig_cond(lv))

                def body(i, lv):
                    # (as TensorFlow: the body's result is compared with the loop
                    # variables as they are, so a one-element list for a tensor fails)
                    return (i + 1, orig_body(lv))
            else:
                loop_vars = (counter, loop_vars)

                def cond(i, lv):
                    return math_ops.logical_and(i < limit, _call(orig_cond, lv))

                def body(i, lv):
                    # (as TensorFlow: the loop variables are nested one level down here,
                    # so a tuple returned for a list of them, or the reverse, fails)
                    return (i + 1, _call(orig_body, lv))
            if shape_invariants is not None:
                inv = shape_invariants[0] if try_to_pack else shape_invariants
                shape_invariants = (TensorShape([]), inv)
            try_to_pack = False
        ctx = WhileContext(get_default_graph(), scope, parallel_iterations, back_prop,
                           swap_memory, maximum_iterations)
        result = _build_loop(ctx, cond, body, loop_vars, shape_invariants,
                             return_same_structure)
    if maximum_iterations is not None:
        return result[1]
    if single_tensor and not return_same_structure and isinstance(result, list | tuple) \
            and len(result) == 1:
        return result[0]
    return result


def _call(fn, lv):
    """Call a user cond/body: list/tuple loop variables are spread over its arguments."""
    return fn(*lv) if isinstance(lv, list | tuple) else fn(lv)


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


def _build_loop(ctx: WhileContext, cond, body, loop_vars, shape_invariants,
                return_same_structure: bool):
    g = ctx.graph
    name = ctx.name
    # TensorArrays travel as their flows (TF1 accepts them in loop_vars).
    leaves, templates = arrays_to_flows(nest_flatten(loop_vars))
    flat = [convert_to_tensor(x) for x in leaves]
    if not flat:
        raise ValueError(f"while_loop '{name}': loop_vars holds no tensors.")
    if shape_invariants is not None:
        nest_assert_same_structure(loop_vars, shape_invariants, "loop_vars",
                                   "shape_invariants", f"while_loop '{name}'")
        invariants = [as_shape(s) for s in nest_flatten(shape_invariants)]
        for i, (x, s) in enumerate(zip(flat, invariants)):
            _check_invariant(i, x, s, name)
    else:
        invariants = None
    ctx.start_id = g._op_counter
    with g.as_default(), g.name_scope(ctx.scope):
        # Enters live in the enclosing context (its processing gates their inputs).
        # (As TensorFlow, a value from outside an enclosing context is gated by it first,
        # named in this loop's scope: "cond/while/Switch" -> "cond/while/Enter".)
        enters = [ctx.enter(ctx.gate_through(x, ctx.scope), False) for x in flat]
        if invariants is not None:
            for e, s in zip(enters, invariants):
                e._shape = s
        ctx.loop_enters = enters
        structural: list[Operation] = [e.op for e in enters]
        merges = []
        for e in enters:
            with g.control_dependencies(None):
                m = g.create_op("Merge", [e, e], name="Merge")
            merges.append(m.outputs[0])
            structural.append(m)
        ctx.merges = merges
        ctx.pivot_for_pred = merges[0]
        _mark_structural(ctx, structural)
        packed = nest_pack(loop_vars, flows_to_arrays(merges, templates))

        def call_cond():
            return convert_to_tensor(_call(cond, packed))

        pred, cond_ops = ctx.capture(call_cond)
        ctx.process(cond_ops)
        pred = ctx.output(pred)
        _check_pred(pred, f"while_loop '{name}' cond")
        with g.control_dependencies(None):
            loop_cond = g.create_op("LoopCond", [pred], name="LoopCond").outputs[0]
            ctx.pivot = loop_cond
            structural = [loop_cond.op]
            # TensorFlow's order (and so its names and its GraphDef's node order): every
            # Switch, every Identity, the body, the NextIterations, then the Exits.
            switches = [g.create_op("Switch", [m, loop_cond], name="Switch") for m in merges]
            identities = [g.create_op("Identity", [sw.outputs[1]], name="Identity").outputs[0]
                          for sw in switches]
            structural += switches + [t.op for t in identities]
        ctx.switches, ctx.identities = switches, identities
        ctx.pivot_for_body = identities[0]
        _mark_structural(ctx, structural)
        packed_body = nest_pack(loop_vars, flows_to_arrays(identities, templates))

        def call_body():
            out = _call(body, packed_body)
            leaves = [] if out is None else [
                convert_to_tensor(x) for x in arrays_to_flows(nest_flatten(out))[0]]
            return out, leaves

        (body_result, body_flat), body_ops = ctx.capture(call_body)
        ctx.process(body_ops)
        if body_result is None:
            raise ValueError(f"while_loop '{name}': body returned None; it must return the "
                             "loop variables' new values.")
        if isinstance(loop_vars, dict):
            expected, got = loop_vars, body_result
        else:
            if not isinstance(body_result, list | tuple | dict):
                body_result = [body_result]
            expected = list(loop_vars)
            # As TensorFlow, `list()` of the result: a dict returned for a list of loop
            # variables compares as its keys (a ValueError, not a TypeError)
            got = list(body_result)
        nest_assert_same_structure(expected, got, "loop_vars", "body returned",
                                   f"while_loop '{name}'")
        next_vals = [ctx.output(t) for t in body_flat]
        # Shapes are checked for every variable before dtypes, as TensorFlow does.
        for i, (m, n, x) in enumerate(zip(merges, next_vals, flat)):
            if not _shape_le(n.shape, m.shape):
                suggest = _relaxed(m.shape, n.shape)
                hint = suggest.as_list() if suggest.ndims is not None else None
                raise ValueError(  # (TensorFlow's words first)
                    f"Input tensor '{x.name}' enters the loop with shape {m.shape}, but has "
                    f"shape {n.shape} after one iteration. To allow the shape to vary "
                    "across iterations, use the `shape_invariants` argument of "
                    "tf.while_loop to specify a less-specific shape. (while_loop "
                    f"'{name}', loop variable {i}: e.g. tf.TensorShape({hint}).)")
        for i, (m, n, x) in enumerate(zip(merges, next_vals, flat)):
            if n.dtype.base_dtype != m.dtype.base_dtype:
                raise TypeError(
                    f"while_loop '{name}': loop variable {i} ({x.name}) has dtype "
                    f"{m.dtype.base_dtype.name} before the loop but the body returns "
                    f"{n.dtype.base_dtype.name} ({n.name}). Cast it with tf.cast in the "
                    "body.")
        with g.control_dependencies(None):
            nexts = []
            for m, n in zip(merges, next_vals):
                nxt = g.create_op("NextIteration", [n], name="NextIteration")
                if n.op in ctx.invariant_enters:
                    # The body returned an outside tensor: tie it to the body's pivot, or
                    # it would feed the next iteration even when the loop ends.
                    nxt._add_control_input(ctx.control_pivot())
                nexts.append(nxt.outputs[0])
                update_input(m.op, 1, nxt.outputs[0])
        ctx.next_iterations = nexts
        with g.control_dependencies(None):
            exits = [_exit(g, sw, full) for sw, full in
                     zip(switches, getattr(ctx, "exit_names", None) or [None] * len(switches))]
        ctx.loop_exits = exits
        _mark_structural(ctx, [t.op for t in nexts] + [t.op for t in exits])
        if ctx.outer_context is None:
            g.add_to_collection(GraphKeys.WHILE_CONTEXT, ctx)
    packed_exits = nest_pack(body_result, flows_to_arrays(exits, templates))
    if return_same_structure:
        return packed_exits
    if len(exits) == 1 and isinstance(packed_exits, list | tuple):
        return packed_exits[0]
    return packed_exits


def _exit(g, switch: Operation, full_name: str | None) -> Tensor:
    """The loop's Exit of `switch`: ``<loop>/Exit[_i]``, or `full_name` when given (a
    backward loop names its results as TensorFlow's gradients do)."""
    if full_name is None:
        return g.create_op("Exit", [switch.outputs[0]], name="Exit").outputs[0]
    scope, _, base = full_name.rpartition("/")
    with g.name_scope(f"{scope}/" if scope else None):
        return g.create_op("Exit", [switch.outputs[0]], name=base).outputs[0]


def _mark_structural(ctx: WhileContext, ops: list[Operation]) -> None:
    for op in ops:
        op._control_flow_context = ctx
        ctx.inside.add(op)
        if op not in ctx.ops:
            ctx.ops.append(op)


def _is_loop_op(op: Operation) -> bool:
    return op.op_def.control_flow in ("enter", "exit", "next_iteration", "loop_cond")


def in_while_loop(op: Operation) -> bool:
    """Whether `op` was built inside the body or condition of a `tf.while_loop`."""
    ctx = getattr(op, "_control_flow_context", None)
    while ctx is not None:
        if isinstance(ctx, WhileContext):
            return True
        ctx = ctx.outer_context
    return False
