"""CPU kernels for the bitwise ops (`flowgraph/ops/bitwise_ops.py`), NumPy.

Shift amounts outside ``[0, bits)`` are clamped to ``bits - 1`` as TensorFlow's CPU
kernels do, instead of NumPy's platform-dependent result.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel

for _op, _fn in {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
                 "BitwiseXor": np.bitwise_xor}.items():
    cpu_kernel(_op, fresh=True)(lambda x, y, _fn=_fn: np.asarray(_fn(x, y), dtype=x.dtype))


@cpu_kernel("Invert", fresh=True)
def invert(x):
    return np.asarray(np.invert(x), dtype=x.dtype)


def _clamped(y, dtype):
    bits = np.dtype(dtype).itemsize * 8
    return np.clip(y, 0, bits - 1).astype(dtype)


@cpu_kernel("LeftShift", fresh=True)
def left_shift(x, y):
    return np.asarray(np.left_shift(x, _clamped(y, x.dtype)), dtype=x.dtype)


@cpu_kernel("RightShift", fresh=True)
def right_shift(x, y):
    return np.asarray(np.right_shift(x, _clamped(y, x.dtype)), dtype=x.dtype)
