"""Copying subgraphs: `Transformer`, `copy`, `copy_with_input_replacements`,
`graph_replace`.

A copy's ops are named as the originals, moved from `src_scope` to `dst_scope` and
made unique in the destination graph (``a`` -> ``a_1`` in the same graph, ``copy/a``
with ``dst_scope="copy"``). `copy` feeds the copy's inputs from new placeholders;
`copy_with_input_replacements` keeps them (or substitutes the replacements given).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib import graph_editor as ge
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, name="x")
...     y = tf.multiply(x, 2.0, name="y")
...     two = tf.constant(2.0, name="two")
...     z = ge.graph_replace(y, {x: two})
...     with tf.Session() as sess:
...         print(z.name, sess.run(z))
y_1:0 4.0
"""

from __future__ import annotations

from flowgraph.contrib.graph_editor import select, subgraph, util
from flowgraph.framework.gradient_override import apply_gradient_override
from flowgraph.framework.graph import Graph
from flowgraph.framework.graph_walk import depth_first_order
from flowgraph.framework.operation import Operation, Tensor

_BACK_EDGE_TYPES = frozenset(("NextIteration", "RefNextIteration"))

__all__ = [
    "Transformer", "TransformerInfo", "assign_renamed_collections_handler",
    "copy", "copy_op_handler", "copy_with_input_replacements", "graph_replace",
    "keep_t_if_possible_handler", "replace_t_with_placeholder_handler",
    "transform_op_if_inside_handler",
]



def replace_t_with_placeholder_handler(info, t):
    """An external input becomes a new placeholder in the destination graph."""
    with info.graph_.as_default():
        return util.make_placeholder_from_tensor(t, scope=info.scope_)


def keep_t_if_possible_handler(info, t):
    """An external input is kept when copying within its graph, else replaced by a
    placeholder."""
    if info.graph is info.graph_:
        return t
    return replace_t_with_placeholder_handler(info, t)


def assign_renamed_collections_handler(info, elem, elem_) -> None:
    """`elem_` joins the collections `elem` is in (a non-standard collection's name moves
    from the source to the destination scope)."""
    standard = util.get_predefined_collection_names()
    for name, members in info.collections.items():
        if not any(m is elem for m in members):
            continue
        info.graph_.add_to_collection(name if name in standard else info.new_name(name),
                                      elem_)


def transform_op_if_inside_handler(info, op, keep_if_possible=True):
    """The copy of `op` if it is in the subgraph; else `op` itself when copying within
    its graph (and `keep_if_possible`), else None."""
    if op in info.sgv.ops:
        return info.transformed_ops[op]
    if keep_if_possible and info.graph is info.graph_:
        return op
    return None


def copy_op_handler(info, op, new_inputs, copy_shape=False, nodedef_fn=None):
    """A copy of `op` reading `new_inputs`, named by `info.new_name`; returns (op_,
    op_.outputs). `nodedef_fn` is not supported (flowgraph builds no NodeDef)."""
    if isinstance(new_inputs, bool):
        raise TypeError("the `new_inputs` argument must be an iterable.")
    if nodedef_fn is not None:
        raise NotImplementedError("copy_op_handler: nodedef_fn is not supported by "
                                  "flowgraph; edit the copied op instead")
    graph = info.graph_
    name_ = graph.unique_name(info.new_name(op.name), mark_as_used=True)
    with graph.as_default(), graph.control_dependencies(None):
        op_ = graph.create_op(op.type, list(new_inputs), attrs=dict(op._attrs),
                              name=name_ + "/",
                              dtypes=[t.dtype.base_dtype for t in op.outputs])
    op_._device = op._device
    op_._colocation = list(op._colocation)
    override = op.__dict__.get("_gradient_override_name")
    if override is not None:  # TF copies it with the NodeDef (``_gradient_op_type``)
        apply_gradient_override(op_, override)
    if copy_shape:
        for t, t_ in zip(op.outputs, op_.outputs):
            t_.set_shape(t.shape)
    return op_, op_.outputs


def _copy_order(ops) -> list:
    """`ops` in creation order, moved after the ops of `ops` they read (flowgraph may
    rewire an op to read a later one, e.g. a cond branch's gate): only a loop's back
    edge then needs a stand-in input."""
    inside = frozenset(ops)

    def deps(op):
        return [d for d in [t.op for t in op.inputs] + op.control_inputs if d in inside]

    return depth_first_order(sorted(ops, key=lambda o: o._id), deps,
                             lambda op, dep: dep.type in _BACK_EDGE_TYPES)


class TransformerInfo:
    """What a transform did: `transformed` maps originals (ops, tensors, names, or
    nests of them) to their copies, `original` the other way."""

    def __init__(self, info) -> None:
        self._graph = info.graph
        self._scope = info.scope
        self._graph_ = info.graph_
        self._scope_ = info.scope_
        self._transformed_ops = info.transformed_ops
        self._transformed_ts = info.transformed_ts

    def _map_for(self, top, fn_name):
        if isinstance(top, Operation):
            return self._transformed_ops
        if isinstance(top, Tensor):
            return self._transformed_ts
        raise TypeError(f"TransformerInfo.{fn_name}: expected a tf.Tensor or "
                        f"tf.Operation, got {type(top).__name__}")

    def _transformed_elem(self, original, missing_fn=None):
        if isinstance(original, str):
            for mapping in (self._transformed_ops, self._transformed_ts):
                for src, dst in mapping.items():
                    if src.name == original:
                        return dst
            return None if missing_fn is None else missing_fn(original)
        mapping = self._map_for(original, "transformed")
        if original not in mapping:
            return None if missing_fn is None else missing_fn(original)
        return mapping[original]

    def _original_elem(self, transformed, missing_fn=None):
        if isinstance(transformed, str):
            for mapping in (self._transformed_ops, self._transformed_ts):
                for src, dst in mapping.items():
                    if dst.name == transformed:
                        return src
            return None if missing_fn is None else missing_fn(transformed)
        mapping = self._map_for(transformed, "original")
        for src, dst in mapping.items():
            if dst is transformed:
                return src
        return None if missing_fn is None else missing_fn(transformed)

    def transformed(self, original, missing_fn=None):
        """The copies of `original` (an op, tensor, name or a nest of them); None (or
        ``missing_fn(elem)``) for what was not copied."""
        return util.transform_tree(original,
                                   lambda e: self._transformed_elem(e, missing_fn))

    def original(self, transformed, missing_fn=None):
        """The originals of `transformed` (the inverse of `transformed`)."""
        return util.transform_tree(transformed,
                                   lambda e: self._original_elem(e, missing_fn))

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def graph_(self) -> Graph:
        return self._graph_

    @property
    def scope_(self) -> str:
        return self._scope_

    def __str__(self) -> str:
        lines = [f"Transform result info: {len(self._transformed_ops)} ops"]
        lines += [f"  {op.name} -> {op_.name}" for op, op_ in self._transformed_ops.items()]
        return "\n".join(lines)


class _TmpInfo:
    """The state of one `Transformer` call."""

    def __init__(self, sgv, dst_graph, dst_scope, src_scope) -> None:
        self.sgv = sgv
        self.sgv_inputs_set = frozenset(sgv.inputs)
        self.ops = frozenset(sgv.ops)
        self.graph = sgv.graph
        self.graph_ = dst_graph
        self.scope = src_scope
        self.scope_ = dst_scope
        self.transformed_ops: dict = {}
        self.transformed_ts: dict = {}
        self.transformed_inputs: dict = {}  # what each input of the view became
        self.collections = {key: list(self.graph.get_collection(key))
                            for key in self.graph.get_all_collection_keys()}
        self.cyclic_ts: list = []  # (original tensor, stand-in, consumer op)

    def new_name(self, name: str) -> str:
        """`name` moved from the source scope to the destination scope."""
        if not name.startswith(self.scope):
            raise ValueError(f"{name} does not belong to source scope: {self.scope}.")
        return self.scope_ + name[len(self.scope):]


class Transformer:
    """Copies a subgraph view, op by op in creation order; each step is a handler
    attribute that may be replaced:

    - ``transform_op_handler(info, op, new_inputs)`` -> (op_, outputs_): `copy_op_handler`
    - ``transform_external_input_handler(info, t)``: what an input of the view becomes
      (`replace_t_with_placeholder_handler`)
    - ``transform_external_hidden_input_handler(info, t)``: an input of an op of the
      view that the view does not list (`keep_t_if_possible_handler`)
    - ``transform_control_input_handler(info, op)``: `transform_op_if_inside_handler`
    - ``assign_collections_handler(info, elem, elem_)``:
      `assign_renamed_collections_handler`

    Calling it returns (the copied view, a `TransformerInfo`).
    """

    def __init__(self) -> None:
        self.transform_control_input_handler = transform_op_if_inside_handler
        self.transform_op_handler = copy_op_handler
        self.transform_external_input_handler = replace_t_with_placeholder_handler
        self.transform_external_hidden_input_handler = keep_t_if_possible_handler
        self.assign_collections_handler = assign_renamed_collections_handler
        self.transform_original_op_handler = transform_op_if_inside_handler

    def __call__(self, sgv, dst_graph, dst_scope, src_scope="", reuse_dst_scope=False):
        sgv = subgraph.make_view(sgv)
        if not isinstance(dst_graph, Graph):
            raise TypeError(f"Transformer: expected a tf.Graph as dst_graph, got "
                            f"{type(dst_graph).__name__}")
        src_scope = util.scope_finalize(src_scope) if src_scope else ""
        dst_scope = util.scope_finalize(dst_scope) if dst_scope else ""
        if dst_scope and not reuse_dst_scope:
            dst_scope = util.scope_finalize(dst_graph.unique_name(dst_scope[:-1]))
        if not sgv:  # an empty view copies to an empty view
            return subgraph.SubGraphView(), TransformerInfo(_EmptyInfo(dst_graph, src_scope,
                                                                       dst_scope))
        info = _TmpInfo(sgv, dst_graph, dst_scope, src_scope)
        self._copy_ops(info)
        self._finalize_cycles(info)
        self._connect_control_inputs(info)
        return self._transform_sgv(info, sgv), TransformerInfo(info)

    def _transformed_t(self, info, t, consumer_op):
        if t in info.transformed_ts:
            return info.transformed_ts[t]
        if t in info.sgv_inputs_set:
            if t not in info.transformed_inputs:  # one stand-in for all its consumers
                info.transformed_inputs[t] = self.transform_external_input_handler(info, t)
            return info.transformed_inputs[t]
        if t.op in info.ops:
            # made later (a loop's back edge): a stand-in until `_finalize_cycles`
            with info.graph_.as_default():
                t_ = util.make_placeholder_from_tensor(t, scope=info.scope_)
            info.cyclic_ts.append((t, t_, consumer_op))
            return t_
        return self.transform_external_hidden_input_handler(info, t)

    def _copy_ops(self, info) -> None:
        for op in _copy_order(info.sgv.ops):
            new_inputs = [self._transformed_t(info, t, op) for t in op.inputs]
            op_, outputs_ = self.transform_op_handler(info, op, new_inputs)
            if op is op_:
                raise ValueError("In-place transformation not allowed.")
            info.transformed_ops[op] = op_
            self.assign_collections_handler(info, op, op_)
            for t, t_ in zip(op.outputs, outputs_):
                info.transformed_ts[t] = t_
                self.assign_collections_handler(info, t, t_)

    def _finalize_cycles(self, info) -> None:
        for t, t_, consumer in info.cyclic_ts:
            if t not in info.transformed_ts:
                raise ValueError(f"Transformer: the copy of '{t.name}' was never made")
            op_ = info.transformed_ops[consumer]
            for i, inp in enumerate(op_.inputs):
                if inp is t_:
                    op_._update_input(i, info.transformed_ts[t])

    def _connect_control_inputs(self, info) -> None:
        for op in info.sgv.ops:
            op_ = info.transformed_ops[op]
            cops = [self.transform_control_input_handler(info, c) for c in op.control_inputs]
            cops = [c for c in cops if c is not None and c not in op_.control_inputs]
            if cops:
                op_._add_control_inputs(cops)

    def _transform_sgv(self, info, sgv):
        sgv_ = subgraph.SubGraphView(list(info.transformed_ops.values()))
        inputs_, outputs_ = list(sgv_.inputs), list(sgv_.outputs)
        moved = {**info.transformed_inputs, **info.transformed_ts}
        input_map = [sgv_.input_index(moved[t]) for t in sgv.inputs
                     if t in moved and moved[t] in inputs_]
        output_map = [sgv_.output_index(info.transformed_ts[t]) for t in sgv.outputs
                      if t in info.transformed_ts and info.transformed_ts[t] in outputs_]
        return sgv_.remap(input_map, output_map)


class _EmptyInfo:
    def __init__(self, graph, scope, scope_) -> None:
        self.graph = self.graph_ = graph
        self.scope, self.scope_ = scope, scope_
        self.transformed_ops: dict = {}
        self.transformed_ts: dict = {}


def copy(sgv, dst_graph=None, dst_scope="", src_scope="", reuse_dst_scope=False):
    """Copy the view `sgv` (its inputs become placeholders); returns (the copied view,
    a `TransformerInfo`)."""
    sgv = subgraph.make_view(sgv)
    dst_graph = sgv.graph if dst_graph is None else dst_graph
    return Transformer()(sgv, dst_graph, dst_scope, src_scope,
                         reuse_dst_scope=reuse_dst_scope)


def copy_with_input_replacements(sgv, replacement_ts, dst_graph=None, dst_scope="",
                                 src_scope="", reuse_dst_scope=False):
    """Copy the view `sgv`; its inputs found in the dict `replacement_ts` read the
    replacements, the others stay as they are (placeholders in another graph)."""
    sgv = subgraph.make_view(sgv)
    dst_graph = sgv.graph if dst_graph is None else dst_graph
    if not isinstance(replacement_ts, dict):
        raise TypeError(f"copy_with_input_replacements: replacement_ts must be a dict, got "
                        f"{type(replacement_ts).__name__}")
    copier = Transformer()

    def replace_or_keep(info, t):
        if t in replacement_ts:
            return replacement_ts[t]
        return keep_t_if_possible_handler(info, t)

    copier.transform_external_input_handler = replace_or_keep
    return copier(sgv, dst_graph, dst_scope, src_scope, reuse_dst_scope=reuse_dst_scope)


def graph_replace(target_ts, replacement_ts, dst_scope="", src_scope="",
                  reuse_dst_scope=False):
    """`target_ts` (a tensor or a nest of them) recomputed with the tensors of the dict
    `replacement_ts` in place of its keys: the ops between them are copied; a target
    that does not depend on any key comes back as it is."""
    flat = util.flatten_tree(target_ts)
    graph = util.get_unique_graph(flat, check_types=Tensor)
    control_ios = util.ControlOutputs(graph)
    ops = select.get_walks_intersection_ops(list(replacement_ts), flat,
                                            control_ios=control_ios)
    if not ops:
        raise ValueError("Targets and replacements are not connected!")
    _, info = copy_with_input_replacements(ops, replacement_ts, None, dst_scope, src_scope,
                                           reuse_dst_scope)
    return info.transformed(target_ts, lambda original: original)
