"""``slim.nets``: image classification networks as TF1's slim defines them (same scopes,
variable names and end points, so slim's published checkpoints restore): `vgg`
(``vgg_a``, ``vgg_16``, ``vgg_19``), `alexnet` (``alexnet_v2``), `resnet_v1` and
`resnet_v2` (50, 101, 152, 200 layers; `resnet_utils`), `inception` (v1, v2, v3;
also as `inception_v1`, `inception_v2`, `inception_v3`) and `overfeat`.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.slim.nets.vgg.vgg_16.default_image_size
224
"""

from flowgraph.contrib.slim.nets import (
    alexnet,
    inception,
    overfeat,
    resnet_utils,
    resnet_v1,
    resnet_v2,
    vgg,
)

__all__ = ["alexnet", "inception", "overfeat", "resnet_utils", "resnet_v1", "resnet_v2", "vgg"]
