"""CPU kernels for array ops."""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.constant_op import dense_constant


@cpu_kernel("Const")
class ConstKernel:
    """Returns the constant (only runs when constant folding is off)."""

    def __init__(self, ctx, *, value):
        self.value = dense_constant(value)

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


@cpu_kernel("ShapeN")
def shape_n(*xs, out_type):
    return tuple(np.array(np.shape(x), dtype=out_type.as_numpy_dtype) for x in xs)


@cpu_kernel("Size")
def size(x, *, out_type):
    return np.asarray(np.size(x), dtype=out_type.as_numpy_dtype)


@cpu_kernel("Rank")
def rank(x):
    return np.asarray(np.ndim(x), dtype=np.int32)


@cpu_kernel("Reshape")
def reshape(x, shape):
    dims = np.ravel(shape).tolist()
    if dims.count(-1) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"Only one input size may be -1, not both in shape {dims}")
    known = math.prod(d for d in dims if d != -1)
    n = x.size
    if -1 in dims and 0 in dims:
        # TensorFlow infers the -1 from the nonzero sizes alone: [0, 4] -> [2, -1, 0] is
        # [2, 2, 0]
        known = math.prod(d for d in dims if d not in (-1, 0))
        n = math.prod(d for d in np.shape(x) if d != 0)
        dims[dims.index(-1)] = n // known if known and n % known == 0 else -1
        if x.size == 0 and -1 not in dims:
            return np.reshape(x, dims)
        n, known = x.size, math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or n % known:
            raise errors.InvalidArgumentError(
                None, None, f"Input to reshape is a tensor with {n} values, but the requested "
                f"shape requires a multiple of {known} (requested shape {dims})")
        dims[dims.index(-1)] = n // known
    elif known != n:
        raise errors.InvalidArgumentError(
            None, None, f"Input to reshape is a tensor with {n} values, but the requested "
            f"shape has {known} (input shape {list(np.shape(x))}, requested shape {dims})")
    return np.reshape(x, dims)


@cpu_kernel("ExpandDims")
def expand_dims(x, axis):
    if np.size(axis) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"'dim' must be a tensor with a single value, got {np.size(axis)}")
    a = int(np.reshape(axis, [-1])[0])
    if not -np.ndim(x) - 1 <= a <= np.ndim(x):
        raise errors.InvalidArgumentError(
            None, None, f"Tried to expand dim index {a} for tensor with {np.ndim(x)} dimensions.")
    return np.expand_dims(x, a)


@cpu_kernel("Squeeze")
def squeeze(x, *, squeeze_dims):
    x = np.asarray(x)
    if not squeeze_dims:
        return np.squeeze(x)
    axes = tuple(a % x.ndim if -x.ndim <= a < x.ndim else a for a in squeeze_dims)
    for a, orig in zip(axes, squeeze_dims):
        if not 0 <= a < x.ndim or x.shape[a] != 1:
            raise errors.InvalidArgumentError(
                None, None, f"Can not squeeze dim[{orig}], expected a dimension of 1, got "
                f"{x.shape[a] if 0 <= a < x.ndim else 'an out-of-range axis'} "
                f"(input shape {list(x.shape)})")
    return np.squeeze(x, axis=axes)


def _check_perm(x, perm):
    perm = [int(p) for p in np.reshape(perm, -1)]
    if sorted(perm) != list(range(np.ndim(x))):
        missing = [i for i in range(np.ndim(x)) if i not in perm]
        head = (f"{missing[0]} is missing from {{{','.join(map(str, perm))}}}. " if missing
                and len(perm) == np.ndim(x) else "")  # TF's wording first
        raise errors.InvalidArgumentError(
            None, None, f"{head}transpose expects a permutation of 0..{np.ndim(x) - 1} for "
            f"an input of shape {list(np.shape(x))}, got perm {perm}")
    return perm


@cpu_kernel("Transpose")
def transpose(x, perm):
    return np.transpose(x, _check_perm(x, perm))


@cpu_kernel("ConjugateTranspose")
def conjugate_transpose(x, perm):
    return np.conj(np.transpose(x, _check_perm(x, perm)))


@cpu_kernel("Fill")
def fill(dims, value):
    dims = [int(d) for d in np.reshape(dims, -1)]
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(None, None, f"dims must be non-negative, got {dims}")
    value = np.asarray(value)
    return np.full(dims, value, dtype=value.dtype)


@cpu_kernel("ZerosLike")
def zeros_like(x):
    x = np.asarray(x)
    if x.dtype == object:
        if x.size and hasattr(x.flat[0], "zeros_like"):  # lists, maps: kernels_tensor_list
            out = np.empty(x.shape, dtype=object)
            for i, v in enumerate(x.flat):
                out.flat[i] = v.zeros_like()
            return out
        return np.full(x.shape, b"", dtype=object)
    return np.zeros_like(x)


@cpu_kernel("OnesLike")
def ones_like(x):
    return np.ones_like(np.asarray(x))
