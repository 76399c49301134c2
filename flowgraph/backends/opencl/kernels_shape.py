"""OpenCL kernels that change only a tensor's description: Reshape, ExpandDims, Squeeze,
and the shape queries Shape, ShapeN, Size, Rank and BroadcastGradientArgs.

No work reaches the device. Reshape, ExpandDims and Squeeze return a view of the same
buffer (a contiguous copy first when the input is a strided view); the shape queries read
the device array's description and return host NumPy arrays, as TensorFlow keeps such
values in host memory on a GPU. Their shape, axis and dims inputs are declared
`host_inputs`, so the planner hands them over as host arrays and a graph computing shapes
next to device work never waits for the device.

Example
-------
>>> from flowgraph.backends.opencl import backend
>>> backend.ensure_loaded()
>>> backend.find_kernel("Shape").host_inputs
()
>>> backend.find_kernel("Reshape").host_inputs
(1,)
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.opencl import opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import CTYPES, contiguous, on_device
from flowgraph.framework.errors import InvalidArgumentError

_DTYPES = tuple(CTYPES)


def _view(x, dims):
    rt, (x,) = on_device(x)
    return contiguous(rt, x).reshape(tuple(int(d) for d in dims))


def _dims(value) -> list[int]:
    return [int(d) for d in np.reshape(np.asarray(value), -1)]


@opencl_kernel("Reshape", dtypes=_DTYPES, host_inputs=(1,))
def reshape(x, shape):
    dims = _dims(shape)
    if dims.count(-1) > 1:
        raise InvalidArgumentError(None, None,
                                   f"Only one input size may be -1, not both in shape {dims}")
    known = math.prod(d for d in dims if d != -1)
    n = int(np.prod(x.shape, dtype=np.int64))
    if -1 in dims:
        if known == 0 or n % known:
            raise InvalidArgumentError(
                None, None, f"Input to reshape is a tensor with {n} values, but the requested "
                f"shape {dims} requires a multiple of {known}")
        dims[dims.index(-1)] = n // known
    elif known != n:
        raise InvalidArgumentError(
            None, None, f"Input to reshape is a tensor with {n} values (shape "
            f"{list(x.shape)}), but the requested shape {dims} has {known}")
    return _view(x, dims)


@opencl_kernel("ExpandDims", dtypes=_DTYPES, host_inputs=(1,))
def expand_dims(x, axis):
    a = int(np.reshape(np.asarray(axis), -1)[0])
    rank = len(x.shape)
    if not -rank - 1 <= a <= rank:
        raise InvalidArgumentError(
            None, None, f"Tried to expand dim index {a} for tensor with {rank} dimensions")
    a = a % (rank + 1)
    return _view(x, [*x.shape[:a], 1, *x.shape[a:]])


@opencl_kernel("Squeeze", dtypes=_DTYPES)
def squeeze(x, *, squeeze_dims):
    shape, rank = list(x.shape), len(x.shape)
    if not squeeze_dims:
        return _view(x, [d for d in shape if d != 1])
    axes = set()
    for orig in squeeze_dims:
        a = orig % rank if -rank <= orig < rank else None
        if a is None or shape[a] != 1:
            raise InvalidArgumentError(
                None, None, f"Can not squeeze dim[{orig}], expected a dimension of 1, got "
                f"{shape[a] if a is not None else 'an out-of-range axis'} "
                f"(input shape {shape})")
        axes.add(a)
    return _view(x, [d for i, d in enumerate(shape) if i not in axes])


@opencl_kernel("Shape")
def shape(x, *, out_type):
    return np.array(x.shape, dtype=out_type.as_numpy_dtype)


@opencl_kernel("ShapeN")
def shape_n(*xs, out_type):
    return tuple(np.array(x.shape, dtype=out_type.as_numpy_dtype) for x in xs)


@opencl_kernel("Size")
def size(x, *, out_type):
    return np.asarray(int(np.prod(x.shape, dtype=np.int64)), dtype=out_type.as_numpy_dtype)


@opencl_kernel("Rank")
def rank(x):
    return np.asarray(len(x.shape), dtype=np.int32)


@opencl_kernel("BroadcastGradientArgs", host_inputs=(0, 1))
def broadcast_gradient_args(s0, s1):
    return kernel_util.broadcast_gradient_args(s0, s1)
