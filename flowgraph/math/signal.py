"""The ``tf.signal`` and ``tf.spectral`` namespaces: re-exports of the Fourier
transforms (`flowgraph/ops/spectral_ops.py`, `flowgraph/math/signal_fft.py`), framing
and the short-time Fourier transform (`flowgraph/math/signal_frames.py`), the DCT and
mel-scale helpers (`flowgraph/math/signal_dct.py`).

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.signal.hann_window(4, periodic=True)).tolist()
[0.0, 0.5, 1.0, 0.5]
"""

from __future__ import annotations

from flowgraph.math.signal_dct import (
    dct,
    idct,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
)
from flowgraph.math.signal_fft import (
    hamming_window,
    hann_window,
    irfft,
    irfft2d,
    rfft,
    rfft2d,
)
from flowgraph.math.signal_fft_nd import fftnd, ifftnd, irfft3d, irfftnd, rfft3d, rfftnd
from flowgraph.math.signal_frames import (
    fftshift,
    frame,
    ifftshift,
    inverse_stft,
    overlap_and_add,
    stft,
)
from flowgraph.math.signal_mdct import (
    inverse_mdct,
    inverse_stft_window_fn,
    kaiser_bessel_derived_window,
    kaiser_window,
    mdct,
    vorbis_window,
)
from flowgraph.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d

__all__ = ["dct", "fft", "fft2d", "fft3d", "fftnd", "fftshift", "frame", "hamming_window",
           "hann_window", "idct", "ifft", "ifft2d", "ifft3d", "ifftnd", "ifftshift",
           "inverse_mdct", "inverse_stft", "inverse_stft_window_fn", "irfft", "irfft2d",
           "irfft3d", "irfftnd", "kaiser_bessel_derived_window", "kaiser_window",
           "linear_to_mel_weight_matrix", "mdct", "mfccs_from_log_mel_spectrograms",
           "overlap_and_add", "rfft", "rfft2d", "rfft3d", "rfftnd", "stft", "vorbis_window"]
