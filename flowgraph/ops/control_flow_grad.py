"""Gradients through control flow: the primitives' gradient functions and the backward
`tf.while_loop`.

Conditionals
------------
A `tf.cond` is differentiated op by op. The gradient of its ``Merge`` is a ``Switch`` of
the incoming gradient on the cond's predicate, so only the taken branch's gradient ops
receive a live value; the gradient of a ``Switch`` is a ``Merge`` of its two outputs'
gradients. The output that was not taken gets ``zeros_like(that output)``, which is dead
exactly when the branch did not run, so the ``Merge`` always has one live input::

    x ─ Switch(x, p) ─[1]─ f ─ Merge ─ y       forward
    g_x ◄─ Merge ◄─ f' ◄─[1]─ Switch(g_y, p)    backward (zeros_like(Switch[0]) on [0])

Loops
-----
A loop is differentiated as a whole (`backprop_loop`, called by `tf.gradients` when it
reaches a loop's Exits). The forward loop gets, once, an iteration counter (its own
Enter/Merge/Switch/Identity/Add/NextIteration/Exit on the loop's predicate) and a stack
(``StackV2``, created in the loop's enclosing context, so once per run and per frame
instance). The backward loop is a `tf.while_loop` of its own, run by a
`GradWhileContext`::

    loop vars:  j = n (the forward count), g_v (one per differentiable loop variable),
                acc_w = 0 (one per differentiable loop invariant w the body reads)
    cond:       j > 0
    body:       k = j - 1;  the body's ops are differentiated in reverse order, seeded with
                g_v at the NextIteration inputs; g_v <- the gradients of the body's inputs
                (its Identities); acc_w <- acc_w + the gradient of w's Enter

When a gradient op reads a forward tensor computed inside the loop, the context replaces
it with ``StackReadAt(stack, k)`` and adds ``StackPushAt(stack, t, i)`` next to `t` in the
forward loop (``i``: the forward counter), so each backward iteration reads the value of
the matching forward iteration. Loop invariants are entered as they are; constants are
copied. Every push must precede every read: the forward counter's increment waits for
the iteration's pushes, so the count that starts the backward loop exists only once the
forward loop has recorded everything. Loops nest: an inner loop's stack handle and count
are forward values of the outer loop, pushed and read in the same way. A forward value in
a `tf.cond` branch that did not run is not recorded, and its read is dead (see
``stack_ops.py``), so the backward branch does not run either.

`while_loop(..., back_prop=False)` passes no gradient (as TensorFlow's stop_gradient on
its results). Gradients of gradients through a loop raise TensorFlow's TypeError.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant(2.0)
>>> y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * a), [0, x])[1]
>>> with tf.Session() as sess:
...     print(sess.run(tf.gradients(y, x)[0]))  # d x^8 / dx = 8 x^7
1024.0
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import register_gradient
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import (
    array_gen_ops,
    stack_ops,  # noqa: F401  (registers the stack ops)
)
from flowgraph.ops import array_ops as _array
from flowgraph.ops import math_ops as _math
from flowgraph.ops.control_flow_cond import (
    CondContext,
    forward_edit,
    merge,
    switch,
    update_input,
)
from flowgraph.ops.control_flow_loops import (
    WhileContext,
    _build_loop,
    _mark_structural,
    _relaxed,
    _shape_le,
)
from flowgraph.ops.gradient_util import _dense as dense
from flowgraph.ops.gradient_util import _zeros_for, aggregate, is_differentiable_dtype

__all__: list[str] = []


def _dense(g):
    return None if g is None else dense(g)


# -- primitives ------------------------------------------------------------------------------
@register_gradient("Switch")
def _switch_grad(op: Operation, grad_false, grad_true):
    """The gradient of whichever output was live: a Merge of both outputs' gradients
    (an output of a dtype without zeros and without a gradient: the input gets none)."""
    if grad_false is None or grad_true is None:
        return [None, None]
    if isinstance(grad_false, IndexedSlices) or isinstance(grad_true, IndexedSlices):
        return [_merge_slices([grad_false, grad_true]), None]
    return [merge([grad_false, grad_true], name="cond_grad")[0], None]


def _as_slices(g) -> IndexedSlices:
    if isinstance(g, IndexedSlices):
        return g
    shape = _array.shape(g, optimize=False)
    return IndexedSlices(g, array_gen_ops.range(0, shape[0]), shape)


def _merge_slices(grads: list) -> IndexedSlices:
    """As TensorFlow, a gather's sparse gradient stays an IndexedSlices through a cond:
    a dense gradient joins as all its rows, and values, indices and dense shape are
    merged one by one (``cond_grad/Merge``, ``Merge_1``, ``Merge_2``)."""
    g = grads[0].values.graph if isinstance(grads[0], IndexedSlices) else grads[0].graph
    with g.name_scope("cond_grad"):
        parts = [_as_slices(x) for x in grads]
        if len({p.indices.dtype.base_dtype for p in parts}) > 1:
            parts = [IndexedSlices(p.values, _math.cast(p.indices, _dtypes.int64),
                                   p.dense_shape) for p in parts]
        values = merge([p.values for p in parts])[0]
        indices = merge([p.indices for p in parts])[0]
        if any(p.dense_shape is None for p in parts):
            return IndexedSlices(values, indices)
        shapes = [p.dense_shape for p in parts]
        if len({t.dtype.base_dtype for t in shapes}) > 1:
            shapes = [_math.cast(t, _dtypes.int64) for t in shapes]
        return IndexedSlices(values, indices, merge(shapes)[0])


register_gradient("RefSwitch")(_switch_grad)


@register_gradient("Merge")
def _merge_grad(op: Operation, grad, _index_grad=None):
    """The gradient goes to the input that was live: Switch it on the cond's predicate
    (or, for a Merge built by hand, on its ``value_index`` output)."""
    grad = _dense(grad)
    pred = getattr(op, "_cond_pred", None)
    if pred is not None and len(op.inputs) == 2:
        g_false, g_true = switch(grad, pred, name="cond_grad")
        return [g_false, g_true]
    index = op.outputs[1]
    return [switch(grad, _math.equal(index, i), name="cond_grad")[1]
            for i in range(len(op.inputs))]


def _pass_through(op: Operation, grad):
    """Within one iteration a frame crossing passes the gradient on unchanged. Whole
    loops are differentiated by `backprop_loop`, which builds the backward Enter, Merge,
    Switch, Exit and NextIteration ops itself; this applies when a gradient is taken
    inside a loop body with respect to a loop invariant (its Enter)."""
    return grad


for _name in ("Enter", "RefEnter", "Exit", "NextIteration"):
    register_gradient(_name)(_pass_through)


# -- contexts of forward values --------------------------------------------------------------
def value_context(t: Tensor):
    """The control-flow context in which `t`'s value lives (an Exit's value lives in its
    loop's enclosing context)."""
    ctx = getattr(t.op, "_control_flow_context", None)
    if ctx is not None and t.op.op_def.control_flow == "exit":
        ctx = ctx.outer_context
    return ctx


def within(ctx, outer) -> bool:
    """Whether context `ctx` is `outer` or nested in it."""
    while ctx is not None:
        if ctx is outer:
            return True
        ctx = ctx.outer_context
    return False


def _adopt(ctx, ops: list[Operation]) -> None:
    """Make `ops`, added after `ctx` was built, members of `ctx` and its enclosing
    contexts (as if they had been created inside)."""
    for op in ops:
        if getattr(op, "_control_flow_context", None) is None:
            op._control_flow_context = ctx
    c = ctx
    while c is not None:
        new = [op for op in ops if op not in c.inside]
        c.inside.update(new)
        c.ops.extend(new)
        c = c.outer_context


# -- the forward side: counter, stack, pushes ------------------------------------------------
class ForwardState:
    """What gradients added to one forward loop: an iteration counter (``index`` in the
    body, ``count`` after the loop), a stack (``handle``, made in the loop's enclosing
    context) and one push per forward value that a backward loop reads (``slots``)."""

    def __init__(self, loop: WhileContext) -> None:
        self.loop = loop
        self.slots: dict[Tensor, int] = {}
        g = loop.graph
        outer = loop.outer_context
        with forward_edit(g), g.name_scope(loop.scope):
            zero = constant(0, dtype=_dtypes.int32, name="f_count/init")
            size = constant(-1, dtype=_dtypes.int32, name="f_acc/max_size")
            stack = g.create_op("StackV2", [size], {
                "elem_type": _dtypes.float32, "stack_name": f"{loop.name}/f_acc"},
                name="f_acc")
            if outer is not None:
                outer.process([zero.op, size.op, stack])
                _adopt(outer, [zero.op, size.op, stack])
            enter = loop.enter(zero, False, name="f_count/Enter")
            m = g.create_op("Merge", [enter, enter], name="f_count/Merge")
            sw = g.create_op("Switch", [m.outputs[0], loop.pivot], name="f_count/Switch")
            ex = g.create_op("Exit", [sw.outputs[0]], name="f_count/Exit")
            ident = g.create_op("Identity", [sw.outputs[1]], name="f_count/Identity")
            one = constant(1, dtype=_dtypes.int32, name="f_count/one")
            inc = g.create_op("AddV2", [ident.outputs[0], one], name="f_count/add")
            nxt = g.create_op("NextIteration", [inc.outputs[0]], name="f_count/NextIteration")
            update_input(m, 1, nxt.outputs[0])
            _mark_structural(loop, [enter.op, m, sw, ex, ident, nxt])
            loop.process([one.op, inc])
            _adopt(loop, [enter.op, m, sw, ex, ident, nxt, one.op, inc])
        self.handle: Tensor = stack.outputs[0]
        self.index: Tensor = ident.outputs[0]
        self.count: Tensor = ex.outputs[0]
        self._increment = inc

    def push(self, t: Tensor) -> int:
        """Record forward tensor `t` (inside the loop) in every iteration; its slot."""
        slot = self.slots.get(t)
        if slot is not None:
            return slot
        loop = self.loop
        slot = self.slots[t] = loop.add_forward_value(t)
        ctx = value_context(t)
        g = loop.graph
        with forward_edit(g), g.name_scope(loop.scope):
            created = []
            value = t
            if t.dtype.is_ref_dtype:  # record the value, not the variable
                value = g.create_op("Identity", [t], name="f_acc/read").outputs[0]
                created.append(value.op)
            handle = loop.gate(self.handle)
            push = g.create_op("StackPushAt", [handle, value, self.index], {"slot": slot},
                               name="f_acc/push")
            created.append(push)
            push._control_flow_context = ctx
            _adopt(ctx, created)
            self._increment._add_control_input(push)
        return slot


def forward_state(loop: WhileContext) -> ForwardState:
    state = getattr(loop, "_grad_state", None)
    if state is None:
        state = loop._grad_state = ForwardState(loop)
    return state


# -- the backward loop -----------------------------------------------------------------------
class GradWhileContext(WhileContext):
    """The backward loop of `forward`: a `WhileContext` whose body reads forward values
    of the matching forward iteration (``index``) from the forward loop's stack."""

    def __init__(self, forward: WhileContext, scope: str) -> None:
        super().__init__(forward.graph, scope, forward.parallel_iterations, True,
                         forward.swap_memory)
        self.forward = forward
        self.forward_state = forward_state(forward)
        self.index: Tensor | None = None  # the forward iteration of this backward one

    def made_before(self, t: Tensor) -> bool:
        return False  # a backward loop gates lazily (`gate` reads forward values)

    def gate_input(self, op: Operation, t: Tensor) -> Tensor:
        # Its gates may edit the forward loop (`forward_edit`): the op order stays as made.
        return self.gate(t, scope=f"{op.name}/")

    def gate(self, t: Tensor, scope: str | None = None) -> Tensor:
        v = self.external_values.get(t)
        if v is not None:
            return v
        fwd = self.forward
        if not within(value_context(t), fwd):
            # computed outside the forward loop: a loop invariant
            return super().gate(t, scope=scope)
        op = t.op
        if op.op_def.control_flow == "enter" and op.attrs.get("is_constant") and \
                op.attrs.get("frame_name") == fwd.frame_name:
            v = self.gate(op.inputs[0], scope)  # a forward invariant: its outside value
        elif op.type == "Const" and not op.inputs:
            v = self._copy_constant(op)
        else:
            v = self._read(t)
        self.external_values[t] = v
        return v

    def _new_inside(self, op: Operation) -> None:
        op._control_flow_context = self
        self.inside.add(op)
        self.ops.append(op)

    def _copy_constant(self, op: Operation) -> Tensor:
        g = self.graph
        with g.as_default(), g.name_scope(self.scope), g.control_dependencies(None):
            c = g.create_op("Const", [], dict(op.attrs), name="f_const",
                            dtypes=[op.outputs[0].dtype])
        c._add_control_input(self.control_pivot())
        self._new_inside(c)
        return c.outputs[0]

    def _read(self, t: Tensor) -> Tensor:
        state = self.forward_state
        slot = state.push(t)
        handle = self.gate(state.handle)
        g = self.graph
        with g.as_default(), g.name_scope(self.scope), g.control_dependencies(None):
            op = g.create_op("StackReadAt", [handle, self.index], {
                "slot": slot, "elem_type": t.dtype.base_dtype}, name="f_acc/read")
        self._new_inside(op)
        out = op.outputs[0]
        out.set_shape(t.shape)
        return out


def _fit(t: Tensor, shape: TensorShape, what: str) -> Tensor:
    """`t` with static shape no less specific than `shape` (the loop's invariant)."""
    if _shape_le(t.shape, shape):
        return t
    if not t.shape.is_compatible_with(shape):
        raise ValueError(f"gradient of the while loop: {what} has shape {t.shape}, "
                         f"incompatible with the loop variable's shape {shape}")
    out = _array.identity(t)
    out.set_shape(shape)
    return out


def _structural_ops(loop: WhileContext) -> set[Operation]:
    ops = {t.op for t in (*loop.loop_enters, *loop.merges, *loop.identities,
                          *loop.next_iterations, *loop.loop_exits)}
    ops.update(loop.switches)
    ops.update(loop.invariant_enters)
    if loop.pivot is not None:
        ops.add(loop.pivot.op)
    return ops


def _is_handle(t: Tensor) -> bool:
    return t.dtype.base_dtype == _dtypes.resource


def _handle_zeros(enter: Operation) -> Tensor:
    """The zero gradient of the resource variable whose handle `enter` brings into the
    loop (the body reads the variable there: its value's gradient accumulates on the
    handle, as TensorFlow accumulates it): zeros of the variable's dtype and shape."""
    from flowgraph.ops.resource_variable_ops import variable_shape

    handle = enter.inputs[0]
    dtype = next((c.attrs["dtype"] for c in enter.outputs[0].consumers()
                  if c.attrs.get("dtype") is not None), None)
    source = handle.op
    while source.type in ("Enter", "Identity") and source.inputs:
        source = source.inputs[0].op
    if source.type == "VarHandleOp":
        dtype = dtype or source.attrs["dtype"]
        if source.attrs["shape"].is_fully_defined():
            return _array.zeros(source.attrs["shape"], dtype)
    if dtype is None:
        raise ValueError(f"gradient of the while loop: cannot tell the dtype of the "
                         f"variable behind the handle {handle.name}")
    return _array.zeros(variable_shape(handle), dtype)


def _sparse_invariant(enter: Operation):
    """The indices dtype when loop invariant `enter` is used only as the params of
    axis-0 gathers (an ``embedding_lookup`` in the body), else None. TensorFlow then
    accumulates its gradient as an IndexedSlices: indices, values and dense shape."""
    t = enter.outputs[0]
    rest = t.shape.dims[1:] if t.shape.ndims else None
    if not t.dtype.is_floating or rest is None or any(d is None for d in rest):
        return None
    dtypes = set()
    for c in t._consumers:
        if c.type != "GatherV2" or c.inputs[0] is not t or c.attrs.get("batch_dims", 0) != 0:
            return None
        axis = constant_value(c.inputs[2])
        if axis is None or int(axis) != 0:
            return None
        dtypes.add(c.inputs[1].dtype.base_dtype)
    return dtypes.pop() if len(dtypes) == 1 else None


def _sparse_acc_init(enter: Operation, index_dtype) -> list[Tensor]:
    t = enter.outputs[0]
    rest = [int(d) for d in t.shape.dims[1:]]
    # As TensorFlow: the accumulators start with one zero row at index 0 (so a sparse
    # update, momentum's say, always touches row 0)
    return [constant(np.zeros([1], index_dtype.as_numpy_dtype)),
            _array.zeros([1, *rest], dtype=t.dtype.base_dtype),
            constant(np.zeros([t.shape.ndims], np.int32))]


def _sparse_acc_step(accs: list[Tensor], d) -> list[Tensor]:
    """Append gradient `d` (an IndexedSlices, or a dense Tensor: all its rows) to the
    accumulators (indices, values, dense shape), as TensorFlow's backward loop does."""
    acc_i, acc_v, acc_s = accs
    if d is None:
        return accs
    if not isinstance(d, IndexedSlices):
        n = _array.shape(d, out_type=acc_i.dtype)[0]
        d = IndexedSlices(d, array_gen_ops.range(n), _array.shape(d))
    shape = _array.shape(d.values) if d.dense_shape is None else d.dense_shape
    return [_array.concat([acc_i, _math.cast(d.indices, acc_i.dtype)], 0),
            _array.concat([acc_v, d.values], 0),
            _math.maximum(acc_s, _math.cast(shape, _dtypes.int32))]


def backprop_loop(loop: WhileContext, grads: dict, region: list[Operation], bp) -> None:
    """Build the backward loop of forward `loop` and record the gradients of its inputs.

    `grads` maps tensors to their gradient contributions; the loop's Exits' entries are
    read, its entered tensors' entries extended. `region` holds the loop's ops that lie
    between the xs and the ys; `bp` is the running `tf.gradients` pass (its
    ``between``, and ``region(ops, grads, level)`` to differentiate the loop body).
    """
    exits = loop.loop_exits
    out_grads = []
    for e in exits:
        g = aggregate(grads.get(e, []))
        grads[e] = [g] if g is not None else []
        out_grads.append(g)
    if not loop.back_prop or all(g is None for g in out_grads):
        return
    if isinstance(loop, GradWhileContext):
        # As TensorFlow: the backward loop reads its forward values from stacks, which
        # carry no gradient, so a gradient through it would silently miss terms.
        raise TypeError(f"Second-order gradient for while loops not supported "
                        f"(tf.gradients reached the backward loop {loop.name!r}).")
    between = bp.between
    carried = [i for i, m in enumerate(loop.merges)
               if m.op in between and is_differentiable_dtype(m.dtype)]
    invariants = sorted((op for op in loop.invariant_enters
                         if op in between and (is_differentiable_dtype(op.outputs[0].dtype)
                                               or _is_handle(op.outputs[0]))),
                        key=lambda op: op._id)
    if not carried and not invariants:
        return
    state = forward_state(loop)
    g = loop.graph
    structural = _structural_ops(loop)
    body_ops = [op for op in region if op not in structural]
    next_values = [n.op.inputs[0] for n in loop.next_iterations]

    init_g = []
    for i in carried:
        gi = out_grads[i]
        init_g.append(_dense(gi) if gi is not None
                      else _array.zeros_like(exits[i], optimize=False))
    init_acc = [_handle_zeros(op) if _is_handle(op.outputs[0]) else _zeros_for(op.inputs[0])
                for op in invariants]
    # invariants gathered from (embedding tables): IndexedSlices accumulators instead
    sparse = {op: dt for op in invariants if not _is_handle(op.outputs[0])
              and (dt := _sparse_invariant(op)) is not None}
    init_sparse = [t for op in invariants if op in sparse
                   for t in _sparse_acc_init(op, sparse[op])]
    shapes = ([TensorShape([])] + [_relaxed(t.shape, loop.merges[i].shape)
                                   for t, i in zip(init_g, carried)]
              + [t.shape for t in init_acc]
              + [TensorShape([None, *t.shape.dims[1:]]) if k % 3 < 2 else t.shape
                 for k, t in enumerate(init_sparse)])
    n_c = len(carried)
    n_a = n_c + len(invariants)

    def cond(j, *_):
        return _math.greater(j, 0)

    def body(j, *rest):
        k = _math.subtract(j, 1)
        ctx.index = k
        local: dict = {}
        for i, gi in zip(carried, rest[:n_c]):
            local.setdefault(next_values[i], []).append(gi)
        bp.region(body_ops, local, loop)
        new_g = []
        for i, gi, shape in zip(carried, rest[:n_c], shapes[1:]):
            d = _dense(aggregate(local.get(loop.identities[i], [])))
            new_g.append(_fit(_array.zeros_like(gi, optimize=False) if d is None else d, shape,
                              f"the gradient of loop variable {i}"))
        new_acc, new_sparse, at = [], [], n_a
        for op, acc, shape in zip(invariants, rest[n_c:], shapes[1 + n_c:]):
            if op in sparse:
                new_acc.append(acc)
                new_sparse += _sparse_acc_step(list(rest[at:at + 3]),
                                               aggregate(local.get(op.outputs[0], [])))
                at += 3
                continue
            d = _dense(aggregate(local.get(op.outputs[0], [])))
            new_acc.append(acc if d is None else _fit(
                _math.add(acc, d), shape, f"the gradient of {op.inputs[0].name}"))
        return [k, *new_g, *new_acc, *new_sparse]

    outer = g.get_name_scope()
    prefix = f"{outer}/" if outer else ""
    with g.name_scope(f"{loop.name}_grad") as scope:
        ctx = GradWhileContext(loop, scope)
        # The results carry TensorFlow's names: a loop variable's gradient is the Exit of
        # its Enter's gradient, an invariant's the Exit of its accumulator (``b_acc_3``).
        ctx.exit_names = ([None]
                          + [f"{prefix}{loop.loop_enters[i].op.name}_grad/Exit" for i in carried]
                          + [f"{prefix}{op.name}_grad/b_acc_3" for op in invariants]
                          + [f"{prefix}{op.name}_grad/b_acc_{j}" for op in invariants
                             if op in sparse for j in (6, 7, 8)])
        results = _build_loop(ctx, cond, body,
                              [state.count, *init_g, *init_acc, *init_sparse], shapes, True)
    for i, ge in zip(carried, results[1:1 + n_c]):
        grads.setdefault(loop.loop_enters[i].op.inputs[0], []).append(ge)
    at = 1 + n_a
    for op, acc in zip(invariants, results[1 + n_c:1 + n_a]):
        if op in sparse:
            indices, values, dense_shape = results[at:at + 3]
            at += 3
            acc = IndexedSlices(values, indices, dense_shape)
        grads.setdefault(op.inputs[0], []).append(acc)


def in_cond_branch(op: Operation) -> CondContext | None:
    """The innermost `tf.cond` branch holding `op` within its loop frame, or None."""
    ctx = getattr(op, "_control_flow_context", None)
    while ctx is not None and not isinstance(ctx, WhileContext):
        if isinstance(ctx, CondContext):
            return ctx
        ctx = ctx.outer_context
    return None
