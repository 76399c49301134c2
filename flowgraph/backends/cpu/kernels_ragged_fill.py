"""CPU kernels of `flowgraph/ops/ragged_fill_ops.py`."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


@cpu_kernel("RaggedFillEmptyRows", fresh=True)
def ragged_fill_empty_rows(value_rowids, values, nrows, default_value):
    rows = np.asarray(value_rowids, np.int64).reshape(-1)
    n_rows = int(nrows)
    if rows.shape[0] != values.shape[0]:
        raise _invalid(f"RaggedFillEmptyRows: value_rowids has {rows.shape[0]} entries but "
                       f"values has {values.shape[0]}; they must match")
    if rows.size and (rows.min() < 0 or rows.max() >= n_rows):
        bad = rows[(rows < 0) | (rows >= n_rows)][0]
        raise _invalid(f"RaggedFillEmptyRows: value_rowids contains {bad}, outside "
                       f"[0, nrows={n_rows})")
    if rows.size > 1 and np.any(np.diff(rows) < 0):
        raise _invalid("RaggedFillEmptyRows: value_rowids must be sorted (non-decreasing)")
    counts = np.bincount(rows, minlength=n_rows)
    empty = counts == 0
    per_row = np.maximum(counts, 1)
    starts = np.concatenate([[0], np.cumsum(per_row)[:-1]]).astype(np.int64)
    total = int(per_row.sum())
    out_rows = np.repeat(np.arange(n_rows, dtype=np.int64), per_row)
    out_values = np.empty((total, *values.shape[1:]), values.dtype)
    out_values[starts[empty]] = default_value
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    reverse = (starts[rows] + np.arange(rows.size) - first[rows]).astype(np.int64)
    out_values[reverse] = values
    return out_rows, out_values, empty, reverse


@cpu_kernel("RaggedFillEmptyRowsGrad", fresh=True)
def ragged_fill_empty_rows_grad(reverse_index_map, grad_values):
    d_values = grad_values[reverse_index_map]
    return d_values, np.asarray(grad_values.sum() - d_values.sum(), grad_values.dtype)
