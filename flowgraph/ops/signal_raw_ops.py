"""TensorFlow's speech front-end op types and a raw-bytes decoder that graphs hold:
``AudioSpectrogram`` (Hann-windowed FFT power or magnitude of ``[samples, channels]``
audio), ``Mfcc`` (mel-frequency cepstral coefficients of such a spectrogram, as the
speech-commands models compute them) and ``DecodePaddedRaw`` (fixed-length records of
bytes, zero-padded or cut, as numbers). TensorFlow registers no gradient for the first
two and declares the third not differentiable. Kernels:
`flowgraph/backends/cpu/kernels_signal_raw.py`.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> audio = np.sin(np.arange(64, dtype=np.float32) / 3).reshape(64, 1)
>>> spec = tf.raw_ops.AudioSpectrogram(input=audio, window_size=16, stride=8)
>>> spec.shape.as_list()
[1, 7, 9]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype

__all__: list[str] = []


def _next_power_of_two(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


@register_op("AudioSpectrogram", attrs={"window_size": None, "stride": None,
                                        "magnitude_squared": False},
             dtype_fn=fixed_dtype(_dtypes.float32), cost=OpCost.EXPENSIVE)
def _spectrogram_shape(op, audio):
    if audio.ndims is not None and audio.ndims != 2:
        raise op.shape_error(f"input must be 2-D [samples, channels], got rank {audio.ndims}")
    window, stride = int(op.attrs["window_size"]), int(op.attrs["stride"])
    if window < 2 or stride < 1:
        raise op.shape_error(f"window_size must be at least 2 and stride at least 1, got "
                             f"{window} and {stride}")
    samples, channels = audio.as_list() if audio.ndims is not None else (None, None)
    frames = None if samples is None else (
        0 if samples < window else 1 + (samples - window) // stride)
    return [TensorShape([channels, frames, 1 + _next_power_of_two(window) // 2])]


@register_op("Mfcc", attrs={"upper_frequency_limit": 4000.0, "lower_frequency_limit": 20.0,
                            "filterbank_channel_count": 40, "dct_coefficient_count": 13},
             dtype_fn=fixed_dtype(_dtypes.float32), cost=OpCost.EXPENSIVE)
def _mfcc_shape(op, spectrogram, sample_rate):
    if spectrogram.ndims is not None and spectrogram.ndims != 3:
        raise op.shape_error(f"spectrogram must be 3-D [channels, frames, bins], got rank "
                             f"{spectrogram.ndims}")
    if sample_rate.ndims not in (None, 0):
        raise op.shape_error(f"sample_rate must be a scalar, got rank {sample_rate.ndims}")
    dims = spectrogram.as_list() if spectrogram.ndims is not None else [None] * 3
    return [TensorShape([dims[0], dims[1], int(op.attrs["dct_coefficient_count"])])]


@register_op("DecodePaddedRaw", attrs={"out_type": None, "little_endian": True},
             dtype_fn=attr_dtype("out_type"))
def _decode_padded_raw_shape(op, input_bytes, fixed_length):
    length = constant_value(op.inputs[1])
    size = _dtypes.as_dtype(op.attrs["out_type"]).size
    width = None
    if length is not None:
        length = int(np.reshape(length, -1)[0])
        if length % size:
            raise op.shape_error(f"fixed_length ({length}) must be a multiple of the size of "
                                 f"out_type ({size} bytes)")
        width = length // size
    if input_bytes.ndims is None:
        return [TensorShape(None)]
    return [TensorShape([*input_bytes.as_list(), width])]


not_differentiable("DecodePaddedRaw")
# AudioSpectrogram and Mfcc: TensorFlow registers no gradient (tf.gradients raises
# LookupError), here as there.
