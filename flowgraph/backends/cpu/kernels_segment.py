"""CPU kernels for segment reductions, DynamicPartition and DynamicStitch (NumPy).

The reductions scatter rows into a result initialised with the reduction's identity
(``ufunc.at``, so repeated ids accumulate); sorted-segment ops first check that the ids
are non-negative and non-decreasing, as TensorFlow does. Large reductions scatter on the
kernel threads (`kernel_pool`), each thread taking a band of the row's columns: every
output element still accumulates the same values in the same order (bitwise the
one-thread result).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.framework.errors import InvalidArgumentError


def _invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


_UFUNC = {"Sum": np.add, "Mean": np.add, "Prod": np.multiply, "Max": np.maximum,
          "Min": np.minimum}


def _identity(kind: str, dtype: np.dtype):
    if kind == "Prod":
        return 1
    if kind in ("Max", "Min"):
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        return info.min if kind == "Max" else info.max  # lowest / largest, as TensorFlow
    return 0


def _reduce(kind, data, ids, n):
    """Rows of `data` (leading dims shaped like `ids`) reduced into `n` segments."""
    rows = data.reshape((ids.size, *data.shape[ids.ndim:]))
    flat = ids.reshape(-1)
    out = np.full((n, *rows.shape[1:]), _identity(kind, data.dtype), dtype=data.dtype)
    keep = flat >= 0
    if not keep.all():
        rows, flat = rows[keep], flat[keep]
    _scatter(_UFUNC[kind], out, flat, rows)
    return out, np.bincount(flat, minlength=n)[:n]


def _scatter(ufunc, out, ids, rows) -> None:
    """``ufunc.at(out, ids, rows)``, by bands of columns on the kernel threads when large."""
    width = int(np.prod(rows.shape[1:], dtype=np.int64))
    if rows.size < 2 * kernel_pool.GRAIN["scatter"] or width < 2 * kernel_pool.ALIGN:
        ufunc.at(out, ids, rows)
        return
    out2, rows2 = out.reshape(out.shape[0], width), rows.reshape(rows.shape[0], width)

    def band(a: int, b: int) -> None:
        ufunc.at(out2[:, a:b], ids, rows2[:, a:b])

    kernel_pool.parallel_for(width, band, grain=-(-kernel_pool.GRAIN["scatter"] // ids.size))


def _sorted_kernel(kind):
    def kernel(data, segment_ids):
        ids = np.asarray(segment_ids).reshape(-1)
        if data.ndim == 0 or ids.size != data.shape[0]:
            raise _invalid(f"Segment{kind}: segment_ids should be the same size as "
                           f"dimension 0 of data, got {ids.size} ids for data of shape "
                           f"{list(data.shape)}")
        if ids.size and (ids[0] < 0 or np.any(ids[1:] < ids[:-1])):
            bad = 0 if ids[0] < 0 else int(np.argmax(ids[1:] < ids[:-1])) + 1
            raise _invalid(f"Segment{kind}: segment ids are not increasing (or are "
                           f"negative): segment_ids[{bad}] = {int(ids[bad])}; sort the "
                           f"rows by id or use tf.unsorted_segment_{kind.lower()}")
        n = int(ids[-1]) + 1 if ids.size else 0
        out, counts = _reduce(kind, data, ids, n)
        empty = counts == 0
        if kind in ("Max", "Min") and empty.any():
            out[empty] = 0  # TensorFlow's sorted max/min give 0 for an empty segment
        if kind == "Mean":
            shape = (-1,) + (1,) * (data.ndim - 1)
            out = (out / np.maximum(counts, 1).reshape(shape)).astype(data.dtype)
        return out

    kernel.__name__ = f"segment_{kind.lower()}"
    return kernel


def _unsorted_kernel(kind):
    def kernel(data, segment_ids, num_segments):
        ids = np.asarray(segment_ids)
        n = int(num_segments)
        if data.shape[:ids.ndim] != ids.shape:
            raise _invalid(f"UnsortedSegment{kind}: data.shape {list(data.shape)} must "
                           f"start with segment_ids.shape {list(ids.shape)}")
        if n < 0:
            raise _invalid(f"UnsortedSegment{kind}: num_segments must be >= 0, got {n}")
        if ids.size and int(ids.max()) >= n:
            raise _invalid(f"UnsortedSegment{kind}: segment_ids contain {int(ids.max())}, "
                           f"not in [0, num_segments = {n}); raise num_segments")
        return _reduce(kind, data, ids, n)[0]

    kernel.__name__ = f"unsorted_segment_{kind.lower()}"
    return kernel


for _kind in ("Sum", "Mean", "Max", "Min", "Prod"):
    cpu_kernel("Segment" + _kind, fresh=True)(_sorted_kernel(_kind))
for _kind in ("Sum", "Max", "Min", "Prod"):
    cpu_kernel("UnsortedSegment" + _kind, fresh=True)(_unsorted_kernel(_kind))


@cpu_kernel("DynamicPartition")
def dynamic_partition(data, partitions, *, num_partitions):
    p = np.asarray(partitions)
    if data.shape[:p.ndim] != p.shape:
        raise _invalid(f"DynamicPartition: data.shape {list(data.shape)} must start with "
                       f"partitions.shape {list(p.shape)}")
    if p.size and (p.min() < 0 or p.max() >= num_partitions):
        bad = int(p.min()) if p.min() < 0 else int(p.max())
        raise _invalid(f"DynamicPartition: partitions holds {bad}, not in [0, "
                       f"{num_partitions}) (num_partitions = {num_partitions})")
    rows = data.reshape((p.size, *data.shape[p.ndim:]))
    flat = p.reshape(-1)
    return tuple(np.ascontiguousarray(rows[flat == i]) for i in range(num_partitions))


@cpu_kernel("DynamicStitch")
def dynamic_stitch(*args, N):
    indices, data = args[:N], args[N:]
    size = max((int(np.max(i)) + 1 for i in indices if np.size(i)), default=0)
    inner = None
    for i, d in zip(indices, data):
        i = np.asarray(i)
        if d.shape[:i.ndim] != i.shape:
            raise _invalid(f"DynamicStitch: data shape {list(d.shape)} must start with "
                           f"indices shape {list(i.shape)}")
        if np.size(i) and np.min(i) < 0:
            raise _invalid(f"DynamicStitch: indices must be >= 0, found {int(np.min(i))}")
        rest = d.shape[i.ndim:]
        if inner is not None and rest != inner:
            raise _invalid(f"DynamicStitch: the data tensors' trailing shapes differ: "
                           f"{list(inner)} vs {list(rest)}")
        inner = rest
    out = np.zeros((size, *tuple(inner)), dtype=data[0].dtype)
    for i, d in zip(indices, data):
        i = np.asarray(i)
        out[i.reshape(-1)] = d.reshape((i.size, *tuple(inner)))
    return out
