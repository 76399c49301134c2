"""Graph serialization to and from JSON-compatible dicts (a "GraphDef"); never pickle.

Attribute values are tagged so they round-trip exactly: dtypes, shapes, NumPy arrays
(base64 of the raw bytes plus dtype and shape; string arrays as lists of text), and
nested lists. Decoding builds only these plain types, so loading a file can never run
code from it.

Example
-------
>>> import flowgraph as tf, json
>>> g = tf.Graph()
>>> with g.as_default():
...     x = tf.constant([1.0, 2.0], name="x")
>>> g2 = tf.Graph()
>>> with g2.as_default():
...     _ = tf.import_graph_def(json.loads(json.dumps(g.as_graph_def())), name="")
>>> g2.get_tensor_by_name("x:0").shape.as_list()
[2]
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape

GRAPH_DEF_VERSION = 1


def encode_attr(value: Any) -> Any:
    if isinstance(value, _dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else [d.value for d in value.dims]}
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype == object or arr.dtype.kind in "US":
            items = [x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else str(x)
                     for x in arr.reshape(-1)]
            return {"strings": items, "shape": list(arr.shape),
                    "bytes": bool(arr.size and isinstance(arr.reshape(-1)[0], bytes))}
        return {
            "array": base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii"),
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
        }
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, list | tuple):
        return {"list": [encode_attr(v) for v in value]}
    if isinstance(value, dict):
        return {"map": {str(k): encode_attr(v) for k, v in value.items()}}
    raise TypeError(
        f"Cannot serialize attribute value of type {type(value).__name__}: {value!r}"
    )


def decode_attr(value: Any) -> Any:
    if not isinstance(value, dict):
        if isinstance(value, bool | int | float | str) or value is None:
            return value
        raise ValueError(f"Malformed attribute value in graph: {value!r}")
    if "dtype" in value and len(value) == 1:
        return _dtypes.as_dtype(value["dtype"])
    if "shape" in value and len(value) == 1:
        return TensorShape(value["shape"])
    if "array" in value:
        dtype = np.dtype(value["dtype"])
        if dtype.hasobject:
            raise ValueError("object arrays are not allowed in a serialized graph")
        raw = base64.b64decode(value["array"].encode("ascii"), validate=True)
        return np.frombuffer(raw, dtype=dtype).reshape(value["shape"]).copy()
    if "strings" in value:
        items = value["strings"]
        if value.get("bytes"):
            items = [s.encode("utf-8", "surrogateescape") for s in items]
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        return arr.reshape(value["shape"])
    if "list" in value:
        return [decode_attr(v) for v in value["list"]]
    if "map" in value:
        return {k: decode_attr(v) for k, v in value["map"].items()}
    raise ValueError(f"Malformed attribute value in graph: unknown tag in {sorted(value)}")


def node_to_dict(op) -> dict:
    node = {
        "name": op.name,
        "op": op.type,
        "input": [t.name for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs],
        "device": op.device,
        "attr": {k: encode_attr(v) for k, v in op.attrs.items()},
    }
    if op._colocation:
        node["colocation"] = list(op._colocation)
    return node


def graph_to_dict(graph, add_shapes: bool = False) -> dict:
    nodes = []
    for op in graph.get_operations():
        node = node_to_dict(op)
        if add_shapes:
            node["output_shapes"] = [encode_attr(t.shape) for t in op.outputs]
        nodes.append(node)
    return {"versions": {"producer": GRAPH_DEF_VERSION}, "node": nodes}


def import_graph_def(graph_def: dict, input_map: dict | None = None,
                     return_elements: list | None = None, name: str | None = None,
                     op_dict=None, producer_op_list=None):
    """Import a graph def (from `Graph.as_graph_def()`) into the default graph.

    `input_map` maps tensor names in `graph_def` to existing tensors; `name` (default
    ``"import"``) prefixes every imported op name. Returns the `return_elements`.
    """
    from flowgraph.framework.graph import get_default_graph

    graph = get_default_graph()
    if not isinstance(graph_def, dict) or "node" not in graph_def:
        raise ValueError(
            "import_graph_def expects a dict with a 'node' list as produced by "
            f"Graph.as_graph_def(); got {type(graph_def).__name__}"
        )
    input_map = {k if ":" in k else f"{k}:0": v for k, v in (input_map or {}).items()}
    prefix = "import" if name is None else name
    created: dict[str, Any] = {}
    nodes = {n["name"]: n for n in graph_def["node"]}
    order = _topological_node_order(graph_def["node"])

    def resolve(ref: str):
        if ref in input_map:
            return input_map[ref]
        op_name, _, idx = ref.rpartition(":")
        if op_name not in created:
            raise ValueError(
                f"import_graph_def: input '{ref}' refers to a node missing from the graph def"
            )
        return created[op_name].outputs[int(idx)]

    with graph.name_scope(prefix) if prefix else _null():
        for node_name in order:
            node = nodes[node_name]
            data_inputs = [resolve(r) for r in node["input"] if not r.startswith("^")]
            ctrl = [created[r[1:]] for r in node["input"] if r.startswith("^")]
            attrs = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
            with graph.control_dependencies(ctrl) if ctrl else _null():
                op = graph.create_op(node["op"], data_inputs, attrs, name=_base(node_name))
            if op.name.rsplit("/", 1)[-1] != _base(node_name) and prefix:
                pass
            device = node.get("device", "")
            if device:
                op._set_device(device)
            if node.get("colocation"):
                op._colocation = [
                    f"{prefix}/{c}" if prefix else c for c in node["colocation"]
                ]
            created[node_name] = op
            # Restore the full relative name (scopes inside the imported graph).
            _rename(graph, op, f"{prefix}/{node_name}" if prefix else node_name)
    if return_elements is None:
        return None
    out = []
    for ref in return_elements:
        if ":" in ref:
            out.append(resolve(ref))
        else:
            out.append(created[ref])
    return out


def _rename(graph, op, full_name: str) -> None:
    if op._name == full_name:
        return
    if full_name in graph._ops_by_name:
        raise ValueError(
            f"import_graph_def: an op named '{full_name}' already exists in the graph; "
            "pass a different name= prefix"
        )
    del graph._ops_by_name[op._name]
    op._name = full_name
    graph._ops_by_name[full_name] = op
    graph._names_in_use[full_name.lower()] = graph._names_in_use.get(full_name.lower(), 0) + 1


def _base(name: str) -> str:
    return name.replace("/", "_")


class _null:
    def __enter__(self):
        return ""

    def __exit__(self, *exc):
        return False


def _topological_node_order(nodes: list[dict]) -> list[str]:
    deps = {}
    for n in nodes:
        deps[n["name"]] = [r.lstrip("^").rpartition(":")[0] if ":" in r else r.lstrip("^")
                           for r in n.get("input", [])]
    order: list[str] = []
    state: dict[str, int] = {}
    for start in deps:
        if state.get(start):
            continue
        stack = [(start, iter(deps[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[node] = 2
                order.append(node)
            elif nxt in deps and not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(deps[nxt])))
            elif nxt in deps and state.get(nxt) == 1:
                raise ValueError(f"import_graph_def: the graph def has a cycle through '{nxt}'")
    return order
