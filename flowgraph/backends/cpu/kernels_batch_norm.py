"""CPU kernels for ``FusedBatchNorm`` (V1, V2, V3) and ``FusedBatchNormGrad`` (V1-V3).

Both work on a 2-D ``(rows, C)`` float32 view of ``x`` (NHWC as is, NCHW transposed to
channels-last and back), so each statistic is one vectorized reduction over rows.
Half-precision ``x`` is computed in float32 and the result cast back, as TensorFlow's
kernels do; float64 (which TensorFlow's wrappers reject) is computed in float64, for the
registry-wide finite-difference checks. Training normalizes with the batch's biased
variance and returns it with Bessel's correction ``n / max(n - 1, 1)``;
``exponential_avg_factor`` ``f < 1`` blends the returned statistics with the given ones,
``(1 - f) * given + f * batch``.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel

_F32 = np.float32


def _work(x):
    # float64 (not a TensorFlow dtype for these ops) is kept so that the registry-wide
    # finite-difference checks can run; every other dtype computes in float32.
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(_F32)


def _rows(x, data_format):
    """`x` as ``(rows, C)`` in its work dtype and the function mapping such rows back."""
    nchw = data_format in ("NCHW", b"NCHW")
    if nchw:
        x = np.moveaxis(x, 1, 3)
    shape = x.shape
    rows = np.ascontiguousarray(x, dtype=_work(x)).reshape(-1, shape[3])

    def back(r, dtype):
        out = r.reshape(shape).astype(dtype, copy=False)
        return np.ascontiguousarray(np.moveaxis(out, 3, 1)) if nchw else out

    return rows, back


def _check(x, scale, offset, mean, variance, is_training):
    if x.ndim != 4:
        raise ValueError(f"FusedBatchNorm: x must be 4-D, got shape {x.shape}")
    c = scale.shape
    for what, v in (("offset", offset),) + (() if is_training else (("mean", mean),
                                                                      ("variance", variance))):
        if v.shape != c:
            raise ValueError(f"FusedBatchNorm: {what} must have shape {c} like scale, got "
                             f"{v.shape}")


def _fused_batch_norm(x, scale, offset, mean, variance, *, epsilon, exponential_avg_factor,
                      data_format, is_training, v3):
    x = np.asarray(x)
    w = _work(x)
    scale, offset = np.asarray(scale, w), np.asarray(offset, w)
    mean, variance = np.asarray(mean, w), np.asarray(variance, w)
    _check(x, scale, offset, mean, variance, is_training)
    rows, back = _rows(x, data_format)
    n = rows.shape[0]
    if is_training:
        if n == 0:
            m = np.zeros(rows.shape[1], w)
            v = np.full(rows.shape[1], np.nan, w)
        else:
            m = rows.mean(axis=0, dtype=w)
        centred = rows - m
        if n:
            v = np.einsum("ij,ij->j", centred, centred, dtype=w) / w.type(n)
    else:
        m, v = mean, variance
        centred = rows - m
    inv = (scale / np.sqrt(v + w.type(epsilon))).astype(w)
    centred *= inv
    centred += offset
    y = back(centred, x.dtype)
    if is_training:
        unbiased = (v * w.type(n / max(n - 1, 1))).astype(w)
        f = w.type(exponential_avg_factor)
        out_m, out_v = m, unbiased
        if f != 1:
            out_m = ((1 - f) * mean + f * m).astype(w)
            out_v = ((1 - f) * variance + f * unbiased).astype(w)
    else:
        out_m, out_v = mean, variance
    outs = (y, out_m, out_v, m.copy(), v.copy())
    return (*outs, np.zeros(0, w)) if v3 else outs


def _fused_batch_norm_grad(dy, x, scale, reserve_1, reserve_2, *, epsilon, data_format,
                           is_training):
    x = np.asarray(x)
    w = _work(x)
    scale = np.asarray(scale, w)
    rows, back = _rows(x, data_format)
    d, _ = _rows(np.asarray(dy, x.dtype), data_format)
    mean, var = np.asarray(reserve_1, w), np.asarray(reserve_2, w)
    rstd = (1.0 / np.sqrt(var + w.type(epsilon))).astype(w)
    xhat = (rows - mean) * rstd
    d_offset = d.sum(axis=0, dtype=w)
    d_scale = np.einsum("ij,ij->j", d, xhat, dtype=w)
    if is_training and rows.shape[0]:
        n = w.type(rows.shape[0])
        dx = (d - d_offset / n - xhat * (d_scale / n)) * (scale * rstd)
    else:
        dx = d * (scale * rstd)
    zero = np.zeros((), w)
    return back(dx, x.dtype), d_scale, d_offset, zero, zero.copy()


_T = ["float16", "bfloat16", "float32", "float64"]


# One kernel serves each op's versions: V2 and V3 add the `U` attribute (the statistics'
# dtype, float32 here), V3 an empty sixth output and, for the gradient, a third reserve
# input, unused on the CPU.
@cpu_kernel("FusedBatchNorm", dtypes=_T)
@cpu_kernel("FusedBatchNormV2", dtypes=_T)
def fused_batch_norm(x, scale, offset, mean, variance, *, epsilon, exponential_avg_factor,
                     data_format, is_training):
    return _fused_batch_norm(x, scale, offset, mean, variance, epsilon=epsilon,
                             exponential_avg_factor=exponential_avg_factor,
                             data_format=data_format, is_training=is_training, v3=False)


@cpu_kernel("FusedBatchNormV3", dtypes=_T)
def fused_batch_norm_v3(x, scale, offset, mean, variance, *, epsilon,
                        exponential_avg_factor, data_format, is_training):
    return _fused_batch_norm(x, scale, offset, mean, variance, epsilon=epsilon,
                             exponential_avg_factor=exponential_avg_factor,
                             data_format=data_format, is_training=is_training, v3=True)


@cpu_kernel("FusedBatchNormGrad", dtypes=_T)
@cpu_kernel("FusedBatchNormGradV2", dtypes=_T)
@cpu_kernel("FusedBatchNormGradV3", dtypes=_T)
def fused_batch_norm_grad(dy, x, scale, reserve_1, reserve_2, *_reserve_3, epsilon,
                          data_format, is_training):
    return _fused_batch_norm_grad(dy, x, scale, reserve_1, reserve_2, epsilon=epsilon,
                                  data_format=data_format, is_training=is_training)
