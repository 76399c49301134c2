"""CPU kernels for the loss and ranking ops of `flowgraph/ops/nn_loss_ops.py`.

The softmax cross-entropies work on ``z = logits - max(logits)`` (per row), so that
``log_softmax = z - log(sum(exp(z)))`` never overflows: logits of 1000 give exact zeros
rather than NaN. float16 is computed in float32 and cast back. C-contiguous 2-D float32 and
float64 logits (with int32/int64 sparse labels, or dense labels of the logits' dtype and
shape) go to the one-pass Cython kernels of `_loss.pyx`; every other input takes the NumPy
path below, and both raise the same error for an out-of-range sparse label. Large batches
go to the Cython kernels in row chunks on the kernel threads (`kernel_pool`); each row is
computed by the same code either way, so the result is bitwise the one-thread result.

`TopKV2` is a stable descending sort: sorting the reversed row ascending (stable) and
reversing the result keeps equal values in index order (the lower index first) and puts
NaN first, as TensorFlow does.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel, kernel_pool
from flowgraph.framework import errors

try:  # one-pass softmax cross-entropy rows without the GIL (Cython); NumPy otherwise
    from flowgraph.backends.cpu import _loss
except ImportError:  # pragma: no cover - extension not built yet
    _loss = None

_FAST_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_FAST_INDICES = (np.dtype(np.int32), np.dtype(np.int64))


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _shifted_and_lse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise ``z = x - max(x)`` and ``log(sum(exp(z)))`` of the 2-D `x`, so that
    ``log_softmax = z - lse`` and ``-log_softmax = lse - z`` (which is +0, not -0, for
    the dominant class)."""
    if x.shape[1] == 0:
        return x.copy(), np.zeros((x.shape[0], 1), x.dtype)
    z = x - x.max(axis=1, keepdims=True)
    return z, np.log(np.exp(z).sum(axis=1, keepdims=True))


def _c_array(a: np.ndarray) -> bool:
    flags = a.flags
    return flags.c_contiguous and flags.aligned


def _fast_logits(features: np.ndarray) -> bool:
    """Whether `_loss` takes these logits: 2-D, C-contiguous, aligned, native float32/64."""
    return (_loss is not None and features.ndim == 2 and features.dtype in _FAST_FLOATS
            and _c_array(features))


def _row_chunks(xent, features: np.ndarray, labels: np.ndarray):
    """``xent(features, labels)`` (a `_loss` function), by row chunks on the kernel
    threads when the batch is large; None where a chunk returned None (a bad label)."""
    n, classes = features.shape
    grain = -(-kernel_pool.GRAIN["softmax"] // max(classes, 1))
    if n < 2 * grain or kernel_pool.threads() < 2:
        return xent(features, labels)
    loss = np.empty(n, features.dtype)
    backprop = np.empty_like(features)
    bad = []

    def chunk(a: int, b: int) -> None:
        result = xent(features[a:b], labels[a:b])
        if result is None:
            bad.append(a)
        else:
            loss[a:b], backprop[a:b] = result

    kernel_pool.parallel_for(n, chunk, grain=grain, align=1)
    return None if bad else (loss, backprop)


@cpu_kernel("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(features, labels):
    if (_fast_logits(features) and labels.shape == features.shape
            and labels.dtype == features.dtype and _c_array(labels)):
        return _row_chunks(_loss.dense_xent, features, labels)
    dtype = features.dtype
    try:
        np.broadcast_shapes(features.shape, labels.shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"logits and labels must be broadcastable: logits_size="
            f"{list(features.shape)} labels_size={list(labels.shape)}") from None
    ct = _compute_dtype(dtype)
    z, lse = _shifted_and_lse(features.astype(ct, copy=False))
    lab = labels.astype(ct, copy=False)
    with np.errstate(invalid="ignore"):
        # 0 * log(0) (a class with probability 0 under both) contributes 0, as in TF.
        loss = np.where(lab == 0, ct.type(0), lab * (lse - z)).sum(axis=1)
    backprop = np.exp(z - lse) - lab
    return np.asarray(loss, dtype=dtype), np.asarray(backprop, dtype=dtype)


def _label_error(labels: np.ndarray, classes: int) -> errors.InvalidArgumentError | None:
    """The error for the first label outside ``[0, classes)``, or None if all are valid."""
    bad = (labels < 0) | (labels >= classes)
    if not bad.any():
        return None
    first = labels[np.argmax(bad)]
    return errors.InvalidArgumentError(
        None, None,
        f"Received a label value of {first} which is outside the valid range of "
        f"[0, {classes}).  Label values: {' '.join(str(v) for v in labels.tolist())}")


@cpu_kernel("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(features, labels):
    if (_fast_logits(features) and labels.shape == features.shape[:1]
            and labels.dtype in _FAST_INDICES and _c_array(labels)):
        result = _row_chunks(_loss.sparse_xent, features, labels)
        if result is None:  # a label outside [0, classes): the same error as below
            raise _label_error(labels, features.shape[1])
        return result
    n, classes = features.shape
    error = _label_error(labels, classes)
    if error is not None:
        raise error
    dtype = features.dtype
    ct = _compute_dtype(dtype)
    z, lse = _shifted_and_lse(features.astype(ct, copy=False))
    rows = np.arange(n)
    loss = lse[:, 0] - z[rows, labels]
    backprop = np.exp(z - lse)
    backprop[rows, labels] -= 1
    return np.asarray(loss, dtype=dtype), np.asarray(backprop, dtype=dtype)


@cpu_kernel("L2Loss")
def l2_loss(t):
    ct = _compute_dtype(t.dtype)
    x = t.astype(ct, copy=False).ravel()
    return np.asarray(np.dot(x, x) / 2, dtype=t.dtype)


@cpu_kernel("TopKV2")
def top_k(x, k, *, sorted, index_type=None):
    k = int(k)
    n = x.shape[-1]
    if k < 0:
        raise errors.InvalidArgumentError(None, None, f"Need k >= 0, got {k}")
    if k > n:
        raise errors.InvalidArgumentError(
            None, None, f"input must have at least k columns. Had {n}, needed {k}")
    if not sorted and 1 < k < n:
        rows = x.reshape(-1, n)
        indices = np.array([_unsorted_top_k(row, k) for row in rows], np.int32).reshape(
            (*x.shape[:-1], k))
    else:
        order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
        indices = (n - 1 - order).astype(np.int32)
    values = np.take_along_axis(x, indices, axis=-1)
    if index_type is not None:
        indices = indices.astype(np.dtype(index_type.as_numpy_dtype), copy=False)
    return np.ascontiguousarray(values), np.ascontiguousarray(indices)


# -- TopKV2(sorted=False): TensorFlow's order ------------------------------------------
# TensorFlow's CPU kernel keeps the k best column indices of a row in a bounded heap
# (better: larger value, then smaller index) and returns the heap's array as it stands.
# The order is that of the C++ standard library's heap algorithms: the first k + 1
# indices made a heap and its root (the worst) dropped; then each better index replaces
# the root (pop, store at the end, push). The functions below reproduce them on a
# Python list whose root is the worst index (checked against TF 2.15's outputs).
def _unsorted_top_k(row: np.ndarray, k: int) -> list[int]:
    values = row.tolist()

    def better(a: int, b: int) -> bool:  # the heap's "less": the root is the worst
        va, vb = values[a], values[b]
        return vb < va or (not vb > va and a < b)

    heap = list(range(k + 1))
    _make_heap(heap, better)
    _pop_heap(heap, k + 1, better)
    heap.pop()  # the worst of the first k + 1
    n = len(values)
    start = k + 1
    while start < n:
        # Only an index better than the current worst (the root) enters: skip the rest of
        # a block at once, comparing against the root as it stood at the block's start.
        stop = min(n, start + 4096)
        # (a later index enters only with a strictly larger value; NaN never does)
        candidates = np.flatnonzero(row[start:stop] > values[heap[0]]) + start
        for c in candidates.tolist():
            if better(c, heap[0]):
                _pop_heap(heap, k, better)
                _sift_up(heap, k - 1, 0, c, better)
        start = stop
    return heap


def _sift_up(heap: list, hole: int, top: int, value, less) -> None:
    parent = (hole - 1) // 2
    while hole > top and less(heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value


def _adjust_heap(heap: list, hole: int, length: int, value, less) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(heap[child], heap[child - 1]):
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    _sift_up(heap, hole, top, value, less)


def _make_heap(heap: list, less) -> None:
    length = len(heap)
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(heap, parent, length, heap[parent], less)


def _pop_heap(heap: list, length: int, less) -> None:
    """Move the root to position ``length - 1`` and restore the heap before it."""
    if length > 1:
        value = heap[length - 1]
        heap[length - 1] = heap[0]
        _adjust_heap(heap, 0, length - 1, value, less)


@cpu_kernel("InTopKV2")
def in_top_k(predictions, targets, k):
    n, classes = predictions.shape
    if targets.shape[0] != n:
        raise errors.InvalidArgumentError(
            None, None, f"First dimension of predictions {n} must match length of targets "
            f"{targets.shape[0]}")
    valid = (targets >= 0) & (targets < classes)
    safe = np.where(valid, targets, 0)
    if n == 0 or classes == 0:
        return np.zeros(n, dtype=bool)
    target_pred = predictions[np.arange(n), safe]
    more = (predictions > target_pred[:, None]).sum(axis=1)
    return np.asarray(valid & np.isfinite(target_pred) & (more < int(k)))
