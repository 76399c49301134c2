"""``tf.graph_util`` (freezing and pruning graph defs) and ``tf.train.write_graph``.

Both kinds of graph def are accepted: flowgraph's dict (what ``Graph.as_graph_def()``
returns) and TensorFlow's GraphDef message (e.g. parsed from a ``.pb`` file). Results are
`GraphDefDict`, which serve as either.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, [None], name="x")
...     v = tf.Variable([2.0], name="v")
...     y = tf.multiply(x, v, name="y")
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         frozen = convert_variables_to_constants(sess, g.as_graph_def(), ["y"])
>>> sorted((n.name, n.op) for n in frozen.node)
[('v', 'Const'), ('v/read', 'Identity'), ('x', 'Placeholder'), ('y', 'Mul')]
"""

from __future__ import annotations

import logging
import os

from flowgraph.framework.event_format import GraphDef
from flowgraph.framework.serialization import encode_attr
from flowgraph.framework.tf_formats.graph_def import (
    GraphDefDict,
    as_graph_def_dict,
    graph_def_from_dict,
)
from flowgraph.framework.tf_formats.graph_util_nodes import (
    must_run_on_cpu,
    remove_training_nodes,
    tensor_shape_from_node_def_name,
)
from flowgraph.framework.tf_formats.text_format import message_to_text

# ``tf.graph_util.import_graph_def`` (the function ``tf.import_graph_def``) is set here by
# `flowgraph.framework.importer`, which depends on this package.
__all__ = ["convert_variables_to_constants", "extract_sub_graph", "must_run_on_cpu",
           "remove_training_nodes", "tensor_shape_from_node_def_name", "write_graph"]

logger = logging.getLogger("tensorflow")

_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")
_HANDLE_READERS = ("ReadVariableOp", "ResourceGather")


def _read_as_value_op(node: dict) -> list[dict]:
    """A read of a frozen resource variable, as TensorFlow freezes it: ``ReadVariableOp``
    becomes ``Identity``; ``ResourceGather`` becomes ``GatherV2`` with a ``<name>/axis``
    constant."""
    base = {"name": node["name"], "input": list(node["input"]),
            "device": node.get("device", "")}
    for key in ("output_shapes", "output_dtypes"):
        if key in node:
            base[key] = node[key]
    attrs = node.get("attr", {})
    if node["op"] == "ReadVariableOp":
        return [{**base, "op": "Identity", "attr": {"T": attrs["dtype"]}}]
    if int(_attr_value(attrs.get("batch_dims", 0)) or 0) != 0:
        raise ValueError(f"convert_variables_to_constants: cannot freeze ResourceGather "
                         f"'{node['name']}' with batch_dims != 0")
    import numpy as np

    from flowgraph.framework import dtypes as _dtypes

    tindices = attrs["Tindices"]
    index_dtype = _dtypes.as_dtype(tindices.get("dtype") if isinstance(tindices, dict)
                                   else tindices)
    axis = {"name": node["name"] + "/axis", "op": "Const", "input": [],
            "device": node.get("device", ""),
            "attr": {"dtype": attrs["Tindices"],
                     "value": encode_attr(np.array(0, index_dtype.as_numpy_dtype))}}
    gather = {**base, "op": "GatherV2", "input": [*base["input"][:2], axis["name"]],
              "attr": {"Tparams": attrs["dtype"], "Tindices": attrs["Tindices"],
                       "Taxis": attrs["Tindices"], "batch_dims": encode_attr(0)}}
    return [axis, gather]


def _attr_value(value):
    return value.get("value", value) if isinstance(value, dict) else value


def _node_name(ref: str) -> str:
    ref = ref[1:] if ref.startswith("^") else ref
    return ref.rpartition(":")[0] if ":" in ref else ref


def _as_dict(graph_def, where: str) -> dict:
    out = as_graph_def_dict(graph_def)
    if not isinstance(out, dict) or not isinstance(out.get("node"), list):
        raise TypeError(f"{where}: graph_def must be a graph_pb2.GraphDef proto, but got "
                        f"type {type(graph_def)}. Pass Graph.as_graph_def() or a GraphDef "
                        "message.")
    return out


def extract_sub_graph(graph_def, dest_nodes):
    """The part of `graph_def` that the nodes named in `dest_nodes` depend on (data and
    control inputs), in the original node order.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     a = tf.constant(1.0, name="a")
    ...     b = tf.identity(a, name="b")
    ...     c = tf.constant(2.0, name="c")
    >>> [n.name for n in extract_sub_graph(g.as_graph_def(), ["b"]).node]
    ['a', 'b']
    """
    if isinstance(dest_nodes, str):
        raise TypeError(f"dest_nodes must be an iterable of strings, but got type "
                        f"{type(dest_nodes)}. Pass a list of node names.")
    gd = _as_dict(graph_def, "extract_sub_graph")
    by_name = {n["name"]: n for n in gd["node"]}
    for name in dest_nodes:
        if name not in by_name:
            raise AssertionError(f"{name} is not in graph")
    keep, stack = set(), list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(r) for r in by_name[name].get("input", []))
    return GraphDefDict(versions=dict(gd.get("versions", {})),
                        node=[dict(n) for n in gd["node"] if n["name"] in keep])


def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """A "frozen" copy of `input_graph_def`: the subgraph that computes
    `output_node_names`, with each variable replaced by a constant holding its current
    value in `sess`. Only the variables named in `variable_names_whitelist` (if given)
    and not in `variable_names_blacklist` are converted.
    """
    sub = extract_sub_graph(input_graph_def, output_node_names)
    variables = [n for n in sub["node"] if n["op"] in _VARIABLE_OPS
                 and (variable_names_whitelist is None
                      or n["name"] in variable_names_whitelist)
                 and (variable_names_blacklist is None
                      or n["name"] not in variable_names_blacklist)]
    values = sess.run([f"{n['name']}:0" for n in variables]) if variables else []
    # A resource variable's handle fetches as its storage: freeze its current value.
    values = [v.read(name) if hasattr(v, "read") else v
              for v, name in zip(values, (n["name"] for n in variables))]
    frozen = dict(zip((n["name"] for n in variables), values))
    nodes = []
    for node in sub["node"]:
        if node["name"] not in frozen:
            if node["op"] in _HANDLE_READERS and node.get("input") and \
                    _node_name(node["input"][0]) in frozen:
                nodes.extend(_read_as_value_op(node))
            else:
                nodes.append(node)
            continue
        value = frozen[node["name"]]
        const = {"name": node["name"], "op": "Const", "input": [],
                 "device": node.get("device", ""),
                 "attr": {"dtype": node["attr"]["dtype"], "value": encode_attr(value)}}
        if node["op"] == "VarHandleOp":  # the constant holds the value, not a handle
            import numpy as np

            const["output_shapes"] = [{"shape": list(np.shape(value))}]
            const["output_dtypes"] = [np.asarray(value).dtype.name]
        else:
            for key in ("output_shapes", "output_dtypes"):
                if key in node:
                    const[key] = node[key]
        nodes.append(const)
    logger.info("Froze %d variables.", len(frozen))
    return GraphDefDict(versions=dict(sub.get("versions", {})), node=nodes)


def write_graph(graph_or_graph_def, logdir, name, as_text: bool = True) -> str:
    """Write a graph as TensorFlow's GraphDef to ``logdir/name`` (creating `logdir`):
    protobuf text format when `as_text`, else binary. Returns the file's path.

    >>> import flowgraph as tf, tempfile
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.constant(1.0, name="c")
    >>> path = write_graph(g, tempfile.mkdtemp(), "g.pbtxt")
    >>> print(open(path).read().splitlines()[:3])
    ['node {', '  name: "c"', '  op: "Const"']
    """
    graph_def = graph_or_graph_def
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    if isinstance(graph_def, GraphDefDict):
        message = graph_def.message()
    elif isinstance(graph_def, dict):
        message = graph_def_from_dict(graph_def)
    elif hasattr(graph_def, "SerializeToString"):  # a GraphDef message: kept as it is
        message = GraphDef.FromString(graph_def.SerializeToString())
    else:
        raise TypeError("write_graph: expected a Graph, a graph def or a GraphDef message, "
                        f"got {type(graph_def).__name__}")
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = message_to_text(message).encode("utf-8") if as_text \
        else message.SerializeToString()
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path
