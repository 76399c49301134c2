"""Algebraic rewrites of a plan (TensorFlow's arithmetic optimizer), part of pass 2.

`simplify` walks the pruned op list (producers first) after common subexpressions are
merged and constants folded, and returns tensors to replace: either by a tensor that
already holds the same value (an *alias*) or by the output of a *plan op*, an
`Operation` made for this plan only and never added to the user's graph. A plan op keeps
the name, device and source line of the op whose result it computes, so step statistics
and errors name ops the user knows. The rules:

==========================================  ==========================================
``Identity(x)``, ``StopGradient(x)``, ...   ``x``
``Neg(Neg(x))``                             ``x``
``Transpose(Transpose(x, p), q)``           ``x`` when ``p[q]`` is the identity, else
                                            one ``Transpose(x, p[q])``
``Reshape(Reshape(x, s), t)``               ``Reshape(x, t)``; ``x`` when the target is
                                            ``x``'s own (fully known) shape
``x + 0``, ``x - 0``, ``x * 1``, ``x / 1``  ``x``, when broadcasting against the
                                            constant leaves ``x``'s shape
``((x + c1) - c2) + ...``                   ``x + C`` (``C - x`` for ``c - (x + ...)``)
``((x * c1) * c2) * ...``                   ``x * C``
``(x + c1) + (y + c2)``                     ``(x + y) + (c1 + c2)``: constants hoisted
``AddN(x, c1, y, c2)``                      ``AddN(x, y, c1 + c2)``
==========================================  ==========================================

A chain is rewritten where it ends (a tensor read by something other than the chain's
next link, or by nothing in the plan: a fetch), so a fetched intermediate keeps its
value and the links behind a rewritten end are pruned. A rule whose result is a fed
tensor reads it through one plan ``Identity`` (``Transpose(Transpose(x))`` of a fed
``x``)::

    x ─> +1 ─> +1 ─> ... ─> +1 (fetched)       x ─> AddV2(x, 1000.0) (named like the last)

Numerics: aliases and the ``Neg``/``Transpose``/``Reshape`` rules are exact (``x + 0``
turns ``-0.0`` into ``x`` itself, where the sum would be ``+0.0``). Folding constants
reassociates the arithmetic as TensorFlow's optimizer does: integers wrap the same way,
but a floating-point result may differ from the step-by-step one by up to 1 ulp per
folded op (``x + 1 + 1`` becomes ``x + 2``). `RewriterConfig(arithmetic_optimization=OFF)`
turns every rule here off.

Only pure ops (`is_pure`) without control inputs are rewritten, a fed tensor is
never a replacement (the executor reads it from its feed slot), string tensors are left
alone (``Add`` concatenates them), and an alias never crosses devices: a tensor the user
asked for on another device (``with tf.device(...): y = x * 1.0``) keeps its node.

After kernels are bound, `compose_unary_chains` turns each chain of unary math ops
(``sin(cos(exp(x)))``) into one node that calls the links' kernels in turn: the same
bits, one executor node instead of many (TensorFlow's ``_UnaryOpsComposition``).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from flowgraph.framework.dtypes import as_dtype
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import OpCost, get_op_def
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["Simplified", "compose_unary_chains", "is_pure", "plan_op", "simplify"]

IDENTITY_OPS = frozenset({"Identity", "Snapshot", "StopGradient", "PreventGradient"})
ADD_OPS = frozenset({"Add", "AddV2"})
DIV_OPS = frozenset({"RealDiv", "Div"})


@dataclass
class Simplified:
    """What `simplify` found: replacements and the plan constants they read."""

    replace: dict[Tensor, Tensor] = field(default_factory=dict)
    known: dict[Tensor, object] = field(default_factory=dict)
    rewritten: int = 0  # tensors replaced (for tests and logs)
    plan_ops: dict[Operation, Operation] = field(default_factory=dict)  # made -> `like`


def is_pure(op: Operation) -> bool:
    """Whether `op` may be merged, folded or rewritten: no state, no refs, no control
    flow, not asynchronous."""
    d = op.op_def
    return not (d.stateful or d.ref_inputs or d.ref_outputs or d.control_flow
                or d.cost is OpCost.ASYNC or any(t.dtype.is_ref_dtype for t in op._inputs))


def plan_op(like: Operation, op_type: str, inputs: list[Tensor], attrs: dict | None = None,
            *, name: str | None = None, value=None, shape: TensorShape | None = None,
            control_inputs=(), cache: dict | None = None,
            made: dict | None = None) -> Operation:
    """An op for one plan, outside the graph: `op_type` on `inputs`, with `like`'s device,
    colocation and source line, and `like`'s output dtype and static shape.

    `value` makes a ``Const`` (``inputs`` empty); `shape` replaces the static shape;
    `control_inputs` are ops of the graph it runs after.
    With a `cache` (one per plan compilation: a cache that outlived it would keep the
    graph alive), the same structure gives the same op. `made`, when given, receives
    each new op, mapped to `like`: the plan's owner releases them with the plan
    (`graph_release.release_with`), and `plan_cache` snapshots them by value.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [2], name="x")
    ...     y = x + 1.0
    ...     op = plan_op(y.op, "Neg", [x])
    >>> op.name, op.type, op in tf.get_default_graph().get_operations()
    ('add', 'Neg', False)
    """
    graph = like._graph
    out = like._outputs[0]
    key_value = None
    if value is not None:
        value = np.asarray(value)
        key_value = (value.dtype.str, value.shape, value.tobytes())
    key = (op_type, name or like._name, like._device, tuple(id(t) for t in inputs),
           tuple(id(c) for c in control_inputs),
           tuple(sorted((attrs or {}).items())) if op_type != "Const" else (), key_value,
           out._dtype, str(out._shape if shape is None else shape))
    op = cache.get(key) if cache is not None else None
    if op is not None:
        return op
    op_def = get_op_def(op_type)
    full = dict(op_def.attrs)
    dtype = out._dtype.base_dtype
    if op_type == "Const":
        dtype = as_dtype(value.dtype)
        full.update(value=value, dtype=dtype)
        shape = TensorShape(value.shape)
    else:
        full.update(attrs or {})
        shape = out._shape if shape is None else shape
    op = Operation(graph, op_def, name or like._name, inputs, full, list(control_inputs),
                   like._device)
    op._colocation = list(like._colocation)
    op._source = like._source
    op._outputs = [Tensor(op, 0, dtype, shape)]
    if cache is not None:
        cache[key] = op
    if made is not None:
        made[op] = like
    return op


@dataclass
class _Chain:
    """``sign * base + const`` (additive) or ``base * const`` (multiplicative), built
    from `links` folded constants; `hoisted`: `base` is a plan op summing two bases."""

    kind: str  # "add" or "mul"
    base: Tensor
    sign: int
    const: np.ndarray | None
    links: int
    hoisted: bool = False


def simplify(ops: list[Operation], fed: set[Tensor], known: dict, replace: dict,
             shapes: dict | None = None) -> Simplified:
    """Apply the rules of the module docstring to `ops` (topological order).

    `known` maps tensors to their plan-time values, `replace` holds the merged common
    subexpressions, `shapes` (optional) `TensorShape`s inferred for this run's tensors.
    """
    return _Simplifier(fed, known, replace, shapes or {}).run(ops)


class _Simplifier:
    """One walk of `simplify`: the replacements found so far and the chains being built."""

    def __init__(self, fed, known, replace, shapes) -> None:
        self.fed = fed
        self.known = known
        self.base_replace = replace
        self.replace: dict[Tensor, Tensor] = {}
        self.shapes = shapes
        self.new_known: dict[Tensor, object] = {}
        self.chains: dict[Tensor, _Chain] = {}
        self.uses: dict[Tensor, int] = {}
        self.continued: dict[Tensor, int] = {}
        self.plan_ops: dict = {}  # plan ops by structure, for this compilation
        self.made: dict[Operation, Operation] = {}  # every plan op made -> its `like`

    # -- helpers ------------------------------------------------------------------------
    def plan_op(self, like: Operation, op_type: str, inputs: list[Tensor], attrs=None,
                **kw) -> Operation:
        return plan_op(like, op_type, inputs, attrs, cache=self.plan_ops, made=self.made, **kw)

    def canon(self, t: Tensor) -> Tensor:
        """The tensor standing for `t` after the replacements so far (they never cycle:
        each points to a producer earlier in topological order)."""
        while True:
            u = self.replace.get(t)
            if u is None:
                u = self.base_replace.get(t)
            if u is None or u is t:
                return t
            t = u

    def value(self, t: Tensor):
        if t in self.fed:
            return None
        v = self.known.get(t)
        if v is None:
            v = self.new_known.get(t)
        return v

    def shape(self, t: Tensor) -> list | None:
        s = self.shapes.get(t, t._shape)
        return s.as_list() if s.is_fully_defined() else None

    def alias(self, t: Tensor, to: Tensor, copy_fed: bool = True) -> bool:
        """Replace `t` by `to`. A fed `to` is read through a plan ``Identity``: pruning
        and slot lay-out take a replacement to be computed, never fed."""
        if to is t or to._op._device != t._op._device:
            return False  # a value asked for on another device moves there: keep that
        if to in self.fed:
            if not copy_fed:
                return False
            to = self.plan_op(t._op, "Identity", [to])._outputs[0]
        self.replace[t] = to
        return True

    def const(self, like: Operation, value, dtype=None) -> Tensor:
        """A plan constant holding `value` (in `like`'s output dtype unless `dtype`)."""
        if dtype is None:
            dtype = like._outputs[0]._dtype.base_dtype.as_numpy_dtype
        value = np.asarray(value, dtype=dtype)
        value.setflags(write=False)
        t = self.plan_op(like, "Const", [], name=f"{like._name}/folded", value=value)._outputs[0]
        self.new_known[t] = value
        return t

    # -- the walk -----------------------------------------------------------------------
    def run(self, ops: list[Operation]) -> Simplified:
        for op in ops:
            if all(t in self.known or t in self.base_replace for t in op._outputs):
                continue  # folded or merged: it will not run
            for t in op._inputs:
                c = self.canon(t)
                self.uses[c] = self.uses.get(c, 0) + 1
        for op in ops:
            if len(op._outputs) != 1 or op._control_inputs or not is_pure(op):
                continue
            out = op._outputs[0]
            if out in self.fed or out in self.known or out in self.base_replace:
                continue
            dtype = out._dtype.base_dtype
            ins = [self.canon(t) for t in op._inputs]
            kind = op.type
            if kind in IDENTITY_OPS and len(ins) == 1:
                self.alias(out, ins[0], copy_fed=False)
                continue
            if kind == "Neg":
                inner = ins[0]._op
                if inner.type == "Neg" and not inner._control_inputs and \
                        ins[0] not in self.fed:
                    self.alias(out, self.canon(inner._inputs[0]))
                continue
            if kind == "Transpose":
                self._transpose(op, out, ins)
                continue
            if kind == "Reshape":
                self._reshape(op, out, ins)
                continue
            if not (dtype.is_floating or dtype.is_integer or dtype.is_complex):
                continue
            if kind == "AddN":
                self._add_n(op, out, ins)
            elif len(ins) == 2 and kind in ADD_OPS | {"Sub", "Mul"} | DIV_OPS:
                if not self._identity_element(op, out, ins):
                    self._chain_link(op, out, ins)
        self._emit_chain_ends()
        replace = {t: self.canon(t) for t in self.replace}
        return Simplified(replace, self.new_known, len(replace), self.made)

    # -- rules --------------------------------------------------------------------------
    def _transpose(self, op, out, ins) -> None:
        inner = ins[0]._op
        q = self.value(ins[1])
        if inner.type != "Transpose" or inner._control_inputs or q is None or \
                ins[0] in self.fed:
            return
        p = self.value(self.canon(inner._inputs[1]))
        if p is None:
            return
        perm = np.asarray(p)[np.asarray(q)]
        x = self.canon(inner._inputs[0])
        if np.array_equal(perm, np.arange(perm.size)):
            self.alias(out, x)
            return
        c = self.const(op, perm, np.asarray(q).dtype)
        self.alias(out, self.plan_op(op, "Transpose", [x, c], {})._outputs[0])

    def _reshape(self, op, out, ins) -> None:
        x, target = ins
        inner = x._op
        if inner.type == "Reshape" and not inner._control_inputs and x not in self.fed:
            x = self.canon(inner._inputs[0])
        have = self.shape(x)
        want = self.value(target)
        if have is not None and want is not None:
            want = [int(d) for d in np.asarray(want).reshape(-1)]
            if -1 in want:
                rest = int(np.prod([d for d in want if d != -1]))
                total = int(np.prod(have))
                if rest and total % rest == 0:
                    want[want.index(-1)] = total // rest
            if want == have:
                if self.alias(out, x):
                    return
        if x is not ins[0]:
            self.alias(out, self.plan_op(op, "Reshape", [x, target], {})._outputs[0])

    def _identity_element(self, op, out, ins) -> bool:
        """``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``, ``x / 1`` -> ``x``."""
        kind = op.type
        for k, (x, c) in enumerate(((ins[0], ins[1]), (ins[1], ins[0]))):
            if k == 1 and kind not in ADD_OPS | {"Mul"}:
                break
            v = self.value(c)
            if v is None or self.value(x) is not None:
                continue
            v = np.asarray(v)
            unit = 1 if kind == "Mul" or kind in DIV_OPS else 0
            if v.size == 0 or not np.all(v == unit):
                continue
            if not self._keeps_shape(x, v.shape):
                continue
            return self.alias(out, x)
        return False

    def _keeps_shape(self, x: Tensor, shape: tuple) -> bool:
        """Whether broadcasting `x` against a value of `shape` leaves `x`'s shape."""
        if not shape:
            return True
        xs = self.shapes.get(x, x._shape)
        if xs.ndims is None or len(shape) > xs.ndims:
            return False
        dims = xs.as_list()[xs.ndims - len(shape):]
        return all(d == 1 or d == have for d, have in zip(shape, dims))

    def _chain_link(self, op, out, ins) -> None:
        kind = op.type
        a, b = ins
        va, vb = self.value(a), self.value(b)
        if kind in DIV_OPS:
            return
        family = "mul" if kind == "Mul" else "add"
        if va is None and vb is None:
            if kind in ADD_OPS:
                self._hoist(op, out, a, b)
            return
        if va is not None and vb is not None:
            return
        x, c, const_first = (b, va, True) if va is not None else (a, vb, False)
        dtype = out._dtype.base_dtype.as_numpy_dtype
        c = np.asarray(c, dtype=dtype)
        prev = self.chains.get(x)
        if prev is not None and prev.kind != family:
            prev = None
        base, sign, acc, links = (prev.base, prev.sign, prev.const, prev.links) if prev \
            else (x, 1, None, 0)
        with np.errstate(all="ignore"):
            if family == "mul":
                acc = c if acc is None else np.multiply(acc, c, dtype=dtype)
            elif kind == "Sub" and const_first:  # c - (sign*base + acc)
                sign = -sign
                acc = c if acc is None else np.subtract(c, acc, dtype=dtype)
            elif kind == "Sub":
                acc = np.negative(c) if acc is None else np.subtract(acc, c, dtype=dtype)
            else:
                acc = c if acc is None else np.add(acc, c, dtype=dtype)
        if prev is not None:
            self.continued[x] = self.continued.get(x, 0) + 1
        self.chains[out] = _Chain(family, base, sign, np.asarray(acc, dtype=dtype),
                                  links + 1, prev is not None and prev.hoisted)

    def _hoist(self, op, out, a, b) -> None:
        """``(x + c1) + (y [+ c2])`` -> ``(x + y) + (c1 [+ c2])``, links used only here."""
        parts = []
        for t in (a, b):
            ch = self.chains.get(t)
            if ch is not None and ch.kind == "add" and ch.sign == 1 and \
                    self.uses.get(t, 0) == 1:
                parts.append(ch)
            else:
                parts.append(None)
        if parts == [None, None]:
            return
        dtype = out._dtype.base_dtype.as_numpy_dtype
        bases = [p.base if p else t for p, t in zip(parts, (a, b))]
        consts = [p.const for p in parts if p]
        with np.errstate(all="ignore"):
            acc = consts[0] if len(consts) == 1 else np.add(consts[0], consts[1], dtype=dtype)
        # The bases' sum may be smaller than `out` (a constant broadcast it): shape unknown.
        summed = self.plan_op(op, "AddV2", bases, {}, name=f"{op._name}/hoisted",
                         shape=TensorShape(None))._outputs[0]
        for p, t in zip(parts, (a, b)):
            if p:
                self.continued[t] = self.continued.get(t, 0) + 1
        self.chains[out] = _Chain("add", summed, 1, np.asarray(acc, dtype=dtype),
                                  sum(p.links for p in parts if p), True)

    def _add_n(self, op, out, ins) -> None:
        consts = [self.value(t) for t in ins]
        folded = [v for v in consts if v is not None]
        rest = [t for t, v in zip(ins, consts) if v is None]
        if len(folded) < 2 or not rest:
            return
        dtype = out._dtype.base_dtype.as_numpy_dtype
        with np.errstate(all="ignore"):
            total = np.asarray(folded[0], dtype=dtype)
            for v in folded[1:]:
                total = np.add(total, v, dtype=dtype)
        c = self.const(op, total)
        if len(rest) == 1:
            new = self.plan_op(op, "AddV2", [rest[0], c], {})
        else:
            new = self.plan_op(op, "AddN", [*rest, c], {"N": len(rest) + 1})
        self.alias(out, new._outputs[0])

    def _emit_chain_ends(self) -> None:
        for out, ch in self.chains.items():
            if ch.links < 2 and not ch.hoisted:
                continue  # a single link: nothing to fold
            used = self.uses.get(out, 0)
            if used and self.continued.get(out, 0) >= used:
                continue  # every reader extends the chain: only its end is rewritten
            op = out._op
            c = self.const(op, ch.const)
            if ch.kind == "mul":
                new = self.plan_op(op, "Mul", [ch.base, c], {})
            elif ch.sign == 1:
                new = self.plan_op(op, "AddV2", [ch.base, c], {})
            else:
                new = self.plan_op(op, "Sub", [c, ch.base], {})
            self.alias(out, new._outputs[0])


# -- chains of unary math ops: one node ----------------------------------------------------
# Elementwise ops of one input whose kernels are composed by `compose_unary_chains`.
UNARY_OPS = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Elu",
    "Erf", "Erfc", "Exp", "Expm1", "Floor", "Inv", "Log", "Log1p", "Neg", "Reciprocal",
    "Relu", "Relu6", "Rint", "Round", "Rsqrt", "Selu", "Sigmoid", "Sign", "Sin", "Sinh",
    "Softplus", "Softsign", "Sqrt", "Square", "Tan", "Tanh",
})
# Python's `math` twins of unary kernels, for a float64 scalar: each call costs a third
# of a NumPy ufunc call on a 0-d value. A twin is used only where it returns the very
# bits of the kernel (checked once per process on sample values, `_exact_twin`).
_MATH_TWINS = {
    "Sin": math.sin, "Cos": math.cos, "Tan": math.tan, "Sqrt": math.sqrt,
    "Exp": math.exp, "Expm1": math.expm1, "Log": math.log, "Log1p": math.log1p,
    "Tanh": math.tanh, "Sinh": math.sinh, "Cosh": math.cosh, "Atan": math.atan,
    "Asin": math.asin, "Acos": math.acos, "Asinh": math.asinh, "Erf": math.erf,
    "Erfc": math.erfc, "Neg": operator.neg, "Abs": math.fabs,
    "Square": lambda v: v * v, "Reciprocal": lambda v: 1.0 / v,
}
_twin_checked: dict[tuple, object] = {}
COMPOSED = "_UnaryOpsComposition"


def compose_unary_chains(table, fetch_tensors: list[Tensor]) -> int:
    """Merge chains of unary elementwise nodes into one node each; return how many
    nodes were removed.

    A link joins the chain when it reads only the previous link's output, which nothing
    else reads (no other node, no fetch), and both run on the same device with plain
    kernels (no step, no callback) and no control edges. The merged node takes the last
    link's name (what the user fetches) and the type ``_UnaryOpsComposition``; it calls
    the links' kernels in order, so results are bitwise those of the chain. A float64
    scalar goes through Python's `math` twins of the kernels where they give the same
    bits (`_MATH_TWINS`). Plans with loops are left alone.

    >>> import flowgraph as tf
    >>> from flowgraph.runtime.config import RewriterConfig
    >>> no_fusion = tf.ConfigProto(graph_options=tf.GraphOptions(  # fusion would take it
    ...     rewrite_options=RewriterConfig(remapping=RewriterConfig.OFF)))
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float64, [], name="x")
    ...     y = tf.cos(tf.sin(x), name="y")
    ...     with tf.Session(config=no_fusion) as sess:
    ...         md = tf.RunMetadata()
    ...         v = sess.run(y, {x: 0.5}, options=tf.RunOptions(trace_level=3),
    ...                      run_metadata=md)
    >>> [n.node_name for d in md.step_stats.dev_stats for n in d.node_stats]
    ['_SOURCE', 'y']
    """
    nodes = table.nodes
    if any(n.op is not None and n.op.op_def.control_flow for n in nodes):
        return 0
    readers: dict[int, int] = {}
    for n in nodes:
        for s in n.input_slots:
            readers[s] = readers.get(s, 0) + 1
    for t in fetch_tensors:
        s = table.tensor_slot(t)
        readers[s] = readers.get(s, 0) + 2  # a fetched value is never an inner link
    in_edges = {i for edge in table.control_edges for i in edge}
    producer = table.producers()

    def link(i: int) -> bool:
        n = nodes[i]
        op = n.op
        return (op is not None and not n.fused and op.type in UNARY_OPS and n.flags == 0
                and n.n_out == 1
                and len(n.input_slots) == 1 and i not in in_edges
                and not op._control_inputs and not op._control_outputs
                and not op._inputs[0].dtype.is_ref_dtype)

    chains: list[list[int]] = []
    member: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        if not link(i):
            continue
        p = producer.get(n.input_slots[0])
        chain = member.get(p) if p is not None else None
        if chain is not None and chain[-1] == p and readers.get(n.input_slots[0]) == 1 \
                and nodes[p].device == n.device:
            chain.append(i)
        else:
            chain = [i]
            chains.append(chain)
        member[i] = chain
    drop: set[int] = set()
    merged: dict[int, object] = {}
    for chain in chains:
        if len(chain) < 2:
            continue
        first, last = nodes[chain[0]], nodes[chain[-1]]
        merged[chain[-1]] = type(last)(
            last.name, COMPOSED, last.device, None,
            inputs=[first.op._inputs[0].name], placed_on=last.placed_on,
            input_slots=list(first.input_slots), out_base=last.out_base, n_out=1,
            kernel=_composed_kernel([nodes[i] for i in chain]))
        drop.update(chain[:-1])
    if not drop:
        return 0
    new_index: dict[int, int] = {}
    kept = []
    for i, n in enumerate(nodes):
        if i in drop:
            continue
        new_index[i] = len(kept)
        kept.append(merged.get(i, n))
    table.nodes[:] = kept
    table.node_of = {n.op: i for i, n in enumerate(kept) if n.op is not None}
    table.control_edges = [(new_index[a], new_index[b]) for a, b in table.control_edges]
    return len(drop)


def _composed_kernel(links):
    kernels = [n.kernel for n in links]
    dtype = links[0].op._inputs[0].dtype.base_dtype
    twins = None
    if dtype.name == "float64" and all(n.op.type in _MATH_TWINS for n in links):
        twins = [_exact_twin(n.op.type, n.kernel) for n in links]
        if any(t is None for t in twins):
            twins = None

    def run_links(x):
        for k, n in zip(kernels, links):
            try:
                x = k(x)
            except Exception as e:
                from flowgraph.runtime.op_errors import describe_error

                raise describe_error(n, e, (x,)) from e
        return x

    if twins is None:
        return run_links
    f64 = np.float64

    def composed(x):
        if type(x) is f64 or (type(x) is np.ndarray and x.ndim == 0):
            v = float(x)
            try:
                for f in twins:
                    v = f(v)
                return f64(v)
            except (ValueError, ZeroDivisionError, OverflowError):
                pass  # math raises where NumPy returns inf or nan: take the kernels' way
        return run_links(x)

    return composed


def _exact_twin(op_type: str, kernel):
    """`_MATH_TWINS[op_type]` if it returns `kernel`'s bits for float64 scalars, else None."""
    key = (op_type, getattr(kernel, "__wrapped__", kernel))
    if key in _twin_checked:
        return _twin_checked[key]
    twin = _MATH_TWINS[op_type]
    rng = np.random.default_rng(17)
    samples = np.concatenate([
        rng.uniform(-4.0, 4.0, 300), rng.uniform(-1.0, 1.0, 200),
        np.exp(rng.uniform(-30.0, 30.0, 200)), -np.exp(rng.uniform(-30.0, 30.0, 100)),
        [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e300, 700.0, -700.0, np.nan, np.inf]])
    ok = True
    with np.errstate(all="ignore"):
        for v in samples:
            try:
                got = twin(float(v))
            except (ValueError, ZeroDivisionError, OverflowError):
                continue
            try:
                want = np.asarray(kernel(np.asarray(v)), dtype=np.float64)
            except Exception:
                ok = False
                break
            if np.isnan(got) and np.isnan(want):
                continue
            if np.float64(got).tobytes() != want.tobytes():
                ok = False
                break
    _twin_checked[key] = twin if ok else None
    return _twin_checked[key]
