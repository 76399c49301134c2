"""`tf.contrib.deprecated`: TensorFlow 1.0's summary functions, before `tf.summary`.

`scalar_summary(tags, values)`, `histogram_summary(tag, values)`,
`image_summary(tag, tensor, max_images=3)`, `audio_summary(tag, tensor, sample_rate)`,
`merge_summary(inputs)` and `merge_all_summaries()` build the same summary ops as
`tf.summary.*`, with TF 1.0's arguments and naming: the tag is used exactly as given (no
name-scope prefix, no uniquifying, and it may be a string tensor), the op is named by
`name` or after its type (``ScalarSummary``, ``HistogramSummary``, ...) in the current
scope, and `scalar_summary` takes a tensor of tags with a same-shaped tensor of values.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     s = tf.contrib.deprecated.scalar_summary(["a", "b"], tf.constant([1.0, 2.0]))
...     with tf.Session() as sess:
...         [v.tag for v in tf.Summary.FromString(sess.run(s)).value]
['a', 'b']
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, get_collection, name_scope
from flowgraph.ops import summary_audio_ops as _audio_op_defs  # noqa: F401  (the op type)
from flowgraph.ops import summary_ops as _summary_op_defs  # noqa: F401  (the op types)
from flowgraph.ops.op_util import make_tensor

__all__ = [
    "audio_summary",
    "histogram_summary",
    "image_summary",
    "merge_all_summaries",
    "merge_summary",
    "scalar_summary",
]


def _collect(value, collections, default):
    for key in default if collections is None else collections:
        value.graph.add_to_collection(key, value)
    return value


def _string_tag(tag, name: str, op: str):
    tag = convert_to_tensor(tag, dtype=_dtypes.string, name=name)
    if tag.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"{op}: the tag must be a string tensor, got '{tag.name}' of dtype "
                        f"{tag.dtype.base_dtype.name}")
    return tag


def scalar_summary(tags, values, collections=None, name=None):
    """A summary of real numbers, one per tag: `tags` (strings) and `values` have one shape.

    Added to `collections` (default ``[GraphKeys.SUMMARIES]``). Running it fails with
    InvalidArgumentError when the shapes of `tags` and `values` differ.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.deprecated.scalar_summary("loss", tf.constant(1.0)).op.type
    'ScalarSummary'
    """
    with name_scope(name, "ScalarSummary", [tags, values]) as scope:
        tags = _string_tag(tags, "tags", "scalar_summary")
        values = convert_to_tensor(values, name="values")
        if not (values.dtype.is_floating or values.dtype.is_integer):
            raise TypeError(f"scalar_summary: values must be real numbers, got '{values.name}' "
                            f"of dtype {values.dtype.base_dtype.name}")
        val = make_tensor("ScalarSummary", [tags, values], name=scope)
    return _collect(val, collections, [GraphKeys.SUMMARIES])


def histogram_summary(tag, values, collections=None, name=None):
    """A histogram of the real `values` (any shape) under the string `tag`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.deprecated.histogram_summary("w", tf.constant([1.0, 2.0])).op.type
    'HistogramSummary'
    """
    with name_scope(name, "HistogramSummary", [tag, values]) as scope:
        tag = _string_tag(tag, "tag", "histogram_summary")
        values = convert_to_tensor(values, name="values")
        val = make_tensor("HistogramSummary", [tag, values], name=scope)
    return _collect(val, collections, [GraphKeys.SUMMARIES])


def image_summary(tag, tensor, max_images=3, collections=None, name=None):
    """PNG images of a ``[batch, height, width, channels]`` tensor, tagged ``tag/image/i``
    (``tag/image`` when `max_images` is 1); pixels are scaled as `tf.summary.image` does.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.deprecated.image_summary("x", tf.zeros([1, 2, 2, 3])).op.type
    'ImageSummary'
    """
    if int(max_images) < 1:
        raise ValueError(f"image_summary: max_images must be at least 1, got {max_images}")
    with name_scope(name, "ImageSummary", [tag, tensor]) as scope:
        tag = _string_tag(tag, "tag", "image_summary")
        tensor = convert_to_tensor(tensor)
        val = make_tensor("ImageSummary", [tag, tensor], {"max_images": int(max_images)},
                          name=scope)
    return _collect(val, collections, [GraphKeys.SUMMARIES])


def audio_summary(tag, tensor, sample_rate, max_outputs=3, collections=None, name=None):
    """WAV clips of a float ``[batch, frames]`` or ``[batch, frames, channels]`` tensor
    at `sample_rate` Hz, tagged ``tag/audio/i`` (``tag/audio`` when `max_outputs` is 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.deprecated.audio_summary("s", tf.zeros([1, 4]), 8000).op.type
    'AudioSummaryV2'
    """
    if int(max_outputs) < 1:
        raise ValueError(f"audio_summary: max_outputs must be at least 1, got {max_outputs}")
    with name_scope(name, "AudioSummary", [tag, tensor]) as scope:
        tag = _string_tag(tag, "tag", "audio_summary")
        tensor = convert_to_tensor(tensor)
        if tensor.dtype.base_dtype != _dtypes.float32:
            raise TypeError(f"audio_summary: the audio must be float32, got '{tensor.name}' "
                            f"of dtype {tensor.dtype.base_dtype.name}")
        rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32, name="sample_rate")
        val = make_tensor("AudioSummaryV2", [tag, tensor, rate],
                          {"max_outputs": int(max_outputs)}, name=scope)
    return _collect(val, collections, [GraphKeys.SUMMARIES])


def merge_summary(inputs, collections=None, name=None):
    """One summary holding the values of all `inputs` (serialized `Summary` strings).

    The op is named `name` inside a scope of the same name (TF 1.0's naming:
    ``mm/mm`` for ``name="mm"``, ``MergeSummary/MergeSummary`` by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.contrib.deprecated.scalar_summary("a", tf.constant(1.0))
    ...     tf.contrib.deprecated.merge_summary([a]).op.name
    'MergeSummary/MergeSummary'
    """
    inputs = [convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("merge_summary needs at least one summary tensor, got none")
    for t in inputs:
        if t.dtype.base_dtype != _dtypes.string:
            raise TypeError(f"merge_summary: inputs must be string tensors (serialized "
                            f"Summary protos); '{t.name}' has dtype {t.dtype.base_dtype.name}")
    with name_scope(name, "MergeSummary", inputs):
        val = make_tensor("MergeSummary", inputs, {"N": len(inputs)},
                          name=name or "MergeSummary")
    return _collect(val, collections, [])


def merge_all_summaries(key=GraphKeys.SUMMARIES):
    """`merge_summary` of every summary in collection `key`, or None when it is empty.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     tf.contrib.deprecated.merge_all_summaries() is None
    True
    """
    ops = get_collection(key)
    if not ops:
        return None
    return merge_summary(ops)
