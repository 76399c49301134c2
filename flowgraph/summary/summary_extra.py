"""The rest of TensorFlow 1.x's ``tf.summary``: `audio` summaries, `SummaryDescription`
with `get_summary_description`, and `all_v2_summary_ops`.

Example
-------
>>> import flowgraph as tf
>>> tf.summary.SummaryDescription(type_hint="image").type_hint
'image'
"""

from __future__ import annotations

import json

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.event_format import Message
from flowgraph.framework.graph import GraphKeys, get_collection
from flowgraph.ops import summary_audio_ops as _audio_op_defs  # noqa: F401  (the op type)
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import make_tensor
from flowgraph.summary.summary_ops import _collect, _summary_scope

__all__ = ["SummaryDescription", "all_v2_summary_ops", "audio", "get_summary_description"]

# The collection TensorFlow's v2 summary ops add themselves to in graph mode.
_SUMMARY_V2_COLLECTION = "_SUMMARY_V2"


class SummaryDescription(Message):
    """TensorFlow's ``SummaryDescription`` message: a ``type_hint`` for a tensor summary."""

    PROTO_NAME = "tensorflow.SummaryDescription"
    FIELDS = ((1, "type_hint", "string", False),)


def audio(name: str, tensor, sample_rate, max_outputs: int = 3, collections=None,
          family=None):
    """WAV clips of a float tensor ``[batch, frames]`` or ``[batch, frames, channels]``
    with samples in [-1, 1], at `sample_rate` Hz; at most `max_outputs` clips, tagged
    ``tag/audio/0``, ``tag/audio/1``, ... (``tag/audio`` when `max_outputs` is 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.summary.audio("tone", tf.sin(tf.range(800.0) * 0.1)[None], 8000)
    >>> with tf.Session() as sess:
    ...     value = tf.Summary.FromString(sess.run(s)).value[0]
    >>> value.tag, value.audio.length_frames, value.audio.content_type
    ('tone/audio/0', 800, 'audio/wav')
    """
    if int(max_outputs) < 1:
        raise ValueError(f"tf.summary.audio: max_outputs must be at least 1, got "
                         f"{max_outputs}")
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor)
        if not tensor.dtype.is_floating:
            raise TypeError(f"tf.summary.audio('{tag}'): the audio must be float, got "
                            f"{tensor.dtype.base_dtype.name}; scale integer PCM to [-1, 1]")
        tensor = cast(tensor, _dtypes.float32)
        rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32, name="sample_rate")
        val = make_tensor("AudioSummaryV2", [constant(tag, name="tag"), tensor, rate],
                          {"max_outputs": int(max_outputs)}, name=scope)
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def get_summary_description(node_def) -> SummaryDescription:
    """The `SummaryDescription` stored in the ``description`` attribute (JSON) of a
    TensorFlow ``TensorSummary`` node (a `tf.NodeDef`, e.g. from a TensorFlow GraphDef).

    Example
    -------
    >>> import flowgraph as tf
    >>> description = tf.AttrValue(s=b'{"typeHint": "image"}')
    >>> node = tf.NodeDef(name="s", op="TensorSummary", attr={"description": description})
    >>> tf.summary.get_summary_description(node).type_hint
    'image'
    """
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}: only TensorFlow "
                         "TensorSummary nodes carry a description")
    attr = node_def.attr.get("description") if hasattr(node_def.attr, "get") else None
    raw = attr.s if attr is not None else b""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    try:
        fields = json.loads(text) if text else {}
    except ValueError as e:
        raise ValueError(f"node '{node_def.name}': the description attribute is not "
                         f"JSON ({e}): {text[:80]!r}") from None
    return SummaryDescription(type_hint=fields.get("typeHint", fields.get("type_hint", "")))


def all_v2_summary_ops():
    """The graph's TensorFlow-2-style summary ops (collection ``_SUMMARY_V2``). flowgraph
    writes summaries with TF1's ops only, so the list is empty unless a program added
    ops to that collection itself.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.summary.all_v2_summary_ops()
    []
    """
    return get_collection(_SUMMARY_V2_COLLECTION)
