"""CPU kernels for variables (storage lives in the session's resource container)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState

cpu_kernel("VariableV2")(kernel_util.VariableKernel)


def _check_shape(ref: VariableState, value: np.ndarray, what: str) -> None:
    if ref.value is not None and ref.value.shape != value.shape:
        raise errors.InvalidArgumentError(
            None, None,
            f"{what} requires shapes of both tensors to match. lhs shape= "
            f"{list(ref.value.shape)} rhs shape= {list(value.shape)} (variable "
            f"'{ref.name}'; pass validate_shape=False to replace the shape)"
        )


@cpu_kernel("Assign")
def assign(ref, value, *, validate_shape=True):
    if validate_shape:
        _check_shape(ref, value, "Assign")
    with ref.lock:
        ref.value = np.array(value, copy=True)  # later in-place updates never alias
    return ref


def _check_update_shape(ref: VariableState, current: np.ndarray, value: np.ndarray,
                        what: str) -> None:
    if current.shape != np.shape(value):
        raise errors.InvalidArgumentError(
            None, None,
            f"{what}: variable '{ref.name}' has shape {current.shape} but the update has "
            f"shape {np.shape(value)}; the shapes must be equal (no broadcasting)."
        )


@cpu_kernel("AssignAdd")
def assign_add(ref, value, *, op):
    with ref.lock:
        current = ref.read(op.name)
        _check_update_shape(ref, current, value, "AssignAdd")
        ref.value = np.add(current, value, dtype=current.dtype)
    return ref


@cpu_kernel("AssignSub")
def assign_sub(ref, value, *, op):
    with ref.lock:
        current = ref.read(op.name)
        _check_update_shape(ref, current, value, "AssignSub")
        ref.value = np.subtract(current, value, dtype=current.dtype)
    return ref


@cpu_kernel("IsVariableInitialized")
def is_variable_initialized(ref):
    return np.array(ref.is_initialized())


@cpu_kernel("ReportUninitializedVariables")
def report_uninitialized_variables(*refs, names):
    missing = [n for r, n in zip(refs, names) if not r.is_initialized()]
    out = np.empty(len(missing), dtype=object)
    out[:] = [n.encode() for n in missing]
    return out


@cpu_kernel("ReadVariableOrDefault")
def read_variable_or_default(ref, default):
    value = ref.value
    return default if value is None else value
