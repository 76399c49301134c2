"""CPU kernels of ``MaxPoolWithArgmax`` and ``MaxPoolGradWithArgmax``
(`flowgraph.ops.nn_pool_argmax`).

The pool loops over the kernel taps (``rows * cols`` iterations, each a strided view of
the padded input over the whole batch), keeping per output the best value and its input
index; a tap replaces the best only when strictly greater, so the first maximum in
row-major order wins, as in TensorFlow's kernel. Padding taps never win.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.ops.nn_ops import same_padding


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _geometry(n: int, k: int, s: int, padding: str) -> tuple[int, int]:
    """(output length, padding before) of one spatial dimension."""
    if padding == "SAME":
        return -(-n // s), same_padding(n, k, s, 1)[0]
    if n < k:
        raise _invalid(f"Computed output size would be negative: {(n - k) // s + 1} "
                       f"[input_size: {n}, effective_filter_size: {k}, stride: {s}]")
    return (n - k) // s + 1, 0


@cpu_kernel("MaxPoolWithArgmax")
def max_pool_with_argmax(x, *, ksize, strides, padding, Targmax, include_batch_in_index):
    if x.ndim != 4:
        raise _invalid(f"tensor_in must be 4-dimensional, got shape {list(x.shape)}")
    b, h, w, c = x.shape
    (oh, top), (ow, left) = (_geometry(h, ksize[1], strides[1], padding),
                             _geometry(w, ksize[2], strides[2], padding))
    best = np.zeros((b, oh, ow, c), dtype=x.dtype)
    index = np.full((b, oh, ow, c), -1, dtype=np.int64)
    rows = np.arange(oh) * strides[1] - top
    cols = np.arange(ow) * strides[2] - left
    channel = np.arange(c)
    for i in range(ksize[1]):
        r = rows + i
        r_ok = (r >= 0) & (r < h)
        for j in range(ksize[2]):
            q = cols + j
            q_ok = (q >= 0) & (q < w)
            if not r_ok.any() or not q_ok.any():
                continue
            rc, qc = np.clip(r, 0, h - 1), np.clip(q, 0, w - 1)
            tap = x[:, rc][:, :, qc]  # [b, oh, ow, c]
            ok = (r_ok[:, None] & q_ok[None, :])[None, :, :, None]
            take = ok & ((index < 0) | (tap > best))
            best = np.where(take, tap, best)
            flat = ((rc[:, None] * w + qc[None, :])[None, :, :, None] * c + channel)
            index = np.where(take, flat, index)
    if include_batch_in_index:
        index = index + (np.arange(b) * (h * w * c))[:, None, None, None]
    return best, index.astype(Targmax.as_numpy_dtype)


@cpu_kernel("MaxPoolGradWithArgmax")
def max_pool_grad_with_argmax(x, grad, argmax, *, ksize, strides, padding, Targmax,
                              include_batch_in_index):
    if grad.shape != argmax.shape:
        raise _invalid(f"Expected grad shape to be {list(argmax.shape)}, but got "
                       f"{list(grad.shape)}")
    b = x.shape[0]
    per_image = int(np.prod(x.shape[1:]))
    idx = argmax.astype(np.int64).reshape(b, -1)
    if not include_batch_in_index:
        idx = idx + (np.arange(b) * per_image)[:, None]
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= b * per_image):
        raise _invalid(f"Invalid argmax index {int(idx.max())}: the input has "
                       f"{b * per_image} elements")
    out = np.zeros(b * per_image, dtype=np.float64 if grad.dtype.kind == "f" else grad.dtype)
    np.add.at(out, idx, grad.reshape(-1))
    return out.astype(grad.dtype, copy=False).reshape(x.shape)
