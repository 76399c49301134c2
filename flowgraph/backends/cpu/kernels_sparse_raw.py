"""CPU kernels of TensorFlow's SparseTensor op types (`flowgraph/ops/sparse_raw_ops.py`):
sums and element-wise maxima of two SparseTensors, a SparseTensor against a dense tensor,
concatenation, slicing and splitting, the softmax over the last dimension, the max/sum
reductions with sparse output, the serialized form of one SparseTensor, the gradients of
the sparse segment reductions, the session's maps of SparseTensors by handle, and
``SparseCrossV2`` (the SparseCross kernel with a separator).

Entries are matched by their row-major position (``indices @ strides``, `_linear`);
inputs are expected in canonical (row-major) order, as TensorFlow's kernels expect, and
results come out in that order. Errors quote TensorFlow's messages.
"""

from __future__ import annotations

import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_sparse import _linear
from flowgraph.backends.cpu.kernels_sparse_serialize import _parse, _proto_bytes
from flowgraph.framework import errors


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


def _fmt(v) -> str:
    return "[" + ",".join(str(int(x)) for x in np.reshape(v, -1)) + "]"


def _same_shape(op, a_shape, b_shape) -> np.ndarray:
    a, b = np.asarray(a_shape, np.int64), np.asarray(b_shape, np.int64)
    if a.size != b.size:
        raise _invalid(op, f"Operands do not have the same ranks; got shapes: {_fmt(a)} and "
                           f"{_fmt(b)}")
    bad = np.flatnonzero(a != b)
    if bad.size:
        d = int(bad[0])
        raise _invalid(op, f"Operands' shapes do not match: got {a[d]} and {b[d]} for "
                           f"dimension {d}")
    return a


def _rows(indices, rank: int) -> np.ndarray:
    a = np.asarray(indices, np.int64)
    return a if a.ndim == 2 else a.reshape(-1, rank)


def _merge(a_idx, b_idx, shape):
    """The union of two index sets: its indices (sorted), and for each entry of ``a`` and
    of ``b`` its position in the union."""
    lin = np.concatenate([_linear(a_idx, shape), _linear(b_idx, shape)])
    keys, inverse = np.unique(lin, return_inverse=True)
    first = np.zeros(keys.size, np.int64)
    first[inverse[::-1]] = np.arange(lin.size - 1, -1, -1)  # first entry of each key
    union = np.concatenate([a_idx, b_idx])[first]
    return union, inverse[:len(a_idx)], inverse[len(a_idx):]


# -- SparseAdd, SparseAddGrad, SparseSparseMaximum/Minimum -------------------------------
@cpu_kernel("SparseAdd", fresh=True)
def sparse_add(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh, *, op):
    shape = _same_shape(op, a_shape, b_shape)
    a_idx, b_idx = _rows(a_indices, shape.size), _rows(b_indices, shape.size)
    union, pa, pb = _merge(a_idx, b_idx, shape)
    values = np.zeros(len(union), a_values.dtype)
    np.add.at(values, pa, a_values)
    np.add.at(values, pb, b_values)
    both = np.zeros(len(union), bool)
    both[np.intersect1d(pa, pb)] = True
    # Only sums of two entries are thresholded: a lone entry is kept whatever its size.
    keep = ~both | (np.abs(values) >= np.asarray(thresh))
    return union[keep], values[keep], shape


@cpu_kernel("SparseAddGrad", fresh=True)
def sparse_add_grad(grad, a_indices, b_indices, sum_indices, *, op):
    rank = sum_indices.shape[1] if sum_indices.ndim == 2 else a_indices.shape[-1]
    a_idx, b_idx, s_idx = (_rows(x, rank) for x in (a_indices, b_indices, sum_indices))
    every = np.concatenate([s_idx, a_idx, b_idx])
    if every.size == 0:
        return np.zeros(len(a_idx), grad.dtype), np.zeros(len(b_idx), grad.dtype)
    _, inv = np.unique(every, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    table = np.zeros(int(inv.max()) + 1, grad.dtype)
    table[inv[:len(s_idx)]] = grad
    n_s, n_a = len(s_idx), len(a_idx)
    return table[inv[n_s:n_s + n_a]], table[inv[n_s + n_a:]]


def _sparse_extremum(fn):
    def kernel(a_indices, a_values, a_shape, b_indices, b_values, b_shape, *, op):
        shape = _same_shape(op, a_shape, b_shape)
        a_idx, b_idx = _rows(a_indices, shape.size), _rows(b_indices, shape.size)
        union, pa, pb = _merge(a_idx, b_idx, shape)
        va = np.zeros(len(union), a_values.dtype)  # a missing entry counts as zero
        vb = np.zeros(len(union), a_values.dtype)
        va[pa], vb[pb] = a_values, b_values
        return union, fn(va, vb)

    return kernel


cpu_kernel("SparseSparseMaximum", fresh=True)(_sparse_extremum(np.maximum))
cpu_kernel("SparseSparseMinimum", fresh=True)(_sparse_extremum(np.minimum))


# -- a SparseTensor with a dense tensor --------------------------------------------------
@cpu_kernel("SparseTensorDenseAdd", fresh=True)
def sparse_tensor_dense_add(a_indices, a_values, a_shape, b, *, op):
    shape = np.asarray(a_shape, np.int64)
    if shape.size != b.ndim:
        raise _invalid(op, f"Dimensions must be equal: a_shape {_fmt(shape)} has rank "
                           f"{shape.size}, b has shape {list(b.shape)}")
    for d in range(shape.size):
        if shape[d] != b.shape[d]:
            raise _invalid(op, f"Dimension {d} does not equal (no broadcasting is "
                               f"supported): sparse side {shape[d]} vs dense side "
                               f"{b.shape[d]}")
    out = np.array(b, copy=True)
    idx = _rows(a_indices, shape.size)
    if ((idx < 0) | (idx >= shape)).any():
        k = int(np.argmax(((idx < 0) | (idx >= shape)).any(axis=1)))
        raise _invalid(op, f"a_indices[{k}] = {_fmt(idx[k])} is out of bounds of "
                           f"{_fmt(shape)}")
    if shape.size:
        np.add.at(out, tuple(idx.T), a_values)
    else:  # a scalar: every entry addresses it
        out = np.asarray(out + np.sum(a_values, dtype=out.dtype), out.dtype)
    return out


def _cwise(kind):
    def kernel(sp_indices, sp_values, sp_shape, dense, *, op):
        shape = np.asarray(sp_shape, np.int64)
        d = np.asarray(dense)
        ok = d.ndim <= shape.size and all(
            s in (1, t) for s, t in zip(d.shape[::-1], shape[::-1].tolist(), strict=False))
        if not ok:
            raise _invalid(op, f"SparseDenseBinaryOpShared broadcasts dense to sparse only; "
                               f"got incompatible shapes: {_fmt(shape)} vs. "
                               f"{_fmt(d.shape)}")
        idx = _rows(sp_indices, shape.size)
        # The dense operand's element for each entry: broadcast dimensions index 0.
        lead = shape.size - d.ndim
        at = tuple(np.where(d.shape[k] == 1, 0, idx[:, lead + k]) for k in range(d.ndim))
        other = d[at] if d.ndim else np.full(len(idx), d[()], d.dtype)
        if kind == "Add":
            return sp_values + other
        if kind == "Mul":
            return sp_values * other
        if sp_values.dtype.kind in "iu":
            if (d == 0).any():
                raise _invalid(op, "SparseDenseCwiseDiv cannot divide by zero,but input "
                                   "dense tensor contains zero ")
            q = np.abs(sp_values) // np.abs(other)  # C's division truncates toward zero
            return (np.sign(sp_values) * np.sign(other) * q).astype(sp_values.dtype)
        return sp_values / other

    return kernel


for _kind in ("Add", "Mul", "Div"):
    cpu_kernel(f"SparseDenseCwise{_kind}", fresh=True)(_cwise(_kind))


# -- concat, slice, split ----------------------------------------------------------------
@cpu_kernel("SparseConcat", fresh=True)
def sparse_concat(*parts, concat_dim, N, op):
    n = int(N)
    indices, values, shapes = parts[:n], parts[n:2 * n], parts[2 * n:]
    first = np.asarray(shapes[0], np.int64)
    rank = first.size
    if not -rank <= concat_dim < rank:
        raise _invalid(op, f"Concat dimension must be in range [{-rank}, {rank}), got "
                           f"{concat_dim}")
    axis = concat_dim % rank
    offset, rows, out_shape = 0, [], first.copy()
    for i, (idx, shp) in enumerate(zip(indices, shapes, strict=True)):
        shp = np.asarray(shp, np.int64)
        if shp.size != rank:
            raise _invalid(op, f"Ranks of all input tensors must match: expected {rank} but "
                               f"got {shp.size} at position {i}")
        for d in range(rank):
            if d != axis and shp[d] != first[d]:
                raise _invalid(op, f"Input shapes must match: expected {first[d]} for "
                                   f"dimension {d} but got {shp[d]} at position {i}")
        r = _rows(idx, rank).copy()
        r[:, axis] += offset
        rows.append(r)
        offset += int(shp[axis])
    out_shape[axis] = offset
    all_idx = np.concatenate(rows)
    all_val = np.concatenate([np.asarray(v).reshape(-1) for v in values])
    order = np.argsort(_linear(all_idx, out_shape), kind="stable")
    return all_idx[order], all_val[order], out_shape


def _slice(op, indices, values, shape, start, size):
    shape = np.asarray(shape, np.int64)
    start, size = np.asarray(start, np.int64), np.asarray(size, np.int64)
    if start.size != shape.size or size.size != shape.size:
        raise _invalid(op, f"Expected start and size of the input's rank {shape.size}, got "
                           f"{start.size} and {size.size} values")
    idx = _rows(indices, shape.size)
    inside = np.all((idx >= start) & (idx < start + size), axis=1)
    out_shape = np.maximum(np.minimum(start + size, shape) - start, 0)
    return idx[inside] - start, values[inside], out_shape, inside


@cpu_kernel("SparseSlice", fresh=True)
def sparse_slice(indices, values, shape, start, size, *, op):
    out_idx, out_val, out_shape, _ = _slice(op, indices, values, shape, start, size)
    return out_idx, out_val, out_shape


@cpu_kernel("SparseSliceGrad", fresh=True)
def sparse_slice_grad(grad, input_indices, input_start, output_indices, *, op):
    rank = np.asarray(input_start).size
    inp = _rows(input_indices, rank) - np.asarray(input_start, np.int64)
    out = _rows(output_indices, rank)
    result = np.zeros(len(inp), grad.dtype)
    if len(out) == 0:
        return result
    every = np.concatenate([out, inp])
    _, inv = np.unique(every, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    table = np.zeros(int(inv.max()) + 1, grad.dtype)
    hit = np.zeros(table.size, bool)
    table[inv[:len(out)]], hit[inv[:len(out)]] = grad, True
    return np.where(hit[inv[len(out):]], table[inv[len(out):]], result)


@cpu_kernel("SparseSplit", fresh=True)
def sparse_split(split_dim, indices, values, shape, *, num_split, op):
    shape = np.asarray(shape, np.int64)
    rank = shape.size
    axis = int(split_dim)
    if not -rank <= axis < rank:
        raise _invalid(op, f"Input split_dim should be between {-rank} and {rank}, got "
                           f"{axis}")
    axis %= rank
    dim = int(shape[axis])
    if not 1 <= num_split <= max(dim, 1):
        raise _invalid(op, f"Input num_split should be between 1 and {dim}, got {num_split}")
    base, extra = divmod(dim, num_split)
    outs = ([], [], [])
    begin = 0
    for i in range(num_split):
        length = base + (1 if i < extra else 0)
        start = np.zeros(rank, np.int64)
        start[axis] = begin
        size = shape.copy()
        size[axis] = length
        idx, val, shp, _ = _slice(op, indices, values, shape, start, size)
        for part, x in zip(outs, (idx, val, shp), strict=True):
            part.append(x)
        begin += length
    return [*outs[0], *outs[1], *outs[2]]


# -- softmax, reductions -----------------------------------------------------------------
@cpu_kernel("SparseSoftmax", fresh=True)
def sparse_softmax(sp_indices, sp_values, sp_shape, *, op):
    """The softmax of each innermost row's entries; like TensorFlow's kernel, which
    reorders its input, the values come out in canonical (row-major) order."""
    shape = np.asarray(sp_shape, np.int64)
    if shape.size < 2:
        raise _invalid(op, "Input should have rank >= 2, but received shape: "
                           + " ".join(str(int(d)) for d in shape))
    idx = _rows(sp_indices, shape.size)
    if len(idx) == 0:
        return np.zeros(0, sp_values.dtype)
    order = np.argsort(_linear(idx, shape), kind="stable")
    idx, values = idx[order], sp_values[order]
    _, group = np.unique(_linear(idx[:, :-1], shape[:-1]), return_inverse=True)
    group = group.reshape(-1)
    peak = np.full(int(group.max()) + 1, -np.inf, values.dtype)
    np.maximum.at(peak, group, values)
    e = np.exp(values - peak[group])
    total = np.zeros(peak.size, values.dtype)
    np.add.at(total, group, e)
    return (e / total[group]).astype(values.dtype)


def _reduce_groups(op, indices, values, shape, axes, keep_dims, ufunc):
    """The reduced entries: their output coordinates (sorted), values and output shape."""
    shape = np.asarray(shape, np.int64)
    rank = shape.size
    axes = np.asarray(axes).reshape(-1)
    for a in axes.tolist():
        if not -rank <= a < rank:
            raise _invalid(op, f"Invalid reduction dimension {a}, for input with {rank} "
                               "dimensions.")
    red = sorted({int(a) % rank for a in axes.tolist()})
    kept = [d for d in range(rank) if d not in red]
    idx = _rows(indices, rank)
    out_idx = idx.copy()
    out_idx[:, red] = 0
    out_shape = shape.copy()
    out_shape[red] = 1
    if len(idx):
        lin = _linear(out_idx, out_shape)
        _, first, group = np.unique(lin, return_index=True, return_inverse=True)
        group = group.reshape(-1)
        acc = values[first].copy()
        if ufunc is np.add:
            acc[:] = 0
        ufunc.at(acc, group, values)
        out_idx = out_idx[first]
    else:
        acc = np.zeros(0, values.dtype)
        out_idx = np.zeros((0, rank), np.int64)
    if not keep_dims:
        out_idx, out_shape = out_idx[:, kept], out_shape[kept]
    return out_idx, acc, out_shape


@cpu_kernel("SparseReduceMax", fresh=True)
def sparse_reduce_max(indices, values, shape, axes, *, keep_dims, op):
    out_idx, acc, out_shape = _reduce_groups(op, indices, values, shape, axes, keep_dims,
                                             np.maximum)
    out = np.zeros(tuple(out_shape.tolist()), values.dtype)  # an empty slice gives 0
    if len(acc) and out.ndim:
        out[tuple(out_idx.T)] = acc
    elif len(acc):
        out[()] = acc[0]
    return out


@cpu_kernel("SparseReduceMaxSparse", fresh=True)
def sparse_reduce_max_sparse(indices, values, shape, axes, *, keep_dims, op):
    return _reduce_groups(op, indices, values, shape, axes, keep_dims, np.maximum)


@cpu_kernel("SparseReduceSumSparse", fresh=True)
def sparse_reduce_sum_sparse(indices, values, shape, axes, *, keep_dims, op):
    return _reduce_groups(op, indices, values, shape, axes, keep_dims, np.add)


# -- serialization -----------------------------------------------------------------------
@cpu_kernel("SerializeSparse", fresh=True)
def serialize_sparse(indices, values, shape, *, out_type, op):
    if out_type.name != "string":
        raise _invalid(op, f"out_type {out_type.name} is not supported: only tf.string "
                           "(a variant holds no bytes on the CPU)")
    out = np.empty(3, dtype=object)
    out[:] = [_proto_bytes(np.asarray(indices, np.int64)), _proto_bytes(np.asarray(values)),
              _proto_bytes(np.asarray(shape, np.int64))]
    return out


@cpu_kernel("DeserializeSparse", fresh=True)
def deserialize_sparse(serialized, *, dtype, op):
    from flowgraph.backends.cpu.kernels_sparse_serialize import deserialize_many_sparse

    s = np.asarray(serialized, dtype=object)
    if s.ndim < 1 or s.shape[-1] != 3:
        raise _invalid(op, f"Serialized sparse should have 3 as the last dimension, got "
                           f"shape {list(s.shape)}")
    if s.ndim == 1:
        idx, val, shp = _parse(s[0]), _parse(s[1]), _parse(s[2])
        want = np.dtype(object) if dtype.name == "string" else np.dtype(dtype.as_numpy_dtype)
        if val.dtype != want:
            raise _invalid(op, f"Requested SparseTensor of type {dtype.name} but "
                               f"SparseTensor holds {val.dtype}")
        return idx.reshape(-1, shp.size).astype(np.int64), val, shp.astype(np.int64)
    prefix = s.shape[:-1]
    idx, val, shp = deserialize_many_sparse(s.reshape(-1, 3), dtype=dtype, op=op)
    lead = np.stack(np.unravel_index(idx[:, 0], prefix), axis=1) if len(idx) else \
        np.zeros((0, len(prefix)), np.int64)
    return (np.concatenate([lead.astype(np.int64), idx[:, 1:]], axis=1), val,
            np.asarray([*prefix, *shp[1:].tolist()], np.int64))


# -- gradients of the sparse segment reductions -------------------------------------------
def _segment_rows(op, grad, indices, segment_ids, dim0):
    """Each id's row of the gradient, scaled as its reduction averaged it, and the
    row of the input it goes to."""
    idx = np.asarray(indices).reshape(-1)
    seg = np.asarray(segment_ids).reshape(-1)
    if idx.shape != seg.shape:
        raise _invalid(op, f"segment_ids and indices should have same size, got "
                           f"{seg.size} and {idx.size}")
    bad = (idx < 0) | (idx >= dim0)
    if bad.any():
        raise _invalid(op, f"Index {int(idx[np.argmax(bad)])} out of range [0, {dim0}).")
    n = grad.shape[0] if grad.ndim else 0
    bad = (seg < 0) | (seg >= n)
    if bad.any():
        raise _invalid(op, f"Segment id {int(seg[np.argmax(bad)])} out of range [0, {n}).")
    rows = grad[seg]
    kind = op.type.replace("SparseSegment", "").split("Grad")[0]
    if kind != "Sum" and seg.size:
        count = np.bincount(seg, minlength=n)[seg].astype(grad.dtype)
        scale = 1.0 / (count if kind == "Mean" else np.sqrt(count))
        rows = rows * scale.reshape((-1,) + (1,) * (grad.ndim - 1)).astype(grad.dtype)
    return rows, idx


def _segment_grad_dense(grad, indices, segment_ids, output_dim0, *, op):
    dim0 = int(output_dim0)
    rows, idx = _segment_rows(op, grad, indices, segment_ids, dim0)
    out = np.zeros((dim0, *grad.shape[1:]), grad.dtype)
    np.add.at(out, idx, rows)
    return out


def _segment_grad_sparse(grad, indices, segment_ids, dense_output_dim0, *, op):
    rows, idx = _segment_rows(op, grad, indices, segment_ids, int(dense_output_dim0))
    unique, where = np.unique(idx, return_inverse=True)
    out = np.zeros((unique.size, *grad.shape[1:]), grad.dtype)
    np.add.at(out, where.reshape(-1), rows)
    return out, unique.astype(np.asarray(indices).dtype)


for _kind in ("Sum", "Mean", "SqrtN"):
    cpu_kernel(f"SparseSegment{_kind}Grad", fresh=True)(_segment_grad_dense)
    cpu_kernel(f"SparseSegment{_kind}GradV2", fresh=True)(_segment_grad_sparse)


# -- the session's SparseTensor maps ------------------------------------------------------
class SparseTensorsMap:
    """SparseTensors stored under int64 handles (0, 1, ...) until taken; one per
    ``(container, shared_name or the adding op's name)`` in a session's resources."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.entries: dict[int, tuple] = {}
        self.next_id = 0

    def add(self, parts: list[tuple]) -> np.ndarray:
        with self.lock:
            first = self.next_id
            for k, part in enumerate(parts):
                self.entries[first + k] = part
            self.next_id += len(parts)
        return np.arange(first, first + len(parts), dtype=np.int64)

    def take(self, op, handles) -> list[tuple]:
        with self.lock:
            missing = [h for h in handles if h not in self.entries]
            if missing:
                raise _invalid(op, f"Unable to find SparseTensor: {missing[0]} in map: "
                                   f"{self.name}")
            return [self.entries.pop(h) for h in handles]


class _MapKernel:
    def __init__(self, ctx, *, container="", shared_name="", **_):
        self.map = ctx.resources.lookup_or_create(container or "", shared_name or ctx.op.name,
                                                  SparseTensorsMap)


@cpu_kernel("AddSparseToTensorsMap")
class AddSparseToTensorsMap(_MapKernel):
    def __call__(self, indices, values, shape):
        part = (np.array(indices, np.int64), np.array(values), np.array(shape, np.int64))
        return self.map.add([part])[0]


@cpu_kernel("AddManySparseToTensorsMap")
class AddManySparseToTensorsMap(_MapKernel):
    """One entry per row (dimension 0) of a SparseTensor of rank >= 2."""

    def __init__(self, ctx, **attrs):
        super().__init__(ctx, **attrs)
        self.op = ctx.op

    def __call__(self, indices, values, shape):
        shape = np.asarray(shape, np.int64)
        if shape.size < 2:
            raise _invalid(self.op, f"Rank of input SparseTensor should be > 1, but saw rank: "
                                    f"{shape.size}")
        idx = _rows(indices, shape.size)
        rows = idx[:, 0]
        if idx.size and (rows.min() < 0 or rows.max() >= shape[0]):
            raise _invalid(self.op, f"Index {int(rows.max())} out of range of the minibatch "
                                    f"size {int(shape[0])}")
        order = np.argsort(rows, kind="stable")
        counts = np.bincount(rows, minlength=int(shape[0]))
        cuts = np.cumsum(counts)[:-1]
        inner = shape[1:].copy()
        parts = [(i[:, 1:].copy(), v.copy(), inner.copy()) for i, v in zip(
            np.split(idx[order], cuts), np.split(np.asarray(values)[order], cuts), strict=True)]
        return self.map.add(parts)


@cpu_kernel("TakeManySparseFromTensorsMap")
class TakeManySparseFromTensorsMap(_MapKernel):
    """The SparseTensors of `handles`, removed from the map, as one batch: each gets a
    leading row index, and the dense shape is the largest of each dimension."""

    def __init__(self, ctx, *, dtype=None, **attrs):
        super().__init__(ctx, **attrs)
        self.op, self.dtype = ctx.op, dtype

    def __call__(self, handles):
        h = np.asarray(handles).reshape(-1)
        if np.ndim(handles) != 1:
            raise _invalid(self.op, f"sparse_handles should be a vector but received shape "
                                    f"{list(np.shape(handles))}")
        parts = self.map.take(self.op, h.tolist())
        want = np.dtype(object) if self.dtype is None or self.dtype.name == "string" else \
            np.dtype(self.dtype.as_numpy_dtype)
        ranks = {p[2].size for p in parts}
        if len(ranks) > 1:
            raise _invalid(self.op, f"Inconsistent rank across SparseTensors: ranks "
                                    f"{sorted(ranks)}")
        rank = ranks.pop() if ranks else 0
        for k, p in enumerate(parts):
            if p[1].dtype != want and not (want.kind == "O" and p[1].dtype.kind in "OSU"):
                raise _invalid(self.op, f"Requested SparseTensor of type {self.dtype.name} "
                                        f"but SparseTensor[{k}].values.dtype() == "
                                        f"{p[1].dtype}")
        idx = [np.concatenate([np.full((len(p[0]), 1), k, np.int64), p[0].reshape(
            len(p[0]), rank)], axis=1) for k, p in enumerate(parts)]
        shape = np.max(np.stack([p[2] for p in parts]), axis=0) if parts else \
            np.zeros(rank, np.int64)
        indices = np.concatenate(idx) if idx else np.zeros((0, rank + 1), np.int64)
        values = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, want)
        return indices, values.astype(want, copy=False), np.asarray(
            [len(parts), *shape.tolist()], np.int64)


@cpu_kernel("SparseCrossV2")
def sparse_cross_v2(*inputs, N, op, **attrs):
    """`tf.sparse.cross`: string crosses joined by the `sep` input."""
    from flowgraph.backends.cpu.kernels_sparse import cross

    sep = np.asarray(inputs[-1], dtype=object).item()
    sep = sep.decode("utf-8") if isinstance(sep, bytes) else str(sep)
    return cross(inputs[:-1], int(N), False, 0, 0, sep)
