"""CPU kernels of `flowgraph/ops/signal_raw_ops.py`, following TensorFlow's speech
front end step by step (in float64, results in float32).

Spectrogram: windows of ``window_size`` samples every ``stride`` samples (only whole
windows), each multiplied by the periodic Hann window ``0.5 - 0.5 cos(2 pi i / n)``,
zero-padded to the next power of two and transformed; the output keeps the
``fft_length / 2 + 1`` non-negative frequencies, as power (``magnitude_squared``) or
magnitude: ``[channels, frames, bins]``.

MFCC, per frame: the square roots of the spectrogram's bins are summed into
``filterbank_channel_count`` triangular mel bands (mel ``= 1127 ln(1 + f / 700)``; band
centers evenly spaced in mel between the frequency limits, the bins outside them and the
DC bin ignored; a bin between two centers splits between those two bands by its mel
distance), the log of each band (at least ``1e-12``), then the first
``dct_coefficient_count`` coefficients of an orthonormal-scaled DCT-II
(``sqrt(2 / n) cos(pi i (j + 0.5) / n)``).
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors


def _invalid(op, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op.type} '{op.name}': {msg}")


@cpu_kernel("AudioSpectrogram", dtypes=["float32"], fresh=True)
def audio_spectrogram(audio, *, window_size, stride, magnitude_squared, op):
    if audio.ndim != 2:
        raise _invalid(op, f"input must be 2-D [samples, channels], got shape "
                       f"{list(audio.shape)}")
    window, step = int(window_size), int(stride)
    if window < 2 or step < 1:
        raise _invalid(op, f"window_size must be at least 2 and stride at least 1, got "
                       f"{window} and {step}")
    samples, channels = audio.shape
    fft_length = 1 << (window - 1).bit_length()
    bins = fft_length // 2 + 1
    frames = 0 if samples < window else 1 + (samples - window) // step
    if frames == 0:
        return np.zeros((channels, 0, bins), np.float32)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(window) / window)
    starts = np.arange(frames) * step
    x = audio.astype(np.float64).T                                  # [channels, samples]
    windows = x[:, starts[:, None] + np.arange(window)] * hann     # [channels, frames, w]
    spectrum = np.fft.rfft(windows, n=fft_length, axis=-1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    out = power.astype(np.float32)
    return out if magnitude_squared else np.sqrt(out)


def _mel(freq):
    return 1127.0 * np.log1p(np.asarray(freq, np.float64) / 700.0)


def mel_weights(bins: int, rate: float, channels: int, lower: float, upper: float):
    """``[bins, channels]``: how much of each bin's magnitude each mel band receives."""
    mel_low, mel_high = _mel(lower), _mel(upper)
    centers = mel_low + (mel_high - mel_low) / (channels + 1) * np.arange(1, channels + 2)
    hz_per_bin = 0.5 * rate / (bins - 1)
    start = int(1.5 + lower / hz_per_bin)
    end = int(upper / hz_per_bin)
    matrix = np.zeros((bins, channels))
    index = np.arange(bins)
    used = (index >= start) & (index <= end)
    mels = _mel(index * hz_per_bin)
    # the band whose right side each bin is on (-1: left of the first center)
    band = np.searchsorted(centers[:channels], mels, side="left") - 1
    upper_center = centers[band + 1]
    lower_center = np.where(band >= 0, centers[np.maximum(band, 0)], mel_low)
    weight = (upper_center - mels) / (upper_center - lower_center)
    rows = index[used]
    right, left = band[used], band[used] + 1
    keep = right >= 0
    matrix[rows[keep], right[keep]] += weight[used][keep]
    keep = left < channels
    matrix[rows[keep], left[keep]] += 1.0 - weight[used][keep]
    return matrix


def dct_matrix(n: int, count: int):
    """``[n, count]``: TensorFlow's MFCC DCT-II basis (the first `count` rows)."""
    i = np.arange(count)[None, :]
    j = np.arange(n)[:, None]
    return np.sqrt(2.0 / n) * np.cos(np.pi / n * i * (j + 0.5))


@cpu_kernel("Mfcc", dtypes=["float32"], fresh=True)
def mfcc(spectrogram, sample_rate, *, upper_frequency_limit, lower_frequency_limit,
         filterbank_channel_count, dct_coefficient_count, op):
    if spectrogram.ndim != 3:
        raise _invalid(op, f"spectrogram must be 3-D [channels, frames, bins], got shape "
                       f"{list(spectrogram.shape)}")
    if np.ndim(sample_rate) != 0:
        raise _invalid(op, f"sample_rate must be a scalar, got shape "
                       f"{list(np.shape(sample_rate))}")
    bins, channels = spectrogram.shape[2], int(filterbank_channel_count)
    lower, upper = float(lower_frequency_limit), float(upper_frequency_limit)
    count, rate = int(dct_coefficient_count), float(sample_rate)
    if bins < 2 or not 1 <= count <= channels or rate <= 0 or lower < 0 or upper <= lower:
        raise _invalid(op, f"Mfcc initialization failed for channel count {bins}, sample "
                       f"rate {int(sample_rate)}: needs at least 2 spectrogram bins, "
                       f"1 <= dct_coefficient_count ({count}) <= filterbank_channel_count "
                       f"({channels}), a positive sample rate and 0 <= "
                       f"lower_frequency_limit < upper_frequency_limit (got {lower}, {upper})")
    weights = mel_weights(bins, rate, channels, lower, upper)
    bands = np.sqrt(spectrogram.astype(np.float64)) @ weights
    logs = np.log(np.maximum(bands, 1e-12))
    out = logs @ dct_matrix(channels, count)
    return out.astype(np.float32)


@cpu_kernel("DecodePaddedRaw", fresh=True)
def decode_padded_raw(input_bytes, fixed_length, *, out_type, little_endian, op):
    dtype = np.dtype(out_type.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    length = int(fixed_length)
    if length < 0 or length % dtype.itemsize:
        raise _invalid(op, f"fixed_length ({length}) must be a non-negative multiple of the "
                       f"size of {out_type.name} ({dtype.itemsize} bytes)")
    items = np.asarray(input_bytes, dtype=object)
    flat = [v if isinstance(v, bytes) else str(v).encode() for v in items.reshape(-1)]
    buffer = b"".join(v[:length].ljust(length, b"\0") for v in flat)
    values = np.frombuffer(buffer, dtype=dtype).astype(dtype.newbyteorder("="))
    return values.reshape(*items.shape, length // dtype.itemsize)
