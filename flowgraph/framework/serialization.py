"""Graph serialization to and from JSON-compatible dicts (a "GraphDef"); never pickle.

This module writes graph defs (`graph_to_dict`, used by ``Graph.as_graph_def``) and
encodes attribute values; it imports neither `graph` nor `operation`, which use it.
Reading a graph def back into a graph (`import_graph_def`) is in
`flowgraph.framework.importer`, above the graph.

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
>>> [node["name"] for node in json.loads(json.dumps(g.as_graph_def()))["node"]]
['x']
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
        if arr.size > 1 and not any(arr.strides):  # one value over a shape: kept compact
            return {"fill": base64.b64encode(arr.reshape(-1)[:1].tobytes()).decode("ascii"),
                    "dtype": arr.dtype.str, "shape": list(arr.shape)}
        return {
            "array": base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii"),
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
        }
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, bytes):
        return {"b64": base64.b64encode(value).decode("ascii")}
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
    if "fill" in value:
        dtype = np.dtype(value["dtype"])
        raw = base64.b64decode(value["fill"].encode("ascii"), validate=True)
        shape = value["shape"]
        if (dtype.hasobject or len(raw) != dtype.itemsize or not isinstance(shape, list)
                or not all(type(d) is int and d >= 0 for d in shape)):
            raise ValueError(f"Malformed filled array in graph: one {dtype} value and a "
                             f"shape of non-negative ints expected, got {len(raw)} bytes "
                             f"and shape {shape!r}")
        try:
            return np.broadcast_to(np.frombuffer(raw, dtype=dtype).reshape(()), shape)
        except ValueError as e:  # more bytes than an address space holds
            raise ValueError(f"Malformed filled array in graph: shape {shape} of {dtype} "
                             f"is too large ({e})") from None
    if "strings" in value:
        items = value["strings"]
        if value.get("bytes"):
            items = [s.encode("utf-8", "surrogateescape") for s in items]
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        return arr.reshape(value["shape"])
    if "b64" in value and len(value) == 1:
        return base64.b64decode(value["b64"].encode("ascii"), validate=True)
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
    if hasattr(op, "_gradient_override_name"):  # TensorFlow's _gradient_op_type
        node["gradient_op_type"] = op._gradient_override_name
    return node


def graph_to_dict(graph, add_shapes: bool = False) -> dict:
    """The graph def of `graph`. Output shapes are always recorded (``output_shapes``),
    so shapes refined with ``set_shape`` survive a round trip; `add_shapes` is accepted
    for TensorFlow compatibility."""
    nodes = []
    for op in graph.get_operations():
        node = node_to_dict(op)
        node["output_shapes"] = [encode_attr(t.shape) for t in op._outputs]
        node["output_dtypes"] = [t.dtype.base_dtype.name for t in op._outputs]
        nodes.append(node)
    return {"versions": {"producer": GRAPH_DEF_VERSION}, "node": nodes}
