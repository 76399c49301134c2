"""Map-then-batch fusion: run a map function once per batch instead of once per element.

``ds.map(f).batch(n)`` normally runs `f`'s graph once per element (one private
`Session.run` each, tens of microseconds). When `f` is *elementwise* — every op that
touches the element is applied independently per position, so adding a leading batch
dimension to its inputs adds one to its outputs and changes nothing else — the batch
node instead stacks `n` input elements and runs, once, a copy of `f`'s graph imported
on placeholders with a leading ``None`` dimension (the Python function is not called
again)::

    per element:  e0 ─f─> y0, e1 ─f─> y1, ...          stack(y0..yn)
    fused:        stack(e0..en) ─f_batched─> (y0..yn)    one Session.run

`f` qualifies when, in the batched copy, every op reading a batched tensor is in the
table below, the batched inputs of a binary op have identical element shapes (or the
other input is unbatched and broadcasts only into trailing dimensions without changing
the element shape), the input element shapes are fully known, and the outputs are
all batched with the per-element trace's dtypes and shapes. Anything else (reshapes,
reductions, random ops) keeps the per-element path, as does a function whose batched
copy fails shape inference.

Example
-------
>>> import flowgraph as tf
>>> import flowgraph.data
>>> ds = tf.data.Dataset.range(5).map(lambda x: tf.cast(x, tf.float32) * 2.0).batch(2)
>>> ds._fused is not None
True
>>> [e[0].tolist() for e in ds._make_pipeline([]).elements()]
[[0.0, 2.0], [4.0, 6.0], [8.0]]
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import TensorShape

from .dataset_ops_function import FunctionGraph, TracedFunction
from .dataset_ops_structure import ComponentSpec, flatten, map_structure, pack_as

_UNARY = frozenset({
    "Abs", "Cast", "Ceil", "Cos", "Elu", "Erf", "Exp", "Expm1", "Floor", "Identity",
    "IsFinite", "IsInf", "IsNan", "LeakyRelu", "Log", "Log1p", "LogicalNot", "Neg",
    "OnesLike", "Reciprocal", "Relu", "Relu6", "Round", "Rsqrt", "Selu", "Sigmoid", "Sign",
    "Sin", "Softplus", "Softsign", "Sqrt", "Square", "StopGradient", "Tan", "Tanh",
    "ZerosLike",
})
_BINARY = frozenset({
    "Add", "AddV2", "Equal", "FloorDiv", "FloorMod", "Greater", "GreaterEqual", "Less",
    "LessEqual", "LogicalAnd", "LogicalOr", "Maximum", "Minimum", "Mul", "NotEqual", "Pow",
    "RealDiv", "Sub", "SquaredDifference", "TruncateDiv", "TruncateMod",
})
# Ops whose input 0 is batched and whose other inputs must not be; outputs batched.
_FIRST_INPUT = frozenset({"DecodeCSV"})


def _element_shape(t) -> list | None:
    """The element shape of a batched tensor ([None, *element]) if fully known."""
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if not dims or dims[0] is not None or any(d is None for d in dims[1:]):
        return None
    return dims[1:]


def _elementwise(graph, placeholders, outputs) -> bool:
    batched: set = set()
    for p in placeholders:
        if _element_shape(p) is None:
            return False
        batched.add(p)
    for op in graph.get_operations():
        if op.type == "Placeholder":
            continue
        flags = [t in batched for t in op.inputs]
        if not any(flags):
            if op.op_def.stateful:
                return False
            continue
        if op.type in _UNARY:
            ok = True
        elif op.type in _BINARY:
            ok = _binary_ok(op, flags)
        elif op.type in _FIRST_INPUT:
            ok = flags[0] and not any(flags[1:])
        else:
            ok = False
        if not ok:
            return False
        for out in op.outputs:
            if _element_shape(out) is None:
                return False
            batched.add(out)
    return all(t in batched for t in outputs)


def _binary_ok(op, flags) -> bool:
    x, y = op.inputs
    out = _element_shape(op.outputs[0])
    if out is None:
        return False
    if flags[0] and flags[1]:
        return _element_shape(x) == _element_shape(y) == out
    b, u = (x, y) if flags[0] else (y, x)
    eb = _element_shape(b)
    if u.shape.ndims is None or eb is None:
        return False
    return u.shape.ndims <= len(eb) and eb == out


def _batched_copy(fn: TracedFunction, batched_in) -> TracedFunction:
    """`fn`'s graph imported on batched placeholders (shapes inferred again). The Python
    function is not called a second time: as in TensorFlow, it is traced exactly once."""
    from flowgraph.framework.importer import import_graph_def
    from flowgraph.ops.array_ops import placeholder

    copy = object.__new__(TracedFunction)
    copy.func, copy.what, copy.input_structure = fn.func, fn.what, batched_in
    copy.dataset = None
    copy.graph = FunctionGraph(fn.graph)
    captured = list(fn.graph.captures.items())
    with copy.graph.as_default():
        copy.placeholders = [placeholder(s.dtype, s.shape, name=f"batched_arg{i}")
                             for i, s in enumerate(flatten(batched_in))]
        wanted = [t.name for t in fn.fetches] + [inner.name for _, inner in captured]
        got = import_graph_def(
            fn.graph.as_graph_def(), name="", return_elements=wanted,
            input_map={p.name: b for p, b in zip(fn.placeholders, copy.placeholders)})
    copy.fetches = got[:len(fn.fetches)]
    copy.graph.captures = {outer: t for (outer, _), t in zip(captured, got[len(fn.fetches):])}
    copy.captured = list(copy.graph.captures)
    copy.output_structure = pack_as(fn.output_structure, [
        ComponentSpec(t.dtype.base_dtype, t.shape) for t in copy.fetches])
    copy.graph.finalize()
    return copy


def vectorize(fn: TracedFunction) -> TracedFunction | None:
    """A trace of `fn`'s function on batched inputs, if it is elementwise, else None."""
    if fn.dataset is not None:
        return None
    specs = flatten(fn.input_structure)
    if any(s.shape.ndims is None or not s.shape.is_fully_defined() for s in specs):
        return None
    if any(s.sparse for s in specs + flatten(fn.output_structure)):
        return None  # sparse components batch by their own rule (dataset_ops_transform)
    batched_in = map_structure(
        lambda s: ComponentSpec(s.dtype, TensorShape([None]).concatenate(s.shape)),
        fn.input_structure)
    try:
        batched = _batched_copy(fn, batched_in)
    except Exception:  # shape functions that reject a batch: keep the per-element path
        return None
    want = flatten(fn.output_structure)
    got = flatten(batched.output_structure)
    if len(want) != len(got):
        return None
    for w, g in zip(want, got):
        if w.dtype != g.dtype or w.shape.ndims is None:
            return None
        if not TensorShape([None]).concatenate(w.shape).is_compatible_with(g.shape):
            return None
    if not _elementwise(batched.graph, batched.placeholders, batched.fetches):
        return None
    return batched
