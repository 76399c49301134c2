"""CPU kernels of ``DecodeWav``/``EncodeWav`` (`flowgraph/ops/audio_ops.py`)."""

from __future__ import annotations

import struct

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_summary_audio import encode_wav as _encode
from flowgraph.framework import errors


def _bad(msg):
    return errors.InvalidArgumentError(None, None, f"DecodeWav: {msg}")


@cpu_kernel("EncodeWav")
def encode_wav(audio, rate):
    out = np.empty((), dtype=object)
    out[()] = _encode(np.asarray(audio, np.float32).reshape(np.shape(audio)[0], -1), int(rate))
    return out


@cpu_kernel("DecodeWav")
def decode_wav(contents, *, desired_channels, desired_samples):
    data = np.asarray(contents, dtype=object).item()
    data = data if isinstance(data, bytes) else str(data).encode()
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise _bad("the contents are not a RIFF/WAVE file")
    pos, fmt, pcm = 12, None, None
    while pos < len(data):
        if pos + 8 > len(data):
            raise _bad(f"{len(data) - pos} bytes at offset {pos} are too few for a chunk "
                       "header (8 bytes)")
        chunk, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        if len(body) < size:
            raise _bad(f"the {chunk!r} chunk is cut short: it declares {size} bytes, "
                       f"{len(body)} remain in the contents")
        if chunk == b"fmt ":
            if size < 16:
                raise _bad(f"the 'fmt ' chunk has {size} bytes, expected at least 16")
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif chunk == b"data":
            pcm = body
        pos += 8 + size + (size & 1)
    if fmt is None or pcm is None:
        raise _bad("missing fmt or data chunk")
    audio_format, channels, rate, _, _, bits = fmt
    if audio_format != 1 or bits != 16:
        raise _bad(f"only 16-bit PCM is supported, got format {audio_format} with {bits} "
                   "bits per sample")
    samples = np.frombuffer(pcm[:len(pcm) // (2 * channels) * 2 * channels], dtype="<i2")
    audio = (samples.astype(np.float32) / np.float32(32768.0)).reshape(-1, channels)
    if desired_samples >= 0:
        out = np.zeros((desired_samples, channels), np.float32)
        n = min(desired_samples, audio.shape[0])
        out[:n] = audio[:n]
        audio = out
    if desired_channels >= 0 and desired_channels != channels:
        # As TensorFlow: output channel c is input channel min(c, channels - 1) (the
        # first channels kept, the last one repeated).
        audio = audio[:, np.minimum(np.arange(desired_channels), channels - 1)]
    return [np.ascontiguousarray(audio), np.asarray(rate, np.int32)]
