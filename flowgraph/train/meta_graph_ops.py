"""The op-level parts of an exported ``MetaGraphDef``: ``meta_info_def.stripped_op_list``
(one OpDef per op type the graph uses, sorted by name) and ``strip_default_attrs``
(attributes left out where they hold their op's default value).

Both read TensorFlow's recorded OpDefs (`tf_formats.tf_op_defs.OP_DEFS`). Those record
each argument's type source and each attribute's default but not the argument names or
attribute types, so the OpDefs written here carry what was recorded: enough for
TensorFlow's importer (which uses the list only to drop attributes newer than the
reader) and for programs listing the op types. An op type TensorFlow does not have
(one of flowgraph's own) is listed by name alone.

Example
-------
>>> from flowgraph.framework.event_format import GraphDef, NodeDef
>>> gd = GraphDef(node=[NodeDef(name="a", op="Placeholder"), NodeDef(name="b", op="Relu")])
>>> [op.name for op in stripped_op_list(gd).op]
['Placeholder', 'Relu']
"""

from __future__ import annotations

from flowgraph.framework.event_format import AttrValue, shape_proto
from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.meta_graph_messages import OpDefProto, OpListProto
from flowgraph.framework.tf_formats.op_rewrites import rewrite_for_tf
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS

__all__ = ["add_output_shapes", "strip_default_attrs", "stripped_op_list"]


def _arg(spec) -> OpDefProto.ArgDef:
    type_attr, number_attr, type_list_attr, fixed = spec
    fields = {"type": fixed, "type_attr": type_attr, "number_attr": number_attr,
              "type_list_attr": type_list_attr}
    return OpDefProto.ArgDef(**{k: v for k, v in fields.items() if v})  # unset: default


def _op_def(op_type: str) -> OpDefProto:
    recorded = OP_DEFS.get(op_type)
    if recorded is None:
        return OpDefProto(name=op_type)
    inputs, outputs, attrs = recorded
    out = OpDefProto(name=op_type, input_arg=[_arg(a) for a in inputs],
                     output_arg=[_arg(a) for a in outputs])
    for name, default in attrs:
        attr = OpDefProto.AttrDef(name=name)
        if default is not None:
            attr.default_value = AttrValue.FromString(bytes.fromhex(default))
        out.attr.append(attr)
    return out


def stripped_op_list(graph_def) -> OpListProto:
    """The OpDefs of the op types `graph_def` (a GraphDef message) uses, sorted by name,
    as TensorFlow's ``export_meta_graph`` records them."""
    return OpListProto(op=[_op_def(t) for t in sorted({n.op for n in graph_def.node})])


def _defaults(op_type: str) -> dict[str, bytes]:
    recorded = OP_DEFS.get(op_type)
    if recorded is None:
        return {}
    return {name: bytes.fromhex(d) for name, d in recorded[2] if d is not None}


def strip_default_attrs(graph_def) -> None:
    """Remove from each node of `graph_def` (a GraphDef message, edited in place) the
    attributes whose value is its op's default (``transpose_a: false`` of a MatMul)."""
    cache: dict[str, dict] = {}
    for node in graph_def.node:
        defaults = cache.get(node.op)
        if defaults is None:
            defaults = cache[node.op] = _defaults(node.op)
        for name in [k for k in node.attr if k in defaults]:
            if node.attr[name].SerializeToString() == defaults[name]:
                del node.attr[name]


def add_output_shapes(graph_def, graph_def_dict: dict) -> None:
    """Give each node of `graph_def` (a GraphDef message, edited in place) TensorFlow's
    ``_output_shapes`` attribute from the shapes `graph_def_dict` (the same graph as
    flowgraph's dict) records, as ``export_meta_graph`` writes them."""
    # (the nodes as written for TensorFlow: a rewritten node may have other outputs)
    nodes = rewrite_for_tf(graph_def_dict).get("node", [])
    recorded = {n["name"]: n.get("output_shapes") for n in nodes}
    for node in graph_def.node:
        shapes = recorded.get(node.name)
        if not shapes or "_output_shapes" in node.attr:
            continue
        protos = []
        for encoded in shapes:
            shape = decode_attr(encoded)
            protos.append(shape_proto(None if shape.ndims is None else
                                      [-1 if d.value is None else d.value for d in shape.dims]))
        node.attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=protos))
