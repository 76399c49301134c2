"""flowgraph-only ops written as TensorFlow ops in a GraphDef for TensorFlow.

Some of flowgraph's ops have no op of the same name in TensorFlow, but do the work of a
few of TensorFlow's. Writing a graph def for TensorFlow (`graph_def.graph_def_from_dict`)
replaces each by those ops, under the same node name, so the tensors that signatures
and consumers name stay valid:

    flowgraph                            TensorFlow
    -----------------------------------  ----------------------------------------------
    ClassIdToString(ids)                 AsString(ids)
    ClassIdToString(ids, vocabulary=v)   GatherV2(Const(v), ids, Const(0))
    L2Normalize(x, axis, epsilon)        Mul(Rsqrt(Maximum(Sum(Square(x), axis,
                                             keep_dims=True), epsilon)), x)
    VocabLookup(keys, vocabulary=v)      e = Equal(ExpandDims(keys, -1), Const(v))
                                         Select(Any(e, -1), ArgMax(Cast(e), -1), miss)
        miss: default_value, or len(v) + StringToHashBucketFast(keys) with OOV buckets
        (AsString first for integer keys); a vocabulary *file* is left as it is here
        (a SavedModel export makes it a table over an asset: `saved_model.tf_export_tables`).
    SafeSparseLookup(params, sparse ids) GatherV2 of the ids >= 0, UnsortedSegmentSum per
                                         example (divided by the count for "mean", its
                                         square root for "sqrtn"); only when nothing
                                         reads its 2nd and 3rd outputs (gradient graphs)
    SparseCross(num_sparse, num_dense)   SparseCross(N, sparse_types, dense_types,
                                         internal_type, out_type): the same inputs,
                                         TensorFlow's attributes (`from_tf_node` maps
                                         them back on reading)
    Tensordot(a, b, axes)                Transposes, Reshapes and a MatMul
                                         (`op_rewrites_tensordot`)
    PrintV2(*xs, template=[t0, t1, ..])  PrintV2(StringFormat(*xs, template=t0{}t1..))
    SparseApplyAdam(var, m, v, ...)      Assign/ScatterAdd of the moments, AssignSub
                                         (`op_rewrites_adam`)
    ReadVariableOrDefault(ref, default)  a cond on IsVariableInitialized (RefSwitch,
                                         Switch, Merge; `op_rewrites_state`)
    ReportUninitializedVariables(refs)   IsVariableInitialized per variable, Pack,
                                         LogicalNot, Where, GatherV2 of the names
    HeadAssertRange / HeadAssertShape    an Assert over TensorFlow's comparisons
                                         (`op_rewrites_head`)
    [Resource]SparseApplyGradientDescent [Resource]ScatterSub(var, indices, grad * alpha)
                                         (`op_rewrites_sgd`)

(`ParseExample`, whose keys are attributes in flowgraph and inputs in TensorFlow, is
converted both ways by `tf_formats.parse_example`.) Reading such a file back gives
TensorFlow's ops, which flowgraph has, with the same results.

Reading a TensorFlow GraphDef maps the other way where the two differ: `ATTR_ALIASES`
(``LookupTableFindV2``'s ``Tout`` is flowgraph's ``value_dtype``; left out on writing),
`from_tf_node` per node (``SparseCross``'s counts) and `expand_tf_ops` over the graph (a
``PrintV2`` of a ``StringFormat`` takes over its inputs and template).

Example
-------
>>> from flowgraph.framework.serialization import encode_attr
>>> gd = {"node": [{"name": "ids", "op": "Placeholder", "input": [], "attr": {},
...                 "output_dtypes": ["int64"]},
...                {"name": "cls", "op": "ClassIdToString", "input": ["ids:0"],
...                 "attr": {"vocabulary": encode_attr(["a", "b"])}}]}
>>> [(n["name"], n["op"]) for n in rewrite_for_tf(gd)["node"]]
[('ids', 'Placeholder'), ('cls/vocabulary', 'Const'), ('cls/axis', 'Const'), ('cls', 'GatherV2')]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import registry
from flowgraph.framework.serialization import decode_attr, encode_attr
from flowgraph.framework.tf_formats.op_rewrites_adam import sparse_apply_adam_as_tf
from flowgraph.framework.tf_formats.op_rewrites_head import (
    head_assert_range_as_tf,
    head_assert_shape_as_tf,
)
from flowgraph.framework.tf_formats.op_rewrites_sgd import sparse_apply_gradient_descent_as_tf
from flowgraph.framework.tf_formats.op_rewrites_state import (
    read_variable_or_default_as_tf,
    report_uninitialized_as_tf,
)
from flowgraph.framework.tf_formats.op_rewrites_tensordot import tensordot_as_tf
from flowgraph.framework.tf_formats.rewrite_nodes import const_node as _const
from flowgraph.framework.tf_formats.rewrite_nodes import source_dtype as _source_dtype

__all__ = ["ATTR_ALIASES", "REWRITES", "expand_tf_ops", "from_tf_node", "rewrite_for_tf"]

# op type -> {flowgraph attribute: TensorFlow attribute of the same value}: read from
# TensorFlow's name on import, left out on export (TensorFlow derives its own there).
ATTR_ALIASES = {"LookupTableFindV2": {"value_dtype": "Tout"}}


def _class_id_to_string(node: dict, by_name: dict) -> list[dict]:
    name, ids = node["name"], node["input"][0]
    control = [r for r in node["input"][1:] if r.startswith("^")]
    vocab = decode_attr(node.get("attr", {}).get("vocabulary", {"list": []}))
    base = {"device": node.get("device", ""), "output_shapes": node.get("output_shapes", []),
            "output_dtypes": ["string"]}
    if not vocab:
        return [{**base, "name": name, "op": "AsString", "input": [ids, *control],
                 "attr": {"precision": -1, "scientific": False, "shortest": False,
                          "width": -1, "fill": ""}}]
    table = np.empty(len(vocab), dtype=object)
    table[:] = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in vocab]
    return [
        {"name": f"{name}/vocabulary", "op": "Const", "input": [], "device": base["device"],
         "attr": {"value": encode_attr(table), "dtype": {"dtype": "string"}},
         "output_shapes": [{"shape": [len(vocab)]}], "output_dtypes": ["string"]},
        {"name": f"{name}/axis", "op": "Const", "input": [], "device": base["device"],
         "attr": {"value": encode_attr(np.array(0, np.int32)), "dtype": {"dtype": "int32"}},
         "output_shapes": [{"shape": []}], "output_dtypes": ["int32"]},
        {**base, "name": name, "op": "GatherV2",
         "input": [f"{name}/vocabulary:0", ids, f"{name}/axis:0", *control],
         "attr": {"batch_dims": 0}},
    ]


def _l2_normalize(node: dict, by_name: dict) -> list[dict]:
    name, x = node["name"], node["input"][0]
    control = [r for r in node["input"][1:] if r.startswith("^")]
    attrs = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
    dtype = (node.get("output_dtypes") or [None])[0]
    axis = attrs.get("axis")
    shapes = node.get("output_shapes") or [{"shape": None}]
    rank = None if shapes[0].get("shape") is None else len(shapes[0]["shape"])
    if dtype is None or (axis is None and rank is None):
        return [node]  # not expressible without the rank: written as it is
    axis = list(range(rank)) if axis is None else [int(a) for a in axis]
    device = node.get("device", "")

    def op(suffix, op_type, inputs, attr=None):
        return {"name": f"{name}/{suffix}" if suffix else name, "op": op_type,
                "input": inputs, "device": device, "attr": attr or {},
                "output_dtypes": [dtype]}

    eps = np.asarray(attrs.get("epsilon", 1e-12), dtype=np.dtype(dtype))
    return [
        op("square", "Square", [x]),
        _const(f"{name}/axis", np.asarray(axis, np.int32), device),
        op("sum", "Sum", [f"{name}/square:0", f"{name}/axis:0"], {"keep_dims": True}),
        _const(f"{name}/epsilon", eps, device),
        op("maximum", "Maximum", [f"{name}/sum:0", f"{name}/epsilon:0"]),
        op("rsqrt", "Rsqrt", [f"{name}/maximum:0"]),
        {**op("", "Mul", [f"{name}/rsqrt:0", x, *control]),
         "output_shapes": node.get("output_shapes", [])},
    ]


def _vocab_lookup(node: dict, by_name: dict) -> list[dict]:
    attrs = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
    vocab = list(attrs.get("vocabulary") or [])
    keys = node["input"][0]
    key_dtype = _source_dtype(keys, by_name)
    if attrs.get("vocabulary_file") or not vocab or key_dtype is None:
        return [node]  # a file (an asset read at run time) has no stateless form here
    name, device = node["name"], node.get("device", "")
    control = [r for r in node["input"][1:] if r.startswith("^")]
    if key_dtype == "string":
        table = np.empty(len(vocab), dtype=object)
        table[:] = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in vocab]
    else:
        table = np.asarray([int(v) for v in vocab], dtype=np.dtype(key_dtype))

    def op(suffix, op_type, inputs, dtype, attr=None):
        return {"name": f"{name}/{suffix}" if suffix else name, "op": op_type,
                "input": inputs, "device": device, "attr": attr or {},
                "output_dtypes": [dtype]}

    out = [
        _const(f"{name}/vocabulary", table, device),
        _const(f"{name}/last_axis", np.asarray(-1, np.int32), device),
        op("keys", "ExpandDims", [keys, f"{name}/last_axis:0"], key_dtype),
        op("equal", "Equal", [f"{name}/keys:0", f"{name}/vocabulary:0"], "bool"),
        op("found", "Any", [f"{name}/equal:0", f"{name}/last_axis:0"], "bool",
           {"keep_dims": False}),
        op("equal_int", "Cast", [f"{name}/equal:0"], "int32",
           {"SrcT": {"dtype": "bool"}, "DstT": {"dtype": "int32"}, "Truncate": False}),
        op("index", "ArgMax", [f"{name}/equal_int:0", f"{name}/last_axis:0"], "int64",
           {"output_type": {"dtype": "int64"}}),
    ]
    oov = int(attrs.get("num_oov_buckets") or 0)
    if oov:
        strings = keys
        if key_dtype != "string":
            out.append(op("as_string", "AsString", [keys], "string",
                          {"precision": -1, "scientific": False, "shortest": False,
                           "width": -1, "fill": ""}))
            strings = f"{name}/as_string:0"
        out += [op("bucket", "StringToHashBucketFast", [strings], "int64",
                   {"num_buckets": oov}),
                _const(f"{name}/vocab_size", np.asarray(len(vocab), np.int64), device),
                op("miss", "AddV2", [f"{name}/bucket:0", f"{name}/vocab_size:0"], "int64")]
    else:
        out += [op("zeros", "ZerosLike", [f"{name}/index:0"], "int64"),
                _const(f"{name}/default", np.asarray(int(attrs.get("default_value", -1)),
                                                     np.int64), device),
                op("miss", "AddV2", [f"{name}/zeros:0", f"{name}/default:0"], "int64")]
    out.append({**op("", "Select", [f"{name}/found:0", f"{name}/index:0", f"{name}/miss:0",
                                    *control], "int64"),
                "output_shapes": node.get("output_shapes", [])})
    return out


def _safe_sparse_lookup(node: dict, by_name: dict) -> list[dict]:
    name, device = node["name"], node.get("device", "")
    params, indices, ids, dense_shape = node["input"][:4]
    control = [r for r in node["input"][4:] if r.startswith("^")]
    dtype = _source_dtype(params, by_name)
    ids_dtype = _source_dtype(ids, by_name)
    combiner = decode_attr(node.get("attr", {}).get("combiner", "mean"))
    used = any(r.lstrip("^") in (f"{name}:1", f"{name}:2")
               for n in by_name.values() for r in n.get("input", []))
    shapes = (by_name.get(params.rpartition(":")[0] or params) or {}).get("output_shapes")
    rank2 = bool(shapes) and isinstance(shapes[0], dict) and \
        shapes[0].get("shape") is not None and len(shapes[0]["shape"]) == 2
    if dtype is None or ids_dtype is None or used or not rank2 or \
            combiner not in ("sum", "mean", "sqrtn"):
        return [node]  # the general case: written as it is

    def op(suffix, op_type, inputs, out_dtype, attr=None):
        return {"name": f"{name}/{suffix}" if suffix else name, "op": op_type,
                "input": inputs, "device": device, "attr": attr or {},
                "output_dtypes": [out_dtype]}

    def ref(suffix):
        return f"{name}/{suffix}:0"

    def cast(suffix, source, src, dst):
        return op(suffix, "Cast", [source], dst, {"SrcT": {"dtype": src},
                                                  "DstT": {"dtype": dst}, "Truncate": False})

    out = [
        _const(f"{name}/zero", np.asarray(0, np.dtype(ids_dtype)), device),
        _const(f"{name}/axis0", np.asarray(0, np.int32), device),
        _const(f"{name}/axis1", np.asarray(1, np.int32), device),
        _const(f"{name}/flat", np.asarray([-1], np.int32), device),
        _const(f"{name}/last", np.asarray(-1, np.int32), device),
        op("keep", "GreaterEqual", [ids, ref("zero")], "bool"),
        op("where", "Where", [ref("keep")], "int64"),
        op("positions", "Reshape", [ref("where"), ref("flat")], "int64"),
        op("kept_ids", "GatherV2", [ids, ref("positions"), ref("axis0")], ids_dtype,
           {"batch_dims": 0}),
        op("examples", "GatherV2", [indices, ref("axis0"), ref("axis1")], "int64",
           {"batch_dims": 0}),
        op("kept_examples64", "GatherV2", [ref("examples"), ref("positions"), ref("axis0")],
           "int64", {"batch_dims": 0}),
        cast("kept_examples", ref("kept_examples64"), "int64", "int32"),
        op("batch64", "GatherV2", [dense_shape, ref("axis0"), ref("axis0")], "int64",
           {"batch_dims": 0}),
        cast("batch", ref("batch64"), "int64", "int32"),
        op("rows", "GatherV2", [params, ref("kept_ids"), ref("axis0")], dtype,
           {"batch_dims": 0}),
    ]
    summed = "sum" if combiner == "sum" else "summed"
    out.append(op(summed, "UnsortedSegmentSum", [ref("rows"), ref("kept_examples"),
                                                 ref("batch")], dtype))
    if combiner != "sum":
        out += [
            op("ones", "OnesLike", [ref("kept_examples64")], "int64"),
            cast("ones_f", ref("ones"), "int64", dtype),
            op("count", "UnsortedSegmentSum", [ref("ones_f"), ref("kept_examples"),
                                               ref("batch")], dtype),
            _const(f"{name}/one", np.asarray(1, np.dtype(dtype)), device),
            op("count1", "Maximum", [ref("count"), ref("one")], dtype),
        ]
        divisor = "count1"
        if combiner == "sqrtn":
            out.append(op("sqrt_count", "Sqrt", [ref("count1")], dtype))
            divisor = "sqrt_count"
        out.append(op("divisor", "ExpandDims", [ref(divisor), ref("last")], dtype))
        out.append(op("", "RealDiv", [ref("summed"), ref("divisor"), *control], dtype))
    else:
        out.append(op("", "Identity", [ref("sum"), *control], dtype))
    out[-1]["output_shapes"] = (node.get("output_shapes") or [])[:1]
    return out


def _sparse_cross(node: dict, by_name: dict) -> list[dict]:
    attrs = node.get("attr", {})
    n, m = int(attrs.get("num_sparse", 0)), int(attrs.get("num_dense", 0))
    data = [r for r in node["input"] if not r.startswith("^")]
    if len(data) != 3 * n + m:
        return [node]
    sparse = [_source_dtype(r, by_name) for r in data[n:2 * n]]
    dense = [_source_dtype(r, by_name) for r in data[3 * n:]]
    if None in sparse or None in dense:
        return [node]
    hashed = bool(attrs.get("hashed_output", True))
    kinds = {"list": [{"dtype": d} for d in sparse]}
    return [{**node, "attr": {k: v for k, v in attrs.items()
                              if k not in ("num_sparse", "num_dense")},
             "tf_attr": {**node.get("tf_attr", {}), "N": n, "sparse_types": kinds,
                         "dense_types": {"list": [{"dtype": d} for d in dense]},
                         "internal_type": {"dtype": "string" if "string" in sparse + dense
                                           else "int64"},
                         "out_type": {"dtype": "int64" if hashed else "string"}}}]


def _sparse_cross_from_tf(node: dict) -> dict:
    tf_attr = node.get("tf_attr", {})
    if "N" not in tf_attr or "num_sparse" in node.get("attr", {}):
        return node
    dense = decode_attr(tf_attr.get("dense_types", {"list": []}))
    attr = {**node["attr"], "num_sparse": int(tf_attr["N"]), "num_dense": len(dense)}
    return {**node, "attr": attr}


def from_tf_node(node: dict) -> dict:
    """`node` (read from a TensorFlow GraphDef) with the attributes flowgraph's op keeps
    where TensorFlow's differ (`SparseCross`'s counts)."""
    aliases = ATTR_ALIASES.get(node["op"])
    if aliases:
        node = _aliased_attrs_from_tf(node, aliases)
    fix = _FROM_TF.get(node["op"])
    return node if fix is None else fix(node)


def _aliased_attrs_from_tf(node: dict, aliases: dict) -> dict:
    attr, tf_attr = node.get("attr", {}), node.get("tf_attr", {})
    found = {ours: tf_attr[theirs] for ours, theirs in aliases.items()
             if ours not in attr and theirs in tf_attr}
    return {**node, "attr": {**attr, **found}} if found else node


def _print_v2_as_tf(node: dict, by_name: dict) -> list[dict]:
    # TensorFlow's PrintV2 prints one string: a StringFormat of the tensors makes it.
    attrs = node.get("attr", {})
    if "template" not in attrs:
        return [node]
    pieces = [str(p) for p in decode_attr(attrs["template"])]
    data = [r for r in node["input"] if not r.startswith("^")]
    kinds = [_source_dtype(r, by_name) for r in data]
    if len(pieces) != len(data) + 1 or None in kinds:
        return [node]
    slot, i = "{}", 0
    while any(slot in p for p in pieces):
        i += 1
        slot = f"{{slot{i}}}"
    name, device = node["name"], node.get("device", "")
    control = [r for r in node["input"] if r.startswith("^")]
    fmt = {"name": f"{name}/format", "op": "StringFormat", "input": data, "device": device,
           "attr": {"template": encode_attr(slot.join(pieces)),
                    "placeholder": encode_attr(slot),
                    "summarize": attrs.get("summarize", encode_attr(3)),
                    "T": {"list": [{"dtype": k} for k in kinds]}},
           "output_dtypes": ["string"], "output_shapes": [{"shape": []}]}
    keep = {k: v for k, v in attrs.items() if k in ("output_stream", "end")}
    return [fmt, {**node, "input": [f"{name}/format:0", *control], "attr": keep}]


_FROM_TF = {"SparseCross": _sparse_cross_from_tf}

# op type -> function of (node dict, nodes by name) returning the node dicts replacing it
REWRITES = {"ClassIdToString": _class_id_to_string, "L2Normalize": _l2_normalize,
            "VocabLookup": _vocab_lookup, "SafeSparseLookup": _safe_sparse_lookup,
            "SparseCross": _sparse_cross, "Tensordot": tensordot_as_tf,
            "PrintV2": _print_v2_as_tf,
            "SparseApplyAdam": sparse_apply_adam_as_tf,
            "ReadVariableOrDefault": read_variable_or_default_as_tf,
            "ReportUninitializedVariables": report_uninitialized_as_tf,
            "HeadAssertRange": head_assert_range_as_tf,
            "HeadAssertShape": head_assert_shape_as_tf,
            "SparseApplyGradientDescent": sparse_apply_gradient_descent_as_tf,
            "ResourceSparseApplyGradientDescent": sparse_apply_gradient_descent_as_tf}


def rewrite_for_tf(graph_def: dict) -> dict:
    """`graph_def` (flowgraph's dict) with every op of `REWRITES` replaced by TensorFlow
    ops; the same dict when there is none."""
    nodes = graph_def.get("node", [])
    if not any(n["op"] in REWRITES for n in nodes):
        return graph_def
    by_name = {n["name"]: n for n in nodes}
    out = []
    for n in nodes:
        out.extend(REWRITES[n["op"]](n, by_name) if n["op"] in REWRITES else [n])
    return {**graph_def, "node": out}


# TensorFlow op type -> function of a node dict returning (the node dicts computing it,
# the last one named as it; {output index > 0: the tensor that gives that output}).
EXPANSIONS: dict = {}  # none at present (SparseSegment*Grad are ops of their own now)


def expand_tf_ops(graph_def: dict) -> dict:
    """`graph_def` (read from a TensorFlow GraphDef) with each op of `EXPANSIONS` that
    flowgraph has no op for replaced by the ops it computes, consumers of its other
    outputs rewired; the same dict when there is none.

    >>> expand_tf_ops({"node": []})
    {'node': []}
    """
    nodes = graph_def.get("node", [])
    if any(n["op"] == "PrintV2" and "template" not in n.get("attr", {}) for n in nodes):
        nodes = _prints_with_templates(nodes)
        graph_def = {**graph_def, "node": nodes}
    todo = {n["name"] for n in nodes
            if n["op"] in EXPANSIONS and not registry.has_op_def(n["op"])}
    if not todo:
        return graph_def
    out, renamed = [], {}
    for n in nodes:
        if n["name"] not in todo:
            out.append(n)
            continue
        replacement, outputs = EXPANSIONS[n["op"]](n)
        out.extend(replacement)
        renamed.update({f"{n['name']}:{i}": ref for i, ref in outputs.items()})
    for i, n in enumerate(out):
        if any(r in renamed for r in n.get("input", [])):
            out[i] = {**n, "input": [renamed.get(r, r) for r in n["input"]]}
    return {**graph_def, "node": out}


def _prints_with_templates(nodes: list[dict]) -> list[dict]:
    # TensorFlow's PrintV2 prints one string, which its StringFormat input formats;
    # flowgraph's formats its tensors itself from a template cut at the placeholders:
    # the PrintV2 takes over the StringFormat's inputs and template.
    by_name = {n["name"]: n for n in nodes}
    out = []
    for n in nodes:
        data = [r for r in n["input"] if not r.startswith("^")]
        fmt = by_name.get(data[0].rpartition(":")[0]) if len(data) == 1 else None
        if n["op"] != "PrintV2" or "template" in n.get("attr", {}) or fmt is None or \
                fmt["op"] != "StringFormat":
            out.append(n)
            continue
        attrs = fmt.get("attr", {})
        template = str(decode_attr(attrs.get("template", encode_attr("%s"))))
        placeholder = str(decode_attr(attrs.get("placeholder", encode_attr("%s"))))
        fmt_data = [r for r in fmt["input"] if not r.startswith("^")]
        pieces = template.split(placeholder)
        if len(pieces) != len(fmt_data) + 1:
            out.append(n)
            continue
        control = [r for r in n["input"] if r.startswith("^")]
        out.append({**n, "input": [*fmt_data, *control],
                    "attr": {**n.get("attr", {}), "template": encode_attr(pieces),
                             "summarize": attrs.get("summarize", encode_attr(3))}})
    return out
