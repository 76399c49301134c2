"""Inception v3 (Szegedy et al. 2015, "Rethinking the Inception Architecture") as
``slim.nets.inception_v3`` defines it: the same scopes (``InceptionV3/Mixed_6b/
Branch_1/Conv2d_0b_1x7``), variable names and end points as slim's published
checkpoints, with batch-normalized convolutions under `inception_v3_arg_scope`, the
auxiliary head on ``Mixed_6e`` and `depth_multiplier` / `min_depth` thinning.

The final pooling (8x8 at the default 299x299) and the auxiliary head's 5x5
convolution shrink to fit smaller inputs (`_reduced_kernel_size_for_small_input`);
the auxiliary head needs ``Mixed_6e`` to be at least 5x5 (inputs of 107x107 or more).

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(inception_v3_arg_scope()):
...         logits, end_points = inception_v3(tf.zeros([1, 139, 139, 3]), num_classes=10)
...     print(logits.op.name, logits.shape, end_points["Mixed_7c"].shape)
InceptionV3/Logits/SpatialSqueeze (1, 10) (1, 3, 3, 2048)
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

__all__ = ["inception_v3", "inception_v3_arg_scope", "inception_v3_base"]

conv2d = layers_base.convolution2d
batch_norm = layers_base.batch_norm
max_pool2d = layers_more.max_pool2d
avg_pool2d = layers_more.avg_pool2d
dropout = layers_more.dropout

_S2_VALID = {"stride": 2, "padding": "VALID"}
_POOL = ("avg", [3, 3], "AvgPool_0a_3x3")

# 299x299 -> 35x35x192, unpadded convolutions
_STEM = [
    ("Conv2d_1a_3x3", (32, [3, 3], None, {"stride": 2})),
    ("Conv2d_2a_3x3", (32, [3, 3], None)),
    ("Conv2d_2b_3x3", (64, [3, 3], None, {"padding": "SAME"})),
    ("MaxPool_3a_3x3", ("max", [3, 3], None, {"stride": 2})),
    ("Conv2d_3b_1x1", (80, [1, 1], None)),
    ("Conv2d_4a_3x3", (192, [3, 3], None)),
    ("MaxPool_5a_3x3", ("max", [3, 3], None, {"stride": 2})),
]


def _block_35(names, pool_channels):
    """Mixed_5b/5c/5d (35x35): 1x1; 1x1 -> 5x5; 1x1 -> 3x3 -> 3x3; pool -> 1x1."""
    return [[(64, [1, 1], "Conv2d_0a_1x1")],
            [(48, [1, 1], names[0]), (64, [5, 5], names[1])],
            [(64, [1, 1], "Conv2d_0a_1x1"), (96, [3, 3], "Conv2d_0b_3x3"),
             (96, [3, 3], "Conv2d_0c_3x3")],
            [_POOL, (pool_channels, [1, 1], "Conv2d_0b_1x1")]]


def _block_17(c):
    """Mixed_6b..6e (17x17): factorized 7x7 convolutions with `c` inner channels."""
    return [[(192, [1, 1], "Conv2d_0a_1x1")],
            [(c, [1, 1], "Conv2d_0a_1x1"), (c, [1, 7], "Conv2d_0b_1x7"),
             (192, [7, 1], "Conv2d_0c_7x1")],
            [(c, [1, 1], "Conv2d_0a_1x1"), (c, [7, 1], "Conv2d_0b_7x1"),
             (c, [1, 7], "Conv2d_0c_1x7"), (c, [7, 1], "Conv2d_0d_7x1"),
             (192, [1, 7], "Conv2d_0e_1x7")],
            [_POOL, (192, [1, 1], "Conv2d_0b_1x1")]]


def _block_8(second_3x1):
    """Mixed_7b/7c (8x8): the 3x3s split into parallel 1x3 and 3x1 convolutions."""
    return [[(320, [1, 1], "Conv2d_0a_1x1")],
            [(384, [1, 1], "Conv2d_0a_1x1"),
             ("split", [(384, [1, 3], "Conv2d_0b_1x3"), (384, [3, 1], second_3x1)])],
            [(448, [1, 1], "Conv2d_0a_1x1"), (384, [3, 3], "Conv2d_0b_3x3"),
             ("split", [(384, [1, 3], "Conv2d_0c_1x3"), (384, [3, 1], "Conv2d_0d_3x1")])],
            [_POOL, (192, [1, 1], "Conv2d_0b_1x1")]]


# 35x35 -> 8x8x2048, padded convolutions
_MIXED = [
    ("Mixed_5b", _block_35(("Conv2d_0a_1x1", "Conv2d_0b_5x5"), 32)),
    ("Mixed_5c", _block_35(("Conv2d_0b_1x1", "Conv_1_0c_5x5"), 64)),
    ("Mixed_5d", _block_35(("Conv2d_0a_1x1", "Conv2d_0b_5x5"), 64)),
    ("Mixed_6a", [[(384, [3, 3], "Conv2d_1a_1x1", _S2_VALID)],
                  [(64, [1, 1], "Conv2d_0a_1x1"), (96, [3, 3], "Conv2d_0b_3x3"),
                   (96, [3, 3], "Conv2d_1a_1x1", _S2_VALID)],
                  [("max", [3, 3], "MaxPool_1a_3x3", _S2_VALID)]]),
    ("Mixed_6b", _block_17(128)),
    ("Mixed_6c", _block_17(160)),
    ("Mixed_6d", _block_17(160)),
    ("Mixed_6e", _block_17(192)),
    ("Mixed_7a", [[(192, [1, 1], "Conv2d_0a_1x1"),
                   (320, [3, 3], "Conv2d_1a_3x3", _S2_VALID)],
                  [(192, [1, 1], "Conv2d_0a_1x1"), (192, [1, 7], "Conv2d_0b_1x7"),
                   (192, [7, 1], "Conv2d_0c_7x1"),
                   (192, [3, 3], "Conv2d_1a_3x3", _S2_VALID)],
                  [("max", [3, 3], "MaxPool_1a_3x3", _S2_VALID)]]),
    ("Mixed_7b", _block_8("Conv2d_0b_3x1")),
    ("Mixed_7c", _block_8("Conv2d_0c_3x1")),
]


def inception_v3_base(inputs, final_endpoint="Mixed_7c", min_depth=16,
                      depth_multiplier=1.0, scope=None):
    """The Inception v3 body from `inputs` up to `final_endpoint` (one of
    ``Conv2d_1a_3x3`` ... ``MaxPool_5a_3x3``, ``Mixed_5b`` ... ``Mixed_7c``); each
    convolution has ``max(int(channels * depth_multiplier), min_depth)`` outputs.
    Returns ``(net, end_points)``; raises ValueError for an unknown `final_endpoint`
    (after building the whole body, as slim does) or ``depth_multiplier <= 0``."""
    depth = depth_fn(depth_multiplier, min_depth)
    with vs.variable_scope(scope, "InceptionV3", [inputs]):
        with arg_scope([conv2d, max_pool2d, avg_pool2d], stride=1, padding="VALID"):
            net, end_points, done = build_stages(inputs, _STEM, depth, final_endpoint)
        if done:
            return net, end_points
        with arg_scope([conv2d, max_pool2d, avg_pool2d], stride=1, padding="SAME"):
            net, end_points, done = build_stages(net, _MIXED, depth, final_endpoint,
                                                 end_points)
        if done:
            return net, end_points
        raise unknown_endpoint(final_endpoint)


def _aux_logits(net, num_classes, depth, spatial_squeeze):
    with arg_scope([conv2d, max_pool2d, avg_pool2d], stride=1, padding="SAME"):
        with vs.variable_scope("AuxLogits"):
            net = avg_pool2d(net, [5, 5], stride=3, padding="VALID", scope="AvgPool_1a_5x5")
            net = conv2d(net, depth(128), [1, 1], scope="Conv2d_1b_1x1")
            kernel = _reduced_kernel_size_for_small_input(net, [5, 5])
            net = conv2d(net, depth(768), kernel, weights_initializer=trunc_normal(0.01),
                         padding="VALID", scope="Conv2d_2a_{}x{}".format(*kernel))
            net = conv2d(net, num_classes, [1, 1], activation_fn=None, normalizer_fn=None,
                         weights_initializer=trunc_normal(0.001), scope="Conv2d_2b_1x1")
            if spatial_squeeze:
                net = array_ops.squeeze(net, [1, 2], name="SpatialSqueeze")
            return net


def inception_v3(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.8,
                 min_depth=16, depth_multiplier=1.0, prediction_fn=layers_more.softmax,
                 spatial_squeeze=True, reuse=None, create_aux_logits=True,
                 scope="InceptionV3"):
    """Inception v3 for classification (299x299 inputs by default). Returns ``(logits,
    end_points)``: the body's end points plus ``AuxLogits`` (with
    `create_aux_logits` and `num_classes`), ``PreLogits``, ``Logits`` and
    ``Predictions`` (`prediction_fn` of the logits)."""
    depth = depth_fn(depth_multiplier, min_depth)
    with vs.variable_scope(scope, "InceptionV3", [inputs, num_classes],
                           reuse=reuse) as sc:
        with arg_scope([batch_norm, dropout], is_training=is_training):
            net, end_points = inception_v3_base(inputs, scope=sc, min_depth=min_depth,
                                                depth_multiplier=depth_multiplier)
            if create_aux_logits and num_classes:
                end_points["AuxLogits"] = _aux_logits(end_points["Mixed_6e"], num_classes,
                                                      depth, spatial_squeeze)
            with vs.variable_scope("Logits"):
                kernel = _reduced_kernel_size_for_small_input(net, [8, 8])
                net = avg_pool2d(net, kernel, padding="VALID",
                                 scope="AvgPool_1a_{}x{}".format(*kernel))
                net = dropout(net, keep_prob=dropout_keep_prob, scope="Dropout_1b")
                end_points["PreLogits"] = net
                logits = conv2d(net, num_classes, [1, 1], activation_fn=None,
                                normalizer_fn=None, scope="Conv2d_1c_1x1")
                if spatial_squeeze:
                    logits = array_ops.squeeze(logits, [1, 2], name="SpatialSqueeze")
            end_points["Logits"] = logits
            end_points["Predictions"] = prediction_fn(logits, scope="Predictions")
    return logits, end_points


inception_v3.default_image_size = 299


def _reduced_kernel_size_for_small_input(input_tensor, kernel_size):
    """`kernel_size` clipped to `input_tensor`'s height and width (kept as is when
    either is unknown)."""
    return reduced_kernel_size_for_small_input(input_tensor, kernel_size)


def inception_v3_arg_scope(weight_decay=0.00004, batch_norm_var_collection="moving_vars",
                           batch_norm_decay=0.9997, batch_norm_epsilon=0.001,
                           updates_collections=GraphKeys.UPDATE_OPS,
                           use_fused_batchnorm=True):
    """Batch-normalized (decay 0.9997, epsilon 0.001, fused) He-initialized ReLU
    convolutions with L2 `weight_decay`; the moving statistics also go to the
    `batch_norm_var_collection` collection."""
    params = batch_norm_params(batch_norm_decay, batch_norm_epsilon, updates_collections,
                               batch_norm_var_collection, fused=use_fused_batchnorm)
    return inception_arg_scope(weight_decay, batch_norm, params)
