"""Node-level helpers of ``tf.graph_util``: `remove_training_nodes`, `must_run_on_cpu` and
`tensor_shape_from_node_def_name`.

`remove_training_nodes` works on TensorFlow's GraphDef message and returns one, as
TensorFlow does: a deployment script writes it with ``SerializeToString`` or imports it
with ``tf.import_graph_def``. It follows TensorFlow's two passes exactly, quirks
included (see its docstring), because deployment scripts print and diff the result.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, [2], name="x")
...     y = tf.identity(x, name="y")
...     z = tf.multiply(y, 2.0, name="z")
>>> [(n.name, list(n.input)) for n in remove_training_nodes(g.as_graph_def()).node]
[('x', []), ('z/y', []), ('z', ['x', 'z/y'])]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.event_format import GraphDef, NodeDef

__all__ = ["must_run_on_cpu", "remove_training_nodes", "tensor_shape_from_node_def_name"]

# Ops that `must_run_on_cpu(..., pin_variables_on_cpu=True)` pins: TensorFlow's list of
# ops that read or write a (reference) variable's buffer.
_VARIABLE_BUFFER_OPS = frozenset({
    "Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub",
    "ScatterUpdate", "TruncatedNormal", "Variable", "VariableV2"})
_INT32_ON_CPU = {"Const": "dtype", "DynamicStitch": "T", "ParallelDynamicStitch": "T",
                 "Cast": "SrcT"}


def _message(graph_def, where: str) -> GraphDef:
    if hasattr(graph_def, "message") and callable(graph_def.message):
        return graph_def.message()  # GraphDefDict
    if isinstance(graph_def, GraphDef):
        return graph_def
    if isinstance(graph_def, dict):
        from flowgraph.framework.tf_formats.graph_def import graph_def_from_dict

        return graph_def_from_dict(graph_def)
    if hasattr(graph_def, "SerializeToString"):
        return GraphDef.FromString(graph_def.SerializeToString())
    raise TypeError(f"{where}: graph_def must be a GraphDef proto (or Graph.as_graph_def()), "
                    f"but got type {type(graph_def)}.")


def _source(ref: str) -> str:
    return ref[1:] if ref.startswith("^") else ref


def _copy_with_inputs(node: NodeDef, inputs: list) -> NodeDef:
    out = NodeDef()
    out.CopyFrom(node)
    del out.input[:]
    out.input.extend(inputs)
    return out


def remove_training_nodes(input_graph, protected_nodes=None) -> GraphDef:
    """A GraphDef without the nodes only training needs: ``CheckNumerics`` nodes are
    dropped, and ``Identity`` nodes are spliced out (their consumers read the Identity's
    input). Nodes named in `protected_nodes` stay.

    As in TensorFlow: an input that named a dropped ``CheckNumerics`` is removed from its
    consumer (not rewired); an ``Identity`` stays when it has control inputs, is a control
    input itself, or is the target of a colocation (``loc:@name``). Returns a new
    GraphDef message holding only the nodes (no ``versions``).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     a = tf.placeholder(tf.float32, name="a")
    ...     b = tf.identity(tf.identity(a, name="i1"), name="i2")
    ...     c = tf.negative(b, name="c")
    >>> [(n.name, list(n.input)) for n in remove_training_nodes(g.as_graph_def()).node]
    [('a', []), ('c', ['a'])]
    """
    protected = set(protected_nodes or ())
    nodes = list(_message(input_graph, "remove_training_nodes").node)
    dropped = {n.name for n in nodes if n.op == "CheckNumerics" and n.name not in protected}
    kept = [_copy_with_inputs(n, [r for r in n.input if _source(r) not in dropped])
            for n in nodes if n.name not in dropped]

    control_sources, has_control_input, colocated = set(), set(), set()
    for node in kept:
        for ref in node.input:
            if ref.startswith("^"):
                control_sources.add(ref[1:])
                has_control_input.add(node.name)
        if "_class" in node.attr:
            for entry in node.attr["_class"].list.s:
                text = entry.decode() if isinstance(entry, bytes) else str(entry)
                if text.startswith("loc:@"):
                    colocated.add(text[len("loc:@"):])
    splice = {n.name: n.input[0] for n in kept
              if n.op == "Identity" and n.name not in protected and n.input
              and n.name not in colocated and n.name not in has_control_input
              and n.name not in control_sources}

    def follow(ref: str) -> str:
        while _source(ref) in splice:
            ref = splice[_source(ref)]
        return ref

    out = GraphDef()
    out.node.extend(_copy_with_inputs(n, [follow(r) for r in n.input])
                    for n in kept if n.name not in splice)
    return out


def _attr_dtype(node, key: str):
    """The dtype attribute `key` of a NodeDef or an Operation, or None."""
    if isinstance(node, NodeDef):
        if key not in node.attr:
            return None
        return _dtypes.as_dtype(int(node.attr[key].type)) if node.attr[key].type else None
    try:
        value = node.get_attr(key)
    except (ValueError, KeyError):
        value = None
    if value is None and key in ("T", "SrcT") and node.inputs:
        value = node.inputs[0].dtype  # flowgraph derives type attributes from the inputs
    if value is None and key == "dtype" and node.outputs:
        value = node.outputs[0].dtype
    return None if value is None else _dtypes.as_dtype(value).base_dtype


def must_run_on_cpu(node, pin_variables_on_cpu: bool = False) -> bool:
    """Whether TensorFlow places `node` (a NodeDef or an Operation) on the CPU: string and
    int32 constants, int32 ``DynamicStitch``/``Cast``, and with `pin_variables_on_cpu`
    the reference-variable ops (``VariableV2``, ``Assign``, ...).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(must_run_on_cpu(tf.constant(["a"]).op), must_run_on_cpu(tf.constant(1.0).op))
    True False
    """
    if isinstance(node, NodeDef):
        op_type = node.op
    elif hasattr(node, "type") and hasattr(node, "get_attr"):
        op_type = node.type
    else:
        raise TypeError("must_run_on_cpu: expected a NodeDef or an Operation, got "
                        f"{type(node).__name__}")
    if pin_variables_on_cpu and op_type in _VARIABLE_BUFFER_OPS:
        return True
    key = _INT32_ON_CPU.get(op_type)
    if key is None:
        return False
    dtype = _attr_dtype(node, key)
    if dtype is None:
        return False
    return dtype == _dtypes.int32 or (op_type == "Const" and dtype == _dtypes.string)


def tensor_shape_from_node_def_name(graph, input_name: str):
    """The static shape of the tensor named `input_name` in `graph`; a bare op name means
    its output 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.zeros([2, 3], name="z")
    >>> tensor_shape_from_node_def_name(g, "z").as_list()
    [2, 3]
    """
    name = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(name).shape
