"""CPU kernel of ``AudioSummaryV2``: each clip becomes a 16-bit PCM little-endian WAV file
(samples rounded from ``x * 32768`` and clamped to the int16 range, as TensorFlow does)."""

from __future__ import annotations

import struct

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework import event_format as ef


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """A WAV file of float `samples` (``[frames, channels]``) at `sample_rate` Hz."""
    _frames, channels = samples.shape
    pcm = np.clip(np.round(samples.astype(np.float32) * 32768.0), -32768, 32767)
    data = pcm.astype("<i2").tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ",
                         16, 1, channels, sample_rate, sample_rate * channels * 2,
                         channels * 2, 16, b"data", len(data))
    return header + data


@cpu_kernel("AudioSummaryV2")
def audio_summary(tag, tensor, sample_rate, *, max_outputs):
    tag_s = np.asarray(tag).item()
    tag_s = tag_s.decode("utf-8", "replace") if isinstance(tag_s, bytes) else str(tag_s)
    rate = float(sample_rate)
    if not rate > 0:
        raise errors.InvalidArgumentError(
            None, None, f"AudioSummaryV2 '{tag_s}': sample_rate must be positive, got {rate}")
    clips = np.asarray(tensor)
    if clips.ndim not in (2, 3):
        raise errors.InvalidArgumentError(
            None, None, f"Tensor must be 3-D or 2-D, got: [{','.join(map(str, clips.shape))}] "
            f"(AudioSummaryV2 '{tag_s}': [batch, frames] or [batch, frames, channels])")
    if clips.ndim == 2:
        clips = clips[:, :, None]
    summary = ef.Summary()
    for i in range(min(clips.shape[0], int(max_outputs))):
        name = f"{tag_s}/audio" if max_outputs == 1 else f"{tag_s}/audio/{i}"
        summary.value.add(tag=name, audio=ef.Summary.Audio(
            sample_rate=rate, num_channels=clips.shape[2], length_frames=clips.shape[1],
            encoded_audio_string=encode_wav(clips[i], int(rate)), content_type="audio/wav"))
    return np.asarray(summary.SerializeToString(), dtype=object)
