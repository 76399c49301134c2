"""`tf.contrib.layers`: TF1's regularizers and initializers (re-exports only).

Example
-------
>>> import flowgraph as tf
>>> reg = tf.contrib.layers.l2_regularizer(0.1)
>>> float(tf.Session().run(reg(tf.constant([2.0]))))
0.2
"""

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
    "apply_regularization",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "sum_regularizer",
    "variance_scaling_initializer",
    "xavier_initializer",
    "xavier_initializer_conv2d",
]
