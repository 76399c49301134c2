"""CPU kernels for array ops."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


@cpu_kernel("Const")
class ConstKernel:
    """Returns the constant (only runs when constant folding is off)."""

    def __init__(self, ctx, *, value):
        self.value = value

    def __call__(self):
        return self.value


@cpu_kernel("Placeholder")
def placeholder(*, op):
    raise errors.InvalidArgumentError(
        None, op,
        f"You must feed a value for placeholder tensor '{op.name}' with dtype "
        f"{op.attrs['dtype'].name} and shape {op.attrs['shape']}",
    )


@cpu_kernel("PlaceholderWithDefault")
def placeholder_with_default(x):
    return x


@cpu_kernel("Identity")
def identity(x):
    return x


@cpu_kernel("StopGradient")
def stop_gradient(x):
    return x


@cpu_kernel("Shape")
def shape(x, *, out_type):
    return np.array(np.shape(x), dtype=out_type.as_numpy_dtype)
