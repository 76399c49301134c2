"""flowgraph's ``Tensordot`` written as TensorFlow ops (TensorFlow has no such op: its
``tf.tensordot`` builds the same transposes, reshapes and one ``MatMul``).

For ``Tensordot(a, b, axes)`` with contracted axes ``ca`` of `a` and ``cb`` of `b`
(free axes ``fa``, ``fb``), all shapes read at run time, so unknown batch dimensions
stay unknown::

    a2  = Reshape(Transpose(a, fa + ca), [prod(shape(a)[fa]), prod(shape(a)[ca])])
    b2  = Reshape(Transpose(b, cb + fb), [prod(shape(a)[ca]), prod(shape(b)[fb])])
    out = Reshape(MatMul(a2, b2), concat(shape(a)[fa], shape(b)[fb]))

The last node keeps the ``Tensordot`` node's name. Both ranks must be recorded in the
graph def; otherwise the node is written as it is (and the exporter warns).

Example
-------
>>> from flowgraph.framework.serialization import encode_attr
>>> gd = {"node": [
...     {"name": "a", "op": "Placeholder", "input": [], "attr": {},
...      "output_dtypes": ["float32"], "output_shapes": [{"shape": [None, 3]}]},
...     {"name": "b", "op": "Placeholder", "input": [], "attr": {},
...      "output_dtypes": ["float32"], "output_shapes": [{"shape": [3, 2]}]},
...     {"name": "dot", "op": "Tensordot", "input": ["a:0", "b:0"],
...      "attr": {"axes": encode_attr(1)}, "output_dtypes": ["float32"]}]}
>>> nodes = tensordot_as_tf(gd["node"][2], {n["name"]: n for n in gd["node"]})
>>> nodes[-1]["name"], nodes[-1]["op"], sorted({n["op"] for n in nodes})[:4]
('dot', 'Reshape', ['ConcatV2', 'Const', 'GatherV2', 'MatMul'])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker, source_dtype, source_shape

__all__ = ["tensordot_as_tf"]


def _axes(axes, rank_a: int, rank_b: int) -> tuple[list[int], list[int]] | None:
    if isinstance(axes, int | np.integer):
        n = int(axes)
        return list(range(rank_a - n, rank_a)), list(range(n))
    try:
        a_axes, b_axes = axes
        return [int(i) % rank_a for i in a_axes], [int(j) % rank_b for j in b_axes]
    except (TypeError, ValueError):
        return None


def tensordot_as_tf(node: dict, by_name: dict) -> list[dict]:
    """The TensorFlow nodes computing `node` (a ``Tensordot`` node dict), or ``[node]``
    when the ranks of its inputs are not recorded."""
    a, b = node["input"][:2]
    control = [r for r in node["input"][2:] if r.startswith("^")]
    dtype = source_dtype(a, by_name)
    shape_a, shape_b = source_shape(a, by_name), source_shape(b, by_name)
    raw = node.get("attr", {}).get("axes")
    axes = None if raw is None or shape_a is None or shape_b is None else \
        _axes(decode_attr(raw), len(shape_a), len(shape_b))
    if dtype is None or axes is None:
        return [node]
    ca, cb = axes
    fa = [i for i in range(len(shape_a)) if i not in ca]
    fb = [j for j in range(len(shape_b)) if j not in cb]
    m = NodeMaker(node["name"], node.get("device", ""))
    ref = m.ref

    def i32(values):
        return np.asarray(values, np.int32)

    out = [m.const("axis0", i32(0))]
    for side, x, perm, free, contracted in (("a", a, fa + ca, fa, ca),
                                            ("b", b, cb + fb, fb, cb)):
        out += [
            m.const(f"perm_{side}", i32(perm)),
            m.make(f"transpose_{side}", "Transpose", [x, ref(f"perm_{side}")], dtype),
            m.make(f"shape_{side}", "Shape", [x], "int32", {"out_type": {"dtype": "int32"}}),
            m.const(f"free_axes_{side}", i32(free)),
            m.make(f"free_{side}", "GatherV2", [ref(f"shape_{side}"), ref(f"free_axes_{side}"),
                                                ref("axis0")], "int32", {"batch_dims": 0}),
            m.make(f"free_size_{side}", "Prod", [ref(f"free_{side}"), ref("axis0")], "int32",
                   {"keep_dims": False}),
        ]
        if side == "a":
            out += [
                m.const("contracted_axes", i32(contracted)),
                m.make("contracted", "GatherV2", [ref("shape_a"), ref("contracted_axes"),
                                                  ref("axis0")], "int32", {"batch_dims": 0}),
                m.make("contracted_size", "Prod", [ref("contracted"), ref("axis0")], "int32",
                       {"keep_dims": False}),
            ]
    out += [
        m.make("matrix_shape_a", "Pack", [ref("free_size_a"), ref("contracted_size")],
               "int32", {"axis": 0}),
        m.make("matrix_a", "Reshape", [ref("transpose_a"), ref("matrix_shape_a")], dtype),
        m.make("matrix_shape_b", "Pack", [ref("contracted_size"), ref("free_size_b")],
               "int32", {"axis": 0}),
        m.make("matrix_b", "Reshape", [ref("transpose_b"), ref("matrix_shape_b")], dtype),
        m.make("matmul", "MatMul", [ref("matrix_a"), ref("matrix_b")], dtype,
               {"transpose_a": False, "transpose_b": False}),
        m.make("out_shape", "ConcatV2", [ref("free_a"), ref("free_b"), ref("axis0")],
               "int32"),
        {**m.make("", "Reshape", [ref("matmul"), ref("out_shape"), *control], dtype),
         "output_shapes": node.get("output_shapes", [])},
    ]
    return out
