"""CPU kernels of `flowgraph/ops/sparse_bincount_ops.py`: bincounts to a dense result of
a given size (``DenseBincount``, ``SparseBincount``, ``RaggedBincount``) and to sparse
counts (``*CountSparseOutput``). Values must be non-negative; values at or past the
size (or ``maxlength``) are dropped."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _check(values, op):
    if values.size and values.min() < 0:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': input values must be non-negative, found "
            f"{int(values.min())}")


def _dense_counts(rows, values, weights, size: int, out_dtype, binary: bool, nrows):
    """Counts of `values` (row `rows[i]` each, or one row when `rows` is None) below
    `size`: an array ``[nrows, size]`` (or ``[size]``)."""
    keep = values < size
    if rows is None and not binary and weights.size == 0:
        return np.bincount(values[keep], minlength=size)[:size].astype(out_dtype, copy=False)
    out = np.zeros((1 if rows is None else nrows, size), dtype=out_dtype)
    r = np.zeros(values.shape, np.int64) if rows is None else rows
    if binary:
        out[r[keep], values[keep]] = 1
    else:
        w = np.ones(values.shape, out_dtype) if weights.size == 0 else weights
        np.add.at(out, (r[keep], values[keep]), w[keep])
    return out[0] if rows is None else out


@cpu_kernel("DenseBincount", fresh=True)
def dense_bincount(x, size, weights, *, binary_output, op, **_):
    _check(x, op)
    if x.ndim not in (1, 2):
        raise errors.InvalidArgumentError(
            None, None, f"DenseBincount '{op.name}': input must have rank 1 or 2, got shape "
            f"{list(x.shape)}")
    if weights.size and weights.shape != x.shape:
        raise errors.InvalidArgumentError(
            None, None, f"DenseBincount '{op.name}': weights shape {list(weights.shape)} must "
            f"equal the input's {list(x.shape)} (or be empty)")
    rows = None if x.ndim == 1 else np.repeat(np.arange(x.shape[0]), x.shape[1])
    w = weights.reshape(-1) if weights.size else weights
    return _dense_counts(rows, x.reshape(-1), w, int(size), weights.dtype,
                         bool(binary_output), x.shape[0] if x.ndim == 2 else 1)


@cpu_kernel("SparseBincount", fresh=True)
def sparse_bincount(indices, values, dense_shape, size, weights, *, binary_output, op, **_):
    _check(values, op)
    rows = None if len(dense_shape) == 1 else indices[:, 0]
    return _dense_counts(rows, values, weights, int(size), weights.dtype, bool(binary_output),
                         int(dense_shape[0]))


@cpu_kernel("RaggedBincount", fresh=True)
def ragged_bincount(splits, values, size, weights, *, binary_output, op, **_):
    _check(values, op)
    rows = np.repeat(np.arange(len(splits) - 1), np.diff(splits))
    return _dense_counts(rows, values, weights, int(size), weights.dtype, bool(binary_output),
                         len(splits) - 1)


def _sparse_counts(rows, values, weights, nrows, *, minlength, maxlength, binary_output, op):
    _check(values, op)
    if weights.size and weights.shape != values.shape:
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': weights shape {list(weights.shape)} must "
            f"equal the values' {list(values.shape)} (or be empty)")
    width = int(values.max()) + 1 if values.size else 0
    if minlength >= 0:
        width = max(width, minlength)
    if maxlength >= 0:
        width = min(width, maxlength)
    dtype = weights.dtype
    r = np.zeros(values.shape, np.int64) if rows is None else rows.astype(np.int64)
    keep = values < width
    r, v = r[keep], values[keep].astype(np.int64)
    w = weights[keep] if weights.size else np.ones(v.shape, dtype)
    keys = r * max(width, 1) + v
    uniq, inverse = np.unique(keys, return_inverse=True)
    sums = np.zeros(uniq.shape, dtype)
    np.add.at(sums, inverse, w)
    if binary_output:
        sums = np.ones(uniq.shape, dtype)
    bins = uniq % max(width, 1)
    if rows is None:
        return [bins.reshape(-1, 1), sums, np.asarray([width], np.int64)]
    return [np.stack([uniq // max(width, 1), bins], axis=1).reshape(-1, 2), sums,
            np.asarray([nrows, width], np.int64)]


@cpu_kernel("DenseCountSparseOutput")
def dense_count(values, weights, *, op, **kw):
    kw["op"] = op
    if values.ndim == 1:
        return _sparse_counts(None, values, weights, 1, **_attrs(kw))
    if values.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"DenseCountSparseOutput '{kw['op'].name}': values must have rank 1 "
            f"or 2, got shape {list(values.shape)}")
    rows = np.repeat(np.arange(values.shape[0]), values.shape[1])
    w = weights.reshape(-1) if weights.size else weights
    return _sparse_counts(rows, values.reshape(-1), w, values.shape[0], **_attrs(kw))


@cpu_kernel("SparseCountSparseOutput")
def sparse_count(indices, values, dense_shape, weights, *, op, **kw):
    kw["op"] = op
    if len(dense_shape) == 1:
        return _sparse_counts(None, values, weights, 1, **_attrs(kw))
    if len(dense_shape) != 2:
        raise errors.InvalidArgumentError(
            None, None, f"SparseCountSparseOutput '{kw['op'].name}': the input must have "
            f"rank 1 or 2, got dense_shape {dense_shape.tolist()}")
    return _sparse_counts(indices[:, 0], values, weights, int(dense_shape[0]), **_attrs(kw))


@cpu_kernel("RaggedCountSparseOutput")
def ragged_count(splits, values, weights, *, op, **kw):
    kw["op"] = op
    rows = np.repeat(np.arange(len(splits) - 1), np.diff(splits))
    return _sparse_counts(rows, values, weights, len(splits) - 1, **_attrs(kw))


def _attrs(kw):
    return {"minlength": int(kw["minlength"]), "maxlength": int(kw["maxlength"]),
            "binary_output": bool(kw["binary_output"]), "op": kw["op"]}
