"""CPU kernels of the real-signal FFT ops ``RFFT``/``IRFFT`` (1-D), ``RFFT2D``/``IRFFT2D``
(`flowgraph/ops/spectral_real_ops.py`) and ``RFFT3D``/``IRFFT3D``
(`flowgraph/ops/spectral_3d_ops.py`): ``numpy.fft.rfftn`` / ``irfftn`` over the innermost
axes, each cropped or zero-padded to its ``fft_length``."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _lengths(op_type: str, x, fft_length, rank: int) -> list[int]:
    lengths = [int(n) for n in np.asarray(fft_length).ravel()]
    if len(lengths) != rank or x.ndim < rank:
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: expected an input of rank >= {rank} and {rank} fft "
            f"lengths, got rank {x.ndim} and {len(lengths)} lengths")
    if any(n < 0 for n in lengths):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: fft lengths must not be negative, got {lengths}")
    return lengths


def _rfft(op_type: str, rank: int):
    axes = tuple(range(-rank, 0))

    def kernel(x, fft_length, *, Treal, Tcomplex):
        lengths = _lengths(op_type, x, fft_length, rank)
        out_dtype = _dtypes.as_dtype(Tcomplex).as_numpy_dtype
        short = [d for d, n in zip(x.shape[-rank:], lengths) if d < n]
        if short and rank < 3:  # as TensorFlow (RFFT3D has always zero-padded here)
            raise errors.InvalidArgumentError(
                None, None, f"{op_type}: the input's inner dimensions {list(x.shape[-rank:])} "
                f"must be at least fft_length {lengths}; tf.signal.{op_type.lower()} "
                "zero-pads a shorter input")
        if 0 in lengths or x.size == 0:
            shape = (*x.shape[:-rank], *lengths[:-1], lengths[-1] // 2 + 1)
            return np.zeros(shape, out_dtype)
        return np.fft.rfftn(x, s=lengths, axes=axes).astype(out_dtype)

    return kernel


def _irfft(op_type: str, rank: int):
    axes = tuple(range(-rank, 0))

    def kernel(x, fft_length, *, Treal, Tcomplex):
        lengths = _lengths(op_type, x, fft_length, rank)
        out_dtype = _dtypes.as_dtype(Treal).as_numpy_dtype
        if 0 in lengths or x.size == 0:
            return np.zeros((*x.shape[:-rank], *lengths), out_dtype)
        return np.fft.irfftn(x, s=lengths, axes=axes).astype(out_dtype)

    return kernel


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    cpu_kernel("RFFT" + _suffix, fresh=True)(_rfft("RFFT" + _suffix, _rank))
    cpu_kernel("IRFFT" + _suffix, fresh=True)(_irfft("IRFFT" + _suffix, _rank))
