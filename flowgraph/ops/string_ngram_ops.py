"""Word n-grams and string segment joins: ``tf.strings.ngrams`` (TensorFlow's
``StringNGrams`` op) and ``tf.strings.unsorted_segment_join`` (``UnsortedSegmentJoin``);
kernels in `flowgraph/backends/cpu/kernels_string_ngrams.py`.

``StringNGrams`` works on one ragged level: flat tokens plus row splits. Each row is
padded with ``pad_width`` copies of ``left_pad`` / ``right_pad`` (``pad_width = -1``
means ``width - 1``, and it never exceeds ``width - 1``), then every window of each
width becomes one string joined by ``separator``::

    row [a, b, c], widths (2,), pads (L, R), pad_width 1
      padded   L a b c R
      n-grams  "L a", "a b", "b c", "c R"

With ``preserve_short_sequences`` a non-empty row too short for any window gives one
n-gram of its whole padded self.

Example
-------
>>> import flowgraph as tf
>>> rt = tf.ragged.constant([["a", "b", "c"], ["d"]])
>>> tf.Session().run(tf.strings.ngrams(rt, 2)).to_list()
[[b'a b', b'b c'], []]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.op_util import make_op, make_tensor, op_scope
from flowgraph.ops.ragged_tensor import RaggedTensor

__all__ = ["ngrams", "unsorted_segment_join"]


@register_op("StringNGrams", attrs={"separator": " ", "ngram_widths": [], "left_pad": "",
                                    "right_pad": "", "pad_width": 0,
                                    "preserve_short_sequences": False,
                                    "Tsplits": _dtypes.int64},
             num_outputs=2, dtype_fn=lambda op: [_dtypes.string, op.inputs[1].dtype])
def _ngrams_shape(op, data, splits):
    return [TensorShape([None]), splits]


@register_op("UnsortedSegmentJoin", attrs={"separator": "", "Tindices": _dtypes.int32,
                                           "Tnumsegments": _dtypes.int32},
             dtype_fn=lambda op: [_dtypes.string])
def _segment_join_shape(op, inputs, segment_ids, num_segments):
    from flowgraph.framework.constant_op import constant_value

    n = constant_value(op.inputs[2])
    if inputs.ndims is None or segment_ids.ndims is None:
        return [TensorShape(None)]
    head = [None if n is None else int(n)]
    return [TensorShape(head + inputs.as_list()[segment_ids.ndims:])]


not_differentiable("StringNGrams", "UnsortedSegmentJoin")


def _pads(pad_values):
    if pad_values is None:
        return "", ""
    pair = pad_values if isinstance(pad_values, (list, tuple)) else (pad_values, pad_values)
    if len(pair) < 2 or not all(isinstance(p, (str, bytes)) for p in pair[:2]):
        raise TypeError("tf.strings.ngrams: pad_values must be a string, a tuple of two "
                        f"strings (left, right) or None, got {pad_values!r}")
    return pair[0], pair[1]


def _ngrams_rank1(rt, widths, separator, left, right, pad_width, preserve):
    op = make_op("StringNGrams", [rt.values, rt.row_splits], {
        "separator": separator, "ngram_widths": widths, "left_pad": left,
        "right_pad": right, "pad_width": pad_width,
        "preserve_short_sequences": bool(preserve),
        "Tsplits": rt.row_splits.dtype.base_dtype}, name="StringNGrams")
    return RaggedTensor.from_row_splits(op.outputs[0], op.outputs[1], validate=False)


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of the innermost dimension of `data` (strings), joined by `separator`.

    `ngram_width` is an int or a list of ints (each row gives its width-1 n-grams, then
    its width-2 ones, ...). `pad_values` (a string, or ``(left, right)``) pads each row
    with `padding_width` copies on each side (default ``width - 1``). A dense input of
    rank > 1 gives a dense result (``shape[:-1] + [n-grams per row]``), a vector gives a
    vector, a `RaggedTensor` a `RaggedTensor`.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.strings.ngrams(["a", "b", "c"], 2, pad_values="#", padding_width=1)
    >>> tf.Session().run(out).tolist()
    [b'# a', b'a b', b'b c', b'c #']
    """
    left, right = _pads(pad_values)
    if padding_width is not None and padding_width < 1:
        raise ValueError(f"tf.strings.ngrams: padding_width must be greater than 0, got "
                         f"{padding_width}")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if any(w < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    if pad_values is None:
        pad_width = 0
    else:
        pad_width = -1 if padding_width is None else int(padding_width)
    args = ([int(w) for w in widths], separator, left, right, pad_width,
            preserve_short_sequences)
    with name_scope(name, "StringNGrams", [data]):
        return _ngrams_any(data, args)


def _ngrams_any(data, args):
    if isinstance(data, RaggedTensor):
        if isinstance(data.values, RaggedTensor):
            return data.with_values(_ngrams_any(data.values, args))
        return _ngrams_rank1(data, *args)
    data = convert_to_tensor(data, dtype=_dtypes.string, name="data")
    rank = data.shape.ndims
    if rank is None:
        raise ValueError("tf.strings.ngrams: the rank of data must be known")
    if rank == 0:
        raise ValueError("Data must have rank>0")
    if rank == 1:
        splits = _a.stack([_m.cast(0, _dtypes.int64), _m.cast(_a.size(data), _dtypes.int64)])
        return _ngrams_rank1(RaggedTensor.from_row_splits(data, splits, validate=False),
                             *args).values
    rows = _a.reshape(data, [-1, _a.shape(data)[-1]])
    width = _m.cast(_a.shape(rows)[1], _dtypes.int64)
    count = _m.cast(_a.shape(rows)[0], _dtypes.int64)
    splits = _a.range(_m.cast(0, _dtypes.int64), count * width + 1, width)
    flat = _a.reshape(rows, [-1])
    out = _ngrams_rank1(RaggedTensor.from_row_splits(flat, splits, validate=False), *args)
    return _a.reshape(out.values, _a.concat([_a.shape(data)[:-1], [-1]], 0))


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Join the strings of `inputs` that share a segment id, in input order, with
    `separator`; segment ``i`` of the result is ``""`` where no id equals ``i``.

    `segment_ids` indexes the leading dimensions of `inputs`; the result has shape
    ``[num_segments] + inputs.shape[segment_ids.ndim:]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 2, separator="-")
    >>> tf.Session().run(out).tolist()
    [b'b', b'a-c']
    """
    with op_scope(name, "UnsortedSegmentJoin", [inputs, segment_ids, num_segments]) as scope:
        inputs = convert_to_tensor(inputs, dtype=_dtypes.string, name="inputs")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        n = convert_to_tensor(num_segments, name="num_segments")
        for t, what in ((ids, "segment_ids"), (n, "num_segments")):
            if t.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
                raise TypeError(f"Value passed to parameter '{what}' of UnsortedSegmentJoin "
                                f"has DataType {t.dtype.base_dtype.name} not in list of "
                                "allowed values: int32, int64")
        return make_tensor("UnsortedSegmentJoin", [inputs, ids, n], {
            "separator": separator, "Tindices": ids.dtype.base_dtype,
            "Tnumsegments": n.dtype.base_dtype}, name=scope)
