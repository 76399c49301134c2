"""`tf.contrib.stateless`: TF 1.x's names for the stateless random ops.

`stateless_random_uniform`, `stateless_random_normal`, `stateless_truncated_normal` and
`stateless_multinomial` are `tf.random.stateless_uniform`, `stateless_normal`,
`stateless_truncated_normal` and `stateless_multinomial` (the same functions): the
values depend only on the shape, the dtype and the ``[2]`` integer `seed`, and equal
TensorFlow's bit for bit (Philox).

Example
-------
>>> import flowgraph as tf
>>> x = tf.contrib.stateless.stateless_random_uniform([2], seed=[1, 2])
>>> with tf.Session() as sess:
...     [round(float(v), 4) for v in sess.run(x)]
[0.8441, 0.192]
"""

from flowgraph.ops.random_stateless_ops import stateless_multinomial, stateless_truncated_normal
from flowgraph.ops.random_stateless_ops import stateless_normal as stateless_random_normal
from flowgraph.ops.random_stateless_ops import stateless_uniform as stateless_random_uniform

__all__ = [
    "stateless_multinomial",
    "stateless_random_normal",
    "stateless_random_uniform",
    "stateless_truncated_normal",
]
