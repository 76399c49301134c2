"""Inception v2 (Ioffe & Szegedy 2015, the batch-normalized Inception) as
``slim.nets.inception_v2`` defines it: a depthwise-separable 7x7 stem, then Inception
modules with two stacked 3x3s in place of the 5x5; the same scopes, variable names and
end points as slim's published checkpoints, and `depth_multiplier` / `min_depth`
thinning. The final pooling (7x7 at the default 224x224) shrinks to fit smaller inputs.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(inception_v2_arg_scope()):
...         logits, end_points = inception_v2(tf.zeros([1, 64, 64, 3]), num_classes=10)
...     print(logits.op.name, logits.shape, end_points["Mixed_5c"].shape)
InceptionV2/Logits/SpatialSqueeze (1, 10) (1, 2, 2, 1024)
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.slim.nets.inception_utils import (
    batch_norm_params,
    build_stages,
    depth_fn,
    inception_arg_scope,
    reduced_kernel_size_for_small_input,
    trunc_normal,
    unknown_endpoint,
)
from flowgraph.framework.graph import GraphKeys
from flowgraph.ops import array_ops
from flowgraph.ops import variable_scope as vs

__all__ = ["inception_v2", "inception_v2_arg_scope", "inception_v2_base"]

conv2d = layers_base.convolution2d
batch_norm = layers_base.batch_norm
max_pool2d = layers_more.max_pool2d
avg_pool2d = layers_more.avg_pool2d
separable_conv2d = layers_more.separable_convolution2d
dropout = layers_more.dropout

_MAX_S2 = ("max", [3, 3], None, {"stride": 2})
_NARROW = {"stddev": 0.09}  # the 1x1 reductions in front of the 3x3s


def _block(b0, b1, b2, pool, b3):
    """1x1 (`b0`); 1x1 -> 3x3 (`b1`); 1x1 -> 3x3 -> 3x3 (`b2`); `pool` 3x3 -> 1x1
    (`b3`)."""
    return [[(b0, [1, 1], "Conv2d_0a_1x1")],
            [(b1[0], [1, 1], "Conv2d_0a_1x1", _NARROW), (b1[1], [3, 3], "Conv2d_0b_3x3")],
            [(b2[0], [1, 1], "Conv2d_0a_1x1", _NARROW), (b2[1], [3, 3], "Conv2d_0b_3x3"),
             (b2[1], [3, 3], "Conv2d_0c_3x3")],
            [(pool, [3, 3], "AvgPool_0a_3x3" if pool == "avg" else "MaxPool_0a_3x3"),
             (b3, [1, 1], "Conv2d_0b_1x1", {"stddev": 0.1})]]


def _reduction(b0, b1):
    """Stride-2 grid reduction: 1x1 -> 3x3/2 (`b0`); 1x1 -> 3x3 -> 3x3/2 (`b1`);
    3x3/2 max pool."""
    return [[(b0[0], [1, 1], "Conv2d_0a_1x1", _NARROW),
             (b0[1], [3, 3], "Conv2d_1a_3x3", {"stride": 2})],
            [(b1[0], [1, 1], "Conv2d_0a_1x1", _NARROW), (b1[1], [3, 3], "Conv2d_0b_3x3"),
             (b1[1], [3, 3], "Conv2d_1a_3x3", {"stride": 2})],
            [("max", [3, 3], "MaxPool_1a_3x3", {"stride": 2})]]


def _stages(depth):
    def stem(net, scope):
        # a 7x7 depthwise convolution with up to 8 filters per input channel
        return separable_conv2d(net, depth(64), [7, 7],
                                depth_multiplier=min(int(depth(64) / 3), 8), stride=2,
                                weights_initializer=trunc_normal(1.0), scope=scope)

    return [
        ("Conv2d_1a_7x7", stem),
        ("MaxPool_2a_3x3", _MAX_S2),
        ("Conv2d_2b_1x1", (64, [1, 1], None, {"stddev": 0.1})),
        ("Conv2d_2c_3x3", (192, [3, 3], None)),
        ("MaxPool_3a_3x3", _MAX_S2),
        ("Mixed_3b", _block(64, (64, 64), (64, 96), "avg", 32)),
        ("Mixed_3c", _block(64, (64, 96), (64, 96), "avg", 64)),
        ("Mixed_4a", _reduction((128, 160), (64, 96))),
        ("Mixed_4b", _block(224, (64, 96), (96, 128), "avg", 128)),
        ("Mixed_4c", _block(192, (96, 128), (96, 128), "avg", 128)),
        ("Mixed_4d", _block(160, (128, 160), (128, 160), "avg", 96)),
        ("Mixed_4e", _block(96, (128, 192), (160, 192), "avg", 96)),
        ("Mixed_5a", _reduction((128, 192), (192, 256))),
        ("Mixed_5b", _block(352, (192, 320), (160, 224), "avg", 128)),
        ("Mixed_5c", _block(352, (192, 320), (192, 224), "max", 128)),
    ]


def inception_v2_base(inputs, final_endpoint="Mixed_5c", min_depth=16,
                      depth_multiplier=1.0, scope=None):
    """The Inception v2 body from `inputs` up to `final_endpoint` (one of
    ``Conv2d_1a_7x7``, ``MaxPool_2a_3x3``, ... ``Mixed_5c``), every layer ``SAME``
    padded; each convolution has ``max(int(channels * depth_multiplier), min_depth)``
    outputs. Returns ``(net, end_points)``; raises ValueError for an unknown
    `final_endpoint` (after building the body) or ``depth_multiplier <= 0``."""
    depth = depth_fn(depth_multiplier, min_depth)
    with vs.variable_scope(scope, "InceptionV2", [inputs]):
        with arg_scope([conv2d, max_pool2d, avg_pool2d, separable_conv2d], stride=1,
                       padding="SAME"):
            net, end_points, done = build_stages(inputs, _stages(depth), depth,
                                                 final_endpoint)
        if done:
            return net, end_points
        raise unknown_endpoint(final_endpoint)


def inception_v2(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.8,
                 min_depth=16, depth_multiplier=1.0, prediction_fn=layers_more.softmax,
                 spatial_squeeze=True, reuse=None, scope="InceptionV2"):
    """Inception v2 for classification (224x224 inputs by default). Returns ``(logits,
    end_points)``: the body's end points plus ``Logits`` and ``Predictions``."""
    depth_fn(depth_multiplier, min_depth)  # slim checks the multiplier first
    with vs.variable_scope(scope, "InceptionV2", [inputs, num_classes],
                           reuse=reuse) as sc:
        with arg_scope([batch_norm, dropout], is_training=is_training):
            net, end_points = inception_v2_base(inputs, scope=sc, min_depth=min_depth,
                                                depth_multiplier=depth_multiplier)
            with vs.variable_scope("Logits"):
                kernel = reduced_kernel_size_for_small_input(net, [7, 7])
                net = avg_pool2d(net, kernel, padding="VALID",
                                 scope="AvgPool_1a_{}x{}".format(*kernel))
                net = dropout(net, keep_prob=dropout_keep_prob, scope="Dropout_1b")
                logits = conv2d(net, num_classes, [1, 1], activation_fn=None,
                                normalizer_fn=None, scope="Conv2d_1c_1x1")
                if spatial_squeeze:
                    logits = array_ops.squeeze(logits, [1, 2], name="SpatialSqueeze")
            end_points["Logits"] = logits
            end_points["Predictions"] = prediction_fn(logits, scope="Predictions")
    return logits, end_points


inception_v2.default_image_size = 224


def inception_v2_arg_scope(weight_decay=0.00004, batch_norm_var_collection="moving_vars"):
    """Batch-normalized (decay 0.9997, epsilon 0.001) He-initialized ReLU convolutions
    with L2 `weight_decay`; the moving statistics also go to
    `batch_norm_var_collection`."""
    params = batch_norm_params(0.9997, 0.001, GraphKeys.UPDATE_OPS,
                               batch_norm_var_collection)
    return inception_arg_scope(weight_decay, batch_norm, params)
