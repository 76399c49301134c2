"""Real-input Fourier transforms (`rfft`, `irfft`, `rfft2d`, `irfft2d`) built on the
complex ``FFT``/``IFFT`` ops, and the Hann/Hamming windows, for ``tf.signal``.

`irfft` rebuilds the full Hermitian spectrum from the ``n // 2 + 1`` non-negative
frequencies (``X[n - k] = conj(X[k])``) and keeps the real part of its inverse FFT.

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
from flowgraph.ops.spectral_ops import complex as _complex
from flowgraph.ops.spectral_ops import fft, fft2d, ifft, imag, real

__all__ = ["hamming_window", "hann_window", "irfft", "irfft2d", "rfft", "rfft2d"]

_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


def _fft_lengths(fft_length, rank: int, what: str) -> list | None:
    if fft_length is None:
        return None
    static = constant_value(convert_to_tensor(fft_length))
    if static is None or static.size != rank:
        raise ValueError(f"tf.signal.{what}: fft_length must be {rank} constant integer(s), "
                         f"got {fft_length!r}")
    return [int(v) for v in static.reshape(-1)]


def _fit(x, axis: int, length: int):
    """`x` cropped or zero-padded to `length` along `axis` (negative, static size)."""
    n = x.shape[axis].value
    rank = x.shape.ndims
    ax = axis + rank
    if n is None:  # known only when run: crop to at most `length`, then pad up to it
        size = [-1] * rank
        size[ax] = _m.minimum(_a.shape(x)[ax], length)
        cropped = _a.slice(x, [0] * rank, _a.stack(size))
        short = length - _a.shape(cropped)[ax]
        pads = [[0, 0]] * ax + [[0, short]] + [[0, 0]] * (rank - ax - 1)
        out = _a.pad(cropped, pads)
        dims = x.shape.as_list()
        dims[ax] = length
        return _a.reshape(out, [-1 if d is None else d for d in dims]) if \
            sum(d is None for d in dims) <= 1 else out
    if n > length:
        begin = [0] * rank
        size = [-1] * rank
        size[ax] = length
        return _a.slice(x, begin, size)
    if n < length:
        return _a.pad(x, [[0, 0]] * ax + [[0, length - n]] + [[0, 0]] * (rank - ax - 1))
    return x


def _real_input(x, what: str):
    x = convert_to_tensor(x, name="input_tensor")
    if x.dtype.base_dtype not in _COMPLEX_OF:
        raise TypeError(f"tf.signal.{what}: input must be float32 or float64, got "
                        f"{x.dtype.base_dtype.name}")
    return x


def rfft(input_tensor, fft_length=None, name=None):
    """The FFT of a real signal over its innermost dimension: the ``fft_length // 2 + 1``
    non-negative frequencies (the signal is cropped or zero-padded to `fft_length`).

    Example
    -------
    >>> import flowgraph as tf
    >>> spectrum = tf.signal.rfft([1.0, 0.0, 0.0, 0.0])
    >>> tf.Session().run(tf.abs(spectrum)).tolist()
    [1.0, 1.0, 1.0]
    """
    with name_scope(name, "rfft", [input_tensor]):
        x = _real_input(input_tensor, "rfft")
        lengths = _fft_lengths(fft_length, 1, "rfft")
        n = x.shape[-1].value if x.shape.ndims else None
        length = lengths[0] if lengths else n
        if length is None:
            raise ValueError("tf.signal.rfft: the innermost dimension of the input must be "
                             f"known when the graph is built, got shape {x.shape}")
        x = _fit(x, -1, length)
        return fft(_m.cast(x, _COMPLEX_OF[x.dtype.base_dtype]))[..., :length // 2 + 1]


def _hermitian_full(x, n: int):
    """The n-point spectrum whose first ``n // 2 + 1`` entries are `x`'s (cropped or
    zero-padded), the rest their mirrored conjugates."""
    half = _fit(x, -1, n // 2 + 1)
    mirror = _a.reverse_v2(half[..., 1:(n + 1) // 2], [-1])
    conj = _complex(real(mirror), -imag(mirror))
    return _a.concat([half, conj], -1)


def irfft(input_tensor, fft_length=None, name=None):
    """The inverse of `rfft`: a real signal of `fft_length` samples (default
    ``2 * (inner - 1)``) from its non-negative frequencies.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.irfft(tf.zeros([3, 6], tf.complex64)).shape.as_list()
    [3, 10]
    """
    with name_scope(name, "irfft", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if x.dtype.base_dtype not in (_dtypes.complex64, _dtypes.complex128):
            raise TypeError(f"tf.signal.irfft: input must be complex64 or complex128, got "
                            f"{x.dtype.base_dtype.name}")
        lengths = _fft_lengths(fft_length, 1, "irfft")
        m = x.shape[-1].value if x.shape.ndims else None
        if lengths is None and m is None:
            raise ValueError("tf.signal.irfft: the innermost dimension of the input must be "
                             f"known when the graph is built, got shape {x.shape}")
        n = lengths[0] if lengths else 2 * (m - 1)
        return real(ifft(_hermitian_full(x, n)))


def _swap_last(x):
    rank = x.shape.ndims
    return _a.transpose(x, [*list(range(rank - 2)), rank - 1, rank - 2])


def rfft2d(input_tensor, fft_length=None, name=None):
    """The 2-D FFT of a real signal over its 2 innermost dimensions, keeping the
    ``fft_length[1] // 2 + 1`` non-negative frequencies of the last.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.rfft2d(tf.zeros([2, 4, 6])).shape.as_list()
    [2, 4, 4]
    """
    with name_scope(name, "rfft2d", [input_tensor]):
        x = _real_input(input_tensor, "rfft2d")
        lengths = _fft_lengths(fft_length, 2, "rfft2d") or [x.shape[-2].value,
                                                           x.shape[-1].value]
        x = _fit(_fit(x, -2, lengths[0]), -1, lengths[1])
        return fft2d(_m.cast(x, _COMPLEX_OF[x.dtype.base_dtype]))[..., :lengths[1] // 2 + 1]


def irfft2d(input_tensor, fft_length=None, name=None):
    """The inverse of `rfft2d`: a real signal of shape ``fft_length`` (default
    ``[inner0, 2 * (inner1 - 1)]``) over the 2 innermost dimensions."""
    with name_scope(name, "irfft2d", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        lengths = _fft_lengths(fft_length, 2, "irfft2d") or [
            x.shape[-2].value, 2 * (x.shape[-1].value - 1)]
        x = _fit(x, -2, lengths[0])
        columns = _swap_last(ifft(_swap_last(x)))  # inverse FFT along axis -2
        return real(ifft(_hermitian_full(columns, lengths[1])))


def _window(window_length, periodic, dtype, a, b, name, what):
    with name_scope(name, what, [window_length]):
        n = int(window_length)
        if n == 1:
            return convert_to_tensor([1.0], dtype=dtype)
        # As TensorFlow: `periodic` lengthens the period by one only for an even length.
        denom = float(n - 1 + (1 if periodic and n % 2 == 0 else 0))
        k = _m.cast(_a.range(n), dtype)
        return a - b * _m.cos(2.0 * math.pi * k / denom)


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
