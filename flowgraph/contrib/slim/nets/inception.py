"""``slim.nets.inception``: Inception v1, v2 and v3 in one namespace (the networks,
their bodies and their arg scopes), as slim gathers them.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.slim.nets.inception.inception_v3.default_image_size
299
"""

from flowgraph.contrib.slim.nets.inception_v1 import (
    inception_v1,
    inception_v1_arg_scope,
    inception_v1_base,
)
from flowgraph.contrib.slim.nets.inception_v2 import (
    inception_v2,
    inception_v2_arg_scope,
    inception_v2_base,
)
from flowgraph.contrib.slim.nets.inception_v3 import (
    inception_v3,
    inception_v3_arg_scope,
    inception_v3_base,
)

__all__ = [
    "inception_v1",
    "inception_v1_arg_scope",
    "inception_v1_base",
    "inception_v2",
    "inception_v2_arg_scope",
    "inception_v2_base",
    "inception_v3",
    "inception_v3_arg_scope",
    "inception_v3_base",
]
