"""CPU kernels for the optimizer update ops (`flowgraph/ops/training_ops.py`).

Each kernel validates shapes and dtypes, then runs one fused Cython loop
(`_training.pyx`) that updates the variable and its accumulators *in place* — no array
is allocated per step — and returns the variable's storage (the op's ref output).

Two paths, the same bits. A kernel first hands its inputs to its op type's
`_training.Update`, which checks them and runs the loop in one C call (~0.5 us for a small
variable) when they need nothing done: storages that can be updated in place, 0-d
hyperparameters and a C-contiguous gradient of the variable's dtype and shape, an update
below the kernel threads' grain. It declines anything else, having written nothing, and
the checked path below converts (a gradient of another dtype or layout, Python numbers,
int32 indices from a list, a storage to realign) or raises the error that names the
problem.
With ``use_locking=True`` the storages' locks are held during the update (in a fixed
order, so two updates never deadlock); otherwise concurrent updates race, as in TF.

Large updates run on the kernel threads (`kernel_pool`): dense ones by ranges of elements,
sparse ones by bands of rows, each with the same loop as on one thread (bitwise the
one-thread result).

A float16 variable takes the checked path (the C loops are float32/float64 only): its
storage and slots (a sparse update's rows only, but for Adam) are copied to float32, the
float32 rule runs on the copies and the results are rounded back into the float16 storages
in place, as TF's half kernels compute in float and round.

A storage that is not a C-contiguous, writeable, native-endian array (e.g. restored from a
file as a view), or a large one whose data does not start on a 64-byte cache line, is
replaced once by such a copy; later steps update that copy in place.

Example
-------
>>> import numpy as np
>>> from flowgraph.framework.resources import VariableState
>>> var = VariableState("v"); var.value = np.array([1.0, 2.0])
>>> out = apply_gradient_descent(var, np.asarray(0.5), np.array([2.0, 2.0]),
...                              use_locking=False, op=None)
>>> out.value
array([0., 1.])
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.cpu import _training, cpu_kernel, kernel_pool
from flowgraph.framework import errors
from flowgraph.framework.resources import VariableState

_FLOATS = ("float16", "float32", "float64")
_FLOAT_TYPES = (np.float32, np.float64)  # what the Cython loops run; float16 goes via float32


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


# Storages at least this large are kept 64-byte aligned (see `_storage`).
_ALIGN_BYTES = 64
_ALIGN_MIN_BYTES = 4096


def _aligned_copy(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous, native-endian copy of `arr`; a large one (a view of a byte buffer)
    starts on a 64-byte line, a small one owns its data."""
    dt = arr.dtype.newbyteorder("=")
    if arr.nbytes < _ALIGN_MIN_BYTES:
        return np.array(arr, order="C", dtype=dt, copy=True)
    buf = np.empty(arr.nbytes + _ALIGN_BYTES, np.uint8)
    start = -buf.ctypes.data % _ALIGN_BYTES
    out = buf[start:start + arr.nbytes].view(dt).reshape(arr.shape)
    out[...] = arr
    return out


def _storage(state: VariableState, what: str, op) -> np.ndarray:
    """The variable's array, made C-contiguous, writeable and (when large) 64-byte
    aligned once if it is not.

    Why aligned: NumPy's allocator starts large arrays 16 bytes past a page (malloc's
    header), so the variable and its slots sit at different offsets within a cache line;
    the vector loops' stores then straddle lines. Adam on a 784x512 float32 variable takes
    ~131 us with the offsets an MLP's storages had, ~115 us with all three written arrays
    on 64-byte lines (2 vCPUs of an AMD EPYC), the same bits either way.
    """
    arr = state.read(op.name if op is not None else "")
    if type(arr) is not np.ndarray or not _training.storage_ok(arr, _ALIGN_BYTES,
                                                                _ALIGN_MIN_BYTES):
        arr = _aligned_copy(np.asarray(arr))
        state.value = arr
    return arr


def _scalar(x, name: str, dtype) -> float:
    if getattr(x, "ndim", None) != 0 and np.ndim(x) != 0:  # (ndarray fast path first)
        raise _invalid(f"{name} is not a scalar: shape {np.shape(x)}")
    return dtype.type(x)


def _dense_grad(grad, var: np.ndarray, what: str) -> np.ndarray:
    if (type(grad) is np.ndarray and grad.shape == var.shape and grad.dtype == var.dtype
            and grad.flags.c_contiguous):
        return grad  # (the common case, without the checks' cost)
    g = np.asarray(grad)
    if g.shape != var.shape:
        raise _invalid(f"var and {what} do not have the same shape: var {list(var.shape)}, "
                       f"{what} {list(g.shape)}")
    if g.dtype != var.dtype or not g.flags.c_contiguous:
        g = np.ascontiguousarray(g, dtype=var.dtype)
    return g


# -- per rule: (Cython rule id, its six hyperparameters, its flag) -----------------------
# A hyperparameter is an input's name, None (0.0), or `_ADAM_ALPHA`: Adam's bias-corrected
# step size from its lr, beta1_power and beta2_power. The flag is an attribute's name or a
# constant.
_ADAM_ALPHA = ("lr", "beta1_power", "beta2_power")
_RULES = {
    "GradientDescent": (_training.SGD, ("alpha",), 0),
    "Momentum": (_training.MOMENTUM, ("lr", "momentum"), "use_nesterov"),
    "Adagrad": (_training.ADAGRAD, ("lr",), "update_slots"),
    "Adam": (_training.ADAM, (_ADAM_ALPHA, "beta1", "beta2", "epsilon"), "use_nesterov"),
    "RMSProp": (_training.RMSPROP, ("lr", "rho", "momentum", "epsilon"), 0),
    "CenteredRMSProp": (_training.CENTERED_RMSPROP, ("lr", "rho", "momentum", "epsilon"), 0),
    "Ftrl": (_training.FTRL, ("lr", "l1", "l2", None, "lr_power"), 0),
    "FtrlV2": (_training.FTRL, ("lr", "l1", "l2", "l2_shrinkage", "lr_power"), 1),
    "Adadelta": (_training.ADADELTA, ("lr", "rho", "epsilon"), 0),
}
_FLAG_FROM = {"use_nesterov": _training.FLAG_USE_NESTEROV,
              "update_slots": _training.FLAG_UPDATE_SLOTS}

# Each op type's `_training.Update`, the kernels' path for inputs that need no conversion.
# A module global, not a closure variable: the plan cache shares a kernel's closure only
# when it holds plain data and functions (`flowgraph/runtime/plan_cache.py`, `_relink`).
_UPDATES: dict[str, _training.Update] = {}


def _hyper(spec: tuple, s: dict, dt: np.dtype) -> tuple:
    """The six hyperparameters of `spec` from the scalars `s` (NumPy scalars of `dt`)."""
    hp = [0.0] * 6
    for k, name in enumerate(spec):
        if name is _ADAM_ALPHA:
            # In C: NumPy scalar arithmetic gave the same bits at ~3.5 us per update.
            hp[k] = _training.adam_alpha(s["lr"], s["beta1_power"], s["beta2_power"],
                                         dt.type is np.float32)
        elif name is not None:
            hp[k] = float(s[name])
    return tuple(hp)


def _make_kernel(op_type: str, rule_name: str, sparse: bool):
    from flowgraph.ops.training_ops import _SIGNATURES

    names, num_refs, _ = _SIGNATURES[op_type]
    rule, spec, flag_attr = _RULES[rule_name]
    pos = {n: k for k, n in enumerate(names)}
    grad_at = pos.get("grad", pos.get("delta"))
    idx_at = pos.get("indices")
    scalar_names = tuple(dict.fromkeys(n for h in spec if h is not None
                                       for n in (h if h is _ADAM_ALPHA else (h,))))
    scalar_at = [(n, pos[n]) for n in scalar_names]
    # Every scalar input is a hyperparameter, so the direct path reads (checks) them all.
    assert {p for _, p in scalar_at} == set(range(num_refs, len(names))) - {grad_at, idx_at}
    ref_names = names[:num_refs]
    # Cython slot order (s0, s1, s2) per rule; centered RMSProp's op order is mg, ms, mom.
    slot_order = (2, 3, 1) if rule_name == "CenteredRMSProp" else tuple(range(1, num_refs))
    _UPDATES[op_type] = _direct_path(rule, spec, flag_attr, pos, num_refs, slot_order,
                                     grad_at, idx_at)

    def checked(inputs, op, flag: int) -> None:
        """The update with every check and conversion (what `_UPDATES` declines)."""
        var = _storage(inputs[0], "var", op)
        dt = var.dtype
        if dt.type not in _FLOAT_TYPES and dt.type is not np.float16:
            raise _invalid(f"{op_type} supports float32 and float64 variables, got "
                           f"{dt.name} (float16 ones are updated in float32); cast the "
                           "variable to one of these float types")
        slots = []
        for k in range(1, num_refs):
            s = _storage(inputs[k], ref_names[k], op)
            if s.shape != var.shape or s.dtype != dt:
                raise _invalid(f"var and {ref_names[k]} do not have the same shape and "
                               f"dtype: var {list(var.shape)} {dt.name}, "
                               f"{ref_names[k]} {list(s.shape)} {s.dtype.name}")
            slots.append(s)
        stores, rows = (), None  # float16: storages to round the float32 results into
        indices = inputs[idx_at] if sparse else None
        if dt.type is np.float16:
            stores = (var, *slots)
            rows = _half_rows(rule, var, indices) if sparse else None
            if rows is None:
                var, *slots = (a.astype(np.float32) for a in stores)
            else:
                rows, indices = rows
                var, *slots = (a[rows].astype(np.float32) for a in stores)
            dt = var.dtype
        ordered = [slots[k - 1] for k in slot_order] + [var] * (3 - len(slots))
        hp = _hyper(spec, {n: _scalar(inputs[p], n, dt) for n, p in scalar_at}, dt)
        if not sparse:
            g = _dense_grad(inputs[grad_at], var, "grad")
            _dense_update(rule, var, ordered, g, hp, flag)
        else:
            _sparse_update(op_type, rule, var, ordered, inputs[grad_at], indices, hp, flag)
        for store, result in zip(stores, (var, *slots)):
            if rows is None:
                np.copyto(store, result, casting="same_kind")  # rounds to float16
            else:
                store[rows] = result

    # The flag attributes are named (not **attrs) so that binding passes only those the
    # op has: fewer keywords to merge on every call.
    lr_at = pos["lr"] if sparse and rule == _training.FTRL else None

    def kernel(*inputs, use_locking=False, op=None, use_nesterov=False, update_slots=True):
        if lr_at is not None:
            _check_ftrl_lr(inputs[lr_at], op_type, op)
        if use_locking:
            with kernel_util.locked(inputs[:num_refs], True):
                if not _UPDATES[op_type](inputs, use_nesterov, update_slots):
                    checked(inputs, op, _flag(flag_attr, use_nesterov, update_slots))
        elif not _UPDATES[op_type](inputs, use_nesterov, update_slots):
            checked(inputs, op, _flag(flag_attr, use_nesterov, update_slots))
        return inputs[0]

    kernel.__name__ = kernel.__qualname__ = op_type
    kernel.__doc__ = f"In-place `{op_type}` ({'sparse' if sparse else 'dense'} {rule_name})."
    return kernel


def _check_ftrl_lr(lr, op_type: str, op) -> None:
    """TensorFlow's sparse FTRL kernels refuse a learning rate that is not > 0 (the
    update would divide by it); the dense ones do not check."""
    value = np.asarray(lr)
    if value.ndim == 0 and value > 0:
        return
    name = getattr(op, "name", "?")
    raise _invalid(f"lr is not a positive scalar (or zero if multiply_linear_by_lr is set): "
                   f"{list(value.shape)} (op '{name}' ({op_type}) got lr={value.tolist()}; "
                   "pass FtrlOptimizer a learning_rate > 0)")


def _direct_path(rule: int, spec: tuple, flag_attr, pos: dict, num_refs: int,
                 slot_order: tuple, grad_at: int, idx_at: int | None) -> _training.Update:
    """The `_training.Update` of an op type: its rule and where each of its inputs is."""
    return _training.Update(
        rule, len(pos), num_refs, (*slot_order, *(0,) * (3 - len(slot_order))),
        tuple(-1 if h is None or h is _ADAM_ALPHA else pos[h] for h in spec)
        + (-1,) * (6 - len(spec)),
        tuple(pos[n] for n in _ADAM_ALPHA) if _ADAM_ALPHA in spec else (),
        grad_at, -1 if idx_at is None else idx_at,
        _FLAG_FROM.get(flag_attr, _training.FLAG_CONSTANT),
        flag_attr if type(flag_attr) is int else 0,
        kernel_pool.GRAIN, _ALIGN_BYTES, _ALIGN_MIN_BYTES)


def _half_rows(rule: int, var: np.ndarray, indices):
    """(rows, their positions in `rows` per index) of a float16 sparse update: only those
    rows are copied to float32 and back. None (copy all) for Adam, which moves every row,
    and for indices the checks of `_sparse_update` will refuse."""
    idx = np.asarray(indices)
    if (rule == _training.ADAM or var.ndim < 1 or idx.ndim != 1 or idx.dtype.kind not in "iu"
            or idx.size == 0 or idx.min() < 0 or idx.max() >= var.shape[0]):
        return None
    rows, local = np.unique(idx, return_inverse=True)
    return rows, local.reshape(-1)


def _flag(flag_attr, use_nesterov: bool, update_slots: bool) -> int:
    if flag_attr == "use_nesterov":
        return int(use_nesterov)
    if flag_attr == "update_slots":
        return int(update_slots)
    return flag_attr


def _dense_update(rule, var, slots, g, hp, flag) -> None:
    """`_training.apply_dense`, by element ranges on the kernel threads when large."""
    n = var.size
    if n < 2 * kernel_pool.GRAIN["update"] or kernel_pool.threads() < 2:
        _training.apply_dense(rule, var, slots[0], slots[1], slots[2], g, hp, flag)
        return
    if any(np.may_share_memory(g, a) for a in (var, *slots)):
        g = g.copy()  # (apply_dense would copy it per chunk, after others wrote to it)
    var1, s0, s1, s2, g1 = (a.reshape(-1) for a in (var, *slots, g))

    def chunk(a: int, b: int) -> None:
        _training.apply_dense(rule, var1[a:b], s0[a:b], s1[a:b], s2[a:b], g1[a:b], hp, flag)

    kernel_pool.parallel_for(n, chunk, grain=kernel_pool.GRAIN["update"])


def _sparse_update(op_type, rule, var, slots, grad, indices, hp, flag) -> None:
    if var.ndim < 1:
        raise _invalid(f"{op_type}: var must be at least 1 dimensional, got a scalar")
    idx = np.asarray(indices)
    if idx.ndim != 1:
        raise _invalid(f"{op_type}: indices must be one-dimensional, got shape "
                       f"{list(idx.shape)}")
    g = np.asarray(grad)
    if g.ndim < 1 or g.shape[0] != idx.shape[0] or g.shape[1:] != var.shape[1:]:
        raise _invalid(f"{op_type}: grad must have shape [len(indices)] + var.shape[1:] = "
                       f"{[idx.shape[0], *var.shape[1:]]}, got {list(g.shape)}")
    if g.dtype != var.dtype or not g.flags.c_contiguous:
        g = np.ascontiguousarray(g, dtype=var.dtype)
    idx64 = np.ascontiguousarray(idx, dtype=np.int64)
    bad = _sparse_apply(rule, var, slots, g, idx64, hp, flag)
    if bad >= 0:
        raise _invalid(f"{op_type}: indices[{bad}] = {int(idx64[bad])} is not in "
                       f"[0, {var.shape[0]})")


def _sparse_apply(rule, var, slots, g, idx, hp, flag) -> int:
    """`_training.apply_sparse` (-1, or the position of the first bad index), by bands of
    rows on the kernel threads when large. Each band gets its rows' gradients in sorted
    index order, duplicates in their original order, as the one-thread loop visits them:
    the same sums, the same bits."""
    rows = var.shape[0]
    width = var.size // rows if rows else 0
    work = var.size if rule == _training.ADAM else idx.size * width  # Adam decays all rows
    if work < 2 * kernel_pool.GRAIN["update"] or kernel_pool.threads() < 2 or rows < 2:
        return _training.apply_sparse(rule, var, slots[0], slots[1], slots[2], g, idx, hp,
                                      flag)
    bad = (idx < 0) | (idx >= rows)
    if bad.any():
        return int(np.argmax(bad))
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    g_sorted = g.reshape(idx.size, width)[order]  # a copy: never aliases the state
    var2, s0, s1, s2 = (a.reshape(rows, width) for a in (var, *slots))

    def band(r0: int, r1: int) -> None:
        lo, hi = np.searchsorted(sorted_idx, (r0, r1))
        _training.apply_sparse(rule, var2[r0:r1], s0[r0:r1], s1[r0:r1], s2[r0:r1],
                               g_sorted[lo:hi], sorted_idx[lo:hi] - r0, hp, flag)

    kernel_pool.parallel_for(rows, band, align=1,
                             grain=-(-kernel_pool.GRAIN["update"] * rows // work))
    return -1


_OPS = {
    "ApplyGradientDescent": "GradientDescent", "ApplyMomentum": "Momentum",
    "ApplyAdagrad": "Adagrad", "ApplyAdam": "Adam", "ApplyRMSProp": "RMSProp",
    "ApplyCenteredRMSProp": "CenteredRMSProp", "ApplyFtrl": "Ftrl", "ApplyFtrlV2": "FtrlV2",
    "ApplyAdadelta": "Adadelta",
}

for _dense_op, _rule_name in _OPS.items():
    cpu_kernel(_dense_op, dtypes=_FLOATS)(_make_kernel(_dense_op, _rule_name, False))
    _sparse_op = "Sparse" + _dense_op
    cpu_kernel(_sparse_op, dtypes=_FLOATS)(_make_kernel(_sparse_op, _rule_name, True))

apply_gradient_descent = _make_kernel("ApplyGradientDescent", "GradientDescent", False)
