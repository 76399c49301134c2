"""CPU kernels for the resource-variable ops (`flowgraph/ops/resource_variable_ops.py`)
and the ``Resource(Sparse)Apply*`` optimizer updates (``ResourceStridedSliceAssign``'s
update is `kernels_slice_assign.assigned`).

A ``VarHandleOp`` outputs the variable's `VariableState` from the session's resource
container (by shared name: the same storage a ``VariableV2`` of that name uses); every
other kernel here receives that state as its first input. Writes store a new array, as
the reference kernels do, so an array an earlier read handed out never changes; the
optimizer updates run the reference kernels (`kernels_training.py`) on the same state.
"""

from __future__ import annotations

import sys

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu import kernels_scatter as _scatter
from flowgraph.backends.cpu import kernels_slice_assign as _slice_assign
from flowgraph.backends.cpu import kernels_training as _training
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState


@cpu_kernel("VarHandleOp")
class VarHandle:
    """Outputs the variable's storage (created empty on first use)."""

    def __init__(self, ctx, *, container, shared_name, **_):
        name = shared_name or ctx.op.name
        self.state = ctx.resources.lookup_or_create(container, name, VariableState)

    def __call__(self):
        return self.state


def _state(handle, op) -> VariableState:
    if not isinstance(handle, VariableState):
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': input 0 must be a variable handle (a "
            f"VarHandleOp's output), got {type(handle).__name__}")
    return handle


def _read(handle: VariableState, op) -> np.ndarray:
    value = _state(handle, op).value
    if value is None:
        raise errors.FailedPreconditionError(
            None, None,
            f"Could not find variable {handle.name}. This could mean that the variable has "
            "been deleted. In TF1, it can also mean the variable is uninitialized. Debug "
            "info: container=localhost, status error message=Container localhost does not "
            f"exist. (Could not find resource: localhost/{handle.name}) (read by op "
            f"'{op.name}' ({op.type}); run the "
            "variable's initializer, e.g. tf.global_variables_initializer(), or restore it "
            "from a checkpoint first)")
    return value


def _readonly(value: np.ndarray) -> np.ndarray:
    if type(value) is np.ndarray:
        value = value.view()
        value.flags.writeable = False
    return value


@cpu_kernel("ReadVariableOp")
def read_variable(handle, *, op):
    value = _read(handle, op)
    want = op.outputs[0].dtype.base_dtype.as_numpy_dtype
    if value.dtype != want:
        raise errors.InvalidArgumentError(
            None, None, f"ReadVariableOp '{op.name}': trying to read variable "
            f"'{handle.name}' with dtype {np.dtype(want).name}, but it holds "
            f"{value.dtype.name}")
    return _readonly(value)


def _check_dtype(handle, value, op):
    want = op.inputs[0].op.attrs.get("dtype") if op.inputs[0].op.type == "VarHandleOp" \
        else None
    if want is not None and np.asarray(value).dtype != want.as_numpy_dtype:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': variable '{handle.name}' has dtype "
            f"{want.name}, got a {np.asarray(value).dtype.name} value")


@cpu_kernel("AssignVariableOp")
def assign_variable(handle, value, *, op, validate_shape=False):
    state = _state(handle, op)
    _check_dtype(state, value, op)
    with state.lock:
        if validate_shape and state.value is not None and state.value.shape != \
                np.shape(value):
            raise errors.InvalidArgumentError(
                None, None, f"Trying to assign to variable with tensor with wrong shape. "
                f"Expected {list(state.value.shape)} got {list(np.shape(value))} "
                f"(op '{op.name}', variable '{state.name}')")
        state.value = np.array(value, copy=True)  # later in-place updates never alias


def _update(ufunc, what: str):
    def kernel(handle, value, *, op):
        state = _state(handle, op)
        with state.lock:
            current = _read(state, op)
            if current.shape != np.shape(value):
                raise errors.InvalidArgumentError(
                    None, None, f"{what} '{op.name}': variable '{state.name}' has shape "
                    f"{list(current.shape)} but the update has shape {list(np.shape(value))}"
                    "; the shapes must be equal (no broadcasting)")
            state.value = ufunc(current, value, dtype=current.dtype)

    kernel.__name__ = what
    return kernel


cpu_kernel("AssignAddVariableOp")(_update(np.add, "AssignAddVariableOp"))
cpu_kernel("AssignSubVariableOp")(_update(np.subtract, "AssignSubVariableOp"))


@cpu_kernel("VarIsInitializedOp")
def var_is_initialized(handle, *, op):
    return np.array(_state(handle, op).value is not None)


@cpu_kernel("VariableShape")
def variable_shape(handle, *, op, out_type):
    return np.asarray(_read(handle, op).shape, dtype=out_type.as_numpy_dtype)


@cpu_kernel("ResourceGather", fresh=True)
def resource_gather(handle, indices, *, op, batch_dims=0):
    value = _read(handle, op)
    idx = np.asarray(indices)
    if value.ndim < batch_dims + 1 or idx.ndim < batch_dims or \
            value.shape[:batch_dims] != idx.shape[:batch_dims]:
        raise errors.InvalidArgumentError(
            None, None, f"ResourceGather '{op.name}': with batch_dims={batch_dims} the "
            f"variable '{handle.name}' (shape {list(value.shape)}) needs more than "
            f"{batch_dims} dimensions and the indices (shape {list(idx.shape)}) the same "
            f"first {batch_dims}")
    _scatter._check_rows(op.type, handle.name, idx, value.shape[batch_dims])
    idx = idx.astype(np.int64)
    if not batch_dims:
        return np.take(value, idx, axis=0)
    batch = int(np.prod(idx.shape[:batch_dims], dtype=np.int64))
    rows = value.reshape(batch, *value.shape[batch_dims:])
    flat = idx.reshape(batch, -1)
    out = rows[np.arange(batch)[:, None], flat]
    return out.reshape(idx.shape + value.shape[batch_dims + 1:])


@cpu_kernel("ResourceCountUpTo", fresh=True)
def resource_count_up_to(handle, *, limit, op):
    state = _state(handle, op)
    with state.lock:
        current = np.asarray(_read(state, op))
        if current >= limit:
            raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
        state.value = np.asarray(current + 1, dtype=current.dtype)
    return np.array(current, dtype=current.dtype)


def _scatter_kernel(kind: str):
    def kernel(handle, indices, updates, *, op):
        state = _state(handle, op)
        with state.lock:
            current = _read(state, op)
            idx = np.asarray(indices, dtype=np.int64)
            _scatter._check_rows(op.type, state.name, idx,
                                 current.shape[0] if current.ndim else 0)
            new = np.array(current, copy=True)
            upd = np.broadcast_to(updates, idx.shape + current.shape[1:])
            _scatter._apply(kind, new, idx, upd)
            state.value = new

    kernel.__name__ = f"ResourceScatter{kind}"
    return kernel


for _kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
    cpu_kernel(f"ResourceScatter{_kind}")(_scatter_kernel(_kind))


def _scatter_nd_kernel(kind: str):
    def kernel(handle, indices, updates, *, op, use_locking=True):
        state = _state(handle, op)
        with state.lock:
            current = _read(state, op)
            state.value = _scatter._scatter_nd(op.type, state.name, kind, current,
                                               indices, updates)

    kernel.__name__ = f"ResourceScatterNd{kind}"
    return kernel


for _kind in ("Update", "Add", "Sub", "Max", "Min"):
    cpu_kernel(f"ResourceScatterNd{_kind}")(_scatter_nd_kernel(_kind))


@cpu_kernel("ResourceStridedSliceAssign")
def resource_strided_slice_assign(handle, begin, end, strides, value, *, op, **attrs):
    masks = {m: attrs.get(m, 0) for m in _slice_assign.MASKS}
    state = _state(handle, op)
    with state.lock:
        state.value = _slice_assign.assigned(op, state.name, _read(state, op), begin, end,
                                             strides, value, masks)


# References to a variable's array when nothing but its state holds it: the state's
# attribute, `_unshare`'s local name and `sys.getrefcount`'s argument.
_UNSHARED_REFS = 3


def _unshare(states) -> None:
    """Copy-on-write, as TensorFlow's resource variables: a read (`read_variable`) hands
    out a view of the variable's array; while one is alive, an in-place update first
    gives the variable a copy, so the read keeps the value it had."""
    for state in states:
        value = state.value
        if value is not None and sys.getrefcount(value) > _UNSHARED_REFS:
            state.value = np.array(value, copy=True)
        del value


def _resource_apply(base, num_refs: int):
    """The ``Resource*`` form of reference update kernel `base`: the same update on the
    handles' states (copied first where a read still holds them), no output."""

    def kernel(*inputs, use_locking=False, op=None, use_nesterov=False, update_slots=True):
        _unshare(inputs[:num_refs])
        base(*inputs, use_locking=use_locking, op=op, use_nesterov=use_nesterov,
             update_slots=update_slots)

    kernel.__name__ = kernel.__qualname__ = f"Resource{base.__name__}"
    return kernel


def _register_updates() -> None:
    from flowgraph.ops.training_ops import _SIGNATURES

    for dense_op, rule_name in _training._OPS.items():
        for op_type in (dense_op, "Sparse" + dense_op):
            base = _training._make_kernel(op_type, rule_name, op_type.startswith("Sparse"))
            cpu_kernel("Resource" + op_type, dtypes=_training._FLOATS)(
                _resource_apply(base, _SIGNATURES[op_type][1]))


_register_updates()
