"""Registry cases for the 3-D convolution and pooling ops (`flowgraph/ops/nn_ops3d.py`).

`GRADIENT_CASES` merge into `test_gradient_registry.CASES` (finite differences of every
op and of its backward ops, so second derivatives too) and, through them, into
`test_op_contract` (shape functions against the CPU kernels). Max-pool inputs have
distinct values, so that no window's maximum changes under the finite differences.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_tensor

_RNG = np.random.RandomState(31)


def _u(*shape):
    return _RNG.uniform(-1, 1, shape)


def _distinct(*shape):
    return _RNG.permutation(np.prod(shape)).reshape(shape) / 7.0 - 1.0


_CONV = {"strides": [1, 2, 1, 1, 1], "padding": "SAME", "data_format": "NDHWC",
         "dilations": [1, 1, 1, 1, 1]}
_POOL = {"ksize": [1, 2, 2, 1, 1], "strides": [1, 1, 2, 1, 1], "padding": "SAME",
         "data_format": "NDHWC"}


def _sizes(*values):
    return tf.constant(np.array(values, np.int32))


GRADIENT_CASES = {
    "Conv3D": [
        ([_u(2, 4, 3, 3, 2), _u(2, 2, 3, 2, 3)],
         lambda x, f: tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME")),
        ([_u(1, 2, 4, 3, 4), _u(2, 2, 2, 2, 2)],
         lambda x, f: tf.nn.conv3d(x, f, 1, "VALID", data_format="NCDHW",
                                   dilations=[1, 1, 1, 2, 1]))],
    "Conv3DBackpropInputV2": [
        ([_u(2, 2, 2, 2, 3), _u(2, 2, 3, 3, 3)],
         lambda f, dy: make_tensor("Conv3DBackpropInputV2",
                                   [_sizes(2, 4, 3, 3, 2), f, dy], _CONV))],
    "Conv3DBackpropFilterV2": [
        ([_u(2, 4, 3, 3, 2), _u(2, 2, 3, 3, 3)],
         lambda x, dy: make_tensor("Conv3DBackpropFilterV2",
                                   [x, _sizes(2, 2, 2, 2, 3), dy], _CONV))],
    "MaxPool3D": [
        ([_distinct(2, 4, 3, 5, 2)], lambda x: tf.nn.max_pool3d(x, [2, 2, 3], [1, 2, 2],
                                                                "SAME")),
        ([_distinct(1, 2, 3, 4, 3)],
         lambda x: tf.nn.max_pool3d(x, 2, 1, "VALID", data_format="NCDHW"))],
    "AvgPool3D": [
        ([_u(2, 4, 3, 5, 2)], lambda x: tf.nn.avg_pool3d(x, [2, 2, 3], [1, 2, 2], "SAME"))],
    "MaxPool3DGrad": [
        ([_distinct(2, 3, 4, 3, 2), _u(2, 3, 2, 3, 2)],
         lambda x, dy: make_tensor("MaxPool3DGrad",
                                   [x, make_tensor("MaxPool3D", [x], _POOL), dy], _POOL))],
    "MaxPool3DGradGrad": [
        ([_distinct(2, 3, 4, 3, 2), _u(2, 3, 4, 3, 2)],
         lambda x, g: make_tensor("MaxPool3DGradGrad",
                                  [x, make_tensor("MaxPool3D", [x], _POOL), g], _POOL))],
    "AvgPool3DGrad": [
        ([_u(2, 3, 2, 3, 2)],
         lambda dy: make_tensor("AvgPool3DGrad", [_sizes(2, 3, 4, 3, 2), dy], _POOL))],
}
