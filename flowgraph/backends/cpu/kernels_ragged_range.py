"""CPU kernel of ``RaggedRange`` (`flowgraph/ops/ragged_array_ops.py`): row ``i`` is
``range(starts[i], limits[i], deltas[i])``, scalars broadcast; returns the row splits
and the concatenated values."""

from __future__ import annotations

import math

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


@cpu_kernel("RaggedRange")
def ragged_range(starts, limits, deltas, *, T, Tsplits):
    args = [np.asarray(a) for a in (starts, limits, deltas)]
    for a, what in zip(args, ("starts", "limits", "deltas")):
        if a.ndim > 1:
            raise errors.InvalidArgumentError(None, None, f"{what} must be a scalar or "
                                              f"vector, got shape {list(a.shape)}")
    sizes = {a.shape[0] for a in args if a.ndim == 1}
    if len(sizes) > 1:
        raise errors.InvalidArgumentError(
            None, None, "starts, limits, and deltas must have the same shape")
    nrows = sizes.pop() if sizes else 1
    s, lim, d = (np.broadcast_to(a, (nrows,)) for a in args)
    dtype = _dtypes.as_dtype(T).as_numpy_dtype
    rows, lengths = [], []
    for a, b, step in zip(s.tolist(), lim.tolist(), d.tolist()):
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "Requires delta != 0")
        n = max(0, math.ceil((b - a) / step)) if isinstance(step, float) or isinstance(
            a, float) else max(0, -(-(b - a) // step))
        rows.append(a + step * np.arange(n, dtype=dtype))
        lengths.append(n)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(
        _dtypes.as_dtype(Tsplits).as_numpy_dtype)
    values = np.concatenate(rows).astype(dtype) if rows else np.zeros([0], dtype)
    return splits, values
