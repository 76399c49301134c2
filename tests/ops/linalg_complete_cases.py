"""Registry-wide cases for the LU, matrix-function and tridiagonal ops
(`flowgraph/ops/linalg_lu.py`, `linalg_funcs.py`, `linalg_tridiag.py`):
`GRADIENT_CASES` merge into `test_gradient_registry.CASES` (finite differences, and
through it the op contract); `CONTRACT_CASES` cover the ops without a gradient (Lu and
MatrixLogarithm, which TensorFlow does not differentiate either)."""

from __future__ import annotations

import numpy as np

import flowgraph as tf

R = np.random.RandomState(2611)


def _u(*shape, low=-1.0, high=1.0):
    return R.uniform(low, high, size=shape)


def _spd(x, n):
    """A symmetric positive-definite n x n matrix from the n*n entries of x."""
    a = tf.reshape(x, [n, n])
    return tf.matmul(a, a, transpose_b=True) + n * tf.eye(n, dtype=x.dtype)


def _dominant(d, batch=()):
    """Compact tridiagonal diagonals [..., 3, 4] with a dominant main diagonal."""
    d = tf.reshape(d, [*batch, 3, 4])
    return d + tf.constant([[0.0] * 4, [4.0] * 4, [0.0] * 4], d.dtype)


GRADIENT_CASES = {
    "MatrixSquareRoot": [
        ([_u(9)], lambda x: tf.linalg.sqrtm(_spd(x, 3))),
        ([_u(2, 2, 2) * 0.3], lambda x: tf.matrix_square_root(
            tf.reshape(x, [2, 2, 2]) + 2.0 * tf.eye(2, dtype=x.dtype))),
    ],
    "TridiagonalSolve": [
        ([_u(12), _u(4, 2)], lambda d, b: tf.linalg.tridiagonal_solve(
            _dominant(d), tf.reshape(b, [4, 2]))),
        ([_u(24), _u(2, 4, 1)], lambda d, b: tf.linalg.tridiagonal_solve(
            _dominant(d, (2,)), tf.reshape(b, [2, 4, 1]))),
    ],
    "TridiagonalMatMul": [
        ([_u(12), _u(4, 3)], lambda d, b: tf.linalg.tridiagonal_matmul(
            tf.reshape(d, [3, 4]), tf.reshape(b, [4, 3]))),
    ],
}

CONTRACT_CASES = {
    "Lu": [
        ([_u(3, 3) + 3 * np.eye(3)], lambda x: tf.linalg.lu(x)[0], {}),
        ([_u(2, 4, 4) + 3 * np.eye(4)], lambda x: tf.linalg.lu(x, tf.int64)[0], {}),
    ],
    "MatrixLogarithm": [
        ([], lambda: tf.linalg.logm(tf.constant(np.diag([1.0, 2.0]).astype(np.complex64))),
         {}),
    ],
}


# TF registers no gradient for these: tf.gradients raises LookupError.
NO_GRADIENT_LIKE_TENSORFLOW = {"Lu", "MatrixLogarithm"}
