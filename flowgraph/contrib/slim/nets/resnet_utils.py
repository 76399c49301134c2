"""The building blocks of slim's ResNets (``slim.nets.resnet_utils``): `Block`,
`conv2d_same` (a strided convolution that pads like ``SAME`` would at stride 1, then
subsamples), `subsample`, `stack_blocks_dense` (atrous convolution once the requested
`output_stride` is reached) and `resnet_arg_scope`.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     y = conv2d_same(tf.zeros([1, 8, 8, 3]), 4, 3, stride=2, scope="c")
...     print(y.shape, y.op.name)
(1, 4, 4, 4) c/Relu
"""

from __future__ import annotations

import collections

from flowgraph.contrib.framework.arg_scope import add_arg_scope, arg_scope
from flowgraph.contrib.layers import layers as layers_base
from flowgraph.contrib.layers import layers_more
from flowgraph.contrib.layers.utils import collect_named_outputs
from flowgraph.framework.graph import GraphKeys
from flowgraph.ops import array_ops, init_ops, nn_ops, regularizers
from flowgraph.ops import variable_scope as vs

__all__ = ["Block", "bottleneck_block", "conv2d_same", "resnet_arg_scope", "sized_networks",
           "stack_blocks_dense", "subsample"]

conv2d = layers_base.convolution2d
batch_norm = layers_base.batch_norm
max_pool2d = layers_more.max_pool2d


class Block(collections.namedtuple("Block", ["scope", "unit_fn", "args"])):
    """A ResNet block: its `scope`, the unit function, and each unit's keyword arguments
    (``depth``, ``depth_bottleneck``, ``stride``)."""


def bottleneck_block(scope, unit_fn, base_depth, num_units, stride) -> Block:
    """A block of `num_units` bottleneck units of `base_depth` (output 4x), the last one
    strided: ``resnet_v1_block`` / ``resnet_v2_block`` with their unit function."""
    unit = {"depth": base_depth * 4, "depth_bottleneck": base_depth, "stride": 1}
    return Block(scope, unit_fn, [unit] * (num_units - 1) + [dict(unit, stride=stride)])


def subsample(inputs, factor, scope=None):
    """Every `factor`-th row and column (a 1x1 max pool), or `inputs` for factor 1."""
    if factor == 1:
        return inputs
    return max_pool2d(inputs, [1, 1], stride=factor, scope=scope)


def conv2d_same(inputs, num_outputs, kernel_size, stride, rate=1, scope=None):
    """A `kernel_size` convolution of `stride` whose output is the stride-1 ``SAME``
    convolution subsampled: explicit zero padding then ``VALID`` when `stride` > 1."""
    if stride == 1:
        return conv2d(inputs, num_outputs, kernel_size, stride=1, rate=rate, padding="SAME",
                      scope=scope)
    effective = kernel_size + (kernel_size - 1) * (rate - 1)
    before = (effective - 1) // 2
    after = effective - 1 - before
    padded = array_ops.pad(inputs, [[0, 0], [before, after], [before, after], [0, 0]])
    return conv2d(padded, num_outputs, kernel_size, stride=stride, rate=rate,
                  padding="VALID", scope=scope)


@add_arg_scope
def stack_blocks_dense(net, blocks, output_stride=None, outputs_collections=None):
    """Run the units of each of `blocks` in scopes ``<block>/unit_<i>``. Once the
    network's stride reaches `output_stride`, later strides become atrous rates instead
    (dense features for segmentation); ValueError when `output_stride` cannot be met."""
    current_stride, rate = 1, 1
    for block in blocks:
        with vs.variable_scope(block.scope, "block", [net]) as sc:
            for i, unit in enumerate(block.args):
                if output_stride is not None and current_stride > output_stride:
                    raise ValueError("The target output_stride cannot be reached.")
                with vs.variable_scope(f"unit_{i + 1}", values=[net]):
                    if output_stride is not None and current_stride == output_stride:
                        net = block.unit_fn(net, rate=rate, **dict(unit, stride=1))
                        rate *= unit.get("stride", 1)
                    else:
                        net = block.unit_fn(net, rate=1, **unit)
                        current_stride *= unit.get("stride", 1)
            net = collect_named_outputs(outputs_collections, sc.name, net)
    if output_stride is not None and current_stride != output_stride:
        raise ValueError("The target output_stride cannot be reached.")
    return net


def resnet_arg_scope(weight_decay=0.0001, batch_norm_decay=0.997, batch_norm_epsilon=1e-5,
                     batch_norm_scale=True):
    """ReLU convolutions with L2 `weight_decay`, He initialization and batch
    normalization (decay 0.997, epsilon 1e-5, with a scale); ``SAME`` max pooling."""
    bn_params = {"decay": batch_norm_decay, "epsilon": batch_norm_epsilon,
                 "scale": batch_norm_scale, "updates_collections": GraphKeys.UPDATE_OPS}
    with arg_scope([conv2d], weights_regularizer=regularizers.l2_regularizer(weight_decay),
                   weights_initializer=init_ops.contrib_variance_scaling_initializer(),
                   activation_fn=nn_ops.relu, normalizer_fn=batch_norm,
                   normalizer_params=bn_params):
        with arg_scope([batch_norm], **bn_params):
            with arg_scope([max_pool2d], padding="SAME") as scope:
                return scope


# layers -> bottleneck units in each of the four blocks
_UNITS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3), 200: (3, 24, 36, 3)}


def sized_networks(network, block, version: str) -> dict:
    """``{50: resnet_<version>_50, 101: ..., 152: ..., 200: ...}``: `network` over four
    blocks made by `block(scope, base_depth, num_units, stride)` (base depths 64, 128,
    256, 512; strides 2, 2, 2, 1), with slim's signature and default scope."""
    def sized(layers: int):
        units, name = _UNITS[layers], f"resnet_{version}_{layers}"

        def net(inputs, num_classes=None, is_training=True, global_pool=True,
                output_stride=None, reuse=None, scope=name):
            blocks = [block(f"block{i + 1}", base, n, stride)
                      for i, (base, n, stride) in enumerate(zip((64, 128, 256, 512), units,
                                                                (2, 2, 2, 1)))]
            return network(inputs, blocks, num_classes, is_training, global_pool=global_pool,
                           output_stride=output_stride, include_root_block=True,
                           reuse=reuse, scope=scope)

        net.__name__ = net.__qualname__ = name
        net.__doc__ = (f"ResNet-{layers} {version}: {', '.join(map(str, units))} units per "
                       f"block. Returns ``(net, end_points)``.")
        net.default_image_size = 224
        return net

    return {layers: sized(layers) for layers in _UNITS}
