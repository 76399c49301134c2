"""TensorFlow's ``FusedBatchNorm`` (V1, V2, V3) read as the primitive ops it computes.

flowgraph's `tf.nn.fused_batch_norm` builds primitive ops, so flowgraph has no fused
op; a graph written by TensorFlow (``tf.layers.batch_normalization(fused=True)``,
Keras' ``BatchNormalization``) holds one. Reading it gives, under the node's name
scope, with ``C`` the channel axis (last for NHWC, 1 for NCHW) and per-channel vectors
reshaped to broadcast along it::

    inference   y = (x - mean) * (scale * Rsqrt(variance + epsilon)) + offset
                outputs 1..4 (batch mean/variance, reserve spaces): mean, variance
    training    m, v = Mean(x), Mean(SquaredDifference(x, m)) over the other axes
                y as above with m, v; output 1 is m, output 2 is v * n / max(n - 1, 1)
                (Bessel's correction, n the count per channel), each blended as
                (1 - f) * input + f * batch when exponential_avg_factor f < 1

``y`` keeps the node's name; a consumer of another output is rewired to the node
computing it (`expand_fused_batch_norm` returns that map). ``x`` of half precision is
computed in ``U`` (float32) and cast back, as TensorFlow's kernel does.

Example
-------
>>> from flowgraph.framework.serialization import encode_attr
>>> node = {"name": "bn", "op": "FusedBatchNormV3", "device": "",
...         "input": ["x:0", "g:0", "b:0", "m:0", "v:0"],
...         "attr": {"T": {"dtype": "float32"}, "U": {"dtype": "float32"},
...                  "epsilon": 0.001, "data_format": "NHWC", "is_training": False}}
>>> nodes, outputs = expand_fused_batch_norm(node)
>>> nodes[-1]["name"], nodes[-1]["op"], outputs[1]
('bn', 'AddV2', 'm:0')
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tf_formats.rewrite_nodes import NodeMaker

__all__ = ["FUSED_BATCH_NORM_OPS", "expand_fused_batch_norm"]

FUSED_BATCH_NORM_OPS = ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")


def _attr(node: dict, key: str, default):
    raw = node.get("attr", {}).get(key)
    return default if raw is None else decode_attr(raw)


def _dtype_name(node: dict, key: str, default: str) -> str:
    raw = node.get("attr", {}).get(key)
    return raw["dtype"] if isinstance(raw, dict) and "dtype" in raw else default


def expand_fused_batch_norm(node: dict) -> tuple[list[dict], dict[int, str]]:
    """The nodes computing `node` (a TensorFlow fused batch norm node dict), the last
    one named as `node`, and, for each output index other than 0, the tensor giving it.

    Raises ValueError naming the node for a data format other than NHWC or NCHW.
    """
    name, device = node["name"], node.get("device", "")
    data = [r for r in node["input"] if not r.startswith("^")]
    control = [r for r in node["input"] if r.startswith("^")]
    if len(data) != 5:
        raise ValueError(f"node '{name}' ({node['op']}) has {len(data)} data inputs; "
                         "x, scale, offset, mean and variance are expected")
    x, scale, offset, mean_in, var_in = data
    fmt = _attr(node, "data_format", "NHWC")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"node '{name}' ({node['op']}): data_format {fmt!r} is not "
                         "supported; NHWC or NCHW is expected")
    t = _dtype_name(node, "T", "float32")
    u = _dtype_name(node, "U", "float32") if node["op"] != "FusedBatchNorm" else t
    eps = float(_attr(node, "epsilon", 1e-4))
    factor = float(_attr(node, "exponential_avg_factor", 1.0))
    training = bool(_attr(node, "is_training", True))
    mk = NodeMaker(name, device)
    out: list[dict] = []

    def op(suffix, op_type, inputs, dtype=u, attr=None):
        out.append(mk.make(suffix, op_type, inputs, dtype, attr))
        return out[-1]["name"] + ":0"

    def const(suffix, value):
        out.append(mk.const(suffix, value))
        return out[-1]["name"] + ":0"

    shape = const("channel_shape", np.array([1, 1, 1, -1] if fmt == "NHWC" else
                                            [1, -1, 1, 1], np.int32))
    if t != u:
        x = op("x_cast", "Cast", [x], u, {"SrcT": {"dtype": t}, "DstT": {"dtype": u},
                                          "Truncate": False})

    def per_channel(suffix, ref):
        return op(suffix, "Reshape", [ref, shape])

    if training:
        axes = const("axes", np.array([0, 1, 2] if fmt == "NHWC" else [0, 2, 3], np.int32))
        reduce_attr = {"keep_dims": False, "Tidx": {"dtype": "int32"}}
        mean = op("batch_mean", "Mean", [x, axes], attr=reduce_attr)
        centred = op("centred", "SquaredDifference",
                     [x, op("batch_mean_stopped", "StopGradient", [per_channel(
                         "batch_mean_c", mean)])])
        var = op("batch_variance", "Mean", [centred, axes], attr=reduce_attr)
        size_attr = {"out_type": {"dtype": "int32"}}
        count = op("count", "RealDiv", [
            op("x_size", "Cast", [op("x_count", "Size", [x], "int32", size_attr)], u,
               {"SrcT": {"dtype": "int32"}, "DstT": {"dtype": u}, "Truncate": False}),
            op("c_size", "Cast", [op("c_count", "Size", [mean], "int32", size_attr)], u,
               {"SrcT": {"dtype": "int32"}, "DstT": {"dtype": u}, "Truncate": False})])
        one = const("one", np.array(1.0, u))
        unbiased = op("unbiased_variance", "Mul", [var, op("bessel", "RealDiv", [
            count, op("count_1", "Maximum", [op("count_m1", "Sub", [count, one]), one])])])
        mean_out, var_out = mean, unbiased
        if factor != 1.0:
            f, keep = const("factor", np.array(factor, u)), const("keep", np.array(
                1.0 - factor, u))
            mean_out = op("mean_out", "AddV2", [op("mean_old", "Mul", [keep, mean_in]),
                                                op("mean_new", "Mul", [f, mean])])
            var_out = op("variance_out", "AddV2", [op("var_old", "Mul", [keep, var_in]),
                                                   op("var_new", "Mul", [f, unbiased])])
    else:
        mean, var = mean_in, var_in
        mean_out, var_out = mean_in, var_in
    inv = op("inv", "Mul", [op("rsqrt", "Rsqrt", [op("var_eps", "AddV2", [
        var, const("epsilon", np.array(eps, u))])]), scale])
    scaled = op("scaled", "Mul", [op("centered", "Sub", [x, per_channel("mean_c", mean)]),
                                  per_channel("inv_c", inv)])
    if t != u:
        y = op("y", "AddV2", [scaled, per_channel("offset_c", offset)])
        op("", "Cast", [y, *control], t, {"SrcT": {"dtype": u}, "DstT": {"dtype": t},
                                          "Truncate": False})
    else:
        op("", "AddV2", [scaled, per_channel("offset_c", offset), *control])
    out[-1]["output_shapes"] = (node.get("output_shapes") or [])[:1]
    outputs = {1: mean_out, 2: var_out, 3: mean, 4: var, 5: mean}
    return out, outputs
