"""CPU kernels of `flowgraph/ops/ragged_raw_ops.py`: a ragged tensor (nested row
partitions over flat values) as a SparseTensor or a padded dense tensor.

Each flat value's coordinates come from walking the partitions from the innermost
out: at a level with splits ``s``, item ``j`` sits in row ``r = rowid(j)`` at column
``j - s[r]``; its row is the next level's item. Inner (uniform) dimensions of the flat
values add their own coordinates."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


def _check_splits(op, splits: np.ndarray, size: int, level: int) -> np.ndarray:
    s = np.asarray(splits, np.int64).reshape(-1)
    if s.size == 0 or s[0] != 0:
        raise _invalid(op, f"First value of ragged splits must be 0 (level {level}), got "
                           f"{s[:1].tolist()}")
    if (np.diff(s) < 0).any():
        raise _invalid(op, f"Ragged splits must be sorted in ascending order (level "
                           f"{level}): {s.tolist()}")
    if s[-1] != size:
        raise _invalid(op, f"Final value of ragged splits must match the length of the "
                           f"corresponding values (level {level}): {s[-1]} vs {size}")
    return s


def _coordinates(splits: list[np.ndarray], n_values: int):
    """The ragged coordinates ``[n_values, ragged_rank + 1]`` of each flat value, and
    the bounding shape of those dimensions."""
    idx = np.arange(n_values, dtype=np.int64)
    cols = []
    widths = []
    for s in reversed(splits):
        lengths = np.diff(s)
        rowid = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        cols.append(idx - s[rowid[idx]] if idx.size else idx)
        idx = rowid[idx] if idx.size else idx
        widths.append(int(lengths.max()) if lengths.size else 0)
    coords = np.stack([idx, *reversed(cols)], axis=1) if n_values else \
        np.zeros((0, len(splits) + 1), np.int64)
    nrows = splits[0].size - 1
    return coords, [nrows, *reversed(widths)]


def _splits_of(op, values_len: int, partitions, types) -> list[np.ndarray]:
    """Row splits of every ragged level from `types`' encodings (TensorFlow's
    ``ROW_SPLITS``, or ``FIRST_DIM_SIZE`` then ``VALUE_ROWIDS``)."""
    types = [t.decode() if isinstance(t, bytes) else t for t in types]
    parts = [np.asarray(p, np.int64) for p in partitions]
    if types and types[0] == "FIRST_DIM_SIZE":
        nrows, types, parts = int(parts[0]), types[1:], parts[1:]
    else:
        nrows = None
    sizes = []  # each level's item count, known from the level below's partition
    for t, p in zip(types, parts, strict=True):
        if t == "ROW_SPLITS":
            sizes.append(p.size - 1)
        elif t == "VALUE_ROWIDS":
            sizes.append(None)
        else:
            raise _invalid(op, f"unsupported row_partition_type {t!r}: expected ROW_SPLITS, "
                               "or FIRST_DIM_SIZE then VALUE_ROWIDS")
    splits = []
    for level, (t, p) in enumerate(zip(types, parts, strict=True)):
        size = values_len if level == len(types) - 1 else None
        if t == "ROW_SPLITS":
            if size is None:
                size = sizes[level + 1] if sizes[level + 1] is not None else parts[
                    level + 1].size
            splits.append(_check_splits(op, p, size, level))
            continue
        rows = nrows if level == 0 else (splits[-1][-1] if splits else None)
        if rows is None:
            raise _invalid(op, "VALUE_ROWIDS needs FIRST_DIM_SIZE before it")
        if p.size and ((np.diff(p) < 0).any() or p[0] < 0 or p[-1] >= rows):
            raise _invalid(op, f"value_rowids must be sorted and in [0, {rows}) (level "
                               f"{level})")
        splits.append(np.concatenate([[0], np.cumsum(np.bincount(p, minlength=rows))]))
    return splits


@cpu_kernel("RaggedTensorToSparse", fresh=True)
def ragged_tensor_to_sparse(*args, RAGGED_RANK, op, **attrs):
    splits_in, values = args[:RAGGED_RANK], np.asarray(args[RAGGED_RANK])
    splits = []
    for level, s in enumerate(splits_in):
        size = values.shape[0] if level == RAGGED_RANK - 1 else \
            int(np.asarray(splits_in[level + 1]).size - 1)
        splits.append(_check_splits(op, s, size, level))
    coords, dims = _coordinates(splits, values.shape[0])
    inner = values.shape[1:]
    if inner:
        cells = np.indices(inner).reshape(len(inner), -1).T
        k = cells.shape[0]
        coords = np.concatenate([np.repeat(coords, k, axis=0),
                                 np.tile(cells, (coords.shape[0], 1))], axis=1)
    return (coords.astype(np.int64), values.reshape(-1),
            np.asarray([*dims, *inner], np.int64))


@cpu_kernel("RaggedTensorToTensor", fresh=True)
def ragged_tensor_to_tensor(shape, values, default_value, *partitions, row_partition_types,
                            op, **attrs):
    values = np.asarray(values)
    default = np.asarray(default_value, values.dtype)
    inner = values.shape[1:]
    if default.ndim >= values.ndim and values.ndim:
        raise _invalid(op, f"default_value.shape={list(default.shape)} and "
                           f"rt_input.flat_values.shape={list(values.shape)} are "
                           "incompatible: default_value.rank must be less than "
                           "rt_input.flat_values.rank")
    splits = _splits_of(op, values.shape[0], partitions, row_partition_types)
    coords, dims = _coordinates(splits, values.shape[0])
    dims = [*dims, *inner]
    want = np.asarray(shape, np.int64)
    if want.ndim:  # a known rank (a scalar is an unknown one): -1 keeps a dimension
        if want.size != len(dims):
            raise _invalid(op, f"shape {want.tolist()} has rank {want.size}, the ragged "
                               f"tensor has rank {len(dims)}")
        dims = [d if w < 0 else int(w) for d, w in zip(dims, want.tolist(), strict=True)]
    ragged = len(splits) + 1
    out_inner = tuple(dims[ragged:])
    try:
        fill = np.broadcast_to(default, out_inner)
    except ValueError:
        raise _invalid(op, f"default_value of shape {list(default.shape)} does not "
                           f"broadcast to the inner shape {list(out_inner)}") from None
    out = np.empty(tuple(dims), values.dtype)
    out[...] = fill
    keep = np.all(coords < np.asarray(dims[:ragged]), axis=1)
    src = values[keep]
    if out_inner != inner:  # a given shape can cut the inner dimensions too
        src = src[(slice(None), *(slice(0, d) for d in out_inner))]
        out_view = out[tuple(coords[keep].T)]
        out_view[(slice(None), *(slice(0, s) for s in src.shape[1:]))] = src
        out[tuple(coords[keep].T)] = out_view
    else:
        out[tuple(coords[keep].T)] = src
    return out


def _ranges(starts: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(starts[i], limits[i])``, vectorized."""
    lengths = np.maximum(limits - starts, 0)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + offsets


@cpu_kernel("RaggedGather", fresh=True)
def ragged_gather(*args, PARAMS_RAGGED_RANK, OUTPUT_RAGGED_RANK, op, **attrs):
    """Rows `indices` of a ragged tensor: the selected rows' partitions re-based level
    by level, their flat values gathered; `indices` of rank k > 1 adds k - 1 uniform
    partitions in front."""
    n = PARAMS_RAGGED_RANK
    splits_in, values, indices = args[:n], np.asarray(args[n]), np.asarray(args[n + 1])
    splits = []
    for level, s in enumerate(splits_in):
        size = values.shape[0] if level == n - 1 else int(np.asarray(splits_in[level + 1]).size
                                                           - 1)
        splits.append(_check_splits(op, s, size, level))
    nrows = splits[0].size - 1
    flat = indices.reshape(-1).astype(np.int64)
    bad = (flat < 0) | (flat >= nrows)
    if bad.any():
        k = int(np.argmax(bad))
        raise _invalid(op, f"indices[{k}] = {int(flat[k])} is not in [0, {nrows})")
    out_dtype = np.asarray(splits_in[0]).dtype
    uniform = []
    width_total = indices.shape[0] if indices.ndim else 1
    for d in indices.shape[1:]:
        uniform.append(np.arange(0, width_total * d + 1, d, dtype=np.int64))
        width_total *= d
    out_splits = []
    rows = flat
    for s in splits:
        starts, limits = s[rows], s[rows + 1]
        out_splits.append(np.concatenate([[0], np.cumsum(limits - starts)]).astype(np.int64))
        rows = _ranges(starts, limits)
    if indices.ndim == 0:  # one row: its own partitions, without the batch of one
        out_splits = out_splits[1:]
    result = [x.astype(out_dtype) for x in (*uniform, *out_splits)]
    if len(result) != OUTPUT_RAGGED_RANK:
        raise _invalid(op, f"OUTPUT_RAGGED_RANK is {OUTPUT_RAGGED_RANK}, but indices of rank "
                           f"{indices.ndim} into a ragged rank {n} tensor give "
                           f"{len(result)}")
    return [*result, values[rows]]


@cpu_kernel("RaggedCross", fresh=True)
def ragged_cross(*args, Nsparse, input_order, hashed_output, num_buckets, hash_key,
                 out_row_splits_type, op, **attrs):
    """`tf.ragged.cross`: the inputs in `input_order` (``R`` ragged, ``S`` sparse, ``D``
    dense), each as a SparseTensor, crossed by the SparseCross kernel; rows as splits."""
    from flowgraph.backends.cpu.kernels_sparse import cross

    order = input_order.decode() if isinstance(input_order, bytes) else str(input_order)
    n_r, n_d, n_s = order.count("R"), order.count("D"), int(Nsparse)
    it = iter(args)
    r_values = [next(it) for _ in range(n_r)]
    r_splits = [next(it) for _ in range(n_r)]
    s_idx = [next(it) for _ in range(n_s)]
    s_val = [next(it) for _ in range(n_s)]
    s_shape = [next(it) for _ in range(n_s)]
    dense = [np.asarray(next(it)) for _ in range(n_d)]
    parts = {"R": [], "S": [], "D": []}
    for v, s in zip(r_values, r_splits, strict=True):
        s = _check_splits(op, s, np.asarray(v).shape[0], 0)
        coords, dims = _coordinates([s], np.asarray(v).shape[0])
        parts["R"].append((coords, np.asarray(v), np.asarray(dims, np.int64)))
    for i, v, s in zip(s_idx, s_val, s_shape, strict=True):
        parts["S"].append((np.asarray(i, np.int64), np.asarray(v), np.asarray(s, np.int64)))
    for d in dense:
        if d.ndim != 2:
            raise _invalid(op, f"dense inputs must be [batch, n], got shape {list(d.shape)}")
        cells = np.indices(d.shape).reshape(2, -1).T.astype(np.int64)
        parts["D"].append((cells, d.reshape(-1), np.asarray(d.shape, np.int64)))
    taken = {"R": 0, "S": 0, "D": 0}
    ordered = []
    for kind in order:
        ordered.append(parts[kind][taken[kind]])
        taken[kind] += 1
    inputs = [p[0] for p in ordered] + [p[1] for p in ordered] + [p[2] for p in ordered]
    indices, values, shape = cross(inputs, len(ordered), bool(hashed_output),
                                   int(num_buckets), int(hash_key))
    counts = np.bincount(indices[:, 0], minlength=int(shape[0])) if len(indices) else \
        np.zeros(int(shape[0]), np.int64)
    splits = np.concatenate([[0], np.cumsum(counts)]).astype(
        np.dtype(out_row_splits_type.as_numpy_dtype))
    return values, splits
