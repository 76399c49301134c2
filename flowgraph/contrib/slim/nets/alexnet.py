"""AlexNet v2 (the "one weird trick" variant) as ``slim.nets.alexnet`` defines it: same
scopes, variable names and end points; the dense layers are convolutions (``fc6`` 5x5
``VALID``) with truncated-normal weights and 0.1 biases.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(alexnet_v2_arg_scope()):
...         logits, end_points = alexnet_v2(tf.zeros([1, 224, 224, 3]), num_classes=10)
...     print(logits.shape, end_points["alexnet_v2/pool5"].shape)
(1, 10) (1, 5, 5, 256)
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import convert_collection_to_dict
from flowgraph.ops import array_shape_ops, init_ops, math_reduce, nn_ops, regularizers
from flowgraph.ops import variable_scope as vs

__all__ = ["alexnet_v2", "alexnet_v2_arg_scope"]

conv2d = layers_base.convolution2d
max_pool2d = layers_more.max_pool2d


def alexnet_v2_arg_scope(weight_decay=0.0005):
    """ReLU layers with L2 `weight_decay` and 0.1 biases; ``SAME`` convolutions,
    ``VALID`` pooling."""
    with arg_scope([conv2d, layers_base.fully_connected], activation_fn=nn_ops.relu,
                   biases_initializer=init_ops.constant_initializer(0.1),
                   weights_regularizer=regularizers.l2_regularizer(weight_decay)):
        with arg_scope([conv2d], padding="SAME"):
            with arg_scope([max_pool2d], padding="VALID") as scope:
                return scope


def alexnet_v2(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.5,
               spatial_squeeze=True, scope="alexnet_v2", global_pool=False):
    """AlexNet v2 on 224x224 inputs. Returns ``(logits, end_points)``."""
    with vs.variable_scope(scope, "alexnet_v2", [inputs]) as sc:
        collection = sc.original_name_scope + "_end_points"
        with arg_scope([conv2d, layers_base.fully_connected, max_pool2d],
                       outputs_collections=[collection]):
            net = conv2d(inputs, 64, [11, 11], 4, padding="VALID", scope="conv1")
            net = max_pool2d(net, [3, 3], 2, scope="pool1")
            net = conv2d(net, 192, [5, 5], scope="conv2")
            net = max_pool2d(net, [3, 3], 2, scope="pool2")
            for name, channels in (("conv3", 384), ("conv4", 384), ("conv5", 256)):
                net = conv2d(net, channels, [3, 3], scope=name)
            net = max_pool2d(net, [3, 3], 2, scope="pool5")
            with arg_scope([conv2d],
                           weights_initializer=init_ops.truncated_normal_initializer(0.0,
                                                                                     0.005),
                           biases_initializer=init_ops.constant_initializer(0.1)):
                net = conv2d(net, 4096, [5, 5], padding="VALID", scope="fc6")
                net = layers_more.dropout(net, dropout_keep_prob, is_training=is_training,
                                          scope="dropout6")
                net = conv2d(net, 4096, [1, 1], scope="fc7")
                end_points = convert_collection_to_dict(collection)
                if global_pool:
                    net = math_reduce.reduce_mean(net, [1, 2], keepdims=True,
                                                  name="global_pool")
                    end_points["global_pool"] = net
                if num_classes:
                    net = layers_more.dropout(net, dropout_keep_prob,
                                              is_training=is_training, scope="dropout7")
                    net = conv2d(net, num_classes, [1, 1], activation_fn=None,
                                 normalizer_fn=None,
                                 biases_initializer=init_ops.zeros_initializer(),
                                 scope="fc8")
                    if spatial_squeeze:
                        net = array_shape_ops.squeeze(net, [1, 2], name="fc8/squeezed")
                    end_points[sc.name + "/fc8"] = net
            return net, end_points


alexnet_v2.default_image_size = 224
