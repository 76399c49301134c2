"""CPU kernels of the set operations and the edit distance (`flowgraph/ops/set_ops.py`):
SparseTensor components grouped by their leading indices, one Python set or sequence
per group."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _groups(indices, values):
    """{leading index tuple: values in order of the last index}."""
    out: dict = {}
    order = np.lexsort(np.asarray(indices).T[::-1]) if len(indices) else []
    for i in order:
        key = tuple(int(v) for v in indices[i][:-1])
        out.setdefault(key, []).append(values[i])
    return out


def _key(v):
    return v if not isinstance(v, str) else v.encode()


@cpu_kernel("SparseToSparseSetOperation")
def set_operation(a_idx, a_val, a_shape, b_idx, b_val, b_shape, *, set_operation,
                  validate_indices, op):
    if list(a_shape[:-1]) != list(b_shape[:-1]):
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': the leading dimensions of a "
            f"{a_shape.tolist()} and b {b_shape.tolist()} must match")
    ga = _groups(a_idx, a_val.tolist())
    gb = _groups(b_idx, b_val.tolist())
    rows, vals = [], []
    for key in sorted(set(ga) | set(gb)):
        sa = {_key(v) for v in ga.get(key, [])}
        sb = {_key(v) for v in gb.get(key, [])}
        result = {"a-b": sa - sb, "b-a": sb - sa, "intersection": sa & sb,
                  "union": sa | sb}[set_operation]
        for j, v in enumerate(sorted(result)):
            rows.append((*key, j))
            vals.append(v)
    width = max((r[-1] + 1 for r in rows), default=0)
    rank = len(a_shape)
    indices = np.asarray(rows, np.int64).reshape(-1, rank)
    values = np.asarray(vals, dtype=a_val.dtype) if a_val.dtype != object else \
        np.asarray([*vals, None], dtype=object)[:-1]
    shape = np.asarray([*a_shape[:-1].tolist(), width], np.int64)
    return [indices, values, shape]


@cpu_kernel("SetSize", fresh=True)
def set_size(indices, values, shape, *, validate_indices):
    out = np.zeros(tuple(int(d) for d in shape[:-1]), np.int32)
    for key, vals in _groups(indices, values.tolist()).items():
        out[key] = len({_key(v) for v in vals})
    return out


def _levenshtein(a, b) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@cpu_kernel("EditDistance", fresh=True)
def edit_distance(h_idx, h_val, h_shape, t_idx, t_val, t_shape, *, normalize, op):
    if len(h_shape) != len(t_shape):
        raise errors.InvalidArgumentError(
            None, None, f"{op.type} '{op.name}': hypothesis and truth must have the same "
            f"rank, got {len(h_shape)} and {len(t_shape)}")
    out_shape = tuple(int(max(a, b)) for a, b in zip(h_shape[:-1], t_shape[:-1]))
    gh = _groups(h_idx, [_key(v) for v in h_val.tolist()])
    gt = _groups(t_idx, [_key(v) for v in t_val.tolist()])
    out = np.zeros(out_shape, np.float32)
    for key in np.ndindex(*out_shape):
        hyp, truth = gh.get(key, []), gt.get(key, [])
        d = float(_levenshtein(hyp, truth))
        if normalize:
            d = d / len(truth) if truth else (np.inf if hyp else 0.0)
        out[key] = d
    return out
