"""The control-flow contexts of an imported ``.meta`` file: its ``while_context`` and
``cond_context`` collections (TensorFlow's ``WhileContextDef``/``CondContextDef``
messages) rebuilt as `WhileContext`/`CondContext` objects over the imported ops, so that
``tf.gradients`` through an imported ``tf.while_loop`` or ``tf.cond`` builds the backward
loop (or branch) as it does for one built in this process.

A message names the context's tensors (``values_def.values``), the outside tensors it
uses and what stands for them inside (``external_values``), and its pivots; a loop also
its Enters and Exits, from which the rest of its structure is found::

    Enter ─> Merge ─> Switch(pivot) ─:0─> Exit
               ^             └─:1─> Identity ─> body ─> NextIteration ─┘

Every op of ``values`` (but the outside ones) gets the context, nested contexts
(``nested_contexts``) after their parent; the contexts go into their collections. A
message that does not match the graph (a name it gives is not there) is left out with a
log line, as TensorFlow's import does with an unreadable collection item.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable(2.0, name="v")
...     y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v), [0, 1.0])[1]
...     meta = tf.train.export_meta_graph()
>>> with tf.Graph().as_default() as g, tf.Session() as sess:
...     _ = tf.train.import_meta_graph(meta)
...     (dv,) = tf.gradients(g.get_tensor_by_name(y.name), [g.get_tensor_by_name("v:0")])
...     sess.run(tf.global_variables_initializer())
...     print(sess.run(dv))  # d v^3 / dv at v = 2
12.0
"""

from __future__ import annotations

import logging

from flowgraph.framework.tf_formats.meta_graph_messages import (
    CondContextDefProto,
    ControlFlowContextDefProto,
    WhileContextDefProto,
)
from flowgraph.ops.control_flow_cond import CondContext
from flowgraph.ops.control_flow_loops import WhileContext

__all__ = ["CONTEXT_COLLECTIONS", "context_to_proto", "contexts_to_protos", "restore_contexts"]

logger = logging.getLogger("tensorflow")

CONTEXT_COLLECTIONS = {"while_context": WhileContextDefProto,
                       "cond_context": CondContextDefProto}


def restore_contexts(graph, key: str, values, scoped, source: str) -> None:
    """Rebuild the contexts of collection `key` (``while_context``/``cond_context``) from
    its serialized messages `values`, names under `scoped` (the import scope)."""
    message = CONTEXT_COLLECTIONS[key]
    for raw in values:
        try:
            ctx = _rebuild(graph, message.FromString(raw), scoped, None)
        except (ValueError, KeyError, TypeError, IndexError) as e:
            logger.warning("import_meta_graph: %s: an item of collection '%s' is left out: "
                           "%s", source, key, e)
            continue
        graph.add_to_collection(key, ctx)


def _rebuild(graph, proto, scoped, outer):
    if isinstance(proto, WhileContextDefProto):
        ctx = _while_context(graph, proto, scoped, outer)
    else:
        ctx = _cond_context(graph, proto, scoped, outer)
    for raw in proto.nested_contexts:
        nested = ControlFlowContextDefProto.FromString(raw)
        inner = nested.while_ctxt if nested.HasField("while_ctxt") else nested.cond_ctxt
        _rebuild(graph, inner, scoped, ctx)
    return ctx


def _base(ctx, graph, name: str, outer, proto, scoped) -> None:
    """The `ControlFlowContext` part of `ctx`: its ops (those of ``values`` that are not
    outside tensors) marked with it, and the outside tensors' stand-ins."""
    ctx.graph = graph
    ctx.name = name
    ctx.outer_context = outer
    values = proto.values_def
    ctx.external_values = {}
    outside = set()
    for key, inner in values.external_values.items():
        if key != inner:
            ctx.external_values[graph.get_tensor_by_name(scoped(key))] = \
                graph.get_tensor_by_name(scoped(inner))
            outside.add(scoped(key).rpartition(":")[0])
    ops = {}
    for name_ in values.values:
        op_name = scoped(name_).rpartition(":")[0]
        if op_name not in outside:
            ops.setdefault(op_name, graph.get_operation_by_name(op_name))
    ctx.ops = sorted(ops.values(), key=lambda op: op._id)
    ctx.inside = set(ctx.ops)
    for op in ctx.ops:
        op._control_flow_context = ctx


def _only_consumer(t, types: tuple, what: str):
    found = [op for op in t.consumers() if op.type in types]
    if not found:
        raise ValueError(f"'{t.name}' has no {what} consumer")
    return found[0]


def _while_context(graph, proto: WhileContextDefProto, scoped, outer) -> WhileContext:
    ctx = object.__new__(WhileContext)
    tensor = lambda name: graph.get_tensor_by_name(scoped(name))  # noqa: E731
    # the loop's name scope: its LoopCond's ("loop/LoopCond"); the context's name is its
    # frame's, "loop/while_context" as TensorFlow names it, "loop" as flowgraph does
    scope = scoped(proto.pivot_name).rpartition(":")[0].rpartition("/")[0]
    enters = [tensor(n) for n in proto.loop_enter_names]
    if not enters:
        raise ValueError(f"while context '{proto.context_name}' names no loop Enter")
    frame = enters[0].op.attrs.get("frame_name", scope)
    _base(ctx, graph, scope, outer, proto, scoped)
    ctx.scope = f"{scope}/" if scope else ""
    ctx.frame_name = frame.decode() if isinstance(frame, bytes) else frame
    ctx.parallel_iterations = int(proto.parallel_iterations) or 10
    ctx.back_prop = bool(proto.back_prop)
    ctx.swap_memory = bool(proto.swap_memory)
    ctx.maximum_iterations = (tensor(proto.maximum_iterations_name)
                              if proto.maximum_iterations_name else None)
    ctx.pivot = tensor(proto.pivot_name)
    ctx.pivot_for_pred = tensor(proto.pivot_for_pred_name)
    ctx.pivot_for_body = tensor(proto.pivot_for_body_name)
    ctx.loop_enters = enters
    ctx.merges = [_only_consumer(e, ("Merge", "RefMerge"), "Merge").outputs[0] for e in enters]
    ctx.switches = [_only_consumer(m, ("Switch", "RefSwitch"), "Switch") for m in ctx.merges]
    ctx.loop_exits = [_only_consumer(s.outputs[0], ("Exit", "RefExit"), "Exit").outputs[0]
                      for s in ctx.switches]
    # the body's view of each variable: its Identity (TensorFlow's gradient counter,
    # "f_count", reads the Switch directly)
    ctx.identities = [next((op.outputs[0] for op in s.outputs[1].consumers()
                            if op.type in ("Identity", "RefIdentity")), s.outputs[1])
                      for s in ctx.switches]
    ctx.next_iterations = [m.op.inputs[1] for m in ctx.merges]
    entered = {e.op for e in enters}
    ctx.invariant_enters = {op for op in ctx.ops
                            if op.type in ("Enter", "RefEnter") and op not in entered}
    ctx.forward_values = {}
    ctx._carriers = {}
    for t in (*ctx.merges, *ctx.loop_exits, *ctx.identities, *ctx.next_iterations):
        if t.op not in ctx.inside:
            ctx.inside.add(t.op)
            t.op._control_flow_context = ctx
    return ctx


def _cond_context(graph, proto: CondContextDefProto, scoped, outer) -> CondContext:
    ctx = object.__new__(CondContext)
    name = scoped(proto.context_name)
    _base(ctx, graph, name, outer, proto, scoped)
    ctx.pred = graph.get_tensor_by_name(scoped(proto.pred_name))
    ctx.pivot = graph.get_tensor_by_name(scoped(proto.pivot_name))
    ctx.branch = int(proto.branch)
    ctx.scope = name.rpartition("/")[0] + "/"
    ctx.inside.update({ctx.pred.op, ctx.pivot.op})
    if ctx.pred.op in ctx.ops:  # the predicate is computed outside the branch
        ctx.ops.remove(ctx.pred.op)
        ctx.pred.op._control_flow_context = outer
    return ctx



# -- export ----------------------------------------------------------------------------------
def _names(ops) -> list[str]:
    return [t.name for op in ops for t in op.outputs]


def _nesting(graph) -> dict:
    """id(context) -> the contexts directly nested in it, in the order of their ops."""
    found: dict = {}
    seen: set = set()
    for op in graph.get_operations():
        inner = getattr(op, "_control_flow_context", None)
        while inner is not None and id(inner) not in seen:
            seen.add(id(inner))
            outer = inner.outer_context
            if outer is not None:
                found.setdefault(id(outer), []).append(inner)
            inner = outer
    return found


def _values_def(proto, ctx, strip) -> None:
    external = {k: v for k, v in ctx.external_values.items()}
    values = set(_names(ctx.ops)) | {t.name for t in external} | {
        t.name for t in external.values()}
    proto.values_def.values.extend(sorted(strip(n) for n in values))
    for k, v in external.items():
        proto.values_def.external_values[strip(k.name)] = strip(v.name)


def context_to_proto(ctx, strip=lambda name: name, nesting: dict | None = None):
    """`ctx` (a `WhileContext` or `CondContext` of this process) as TensorFlow's
    ``WhileContextDef``/``CondContextDef`` (names through `strip`, which removes an
    export scope), nested contexts included; None for another kind of context.
    `nesting` (`_nesting` of the graph) saves finding the nested contexts again for each
    context of a collection."""
    if nesting is None:
        nesting = _nesting(ctx.graph)
    if isinstance(ctx, WhileContext):
        proto = WhileContextDefProto(
            context_name=strip(ctx.frame_name),  # TensorFlow's frame is named so
            parallel_iterations=int(ctx.parallel_iterations), back_prop=bool(ctx.back_prop),
            swap_memory=bool(ctx.swap_memory), pivot_name=strip(ctx.pivot.name),
            pivot_for_pred_name=strip(ctx.pivot_for_pred.name),
            pivot_for_body_name=strip(ctx.pivot_for_body.name),
            loop_exit_names=[strip(t.name) for t in ctx.loop_exits],
            loop_enter_names=[strip(t.name) for t in ctx.loop_enters])
    elif isinstance(ctx, CondContext):
        proto = CondContextDefProto(
            context_name=strip(f"{ctx.scope}cond_text" + ("" if ctx.branch else "_1")),
            pred_name=strip(ctx.pred.name), pivot_name=strip(ctx.pivot.name),
            branch=int(ctx.branch))
    else:
        return None
    _values_def(proto, ctx, strip)
    for child in nesting.get(id(ctx), ()):
        inner = context_to_proto(child, strip, nesting)
        if inner is None:
            continue
        field = "while_ctxt" if isinstance(inner, WhileContextDefProto) else "cond_ctxt"
        proto.nested_contexts.append(
            ControlFlowContextDefProto(**{field: inner}).SerializeToString())
    return proto


def contexts_to_protos(contexts, strip=lambda name: name) -> list:
    """`context_to_proto` of each of `contexts` (a collection), Nones left out."""
    contexts = list(contexts)
    nesting = _nesting(contexts[0].graph) if contexts else {}
    out = []
    for ctx in contexts:
        try:
            proto = context_to_proto(ctx, strip, nesting)
        except (AttributeError, TypeError, IndexError) as e:  # a context not fully built
            logger.info("export_meta_graph: control-flow context %r is left out: %s",
                        getattr(ctx, "name", ctx), e)
            continue
        if proto is not None:
            out.append(proto)
    return out
