"""CPU kernels for elementwise math and matrix products (NumPy, BLAS)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel

cpu_kernel("Add")(np.add)
cpu_kernel("Sub")(np.subtract)
cpu_kernel("Mul")(np.multiply)
cpu_kernel("Sin")(np.sin)


@cpu_kernel("MatMul")
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)
