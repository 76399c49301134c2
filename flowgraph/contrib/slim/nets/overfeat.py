"""OverFeat (Sermanet et al. 2014, the "accurate" classifier without its
localization head) as ``slim.nets.overfeat`` defines it: same scopes, variable names
and end points; the dense layers are convolutions (``fc6`` 6x6 ``VALID`` on the 6x6
``pool5`` of a 231x231 input, its smallest) with truncated-normal weights and 0.1
biases. Larger inputs give a spatial map of logits with ``spatial_squeeze=False``.
Unlike the other networks, slim gives `overfeat` no ``default_image_size``.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(overfeat_arg_scope()):
...         logits, end_points = overfeat(tf.zeros([1, 231, 231, 3]), num_classes=10)
...     print(logits.op.name, logits.shape, end_points["overfeat/pool5"].shape)
overfeat/fc8/squeezed (1, 10) (1, 6, 6, 1024)
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import convert_collection_to_dict
from flowgraph.contrib.slim.nets.inception_utils import trunc_normal
from flowgraph.ops import array_ops, init_ops, nn_ops, regularizers
from flowgraph.ops import variable_scope as vs

__all__ = ["overfeat", "overfeat_arg_scope"]

conv2d = layers_base.convolution2d
max_pool2d = layers_more.max_pool2d
dropout = layers_more.dropout


def overfeat_arg_scope(weight_decay=0.0005):
    """ReLU layers with L2 `weight_decay` and zero biases; ``SAME`` convolutions,
    ``VALID`` max pooling."""
    with arg_scope([conv2d, layers_base.fully_connected], activation_fn=nn_ops.relu,
                   weights_regularizer=regularizers.l2_regularizer(weight_decay),
                   biases_initializer=init_ops.zeros_initializer()):
        with arg_scope([conv2d], padding="SAME"):
            with arg_scope([max_pool2d], padding="VALID") as scope:
                return scope


def overfeat(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
             spatial_squeeze=True, scope="overfeat"):
    """OverFeat on 231x231 inputs. Returns ``(logits, end_points)``; the end points
    are every convolution and pooling layer by scope name (``overfeat/conv1`` ...
    ``overfeat/fc8``)."""
    with vs.variable_scope(scope, "overfeat", [inputs]) as sc:
        collection = sc.name + "_end_points"
        with arg_scope([conv2d, layers_base.fully_connected, max_pool2d],
                       outputs_collections=collection):
            net = conv2d(inputs, 64, [11, 11], 4, padding="VALID", scope="conv1")
            net = max_pool2d(net, [2, 2], scope="pool1")
            net = conv2d(net, 256, [5, 5], padding="VALID", scope="conv2")
            net = max_pool2d(net, [2, 2], scope="pool2")
            for name, channels in (("conv3", 512), ("conv4", 1024), ("conv5", 1024)):
                net = conv2d(net, channels, [3, 3], scope=name)
            net = max_pool2d(net, [2, 2], scope="pool5")
            with arg_scope([conv2d], weights_initializer=trunc_normal(0.005),
                           biases_initializer=init_ops.constant_initializer(0.1)):
                net = conv2d(net, 3072, [6, 6], padding="VALID", scope="fc6")
                net = dropout(net, dropout_keep_prob, is_training=is_training,
                              scope="dropout6")
                net = conv2d(net, 4096, [1, 1], scope="fc7")
                net = dropout(net, dropout_keep_prob, is_training=is_training,
                              scope="dropout7")
                net = conv2d(net, num_classes, [1, 1], activation_fn=None,
                             normalizer_fn=None,
                             biases_initializer=init_ops.zeros_initializer(), scope="fc8")
            end_points = convert_collection_to_dict(collection)
            if spatial_squeeze:
                net = array_ops.squeeze(net, [1, 2], name="fc8/squeezed")
                end_points[sc.name + "/fc8"] = net
            return net, end_points

