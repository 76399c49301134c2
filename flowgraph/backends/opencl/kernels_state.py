"""OpenCL kernels for variables: `VariableV2`, `Assign`, `AssignAdd`, `AssignSub`,
`IsVariableInitialized`.

A variable placed on an OpenCL device keeps its value on that device: the `VariableState`
in the session's resource container (the same object the CPU kernels use) holds a
`pyopencl.array.Array` as its ``.value``. Ops grouped with the variable by placement (the
ones taking it as a ref input: assignments, optimizer updates) update it there; a reader
on the same device receives the device array itself, and a reader on another device reads
it through a `_Send`/`_Recv` pair whose send side dereferences the variable
(`flowgraph.runtime.partition`). ``Session.run`` copies a fetched variable to the host.

`Assign` stores a fresh device copy of its value (later in-place updates never alias the
value's producer); `AssignAdd`/`AssignSub` store a new array ``var ± value``, as the CPU
kernels do, so that an array a reader already holds never changes under it.

Example
-------
>>> import flowgraph as tf                                    # doctest: +SKIP
>>> with tf.device("/gpu:0"):                                 # doctest: +SKIP
...     v = tf.Variable([1.0, 2.0])
...     up = tf.assign_add(v, [1.0, 1.0])
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.opencl import backend, opencl_kernel
from flowgraph.backends.opencl.kernels_elementwise import (
    CAST_DTYPES,
    NUMERIC,
    _source,
    cached_elementwise,
    check_dtype,
    copy,
    fill,
    on_device,
    run_elementwise,
)
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState


def device_value(ref: VariableState, rt, op_name: str = ""):
    """The variable's value as a device array on `rt`; a host array left there (by a CPU
    kernel of a session sharing the container, or a restore) is uploaded once."""
    value = ref.read(op_name)
    if not hasattr(value, "base_data"):
        value = ref.value = rt.to_device(np.asarray(value))
    return value


opencl_kernel("VariableV2", dtypes=CAST_DTYPES)(kernel_util.VariableKernel)


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


@opencl_kernel("Assign", dtypes=CAST_DTYPES)
def assign(ref, value, *, validate_shape=True):
    """Store a device copy of `value` in variable `ref`."""
    rt, (value,) = on_device(value)
    check_dtype(rt, value.dtype, "Assign")
    current = ref.value
    if validate_shape and current is not None and tuple(current.shape) != value.shape:
        raise _invalid(
            f"Assign: variable '{ref.name}' has shape {tuple(current.shape)} but the value "
            f"has shape {value.shape}; shapes must match (pass validate_shape=False to "
            "replace the shape)")
    fresh = copy(rt, value)
    with ref.lock:
        ref.value = fresh
    return ref


def _assign_update(op_type: str, binary: str):
    def kernel(ref, value, *, op):
        rt, (value,) = on_device(value)
        with ref.lock:
            current = device_value(ref, rt, op.name)
            if current.shape != value.shape:
                raise _invalid(
                    f"{op_type}: variable '{ref.name}' has shape {current.shape} but the "
                    f"update has shape {value.shape}; the shapes must be equal (no "
                    "broadcasting).")
            if value.dtype != current.dtype:
                raise _invalid(f"{op_type}: variable '{ref.name}' has dtype "
                               f"{current.dtype.name} but the update {value.dtype.name}")
            check_dtype(rt, current.dtype, op_type)
            # the launch is kept per layout of both operands (`launches`), as for `binary`
            sig = (op_type, current.shape, current.strides, current.offset, current.dtype,
                   value.shape, value.strides, value.offset, value.dtype)
            out = cached_elementwise(sig, current, value) if current.size else None
            if out is None:
                out = run_elementwise(_source(2, current.dtype), binary,
                                      rt.empty(current.shape, current.dtype),
                                      (current, value), op_type, signature=sig)
            ref.value = out
        return ref

    kernel.__name__ = kernel.__qualname__ = f"opencl_{op_type.lower()}"
    kernel.__doc__ = f"`{op_type}`: the variable becomes a new device array."
    return kernel


opencl_kernel("AssignAdd", dtypes=NUMERIC)(_assign_update("AssignAdd", "Add"))
opencl_kernel("AssignSub", dtypes=NUMERIC)(_assign_update("AssignSub", "Sub"))


@opencl_kernel("IsVariableInitialized")
class IsVariableInitializedKernel:
    """A device bool scalar: whether the variable holds a value in this session."""

    def __init__(self, ctx):
        self.rt = backend.runtime(ctx.device)

    def __call__(self, ref):
        return fill(self.rt, (), np.bool_, ref.is_initialized())
