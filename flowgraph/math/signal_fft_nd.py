"""``tf.signal.fftnd`` / ``ifftnd`` / ``rfftnd`` / ``irfftnd`` (TF 2.15's signatures,
with `fft_length`, `axes` and `norm`) over the raw N-dimensional ops of
`flowgraph/ops/spectral_ops.py`, and ``tf.signal.rfft3d`` / ``irfft3d`` (ops
``RFFT3D`` / ``IRFFT3D``, `flowgraph/ops/spectral_3d_ops.py`).

`norm` scales as NumPy does: ``"backward"`` (None) leaves the forward transform
unscaled and divides the inverse by ``n``; ``"ortho"`` scales both by ``1/sqrt(n)``;
``"forward"`` divides the forward one by ``n``. (TensorFlow 2.15's CPU build has no
kernel for the N-dimensional ops, so TF itself fails when it runs them; flowgraph
computes them with ``numpy.fft``.)

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> x = np.arange(6.0).reshape(2, 3)
>>> y = tf.Session().run(tf.signal.rfftnd(x, norm="ortho"))
>>> np.allclose(y, np.fft.rfftn(x, norm="ortho"))
True
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.math.signal_fft import _lengths, _pad_to
from flowgraph.ops import math_ops as _m
from flowgraph.ops import spectral_ops as _raw
from flowgraph.ops.op_util import make_tensor

__all__ = ["fftnd", "ifftnd", "irfft3d", "irfftnd", "rfft3d", "rfftnd"]

_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _static_dims(x, axes, what: str) -> list[int]:
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None or any(dims[a] is None for a in axes):
        raise ValueError(f"tf.signal.{what}: the dimensions along {list(axes)} must be known "
                         f"when fft_length is not given, got shape {x.shape}")
    return [dims[a] for a in axes]


def _axes(x, axes, fft_length, what: str) -> list[int]:
    if axes is not None:
        return [int(a) for a in axes]
    rank = x.shape.ndims
    if fft_length is not None:
        return list(range(-len(fft_length), 0))
    if rank is None:
        raise ValueError(f"tf.signal.{what}: the input's rank must be known when axes is "
                         "not given")
    return list(range(-rank, 0))


def _scale(y, n: int, norm, inverse: bool, what: str):
    norm = "backward" if norm is None else norm
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"tf.signal.{what}: norm must be 'backward', 'ortho' or 'forward' "
                         f"(or None), got {norm!r}")
    factor = {"backward": 1.0, "ortho": 1.0 / math.sqrt(n), "forward": 1.0 / n}[norm]
    if inverse:
        factor = {"backward": 1.0, "ortho": math.sqrt(n), "forward": float(n)}[norm]
    return y if factor == 1.0 else y * _m.cast(factor, y.dtype.base_dtype)


def _nd(what, input_tensor, fft_length, axes, norm, name, inverse, real_in, real_out):
    with name_scope(name, what, [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if not real_in and x.dtype.base_dtype in _COMPLEX_OF:
            x = _m.cast(x, _COMPLEX_OF[x.dtype.base_dtype])
        ax = _axes(x, axes, fft_length, what)
        if fft_length is None:
            lengths = _static_dims(x, ax, what)
            if real_out:
                lengths[-1] = 2 * (lengths[-1] - 1)
        else:
            lengths = [int(n) for n in fft_length]
        if real_in:
            y = _raw.rfftnd(x, lengths, ax, Tcomplex=_COMPLEX_OF[x.dtype.base_dtype])
        elif real_out:
            y = _raw.irfftnd(x, lengths, ax, Treal=_REAL_OF[x.dtype.base_dtype])
        else:
            y = (_raw.ifftnd if inverse else _raw.fftnd)(x, lengths, ax)
        return _scale(y, math.prod(lengths), norm, inverse, what)


def fftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-dimensional FFT over `axes` (default: all), each padded or cropped to its
    entry of `fft_length`; real input is cast to complex."""
    return _nd("fftnd", input_tensor, fft_length, axes, norm, name, False, False, False)


def ifftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of `fftnd`."""
    return _nd("ifftnd", input_tensor, fft_length, axes, norm, name, True, False, False)


def rfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-dimensional FFT of a real tensor: the last of `axes` keeps
    ``fft_length[-1] // 2 + 1`` frequencies."""
    return _nd("rfftnd", input_tensor, fft_length, axes, norm, name, False, True, False)


def irfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of `rfftnd`: real output of `fft_length` along `axes` (default: the
    input's sizes, the last one ``2 * (m - 1)``)."""
    return _nd("irfftnd", input_tensor, fft_length, axes, norm, name, True, False, True)


def _fft3d(op_type, what, input_tensor, fft_length, name, real_in):
    with name_scope(name, what, [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"tf.signal.{what}: the input must have rank at least 3, got "
                             f"shape {x.shape}")
        if real_in and x.dtype.base_dtype not in _COMPLEX_OF:
            raise TypeError(f"tf.signal.{what}: input must be float32 or float64, got "
                            f"{x.dtype.base_dtype.name}")
        if not real_in and x.dtype.base_dtype not in _REAL_OF:
            raise TypeError(f"tf.signal.{what}: input must be complex64 or complex128, got "
                            f"{x.dtype.base_dtype.name}")
        # as for rfft/rfft2d: the static sizes as a constant where known, and the input
        # zero-padded to the transform
        lengths_t, static = _lengths(x, fft_length, 3, not real_in)
        x = _pad_to(x, 3, static, not real_in)
        if real_in:
            attrs = {"Treal": x.dtype.base_dtype, "Tcomplex": _COMPLEX_OF[x.dtype.base_dtype]}
        else:
            attrs = {"Treal": _REAL_OF[x.dtype.base_dtype], "Tcomplex": x.dtype.base_dtype}
        return make_tensor(op_type, [x, lengths_t], attrs, name=scope)


def rfft3d(input_tensor, fft_length=None, name=None):
    """The 3-D FFT of a real signal over its 3 innermost dimensions, keeping
    ``fft_length[2] // 2 + 1`` frequencies of the last (op ``RFFT3D``; no gradient)."""
    return _fft3d("RFFT3D", "rfft3d", input_tensor, fft_length, name, True)


def irfft3d(input_tensor, fft_length=None, name=None):
    """The inverse of `rfft3d` (op ``IRFFT3D``; no gradient)."""
    return _fft3d("IRFFT3D", "irfft3d", input_tensor, fft_length, name, False)
