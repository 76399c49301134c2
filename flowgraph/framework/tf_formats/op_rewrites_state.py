"""flowgraph's two variable-state ops written as TensorFlow ops (`op_rewrites.REWRITES`).

The monitored session's global-step read and its readiness checks use two ops TensorFlow
does not have; a ``.meta`` file or ``graph.pbtxt`` holding them would not import in
TensorFlow. Written for TensorFlow, each becomes the ops TensorFlow builds for the same
work, under the same node name (so ``N:0`` still names the value)::

    ReadVariableOrDefault(ref, default)      a cond on IsVariableInitialized(ref):
        N/IsVariableInitialized, N/pred_id = Identity      the predicate
        N/read/Switch = RefSwitch(ref, pred_id); N/read = Identity(:1)   taken if set
        N/default/Switch = Switch(default, pred_id)                     taken if not
        N = Merge(N/default/Switch:0, N/read)
    ReportUninitializedVariables(refs..., names)
        N/IsVariableInitialized[_i] per variable, N/stack = Pack, N/LogicalNot,
        N/names = Const(names), N/Where, N/Squeeze(squeeze_dims=[1]), N/axis,
        N = GatherV2(N/names, N/Squeeze, N/axis)

Both read back into flowgraph as those ops, with the same results (the cond's untaken
branch is dead, so an uninitialized variable is never read).

Example
-------
>>> from flowgraph.framework.serialization import encode_attr
>>> gd = {"node": [{"name": "v", "op": "VariableV2", "input": [], "attr": {},
...                 "output_dtypes": ["float32"]},
...                {"name": "r", "op": "ReportUninitializedVariables", "input": ["v:0"],
...                 "attr": {"names": encode_attr(["v"])}, "output_dtypes": ["string"]}]}
>>> [n["op"] for n in report_uninitialized_as_tf(gd["node"][1], {})]
['IsVariableInitialized', 'Pack', 'LogicalNot', 'Const', 'Where', 'Squeeze', 'Const', 'GatherV2']
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import decode_attr, encode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker

__all__ = ["read_variable_or_default_as_tf", "report_uninitialized_as_tf"]


def _split_inputs(node: dict) -> tuple[list[str], list[str]]:
    data = [r for r in node["input"] if not r.startswith("^")]
    return data, [r for r in node["input"] if r.startswith("^")]


# What a reference input can come from, here: a variable (its value may be unset), or a
# constant where a frozen graph replaced the variable (set for good).
_VARIABLES = ("VariableV2", "Variable", "TemporaryVariable")


def _is_variable(ref: str, by_name: dict) -> bool:
    producer = by_name.get(ref.rpartition(":")[0] or ref)
    return producer is None or producer.get("op") in _VARIABLES


def read_variable_or_default_as_tf(node: dict, by_name: dict) -> list[dict]:
    """The cond that reads the variable when it is initialized, else passes the default
    (an Identity of the value where a frozen graph made the variable a constant)."""
    name, device = node["name"], node.get("device", "")
    (ref, default), control = _split_inputs(node)
    dtype = (node.get("output_dtypes") or ["float32"])[0]
    if not _is_variable(ref, by_name):
        return [{**node, "op": "Identity", "input": [ref, *control], "attr": {}}]
    nodes = NodeMaker(name, device)
    pred = nodes.ref("pred_id")

    def pair(suffix, op_type, inputs):  # (Switch / RefSwitch: two outputs of the dtype)
        return {**nodes.make(suffix, op_type, inputs, dtype), "output_dtypes": [dtype, dtype]}

    return [
        nodes.make("IsVariableInitialized", "IsVariableInitialized", [ref, *control], "bool"),
        nodes.make("pred_id", "Identity", [nodes.ref("IsVariableInitialized")], "bool"),
        pair("read/Switch", "RefSwitch", [ref, pred]),
        nodes.make("read", "Identity", [f"{name}/read/Switch:1"], dtype),
        pair("default/Switch", "Switch", [default, pred]),
        {**nodes.make("", "Merge", [f"{name}/default/Switch:0", nodes.ref("read")], dtype,
                      {"N": 2}),
         "output_dtypes": [dtype, "int32"],
         "output_shapes": (node.get("output_shapes") or [{"shape": None}])
         + [{"shape": []}]},
    ]


def report_uninitialized_as_tf(node: dict, by_name: dict) -> list[dict]:
    """The names of the variables not initialized: a boolean mask over their names."""
    name, device = node["name"], node.get("device", "")
    refs, control = _split_inputs(node)
    names = [str(n) for n in decode_attr(node.get("attr", {}).get("names", {"list": []}))]
    # (a frozen graph's constants are initialized for good: only variables are checked)
    kept = [(r, n) for r, n in zip(refs, names, strict=False) if _is_variable(r, by_name)]
    refs, names = [r for r, _ in kept], [n for _, n in kept]
    if not refs:
        empty = np.empty(0, dtype=object)
        return [{"name": name, "op": "Const", "input": control, "device": device,
                 "attr": {"value": encode_attr(empty), "dtype": {"dtype": "string"}},
                 "output_shapes": [{"shape": [0]}], "output_dtypes": ["string"]}]
    table = np.empty(len(names), dtype=object)
    table[:] = [n.encode("utf-8") for n in names]

    nodes = NodeMaker(name, device)
    checks = [f"IsVariableInitialized{'_' + str(i) if i else ''}" for i in range(len(refs))]
    out = [nodes.make(check, "IsVariableInitialized", [ref, *control], "bool")
           for check, ref in zip(checks, refs, strict=True)]
    out += [
        nodes.make("stack", "Pack", [nodes.ref(c) for c in checks], "bool",
                   {"N": len(refs), "axis": 0}),
        nodes.make("LogicalNot", "LogicalNot", [nodes.ref("stack")], "bool"),
        {"name": f"{name}/names", "op": "Const", "input": [], "device": device,
         "attr": {"value": encode_attr(table), "dtype": {"dtype": "string"}},
         "output_shapes": [{"shape": [len(names)]}], "output_dtypes": ["string"]},
        nodes.make("Where", "Where", [nodes.ref("LogicalNot")], "int64"),
        nodes.make("Squeeze", "Squeeze", [nodes.ref("Where")], "int64",
                   {"squeeze_dims": encode_attr([1])}),
        nodes.const("axis", np.asarray(0, np.int32)),
        {**nodes.make("", "GatherV2", [nodes.ref("names"), nodes.ref("Squeeze"),
                                       nodes.ref("axis")], "string", {"batch_dims": 0}),
         "output_shapes": node.get("output_shapes", [])},
    ]
    return out
