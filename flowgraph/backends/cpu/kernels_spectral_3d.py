"""CPU kernels of ``RFFT3D`` / ``IRFFT3D`` (`flowgraph/ops/spectral_3d_ops.py`):
``numpy.fft.rfftn`` / ``irfftn`` over the 3 innermost axes."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _lengths(op_type: str, x, fft_length) -> list[int]:
    lengths = [int(n) for n in np.asarray(fft_length).ravel()]
    if len(lengths) != 3 or x.ndim < 3:
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: expected an input of rank >= 3 and 3 fft lengths, got "
            f"rank {x.ndim} and {len(lengths)} lengths")
    return lengths


@cpu_kernel("RFFT3D", fresh=True)
def rfft3d(x, fft_length, *, Treal, Tcomplex):
    out = np.fft.rfftn(x, s=_lengths("RFFT3D", x, fft_length), axes=(-3, -2, -1))
    return out.astype(_dtypes.as_dtype(Tcomplex).as_numpy_dtype)


@cpu_kernel("IRFFT3D", fresh=True)
def irfft3d(x, fft_length, *, Treal, Tcomplex):
    out = np.fft.irfftn(x, s=_lengths("IRFFT3D", x, fft_length), axes=(-3, -2, -1))
    return out.astype(_dtypes.as_dtype(Treal).as_numpy_dtype)
