"""ResNet v2 (He et al. 2016, pre-activation) as ``slim.nets.resnet_v2`` defines it:
batch normalization and ReLU before each unit's convolutions (``preact``), a final
``postnorm``, the same scopes, variable names and end points as slim's checkpoints.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(resnet_v2_arg_scope()):
...         net, end_points = resnet_v2_50(tf.zeros([1, 64, 64, 3]), num_classes=10,
...                                        is_training=False)
...     print(net.shape, "resnet_v2_50/postnorm/beta" in
...           [v.op.name for v in tf.global_variables()])
(1, 1, 1, 10) True
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import add_arg_scope, arg_scope
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import (
    collect_named_outputs,
    last_dimension,
)
from flowgraph.contrib.slim.nets import resnet_utils
from flowgraph.contrib.slim.nets.resnet_utils import batch_norm, conv2d, conv2d_same
from flowgraph.contrib.slim.nets.resnet_v1 import _root_stride, head
from flowgraph.ops import nn_ops
from flowgraph.ops import variable_scope as vs

__all__ = [
    "bottleneck",
    "resnet_arg_scope",
    "resnet_v2",
    "resnet_v2_50",
    "resnet_v2_101",
    "resnet_v2_152",
    "resnet_v2_200",
    "resnet_v2_arg_scope",
    "resnet_v2_block",
]

resnet_arg_scope = resnet_v2_arg_scope = resnet_utils.resnet_arg_scope


@add_arg_scope
def bottleneck(inputs, depth, depth_bottleneck, stride, rate=1, outputs_collections=None,
               scope=None):
    """Pre-activation bottleneck: BN+ReLU (``preact``), then 1x1 -> 3x3 (`stride`) ->
    1x1 (no BN), added to the shortcut."""
    with vs.variable_scope(scope, "bottleneck_v2", [inputs]) as sc:
        depth_in = last_dimension(inputs.shape, min_rank=4)
        preact = batch_norm(inputs, activation_fn=nn_ops.relu, scope="preact")
        if depth == depth_in:
            shortcut = resnet_utils.subsample(inputs, stride, "shortcut")
        else:
            shortcut = conv2d(preact, depth, [1, 1], stride=stride, normalizer_fn=None,
                              activation_fn=None, scope="shortcut")
        residual = conv2d(preact, depth_bottleneck, [1, 1], stride=1, scope="conv1")
        residual = conv2d_same(residual, depth_bottleneck, 3, stride, rate=rate,
                               scope="conv2")
        residual = conv2d(residual, depth, [1, 1], stride=1, normalizer_fn=None,
                          activation_fn=None, scope="conv3")
        return collect_named_outputs(outputs_collections, sc.name, shortcut + residual)


def resnet_v2(inputs, blocks, num_classes=None, is_training=True, global_pool=True,
              output_stride=None, include_root_block=True, reuse=None, scope=None):
    """A pre-activation ResNet of `blocks`; returns ``(net, end_points)``."""
    with vs.variable_scope(scope, "resnet_v2", [inputs], reuse=reuse) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, bottleneck, resnet_utils.stack_blocks_dense],
                       outputs_collections=collection):
            with arg_scope([batch_norm], is_training=is_training):
                net = inputs
                if include_root_block:
                    output_stride = _root_stride(output_stride)
                    # the first unit normalizes and activates: conv1 does neither
                    with arg_scope([conv2d], activation_fn=None, normalizer_fn=None):
                        net = conv2d_same(net, 64, 7, stride=2, scope="conv1")
                    net = layers_more.max_pool2d(net, [3, 3], stride=2, scope="pool1")
                net = resnet_utils.stack_blocks_dense(net, blocks, output_stride)
                net = batch_norm(net, activation_fn=nn_ops.relu, scope="postnorm")
                return head(net, collection, num_classes, global_pool)


def resnet_v2_block(scope, base_depth, num_units, stride):
    """`num_units` pre-activation bottlenecks of `base_depth`, the last one strided."""
    return resnet_utils.bottleneck_block(scope, bottleneck, base_depth, num_units, stride)


_sized = resnet_utils.sized_networks(resnet_v2, resnet_v2_block, "v2")
resnet_v2_50, resnet_v2_101 = _sized[50], _sized[101]
resnet_v2_152, resnet_v2_200 = _sized[152], _sized[200]
resnet_v2.default_image_size = 224
