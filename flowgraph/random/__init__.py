"""The `tf.random` namespace: re-exports only."""

from flowgraph.framework.graph import get_seed, set_random_seed
from flowgraph.ops.random_extra_ops import random_gamma as gamma
from flowgraph.ops.random_ops import categorical, multinomial, truncated_normal
from flowgraph.ops.random_ops import random_normal as normal
from flowgraph.ops.random_ops import random_shuffle as shuffle
from flowgraph.ops.random_ops import random_uniform as uniform
