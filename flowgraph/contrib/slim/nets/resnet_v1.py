"""ResNet v1 (He et al. 2015) as ``slim.nets.resnet_v1`` defines it: bottleneck units
with the stride on the 3x3 convolution, the same scopes (``resnet_v1_50/block1/unit_1/
bottleneck_v1/conv1``), variable names and end points as slim's published checkpoints.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(resnet_utils.resnet_arg_scope()):
...         net, end_points = resnet_v1_50(tf.zeros([1, 64, 64, 3]), num_classes=10,
...                                        is_training=False)
...     print(net.shape, end_points["predictions"].shape)
(1, 1, 1, 10) (1, 1, 1, 10)
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import add_arg_scope, arg_scope
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import (
    collect_named_outputs,
    convert_collection_to_dict,
    last_dimension,
)
from flowgraph.contrib.slim.nets import resnet_utils
from flowgraph.contrib.slim.nets.resnet_utils import batch_norm, conv2d, conv2d_same
from flowgraph.ops import math_reduce, nn_ops
from flowgraph.ops import variable_scope as vs

__all__ = [
    "bottleneck",
    "resnet_arg_scope",
    "resnet_v1",
    "resnet_v1_50",
    "resnet_v1_101",
    "resnet_v1_152",
    "resnet_v1_200",
    "resnet_v1_block",
]

resnet_arg_scope = resnet_utils.resnet_arg_scope


@add_arg_scope
def bottleneck(inputs, depth, depth_bottleneck, stride, rate=1, outputs_collections=None,
               scope=None):
    """1x1 (`depth_bottleneck`) -> 3x3 (`stride`) -> 1x1 (`depth`) plus the shortcut
    (the input subsampled, or a 1x1 projection when the depth changes), then ReLU."""
    with vs.variable_scope(scope, "bottleneck_v1", [inputs]) as sc:
        depth_in = last_dimension(inputs.shape, min_rank=4)
        if depth == depth_in:
            shortcut = resnet_utils.subsample(inputs, stride, "shortcut")
        else:
            shortcut = conv2d(inputs, depth, [1, 1], stride=stride, activation_fn=None,
                              scope="shortcut")
        residual = conv2d(inputs, depth_bottleneck, [1, 1], stride=1, scope="conv1")
        residual = conv2d_same(residual, depth_bottleneck, 3, stride, rate=rate,
                               scope="conv2")
        residual = conv2d(residual, depth, [1, 1], stride=1, activation_fn=None,
                          scope="conv3")
        output = nn_ops.relu(shortcut + residual)
        return collect_named_outputs(outputs_collections, sc.name, output)


def resnet_v1(inputs, blocks, num_classes=None, is_training=True, global_pool=True,
              output_stride=None, include_root_block=True, reuse=None, scope=None):
    """A ResNet v1 of `blocks` (see `resnet_v1_block`); returns ``(net, end_points)``:
    with `num_classes`, ``net`` is the ``[batch, 1, 1, num_classes]`` logits and
    ``end_points['predictions']`` their softmax."""
    with vs.variable_scope(scope, "resnet_v1", [inputs], reuse=reuse) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, bottleneck, resnet_utils.stack_blocks_dense],
                       outputs_collections=collection):
            with arg_scope([batch_norm], is_training=is_training):
                net = inputs
                if include_root_block:
                    output_stride = _root_stride(output_stride)
                    net = conv2d_same(net, 64, 7, stride=2, scope="conv1")
                    net = layers_more.max_pool2d(net, [3, 3], stride=2, scope="pool1")
                net = resnet_utils.stack_blocks_dense(net, blocks, output_stride)
                return head(net, collection, num_classes, global_pool)


def _root_stride(output_stride):
    """The stride the blocks must reach after the root's 4x reduction."""
    if output_stride is None:
        return None
    if output_stride % 4 != 0:
        raise ValueError("The output_stride needs to be a multiple of 4.")
    return output_stride / 4


def head(net, collection, num_classes, global_pool):
    """Global average pooling (``pool5``), the 1x1 ``logits`` convolution and the
    ``predictions`` softmax; ``(net, end_points)``."""
    if global_pool:
        net = math_reduce.reduce_mean(net, [1, 2], name="pool5", keepdims=True)
    if num_classes is not None:
        net = conv2d(net, num_classes, [1, 1], activation_fn=None, normalizer_fn=None,
                     scope="logits")
    end_points = convert_collection_to_dict(collection)
    if num_classes is not None:
        end_points["predictions"] = layers_more.softmax(net, scope="predictions")
    return net, end_points


def resnet_v1_block(scope, base_depth, num_units, stride):
    """`num_units` bottlenecks of `base_depth` (output 4x), the last one strided."""
    return resnet_utils.bottleneck_block(scope, bottleneck, base_depth, num_units, stride)


_sized = resnet_utils.sized_networks(resnet_v1, resnet_v1_block, "v1")
resnet_v1_50, resnet_v1_101 = _sized[50], _sized[101]
resnet_v1_152, resnet_v1_200 = _sized[152], _sized[200]
resnet_v1.default_image_size = 224
