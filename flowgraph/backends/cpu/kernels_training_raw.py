"""CPU kernels for TensorFlow's further optimizer updates (`flowgraph/ops/training_ops.py`):
AdaMax, AdagradV2, Adagrad dual averaging, AddSign, PowerSign, the proximal Adagrad and
gradient-descent updates, Keras's momentum and Adam with AMSGrad, in their dense,
sparse (``SparseApply*``) and resource-variable (``Resource*``) forms; and the
warm-start remapping ops and ``SdcaOptimizerV2`` (`flowgraph/ops/training_raw_ops.py`).

Each rule is written once in NumPy on whole arrays of the variable's dtype, in the order
of operations TensorFlow's kernels use, so that float32 and float64 results are TF's bits
(or within one unit in the last place where TF's vectorized ``exp``/``rsqrt`` round
differently). A dense update writes the results into the variable's storage and slots in
place; a float16 variable is updated in float32 and rounded back, as in
`kernels_training`.

A sparse update visits ``indices`` in order, as TensorFlow's kernels do: a row named
twice is updated twice (its second gradient sees the first update). The loop runs over
*rounds* rather than indices: round ``k`` takes the ``k``-th occurrence of every distinct
index, so each round is one vectorized gather-update-scatter over distinct rows, and a
batch without duplicates is a single round.

Example
-------
>>> import numpy as np
>>> from flowgraph.framework.resources import VariableState
>>> var = VariableState("v"); var.value = np.array([1.0, -2.0])
>>> kernel = KERNELS["ApplyProximalGradientDescent"]
>>> kernel(var, np.float64(0.5), np.float64(0.2), np.float64(0.0),
...        np.array([1.0, 1.0]), op=None).value
array([ 0.4, -2.4])
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends import kernel_util
from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_resource_variable import _resource_apply
from flowgraph.backends.cpu.kernels_sdca import sdca_optimizer
from flowgraph.backends.cpu.kernels_training import _storage
from flowgraph.framework import errors
from flowgraph.framework.asset_file import read_text_lines
from flowgraph.framework.checkpoint_file import CheckpointReader

_FLOATS = ("float16", "float32", "float64")


def _invalid(msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, msg)


# -- the rules: (var, slots, grad, scalars, flags) -> (new var, new slots) ---------------
# `s` maps each hyperparameter input's name to a NumPy scalar of the variable's dtype
# (``global_step`` to the step converted to that dtype); arrays are the variable's dtype.


def _prox(prox, lr, l1, l2):
    """The proximal step of L1/L2 regularization of `prox` at rate `lr` (a scalar or an
    array), as TensorFlow's proximal kernels compute it."""
    one = prox.dtype.type(1)
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (one + l2 * lr)
    return prox / (one + l2 * lr)


def _proximal_gradient_descent(var, slots, g, s, flags):
    alpha = s["alpha"]
    one = var.dtype.type(1)
    prox = var - g * alpha
    if s["l1"] > 0:
        new = np.sign(prox) * np.maximum(np.abs(prox) - alpha * s["l1"], 0) / \
            (one + s["l2"] * alpha)
    else:
        new = prox / (one + s["l2"] * alpha)
    return new, []


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """``1 / sqrt(x)`` rounded once (float32 through float64). TensorFlow's vectorized
    float32 ``rsqrt`` is a hardware estimate refined by a Newton step, which can differ
    from it by an ulp; this is the correctly rounded value."""
    if x.dtype == np.float32:
        return (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    return x.dtype.type(1) / np.sqrt(x)


def _exp(x: np.ndarray) -> np.ndarray:
    """``exp(x)``, float32 through float64 (correctly rounded, as TF's float32 exp
    gives on these inputs)."""
    if x.dtype == np.float32:
        return np.exp(x.astype(np.float64)).astype(np.float32)
    return np.exp(x)


def _proximal_adagrad(var, slots, g, s, flags):
    accum = slots[0] + g * g
    rate = s["lr"] * _rsqrt(accum)
    return _prox(var - g * rate, rate, s["l1"], s["l2"]), [accum]


def _sparse_proximal_adagrad(var, slots, g, s, flags):
    """TensorFlow's sparse kernel divides by the square root per row, without the dense
    kernel's vectorized rsqrt."""
    accum = slots[0] + g * g
    rate = s["lr"] * (var.dtype.type(1) / np.sqrt(accum))
    return _prox(var - g * rate, rate, s["l1"], s["l2"]), [accum]


def _adagrad_v2(var, slots, g, s, flags):
    accum = slots[0] + g * g if flags.get("update_slots", True) else slots[0]
    return var - g * s["lr"] / (np.sqrt(accum) + s["epsilon"]), [accum]


def _adagrad_da(var, slots, g, s, flags):
    g_sum, sq_sum = slots[0] + g, slots[1] + g * g
    step, lr = s["global_step"], s["lr"]
    den = s["l2"] * step * lr + np.sqrt(sq_sum)
    if s["l1"] > 0:
        num = -lr * np.sign(g_sum) * np.maximum(np.abs(g_sum) - s["l1"] * step, 0)
    else:
        num = -lr * g_sum
    return num / den, [g_sum, sq_sum]


def _sparse_adagrad_da(var, slots, g, s, flags):
    """TensorFlow's sparse dual averaging divides by the step first: the same update as
    `_adagrad_da` in another order of operations (other rounding)."""
    g_sum, sq_sum = slots[0] + g, slots[1] + g * g
    step = s["global_step"]
    den = s["l2"] + np.sqrt(sq_sum) / (step * s["lr"])
    if s["l1"] > 0:
        num = -np.sign(g_sum) * np.maximum(np.abs(g_sum) / step - s["l1"], 0)
    else:
        num = -(g_sum / step)
    return num / den, [g_sum, sq_sum]


def _ada_max(var, slots, g, s, flags):
    one = var.dtype.type(1)
    m = slots[0] + (g - slots[0]) * (one - s["beta1"])
    v = np.maximum(s["beta2"] * slots[1], np.abs(g))
    return var - s["lr"] / (one - s["beta1_power"]) * (m / (v + s["epsilon"])), [m, v]


def _sign_moment(slots, g, s):
    m = slots[0] * s["beta"] + g * (g.dtype.type(1) - s["beta"])
    return m, np.sign(g) * np.sign(m)


def _add_sign(var, slots, g, s, flags):
    m, sign_gm = _sign_moment(slots, g, s)
    return var - s["lr"] * (s["alpha"] + s["sign_decay"] * sign_gm) * g, [m]


def _power_sign(var, slots, g, s, flags):
    m, sign_gm = _sign_moment(slots, g, s)
    scale = _exp(s["logbase"] * s["sign_decay"] * sign_gm)
    return var - s["lr"] * scale * g, [m]


def _keras_momentum(var, slots, g, s, flags):
    accum = slots[0] * s["momentum"] - g * s["lr"]
    if flags.get("use_nesterov", False):
        return var + (accum * s["momentum"] - g * s["lr"]), [accum]
    return var + accum, [accum]


def _adam_amsgrad(var, slots, g, s, flags):
    one = var.dtype.type(1)
    alpha = s["lr"] * np.sqrt(one - s["beta2_power"]) / (one - s["beta1_power"])
    m = slots[0] + (g - slots[0]) * (one - s["beta1"])
    v = slots[1] + (g * g - slots[1]) * (one - s["beta2"])
    vhat = np.maximum(slots[2], v)
    return var - (m * alpha) / (np.sqrt(vhat) + s["epsilon"]), [m, v, vhat]


# op type (without ``Resource``) -> its rule
_RULES = {
    "ApplyAdaMax": _ada_max,
    "ApplyAdagradV2": _adagrad_v2,
    "ApplyAdagradDA": _adagrad_da,
    "ApplyAddSign": _add_sign,
    "ApplyPowerSign": _power_sign,
    "ApplyProximalAdagrad": _proximal_adagrad,
    "ApplyProximalGradientDescent": _proximal_gradient_descent,
    "SparseApplyAdagradV2": _adagrad_v2,
    "SparseApplyAdagradDA": _sparse_adagrad_da,
    "SparseApplyProximalAdagrad": _sparse_proximal_adagrad,
    "SparseApplyProximalGradientDescent": _proximal_gradient_descent,
    "ApplyKerasMomentum": _keras_momentum,
    "SparseApplyKerasMomentum": _keras_momentum,
    "ApplyAdamWithAmsgrad": _adam_amsgrad,
}


# -- the kernels -------------------------------------------------------------------------


def _scalars(op_type: str, names, inputs, pos: dict, dt: np.dtype) -> dict:
    out = {}
    for n in names:
        x = inputs[pos[n]]
        if np.ndim(x) != 0:
            raise _invalid(f"{op_type}: {n} is not a scalar: {list(np.shape(x))}")
        out[n] = dt.type(x)  # global_step (int64) becomes the variable's type, as in TF
    return out


def _rounds(idx: np.ndarray):
    """Positions into `idx` per round: round k holds the k-th occurrence of each distinct
    index, in the order the indices first appear."""
    if idx.size == 0:
        return []
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    starts = np.r_[True, sorted_idx[1:] != sorted_idx[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(idx.size), 0))
    occurrence = np.arange(idx.size) - group_start
    rank = np.empty(idx.size, np.int64)
    rank[order] = occurrence
    return [np.flatnonzero(rank == k) for k in range(int(occurrence.max()) + 1)]


def _make_kernel(op_type: str):
    from flowgraph.ops.training_ops import _RESOURCE_ONLY, _SIGNATURES

    names, num_refs, _ = _SIGNATURES.get(op_type) or _RESOURCE_ONLY[op_type]
    rule = _RULES[op_type]
    pos = {n: k for k, n in enumerate(names)}
    grad_at = pos.get("grad", pos.get("delta"))
    idx_at = pos.get("indices")
    scalar_names = [n for n in names[num_refs:] if n not in ("grad", "delta", "indices")]
    ref_names = names[:num_refs]
    sparse = idx_at is not None

    def update(inputs, op, flags) -> None:
        var = _storage(inputs[0], "var", op)
        dt = var.dtype
        if dt.type not in (np.float16, np.float32, np.float64):
            raise _invalid(f"{op_type} supports float16, float32 and float64 variables, got "
                           f"{dt.name}; cast the variable to a float type")
        stores = [var]
        for k in range(1, num_refs):
            s = _storage(inputs[k], ref_names[k], op)
            if s.shape != var.shape or s.dtype != dt:
                raise _invalid(f"{op_type}: var and {ref_names[k]} do not have the same shape "
                               f"and dtype: var {list(var.shape)} {dt.name}, {ref_names[k]} "
                               f"{list(s.shape)} {s.dtype.name}")
            stores.append(s)
        work = np.dtype(np.float32) if dt.type is np.float16 else dt
        s = _scalars(op_type, scalar_names, inputs, pos, work)
        g = np.asarray(inputs[grad_at])
        if not sparse:
            if g.shape != var.shape:
                raise _invalid(f"{op_type}: var and grad do not have the same shape: var "
                               f"{list(var.shape)}, grad {list(g.shape)}")
            new_var, new_slots = rule(*_as(work, stores[0], stores[1:], g), s, flags)
            for store, value in zip(stores, (new_var, *new_slots)):
                np.copyto(store, value, casting="unsafe")
            return
        if var.ndim < 1:
            raise _invalid(f"{op_type}: var must be at least 1 dimensional, got a scalar")
        idx = np.asarray(inputs[idx_at])
        if idx.ndim != 1:
            raise _invalid(f"{op_type}: indices must be one-dimensional, got shape "
                           f"{list(idx.shape)}")
        if g.ndim < 1 or g.shape[0] != idx.shape[0] or g.shape[1:] != var.shape[1:]:
            raise _invalid(f"{op_type}: grad must have shape [len(indices)] + var.shape[1:] "
                           f"= {[idx.shape[0], *var.shape[1:]]}, got {list(g.shape)}")
        bad = np.flatnonzero((idx < 0) | (idx >= var.shape[0]))
        if bad.size:
            raise _invalid(f"{op_type}: index {int(idx[bad[0]])} at offset {int(bad[0])} in "
                           f"indices is out of range [0, {var.shape[0]})")
        for at in _rounds(idx):
            rows = idx[at]
            new_var, new_slots = rule(*_as(work, var[rows], [a[rows] for a in stores[1:]],
                                           g[at]), s, flags)
            for store, value in zip(stores, (new_var, *new_slots)):
                store[rows] = value  # (casts float32 results back to float16)

    def kernel(*inputs, use_locking=False, op=None, **flags):
        with kernel_util.locked(inputs[:num_refs], use_locking):
            update(inputs, op, flags)
        return inputs[0]

    kernel.__name__ = kernel.__qualname__ = op_type
    kernel.__doc__ = f"In-place `{op_type}` ({'sparse' if sparse else 'dense'} update)."
    return kernel


def _as(work: np.dtype, var, slots, g):
    """`var`, `slots` and `g` as arrays of the working dtype (copies only where needed)."""
    return (np.asarray(var, work), [np.asarray(a, work) for a in slots],
            np.asarray(g, work))


KERNELS: dict = {}

for _op_type in _RULES:
    from flowgraph.ops.training_ops import _RESOURCE_ONLY as _ONLY
    from flowgraph.ops.training_ops import _SIGNATURES as _SIGS

    KERNELS[_op_type] = _make_kernel(_op_type)
    _refs = (_SIGS.get(_op_type) or _ONLY[_op_type])[1]
    if _op_type not in _ONLY:
        cpu_kernel(_op_type, dtypes=_FLOATS)(KERNELS[_op_type])
    cpu_kernel("Resource" + _op_type, dtypes=_FLOATS)(
        _resource_apply(KERNELS[_op_type], _refs))


# -- warm-start remapping and SdcaOptimizerV2 (`flowgraph/ops/training_raw_ops.py`) -------


def _path(x, what: str, name: str) -> str:
    if np.ndim(x) != 0:
        raise _invalid(f"{what}: {name} must be a scalar, got shape {list(np.shape(x))}")
    value = np.asarray(x).item()
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


@cpu_kernel("GenerateVocabRemapping")
def generate_vocab_remapping(new_vocab_file, old_vocab_file, *, new_vocab_offset,
                             num_new_vocab, old_vocab_size=-1, op=None):
    """Line numbers in the old vocabulary of lines of the new one (-1: absent)."""
    what = f"GenerateVocabRemapping '{getattr(op, 'name', '?')}'"
    old_path = _path(old_vocab_file, what, "old_vocab_file")
    new_path = _path(new_vocab_file, what, "new_vocab_file")
    old = read_text_lines(old_path, what)
    if old_vocab_size != -1:
        if len(old) < old_vocab_size:
            raise _invalid(f"{what}: Invalid vocab_size in {old_path}: expected "
                           f"{old_vocab_size} but got {len(old)}")
        old = old[:old_vocab_size]
    index: dict[str, int] = {}
    for line_no, word in enumerate(old):
        if index.setdefault(word, line_no) != line_no:
            raise errors.FailedPreconditionError(
                None, None, f"{what}: HashTable has different value for same key. Key "
                f"{word} has {index[word]} and trying to add value {line_no} (the old "
                f"vocabulary {old_path} lists it twice)")
    new = read_text_lines(new_path, what)
    end = new_vocab_offset + num_new_vocab
    if num_new_vocab and len(new) < end:
        raise _invalid(f"{what}: lookup table size must be larger than last new vocab "
                       f"entry's line: {new_path} has {len(new)} lines, lines "
                       f"[{new_vocab_offset}, {end}) were asked for")
    remap = np.fromiter((index.get(w, -1) for w in new[new_vocab_offset:end]), np.int64,
                        count=num_new_vocab)
    return remap, np.int32(np.count_nonzero(remap >= 0))


def _unique_ids(ids: np.ndarray, what: str) -> None:
    """TensorFlow refuses an old row or column mapped to two new ones."""
    present = np.flatnonzero(ids >= 0)
    values, first, counts = np.unique(ids[present], return_index=True, return_counts=True)
    if (counts > 1).any():
        k = int(np.argmax(counts > 1))
        later = present[np.flatnonzero(ids[present] == values[k])[1]]
        raise errors.UnimplementedError(
            None, None, f"{what}: Old ID {int(values[k])} is mapped to both new ID "
            f"{int(present[first[k]])} and {int(later)}, which is not supported.")


@cpu_kernel("LoadAndRemapMatrix", fresh=True)
def load_and_remap_matrix(ckpt_path, old_tensor_name, row_remapping, col_remapping,
                          initializing_values, *, num_rows, num_cols, max_rows_in_memory=-1,
                          op=None):
    """Rows and columns of a checkpoint matrix moved to new positions; the new cells
    filled, row by row, from `initializing_values`."""
    what = f"LoadAndRemapMatrix '{getattr(op, 'name', '?')}'"
    rows = np.asarray(row_remapping, np.int64).reshape(-1)
    cols = np.asarray(col_remapping, np.int64).reshape(-1)
    init = np.asarray(initializing_values, np.float32).reshape(-1)
    if rows.size != num_rows:
        raise _invalid(f"{what}: Size of row_remapping is {rows.size} instead of being "
                       f"equal to num_rows={num_rows}")
    if cols.size and cols.size != num_cols:
        raise _invalid(f"{what}: Provided col_remapping, but its size is {cols.size} "
                       f"instead of being equal to num_cols={num_cols}")
    _unique_ids(rows, what)
    _unique_ids(cols, what)
    path, name = _path(ckpt_path, what, "ckpt_path"), _path(old_tensor_name, what,
                                                              "old_tensor_name")
    with CheckpointReader(path) as reader:
        if not reader.has_tensor(name):
            raise errors.NotFoundError(None, None, f"{what}: Key {name} not found in "
                                       f"checkpoint {path}")
        shape = list(reader.tensor_shape(name))
        if len(shape) != 2:
            raise _invalid(f"{what}: tensor {name} has shape {shape}; a matrix is remapped")
        if not cols.size and shape[1] != num_cols:
            raise _invalid(f"{what}: Tensor {name} has shape {shape}, where the size of its "
                           f"2nd dimension is {shape[1]} instead of being equal to "
                           f"num_cols={num_cols}")
        for ids, axis in ((rows, 0), (cols, 1)):
            if ids.size and ids.max() >= shape[axis]:
                raise _invalid(f"{what}: {'row' if axis == 0 else 'col'}_remapping holds "
                               f"{int(ids.max())}, past the {shape[axis]} "
                               f"{'rows' if axis == 0 else 'columns'} of tensor {name}")
        old = reader.get_tensor(name)
    out = np.empty((num_rows, num_cols), np.float32)
    col_ids = cols if cols.size else np.arange(num_cols)
    found = (rows[:, None] >= 0) & (col_ids[None, :] >= 0)
    missing = int(found.size - np.count_nonzero(found))
    if init.size != missing:
        raise _invalid(f"{what}: initializing_values contained {init.size} elements, but "
                       f"{missing} elements are missing values to fill in")
    r, c = np.nonzero(found)
    out[r, c] = np.asarray(old, np.float32)[rows[r], col_ids[c]]
    out[~found] = init  # row-major order, as TF consumes them
    return out


@cpu_kernel("SdcaOptimizerV2", fresh=True)
def sdca_optimizer_v2(*inputs, adaptive=False, **attrs):
    """`SdcaOptimizer` under its later name (attribute ``adaptive``)."""
    return sdca_optimizer(*inputs, adaptative=adaptive, **attrs)
