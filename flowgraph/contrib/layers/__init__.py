"""`tf.contrib.layers`: TF1's regularizers and initializers, the functional layers
`fully_connected`, `conv2d`, `batch_norm`, `flatten` (see `layers.py`, built on
`tf.layers` / `tf.nn`) and `optimize_loss` (see `optimizers.py`, on `tf.train`).

Example
-------
>>> import flowgraph as tf
>>> reg = tf.contrib.layers.l2_regularizer(0.1)
>>> float(tf.Session().run(reg(tf.constant([2.0]))))
0.2
"""

from flowgraph.contrib.layers.layers import (
    batch_norm,
    conv2d,
    convolution2d,
    flatten,
    fully_connected,
)
from flowgraph.contrib.layers.optimizers import (
    OPTIMIZER_CLS_NAMES,
    OPTIMIZER_SUMMARIES,
    optimize_loss,
)
from flowgraph.ops.init_ops import (
    contrib_variance_scaling_initializer as variance_scaling_initializer,
)
from flowgraph.ops.init_ops import xavier_initializer
from flowgraph.ops.init_ops import xavier_initializer as xavier_initializer_conv2d
from flowgraph.ops.regularizers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)

__all__ = [
    "OPTIMIZER_CLS_NAMES",
    "OPTIMIZER_SUMMARIES",
    "apply_regularization",
    "batch_norm",
    "conv2d",
    "convolution2d",
    "flatten",
    "fully_connected",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "optimize_loss",
    "sum_regularizer",
    "variance_scaling_initializer",
    "xavier_initializer",
    "xavier_initializer_conv2d",
]
