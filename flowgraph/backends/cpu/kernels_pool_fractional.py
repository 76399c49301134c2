"""CPU kernels for fractional pooling (`flowgraph/ops/nn_pool_fractional.py`).

A region sequence is drawn as in the paper: when the input length is a multiple of the
output length every region has that quotient; otherwise `pseudo_random` places the
boundaries at ``ceil(alpha * (i + u))`` for one uniform offset ``u`` (bounded so that
every region has k or k+1 cells, ``alpha = in / out``, ``k = in // out``) and the random
mode shuffles ``in % out`` regions of k+1 cells among regions of k. A deterministic op
reseeds its generator on every run, so each run draws the same regions.

Max pooling keeps the first maximum in row-major order of each region; its gradient
sends each output's gradient there (summed where overlapping regions share a cell).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_random import make_generator
from flowgraph.framework import errors


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def pooling_sequence(n_in: int, n_out: int, rng: np.random.Generator,
                     pseudo_random: bool) -> np.ndarray:
    """Region boundaries ``0 = s[0] < ... < s[n_out] = n_in`` (int64)."""
    if n_in % n_out == 0:
        diff = np.full(n_out, n_in // n_out, np.int64)
    elif pseudo_random:
        alpha = n_in / n_out
        k = n_in // n_out
        max_u = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = rng.random() * max_u
        cum = [1] + [math.ceil(alpha * (i + u)) for i in range(1, n_out)] + [n_in + 1]
        diff = np.diff(np.asarray(cum, np.int64))
    else:
        k = n_in // n_out
        diff = np.full(n_out, k, np.int64)
        diff[:n_in % n_out] = k + 1
        rng.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


def _regions(seq: np.ndarray, n_in: int, overlapping: bool) -> list[tuple[int, int]]:
    """Half-open ``[start, stop)`` per region, the shared boundary cell included when
    `overlapping`."""
    extra = 1 if overlapping else 0
    return [(int(seq[i]), min(int(seq[i + 1]) + extra, n_in)) for i in range(len(seq) - 1)]


def _check_sequence(seq: np.ndarray, n_in: int, what: str) -> None:
    if seq.ndim != 1 or seq.size < 2 or seq[0] != 0 or np.any(np.diff(seq) <= 0) \
            or seq[-1] > n_in:
        raise _invalid(f"{what}: the pooling sequence must rise strictly from 0 to at most "
                       f"{n_in}, got {seq.tolist()}")


class _FractionalPool:
    def __init__(self, ctx, *, pooling_ratio, pseudo_random, overlapping, deterministic,
                 seed, seed2):
        if not deterministic and (seed or seed2):
            raise _invalid("Both seed and seed2 should be 0 if deterministic is false.")
        if deterministic and not seed and not seed2:
            seed, seed2 = (int(v) for v in np.random.SeedSequence().generate_state(2))
        self.ratio = [float(r) for r in pooling_ratio]
        self.pseudo_random = bool(pseudo_random)
        self.overlapping = bool(overlapping)
        self.deterministic = bool(deterministic)
        self.seeds = (int(seed), int(seed2))
        self.rng = make_generator(*self.seeds)
        self.lock = threading.Lock()

    def _sequences(self, x: np.ndarray):
        if len(self.ratio) != 4:
            raise _invalid(f"pooling_ratio field must specify 4 dimensions, got "
                           f"{len(self.ratio)}")
        if self.ratio[0] != 1.0 or self.ratio[3] != 1.0:
            raise errors.UnimplementedError(
                None, None, "Fractional pooling is only supported on the row and column "
                f"dimensions: pooling_ratio[0] and [3] must be 1.0, got {self.ratio}")
        if x.ndim != 4:
            raise _invalid(f"input must be 4-dimensional, got shape {list(x.shape)}")
        outs = [math.floor(d / r) for d, r in zip(x.shape[1:3], self.ratio[1:3])]
        for d, o in zip(x.shape[1:3], outs):
            if o <= 0:
                raise _invalid(f"output size must be positive: input size {d} with ratio "
                               f"{self.ratio} pools to {o}")
        with self.lock:
            rng = make_generator(*self.seeds) if self.deterministic else self.rng
            rows = pooling_sequence(x.shape[1], outs[0], rng, self.pseudo_random)
            cols = pooling_sequence(x.shape[2], outs[1], rng, self.pseudo_random)
        return rows, cols


def max_pool_with_argmax(x: np.ndarray, rows, cols, overlapping: bool):
    """The pooled maxima and, per output cell, the flat (row * width + col) input position
    of the first maximum of its region."""
    n, h, w, c = x.shape
    r_reg, c_reg = _regions(rows, h, overlapping), _regions(cols, w, overlapping)
    out = np.empty((n, len(r_reg), len(c_reg), c), x.dtype)
    arg = np.empty(out.shape, np.int64)
    for i, (r0, r1) in enumerate(r_reg):
        for j, (c0, c1) in enumerate(c_reg):
            win = x[:, r0:r1, c0:c1, :].reshape(n, -1, c)
            k = np.argmax(win, axis=1)
            out[:, i, j, :] = np.take_along_axis(win, k[:, None, :], axis=1)[:, 0, :]
            arg[:, i, j, :] = (r0 + k // (c1 - c0)) * w + c0 + k % (c1 - c0)
    return out, arg


def avg_pool(x: np.ndarray, rows, cols, overlapping: bool) -> np.ndarray:
    n, h, w, c = x.shape
    r_reg, c_reg = _regions(rows, h, overlapping), _regions(cols, w, overlapping)
    out = np.empty((n, len(r_reg), len(c_reg), c), x.dtype)
    for i, (r0, r1) in enumerate(r_reg):
        for j, (c0, c1) in enumerate(c_reg):
            win = x[:, r0:r1, c0:c1, :]
            total = win.sum(axis=(1, 2))
            count = (r1 - r0) * (c1 - c0)
            out[:, i, j, :] = _divide(total, count)
    return out


def _divide(total: np.ndarray, count: int) -> np.ndarray:
    """The mean; integer means truncate toward zero as C++ division does."""
    if total.dtype.kind in "iu":
        return np.sign(total) * (np.abs(total) // count)
    return total / count


@cpu_kernel("FractionalMaxPool")
class FractionalMaxPool(_FractionalPool):
    def __call__(self, x):
        rows, cols = self._sequences(x)
        return max_pool_with_argmax(x, rows, cols, self.overlapping)[0], rows, cols


@cpu_kernel("FractionalAvgPool")
class FractionalAvgPool(_FractionalPool):
    def __call__(self, x):
        rows, cols = self._sequences(x)
        return avg_pool(x, rows, cols, self.overlapping), rows, cols


@cpu_kernel("FractionalMaxPoolGrad")
def fractional_max_pool_grad(orig_input, orig_output, out_backprop, rows, cols, *,
                             overlapping):
    n, h, w, c = orig_input.shape
    _check_sequence(rows, h, "FractionalMaxPoolGrad")
    _check_sequence(cols, w, "FractionalMaxPoolGrad")
    out, arg = max_pool_with_argmax(orig_input, rows, cols, overlapping)
    if out.shape != orig_output.shape or out_backprop.shape != out.shape:
        raise _invalid(f"FractionalMaxPoolGrad: orig_output {list(orig_output.shape)} and "
                       f"out_backprop {list(out_backprop.shape)} must have the pooled shape "
                       f"{list(out.shape)}")
    grad = np.zeros((n, h * w, c), out_backprop.dtype)
    flat = arg.reshape(n, -1, c)
    back = out_backprop.reshape(n, -1, c)
    b_idx = np.arange(n)[:, None, None]
    c_idx = np.arange(c)[None, None, :]
    np.add.at(grad, (b_idx, flat, c_idx), back)
    return grad.reshape(orig_input.shape)


@cpu_kernel("FractionalAvgPoolGrad")
def fractional_avg_pool_grad(orig_shape, out_backprop, rows, cols, *, overlapping):
    shape = [int(d) for d in orig_shape]
    if len(shape) != 4:
        raise _invalid(f"FractionalAvgPoolGrad: orig_input_tensor_shape must have 4 "
                       f"elements, got {shape}")
    _, h, w, _ = shape
    _check_sequence(rows, h, "FractionalAvgPoolGrad")
    _check_sequence(cols, w, "FractionalAvgPoolGrad")
    grad = np.zeros(shape, out_backprop.dtype)
    for i, (r0, r1) in enumerate(_regions(rows, h, overlapping)):
        for j, (c0, c1) in enumerate(_regions(cols, w, overlapping)):
            count = (r1 - r0) * (c1 - c0)
            grad[:, r0:r1, c0:c1, :] += (out_backprop[:, i, j, :] / count)[:, None, None, :]
    return grad
