"""Op-contract cases for accumulators, session tensor handles, critical sections, the
N-dimensional FFTs and random_index_shuffle (`flowgraph/ops/accumulator_ops.py`,
`session_handle_ops.py`, `critical_section_ops.py`, `spectral_ops.py`,
`random_index_shuffle_ops.py`), in the ``(inputs, build, options)`` form of
`issue15_cov_cases.CONTRACT_CASES`; `tests/ops/test_op_contract.py` runs them. Each
build is a small program: the ops that need state (a take, a read of a handle) depend
on the ops that make it.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op

R = np.random.RandomState(13)


def _f64(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _dense(x):
    acc = tf.ConditionalAccumulator(x.dtype.base_dtype, shape=[3])
    apply = acc.apply_grad(x)
    with tf.control_dependencies([apply]):
        n = acc.num_accumulated()
        step = acc.set_global_step(0)
    with tf.control_dependencies([n, step]):
        acc.take_grad(1)


def _sparse(x):
    acc = tf.SparseConditionalAccumulator(x.dtype.base_dtype, shape=[4, 3])
    apply = acc.apply_grad([0, 2], x, grad_shape=[4, 3])
    with tf.control_dependencies([apply]):
        n = acc.num_accumulated()
        step = acc.set_global_step(0)
    with tf.control_dependencies([n, step]):
        acc.take_grad(1)


def _handles(x):
    h = tf.get_session_handle(x)
    value = make_op("GetSessionTensor", [h], {"dtype": x.dtype.base_dtype}).outputs[0]
    with tf.control_dependencies([value]):
        make_op("DeleteSessionTensor", [h])


def _mutex(x):
    tf.CriticalSection().execute(lambda: x * 2.0)


_DENSE = ("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
          "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep",
          "ResourceAccumulatorTakeGradient")
_SPARSE = ("SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
           "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
           "SparseAccumulatorTakeGradient")

def _fft_nd(x):
    c = tf.complex(x, -x)
    f = tf.fftnd(c, [3, 5], [0, 1])
    tf.ifftnd(f, [2, 4], [0, 1])
    r = tf.rfftnd(x, [3, 4], [0, 1], Tcomplex=tf.complex128 if x.dtype == tf.float64
                  else tf.complex64)
    tf.irfftnd(r, [3, 4], [0, 1], Treal=x.dtype.base_dtype)


def _index_shuffle(x):
    tf.random_index_shuffle(tf.range(6), [1, 2, 3], 5)
    tf.random_index_shuffle(tf.constant(2, tf.int64), tf.constant([4, 5, 6], tf.int64),
                            tf.constant(100, tf.int64))


_NO_FETCH = {"fetch": lambda op: []}  # handles are Python objects: run, do not compare
_UNKNOWN = {"value_dependent": True}  # TensorFlow leaves these shapes unknown too

CONTRACT_CASES: dict = {
    **{name: [([_f64(3)], _dense, {})] for name in _DENSE[1:]},
    **{name: [([_f64(2, 3)], _sparse, _UNKNOWN)] for name in _SPARSE[1:]},
    "GetSessionTensor": [([_f64(2, 3)], _handles, _UNKNOWN)],
    "DeleteSessionTensor": [([_f64(2, 3)], _handles, {})],
    "ConsumeMutexLock": [([_f64(2, 3)], _mutex, {})],
    **{name: [([_f64(3, 4)], _fft_nd, {})] for name in ("FFTND", "IFFTND", "RFFTND",
                                                         "IRFFTND")},
    "RandomIndexShuffle": [([_f64(2)], _index_shuffle, {})],
    "ResourceConditionalAccumulator": [([_f64(3)], _dense, _NO_FETCH)],
    **{name: [([_f64(2, 3)], build, _NO_FETCH)] for name, build in (
        ("SparseConditionalAccumulator", _sparse), ("GetSessionHandle", _handles),
        ("MutexV2", _mutex), ("MutexLock", _mutex))},
}
