"""Conditionals: the `Switch` and `Merge` primitives, `tf.cond`, `tf.case`, and the
control-flow contexts that `tf.while_loop` (``control_flow_loops.py``) builds on.

How a conditional is built
--------------------------
``tf.cond(p, f, g)`` becomes::

    p ─ Switch(p, p) ─┬─ [1] Identity "switch_t"  (the true branch's pivot)
                      └─ [0] Identity "switch_f"  (the false branch's pivot)
    x ─ Switch(x, p) ─┬─ [1] ── ops built by f ─┐
                      └─ [0] ── ops built by g ─┴─ Merge ── result

At run time the untaken output of a `Switch` is *dead*: every op fed by it is skipped and
its outputs are dead too; `Merge` forwards its live input. So an op created by `f` runs
only when `p` is true, including ops with side effects (``tf.assign_add``).

Contexts
--------
While `f` runs, a `CondContext` is open. When it closes, every op created inside is
visited (graph ops are never removed, so they are ``graph._ops[start:]``):

* an input produced outside the context is replaced by ``Switch(input, p)[branch]``,
  one switch per external tensor (refs get a `RefSwitch`, so an assign inside a branch
  writes the variable itself);
* an op with no inputs (a constant, a `NoOp`) and no control input from inside gets a
  control input from the branch pivot, so it is dead on the untaken branch (deadness
  travels along control edges too);
* variables created inside (their ops, initializer and snapshot) are lifted out: they
  behave as if created outside, as TensorFlow's ``init_scope`` makes them.

Contexts nest (a cond inside a cond, a loop inside a branch): the inner context is
processed first, so the outer one sees the inner switches' external inputs and gates
them in turn. Each op remembers its innermost context in ``op._control_flow_context``.

Gradients (``control_flow_grad.py``): each cond `Merge` remembers its predicate
(``op._cond_pred``); the gradient of a Merge switches the incoming gradient on it, and
the gradient of a Switch merges its outputs' gradients, so only the taken branch's
gradient ops run.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant(3.0)
>>> y = tf.cond(x > 2.0, lambda: x * 10.0, lambda: x - 1.0)
>>> y.op.type
'Merge'
"""

from __future__ import annotations

import contextlib
import functools

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    control_dependencies,
    get_default_graph,
    graph_for,
    name_scope,
)
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op
from flowgraph.ops.tensor_array import arrays_to_flows, flows_to_arrays

__all__ = ["case", "cond"]


# -- nested structures ---------------------------------------------------------------------
def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_seq(x) -> bool:
    return isinstance(x, list | tuple | dict)


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def nest_flatten(x) -> list:
    """The leaves of a nested list/tuple/namedtuple/dict (dicts in sorted-key order)."""
    if isinstance(x, dict):
        return [leaf for k in _sorted_keys(x) for leaf in nest_flatten(x[k])]
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in nest_flatten(item)]
    return [x]


def nest_pack(structure, flat: list):
    """Rebuild `structure` with its leaves replaced by `flat`, in `nest_flatten` order."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            out = {k: build(s[k]) for k in _sorted_keys(s)}
            return type(s)((k, out[k]) for k in s) if type(s) is not dict else {
                k: out[k] for k in s}
        if _is_namedtuple(s):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, list | tuple):
            return type(s)(build(v) for v in s)
        return next(it)

    packed = build(structure)
    build = None  # empty its cell: the recursive closure would be a cycle holding `flat`
    return packed


def nest_map(fn, x):
    return nest_pack(x, [fn(leaf) for leaf in nest_flatten(x)])


def _describe_structure(x) -> str:
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_describe_structure(x[k])}" for k in x) + "}"
    if isinstance(x, list | tuple):
        inner = ", ".join(_describe_structure(v) for v in x)
        if _is_namedtuple(x):
            return f"{type(x).__name__}({inner})"
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, Tensor):
        return f"Tensor({x.dtype.base_dtype.name}, {x.shape})"
    if isinstance(x, Operation):
        return f"Operation({x.name})"
    return repr(x)


def nest_assert_same_structure(a, b, what_a: str, what_b: str, context: str) -> None:
    """TypeError (different container types) or ValueError (different arity/keys)."""

    def check(x, y):
        if _is_seq(x) != _is_seq(y):
            raise ValueError("one is a nested structure and the other is not")
        if not _is_seq(x):
            return
        if type(x) is not type(y) and not (isinstance(x, dict) and isinstance(y, dict)):
            raise TypeError(
                f"they hold different sequence types ({type(x).__name__} vs "
                f"{type(y).__name__})")
        if isinstance(x, dict):
            if set(x) != set(y):
                raise ValueError(f"they hold different dict keys ({sorted(map(str, x))} vs "
                                 f"{sorted(map(str, y))})")
            for k in x:
                check(x[k], y[k])
            return
        if len(x) != len(y):
            raise ValueError(f"they have different lengths ({len(x)} vs {len(y)})")
        for u, v in zip(x, y):
            check(u, v)

    try:
        check(a, b)
    except (TypeError, ValueError) as e:
        raise type(e)(  # (TensorFlow's first sentence, then what differs and where)
            f"The two structures don't have the same nested structure. {context}: {e}.\n"
            f"  {what_a}: {_describe_structure(a)}\n  {what_b}: {_describe_structure(b)}"
        ) from None


# -- Switch and Merge ------------------------------------------------------------------------
def _switch_dtypes(op):
    dt = op.inputs[0].dtype
    return [dt, dt]


def _switch_shape(op, data, pred):
    p = op.inputs[1]
    if p.dtype.base_dtype != _dtypes.bool:
        raise op.shape_error(
            f"the predicate 'pred' must be a bool tensor, found {p.dtype.base_dtype.name}")
    if pred.ndims not in (None, 0):
        raise op.shape_error(f"the predicate 'pred' must be a scalar, found shape {pred}")
    return [data, data]


register_op("Switch", num_outputs=2, dtype_fn=_switch_dtypes,
            control_flow="switch")(_switch_shape)
register_op("RefSwitch", num_outputs=2, dtype_fn=_switch_dtypes, ref_inputs=(0,),
            ref_outputs=(0, 1), control_flow="switch")(_switch_shape)


def _merge_dtypes(op):
    first = op.inputs[0].dtype.base_dtype
    for t in op.inputs[1:]:
        if t.dtype.base_dtype != first:
            raise TypeError(
                f"All inputs of Merge '{op.name}' must have the same dtype: "
                f"{', '.join(f'{x.name} is {x.dtype.base_dtype.name}' for x in op.inputs)}."
            )
    return [first, _dtypes.int32]


def most_specific_compatible_shape(shapes) -> TensorShape:
    """The shape that every one of `shapes` is compatible with, as precise as possible:
    a dimension is kept where all agree, unknown where they differ; unknown rank when the
    ranks differ."""
    first = shapes[0]
    if first.ndims is None or any(s.ndims != first.ndims for s in shapes):
        return TensorShape(None)
    dims = []
    for i in range(first.ndims):
        values = {s.dims[i].value for s in shapes}
        dims.append(values.pop() if len(values) == 1 else None)
    return TensorShape(dims)


@register_op("Merge", num_outputs=2, dtype_fn=_merge_dtypes, control_flow="merge")
def _merge_shape(op, *inputs):
    if not inputs:
        raise op.shape_error("Merge needs at least one input")
    return [most_specific_compatible_shape(inputs), TensorShape([])]


# Gradients of Switch, RefSwitch and Merge: flowgraph/ops/control_flow_grad.py.


def switch(data, pred, dtype=None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Forward `data` to output 1 when `pred` is true, to output 0 otherwise; the other
    output is dead (ops depending on it do not run). Returns ``(output_false,
    output_true)``. A ref (variable) input gives a `RefSwitch`.

    Example
    -------
    >>> import flowgraph as tf
    >>> f, t = switch(tf.constant(1.0), tf.constant(True))
    >>> f.op.type, t.dtype.name
    ('Switch', 'float32')
    """
    with name_scope(name, "Switch", [data, pred]) as scope:
        data = convert_to_tensor(data, dtype=dtype, as_ref=True)
        pred = convert_to_tensor(pred, name="pred")
        _check_pred(pred, "Switch")
        op_type = "RefSwitch" if data.dtype.is_ref_dtype else "Switch"
        op = make_op(op_type, [data, pred], name=scope)
        return op.outputs[0], op.outputs[1]


def merge(inputs, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Forward the first available (live) input; returns ``(output, value_index)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> out, index = merge([tf.constant(1), tf.constant(2)])
    >>> out.op.type, index.dtype.name
    ('Merge', 'int32')
    """
    inputs = [convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("merge() needs at least one input tensor.")
    op = make_op("Merge", inputs, name=name or "Merge")
    return op.outputs[0], op.outputs[1]


def _check_pred(pred: Tensor, where: str) -> None:
    if pred.dtype.base_dtype != _dtypes.bool:
        raise TypeError(
            f"{where}: the predicate must be a bool tensor, got {pred.name} of dtype "
            f"{pred.dtype.base_dtype.name}. Compare it explicitly, e.g. tf.not_equal(x, 0).")
    if pred.shape.ndims not in (None, 0):
        raise ValueError(
            f"{where}: the predicate must be a scalar, got {pred.name} with shape "
            f"{pred.shape}. Reduce it first, e.g. with tf.reduce_all or tf.reduce_any.")


# -- contexts --------------------------------------------------------------------------------
_STACK_KEY = "_control_flow_context_stack"


def _context_stack(graph) -> list:
    return graph.__dict__.setdefault(_STACK_KEY, [])


def get_control_flow_context(graph=None):
    """The innermost open control-flow context of `graph` (default graph), or None."""
    stack = _context_stack(graph or get_default_graph())
    return stack[-1] if stack else None


def update_input(op: Operation, index: int, tensor: Tensor) -> None:
    """Rewire input `index` of `op` to `tensor` (same dtype; used to gate inputs)."""
    old = op._inputs[index]
    op._inputs[index] = tensor
    try:
        old._consumers.remove(op)
    except ValueError:  # pragma: no cover - consumers lists are kept in sync
        pass
    tensor._consumers.append(op)
    op._graph._version += 1


def _lifted_ops(graph, new_ops: list[Operation]) -> set[Operation]:
    """Ops among `new_ops` that belong outside any control-flow context: variables
    created inside (variable op, initializer with what it computes, snapshot)."""
    new_set = set(new_ops)
    roots = [op for op in new_ops if op.type in ("VariableV2", "Variable", "VarHandleOp")]
    if not roots:
        return set()
    lifted = set(roots)
    root_set = set(roots)
    stack: list[Operation] = []
    for coll in list(graph._collections.values()):
        for v in coll:
            var = getattr(v, "_variable", None)
            if isinstance(var, Tensor) and var.op in root_set:
                for attr in ("_initializer_op", "_snapshot", "_is_initialized_op"):
                    x = getattr(v, attr, None)
                    x = x.op if isinstance(x, Tensor) else x
                    if isinstance(x, Operation) and x in new_set and x not in lifted:
                        lifted.add(x)
                        stack.append(x)
    while stack:
        op = stack.pop()
        for dep in [t.op for t in op._inputs] + list(op._control_inputs):
            if dep in new_set and dep not in lifted:
                lifted.add(dep)
                stack.append(dep)
    return lifted


@contextlib.contextmanager
def forward_edit(graph):
    """Add ops to an already built part of the graph (a forward loop's counter, stack
    pushes) while a backward context is capturing: ops created inside are marked so that
    no open context's capture takes them, and they start free of control dependencies.
    The caller assigns them to their own context."""
    start = len(graph._ops)
    try:
        with graph.as_default(), graph.control_dependencies(None):
            yield
    finally:
        for op in graph._ops[start:]:
            op._cf_forward_edit = True


class ControlFlowContext:
    """Base of `CondContext` and `WhileContext`: captures the ops created while it is
    open and gates their external inputs (see the module docstring)."""

    def __init__(self, graph, name: str) -> None:
        self.graph = graph
        self.name = name
        self.outer_context = get_control_flow_context(graph)
        self.ops: list[Operation] = []  # ops of this context, nested contexts' included
        self.inside: set[Operation] = set()  # ops whose outputs need no gating here
        self.external_values: dict[Tensor, Tensor] = {}  # external tensor -> gated
        self._gated_for: dict[Operation, list[Operation]] = {}  # consumer -> its gates

    # capture ---------------------------------------------------------------------------
    def _begin(self) -> int:
        _context_stack(self.graph).append(self)
        return len(self.graph._ops)

    def _end(self, start: int) -> list[Operation]:
        stack = _context_stack(self.graph)
        if stack and stack[-1] is self:
            stack.pop()
        # Ops added to the *forward* graph while this context was open (by the gradient
        # builder, see `forward_edit`) do not belong to it.
        new_ops = [op for op in self.graph._ops[start:]
                   if not getattr(op, "_cf_forward_edit", False)]
        lifted = _lifted_ops(self.graph, new_ops)
        deref = self.graph.__dict__.get("_deref_cache")
        new_set = set(new_ops)
        if deref:
            # A cached read of an outside ref made inside is gated like any op here, so
            # it must not be handed to later users outside: drop it from the cache.
            for ref, t in list(deref.items()):
                if t.op in new_set and t.op not in lifted and ref.op not in new_set:
                    del deref[ref]
        return [op for op in new_ops if op not in lifted]

    def capture(self, fn):
        """Call `fn()` with this context open; return (its result, the ops it created)."""
        start = self._begin()
        try:
            result = fn()
        except BaseException:
            self._end(start)
            raise
        return result, self._end(start)

    # gating ----------------------------------------------------------------------------
    def gate(self, t: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def control_pivot(self) -> Operation:  # pragma: no cover - abstract
        raise NotImplementedError

    def is_inside(self, op: Operation) -> bool:
        return op in self.inside

    def _place_gates(self, new_ops: list[Operation], end: int) -> None:
        """Move each gate (switch, enter) made while gating an op's inputs to just after
        that op, and renumber, so the graph's op order is TensorFlow's (which makes a
        gate as its consumer enters the context)."""
        gated, self._gated_for = getattr(self, "_gated_for", None), {}
        if not gated or not new_ops:
            return
        ops = self.graph._ops
        lo = ops.index(new_ops[0], 0, end)
        moved = {s for made in gated.values() for s in made}
        tail = ops[lo:]
        order = []
        for op in tail:
            if op in moved:
                continue
            order.append(op)
            order.extend(gated.get(op, ()))
        if len(order) != len(tail):  # a switch whose consumer is not here: keep as is
            return
        for op, op_id in zip(order, sorted(op._id for op in tail)):
            op._id = op_id
        ops[lo:] = order

    def without_gates(self, new_ops: list[Operation]) -> list[Operation]:
        """`new_ops` less the gates (switches, invariant enters) of this context and of
        the ones around it, made early for an inner context (`gate_through`): they are
        not this context's ops, but the gates of the context that made them."""
        chain = set()
        ctx = self
        while ctx is not None:
            chain.add(ctx)
            ctx = ctx.outer_context
        return [op for op in new_ops if getattr(op, "_gate_ctx", None) not in chain]

    def made_before(self, t: Tensor) -> bool:
        """Whether `t` comes from outside this context, made before it opened: an inner
        context then has this one gate `t` first (`gate_through`)."""
        return False

    def gate_through(self, t: Tensor, scope: str | None) -> Tensor:
        """`t` gated by the enclosing contexts it comes from outside of, outermost first
        and all named after the consumer (scope `scope`), as TensorFlow, which gates as
        each op is made: ``while/while/mul/Enter`` (outer loop's), ``.../Enter_1``."""
        outer = self.outer_context
        if outer is not None and outer.made_before(t):
            return outer.gate(t, scope)
        return t

    def process(self, new_ops: list[Operation], skip=()) -> None:
        """Gate the external inputs of `new_ops` and anchor their input-less ops."""
        self.inside.update(new_ops)
        self.ops.extend(new_ops)
        skip = set(skip)
        for op in new_ops:
            if getattr(op, "_control_flow_context", None) is None:
                op._control_flow_context = self
            if op in skip:
                continue
            for i, t in enumerate(op._inputs):
                if not self.is_inside(t.op):
                    update_input(op, i, self.gate_input(op, t))
            self._process_control_inputs(op)

    def gate_input(self, op: Operation, t: Tensor) -> Tensor:
        """`t`, an input of `op` from outside, as `op` sees it inside this context."""
        return self.gate(t)

    def _process_control_inputs(self, op: Operation) -> None:
        if not op._inputs and not any(self.is_inside(c) for c in op._control_inputs):
            op._add_control_input(self.control_pivot())

    def output(self, t: Tensor) -> Tensor:
        """`t` as seen inside this context (gated when it comes from outside)."""
        return t if self.is_inside(t.op) else self.gate(t)


class CondContext(ControlFlowContext):
    """One branch of a `tf.cond`: ops inside run only when `pred == branch`."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int, scope: str) -> None:
        super().__init__(pred.graph, scope)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.scope = scope
        self.inside.update({pred.op, pivot.op})
        self.start_id = pred.graph._op_counter  # ops with a larger _id were made inside
        self._gated_for: dict[Operation, list[Operation]] = {}  # consumer -> its switches
        self._begin_index = 0  # where this branch's ops start in graph._ops
        self._flushed: set[Operation] = set()  # processed before the branch ended
        self.array_templates: list = []  # the result's TensorArrays (`arrays_to_flows`)

    def made_before(self, t: Tensor) -> bool:
        return t.op._id <= self.start_id

    def gate_input(self, op: Operation, t: Tensor) -> Tensor:
        # TensorFlow names the switch after its first consumer: "cond/mul/Switch"
        before = len(self.graph._ops)
        v = self.gate(t, scope=f"{op.name}/")
        made = self.graph._ops[before:]
        if made:
            self._gated_for.setdefault(op, []).extend(made)
        return v

    def gate(self, t: Tensor, scope: str | None = None) -> Tensor:
        v = self.external_values.get(t)
        if v is None:
            g = self.graph
            # As TensorFlow: a tensor from outside an enclosing cond branch too passes that
            # branch's switch first ("cond/cond/x/Switch"), then this one ("Switch_1").
            src = self.gate_through(t, scope)
            with g.as_default(), g.name_scope(scope or self.scope), \
                    g.control_dependencies(None):
                op_type = "RefSwitch" if src.dtype.is_ref_dtype else "Switch"
                op = g.create_op(op_type, [src, self.pred], name="Switch")
            v = op.outputs[self.branch]
            self.external_values[t] = v
            self.inside.add(op)
            op._gate_ctx = self
        return v

    def _begin(self) -> int:
        self._begin_index = super()._begin()
        return self._begin_index

    def flush(self) -> None:
        """Process the ops made inside so far. Called as a cond opens inside this branch,
        so that, as in TensorFlow (which processes each op as it is made), this
        context's switches for them come first and the inner cond reuses them."""
        g = self.graph
        new = [op for op in g._ops[self._begin_index:]
               if op not in self._flushed and not getattr(op, "_cf_forward_edit", False)]
        lifted = _lifted_ops(g, new)
        new = [op for op in new if op not in lifted]
        self._flushed.update(new)
        if new:
            self.process(new)

    def process(self, new_ops: list[Operation], skip=()) -> None:
        new_ops = self.without_gates(new_ops)
        start = len(self.graph._ops)
        super().process(new_ops, skip)
        self._place_gates(new_ops, start)

    def control_pivot(self) -> Operation:
        return self.pivot.op

    def build_branch(self, fn, which: str):
        """Run branch `fn` in this context; return (its raw result, flat tensors)."""
        def call():
            result = fn()
            if result is None:
                return None, []
            # a TensorArray passes as its flow (rebuilt after the Merge, as TensorFlow)
            leaves, self.array_templates = arrays_to_flows(nest_flatten(result))
            flat = [self._as_branch_tensor(x, which) for x in leaves]
            return result, flat

        (result, flat), new_ops = self.capture(call)
        self.process([op for op in new_ops if op not in self._flushed])
        return result, [self.output(t) for t in flat]

    def _as_branch_tensor(self, x, which: str) -> Tensor:
        if isinstance(x, Operation):
            # An op result: the branch's pivot, available once the op ran.
            g = self.graph
            with g.control_dependencies([x]):
                return g.create_op("Identity", [self.pivot],  # TF's with_dependencies name
                                   name="control_dependency").outputs[0]
        if x is None:
            raise ValueError(f"{which} returned None inside its result structure; every "
                             "element must be a Tensor, an Operation, or convertible to one.")
        return convert_to_tensor(x)


# -- cond ------------------------------------------------------------------------------------
def _unpack_if_singleton(res):
    if isinstance(res, list | tuple) and len(res) == 1:
        return res[0]
    return res


def cond(pred, true_fn=None, false_fn=None, strict: bool = False, name: str | None = None,
         fn1=None, fn2=None):
    """``true_fn()`` if `pred` else ``false_fn()``; only the taken branch's ops run.

    `pred` is a scalar bool tensor. Both functions take no arguments and return the same
    nested structure (lists, tuples, namedtuples, dicts) of tensors with matching dtypes;
    an `Operation` in the result stands for "this op ran" (the result is a bool tensor).
    Unless `strict`, a single-element list or tuple is unpacked, as in TensorFlow 1.x.
    Tensors from outside that a branch uses are forwarded into it only when it is taken.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [])
    >>> y = tf.cond(x > 0.0, lambda: x * 2.0, lambda: -x)
    >>> with tf.Session() as sess:
    ...     print(sess.run(y, {x: 3.0}), sess.run(y, {x: -4.0}))
    6.0 4.0
    """
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError(f"'true_fn' must be callable. (tf.cond got {true_fn!r}.)")
    if not callable(false_fn):
        raise TypeError(f"'false_fn' must be callable. (tf.cond got {false_fn!r}.)")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool. (Use a bool Tensor, e.g. "
                        "tf.equal(a, b) rather than a == b, or a plain Python `if` when the "
                        "condition is known while building the graph.)")
    with name_scope(name, "cond", [pred]) as scope:
        pred = convert_to_tensor(pred)
        _check_pred(pred, f"tf.cond '{scope[:-1]}'")
        g = graph_for([pred])
        outer = get_control_flow_context(g)
        if isinstance(outer, CondContext):
            outer.flush()
        with g.as_default():
            p_false, p_true = switch(pred, pred)
            pivot_t = g.create_op("Identity", [p_true], name="switch_t").outputs[0]
            pivot_f = g.create_op("Identity", [p_false], name="switch_f").outputs[0]
            pred_id = g.create_op("Identity", [pred], name="pred_id").outputs[0]
            if isinstance(outer, CondContext):
                # gate an outside `pred` now, named after this cond's Switch
                # ("cond/cond/Switch/Switch"), before a branch gates it under its own name
                outer.flush()
            ctx_t = CondContext(pred_id, pivot_t, 1, scope)
            orig_t, res_t = ctx_t.build_branch(true_fn, "true_fn")
            ctx_f = CondContext(pred_id, pivot_f, 0, scope)
            orig_f, res_f = ctx_f.build_branch(false_fn, "false_fn")
            if orig_t is None or orig_f is None:
                which = "true_fn" if orig_t is None else "false_fn"
                raise ValueError(  # (TensorFlow's words first)
                    f"'{which}' must have a return value. (tf.cond '{scope[:-1]}': true_fn "
                    f"and false_fn must return at least one result; {which} returned None.)")
            nest_assert_same_structure(orig_t, orig_f, "true_fn returned", "false_fn returned",
                                       f"tf.cond '{scope[:-1]}'")
            merges = []
            for i, (t, f) in enumerate(zip(res_t, res_f)):
                if t.dtype.base_dtype != f.dtype.base_dtype:
                    raise ValueError(  # (TensorFlow's words first)
                        "Outputs of 'true_fn' and 'false_fn' must have the same type(s). "
                        f"Received {t.dtype.base_dtype.name} from 'true_fn' and "
                        f"{f.dtype.base_dtype.name} from 'false_fn'. (tf.cond "
                        f"'{scope[:-1]}': output {i}, {t.name} and {f.name}; cast one of "
                        "them with tf.cast.)")
                m = merge([f, t], name="Merge")[0]
                m.op._cond_pred = pred_id  # its gradient switches on the same predicate
                merges.append(m)
            if ctx_t.outer_context is None:
                g.add_to_collection(GraphKeys.COND_CONTEXT, ctx_t)
                g.add_to_collection(GraphKeys.COND_CONTEXT, ctx_f)
            result = nest_pack(orig_t, flows_to_arrays(merges, ctx_t.array_templates))
    if not strict:
        result = _unpack_if_singleton(result)
    return result


def smart_constant_value(pred):
    """The Python bool value of `pred` if known while building the graph, else None."""
    if isinstance(pred, bool):
        return pred
    if isinstance(pred, Tensor):
        v = constant_value(pred)
        return None if v is None else bool(v)
    try:
        return bool(pred)
    except TypeError as e:
        raise TypeError(f"smart_cond: pred must be a bool or a Tensor, got {pred!r}") from e


def smart_cond(pred, true_fn=None, false_fn=None, name: str | None = None):
    """`tf.cond`, or a direct call of the branch when `pred` is known statically.

    Example
    -------
    >>> import flowgraph as tf
    >>> smart_cond(True, lambda: tf.constant(1), lambda: tf.constant(2)).op.type
    'Const'
    """
    value = smart_constant_value(pred)
    if value is True:
        return true_fn()
    if value is False:
        return false_fn()
    return cond(pred, true_fn, false_fn, name=name)


# -- case ------------------------------------------------------------------------------------
def _case_pairs(pred_fn_pairs, name: str):
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, list | tuple):
        pairs = list(pred_fn_pairs)
    else:
        raise TypeError(f"tf.case '{name}': pred_fn_pairs must be a list, tuple or dict, "
                        f"got {type(pred_fn_pairs).__name__}.")
    if not pairs:
        raise ValueError(f"tf.case '{name}': pred_fn_pairs must not be empty.")
    preds, fns = [], []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"tf.case '{name}': each entry of pred_fn_pairs must be a "
                            f"(pred, fn) 2-tuple; entry {k} is {pair!r}.")
        pred, fn = pair
        if isinstance(pred, bool) or not isinstance(pred, Tensor):
            raise TypeError(f"tf.case '{name}': pred {k} must be a bool Tensor, got {pred!r}.")
        if pred.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"tf.case '{name}': pred {k} ({pred.name}) must be a bool Tensor, "
                            f"got dtype {pred.dtype.base_dtype.name}.")
        if not callable(fn):
            raise TypeError(f"tf.case '{name}': fn {k} for pred {pred.name} must be "
                            "callable.")
        preds.append(pred)
        fns.append(fn)
    return preds, fns


# -- Assert (tf.Assert; its op is registered in check_ops) ----------------------------------
def Assert(condition, data, summarize: int | None = None, name: str | None = None):
    """An op that fails the step when `condition` (a scalar bool) is false, printing the
    tensors in `data` (at most `summarize` elements of each, default 3).

    Returns the `Operation`; make something depend on it (or run it) for it to execute.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.int32, [])
    >>> check = tf.Assert(x > 0, ["x must be positive, got", x])
    >>> with tf.Session() as sess:
    ...     sess.run(check, {x: 1})
    """
    with name_scope(name, "Assert", [condition]) as scope:
        condition = convert_to_tensor(condition, name="Condition")
        if condition.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"tf.Assert '{scope[:-1]}': condition must be a bool tensor, got "
                            f"{condition.name} of dtype {condition.dtype.base_dtype.name}.")
        if isinstance(data, Tensor | str) or not isinstance(data, list | tuple):
            data = [data]
        # TensorFlow's layout: each Python datum converted once in the scope ("Const",
        # unused) and again as the op's own input ("Assert/Assert/data_<i>"); data other
        # than strings and int32 (kept on the host) make the op run only when the
        # condition fails, in a cond named "AssertGuard" whose Merge is returned
        converted = [d if isinstance(d, Tensor) else convert_to_tensor(d) for d in data]
        attrs = {"summarize": 3 if summarize is None else int(summarize)}

        def assert_op():
            with name_scope(None, "Assert") as op_name:
                xs = [d if isinstance(d, Tensor) else convert_to_tensor(d, name=f"data_{i}")
                      for i, d in enumerate(data)]
                return make_op("Assert", [condition, *xs], attrs, name=op_name)

        if all(x.dtype.base_dtype in (_dtypes.string, _dtypes.int32) for x in converted):
            return assert_op()
        from flowgraph.ops.control_flow_ops import no_op

        return cond(condition, no_op, assert_op, name="AssertGuard").op



def _assert_at_most_n_true(preds, n: int, msg: str):
    from flowgraph.ops import array_ops, math_ops, math_reduce

    stacked = array_ops.stack(preds, name="preds_c")
    num_true = math_reduce.reduce_sum(math_ops.cast(stacked, _dtypes.int32),
                                      name="num_true_conds")
    # TF's names: the count `num_true_conds`, the bound a constant `n_true_conds`
    condition = math_ops.less_equal(num_true, convert_to_tensor(n, name="n_true_conds"))
    names = ", ".join(getattr(p, "name", "?") for p in preds)
    return Assert(condition, [f"{msg}: more than {n} conditions ({names}) evaluated as True:",
                              stacked], summarize=len(preds))


def case(pred_fn_pairs, default=None, exclusive: bool = False, strict: bool = False,
         name: str = "case"):
    """The result of the first ``fn`` whose ``pred`` is true, else of `default`.

    Built as nested `tf.cond`s, so only the chosen function's ops run. With
    ``exclusive=True`` an assertion checks at run time that at most one predicate is
    true. Without a `default`, the last pair acts as the default: the ops its function
    creates run after an assertion that its predicate holds when no other does (a
    tensor it returns from outside the function is returned unchecked, as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.int32, [])
    >>> y = tf.case([(tf.equal(x, 1), lambda: tf.constant(10)),
    ...              (tf.equal(x, 2), lambda: tf.constant(20))], default=lambda: tf.constant(0))
    >>> with tf.Session() as sess:
    ...     print(sess.run(y, {x: 2}), sess.run(y, {x: 7}))
    20 0
    """
    preds, fns = _case_pairs(pred_fn_pairs, name or "case")
    if default is not None and not callable(default):
        raise TypeError(f"tf.case '{name}': default must be callable, got {default!r}.")
    with name_scope(name, "case", preds):
        if default is None:
            k = len(preds) - 1
            last_pred, last_fn = preds[k], fns[k]
            other_preds, preds, fns = preds[:k], preds[:k], fns[:k]
            all_preds = [*other_preds, last_pred]

            def default():
                from flowgraph.ops import array_ops

                # TensorFlow's order: the message's stack of all predicates, then the
                # check on the others (built even when there are none: an empty
                # float32 `preds_c_1`), then the assertion on the last predicate.
                all_stacked = array_ops.stack(all_preds, name="preds_c")
                checks = [_assert_at_most_n_true(
                    other_preds, 0, f"Implementation error: selected default action #{k} "
                    "was called, but some of other predicates are True")]
                checks.append(Assert(last_pred, ["Input error: None of conditions evaluated "
                                                 "as True:", all_stacked],
                                     summarize=len(all_preds)))
                # As TensorFlow: the checks are control inputs of the ops the last
                # function creates; a tensor it returns from outside goes unchecked.
                with control_dependencies(checks):
                    return last_fn()

        fn = default
        for pred, action in reversed(list(zip(preds, fns))):
            fn = functools.partial(cond, pred, action, fn, strict=strict)
        if exclusive:
            # the conds run after the check: the result is the outer cond's Merge
            check = _assert_at_most_n_true(preds, 1, "Input error: exclusive=True")
            with control_dependencies([check]):
                return fn()
        return fn()

