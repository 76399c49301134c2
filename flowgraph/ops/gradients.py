"""Reverse-mode automatic differentiation: `tf.gradients` (TensorFlow 1.x semantics).

How it works
------------
`gradients(ys, xs)` adds gradient ops to the graph; it never runs anything. The state
it keeps while building:

    between   the ops on some path from an x to a y: reachable forward from the xs'
              ops through *differentiable* (floating or complex) outputs, and reachable
              backward from the ys' ops through inputs.
    grads     tensor -> list of gradient contributions (Tensor or IndexedSlices) received
              so far from its consumers (and, for a y, its grad_y).

An op is visited once all the ops consuming its outputs (within `between`) have been
visited, so the gradients of its outputs are complete (Kahn's algorithm on the reversed
graph with a FIFO queue, as TensorFlow: an op joins the queue when its last consumer is
visited, producers in input order, so the gradient ops get TensorFlow's names and
contributions reach AddN in TensorFlow's order). Creation order alone is not a
topological order here: a `tf.cond` creates the Switch that gates an outside tensor
after the branch ops that read it.

A `tf.while_loop` is one node of this traversal: its ops (nested loops included) are
collapsed into the loop, visited when every consumer of its Exits has been, and
differentiated as a whole by ``control_flow_grad.backprop_loop``, which builds a backward
loop whose body is differentiated by this same traversal, one level down.

    x ──► Mul ──► Tanh ──► y          visit Tanh: grads[Mul:0] = [tanh'(·)·grad_y]
     └──────────► Add ──► (also y)    visit Add, then Mul: grads[x] gets two
                                      contributions, summed with AddN at the end

Visiting an op: its outputs' contributions are summed (AddN for dense tensors;
IndexedSlices are concatenated, or converted to dense when mixed with dense tensors);
its gradient function ``grad_fn(op, *output_grads)`` (registered with
`register_gradient`) returns one gradient per input (None: no gradient). Ops declared
`not_differentiable`, `StopGradient`, and the ops of `stop_gradients` pass nothing back;
an op on the path that has no gradient and was never declared non-differentiable is a
LookupError. Integer and bool tensors never receive gradients.

Outputs with no gradient: when only some outputs of an op have gradients, the others
are passed as zeros (``zeros_like(output)``) if they are floating or complex, and as None
otherwise (TensorFlow's rule). Gradient functions may therefore assume a Tensor for
every differentiable output.

Gradient ops are created under the name scope `name` (default ``gradients/``),
in a sub-scope ``<forward op name>_grad`` per forward op, as TensorFlow does:
``gradients/dense/MatMul_grad/MatMul``.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant(3.0)
>>> y = x * x + 2.0 * x
>>> with tf.Session() as sess:
...     print(sess.run(tf.gradients(y, x)[0]))
8.0
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Sequence

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.gradient_override import registered_gradient_for_type
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.ops import array_ops as _array
from flowgraph.ops.gradient_util import (
    _zeros_for,
    add_n_or_add,
    aggregate,
    is_differentiable_dtype,
)

__all__ = ["AggregationMethod", "IndexedSlices", "gradients", "stop_gradient"]

stop_gradient = _array.stop_gradient


class AggregationMethod:
    """How gradient contributions are summed. All methods give the same values:
    ``ADD_N`` is one AddN; the experimental two sum pairwise in ``<op>_gradient_sum``."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


# -- helpers ---------------------------------------------------------------------------
def _as_list(value, what: str) -> tuple[list, bool]:
    if value is None:
        return [], False
    if isinstance(value, list | tuple):
        return list(value), True
    return [value], False


def _x_tensor(x) -> Tensor:
    """A tensor to differentiate with respect to: a Variable's ref, as in TensorFlow."""
    if isinstance(x, Tensor):
        return x
    ref = getattr(x, "_ref", None)
    if callable(ref):
        return ref()
    try:  # a value, as TensorFlow: a new constant nothing depends on (gradient None)
        return convert_to_tensor(x, name="x")
    except (TypeError, ValueError):
        raise TypeError(f"tf.gradients: xs must be Tensors or Variables, got "
                        f"{type(x).__name__}: {x!r}") from None


def _y_tensor(y) -> Tensor:
    if isinstance(y, Tensor):
        return convert_to_tensor(y) if y.dtype.is_ref_dtype else y
    if isinstance(y, IndexedSlices):
        raise TypeError("tf.gradients: ys must be dense Tensors, got IndexedSlices "
                        f"{y!r}; convert it with tf.convert_to_tensor first")
    return convert_to_tensor(y)


# -- the algorithm ----------------------------------------------------------------------
def _reachable_forward(start_ops: list[Operation]) -> set[Operation]:
    seen: set[Operation] = set()
    stack = list(start_ops)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        for out in op.outputs:
            # A resource variable's handle reaches its reads (ReadVariableOp, ResourceGather).
            if is_differentiable_dtype(out.dtype) or out.dtype.base_dtype == _dtypes.resource:
                stack.extend(out.consumers())
    return seen


def _between(y_ops: list[Operation], reached: set[Operation]) -> set[Operation]:
    between: set[Operation] = set()
    stack = [op for op in y_ops if op in reached]
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        stack.extend(t.op for t in op.inputs if t.op in reached)
    return between


def _default_grad_ys(ys: list[Tensor], grad_ys: list, scope: str) -> list[Tensor]:
    out = []
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None:
            if y.dtype.is_complex:
                raise TypeError(f"Gradients of complex tensors must set grad_ys "
                                f"(y.dtype = {y.dtype.name}, y = {y.name})")
            out.append(_ones_grad_y(y, i))
            continue
        if isinstance(gy, Tensor) and gy.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"tf.gradients: grad_ys[{i}] '{gy.name}' has dtype "
                            f"{gy.dtype.base_dtype.name} but ys[{i}] '{y.name}' is "
                            f"{y.dtype.base_dtype.name}; cast it with tf.cast")
        gy = convert_to_tensor(gy, dtype=y.dtype.base_dtype)
        if not y.shape.is_compatible_with(gy.shape):
            raise ValueError(f"tf.gradients: grad_ys[{i}] of shape {gy.shape} is not "
                             f"compatible with ys[{i}] '{y.name}' of shape {y.shape}")
        out.append(gy)
    return out


def _ones_grad_y(y: Tensor, i: int) -> Tensor:
    """``Fill(Shape(y), 1)`` named ``grad_ys_<i>``, TensorFlow's default gradient of a y.

    TensorFlow's ``Shape`` is a Const when y's shape is known; ours stays a Shape op of y
    (``optimize=False``; folded at plan time, keeping its edge from y): the gradients, and
    so the updates of a training step, then wait for y, and ``sess.run([train_op, loss])``
    returns the loss before the update, as TensorFlow does in practice."""
    from flowgraph.framework.constant_op import constant
    from flowgraph.ops.op_util import make_tensor

    dims = _array.shape(y, optimize=False)
    with y.graph.name_scope(f"grad_ys_{i}") as scope:
        one = constant(1, dtype=y.dtype.base_dtype)
        return make_tensor("Fill", [dims, one], name=scope)


def _op_grad_fn(op: Operation):
    """The gradient function of `op`, None if declared non-differentiable, else LookupError."""
    opdef = op.op_def
    if opdef.differentiable is False:
        return None
    if opdef.gradient is None:
        user_fn = registered_gradient_for_type(op.type)  # @tf.RegisterGradient("MyOp")
        if user_fn is not None:
            return user_fn
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}). Register "
            f"one with @register_gradient('{op.type}'), declare the op with "
            f"not_differentiable('{op.type}'), or cut the path with tf.stop_gradient.")
    return opdef.gradient


def _output_grads(op: Operation, grads: dict, scope_name: str):
    """Aggregated gradients of `op`'s outputs (zeros for floating outputs without one)."""
    out = []
    any_grad = False
    for t in op.outputs:
        g = aggregate(grads.get(t, []))
        grads[t] = [g] if g is not None else []
        any_grad |= g is not None
        out.append(g)
    if not any_grad:
        return None
    for i, t in enumerate(op.outputs):
        if out[i] is None and is_differentiable_dtype(t.dtype):
            out[i] = _zeros_for(t)
            out[i]._is_zeros_tensor = True  # lets a gradient function skip work on it
        elif out[i] is None and t.dtype.base_dtype == _dtypes.resource and \
                op.type in ("Switch", "RefSwitch"):
            # A variable's handle switched into a tf.cond and read in one branch: zeros
            # of the variable's shape on the other (TensorFlow's VariableShape + Fill).
            live = next(g for g in out if g is not None)
            out[i] = _resource_zeros(t, live.dtype.base_dtype)
    return out


def _resource_zeros(handle: Tensor, dtype) -> Tensor:
    from flowgraph.ops.resource_variable_ops import variable_shape

    return _array.zeros(variable_shape(handle), dtype=dtype)


def gradients(ys, xs, grad_ys=None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """Symbolic derivatives of ``sum(ys)`` with respect to each of `xs`.

    Parameters
    ----------
    ys : Tensor or list of Tensor
        The tensors to differentiate.
    xs : Tensor, Variable, or a list of them
        The tensors to differentiate with respect to. For a Variable, the gradient flows
        to it through every read of its value.
    grad_ys : Tensor or list, optional
        The incoming gradient of each y (default: ones shaped like y). The result is the
        vector-Jacobian product ``sum_i grad_ys[i] * d ys[i] / d x``.
    name : str
        Name scope of the gradient ops (default ``gradients``).
    colocate_gradients_with_ops : bool
        Place each op's gradient ops with the op.
    gate_gradients : bool
        Make all input gradients of an op available together (tf.tuple).
    aggregation_method
        One of `tf.AggregationMethod`'s values (0, 1 or 2): ADD_N sums an output's
        contributions with one AddN, the other two with AddNs of two at a time.
    stop_gradients : Tensor or list, optional
        Tensors treated as constants: gradients do not flow back through them.
    unconnected_gradients : str or `tf.UnconnectedGradients`
        What an x that ys do not depend on gets: ``"none"`` (None, the default) or
        ``"zero"`` (zeros shaped like x).

    Returns
    -------
    list
        One entry per x: a Tensor, an `IndexedSlices` (e.g. the gradient of the params of
        `tf.gather`), or None when x does not affect ys (or is an integer tensor).

    Raises
    ------
    LookupError
        An op on a path from xs to ys has no registered gradient.

    Example
    -------
    >>> import flowgraph as tf
    >>> a = tf.constant([1.0, 2.0])
    >>> b = tf.constant([3.0, 4.0])
    >>> da, db, dz = tf.gradients(tf.reduce_sum(a * b), [a, b, tf.constant(0.0)])
    >>> with tf.Session() as sess:
    ...     print(sess.run([da, db]), dz)
    [array([3., 4.], dtype=float32), array([1., 2.], dtype=float32)] None
    """
    unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
    if unconnected not in ("none", "zero"):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected!r}")
    if aggregation_method is not None and aggregation_method not in (0, 1, 2):
        raise ValueError(f"Invalid `aggregation_method` specified {aggregation_method}. "
                         f"Accepted values are [0, 1, 2] (tf.AggregationMethod).")
    ys, _ = _as_list(ys, "ys")
    xs, _ = _as_list(xs, "xs")
    if not ys:
        raise ValueError("tf.gradients: ys must be a Tensor or a non-empty list of Tensors")
    grad_ys_list, _ = _as_list(grad_ys, "grad_ys")
    if grad_ys is None:
        grad_ys_list = [None] * len(ys)
    if len(grad_ys_list) != len(ys):
        raise ValueError(f"tf.gradients: grad_ys has {len(grad_ys_list)} entries but ys "
                         f"has {len(ys)}; pass one gradient per y (or None)")
    stops, _ = _as_list(stop_gradients, "stop_gradients")
    ys = [_y_tensor(y) for y in ys]
    xs = [_x_tensor(x) for x in xs]
    stops = [_x_tensor(s) for s in stops]
    graph = ys[0].graph
    for t in (*ys, *xs, *stops):
        if t.graph is not graph:
            raise ValueError(f"tf.gradients: '{t.name}' belongs to a different graph than "
                             f"'{ys[0].name}'; all ys, xs and stop_gradients must share one")

    with graph.as_default(), graph.name_scope(name or "gradients") as scope:
        grad_ys_list = _default_grad_ys(ys, grad_ys_list, scope)
        reached = _reachable_forward([x.op for x in xs])
        between = _between([y.op for y in ys], reached)
        grads: dict[Tensor, list] = {}
        for y, gy in zip(ys, grad_ys_list):
            grads.setdefault(y, []).append(gy)
        bp = _Backprop(graph, between, {t.op for t in stops}, colocate_gradients_with_ops,
                       gate_gradients, tree=aggregation_method in (1, 2))
        bp.region(list(between), grads, _innermost_loop(ys[0].op))

        results = []
        for x in xs:
            g = aggregate(grads.get(x, []))
            if isinstance(g, Tensor) and not is_differentiable_dtype(g.dtype) and \
                    x not in ys:
                g = None
            results.append(g)
    if unconnected == "zero":
        # As TF: made after leaving the `gradients` scope, a constant for a static shape.
        with graph.as_default():
            results = [_array.zeros_like(x) if g is None else g for x, g in zip(xs, results)]
    return results


def _loops():
    from flowgraph.ops import control_flow_loops

    return control_flow_loops.WhileContext, control_flow_grad


def _innermost_loop(op: Operation):
    """The innermost while loop whose frame holds `op`'s outputs, or None."""
    while_context, _ = _loops()
    ctx = getattr(op, "_control_flow_context", None)
    if ctx is not None and op.op_def.control_flow == "exit":
        ctx = ctx.outer_context
    while ctx is not None and not isinstance(ctx, while_context):
        ctx = ctx.outer_context
    return ctx


def _loop_key(op: Operation, level, while_context):
    """The outermost while loop holding `op` inside `level` (None: `op` is at `level`)."""
    found = None
    ctx = getattr(op, "_control_flow_context", None)
    while ctx is not None and ctx is not level:
        if isinstance(ctx, while_context):
            found = ctx
        ctx = ctx.outer_context
    return found


class _Backprop:
    """One `tf.gradients` pass: the ops between xs and ys and the options, and the
    reverse traversal of a region of them (the whole graph, or a loop body)."""

    def __init__(self, graph, between: set, stop_ops: set, colocate: bool, gate: bool,
                 tree: bool = False):
        self.graph = graph
        self.between = between
        self.stop_ops = stop_ops
        self.colocate = colocate
        self.gate = gate
        self.tree = tree  # EXPERIMENTAL_TREE / ACCUMULATE_N: pairwise sums, see _tree_sum

    def region(self, ops: list[Operation], grads: dict, level) -> None:
        """Differentiate `ops`, consumers before producers (see the module docstring).
        A while loop nested in `level` is one node, differentiated by
        ``control_flow_grad.backprop_loop`` once all its consumers are done."""
        while_context, cfg = _loops()
        node_of: dict[Operation, object] = {}
        members: dict[object, list[Operation]] = {}
        for op in ops:
            loop = _loop_key(op, level, while_context)
            node = op if loop is None else loop
            node_of[op] = node
            members.setdefault(node, []).append(op)
        # dicts, not sets: a node's producers in input order, for a deterministic queue
        producers: dict[object, dict] = {n: {} for n in members}
        pending = dict.fromkeys(members, 0)
        for op in sorted(ops, key=lambda o: o._id):
            node = node_of[op]
            for t in op._inputs:
                p = node_of.get(t.op)
                if p is not None and p is not node and p not in producers[node]:
                    producers[node][p] = None
                    pending[p] += 1
        order = {n: max(op._id for op in m) for n, m in members.items()}
        ready = collections.deque(sorted((n for n in members if pending[n] == 0),
                                         key=lambda n: -order[n]))
        while ready:
            node = ready.popleft()
            if isinstance(node, Operation):
                _backprop_op(node, grads, self)
            else:
                cfg.backprop_loop(node, grads, members[node], self)
            for p in producers[node]:
                pending[p] -= 1
                if pending[p] == 0:
                    ready.append(p)


def _backprop_op(op: Operation, grads: dict, bp: _Backprop) -> None:
    """Visit `op`: call its gradient function and record its inputs' gradients."""
    graph = bp.graph
    coloc = graph.colocate_with(op) if bp.colocate else contextlib.nullcontext()
    with coloc:
        if not any(grads.get(t) for t in op.outputs):
            return
        # TensorFlow sums each output's contributions (``gradients/AddN_<i>``) before it
        # looks at the op, so a stop op or a non-differentiable one (StopGradient) still
        # takes an AddN, and the AddNs are numbered in this visiting order
        for t in op.outputs:
            contributions = grads.get(t, [])
            g = _tree_sum(contributions, op) if bp.tree else aggregate(contributions)
            grads[t] = [g] if g is not None else []
        if op in bp.stop_ops:
            return
        grad_fn = _op_grad_fn(op)
        if grad_fn is None:
            return
        # Summing contributions and zeros for outputs without one happen in the
        # `gradients/` scope itself (gradients/AddN, gradients/zeros_like), as in TF.
        out_grads = _output_grads(op, grads, op.name)
        if out_grads is None:
            return
        with graph.name_scope(op.name + "_grad"):
            start = len(graph._ops)
            in_grads = grad_fn(op, *out_grads)
            if isinstance(in_grads, Tensor | IndexedSlices) or in_grads is None:
                in_grads = [in_grads]
            in_grads = list(in_grads)
            if len(in_grads) != len(op.inputs):
                raise ValueError(
                    f"Gradient function of op type {op.type} returned {len(in_grads)} "
                    f"gradients for operation '{op.name}', which has {len(op.inputs)} inputs")
            _anchor_in_branch(op, graph._ops[start:], out_grads)
            if bp.gate and sum(g is not None for g in in_grads) > 1:
                in_grads = _gate(in_grads, op, bp.between)
    for t, g in zip(op.inputs, in_grads):
        handle = t.dtype.base_dtype == _dtypes.resource  # a resource variable's value grad
        if g is None or not (handle or is_differentiable_dtype(t.dtype)):
            continue
        if isinstance(g, Tensor) and g.dtype.base_dtype != t.dtype.base_dtype and not handle:
            raise TypeError(
                f"Gradient function of op type {op.type} returned a {g.dtype.name} gradient "
                f"for input '{t.name}' of dtype {t.dtype.base_dtype.name} "
                f"(operation '{op.name}')")
        grads.setdefault(t, []).append(g)


def _tree_sum(contributions: list, op: Operation):
    """Dense contributions summed two at a time (``AddN``, ``AddN_1``, ...) in the scope
    ``<op>_gradient_sum``, as TensorFlow's EXPERIMENTAL_TREE and ACCUMULATE_N name them;
    anything else as `aggregate` sums it."""
    parts = [g for g in contributions if g is not None]
    if len(parts) < 2 or not all(isinstance(g, Tensor) for g in parts):
        return aggregate(parts)
    with op.graph.name_scope(op.name + "_gradient_sum"):
        total = parts[0]
        for g in parts[1:]:
            total = add_n_or_add([total, g])
    return total


def _anchor_in_branch(op: Operation, new_ops: list[Operation], out_grads: list) -> None:
    """Gradient ops of an op in a `tf.cond` branch run only when the branch ran: an
    input-less one (a constant) waits for the incoming gradient, which is dead otherwise."""
    if not new_ops:
        return
    _, cfg = _loops()
    if cfg.in_cond_branch(op) is None:
        return
    anchor = next((g for g in out_grads if g is not None), None)
    if isinstance(anchor, IndexedSlices):
        anchor = anchor.values
    if anchor is None:
        return
    for new in new_ops:
        if not new._inputs and not new._control_inputs:
            new._add_control_input(anchor.op)


def _gate(in_grads: Sequence, op: Operation, between: set) -> list:
    """TensorFlow's ``tf.tuple`` over an op's input gradients (``<op>_grad/tuple/
    group_deps`` and ``tuple/control_dependency[_i]``), IndexedSlices gated through their
    values. Only the gradients that flow on to an x join the group: one for an input
    produced outside `between` (a dense layer's input data, say) has no consumer, and
    waiting for it would compute it on every step (a wasted GEMM). Its
    ``control_dependency`` is still created, under TF's name, and pruned from runs. With
    fewer than two gradients to group, nothing is added (see below)."""
    from flowgraph.ops.control_flow_ops import group, with_dependencies

    dense = [g.values if isinstance(g, IndexedSlices) else g for g in in_grads]
    needed = [g for g, t in zip(dense, op.inputs) if g is not None and t.op in between]
    if len(needed) < 2:
        # Nothing to wait for. TensorFlow would still pass the gradient through an
        # Identity (`tuple/control_dependency_1`); the optimizer's control edges onto it
        # would make that Identity run on every step, so the gradient is returned as is.
        return list(in_grads)
    graph = op.graph
    out = []
    with graph.name_scope("tuple"):
        deps = group(*needed, name="group_deps")
        for g, v in zip(in_grads, dense):
            if v is None:
                out.append(None)
                continue
            gated = with_dependencies([deps], v)
            out.append(IndexedSlices(gated, g.indices, g.dense_shape)
                       if isinstance(g, IndexedSlices) else gated)
    return out


# The gradients of the control-flow primitives and the backward while loop.
from flowgraph.ops import control_flow_grad  # noqa: E402
