"""The table-driven builder behind flowgraph's Inception v1, v2 and v3
(`inception_v1`, `inception_v2`, `inception_v3`): each network's body is a list of
stages, ``(end_point, spec)``, built in order until the requested final end point.

A *layer* spec is one of

- ``(channels, kernel, scope)`` or ``(channels, kernel, scope, kwargs)``: a
  ``slim.conv2d`` with ``depth(channels)`` outputs; ``kwargs`` go to the layer, except
  ``stddev``, which becomes a truncated-normal ``weights_initializer``;
- ``("avg" | "max", kernel, scope)`` or with ``kwargs``: a pooling layer;
- ``("split", [layer, layer])``: both layers on the same input, concatenated on the
  channel axis (Inception v3's 1x3 / 3x1 pairs);
- a callable ``fn(net, scope)``, for the one-off layers.

A stage's spec is a layer (its scope is then the end point's name) or a list of
*branches*, each a list of layers: a mixed block, whose branches run in the scopes
``<end_point>/Branch_<i>`` and are concatenated on the channel axis. Layers are created
in the order the specs list them, so the variables (and the random streams that
initialize them) come out in slim's order.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     stages = [("Conv", (8, [3, 3], None)),
...               ("Mixed", [[(4, [1, 1], "Conv2d_0a_1x1")],
...                          [("max", [3, 3], "MaxPool_0a_3x3", {"stride": 1,
...                                                              "padding": "SAME"})]])]
...     net, end_points, done = build_stages(tf.zeros([1, 9, 9, 3]), stages,
...                                          lambda d: d, "Mixed")
...     print(net.shape, net.op.name, list(end_points), done)
(1, 9, 9, 12) Mixed/concat ['Conv', 'Mixed'] True
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.ops import array_ops, init_ops, nn_ops, regularizers
from flowgraph.ops import variable_scope as vs

__all__ = ["batch_norm_params", "build_stages", "depth_fn", "inception_arg_scope",
           "reduced_kernel_size_for_small_input", "trunc_normal", "unknown_endpoint"]

conv2d = layers_base.convolution2d
_POOLS = {"avg": layers_more.avg_pool2d, "max": layers_more.max_pool2d}


def trunc_normal(stddev):
    """A fresh zero-mean truncated-normal initializer (slim's ``trunc_normal``)."""
    return init_ops.truncated_normal_initializer(0.0, stddev)


def depth_fn(depth_multiplier, min_depth):
    """``depth(d) = max(int(d * depth_multiplier), min_depth)``; raises like slim for a
    non-positive multiplier."""
    if depth_multiplier <= 0:
        raise ValueError("depth_multiplier is not greater than zero.")
    return lambda d: max(int(d * depth_multiplier), min_depth)


def reduced_kernel_size_for_small_input(input_tensor, kernel_size):
    """`kernel_size` clipped to the spatial size of `input_tensor` (NHWC), so a final
    pooling fits inputs smaller than the network's default; unchanged when the height
    or width is unknown."""
    shape = input_tensor.shape.as_list()
    if shape[1] is None or shape[2] is None:
        return kernel_size
    return [min(shape[1], kernel_size[0]), min(shape[2], kernel_size[1])]


def _layer(net, spec, depth, scope=None):
    if callable(spec):
        return spec(net, scope)
    kind = spec[0]
    if kind == "split":
        return array_ops.concat([_layer(net, s, depth) for s in spec[1]], 3)
    if kind in _POOLS:
        kernel, name = spec[1], spec[2]
        kwargs = spec[3] if len(spec) > 3 else {}
        return _POOLS[kind](net, kernel, scope=scope or name, **kwargs)
    channels, kernel, name = spec[0], spec[1], spec[2]
    kwargs = dict(spec[3]) if len(spec) > 3 else {}
    if "stddev" in kwargs:
        kwargs["weights_initializer"] = trunc_normal(kwargs.pop("stddev"))
    return conv2d(net, depth(channels), kernel, scope=scope or name, **kwargs)


def _mixed(net, end_point, branches, depth):
    with vs.variable_scope(end_point):
        outputs = []
        for i, branch in enumerate(branches):
            with vs.variable_scope(f"Branch_{i}"):
                out = net
                for spec in branch:
                    out = _layer(out, spec, depth)
            outputs.append(out)
        return array_ops.concat(outputs, 3)


def build_stages(net, stages, depth, final_endpoint, end_points=None):
    """Builds `stages` on `net` in order, recording each stage's output in
    `end_points` (a new dict when None), and stops after `final_endpoint`.

    Returns ``(net, end_points, reached)``; ``reached`` is False when `final_endpoint`
    is none of these stages (the caller builds its next stages, or raises)."""
    end_points = {} if end_points is None else end_points
    for end_point, spec in stages:
        if isinstance(spec, list):
            net = _mixed(net, end_point, spec, depth)
        else:
            net = _layer(net, spec, depth, scope=end_point)
        end_points[end_point] = net
        if end_point == final_endpoint:
            return net, end_points, True
    return net, end_points, False


def unknown_endpoint(final_endpoint):
    """slim's error for a `final_endpoint` no stage has."""
    return ValueError(f"Unknown final endpoint {final_endpoint}")


def batch_norm_params(decay, epsilon, updates_collections, var_collection, fused=None):
    """The batch-norm settings slim's Inception arg scopes share: moving statistics
    also in the `var_collection` collection."""
    params = {"decay": decay, "epsilon": epsilon, "updates_collections": updates_collections,
              "variables_collections": {"beta": None, "gamma": None,
                                        "moving_mean": [var_collection],
                                        "moving_variance": [var_collection]}}
    if fused is not None:
        params["fused"] = fused
    return params


def inception_arg_scope(weight_decay, normalizer_fn, normalizer_params):
    """L2 `weight_decay` on convolution and dense weights; He-initialized ReLU
    convolutions normalized by `normalizer_fn`."""
    with arg_scope([conv2d, layers_base.fully_connected],
                   weights_regularizer=regularizers.l2_regularizer(weight_decay)):
        with arg_scope([conv2d],
                       weights_initializer=init_ops.contrib_variance_scaling_initializer(),
                       activation_fn=nn_ops.relu, normalizer_fn=normalizer_fn,
                       normalizer_params=normalizer_params) as sc:
            return sc
