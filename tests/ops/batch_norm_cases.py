"""Gradient (and so op-contract) cases for ``FusedBatchNorm``/V2/V3 and their gradient
ops, in the ``(inputs, build)`` form of `test_gradient_registry.CASES`.

The ops run here in float64 (the CPU kernel keeps it, TensorFlow's wrappers reject it) so
that finite differences are exact enough. A gradient op's reserve spaces come from a
forward op on the same ``x``: in training mode its second-order gradient recomputes the
batch statistics from ``x``, as TensorFlow's does.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op

R = np.random.RandomState(17)
_X = R.uniform(-2.0, 2.0, size=(2, 3, 2, 3))
_DY = R.uniform(-1.0, 1.0, size=(2, 3, 2, 3))
_SCALE, _OFFSET = R.uniform(0.5, 2.0, size=3), R.uniform(-1.0, 1.0, size=3)
_MEAN, _VAR = R.uniform(-0.5, 0.5, size=3), R.uniform(0.5, 2.0, size=3)


def _attrs(op_type, x, training, fmt="NHWC", factor=None):
    # T and U follow the fed dtypes (float64, or float32 in the contract's static32 mode)
    attrs = {"T": x.dtype.base_dtype, "epsilon": 0.01, "data_format": fmt,
             "is_training": training}
    if op_type not in ("FusedBatchNorm", "FusedBatchNormGrad"):
        attrs["U"] = x.dtype.base_dtype
    if factor is not None:
        attrs["exponential_avg_factor"] = factor
    return attrs


def _forward(op_type, x, scale, offset, training, fmt="NHWC", factor=1.0):
    stats = [tf.constant(_MEAN, x.dtype), tf.constant(_VAR, x.dtype)]
    return make_op(op_type, [x, scale, offset, *stats],
                   _attrs(op_type, x, training, fmt, factor))


def _fwd_case(op_type, training, fmt="NHWC"):
    x = _X.transpose(0, 3, 1, 2) if fmt == "NCHW" else _X
    return ([x, _SCALE, _OFFSET],
            lambda x, s, o: _forward(op_type, x, s, o, training, fmt, 0.5).outputs[0])


def _grad_case(op_type, training, fmt="NHWC"):
    forward = op_type.replace("Grad", "")
    x0 = _X.transpose(0, 3, 1, 2) if fmt == "NCHW" else _X
    dy0 = _DY.transpose(0, 3, 1, 2) if fmt == "NCHW" else _DY

    def build(dy, x, s):
        fwd = _forward(forward, x, s, tf.constant(_OFFSET, x.dtype), training, fmt)
        reserve = list(fwd.outputs[3:]) if training else [tf.constant(_MEAN, x.dtype),
                                                          tf.constant(_VAR, x.dtype)]
        if op_type == "FusedBatchNormGradV3" and not training:
            reserve.append(fwd.outputs[5])
        outs = make_op(op_type, [dy, x, s, *reserve], _attrs(op_type, x, training, fmt)).outputs
        return outs[:3]

    return ([dy0, x0, _SCALE], build)


GRADIENT_CASES = {}
for _v in ("", "V2", "V3"):
    GRADIENT_CASES[f"FusedBatchNorm{_v}"] = [
        _fwd_case(f"FusedBatchNorm{_v}", True), _fwd_case(f"FusedBatchNorm{_v}", False),
        _fwd_case(f"FusedBatchNorm{_v}", True, "NCHW")]
    GRADIENT_CASES[f"FusedBatchNormGrad{_v}"] = [
        _grad_case(f"FusedBatchNormGrad{_v}", True),
        _grad_case(f"FusedBatchNormGrad{_v}", False),
        _grad_case(f"FusedBatchNormGrad{_v}", True, "NCHW")]
