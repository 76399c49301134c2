"""``tf.spectral``: TF 1.x's namespace of the Fourier and cosine transforms only (the
framing, STFT and mel helpers are in ``tf.signal``), the same functions as
`flowgraph/math/signal.py`.

Example
-------
>>> import flowgraph as tf
>>> tf.spectral.rfft is tf.signal.rfft, hasattr(tf.spectral, "stft")
(True, False)
"""

from __future__ import annotations

from flowgraph.math.signal import (
    dct,
    fft,
    fft2d,
    fft3d,
    idct,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)

__all__ = ["dct", "fft", "fft2d", "fft3d", "idct", "ifft", "ifft2d", "ifft3d", "irfft",
           "irfft2d", "irfft3d", "rfft", "rfft2d", "rfft3d"]
