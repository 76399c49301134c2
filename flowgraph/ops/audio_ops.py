"""``tf.audio``: WAV files as tensors, with TensorFlow's ``DecodeWav``/``EncodeWav`` ops:
16-bit PCM samples as float32 in [-1, 1), ``[samples, channels]``.

Example
-------
>>> import flowgraph as tf
>>> wav = tf.audio.encode_wav([[0.0], [0.5], [-0.5]], 8000)
>>> audio, rate = tf.audio.decode_wav(wav)
>>> tf.Session().run([audio, rate])[0].ravel().tolist()
[0.0, 0.5, -0.5]
"""

from __future__ import annotations

import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["decode_wav", "encode_wav"]


@register_op("DecodeWav", attrs={"desired_channels": -1, "desired_samples": -1},
             num_outputs=2, dtype_fn=fixed_dtype(_dtypes.float32, _dtypes.int32))
def _decode_shape(op, contents):
    samples = op.attrs["desired_samples"]
    channels = op.attrs["desired_channels"]
    # As TensorFlow: -1 means "as in the file"; any other negative value is an error.
    for what, value in (("samples", samples), ("channels", channels)):
        if value < -1:
            raise op.shape_error(f"desired_{what} must be non-negative (or -1 for the "
                                 f"file's), got {value}")
    return [TensorShape([samples if samples >= 0 else None,
                         channels if channels >= 0 else None]), TensorShape([])]


@register_op("EncodeWav", dtype_fn=fixed_dtype(_dtypes.string))
def _encode_shape(op, audio, rate):
    if audio.ndims not in (None, 2):
        raise op.shape_error(f"audio must be [samples, channels], got shape {audio}")
    return [TensorShape([])]


not_differentiable("DecodeWav", "EncodeWav")


# As TensorFlow's: the result names its fields (``decoded.audio``).
DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``(audio, sample_rate)`` of a 16-bit PCM WAV file: float32 ``[samples, channels]``
    (truncated or zero padded to `desired_samples`; a mono file is repeated to
    `desired_channels`) and the int32 sample rate."""
    op = make_op("DecodeWav", [convert_to_tensor(contents, dtype=_dtypes.string,
                                                 name="contents")],
                 {"desired_channels": int(desired_channels),
                  "desired_samples": int(desired_samples)}, name=name or "DecodeWav")
    return DecodeWav(op.outputs[0], op.outputs[1])


def encode_wav(audio, sample_rate, name=None):
    """A 16-bit PCM WAV file (a scalar string) of float32 `audio` ``[samples, channels]``
    in [-1, 1] at `sample_rate` Hz."""
    return make_tensor("EncodeWav", [convert_to_tensor(audio, dtype=_dtypes.float32,
                                                       name="audio"),
                                     convert_to_tensor(sample_rate, dtype=_dtypes.int32,
                                                       name="sample_rate")],
                       name=name or "EncodeWav")
