"""Inception v1 (GoogLeNet, Szegedy et al. 2014) as ``slim.nets.inception_v1`` defines
it, with batch normalization after every convolution under `inception_v1_arg_scope`
(``use_batch_norm=False`` for the paper's plain ReLU convolutions): the same scopes
(``InceptionV1/Mixed_4b/Branch_2/Conv2d_0b_3x3``), variable names and end points as
slim's published checkpoints. The final 7x7 average pooling needs the default 224x224
input (or any with a 7x7 ``Mixed_5c``); `inception_v1_base` takes any size.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     with slim.arg_scope(inception_v1_arg_scope()):
...         net, end_points = inception_v1_base(tf.zeros([1, 64, 64, 3]))
...     print(net.op.name, net.shape, len(end_points))
InceptionV1/Mixed_5c/concat (1, 2, 2, 1024) 16
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.slim.nets.inception_utils import (
    batch_norm_params,
    build_stages,
    inception_arg_scope,
    trunc_normal,
    unknown_endpoint,
)
from flowgraph.framework.graph import GraphKeys
from flowgraph.ops import array_ops
from flowgraph.ops import variable_scope as vs

__all__ = ["inception_v1", "inception_v1_arg_scope", "inception_v1_base"]

conv2d = layers_base.convolution2d
batch_norm = layers_base.batch_norm
max_pool2d = layers_more.max_pool2d
avg_pool2d = layers_more.avg_pool2d
dropout = layers_more.dropout

_MAX_S2 = ("max", [3, 3], None, {"stride": 2})


def _block(b0, b1, b2, b3, b2_scope="Conv2d_0b_3x3"):
    """An Inception module: 1x1 (`b0`); 1x1 -> 3x3 (`b1`); 1x1 -> 3x3 (`b2`, the
    paper's 5x5); 3x3 max pool -> 1x1 (`b3`)."""
    return [[(b0, [1, 1], "Conv2d_0a_1x1")],
            [(b1[0], [1, 1], "Conv2d_0a_1x1"), (b1[1], [3, 3], "Conv2d_0b_3x3")],
            [(b2[0], [1, 1], "Conv2d_0a_1x1"), (b2[1], [3, 3], b2_scope)],
            [("max", [3, 3], "MaxPool_0a_3x3"), (b3, [1, 1], "Conv2d_0b_1x1")]]


_STAGES = [
    ("Conv2d_1a_7x7", (64, [7, 7], None, {"stride": 2})),
    ("MaxPool_2a_3x3", _MAX_S2),
    ("Conv2d_2b_1x1", (64, [1, 1], None)),
    ("Conv2d_2c_3x3", (192, [3, 3], None)),
    ("MaxPool_3a_3x3", _MAX_S2),
    ("Mixed_3b", _block(64, (96, 128), (16, 32), 32)),
    ("Mixed_3c", _block(128, (128, 192), (32, 96), 64)),
    ("MaxPool_4a_3x3", _MAX_S2),
    ("Mixed_4b", _block(192, (96, 208), (16, 48), 64)),
    ("Mixed_4c", _block(160, (112, 224), (24, 64), 64)),
    ("Mixed_4d", _block(128, (128, 256), (24, 64), 64)),
    ("Mixed_4e", _block(112, (144, 288), (32, 64), 64)),
    ("Mixed_4f", _block(256, (160, 320), (32, 128), 128)),
    ("MaxPool_5a_2x2", ("max", [2, 2], None, {"stride": 2})),
    # slim's checkpoints name this one layer 0a
    ("Mixed_5b", _block(256, (160, 320), (32, 128), 128, b2_scope="Conv2d_0a_3x3")),
    ("Mixed_5c", _block(384, (192, 384), (48, 128), 128)),
]


def inception_v1_base(inputs, final_endpoint="Mixed_5c", scope="InceptionV1"):
    """The Inception v1 body from `inputs` up to `final_endpoint` (one of
    ``Conv2d_1a_7x7``, ``MaxPool_2a_3x3``, ... ``Mixed_5c``), its convolutions
    initialized from a truncated normal (stddev 0.01). Returns ``(net, end_points)``;
    raises ValueError for an unknown `final_endpoint` (after building the body)."""
    with vs.variable_scope(scope, "InceptionV1", [inputs]):
        with arg_scope([conv2d, layers_base.fully_connected],
                       weights_initializer=trunc_normal(0.01)):
            with arg_scope([conv2d, max_pool2d], stride=1, padding="SAME"):
                net, end_points, done = build_stages(inputs, _STAGES, lambda d: d,
                                                     final_endpoint)
        if done:
            return net, end_points
        raise unknown_endpoint(final_endpoint)


def inception_v1(inputs, num_classes=1000, is_training=True, dropout_keep_prob=0.8,
                 prediction_fn=layers_more.softmax, spatial_squeeze=True, reuse=None,
                 scope="InceptionV1"):
    """Inception v1 for classification (224x224 inputs). Returns ``(logits,
    end_points)``: the body's end points plus ``Logits`` and ``Predictions``."""
    with vs.variable_scope(scope, "InceptionV1", [inputs, num_classes],
                           reuse=reuse) as sc:
        with arg_scope([batch_norm, dropout], is_training=is_training):
            net, end_points = inception_v1_base(inputs, scope=sc)
            with vs.variable_scope("Logits"):
                net = avg_pool2d(net, [7, 7], stride=1, scope="MaxPool_0a_7x7")
                net = dropout(net, dropout_keep_prob, scope="Dropout_0b")
                logits = conv2d(net, num_classes, [1, 1], activation_fn=None,
                                normalizer_fn=None, scope="Conv2d_0c_1x1")
                if spatial_squeeze:
                    logits = array_ops.squeeze(logits, [1, 2], name="SpatialSqueeze")
                end_points["Logits"] = logits
                end_points["Predictions"] = prediction_fn(logits, scope="Predictions")
    return logits, end_points


inception_v1.default_image_size = 224


def inception_v1_arg_scope(weight_decay=0.00004, use_batch_norm=True,
                           batch_norm_var_collection="moving_vars"):
    """He-initialized ReLU convolutions with L2 `weight_decay`, batch-normalized
    (decay 0.9997, epsilon 0.001; moving statistics also in
    `batch_norm_var_collection`) unless `use_batch_norm` is False."""
    if use_batch_norm:
        params = batch_norm_params(0.9997, 0.001, GraphKeys.UPDATE_OPS,
                                   batch_norm_var_collection)
        return inception_arg_scope(weight_decay, batch_norm, params)
    return inception_arg_scope(weight_decay, None, {})
