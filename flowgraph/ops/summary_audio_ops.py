"""The ``AudioSummaryV2`` op (TensorFlow's type): a serialized `Summary` holding WAV clips
of a float ``[batch, frames]`` or ``[batch, frames, channels]`` tensor in [-1, 1].
`flowgraph.summary.summary_extra.audio` builds it; `backends/cpu/kernels_summary_audio.py`
encodes it. Not differentiable.

Example
-------
>>> import flowgraph as tf
>>> tf.summary.audio("clip", tf.zeros([1, 8]), 8000).op.type
'AudioSummaryV2'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype

__all__: list[str] = []


@register_op("AudioSummaryV2", attrs={"max_outputs": 3}, dtype_fn=fixed_dtype(_dtypes.string))
def _audio_summary_shape(op, tag, tensor, sample_rate):
    # The clips' rank is checked when the op runs, as TensorFlow does.
    if sample_rate.ndims not in (None, 0):
        raise op.shape_error(f"sample_rate must be a scalar, got shape {sample_rate}")
    return [TensorShape([])]


not_differentiable("AudioSummaryV2")
