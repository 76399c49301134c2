"""CPU kernels for sparse tensors, segment reductions, bucketizing, feature crosses, string
hashing and vocabulary lookups (`flowgraph/ops/sparse_ops.py`,
`flowgraph/ops/string_hash_ops.py`).

String tensors are object arrays of `bytes` (graph constants) or `str` (fed values); both
are accepted. Index errors are InvalidArgumentErrors naming the entry.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.backends.cpu._farmhash import fingerprint_cat64_array, fingerprints
from flowgraph.framework.asset_file import read_text_lines
from flowgraph.framework.errors import InvalidArgumentError, NotFoundError
from flowgraph.ops.string_hash_ops import as_bytes, fingerprint64, fingerprint_cat64

_M = 0xFFFFFFFFFFFFFFFF


def _invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _fmt(row) -> str:
    return "[" + ",".join(str(int(v)) for v in row) + "]"


def _check_sparse(indices, shape, what: str = "indices") -> None:
    if indices.ndim != 2 or indices.shape[1] != shape.size:
        raise _invalid(f"{what} must be [N, {shape.size}] for a dense shape of rank "
                       f"{shape.size}, got {list(indices.shape)}")
    if indices.size:
        bad = np.any((indices < 0) | (indices >= shape), axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            raise _invalid(f"{what}[{k}] = {_fmt(indices[k])} is out of bounds: need "
                           f"0 <= index < {_fmt(shape)}")


def _linear(indices, shape) -> np.ndarray:
    """Row-major positions of `indices` in a dense tensor of `shape` (Python ints for
    shapes whose size overflows int64 are not supported)."""
    strides = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(int(shape[i + 1]), 1)
    return indices.astype(np.int64) @ strides if len(shape) else np.zeros(len(indices), np.int64)


@cpu_kernel("SparseToDense")
def sparse_to_dense(indices, output_shape, values, default_value, *, validate_indices):
    shape = np.asarray(output_shape, dtype=np.int64).reshape(-1)
    idx = np.asarray(indices, dtype=np.int64)
    if idx.ndim < 2:
        idx = idx.reshape(-1, 1) if shape.size == 1 else idx.reshape(-1, shape.size)
    _check_sparse(idx, shape, "sparse_indices")
    n = idx.shape[0]
    vals = np.asarray(values)
    if vals.ndim == 0:
        vals = np.full(n, vals[()], dtype=vals.dtype)
    elif vals.shape[0] != n:
        raise _invalid(f"sparse_values has {vals.shape[0]} entries, sparse_indices has {n}")
    if validate_indices and n > 1:
        lin = _linear(idx, shape)
        step = np.diff(lin)
        if (step <= 0).any():
            k = int(np.argmax(step <= 0)) + 1
            kind = "repeated" if step[k - 1] == 0 else "out of order"
            raise _invalid(f"indices[{k}] = {_fmt(idx[k])} is {kind}. Many sparse ops "
                           "require sorted indices; use tf.sparse.reorder first.")
    out = np.full(tuple(shape), default_value, dtype=vals.dtype)
    if n:
        out[tuple(idx.T)] = vals
    return out


def _order(indices) -> np.ndarray:
    if indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


@cpu_kernel("SparseReorder")
def sparse_reorder(indices, values, shape):
    # Only the layout is checked: TensorFlow reorders out-of-range indices as given
    if indices.ndim != 2 or indices.shape[1] != shape.size:
        raise _invalid(f"indices must be [N, {shape.size}] for a dense shape of rank "
                       f"{shape.size}, got {list(indices.shape)}")
    perm = _order(indices)
    return indices[perm].astype(np.int64), values[perm]


@cpu_kernel("SparseReshape")
def sparse_reshape(indices, shape, new_shape):
    shape = np.asarray(shape, np.int64)
    new = np.asarray(new_shape, np.int64).copy()
    size = int(np.prod(shape))
    unknown = np.flatnonzero(new == -1)
    if len(unknown) > 1:
        raise _invalid(f"only one output dimension may be -1, got {new.tolist()}")
    if len(unknown):
        known = int(np.prod(new[new != -1]))
        if known == 0 or size % known:
            raise _invalid(f"cannot reshape a SparseTensor of shape {shape.tolist()} "
                           f"({size} elements) to {new.tolist()}")
        new[unknown[0]] = size // known
    if int(np.prod(new)) != size:
        raise _invalid(f"cannot reshape a SparseTensor of shape {shape.tolist()} ({size} "
                       f"elements) to {new.tolist()} ({int(np.prod(new))} elements)")
    lin = _linear(indices, shape)
    out = np.stack(np.unravel_index(lin, tuple(new)), axis=1) if new.size else \
        np.zeros((len(lin), 0), np.int64)
    return out.astype(np.int64).reshape(len(lin), new.size), new


@cpu_kernel("SparseFillEmptyRows")
def sparse_fill_empty_rows(indices, values, shape, default_value):
    shape = np.asarray(shape, np.int64)
    if shape.size == 0:
        raise _invalid("dense_shape must have rank >= 1")
    _check_sparse(indices, shape)
    rows = int(shape[0])
    n, rank = indices.shape
    present = np.zeros(rows, dtype=bool)
    present[indices[:, 0]] = True
    empty = ~present
    fill_idx = np.zeros((int(empty.sum()), rank), np.int64)
    fill_idx[:, 0] = np.flatnonzero(empty)
    all_idx = np.concatenate([indices.astype(np.int64), fill_idx])
    all_vals = np.concatenate([values, np.full(len(fill_idx), default_value,
                                               dtype=values.dtype)])
    # Stable by row: entries of a row keep their input order.
    perm = np.argsort(all_idx[:, 0], kind="stable")
    reverse = np.empty(len(perm), np.int64)
    reverse[perm] = np.arange(len(perm))
    return all_idx[perm], all_vals[perm], empty, reverse[:n]


@cpu_kernel("SparseFillEmptyRowsGrad")
def sparse_fill_empty_rows_grad(reverse_index_map, grad_values):
    d_values = grad_values[reverse_index_map]
    return d_values, np.asarray(grad_values.sum() - d_values.sum(), dtype=grad_values.dtype)


@cpu_kernel("SparseReduceSum")
def sparse_reduce_sum(indices, values, shape, axes, *, keep_dims):
    shape = np.asarray(shape, np.int64)
    rank = shape.size
    _check_sparse(indices, shape)
    axes = np.asarray(axes).reshape(-1)
    if ((axes < -rank) | (axes >= rank)).any():
        raise _invalid(f"reduction axes {axes.tolist()} out of range for rank {rank}")
    red = sorted({int(a) % rank for a in axes})
    keep = [i for i in range(rank) if i not in red]
    if keep:
        out = np.zeros(tuple(int(shape[i]) for i in keep), dtype=values.dtype)
        np.add.at(out, tuple(indices[:, keep].T), values)
    else:
        out = np.asarray(values.sum(), dtype=values.dtype)
    if keep_dims:
        out = out.reshape([1 if i in red else int(shape[i]) for i in range(rank)])
    return np.asarray(out)


@cpu_kernel("SparseTensorDenseMatMul")
def sparse_tensor_dense_matmul(indices, values, shape, b, *, adjoint_a, adjoint_b):
    import scipy.sparse

    shape = np.asarray(shape, np.int64)
    if shape.size != 2:
        raise _invalid(f"a must be a matrix, got dense shape {shape.tolist()}")
    _check_sparse(indices, shape, "a_indices")
    rows, cols = indices[:, 0], indices[:, 1]
    m, k = int(shape[0]), int(shape[1])
    if adjoint_a:
        rows, cols, m, k = cols, rows, k, m
        values = np.conj(values)
    bb = np.conj(b.T) if adjoint_b else b
    if bb.shape[0] != k:
        raise _invalid(f"cannot multiply A ({m}x{k} after adjoint) with B of shape "
                       f"{list(bb.shape)} (after adjoint): inner dimensions differ")
    a = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(m, k))
    return np.asarray(a @ bb, dtype=b.dtype).reshape(m, bb.shape[1])


def _segments(data, indices, segment_ids, num_segments, op_type):
    indices = np.asarray(indices).reshape(-1)
    seg = np.asarray(segment_ids).reshape(-1)
    if indices.shape != seg.shape:
        raise _invalid(f"{op_type}: indices ({indices.size}) and segment_ids ({seg.size}) "
                       "must have the same length")
    n = data.shape[0]
    bad = (indices < 0) | (indices >= n)
    if bad.any():
        k = int(np.argmax(bad))
        raise _invalid(f"{op_type}: indices[{k}] = {int(indices[k])} is out of range "
                       f"[0, {n})")
    if seg.size and (seg[0] < 0 or (np.diff(seg) < 0).any()):
        k = int(np.argmax(np.diff(seg) < 0)) + 1 if seg[0] >= 0 else 0
        raise _invalid(f"{op_type}: segment ids are not increasing: segment_ids[{k}] = "
                       f"{int(seg[k])}; sort them (and the indices) first")
    last = int(seg[-1]) + 1 if seg.size else 0
    if num_segments is None:
        num_segments = last
    elif last > num_segments:
        raise _invalid(f"{op_type}: segment id {last - 1} >= num_segments {num_segments}")
    return indices, seg, int(num_segments)


def _segment_reduce(data, indices, segment_ids, num_segments=None, *, op):
    op_type = op.type
    indices, seg, count = _segments(data, indices, segment_ids,
                                    None if num_segments is None else int(num_segments),
                                    op_type)
    out = np.zeros((count, *data.shape[1:]), dtype=data.dtype)
    if seg.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    ends = np.r_[starts[1:], seg.size]

    def segments(a: int, b: int) -> None:
        """Segments a..b-1 (their rows are contiguous in `indices`)."""
        lo, hi = starts[a], ends[b - 1]
        sums = np.add.reduceat(data[indices[lo:hi]], starts[a:b] - lo, axis=0)
        if "Mean" in op_type or "SqrtN" in op_type:
            sizes = (ends[a:b] - starts[a:b]).astype(data.dtype)
            if "SqrtN" in op_type:
                sizes = np.sqrt(sizes)
            sums = sums / sizes.reshape((-1,) + (1,) * (data.ndim - 1))
        out[seg[starts[a:b]]] = sums

    # Chunks of whole segments on the kernel threads: each sum is the same either way.
    width = max(int(np.prod(data.shape[1:], dtype=np.int64)), 1)
    kernel_pool.parallel_for(starts.size, segments, align=1, grain=-(
        -kernel_pool.GRAIN["gather"] * starts.size // (seg.size * width)))
    return out


for _name in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"):
    cpu_kernel(_name)(_segment_reduce)
    cpu_kernel(_name + "WithNumSegments")(_segment_reduce)


@cpu_kernel("SafeSparseLookup")
def safe_sparse_lookup(params, indices, values, dense_shape, *, combiner):
    """Outputs: the combined rows [batch, ...], the kept ids, their example indices."""
    shape = np.asarray(dense_shape).reshape(-1)
    batch = int(shape[0])
    _check_sparse(indices, shape)
    ids = np.asarray(values).reshape(-1)
    rows = np.asarray(indices)[:, 0]
    keep = ids >= 0
    if not keep.all():  # negative ids are dropped, as safe_embedding_lookup_sparse does
        ids, rows = ids[keep], rows[keep]
    n = params.shape[0]
    if ids.size and int(ids.max()) >= n:
        k = int(np.argmax(ids >= n))
        raise _invalid(f"embedding lookup: id {int(ids[k])} is out of range [0, {n}) of a "
                       f"table of shape {list(params.shape)}")
    out = np.zeros((batch, *params.shape[1:]), dtype=params.dtype)
    picked = params[ids]
    counts = np.bincount(rows, minlength=batch)
    if counts.size == 0 or counts.max() <= 1:  # one id per example: no reduction
        out[rows] = picked
    else:
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
        sums = np.add.reduceat(picked[order], starts, axis=0)
        present = sorted_rows[starts]
        if combiner != "sum":
            sizes = counts[present].astype(params.dtype)
            if combiner == "sqrtn":
                sizes = np.sqrt(sizes)
            sums = sums / sizes.reshape((-1,) + (1,) * (params.ndim - 1))
        out[present] = sums
    return out, ids, rows.astype(np.int32)


@cpu_kernel("SparseSegmentGradRows")
def sparse_segment_grad_rows(grad, segment_ids, *, combiner):
    seg = np.asarray(segment_ids).reshape(-1)
    rows = grad[seg]
    if combiner == "sum" or seg.size == 0:
        return rows
    sizes = np.bincount(seg).astype(grad.dtype)[seg]
    if combiner == "sqrtn":
        sizes = np.sqrt(sizes)
    return rows / sizes.reshape((-1,) + (1,) * (grad.ndim - 1))


@cpu_kernel("Bucketize")
def bucketize(x, *, boundaries):
    return np.searchsorted(np.asarray(boundaries, np.float64), x, side="right").astype(np.int32)


# -- crosses ---------------------------------------------------------------------------------
def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _rows_of_sparse(indices, values, shape, batch):
    """Per batch row, the list of values in stored order."""
    out = [[] for _ in range(batch)]
    for r, v in zip(indices[:, 0].tolist(), values.tolist()):
        out[r].append(v)
    return out


@cpu_kernel("SparseCross")
def sparse_cross(*inputs, num_sparse, num_dense, hashed_output, num_buckets, hash_key):
    return cross(inputs, num_sparse, hashed_output, num_buckets, hash_key)


def cross(inputs, ns: int, hashed_output: bool, num_buckets: int, hash_key: int,
          sep: str = "_X_"):
    """The cross of `ns` SparseTensors (their indices, then values, then shapes) and the
    dense ``[batch, n]`` tensors after them: hashed, or strings joined by `sep`."""
    idx, vals, shapes = inputs[:ns], inputs[ns:2 * ns], inputs[2 * ns:3 * ns]
    dense = inputs[3 * ns:]
    batches = {int(s[0]) for s in shapes} | {int(d.shape[0]) for d in dense}
    if len(batches) > 1:
        raise _invalid(f"sparse cross: inputs have different batch sizes {sorted(batches)}")
    batch = batches.pop() if batches else 0
    if hashed_output:
        fast = _cross_hashed_single(idx, vals, dense, batch, num_buckets, hash_key)
        if fast is not None:
            return fast
    columns = [_rows_of_sparse(i, v, s, batch) for i, v, s in zip(idx, vals, shapes)]
    columns += [[list(row) for row in d.tolist()] for d in dense]

    def feature(v):
        if hashed_output:
            return fingerprint64(as_bytes(v)) if isinstance(v, bytes | str) else int(v) & _M
        return _text(v)

    out_idx, out_vals = [], []
    width = 0
    for r in range(batch):
        feats = [[feature(v) for v in col[r]] for col in columns]
        if not feats or any(not f for f in feats):
            continue
        k = 0
        for combo in _product(feats):
            if hashed_output:
                h = hash_key & _M
                for f in combo:
                    h = fingerprint_cat64(h, f)
                out_vals.append(h % num_buckets if num_buckets > 0 else h % (2**63 - 1))
            else:
                out_vals.append(sep.join(combo).encode("utf-8"))
            out_idx.append((r, k))
            k += 1
        width = max(width, k)
    indices = np.asarray(out_idx, np.int64).reshape(-1, 2)
    values = np.asarray(out_vals, dtype=np.int64 if hashed_output else object)
    if not hashed_output and values.size == 0:
        values = np.empty(0, dtype=object)
    return indices, values, np.asarray([batch, width], np.int64)


def _feature_fingerprints(values: np.ndarray) -> np.ndarray:
    """What a hashed cross combines: Fingerprint64 of strings, the bits of integers."""
    if values.dtype == object or values.dtype.kind in "SU":
        return fingerprints(values)
    return values.astype(np.int64).view(np.uint64).reshape(-1)


def _cross_hashed_single(idx, vals, dense, batch, num_buckets, hash_key):
    """The hashed cross, vectorized, when every input has at most one value per row (the
    common case: one categorical value per feature); None otherwise."""
    if any(d.ndim != 2 or d.shape[1] != 1 for d in dense):
        return None
    present = np.ones(batch, dtype=bool)
    columns = []
    for i, v in zip(idx, vals, strict=True):
        rows = np.asarray(i[:, 0], np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= batch):
            return None
        if rows.size != np.unique(rows).size:
            return None
        has = np.zeros(batch, dtype=bool)
        has[rows] = True
        present &= has
        fp = np.zeros(batch, dtype=np.uint64)
        fp[rows] = _feature_fingerprints(np.asarray(v).reshape(-1))
        columns.append(fp)
    columns += [_feature_fingerprints(np.asarray(d).reshape(-1)) for d in dense]
    h = np.full(batch, hash_key & _M, dtype=np.uint64)
    for fp in columns:
        h = fingerprint_cat64_array(h, fp)
    kept = np.flatnonzero(present)
    mod = np.uint64(num_buckets if num_buckets > 0 else 2**63 - 1)
    values = (h[kept] % mod).astype(np.int64)
    indices = np.zeros((kept.size, 2), np.int64)
    indices[:, 0] = kept
    return indices, values, np.asarray([batch, 1 if kept.size else 0], np.int64)


def _product(lists):
    """Cartesian product with the last list varying fastest."""
    if len(lists) == 1:
        return [(x,) for x in lists[0]]
    return [(x, *rest) for x in lists[0] for rest in _product(lists[1:])]


# -- strings -----------------------------------------------------------------------------
@cpu_kernel("StringToHashBucketFast")
def string_to_hash_bucket_fast(x, *, num_buckets):
    ids = fingerprints(x) % np.uint64(num_buckets)
    return ids.astype(np.int64).reshape(x.shape)


def _bool_text(v) -> str:
    return "true" if v else "false"


@cpu_kernel("AsString")
def as_string(x, *, precision, scientific, shortest, width, fill):
    spec = "%" + (fill if fill else "") + (str(width) if width > -1 else "")
    kind = x.dtype.kind
    if kind == "b":
        conv, fmt = _bool_text, spec + "s"
    elif kind in "iu":
        conv, fmt = int, spec + "d"
    elif kind in "fc":
        conv = float
        fmt = spec + (f".{precision}" if precision > -1 else "") + (
            "e" if scientific else "g" if shortest else "f")
        if kind == "c":  # TensorFlow prints "(re,im)", each part in the same format
            pfmt = f"({fmt},{fmt})".encode("ascii")
            out = np.empty(x.shape, dtype=object)
            out.reshape(-1)[:] = [pfmt % (v.real, v.imag) for v in x.reshape(-1).tolist()]
            return out
    else:
        raise _invalid(f"as_string does not support dtype {x.dtype}")
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    if kind == "b":
        for i, v in enumerate(x.reshape(-1).tolist()):
            flat[i] = (fmt % conv(v)).encode("utf-8")
    else:  # numbers format the same as bytes; tolist() gives Python ints / floats
        bfmt = fmt.encode("ascii")
        flat[:] = [bfmt % v for v in x.reshape(-1).tolist()]
    return out


@cpu_kernel("VocabLookup")
class VocabLookup:
    """Keys -> int64 ids through a table built once per session (list or file)."""

    def __init__(self, ctx, *, vocabulary, vocabulary_file, vocab_size, default_value,
                 num_oov_buckets, column_name, op):
        self.is_int = op.inputs[0].dtype.is_integer
        self.column = column_name
        keys = list(vocabulary)
        if vocabulary_file:
            keys = self._read_file(vocabulary_file, vocab_size)
        self.size = len(keys)
        self.table = {(int(k) if self.is_int else _text(k)): i for i, k in enumerate(keys)}
        self.default = int(default_value)
        self.oov = int(num_oov_buckets)

    def _read_file(self, path: str, vocab_size: int) -> list:
        where = f" of column '{self.column}'" if self.column else ""
        try:
            lines = read_text_lines(path, f"VocabLookup{where}")
        except NotFoundError:
            raise InvalidArgumentError(None, None, f"vocabulary_file{where} not found: "
                                       f"{path}") from None
        if vocab_size is not None and vocab_size > -1:
            if len(lines) < vocab_size:
                raise InvalidArgumentError(
                    None, None, f"Invalid vocab_size{where}: vocabulary_file {path} has "
                    f"{len(lines)} lines, vocab_size is {vocab_size}")
            lines = lines[:vocab_size]
        if self.is_int:
            try:
                return [int(s) for s in lines]
            except ValueError as e:
                raise InvalidArgumentError(None, None, f"vocabulary_file{where} {path}: "
                                           f"an integer vocabulary has a bad line: {e}") from None
        return lines

    def __call__(self, keys):
        out = np.empty(keys.size, dtype=np.int64)
        table, size, oov, default = self.table, self.size, self.oov, self.default
        for i, v in enumerate(keys.reshape(-1).tolist()):
            k = int(v) if self.is_int else _text(v)
            found = table.get(k)
            if found is None:
                found = size + fingerprint64(str(k).encode("utf-8")) % oov if oov else default
            out[i] = found
        return out.reshape(keys.shape)
