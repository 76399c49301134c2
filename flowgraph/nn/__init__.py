"""The `tf.nn` namespace: re-exports only.

Activations that live with the elementwise math ops (`sigmoid`, `tanh`, ...) are taken
from `flowgraph.ops.math_ops` when it defines them.
"""

from flowgraph.ops import math_ops as _math_ops
from flowgraph.ops.nn_ops import (
    avg_pool,
    bias_add,
    conv2d,
    depthwise_conv2d,
    elu,
    l2_normalize,
    leaky_relu,
    log_softmax,
    max_pool,
    moments,
    relu,
    relu6,
    selu,
    softmax,
    softplus,
    softsign,
)

for _name in ("sigmoid", "tanh", "swish", "silu"):
    if hasattr(_math_ops, _name):
        globals()[_name] = getattr(_math_ops, _name)
del _name
