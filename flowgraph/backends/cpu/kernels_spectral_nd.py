"""CPU kernels for the N-dimensional FFT ops (`flowgraph/ops/spectral_ops.py`):
``numpy.fft`` over the given axes, each padded or cropped to its ``fft_length``."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _args(op_type: str, x, fft_length, axes):
    lengths = [int(n) for n in np.asarray(fft_length).ravel()]
    axes = [int(a) for a in np.asarray(axes).ravel()]
    if len(lengths) != len(axes):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: fft_length has {len(lengths)} entries but axes has "
            f"{len(axes)}; give one length per axis")
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise errors.InvalidArgumentError(
                None, None, f"{op_type}: axis {a} is out of range for an input of rank "
                f"{x.ndim}")
    return lengths, axes


def _run(op_type: str, fn, x, fft_length, axes, out_dtype):
    lengths, axes = _args(op_type, x, fft_length, axes)
    return np.asarray(fn(x, s=lengths, axes=axes)).astype(out_dtype)


@cpu_kernel("FFTND", fresh=True)
def fftnd(x, fft_length, axes, *, Tcomplex):
    return _run("FFTND", np.fft.fftn, x, fft_length, axes, x.dtype)


@cpu_kernel("IFFTND", fresh=True)
def ifftnd(x, fft_length, axes, *, Tcomplex):
    return _run("IFFTND", np.fft.ifftn, x, fft_length, axes, x.dtype)


@cpu_kernel("RFFTND", fresh=True)
def rfftnd(x, fft_length, axes, *, Treal, Tcomplex):
    return _run("RFFTND", np.fft.rfftn, x, fft_length, axes,
                _dtypes.as_dtype(Tcomplex).as_numpy_dtype)


@cpu_kernel("IRFFTND", fresh=True)
def irfftnd(x, fft_length, axes, *, Treal, Tcomplex):
    return _run("IRFFTND", np.fft.irfftn, x, fft_length, axes,
                _dtypes.as_dtype(Treal).as_numpy_dtype)
