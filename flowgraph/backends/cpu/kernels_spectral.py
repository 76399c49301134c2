"""CPU kernels for `flowgraph/ops/spectral_ops.py`: NumPy's complex parts and
``numpy.fft`` over the innermost axes, in the input's precision."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel


def _real_type(x):
    return np.real(np.zeros((), x.dtype)).dtype


@cpu_kernel("Complex", fresh=True)
def complex_(re, im, *, Tout):
    out_dtype = np.complex64 if re.dtype == np.float32 else np.complex128
    return (re + 1j * im).astype(out_dtype)


@cpu_kernel("Real", fresh=True)
def real(x, *, Tout):
    return np.real(x).copy()  # (ascontiguousarray would make a 0-d input 1-d)


@cpu_kernel("Imag", fresh=True)
def imag(x, *, Tout):
    return np.imag(x).copy()


@cpu_kernel("Angle", fresh=True)
def angle(x, *, Tout):
    return np.angle(x).astype(_real_type(x))


def _fft(fn, rank):
    def kernel(x):
        if x.size == 0:
            return np.zeros(x.shape, x.dtype)
        return fn(x, axes=tuple(range(-rank, 0))).astype(x.dtype)

    return kernel


for _name, _fn, _rank in [("FFT", np.fft.fftn, 1), ("IFFT", np.fft.ifftn, 1),
                          ("FFT2D", np.fft.fftn, 2), ("IFFT2D", np.fft.ifftn, 2),
                          ("FFT3D", np.fft.fftn, 3), ("IFFT3D", np.fft.ifftn, 3)]:
    cpu_kernel(_name, fresh=True)(_fft(_fn, _rank))
