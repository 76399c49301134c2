"""CPU kernels for reductions, arg-reductions, scans, AddN and Bincount (NumPy).

Results keep the input dtype (NumPy would widen small integers to int64): sums and
products accumulate in the input dtype, float16 in float32. Empty reductions give
TensorFlow's identities (0, 1, the dtype's lowest/highest value for max/min; NaN for a
floating mean, 0 for an integer mean).

Large reductions run on the kernel threads (`kernel_pool`), split along a *kept* axis
only: every output element is still reduced by one NumPy call over the same values in
the same order, so the result is bitwise the one-thread result. Reductions over every
axis, and float16 (accumulated in float32), stay on one thread.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.backends.kernel_util import reduction_axes
from flowgraph.framework.errors import InvalidArgumentError


def _axes(x: np.ndarray, axes) -> tuple[int, ...]:
    return reduction_axes(x.shape, axes)


def _acc_dtype(x: np.ndarray):
    return np.float32 if x.dtype == np.float16 else x.dtype


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _split_axis(x: np.ndarray, ax: tuple[int, ...]) -> int | None:
    """The kept axis to split a large reduction of `x` along (the outermost one with at
    least two entries), or None to run it on one thread."""
    if x.size < 2 * kernel_pool.GRAIN["reduce"] or kernel_pool.threads() < 2 \
            or x.dtype == np.float16:
        return None
    return next((i for i in range(x.ndim) if i not in ax and x.shape[i] > 1), None)


def _reduced(fn, x: np.ndarray, ax: tuple[int, ...], keep_dims: bool, **kwargs):
    """``fn(x, axis=ax, keepdims=keep_dims, **kwargs)``, split across the kernel threads
    along a kept axis when `x` is large (bitwise the same result)."""
    split = _split_axis(x, ax)
    if split is None:
        return fn(x, axis=ax, keepdims=keep_dims, **kwargs)
    dtype = kwargs.get("dtype") or x.dtype
    out = np.empty([1 if i in ax else d for i, d in enumerate(x.shape)], dtype=dtype)
    n = x.shape[split]
    lead = (slice(None),) * split

    def chunk(a: int, b: int) -> None:
        part = (*lead, slice(a, b))
        fn(x[part], axis=ax, keepdims=True, out=out[part], **kwargs)

    per_item = x.size // n
    kernel_pool.parallel_for(n, chunk, grain=-(-kernel_pool.GRAIN["reduce"] // per_item),
                             align=kernel_pool.ALIGN if split == x.ndim - 1 else 1)
    return out if keep_dims else out.reshape([d for i, d in enumerate(x.shape)
                                              if i not in ax])


@cpu_kernel("Sum")
def reduce_sum(x, axes, *, keep_dims):
    out = _reduced(np.sum, x, _axes(x, axes), keep_dims, dtype=_acc_dtype(x))
    return np.asarray(out, dtype=x.dtype)


@cpu_kernel("Prod")
def reduce_prod(x, axes, *, keep_dims):
    with np.errstate(all="ignore"):
        out = _reduced(np.prod, x, _axes(x, axes), keep_dims, dtype=_acc_dtype(x))
    return np.asarray(out, dtype=x.dtype)


@cpu_kernel("Mean")
def reduce_mean(x, axes, *, keep_dims):
    ax = _axes(x, axes)
    count = int(np.prod([x.shape[a] for a in ax], dtype=np.int64))
    if x.dtype.kind in "fc":
        if count == 0:  # NaN, without NumPy's "Mean of empty slice" warning
            shape = np.sum(x, axis=ax, keepdims=keep_dims).shape
            return np.full(shape, np.nan, dtype=x.dtype)
        with np.errstate(all="ignore"):
            if x.dtype == np.float16:  # a float16 total overflows to inf, as in TensorFlow
                total = np.asarray(np.sum(x, axis=ax, keepdims=keep_dims, dtype=np.float32))
                return np.asarray(total.astype(np.float16) / np.float16(count))
            return np.asarray(_reduced(np.mean, x, ax, keep_dims), dtype=x.dtype)
    # Integers accumulate wider than their type: the mean of uint8 [200, 100] is 150
    wide = np.uint64 if x.dtype == np.uint64 else np.int64
    total = _reduced(np.sum, x, ax, keep_dims, dtype=wide).astype(np.int64)
    if count == 0:
        return np.zeros(np.shape(total), dtype=x.dtype)
    # Integer division truncated toward zero, as TensorFlow (and C) divide.
    return np.asarray((total - np.fmod(total, count)) // count, dtype=x.dtype)


@cpu_kernel("Max")
def reduce_max(x, axes, *, keep_dims):
    out = _reduced(np.max, x, _axes(x, axes), keep_dims, initial=_lowest(x.dtype))
    return np.asarray(out, dtype=x.dtype)


@cpu_kernel("Min")
def reduce_min(x, axes, *, keep_dims):
    out = _reduced(np.min, x, _axes(x, axes), keep_dims, initial=_highest(x.dtype))
    return np.asarray(out, dtype=x.dtype)


@cpu_kernel("Any")
def reduce_any(x, axes, *, keep_dims):
    return np.asarray(_reduced(np.any, x, _axes(x, axes), keep_dims))


@cpu_kernel("All")
def reduce_all(x, axes, *, keep_dims):
    return np.asarray(_reduced(np.all, x, _axes(x, axes), keep_dims))


def _axis(x: np.ndarray, axis, what: str) -> int:
    a = int(np.reshape(axis, -1)[0])
    if not -x.ndim <= a < x.ndim:
        raise InvalidArgumentError(
            None, None, f"Expected {'scan axis' if what.startswith('Cum') else 'dimension'} "
            f"in the range [{-x.ndim}, {x.ndim}), but got {a} ({what}: axis {a}, input "
            f"shape {list(x.shape)})")
    return a % x.ndim


def _arg(fn, x, axis, output_type):
    a = _axis(x, axis, "ArgMax/ArgMin")
    if x.shape[a] == 0:
        raise InvalidArgumentError(None, None, f"Reduction axis {a} is empty in shape "
                                               f"{list(x.shape)}")
    return np.asarray(fn(x, axis=a), dtype=output_type.as_numpy_dtype)


def _skip_nan(x, fill):
    # TensorFlow never picks a NaN: it keeps the first strictly better value, starting
    # from index 0 with an infinite bound, so NaNs count as the worst value there is
    if x.dtype.kind == "f" and np.isnan(x).any():
        return np.where(np.isnan(x), x.dtype.type(fill), x)
    return x


@cpu_kernel("ArgMax")
def argmax(x, axis, *, output_type):
    return _arg(np.argmax, _skip_nan(x, -np.inf), axis, output_type)


@cpu_kernel("ArgMin")
def argmin(x, axis, *, output_type):
    return _arg(np.argmin, _skip_nan(x, np.inf), axis, output_type)


def _scan(fn, identity, x, axis, exclusive, reverse):
    a = _axis(x, axis, "Cumsum/Cumprod")
    if reverse:
        x = np.flip(x, a)
    with np.errstate(all="ignore"):
        out = fn(x, axis=a, dtype=_acc_dtype(x)).astype(x.dtype, copy=False)
    if exclusive and x.shape[a] > 0:
        head = [slice(None)] * x.ndim
        head[a] = slice(0, 1)
        body = [slice(None)] * x.ndim
        body[a] = slice(0, -1)
        out = np.concatenate([np.full_like(out[tuple(head)], identity), out[tuple(body)]],
                             axis=a)
    if reverse:
        out = np.flip(out, a)
    return np.ascontiguousarray(out)


@cpu_kernel("Cumsum")
def cumsum(x, axis, *, exclusive, reverse):
    return _scan(np.cumsum, 0, x, axis, exclusive, reverse)


@cpu_kernel("Cumprod")
def cumprod(x, axis, *, exclusive, reverse):
    return _scan(np.cumprod, 1, x, axis, exclusive, reverse)


@cpu_kernel("AddN")
def add_n(*inputs):
    first = inputs[0]
    for i, x in enumerate(inputs[1:], 1):
        if x.shape != first.shape:
            raise InvalidArgumentError(
                None, None, f"Inputs to AddN must have the same shape: input 0 is "
                f"{list(first.shape)}, input {i} is {list(x.shape)}")
    if len(inputs) == 1:
        return np.asarray(first)
    out = np.empty(first.shape, dtype=first.dtype)
    np.add(first, inputs[1], out=out)
    for x in inputs[2:]:
        np.add(out, x, out=out)
    return out


@cpu_kernel("Bincount")
def bincount(arr, size, weights):
    n = int(size)
    if n < 0:
        raise InvalidArgumentError(None, None, f"Bincount: size ({n}) must be non-negative")
    ids = np.reshape(arr, -1)
    if ids.size and ids.min() < 0:
        raise InvalidArgumentError(None, None, "Bincount: input arr must be non-negative, "
                                               f"found {int(ids.min())}")
    w = np.reshape(weights, -1) if weights.size else None
    if w is not None and w.size != ids.size:
        raise InvalidArgumentError(None, None, f"Bincount: weights of shape "
                                               f"{list(weights.shape)} must match arr's shape "
                                               f"{list(arr.shape)} or be empty")
    keep = ids < n
    if not keep.all():
        ids = ids[keep]
        w = None if w is None else w[keep]
    counts = np.bincount(ids, weights=w, minlength=n)[:n]
    return np.asarray(counts, dtype=weights.dtype)
