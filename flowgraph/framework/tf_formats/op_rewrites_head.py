"""The canned heads' two label checks written as TensorFlow ops (`op_rewrites.REWRITES`).

A canned estimator's training graph checks its labels with two flowgraph ops, which
its ``.meta`` files and ``graph.pbtxt`` would otherwise carry where TensorFlow has no op
of that name. Written for TensorFlow each becomes an ``Assert`` under the same node name
(both have no outputs: the head runs them as control inputs), over a condition built
from TensorFlow's ops::

    HeadAssertRange(x; low, high)       All(Reshape(LogicalAnd(GreaterEqual(x, low),
                                                               LessEqual(x, high)), [-1]))
    HeadAssertShape(x, logits; dims)    for each allowed last dimension d, with
                                        e = ConcatV2(Shape(logits)[:-1], [d]):
                                        Size(Shape(x)) == Size(e) and
                                        All(ConcatV2(Shape(x), e) == ConcatV2(e, Shape(x)))
                                        (equal sizes make the second test Shape(x) == e);
                                        any of them

The assertion's message is flowgraph's; read back, the checks pass and fail as before,
with ``Assert``'s error (InvalidArgumentError) instead of the head kernels' wording.

Example
-------
>>> from flowgraph.framework.serialization import encode_attr
>>> node = {"name": "check", "op": "HeadAssertRange", "input": ["y:0"], "device": "",
...         "attr": {"low": encode_attr(0.0), "high": encode_attr(1.0),
...                  "message": encode_attr("labels must be in [0, 1]")}}
>>> by_name = {"y": {"name": "y", "output_dtypes": ["float32"]}}
>>> [n["op"] for n in head_assert_range_as_tf(node, by_name)][-1]
'Assert'
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import decode_attr, encode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker, source_dtype

__all__ = ["head_assert_range_as_tf", "head_assert_shape_as_tf"]


def _attrs(node: dict) -> dict:
    return {k: decode_attr(v) for k, v in node.get("attr", {}).items()}


def _message(nodes: NodeMaker, text: str) -> dict:
    value = np.empty((), dtype=object)
    value[()] = text.encode("utf-8")
    return {"name": f"{nodes.name}/message", "op": "Const", "input": [],
            "device": nodes.device,
            "attr": {"value": encode_attr(value), "dtype": {"dtype": "string"}},
            "output_shapes": [{"shape": []}], "output_dtypes": ["string"]}


def _assert(node: dict, condition: str, data: list[str]) -> dict:
    control = [r for r in node["input"] if r.startswith("^")]
    return {"name": node["name"], "op": "Assert", "input": [condition, *data, *control],
            "device": node.get("device", ""), "attr": {"summarize": 3},
            "output_dtypes": [], "output_shapes": []}


def head_assert_range_as_tf(node: dict, by_name: dict) -> list[dict]:
    """``Assert`` that every value of x lies in [low, high]."""
    x = node["input"][0]
    dtype = source_dtype(x, by_name)
    if dtype is None:
        return [node]  # (the input's dtype unrecorded: written as it is)
    attrs = _attrs(node)
    low, high = float(attrs.get("low", 0.0)), float(attrs.get("high", 1.0))
    nodes = NodeMaker(node["name"], node.get("device", ""))
    return [
        nodes.const("low", np.asarray(low, dtype=np.dtype(dtype))),
        nodes.const("high", np.asarray(high, dtype=np.dtype(dtype))),
        nodes.make("GreaterEqual", "GreaterEqual", [x, nodes.ref("low")], "bool"),
        nodes.make("LessEqual", "LessEqual", [x, nodes.ref("high")], "bool"),
        nodes.make("LogicalAnd", "LogicalAnd",
                   [nodes.ref("GreaterEqual"), nodes.ref("LessEqual")], "bool"),
        nodes.const("flat", np.asarray([-1], np.int32)),
        nodes.make("Reshape", "Reshape", [nodes.ref("LogicalAnd"), nodes.ref("flat")],
                   "bool"),
        nodes.const("axis", np.asarray(0, np.int32)),
        nodes.make("All", "All", [nodes.ref("Reshape"), nodes.ref("axis")], "bool",
                   {"keep_dims": False}),
        _message(nodes, f"{attrs.get('message', '')}. Found values outside "
                        f"[{low:g}, {high:g}]."),
        _assert(node, nodes.ref("All"), [nodes.ref("message")]),
    ]


def head_assert_shape_as_tf(node: dict, by_name: dict) -> list[dict]:
    """``Assert`` that x's shape is the logits' batch shape plus one allowed last
    dimension."""
    x, logits = node["input"][:2]
    attrs = _attrs(node)
    dims = [int(d) for d in attrs.get("last_dims") or []]
    if not dims:
        return [node]
    nodes = NodeMaker(node["name"], node.get("device", ""))
    out = [
        nodes.make("x_shape", "Shape", [x], "int32", {"out_type": {"dtype": "int32"}}),
        nodes.make("logits_shape", "Shape", [logits], "int32",
                   {"out_type": {"dtype": "int32"}}),
        nodes.const("begin", np.asarray([0], np.int32)),
        nodes.const("end", np.asarray([-1], np.int32)),
        nodes.const("strides", np.asarray([1], np.int32)),
        nodes.make("batch", "StridedSlice",
                   [nodes.ref("logits_shape"), nodes.ref("begin"), nodes.ref("end"),
                    nodes.ref("strides")], "int32",
                   {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
                    "new_axis_mask": 0, "shrink_axis_mask": 0}),
        nodes.const("axis", np.asarray(0, np.int32)),
        nodes.make("x_rank", "Size", [nodes.ref("x_shape")], "int32",
                   {"out_type": {"dtype": "int32"}}),
    ]
    oks = []
    for i, d in enumerate(dims):
        out += [
            nodes.const(f"last_{i}", np.asarray([d], np.int32)),
            nodes.make(f"expected_{i}", "ConcatV2",
                       [nodes.ref("batch"), nodes.ref(f"last_{i}"), nodes.ref("axis")],
                       "int32", {"N": 2}),
            nodes.make(f"expected_rank_{i}", "Size", [nodes.ref(f"expected_{i}")], "int32",
                       {"out_type": {"dtype": "int32"}}),
            nodes.make(f"rank_ok_{i}", "Equal",
                       [nodes.ref("x_rank"), nodes.ref(f"expected_rank_{i}")], "bool"),
            nodes.make(f"xe_{i}", "ConcatV2",
                       [nodes.ref("x_shape"), nodes.ref(f"expected_{i}"), nodes.ref("axis")],
                       "int32", {"N": 2}),
            nodes.make(f"ex_{i}", "ConcatV2",
                       [nodes.ref(f"expected_{i}"), nodes.ref("x_shape"), nodes.ref("axis")],
                       "int32", {"N": 2}),
            nodes.make(f"equal_{i}", "Equal", [nodes.ref(f"xe_{i}"), nodes.ref(f"ex_{i}")],
                       "bool"),
            nodes.make(f"same_{i}", "All", [nodes.ref(f"equal_{i}"), nodes.ref("axis")],
                       "bool", {"keep_dims": False}),
            nodes.make(f"ok_{i}", "LogicalAnd",
                       [nodes.ref(f"rank_ok_{i}"), nodes.ref(f"same_{i}")], "bool"),
        ]
        oks.append(nodes.ref(f"ok_{i}"))
    out += [
        nodes.make("oks", "Pack", oks, "bool", {"N": len(oks), "axis": 0}),
        nodes.make("any", "Any", [nodes.ref("oks"), nodes.ref("axis")], "bool",
                   {"keep_dims": False}),
        _message(nodes, f"{attrs.get('message', '')} Expected {attrs.get('what', 'labels')} "
                        f"shape: the logits' batch shape and a last dimension of "
                        f"{' or '.join(map(str, dims))}; "
                        f"{attrs.get('what', 'labels')} shape, logits shape:"),
        _assert(node, nodes.ref("any"),
                [nodes.ref("message"), nodes.ref("x_shape"), nodes.ref("logits_shape")]),
    ]
    return out
