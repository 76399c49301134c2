"""Discrete cosine transforms (`dct`, `idct`: types 1, 2 and 3) through a double-length
real FFT, and the mel-scale helpers (`linear_to_mel_weight_matrix`,
`mfccs_from_log_mel_spectrograms`), for ``tf.signal``.

DCT-II of ``x`` (length n) is ``Re(rfft(x, 2n)[:n] * 2 exp(-i pi k / 2n))``; DCT-III, its
inverse up to ``2n``, is ``Re(irfft(x * 2 exp(i pi k / 2n), 2n))[:n]`` with the input
first scaled by n; ``norm="ortho"`` weights make both orthonormal.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0, 3.0, 4.0])
>>> y = tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho")
>>> tf.Session().run(y).round(4).tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.math.signal_fft import irfft, rfft
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.spectral_ops import complex as _complex
from flowgraph.ops.spectral_ops import real

__all__ = ["dct", "idct", "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms"]


def _check(x, type, n, axis, norm, what: str):
    if type not in (1, 2, 3, 4):
        raise ValueError(f"tf.signal.{what}: only DCT types 1, 2, 3 and 4 are supported, "
                         f"got type={type}")
    if n is not None:
        raise NotImplementedError(f"tf.signal.{what}: the `n` argument is not supported; "
                                  "crop or pad the input instead")
    if axis != -1:
        raise NotImplementedError(f"tf.signal.{what}: only axis=-1 is supported, got {axis}")
    if norm not in (None, "ortho"):
        raise ValueError(f"tf.signal.{what}: norm must be None or 'ortho', got {norm!r}")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")
    if x.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError(f"tf.signal.{what}: input must be float32 or float64, got "
                        f"{x.dtype.base_dtype.name}")
    size = x.shape[-1].value if x.shape.ndims else None
    if size is None:
        raise ValueError(f"tf.signal.{what}: the innermost dimension must be known when the "
                         f"graph is built, got shape {x.shape}")
    if type == 1 and size < 2:
        raise ValueError(f"tf.signal.{what}: a Type-I DCT needs at least 2 points, got "
                         f"{size}")
    return size


def _twiddle(n: int, sign: float, dtype):
    k = np.arange(n) * math.pi * 0.5 / n
    w = 2.0 * np.exp(1j * sign * k)
    cdtype = np.complex64 if dtype == _dtypes.float32 else np.complex128
    return convert_to_tensor(w.astype(cdtype))


def _ortho_weights(n: int, first: float, rest: float, dtype):
    w = np.full(n, rest)
    w[0] = first
    return convert_to_tensor(w.astype(dtype.as_numpy_dtype))


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The DCT of the given `type` (1, 2, 3 or 4) over the innermost axis;
    ``norm="ortho"`` (types 2, 3 and 4) makes it orthonormal. Type 4 is, as TensorFlow
    computes it, the odd entries of the type-2 DCT of the input padded to twice its
    length.

    Example
    -------
    >>> import flowgraph as tf
    >>> abs(tf.Session().run(tf.signal.dct([1.0, 1.0, 1.0, 1.0]))).round(4).tolist()
    [8.0, 0.0, 0.0, 0.0]
    """
    with name_scope(name, "dct", [input]):
        x = convert_to_tensor(input, name="input")
        size = _check(x, type, n, axis, norm, "dct")
        dtype = x.dtype.base_dtype
        if type == 1:
            mirror = _a.reverse_v2(x[..., 1:-1], [-1])
            return real(rfft(_a.concat([x, mirror], -1)))
        if type == 4:
            padded = _a.concat([x, _a.zeros_like(x)], -1)
            out = dct(padded, type=2)[..., 1::2]
            return out * (math.sqrt(0.5) / math.sqrt(size)) if norm == "ortho" else out
        if type == 2:
            spectrum = rfft(x, [2 * size])[..., :size]
            out = real(spectrum * _twiddle(size, -1.0, dtype))
            if norm == "ortho":
                first = 0.5 / math.sqrt(size)
                out = out * _ortho_weights(size, first, first * math.sqrt(2.0), dtype)
            return out
        if norm == "ortho":
            x = x * _ortho_weights(size, math.sqrt(size), math.sqrt(size) * math.sqrt(0.5),
                                   dtype)
        else:
            x = x * float(size)
        scaled = _twiddle(size, 1.0, dtype) * _complex(x, _a.zeros_like(x))
        return irfft(scaled, [2 * size])[..., :size]


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The DCT of the inverse type (2 <-> 3, 1 <-> 1), as TensorFlow defines it: the
    exact inverse with ``norm="ortho"``; unnormalized, ``idct(dct(x))`` is ``2 n x``
    (``2 (n - 1) x`` for type 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.signal.idct(tf.signal.dct([1.0, 2.0, 3.0]))
    >>> tf.Session().run(y).round(4).tolist()
    [6.0, 12.0, 18.0]
    """
    with name_scope(name, "idct", [input]):
        x = convert_to_tensor(input, name="input")
        _check(x, type, n, axis, norm, "idct")
        return dct(x, type={1: 1, 2: 3, 3: 2, 4: 4}[type], norm=norm)


def _hertz_to_mel(f):
    return 1127.0 * np.log1p(np.asarray(f) / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129,
                                sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=_dtypes.float32, name=None):
    """A ``[num_spectrogram_bins, num_mel_bins]`` matrix that maps a linear-frequency
    magnitude spectrum (e.g. ``abs(stft)``) to mel bands: triangular filters evenly
    spaced on the mel scale between the edges (the DC bin gets no weight).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.signal.linear_to_mel_weight_matrix(4, 5, 8000, 20.0, 4000.0).shape.as_list()
    [5, 4]
    """
    if num_mel_bins <= 0 or num_spectrogram_bins <= 0:
        raise ValueError(f"linear_to_mel_weight_matrix: num_mel_bins ({num_mel_bins}) and "
                         f"num_spectrogram_bins ({num_spectrogram_bins}) must be positive")
    if not 0.0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2.0:
        raise ValueError(
            f"linear_to_mel_weight_matrix: need 0 <= lower_edge_hertz ({lower_edge_hertz}) < "
            f"upper_edge_hertz ({upper_edge_hertz}) <= sample_rate / 2 ({sample_rate / 2.0})")
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "linear_to_mel_weight_matrix") as scope:
        npd = dtype.as_numpy_dtype
        freqs = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins).astype(npd)[1:]
        bins_mel = _hertz_to_mel(freqs).astype(npd)[:, None]
        edges = np.linspace(_hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz),
                            num_mel_bins + 2).astype(npd)
        lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
        rising = (bins_mel - lower) / (center - lower)
        falling = (upper - bins_mel) / (upper - center)
        weights = np.maximum(0.0, np.minimum(rising, falling)).astype(npd)
        # As TensorFlow: the zero row of the DC bin is a Pad named after the scope.
        return _a.pad(convert_to_tensor(weights, dtype=dtype), [[1, 0], [0, 0]], name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the orthogonally scaled DCT-II of log-mel
    spectrograms ``[..., num_mel_bins]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> m = tf.signal.mfccs_from_log_mel_spectrograms(tf.ones([2, 4]))
    >>> [round(abs(float(v)), 4) for v in tf.Session().run(m)[0]]
    [2.8284, 0.0, 0.0, 0.0]
    """
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        bins = _a.shape(x)[-1]  # as TensorFlow: may be unknown until the graph runs
        coefficients = dct(x, type=2)
        return coefficients * _m.rsqrt(_m.cast(bins, coefficients.dtype.base_dtype) * 2.0)
