"""`tf.contrib.slim`: TF1's lightweight model-definition library in one namespace: the
`arg_scope` mechanism and variable helpers (`tf.contrib.framework`), the layers
(`tf.contrib.layers`), `slim.losses`, `slim.metrics`, `slim.learning` (training loop)
and `slim.utils` (end points).

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     images = tf.zeros([2, 16, 16, 3])
...     with slim.arg_scope([slim.conv2d, slim.fully_connected],
...                         weights_regularizer=slim.l2_regularizer(0.0005)):
...         net = slim.conv2d(images, 8, [3, 3], scope="conv1")
...         net = slim.max_pool2d(net, [2, 2], scope="pool1")
...         net = slim.flatten(net)
...         logits = slim.fully_connected(net, 10, activation_fn=None, scope="fc")
...     print(logits.shape, len(slim.losses.get_regularization_losses()))
(2, 10) 2
"""

from flowgraph.contrib import losses, metrics
from flowgraph.contrib.framework import *
from flowgraph.contrib.framework import __all__ as _framework_all
from flowgraph.contrib.layers import *
from flowgraph.contrib.layers import __all__ as _layers_all
from flowgraph.contrib.layers import utils
from flowgraph.contrib.slim import learning, nets

__all__ = sorted({*_framework_all, *_layers_all, "learning", "losses", "metrics", "nets", "utils"})
