"""Node dicts for the graph rewrites that write flowgraph ops as TensorFlow ops
(`op_rewrites`, `op_rewrites_tensordot`, and the SavedModel exporter's tables).

Each rewrite replaces one node of flowgraph's graph def dict by a few nodes under its
name scope; these helpers build those nodes and read what the graph def records of a
tensor (its dtype, its shape).

Example
-------
>>> import numpy as np
>>> n = const_node("a/axis", np.asarray(0, np.int32), "")
>>> n["op"], n["output_dtypes"], n["output_shapes"]
('Const', ['int32'], [{'shape': []}])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import encode_attr

__all__ = ["NodeMaker", "const_node", "source_dtype", "source_shape"]


def const_node(name: str, value: np.ndarray, device: str) -> dict:
    """A ``Const`` node dict holding `value`."""
    return {"name": name, "op": "Const", "input": [], "device": device,
            "attr": {"value": encode_attr(value), "dtype": {"dtype": value.dtype.name}},
            "output_shapes": [{"shape": list(value.shape)}], "output_dtypes": [value.dtype.name]}


def _producer(ref: str, by_name: dict) -> tuple[dict | None, int]:
    name, _, index = ref.rpartition(":")
    node = by_name.get(name or ref)
    return node, int(index) if index.isdigit() else 0


def source_dtype(ref: str, by_name: dict) -> str | None:
    """The dtype name the graph def records for tensor `ref` ("node:i"), or None."""
    node, i = _producer(ref, by_name)
    dtypes = (node or {}).get("output_dtypes") or []
    return dtypes[i] if i < len(dtypes) else None


def source_shape(ref: str, by_name: dict) -> list | None:
    """The shape (a list, None for unknown dimensions) recorded for tensor `ref`, or None
    when its rank is unknown."""
    node, i = _producer(ref, by_name)
    shapes = (node or {}).get("output_shapes") or []
    if i >= len(shapes) or not isinstance(shapes[i], dict):
        return None
    shape = shapes[i].get("shape")
    return None if shape is None else list(shape)


class NodeMaker:
    """Builds the nodes that replace node `name`: ``make("sum", "Sum", inputs, dtype)``
    is node ``name/sum``; the suffix ``""`` is `name` itself."""

    def __init__(self, name: str, device: str) -> None:
        self.name, self.device = name, device

    def ref(self, suffix: str) -> str:
        """Output 0 of the node ``name/suffix``."""
        return f"{self.name}/{suffix}:0"

    def make(self, suffix: str, op_type: str, inputs: list, dtype: str,
             attr: dict | None = None) -> dict:
        return {"name": f"{self.name}/{suffix}" if suffix else self.name, "op": op_type,
                "input": list(inputs), "device": self.device, "attr": attr or {},
                "output_dtypes": [dtype]}

    def const(self, suffix: str, value: np.ndarray) -> dict:
        return const_node(f"{self.name}/{suffix}", value, self.device)
