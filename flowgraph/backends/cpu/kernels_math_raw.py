"""CPU kernels for the op types of `flowgraph/ops/math_raw.py` and
`flowgraph/ops/array_raw.py`, reusing the kernels of their current counterparts where one
exists (``Inv`` is ``Reciprocal``'s, ``TopK`` ``TopKV2``'s, ``UniqueV2`` ``Unique``'s on
rows, ...)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_array_extra import unique_with_counts
from flowgraph.backends.cpu.kernels_array_index import unique
from flowgraph.backends.cpu.kernels_math import truncate_div, truncate_mod
from flowgraph.backends.cpu.kernels_nn_loss import in_top_k, top_k
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _fail(op, what):
    return errors.InvalidArgumentError(None, op, f"{op.type} '{op.name}': {what}")


# -- element-wise ----------------------------------------------------------------------------

def _nonzero_divisor(y, op):
    if np.asarray(y).dtype.kind in "iu" and not np.all(y):
        raise errors.InvalidArgumentError(None, op, "Integer division by zero")


@cpu_kernel("Div", fresh=True)
def div(x, y, *, op):
    _nonzero_divisor(y, op)
    if np.asarray(x).dtype.kind in "iu":
        return np.asarray(truncate_div(x, y))
    return np.asarray(np.true_divide(x, y))


@cpu_kernel("Mod", fresh=True)
def mod(x, y, *, op):
    _nonzero_divisor(y, op)
    return np.asarray(truncate_mod(x, y))


_FLOATING = (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
             _dtypes.complex64, _dtypes.complex128)


@cpu_kernel("Inv", fresh=True, dtypes=_FLOATING)
def inv(x):
    return np.asarray(np.reciprocal(x))


@cpu_kernel("InvGrad", fresh=True, dtypes=_FLOATING)
def inv_grad(y, dy):
    return np.asarray(-dy * np.conj(y) * np.conj(y))


@cpu_kernel("MulNoNan", fresh=True)
def mul_no_nan(x, y):
    out = np.multiply(x, y)
    return np.asarray(np.where(np.equal(y, 0), np.zeros((), out.dtype), out))


@cpu_kernel("ApproximateEqual", fresh=True)
def approximate_equal(x, y, *, tolerance, op):
    if np.shape(x) != np.shape(y):
        raise _fail(op, f"x and y must have the same shape, got {list(np.shape(x))} and "
                    f"{list(np.shape(y))}")
    return np.asarray(np.abs(np.subtract(x, y)) < tolerance)


@cpu_kernel("ClipByValue", fresh=True)
def clip_by_value(t, lo, hi, *, op):
    for what, v in (("clip_value_min", lo), ("clip_value_max", hi)):
        if np.ndim(v) and np.shape(v) != np.shape(t):
            raise _fail(op, f"{what} of shape {list(np.shape(v))} must be a scalar or have "
                        f"t's shape {list(np.shape(t))}")
    return np.asarray(np.minimum(np.maximum(t, lo), hi), dtype=np.asarray(t).dtype)


def _axes(axis, rank, op):
    out = []
    for a in np.reshape(axis, -1).tolist():
        if not -rank <= a < max(rank, 1):
            raise _fail(op, f"axis {a} is out of range for a tensor of rank {rank}")
        out.append(int(a) % max(rank, 1))
    return tuple(out)


@cpu_kernel("EuclideanNorm", fresh=True)
def euclidean_norm(x, axis, *, keep_dims, op):
    x = np.asarray(x)
    axes = _axes(axis, x.ndim, op) if x.ndim else ()
    squares = x * np.conj(x) if x.dtype.kind == "c" else np.square(x)
    total = np.sum(squares, axis=axes, keepdims=bool(keep_dims))
    if x.dtype.kind in "iu":
        return np.asarray(np.sqrt(total.astype(np.float64)).astype(x.dtype))
    return np.asarray(np.sqrt(total), dtype=x.dtype)


@cpu_kernel("CumulativeLogsumexp", fresh=True)
def cumulative_logsumexp(x, axis, *, exclusive, reverse, op):
    x = np.asarray(x)
    (a,) = _axes(axis, x.ndim, op)
    work = np.flip(x, a) if reverse else x
    out = np.logaddexp.accumulate(work, axis=a) if work.shape[a] else work.copy()
    if exclusive:
        lowest = np.full_like(np.take(out, [0], axis=a), -np.inf)
        out = np.concatenate([lowest, np.take(out, np.arange(out.shape[a] - 1), axis=a)], a)
    return np.asarray(np.flip(out, a) if reverse else out, dtype=x.dtype)


@cpu_kernel("AccumulateNV2", fresh=True)
def accumulate_n(*inputs, N=None, shape=None):
    out = np.array(inputs[0], copy=True)
    for v in inputs[1:]:
        out = out + v
    return out


@cpu_kernel("BiasAddV1", fresh=True)
def bias_add_v1(value, bias, *, op):
    if value.ndim < 2 or bias.shape != value.shape[-1:]:
        raise _fail(op, f"bias of shape {list(bias.shape)} must match the last dimension of "
                    f"value {list(value.shape)}")
    return np.add(value, bias, dtype=value.dtype)


@cpu_kernel("TileGrad", fresh=True)
def tile_grad(x, multiples):
    m = [int(k) for k in np.reshape(multiples, -1)]
    split = []
    for d, k in zip(x.shape, m):
        split += [k, d // k]
    return x.reshape(split).sum(axis=tuple(range(0, 2 * len(m), 2))).astype(x.dtype)


@cpu_kernel("ToBool")
def to_bool(x):
    x = np.asarray(x)
    if x.ndim:
        return np.asarray(x.size > 0)
    v = x.item()
    return np.asarray(len(v) > 0 if isinstance(v, bytes | str) else bool(v))


@cpu_kernel("PopulationCount", fresh=True)
def population_count(x):
    x = np.asarray(x)
    raw = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    as_bytes = raw.reshape(*raw.shape, 1).view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1, dtype=np.uint8).reshape(x.shape)


@cpu_kernel("IgammaGradA", fresh=True)
def igamma_grad_a(a, x):
    """d/da of the regularized lower incomplete gamma function, by a 4th-order central
    difference of ``scipy.special.gammainc`` in float64 (about 1e-10 accurate)."""
    from scipy.special import gammainc

    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    h = np.minimum(1e-3 * np.maximum(a64, 1.0), a64 / 4)
    f = [gammainc(a64 + s * h, x64) for s in (2, 1, -1, -2)]
    d = (-f[0] + 8 * f[1] - 8 * f[2] + f[3]) / (12 * h)
    return np.asarray(d, dtype=np.result_type(a, x))


# -- array -----------------------------------------------------------------------------------

@cpu_kernel("Concat", fresh=True)
def concat_v1(concat_dim, *values, N=None, op):
    from flowgraph.backends.cpu.kernels_array_join import concat

    return np.array(concat(*values, concat_dim), copy=True)


@cpu_kernel("Reverse")
def reverse_v1(x, dims, *, op):
    flags = np.reshape(dims, -1)
    if flags.size != x.ndim:
        raise _fail(op, f"dims has {flags.size} entries but the tensor has rank {x.ndim}")
    axes = tuple(int(i) for i in np.flatnonzero(flags))
    return np.flip(x, axis=axes) if axes else x


@cpu_kernel("NthElement", fresh=True)
def nth_element(x, n, *, reverse, op):
    n = int(n)
    last = x.shape[-1] if x.ndim else 0
    if not 0 <= n < last:
        raise _fail(op, f"input must have last dimension > n = {n} but is {last}")
    k = last - 1 - n if reverse else n
    return np.array(np.partition(x, k, axis=-1)[..., k], copy=True)


@cpu_kernel("TopK")
def top_k_v1(x, *, k, sorted):
    return top_k(x, np.int32(k), sorted=sorted)


@cpu_kernel("InTopK", fresh=True)
def in_top_k_v1(predictions, targets, *, k):
    return in_top_k(predictions, targets, np.asarray(k, targets.dtype))


@cpu_kernel("ApproxTopK")
def approx_top_k(x, *, k, reduction_dimension, is_max_k, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, op):
    """The exact top k (any recall target is met)."""
    rd = int(reduction_dimension) % max(x.ndim, 1)
    if not 0 <= k <= x.shape[rd]:
        raise _fail(op, f"k = {k} must be in [0, {x.shape[rd]}]")
    moved = np.moveaxis(x, rd, -1)
    order = np.argsort(-moved if is_max_k else moved, axis=-1, kind="stable")[..., :k]
    values = np.take_along_axis(moved, order, -1)
    return [np.ascontiguousarray(np.moveaxis(values, -1, rd)),
            np.ascontiguousarray(np.moveaxis(order, -1, rd)).astype(np.int32)]


@cpu_kernel("HistogramFixedWidth", fresh=True)
def histogram_fixed_width(values, value_range, nbins, *, dtype, op):
    lo, hi = (float(v) for v in np.reshape(value_range, -1)[:2])
    n = int(nbins)
    if n <= 0:
        raise _fail(op, f"nbins should be a positive number, but got '{n}'")
    if not lo < hi:
        raise _fail(op, f"value_range should satisfy value_range[0] < value_range[1], but "
                    f"got '[{lo}, {hi}]'")
    v = np.asarray(values, np.float64).reshape(-1)
    bins = np.clip(np.floor((v - lo) / (hi - lo) * n), 0, n - 1).astype(np.int64)
    return np.bincount(bins, minlength=n).astype(_dtypes.as_dtype(dtype).as_numpy_dtype)


def _unique_along(x, axis, out_idx, op, counts: bool):
    axes = [int(a) for a in np.reshape(axis, -1)]
    if len(axes) > 1:
        raise _fail(op, f"only one axis may be given, got {axes}")
    if not axes:
        flat = np.reshape(x, -1)
        return unique_with_counts(flat, out_idx=out_idx) if counts else \
            list(unique(flat, out_idx=out_idx))
    a = axes[0]
    if not -x.ndim <= a < x.ndim:
        raise _fail(op, f"axis {a} is out of range for a tensor of rank {x.ndim}")
    a %= x.ndim
    moved = np.moveaxis(x, a, 0)
    rows = moved.reshape(moved.shape[0], -1)
    idx_dtype = _dtypes.as_dtype(out_idx).as_numpy_dtype
    if rows.shape[0] == 0:
        out = [np.array(x, copy=True), np.zeros(0, idx_dtype)]
        return out + ([np.zeros(0, idx_dtype)] if counts else [])
    keys = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize *
                                                     max(rows.shape[1], 1)))).reshape(-1) \
        if rows.shape[1] else np.zeros(rows.shape[0], np.int8)
    _, first, inverse, count = np.unique(keys, return_index=True, return_inverse=True,
                                         return_counts=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    picked = np.moveaxis(moved[first[order]], 0, a)
    out = [np.ascontiguousarray(picked), rank[inverse.reshape(-1)].astype(idx_dtype)]
    return out + ([count[order].astype(idx_dtype)] if counts else [])


@cpu_kernel("UniqueV2")
def unique_v2(x, axis, *, out_idx, op):
    return _unique_along(np.asarray(x), axis, out_idx, op, counts=False)


@cpu_kernel("UniqueWithCountsV2")
def unique_with_counts_v2(x, axis, *, out_idx, op):
    return _unique_along(np.asarray(x), axis, out_idx, op, counts=True)


@cpu_kernel("Empty", fresh=True)
def empty(shape, *, dtype, init=False):
    return np.zeros([int(d) for d in np.reshape(shape, -1)], _dtypes.as_dtype(dtype)
                    .as_numpy_dtype)


@cpu_kernel("EnsureShape")
def ensure_shape(x, *, shape, op):
    from flowgraph.framework.tensor_shape import as_shape

    want = as_shape(shape)
    if not want.is_compatible_with(np.shape(x)):
        raise _fail(op, f"Shape of tensor {op.inputs[0].name} {list(np.shape(x))} is not "
                    f"compatible with expected shape {want}.")
    return x


def _inplace(fn):
    def kernel(x, i, v, *, op):
        rows = np.reshape(i, -1).astype(np.int64)
        vals = np.reshape(v, (rows.size, *x.shape[1:])) if np.ndim(i) else \
            np.reshape(v, (1, *x.shape[1:]))
        if np.any((rows < 0) | (rows >= x.shape[0])):
            raise _fail(op, f"row indices {rows.tolist()} must be in [0, {x.shape[0]})")
        out = np.array(x, copy=True)
        fn(out, rows, vals)
        return out

    return kernel


cpu_kernel("InplaceAdd", fresh=True)(_inplace(lambda out, i, v: np.add.at(out, i, v)))
cpu_kernel("InplaceSub", fresh=True)(_inplace(lambda out, i, v: np.subtract.at(out, i, v)))
cpu_kernel("InplaceUpdate", fresh=True)(_inplace(lambda out, i, v: out.__setitem__(i, v)))


@cpu_kernel("ParallelConcat", fresh=True)
def parallel_concat(*values, N=None, shape=None, op):
    out = np.concatenate([np.asarray(v) for v in values], axis=0)
    from flowgraph.framework.tensor_shape import as_shape

    if shape is not None and not as_shape(shape).is_compatible_with(out.shape):
        raise _fail(op, f"the values concatenate to shape {list(out.shape)}, not {shape}")
    return out


@cpu_kernel("CheckNumericsV2")
def check_numerics_v2(tensor, *, message, op):
    t = np.asarray(tensor)
    if t.dtype.kind in "fc" and not np.isfinite(t).all():
        found = [what for what, hit in (("-Inf", np.isneginf(np.real(t)).any()),
                                        ("+Inf", np.isposinf(np.real(t)).any()),
                                        ("NaN", np.isnan(t).any())) if hit]
        what = found[0] if len(found) == 1 else " and ".join(found) if len(found) == 2 \
            else f"{found[0]}, {found[1]}, and {found[2]}"
        raise errors.InvalidArgumentError(
            None, op, f"{message} : Tensor had {what} values (op '{op.name}')")
    return tensor


for _name in ("PreventGradient", "GuaranteeConst", "DebugGradientIdentity"):
    cpu_kernel(_name)(lambda x: x)


@cpu_kernel("Snapshot", fresh=True)
def snapshot(x):
    return np.array(x, copy=True)


@cpu_kernel("DeepCopy", fresh=True)
def deep_copy(x):
    return np.array(x, copy=True)


@cpu_kernel("PlaceholderV2")
def placeholder_v2(*, op):
    raise errors.InvalidArgumentError(
        None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype "
        f"{op.attrs['dtype'].name} and shape {op.attrs['shape']}")
