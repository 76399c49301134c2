"""TensorArray cases for the registry-wide checks: gradient cases merged into
`test_gradient_registry.CASES` (and through it into the op contract), and contract-only
cases for the ops without a gradient (`test_op_contract` adds them).

Each build makes a fresh array from placeholders, so the cases also run with unknown
dimensions or an unknown rank.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf

R = np.random.RandomState(23)


def _u(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _ta(x, size, **kw):
    return tf.TensorArray(x.dtype, size=size, **kw)


GRADIENT_CASES = {
    "TensorArrayReadV3": [
        ([_u(3, 2)], lambda x: (lambda ta: ta.read(0) * tf.sin(ta.read(2)))(
            _ta(x, 3).unstack(x)))],
    "TensorArrayWriteV3": [
        ([_u(2, 3), _u(2, 3)], lambda x, y: _ta(x, 2).write(0, tf.sin(x)).write(
            1, x * y).stack())],
    "TensorArrayGatherV3": [
        ([_u(3, 2)], lambda x: _ta(x, 3).unstack(x * x).gather([2, 0]))],
    "TensorArrayScatterV3": [
        ([_u(4, 2)], lambda x: _ta(x, 4).scatter([3, 0, 1, 2], tf.tanh(x)).stack())],
    "TensorArrayConcatV3": [
        ([_u(2, 3), _u(2, 3)], lambda x, y: _ta(x, 2).write(0, x).write(1, x * y).concat())],
    "TensorArraySplitV3": [
        ([_u(3, 2)], lambda x: (lambda ta: ta.read(1) * 2.0)(
            _ta(x, 2).split(tf.exp(x), [1, 2])))],
}


def _lifecycle(x):
    """An array made, grown, sized, read by gradient and closed."""
    ta = _ta(x, 0, dynamic_size=True).unstack(x)
    size = ta.size()
    g = ta.grad("gradients", flow=ta.flow)
    with tf.control_dependencies([size, g.flow]):
        tf.TensorArray(x.dtype, handle=ta.handle, flow=ta.flow).close()


CONTRACT_CASES = {name: _lifecycle for name in (
    "TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3")}
