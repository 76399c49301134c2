"""The ``tf.signal`` and ``tf.spectral`` namespaces: Fourier transforms
(`flowgraph/ops/spectral_ops.py`), `rfft` and the Hann/Hamming windows.

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.signal.hann_window(4, periodic=True)).tolist()
[0.0, 0.5, 1.0, 0.5]
"""

from __future__ import annotations

import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d

__all__ = ["fft", "fft2d", "fft3d", "hamming_window", "hann_window", "ifft", "ifft2d",
           "ifft3d", "rfft"]


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
    from flowgraph.ops.array_join_ops import pad
    from flowgraph.ops.math_ops import cast

    with name_scope(name, "rfft", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        if x.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
            raise TypeError(f"tf.signal.rfft: input must be float32 or float64, got "
                            f"{x.dtype.base_dtype.name}")
        n = x.shape[-1].value if x.shape.ndims else None
        length = n
        if fft_length is not None:
            static = constant_value(convert_to_tensor(fft_length))
            if static is None:
                raise ValueError("tf.signal.rfft: fft_length must be a constant")
            length = int(static.reshape(-1)[0])
        if length is None or n is None:
            raise ValueError("tf.signal.rfft: the innermost dimension of the input must be "
                             f"known when the graph is built, got shape {x.shape}")
        if n > length:
            x = x[..., :length]
        elif n < length:
            x = pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, length - n]])
        complex_dtype = _dtypes.complex64 if x.dtype.base_dtype == _dtypes.float32 \
            else _dtypes.complex128
        return fft(cast(x, complex_dtype))[..., :length // 2 + 1]


def _window(window_length, periodic, dtype, a, b, name, what):
    from flowgraph.ops.array_gen_ops import range as _range
    from flowgraph.ops.math_ops import cast, cos

    with name_scope(name, what, [window_length]):
        n = int(window_length)
        if n == 1:
            return convert_to_tensor([1.0], dtype=dtype)
        denom = float(n if periodic else n - 1)
        k = cast(_range(n), dtype)
        return a - b * cos(2.0 * math.pi * k / denom)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)`` (N = length, or length - 1 when not
    `periodic`)."""
    return _window(window_length, periodic, dtype, 0.5, 0.5, name, "hann_window")


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hamming window ``0.54 - 0.46 cos(2 pi k / N)``."""
    return _window(window_length, periodic, dtype, 0.54, 0.46, name, "hamming_window")
