"""VGG A, 16 and 19 (Simonyan & Zisserman) as ``slim.nets.vgg`` defines them, with the
same scopes, variable names and end points, so the published slim checkpoints
(``vgg_16.ckpt``) restore into them. The fully connected layers are convolutions
(``fc6`` 7x7 ``VALID``, ``fc7`` and ``fc8`` 1x1); ``fc8`` is squeezed to ``[batch,
num_classes]`` with `spatial_squeeze`.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(vgg_arg_scope()):
...         logits, end_points = vgg_16(tf.zeros([1, 224, 224, 3]), num_classes=10)
...     print(logits.shape, list(end_points)[:2], len(tf.global_variables()))
(1, 10) ['vgg_16/conv1/conv1_1', 'vgg_16/conv1/conv1_2'] 32
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import convert_collection_to_dict
from flowgraph.ops import array_shape_ops, init_ops, math_reduce, nn_ops, regularizers
from flowgraph.ops import variable_scope as vs

__all__ = ["vgg_16", "vgg_19", "vgg_a", "vgg_arg_scope", "vgg_d", "vgg_e"]

conv2d = layers_base.convolution2d
max_pool2d = layers_more.max_pool2d
dropout = layers_more.dropout


def vgg_arg_scope(weight_decay=0.0005):
    """ReLU convolutions and dense layers with L2 `weight_decay`, zero biases, ``SAME``
    convolutions."""
    with arg_scope([conv2d, layers_base.fully_connected], activation_fn=nn_ops.relu,
                   weights_regularizer=regularizers.l2_regularizer(weight_decay),
                   biases_initializer=init_ops.zeros_initializer()):
        with arg_scope([conv2d], padding="SAME") as scope:
            return scope


def _vgg(inputs, blocks, num_classes, is_training, dropout_keep_prob, spatial_squeeze,
         scope, default_name, fc_conv_padding, global_pool):
    """`blocks`: per block, (number of 3x3 convolutions, their channels)."""
    with vs.variable_scope(scope, default_name, [inputs]) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, layers_base.fully_connected, max_pool2d],
                       outputs_collections=collection):
            net = inputs
            for i, (repeats, channels) in enumerate(blocks, start=1):
                net = layers_more.repeat(net, repeats, conv2d, channels, [3, 3],
                                         scope=f"conv{i}")
                net = max_pool2d(net, [2, 2], scope=f"pool{i}")
            net = conv2d(net, 4096, [7, 7], padding=fc_conv_padding, scope="fc6")
            net = dropout(net, dropout_keep_prob, is_training=is_training, scope="dropout6")
            net = conv2d(net, 4096, [1, 1], scope="fc7")
            end_points = convert_collection_to_dict(collection)
            if global_pool:
                net = math_reduce.reduce_mean(net, [1, 2], keepdims=True, name="global_pool")
                end_points["global_pool"] = net
            if num_classes:
                net = dropout(net, dropout_keep_prob, is_training=is_training,
                              scope="dropout7")
                net = conv2d(net, num_classes, [1, 1], activation_fn=None,
                             normalizer_fn=None, scope="fc8")
                if spatial_squeeze:
                    net = array_shape_ops.squeeze(net, [1, 2], name="fc8/squeezed")
                end_points[sc.name + "/fc8"] = net
            return net, end_points


def vgg_a(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
          spatial_squeeze=True, scope="vgg_a", fc_conv_padding="VALID", global_pool=False):
    """VGG "A" (11 layers): blocks of 1, 1, 2, 2, 2 convolutions. Returns ``(logits,
    end_points)``."""
    return _vgg(inputs, [(1, 64), (1, 128), (2, 256), (2, 512), (2, 512)], num_classes,
                is_training, dropout_keep_prob, spatial_squeeze, scope, "vgg_a",
                fc_conv_padding, global_pool)


def vgg_16(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
           spatial_squeeze=True, scope="vgg_16", fc_conv_padding="VALID", global_pool=False):
    """VGG 16 ("D"): blocks of 2, 2, 3, 3, 3 convolutions."""
    return _vgg(inputs, [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)], num_classes,
                is_training, dropout_keep_prob, spatial_squeeze, scope, "vgg_16",
                fc_conv_padding, global_pool)


def vgg_19(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
           spatial_squeeze=True, scope="vgg_19", fc_conv_padding="VALID", global_pool=False):
    """VGG 19 ("E"): blocks of 2, 2, 4, 4, 4 convolutions."""
    return _vgg(inputs, [(2, 64), (2, 128), (4, 256), (4, 512), (4, 512)], num_classes,
                is_training, dropout_keep_prob, spatial_squeeze, scope, "vgg_19",
                fc_conv_padding, global_pool)


vgg_a.default_image_size = vgg_16.default_image_size = vgg_19.default_image_size = 224
vgg_d, vgg_e = vgg_16, vgg_19
