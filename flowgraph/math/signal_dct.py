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
from flowgraph.ops.control_flow_cond import smart_cond
from flowgraph.ops.spectral_ops import complex as _complex
from flowgraph.ops.spectral_ops import real

__all__ = ["dct", "idct", "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms"]


def _check(x, type, n, axis, norm):
    """TensorFlow's argument checks, in its order and with its messages (shared by
    `dct` and `idct`)."""
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        size = x.shape[-1].value if x.shape.ndims else None
        if size is not None and size < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _inner(x):
    """The innermost dimension: a Python int when known, else a scalar tensor."""
    size = x.shape[-1].value if x.shape.ndims else None
    return _a.shape(x)[-1] if size is None else size


def _crop_or_pad(x, n):
    """`x` cut or zero-padded to `n` points along its innermost axis (`n` argument)."""
    size = _inner(x)

    def _pad():
        rank = x.shape.ndims
        if rank is None:
            raise ValueError(f"tf.signal.dct: the input's rank must be known to pad it to "
                             f"n={n}, got shape {x.shape}")
        widths = [[0, 0] for _ in range(rank - 1)] + [[0, n - size]]
        if isinstance(size, int):
            widths = convert_to_tensor(widths, dtype=_dtypes.int32)
        else:
            widths = _a.stack([_a.stack(w) for w in widths])
        return _a.pad(x, widths)

    return smart_cond(n <= size, lambda: x[..., 0:n], _pad)


def _twiddle(size_f, zero, sign: float):
    """``2 exp(sign * i pi k / 2n)``, built from ops as TensorFlow builds it."""
    k = _a.range(size_f)
    if sign < 0:
        k = -k
    return 2.0 * _m.exp(_complex(zero, k * math.pi * 0.5 / size_f))


def _ortho_weights(size, first, rest):
    """``[first, rest, rest, ...]`` of length `size` (a Pad of the first value)."""
    return _a.pad(_a.expand_dims(first, 0), [[0, size - 1]], constant_values=rest)


def _dct(x, type, n, norm, name):
    with name_scope(name, "dct", [x]):
        x = convert_to_tensor(x, name="input")
        if x.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
            raise TypeError(f"tf.signal.dct: input must be float32 or float64, got "
                            f"{x.dtype.base_dtype.name}")
        zero = convert_to_tensor(0.0, dtype=x.dtype.base_dtype)
        if n is not None:
            x = _crop_or_pad(x, n)
        size = _inner(x)
        size_f = _m.cast(size, x.dtype.base_dtype)
        if type == 1:
            return real(rfft(_a.concat([x, x[..., -2:0:-1]], axis=-1)))
        if type == 2:
            scale = _twiddle(size_f, zero, -1.0)
            out = real(rfft(x, fft_length=[2 * size])[..., :size] * scale)
            if norm == "ortho":
                first = 0.5 * _m.rsqrt(size_f)
                out *= _ortho_weights(size, first, first * math.sqrt(2.0))
            return out
        if type == 3:
            if norm == "ortho":
                first = _m.sqrt(size_f)
                x *= _ortho_weights(size, first, first * math.sqrt(0.5))
            else:
                x *= size_f
            scale = _twiddle(size_f, zero, 1.0)
            return real(irfft(scale * _complex(x, zero), fft_length=[2 * size]))[..., :size]
        out = _dct(x, 2, 2 * size, None, None)[..., 1::2]
        if norm == "ortho":
            out *= math.sqrt(0.5) * _m.rsqrt(size_f)
        return out


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The DCT of the given `type` (1, 2, 3 or 4) over the innermost axis, of the input
    cut or zero-padded to `n` points when `n` is given; ``norm="ortho"`` (types 2, 3 and
    4) makes it orthonormal. Type 4 is, as TensorFlow computes it, the odd entries of the
    type-2 DCT of the input padded to twice its length.

    Example
    -------
    >>> import flowgraph as tf
    >>> abs(tf.Session().run(tf.signal.dct([1.0, 1.0, 1.0, 1.0]))).round(4).tolist()
    [8.0, 0.0, 0.0, 0.0]
    """
    _check(input if hasattr(input, "shape") else convert_to_tensor(input), type, n, axis,
           norm)
    return _dct(input, type, n, norm, name)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The DCT of the inverse type (2 <-> 3, 1 <-> 1), as TensorFlow defines it: the
    exact inverse with ``norm="ortho"``; unnormalized, ``idct(dct(x))`` is ``2 n x``
    (``2 (n - 1) x`` for type 1). Its ops are in a ``dct`` scope, as TensorFlow's.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.signal.idct(tf.signal.dct([1.0, 2.0, 3.0]))
    >>> tf.Session().run(y).round(4).tolist()
    [6.0, 12.0, 18.0]
    """
    _check(input if hasattr(input, "shape") else convert_to_tensor(input), type, n, axis,
           norm)
    return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm, name)


def _hertz_to_mel(f):
    return 1127.0 * np.log1p(np.asarray(f) / 700.0)


def _check_mel(num_mel_bins, num_spectrogram_bins, sample_rate, lower, upper, dtype):
    """`linear_to_mel_weight_matrix`'s argument checks, in TensorFlow's order."""
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower}")
    if lower >= upper:
        raise ValueError(f"lower_edge_hertz {lower:.1f} >= upper_edge_hertz {upper:.1f}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")
    if num_spectrogram_bins <= 0:
        raise ValueError(f"num_spectrogram_bins must be positive. Got: "
                         f"{num_spectrogram_bins}")


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
    dtype = _dtypes.as_dtype(dtype)
    _check_mel(num_mel_bins, num_spectrogram_bins, sample_rate, lower_edge_hertz,
               upper_edge_hertz, dtype)
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
        bins = x.shape[-1].value if x.shape.ndims else None
        if bins == 0:
            raise ValueError(f"num_mel_bins must be positive. Got: {x}")
        if bins is None:
            bins = _a.shape(x)[-1]
        coefficients = dct(x, type=2)
        return coefficients * _m.rsqrt(_m.cast(bins, coefficients.dtype.base_dtype) * 2.0)
