"""Real-input Fourier transforms (`rfft`, `irfft`, `rfft2d`, `irfft2d`: the ``RFFT``,
``IRFFT``, ``RFFT2D`` and ``IRFFT2D`` ops of `flowgraph/ops/spectral_real_ops.py`, as
TensorFlow emits them), and the Hann/Hamming windows, for ``tf.signal``.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0, 3.0, 4.0])
>>> tf.Session().run(tf.signal.irfft(tf.signal.rfft(x))).round(4).tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.spectral_real_ops import real_fft

__all__ = ["hamming_window", "hann_window", "irfft", "irfft2d", "rfft", "rfft2d"]

_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


def _lengths(x, fft_length, rank: int, inverse: bool):
    """`fft_length` as an int32 tensor (a constant where it is known), or inferred as
    TensorFlow does: the inner dimensions, the last doubled less 2 for an inverse."""
    if fft_length is not None:
        t = convert_to_tensor(fft_length, dtype=_dtypes.int32, name="fft_length")
        static = constant_value(t)
        return t, None if static is None else [int(v) for v in static.reshape(-1)]
    dims = x.shape.as_list()[-rank:] if x.shape.ndims is not None else [None] * rank
    if inverse and dims[-1] is not None:
        dims[-1] = 2 * (dims[-1] - 1)
    if all(d is not None for d in dims):
        return convert_to_tensor(dims, dtype=_dtypes.int32, name="fft_length"), dims
    inner = _a.shape(x)[-rank:]
    if inverse:
        inner = _a.concat([inner[:-1], 2 * (inner[-1:] - 1)], 0)
    return inner, None


def _pad_to(x, rank: int, lengths, inverse: bool, dynamic=None):
    """As TensorFlow: zero-pad inner dimensions shorter than the transform (the kernel
    crops longer ones). With the lengths and inner dimensions known the padding is
    static; otherwise, given the `dynamic` lengths tensor, a ``Pad`` computed when the
    graph runs (whose result has no static dimensions, as in TensorFlow)."""
    if x.shape.ndims is not None and 0 in x.shape.as_list():
        return x
    dims = x.shape.as_list()[-rank:] if x.shape.ndims is not None else None
    if lengths is not None and dims is not None and None not in dims:
        want = list(lengths)
        if inverse:
            want[-1] = want[-1] // 2 + 1
        extra = [max(0, w - d) for d, w in zip(dims, want)]
        if not any(extra):
            return x
        lead = [[0, 0]] * (x.shape.ndims - rank)
        return _a.pad(x, lead + [[0, e] for e in extra])
    if dynamic is None:
        return x
    outer = _m.maximum(0, _a.rank(x) - rank)
    outer = _a.zeros([outer], dynamic.dtype)
    if inverse:
        dynamic = _a.concat([dynamic[:-1], dynamic[-1:] // 2 + 1], 0)
    inner = _m.maximum(0, dynamic - _a.shape(x)[-rank:])
    widths = _a.concat([outer, inner], 0)
    return _a.pad(x, _a.stack([_a.zeros_like(widths), widths], axis=1))


def _real_fft(op_type: str, rank: int, input_tensor, fft_length, name, default: str):
    inverse = op_type.startswith("I")
    with name_scope(name, default, [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor",
                              preferred_dtype=_dtypes.complex64 if inverse else _dtypes.float32)
        allowed = (_dtypes.complex64, _dtypes.complex128) if inverse else tuple(_COMPLEX_OF)
        if x.dtype.base_dtype not in allowed:  # a ValueError, as in TensorFlow
            raise ValueError(f"{op_type} requires tf.{' or tf.'.join(d.name for d in allowed)}"
                             f" inputs, got: {x}")
        if x.shape.ndims is not None and x.shape.ndims < rank:
            raise ValueError(f"tf.signal.{default}: the input must have rank at least {rank}, "
                             f"got shape {x.shape}")
        lengths, static = _lengths(x, fft_length, rank, inverse)
        x = _pad_to(x, rank, static, inverse, lengths)
        return real_fft(op_type, x, lengths, name=scope)


def rfft(input_tensor, fft_length=None, name=None):
    """The FFT of a real signal over its innermost dimension: the ``fft_length // 2 + 1``
    non-negative frequencies (the signal is cropped or zero-padded to `fft_length`, by
    default its length). Op ``RFFT``.

    Example
    -------
    >>> import flowgraph as tf
    >>> spectrum = tf.signal.rfft([1.0, 0.0, 0.0, 0.0])
    >>> tf.Session().run(tf.abs(spectrum)).tolist()
    [1.0, 1.0, 1.0]
    """
    return _real_fft("RFFT", 1, input_tensor, fft_length, name, "rfft")


def irfft(input_tensor, fft_length=None, name=None):
    """The inverse of `rfft`: a real signal of `fft_length` samples (default
    ``2 * (inner - 1)``) from its non-negative frequencies. Op ``IRFFT``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.irfft(tf.zeros([3, 6], tf.complex64)).shape.as_list()
    [3, 10]
    """
    return _real_fft("IRFFT", 1, input_tensor, fft_length, name, "irfft")


def rfft2d(input_tensor, fft_length=None, name=None):
    """The 2-D FFT of a real signal over its 2 innermost dimensions, keeping the
    ``fft_length[1] // 2 + 1`` non-negative frequencies of the last. Op ``RFFT2D``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.rfft2d(tf.zeros([2, 4, 6])).shape.as_list()
    [2, 4, 4]
    """
    return _real_fft("RFFT2D", 2, input_tensor, fft_length, name, "rfft2d")


def irfft2d(input_tensor, fft_length=None, name=None):
    """The inverse of `rfft2d`: a real signal of shape ``fft_length`` (default
    ``[inner0, 2 * (inner1 - 1)]``) over the 2 innermost dimensions. Op ``IRFFT2D``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.irfft2d(tf.zeros([3, 6], tf.complex64)).shape.as_list()
    [3, 10]
    """
    return _real_fft("IRFFT2D", 2, input_tensor, fft_length, name, "irfft2d")


def _window(window_length, periodic, dtype, a, b, name, what):
    """``a - b cos(2 pi k / N)`` for k < length, built from ops as TensorFlow builds it
    (so the result is ``<scope>/sub_2``, a length-1 window ``<scope>/ones``): N is the
    length less one, plus one when `periodic` and the length is even."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{what}: dtype must be a floating point type. Found {dtype}")
    with name_scope(name, what, [window_length, periodic]):
        length = convert_to_tensor(window_length, dtype=_dtypes.int32, name="window_length")
        if length.shape.ndims not in (None, 0):
            raise ValueError(f"{what}: window_length must be a scalar, got shape "
                             f"{length.shape}")
        known = constant_value(length)
        if known is not None and int(known) == 1:
            return _a.ones([1], dtype=dtype)
        flag = _m.cast(convert_to_tensor(periodic, dtype=_dtypes.bool, name="periodic"),
                       _dtypes.int32)
        even = 1 - length % 2
        period = _m.cast(length + flag * even - 1, dtype)
        k = _m.cast(_a.range(length), dtype)
        angle = convert_to_tensor(2.0 * math.pi, dtype=dtype) * k / period
        return a - b * _m.cos(angle)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)``: N = length - 1, or length for a
    `periodic` window of even length (TensorFlow's rule).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.signal.hann_window(4)).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    return _window(window_length, periodic, dtype, 0.5, 0.5, name, "hann_window")


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hamming window ``0.54 - 0.46 cos(2 pi k / N)`` (N as in `hann_window`)."""
    return _window(window_length, periodic, dtype, 0.54, 0.46, name, "hamming_window")
