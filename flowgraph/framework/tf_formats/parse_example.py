"""``ParseExample`` between flowgraph's node and TensorFlow's, both ways.

The two ops parse the same ``tf.train.Example`` batch into the same outputs (sparse
indices, values and shapes per sparse key, then one dense tensor per dense key), but
say what to parse differently::

    flowgraph   ParseExample(serialized)            keys, types, shapes and defaults
                                                    are attributes
    TensorFlow  ParseExample(serialized, names,     keys and defaults are string and
                  sparse_keys_0.., dense_keys_0..,  value inputs (constants); an empty
                  dense_defaults_0..)               default means "required"

Export (`parse_example_to_tf`) writes TensorFlow's node and its constant inputs, under
the node's name; import (`parse_example_from_tf`) reads the constants back into
flowgraph's attributes. (flowgraph's own ``tf.io.parse_example`` builds
``ParseExampleV2``, which has TensorFlow's layout and needs no conversion.) A sequence
feature (``FixedLenSequenceFeature``) is a dense shape whose first dimension is -1 in
TensorFlow's ops, a flag in flowgraph's.

Example
-------
>>> from flowgraph.framework import dtypes
>>> from flowgraph.framework.serialization import encode_attr
>>> from flowgraph.framework.tensor_shape import TensorShape
>>> node = {"name": "pe", "op": "ParseExample", "input": ["x:0"], "attr": {
...     k: encode_attr(v) for k, v in dict(sparse_keys=[], sparse_types=[], dense_keys=["a"],
...     dense_types=[dtypes.float32], dense_shapes=[TensorShape([2])],
...     dense_defaults=[None], dense_is_sequence=[False]).items()}}
>>> nodes = parse_example_to_tf(node)
>>> [n.name for n in nodes]
['pe/names', 'pe/dense_keys_0', 'pe/dense_defaults_0', 'pe']
>>> list(nodes[-1].input)
['x', 'pe/names', 'pe/dense_keys_0', 'pe/dense_defaults_0']
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.event_format import AttrValue, NodeDef, make_tensor_proto, shape_proto
from flowgraph.framework.serialization import decode_attr, encode_attr
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["is_flowgraph_parse_example", "is_tf_parse_example", "parse_example_from_tf",
           "parse_example_to_tf"]


def _const(name: str, value: np.ndarray) -> NodeDef:
    proto = make_tensor_proto(value)
    return NodeDef(name=name, op="Const", attr={"dtype": AttrValue(type=int(proto.dtype)),
                                                "value": AttrValue(tensor=proto)})


def _strings(items) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in items]
    return out


def parse_example_to_tf(node: dict) -> list[NodeDef]:
    """TensorFlow's ``ParseExample`` node (last) and its constant inputs for `node`, a
    flowgraph ``ParseExample`` node dict."""
    name = node["name"]
    a = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
    sequence = list(a.get("dense_is_sequence", []))
    dense_types = [_dtypes.as_dtype(t) for t in a.get("dense_types", [])]
    shapes = [TensorShape(s) for s in a.get("dense_shapes", [])]
    consts = [_const(f"{name}/names", _strings([]))]
    keys = []
    for kind in ("sparse_keys", "dense_keys"):
        for i, key in enumerate(a.get(kind, [])):
            consts.append(_const(f"{name}/{kind}_{i}", _strings([key]).reshape(())))
            keys.append(consts[-1].name)
    defaults = []
    for i, (dtype, shape, default, seq) in enumerate(zip(
            dense_types, shapes, a.get("dense_defaults", []), sequence)):
        np_type = object if dtype == _dtypes.string else dtype.as_numpy_dtype
        if default is None:
            value = np.zeros([0], dtype=np_type)
        elif seq:  # the padding value of a sequence feature: a scalar
            value = np.asarray(np.asarray(default, dtype=np_type).reshape(-1)[0], np_type)
        else:
            value = np.broadcast_to(np.asarray(default, dtype=np_type), shape.as_list())
            value = np.array(value, dtype=np_type)
        consts.append(_const(f"{name}/dense_defaults_{i}", value))
        defaults.append(consts[-1].name)
    data = [r[:-2] if r.endswith(":0") else r for r in node.get("input", [])
            if not r.startswith("^")]
    control = [r for r in node.get("input", []) if r.startswith("^")]
    lv = AttrValue.ListValue
    attrs = {
        "Nsparse": AttrValue(i=len(a.get("sparse_keys", []))),
        "Ndense": AttrValue(i=len(dense_types)),
        "sparse_types": AttrValue(list=lv(type=[_dtypes.as_dtype(t).as_datatype_enum
                                                for t in a.get("sparse_types", [])])),
        "Tdense": AttrValue(list=lv(type=[t.as_datatype_enum for t in dense_types])),
        "dense_shapes": AttrValue(list=lv(shape=[  # variable length: first dimension -1
            shape_proto(([-1] if seq else []) + s.as_list())
            for s, seq in zip(shapes, sequence)])),
    }
    out = NodeDef(name=name, op="ParseExample", device=node.get("device") or None,
                  input=[*data[:1], f"{name}/names", *keys, *defaults, *control],
                  attr=dict(sorted(attrs.items())))
    return [*consts, out]


def _types(node: NodeDef, key: str) -> list:
    return [_dtypes.as_dtype(int(t)) for t in node.attr[key].list.type] \
        if key in node.attr else []


def is_flowgraph_parse_example(node: dict) -> bool:
    """Whether node dict `node` is flowgraph's attribute-keyed ``ParseExample`` (one data
    input), which export converts; one with TensorFlow's inputs (`tf.raw_ops`) is
    written as it is."""
    data = [r for r in node.get("input", []) if not str(r).startswith("^")]
    return node["op"] == "ParseExample" and len(data) <= 1


def is_tf_parse_example(node: NodeDef) -> bool:
    """Whether `node` is TensorFlow's ``ParseExample`` (keys as inputs) rather than
    flowgraph's. (``ParseExampleV2`` is an op type of flowgraph's with TensorFlow's
    layout: `flowgraph/ops/parsing_v2_ops.py`; it is read as it is.)"""
    return node.op == "ParseExample" and "Ndense" in node.attr


def parse_example_from_tf(node: NodeDef, constants: dict) -> dict:
    """flowgraph's ``ParseExample`` node dict for TensorFlow's `node` (``ParseExample``
    or ``ParseExampleV2`` without ragged keys); `constants` maps a node name to the
    value of the constant it holds (the keys and defaults)."""
    data = [r for r in node.input if not r.startswith("^")]
    control = [r for r in node.input if r.startswith("^")]
    v2 = node.op == "ParseExampleV2"
    n_dense = len(node.attr["Tdense"].list.type) if "Tdense" in node.attr else 0
    n_sparse = int(node.attr["num_sparse" if v2 else "Nsparse"].i) \
        if ("num_sparse" if v2 else "Nsparse") in node.attr else 0
    expected = 5 + n_dense if v2 else 2 + n_sparse + 2 * n_dense
    if len(data) != expected:
        raise ValueError(f"node '{node.name}' ({node.op}) has {len(data)} inputs; its "
                         f"attributes (sparse {n_sparse}, dense {n_dense}) need {expected}")

    def value(ref: str, what: str):
        source = ref.rpartition(":")[0] if ":" in ref else ref
        if source not in constants:
            raise ValueError(f"node '{node.name}' ({node.op}): {what} comes from '{ref}', "
                             "which is not a constant; flowgraph reads parsing keys and "
                             "defaults only from Const nodes")
        return np.asarray(constants[source])

    def keys(refs) -> list[str]:
        out = []
        for ref in refs:
            out.extend(k.decode("utf-8") if isinstance(k, bytes) else str(k)
                       for k in value(ref, "a key").reshape(-1))
        return out

    if v2:
        sparse_keys, dense_keys = keys(data[2:3]), keys(data[3:4])
        if keys(data[4:5]) or node.attr["ragged_value_types"].list.type:
            raise ValueError(f"node '{node.name}' (ParseExampleV2) parses ragged features, "
                             "which flowgraph's ParseExample does not")
        default_refs = data[5:]
    else:
        sparse_keys = keys(data[2:2 + n_sparse])
        dense_keys = keys(data[2 + n_sparse:2 + n_sparse + n_dense])
        default_refs = data[2 + n_sparse + n_dense:]
    if len(sparse_keys) != n_sparse or len(dense_keys) != n_dense:
        raise ValueError(f"node '{node.name}' ({node.op}) names {len(sparse_keys)} sparse "
                         f"and {len(dense_keys)} dense keys, its attributes {n_sparse} "
                         f"and {n_dense}")
    shapes, sequence = [], []
    for s in (node.attr["dense_shapes"].list.shape if "dense_shapes" in node.attr else []):
        dims = [int(d.size) for d in s.dim]
        sequence.append(bool(dims) and dims[0] < 0)  # variable length: a sequence feature
        shapes.append(TensorShape(dims[1:] if sequence[-1] else dims))
    defaults = []
    for ref, shape, seq in zip(default_refs, shapes, sequence):
        d = value(ref, "a default")
        defaults.append(None if d.size == 0 else
                        d.reshape(()) if seq else d.reshape(shape.as_list()))
    attrs = {
        "sparse_keys": sparse_keys, "sparse_types": _types(node, "sparse_types"),
        "dense_keys": dense_keys, "dense_types": _types(node, "Tdense"),
        "dense_shapes": shapes, "dense_defaults": defaults, "dense_is_sequence": sequence,
    }
    return {"name": node.name, "op": "ParseExample",
            "input": [data[0] if ":" in data[0] else f"{data[0]}:0", *control],
            "device": node.device, "attr": {k: encode_attr(v) for k, v in attrs.items()}}
