"""TensorFlow's resource variables in graph files, and their reference-variable twins.

A TensorFlow 1.x graph built with ``use_resource=True`` (or by TensorFlow 2's
``compat.v1``) holds each variable as a ``VarHandleOp`` (a handle), read by
``ReadVariableOp`` and written by ``AssignVariableOp`` and the ``Resource*`` update ops.
flowgraph runs these ops itself (`flowgraph/ops/resource_variable_ops.py`), so a graph
whose resource ops it all has keeps them as they are (`runs_as_resources`): a
MetaGraphDef's ``VariableDef``s with ``is_resource`` rebuild as `ResourceVariable`s, in
``import_meta_graph`` and in the SavedModel loader alike.

A graph with a resource op flowgraph lacks (or a caller passing ``force=True``) reads
every resource op as its reference twin, which takes the variable where the resource
op takes the handle::

    VarHandleOp(dtype, shape)              VariableV2(dtype, shape)
    ReadVariableOp(h)                      Identity(v)
    AssignVariableOp(h, x)                 Assign(v, x, validate_shape=False)
    AssignAdd/SubVariableOp(h, x)          AssignAdd/Sub(v, x)
    VarIsInitializedOp(h)                  IsVariableInitialized(v)
    ResourceGather(h, i)                   Gather(v, i)
    ResourceApplyAdam(h, m, v, ...)        ApplyAdam(...), and every Resource(Sparse)Apply*
    ResourceScatterAdd(h, i, x)            ScatterAdd(v, i, x), and every ResourceScatter*

names and inputs unchanged (`meta_graph_as_refs` clears ``is_resource`` too); values,
training updates and checkpoints (keyed by variable name either way) behave as in
TensorFlow. A resource op without a twin (``ResourceStridedSliceAssign``, ...) is kept
as it is.

Example
-------
>>> from flowgraph.framework.event_format import AttrValue, NodeDef
>>> nodes = [NodeDef(name="v", op="VarHandleOp", attr={"dtype": AttrValue(type=1)}),
...          NodeDef(name="r", op="ReadVariableOp", input=["v"],
...                  attr={"dtype": AttrValue(type=1)})]
>>> [(n.op, sorted(n.attr)) for n in resource_ops_as_refs(nodes, force=True)]
[('VariableV2', ['dtype']), ('Identity', ['T'])]
"""

from __future__ import annotations

from flowgraph.framework.event_format import AttrValue, NodeDef
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS

__all__ = ["meta_graph_as_refs", "ref_op_of", "resource_ops_as_refs", "runs_as_resources"]

_TWINS = {
    "VarHandleOp": "VariableV2", "ReadVariableOp": "Identity", "AssignVariableOp": "Assign",
    "AssignAddVariableOp": "AssignAdd", "AssignSubVariableOp": "AssignSub",
    "VarIsInitializedOp": "IsVariableInitialized", "ResourceGather": "Gather",
}
# The name TensorFlow's resource op gives the attribute its twin calls otherwise.
_DTYPE_AS = {"Identity": "T", "Assign": "T", "AssignAdd": "T", "AssignSub": "T",
             "Gather": "Tparams"}
_KEEP = ("_class", "_output_shapes")


def ref_op_of(op: str) -> str | None:
    """The reference-variable twin of resource op `op`, or None."""
    if op in _TWINS:
        return _TWINS[op]
    if op.startswith("Resource"):
        twin = op[len("Resource"):]
        if twin.startswith(("Apply", "SparseApply", "Scatter")) and twin in OP_DEFS:
            return twin
    return None


def _as_ref(node: NodeDef, twin: str) -> NodeDef:
    declared = {name for name, _ in OP_DEFS.get(twin, ((), (), ()))[2]}
    attrs = {}
    for key, value in node.attr.items():
        if key == "dtype" and twin in _DTYPE_AS:
            key = _DTYPE_AS[twin]
        if key in declared or key in _KEEP:
            attrs[key] = value
    if twin == "Assign":
        attrs.setdefault("validate_shape", AttrValue(b=False))  # as AssignVariableOp
        attrs.setdefault("use_locking", AttrValue(b=True))
    if twin.startswith("Scatter") and "dtype" in node.attr:
        attrs.setdefault("T", node.attr["dtype"])
    return NodeDef(name=node.name, op=twin, input=list(node.input), device=node.device,
                   attr=attrs)


def runs_as_resources(nodes) -> bool:
    """Whether every resource-variable op of `nodes` is one flowgraph runs itself, so
    that the graph keeps its resource variables (``VarHandleOp``...) as they are."""
    from flowgraph.framework.registry import has_op_def

    return all(has_op_def(n.op) for n in nodes if ref_op_of(n.op) is not None)


def resource_ops_as_refs(nodes, force: bool = False) -> list[NodeDef]:
    """`nodes` (NodeDefs) with each resource op replaced by its reference twin, unless
    flowgraph runs all of them as they are (`runs_as_resources`) and not `force`."""
    nodes = list(nodes)
    if not force and runs_as_resources(nodes):
        return nodes
    out = []
    for node in nodes:
        twin = ref_op_of(node.op)
        out.append(node if twin is None else _as_ref(node, twin))
    return out


def meta_graph_as_refs(mg, force: bool = False) -> None:
    """Rewrite MetaGraphDef `mg` in place: resource ops become reference ops and its
    ``VariableDef``s reference variables, unless flowgraph runs all its resource ops as
    they are (`runs_as_resources`) and not `force`."""
    from flowgraph.framework.tf_formats.meta_graph_messages import VariableDefProto

    graph_def = mg.graph_def
    if not any(ref_op_of(n.op) for n in graph_def.node):
        return
    if not force and runs_as_resources(graph_def.node):
        return
    nodes = resource_ops_as_refs(graph_def.node, force=True)
    graph_def.ClearField("node")
    graph_def.node.extend(nodes)
    for col in mg.collection_def.values():
        if not col.HasField("bytes_list"):
            continue
        values = list(col.bytes_list.value)
        changed = False
        for i, raw in enumerate(values):
            try:
                vd = VariableDefProto.FromString(raw)
            except (ValueError, TypeError, UnicodeDecodeError):
                continue
            if vd.variable_name and vd.is_resource:
                vd.is_resource = False
                values[i] = vd.SerializeToString()
                changed = True
        if changed:
            col.bytes_list.ClearField("value")
            col.bytes_list.value.extend(values)
