"""Summary ops: `tf.summary.scalar`, `histogram`, `image`, `text`, `tensor_summary`,
`merge` and `merge_all`.

Each summary is a graph op whose output is a scalar `tf.string`: a serialized `Summary`
protobuf (see `flowgraph.summary.event_format`). The op types are declared in
`flowgraph/ops/summary_ops.py` and computed by the CPU kernels in
`flowgraph/backends/cpu/kernels_summary.py`. A summary op is added to the
``GraphKeys.SUMMARIES`` collection (or to `collections`). Its tag is its name under the
current name scope, uniquified like an op name: ``scalar("loss", x)`` inside
``name_scope("train")`` has the tag ``train/loss``, a second one ``train/loss_1``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import summary
>>> from flowgraph.summary.event_format import Summary
>>> with tf.Graph().as_default():
...     with tf.name_scope("train"):
...         s = summary.scalar("loss", tf.constant(0.5))
...     with tf.Session() as sess:
...         print(Summary.FromString(sess.run(s)).value[0])
Value(tag='train/loss', simple_value=0.5)
"""

from __future__ import annotations

import contextlib
import logging
import re

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.event_format import SummaryMetadata
from flowgraph.framework.graph import GraphKeys, get_collection, get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.ops import summary_ops as _summary_op_defs  # noqa: F401  (the op types)
from flowgraph.ops.op_util import make_tensor

__all__ = ["histogram", "image", "merge", "merge_all", "scalar", "tensor_summary", "text"]

logger = logging.getLogger("tensorflow")

# TensorFlow's realnumbertypes (ScalarSummary / HistogramSummary), bfloat16 included.
_REAL = frozenset((*_dtypes.FLOATS, *_dtypes.INTEGERS, _dtypes.bfloat16))
_IMAGE_DTYPES = frozenset((_dtypes.uint8, _dtypes.float16, _dtypes.float32, _dtypes.float64))


# -- tags and collections -------------------------------------------------------------------
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name: str | None) -> str | None:
    """Replace characters TensorBoard does not accept in tags by '_'; drop leading '/'."""
    if name is None:
        return None
    new = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new != name:
        logger.info("Summary name %s is illegal; using %s instead.", name, new)
    return new


@contextlib.contextmanager
def _summary_scope(name: str, family: str | None, values):
    """Yields (tag, scope): the tag is the uniquified scope name (prefixed by `family`)."""
    name, family = _clean_tag(name), _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    graph = get_default_graph()
    for v in values:
        if isinstance(v, Tensor):
            graph = v.graph
            break
    with graph.as_default(), graph.name_scope(base) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = f"{family}/{tag}"
        yield tag, scope


def _collect(value: Tensor, collections, default_collections) -> None:
    graph = value.graph
    for key in default_collections if collections is None else collections:
        graph.add_to_collection(key, value)


def _check_dtype(t: Tensor, allowed, what: str, param: str) -> None:
    if t.dtype.base_dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise TypeError(
            f"Value passed to parameter '{param}' of {what} has DataType "
            f"{t.dtype.base_dtype.name} not in list of allowed values: {names} "
            f"(tensor '{t.name}'). Cast it first (e.g. tf.cast(x, tf.float32))."
        )


# -- public functions -------------------------------------------------------------------------
def scalar(name: str, tensor, collections=None, family=None) -> Tensor:
    """A summary of one real number, shown by TensorBoard as a curve over steps.

    Parameters
    ----------
    name : str
        The tag (prefixed with the current name scope; made unique).
    tensor : Tensor
        A real numeric scalar (a non-scalar fails when the summary runs, as in
        TensorFlow).
    collections : list of str, optional
        Graph collections to add the summary to (default ``[GraphKeys.SUMMARIES]``).
    family : str, optional
        A tag prefix that groups summaries in one TensorBoard tab.

    Returns
    -------
    Tensor
        A scalar string: the serialized `Summary`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> summary.scalar("loss", tf.constant(1.0)).op.type
    'ScalarSummary'
    """
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor)
        _check_dtype(tensor, _REAL, "ScalarSummary", "values")
        tags = constant(tag, name="tags")
        val = make_tensor("ScalarSummary", [tags, tensor], name=scope)
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def histogram(name: str, values, collections=None, family=None) -> Tensor:
    """A histogram of the values of a real tensor (any shape), TensorBoard's default
    exponential buckets (limits ±1e-12 · 1.1^k, up to 1e20).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> summary.histogram("weights", tf.constant([1.0, 2.0])).op.type
    'HistogramSummary'
    """
    with _summary_scope(name, family, [values]) as (tag, scope):
        values = convert_to_tensor(values, name="values")
        _check_dtype(values, _REAL, "HistogramSummary", "values")
        tag_t = constant(tag, name="tag")
        val = make_tensor("HistogramSummary", [tag_t, values], name=scope)
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def image(name: str, tensor, max_outputs: int = 3, collections=None, family=None) -> Tensor:
    """PNG images of a 4-D ``[batch, height, width, channels]`` tensor (1, 3 or 4 channels).

    uint8 pixels are used as they are. Float pixels are scaled: by ``255 / max`` when no
    value is negative, else by ``127 / max(|min|, |max|)`` around 128; non-finite pixels
    become red. At most `max_outputs` images are kept; their tags are ``tag/image/0``,
    ``tag/image/1``, ... (``tag/image`` when `max_outputs` is 1).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> summary.image("input", tf.zeros([2, 5, 7, 3])).op.type
    'ImageSummary'
    """
    if int(max_outputs) < 1:
        raise ValueError(f"max_outputs must be at least 1, got {max_outputs}")
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor)
        _check_dtype(tensor, _IMAGE_DTYPES, "ImageSummary", "tensor")
        tag_t = constant(tag, name="tag")
        val = make_tensor("ImageSummary", [tag_t, tensor], {"max_images": int(max_outputs)},
                          name=scope)
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def tensor_summary(name: str, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None) -> Tensor:
    """A summary holding a whole tensor (as a `TensorProto`), with plugin metadata.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> summary.tensor_summary("t", tf.constant([1, 2])).op.type
    'TensorSummaryV2'
    """
    if summary_metadata is None:
        summary_metadata = SummaryMetadata()
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    serialized = summary_metadata.SerializeToString()
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor)
        tag_t = constant(tag, name="tag")
        meta_t = constant(serialized, name="serialized_summary_metadata")
        val = make_tensor("TensorSummaryV2", [tag_t, tensor, meta_t], name=scope)
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name: str, tensor, collections=None) -> Tensor:
    """A text summary (Markdown) of a string tensor, for TensorBoard's Text tab.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> summary.text("notes", tf.constant("**hello**")).op.type
    'TensorSummaryV2'
    """
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != _dtypes.string:
        raise ValueError(
            f"tf.summary.text expects a tensor of dtype string, got '{tensor.name}' of "
            f"dtype {tensor.dtype.base_dtype.name}; format it with tf.as_string first."
        )
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, collections=collections, summary_metadata=metadata)


def merge(inputs, collections=None, name=None) -> Tensor:
    """One summary holding the values of all `inputs` (string tensors of serialized
    `Summary` protos). Running it fails with InvalidArgumentError if two inputs use the
    same tag.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> a = summary.scalar("a", tf.constant(1.0))
    >>> b = summary.scalar("b", tf.constant(2.0))
    >>> summary.merge([a, b]).op.name
    'Merge/MergeSummary'
    """
    inputs = [convert_to_tensor(x) for x in inputs]
    if not inputs:
        raise ValueError("tf.summary.merge needs at least one summary tensor")
    for t in inputs:
        if t.dtype.base_dtype != _dtypes.string:
            raise TypeError(
                f"tf.summary.merge inputs must be string tensors (serialized Summary "
                f"protos); '{t.name}' has dtype {t.dtype.base_dtype.name}"
            )
    graph = inputs[0].graph
    with graph.as_default(), graph.name_scope(name or "Merge"):
        val = make_tensor("MergeSummary", inputs, {"N": len(inputs)},
                          name=name or "MergeSummary")
    _collect(val, collections, [])
    return val


def merge_all(key: str = GraphKeys.SUMMARIES, scope: str | None = None,
              name: str | None = None) -> Tensor | None:
    """Merge every summary in collection `key` (optionally filtered by `scope`), or
    return None when there is none.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph import summary
    >>> with tf.Graph().as_default():
    ...     print(summary.merge_all() is None)
    ...     _ = summary.scalar("x", tf.constant(1.0))
    ...     print(summary.merge_all().op.type)
    True
    MergeSummary
    """
    ops = get_collection(key, scope=scope)
    if not ops:
        return None
    return merge(ops, name=name)

