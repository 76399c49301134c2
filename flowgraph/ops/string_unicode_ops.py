"""Unicode strings: ``tf.strings.unicode_decode`` (code points), ``unicode_decode_with_
offsets``, ``unicode_split`` (one string per character), ``unicode_encode``,
``unicode_transcode`` and ``bytes_split``, with TensorFlow's op types
(``UnicodeDecode``, ``UnicodeDecodeWithOffsets``, ``UnicodeEncode``,
``UnicodeTranscode``; kernels in `flowgraph/backends/cpu/kernels_string_unicode.py`).

A scalar string decodes to a vector; a vector of strings to a `RaggedTensor` with one
row per string (higher ranks: one ragged level per string, the outer dimensions
uniform)::

    ["hé", "w"]  ->  values [104, 233, 119], row_splits [0, 2, 3]

Example
-------
>>> import flowgraph as tf
>>> cps = tf.strings.unicode_decode(["hé", "w"], "UTF-8")
>>> tf.Session().run(cps).to_list()
[[104, 233], [119]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_extra_ops import repeat
from flowgraph.ops.math_reduce import cumsum
from flowgraph.ops.op_util import make_op, make_tensor
from flowgraph.ops.ragged_tensor import RaggedTensor
from flowgraph.ops.string_ops import length as _length
from flowgraph.ops.string_ops import substr as _substr

__all__ = ["bytes_split", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
           "unicode_split", "unicode_split_with_offsets", "unicode_transcode"]

_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ERRORS = ("replace", "ignore", "strict")
_DECODE_ATTRS = {"input_encoding": None, "errors": "replace", "replacement_char": 65533,
                 "replace_control_characters": False, "Tsplits": _dtypes.int64}


def _splits_values_shapes(op, x):
    return [TensorShape([None if x.num_elements() is None else x.num_elements() + 1]),
            TensorShape([None])]


@register_op("UnicodeDecode", attrs=_DECODE_ATTRS, num_outputs=2,
             dtype_fn=lambda op: [_dtypes.int64, _dtypes.int32])
def _decode_shape(op, x):
    return _splits_values_shapes(op, x)


@register_op("UnicodeDecodeWithOffsets", attrs=_DECODE_ATTRS, num_outputs=3,
             dtype_fn=lambda op: [_dtypes.int64, _dtypes.int32, _dtypes.int64])
def _decode_offsets_shape(op, x):
    return [*_splits_values_shapes(op, x), TensorShape([None])]


@register_op("UnicodeEncode", attrs={"errors": "replace", "output_encoding": None,
                                     "replacement_char": 65533, "Tsplits": _dtypes.int64},
             dtype_fn=lambda op: [_dtypes.string])
def _encode_shape(op, values, splits):
    n = splits[0].value if splits.ndims else None
    return [TensorShape([None if n is None else n - 1])]


@register_op("UnicodeTranscode", attrs={"input_encoding": None, "output_encoding": None,
                                        "errors": "replace", "replacement_char": 65533,
                                        "replace_control_characters": False},
             dtype_fn=lambda op: [_dtypes.string])
def _transcode_shape(op, x):
    return [x]


not_differentiable("UnicodeDecode", "UnicodeDecodeWithOffsets", "UnicodeEncode",
                   "UnicodeTranscode")


def _check_input_encoding(encoding, what: str) -> str:
    # Any ICU converter name decodes (ISO-8859-1, windows-1252, UTF-16-LE, ...); an
    # unknown one fails when the kernel runs, as in TensorFlow.
    if not isinstance(encoding, str) or not encoding:
        raise ValueError(f"tf.strings.{what}: input_encoding must be a non-empty encoding "
                         f"name, got {encoding!r}")
    return encoding


def _check_encoding(encoding: str, what: str, arg: str = "output_encoding") -> str:
    if encoding not in _ENCODINGS:
        raise ValueError(f"tf.strings.{what}: {arg} must be one of {', '.join(_ENCODINGS)}, "
                         f"got {encoding!r}")
    return encoding


def _check_errors(errors: str, what: str) -> str:
    if errors not in _ERRORS:
        raise ValueError(f"tf.strings.{what}: errors must be 'replace', 'ignore' or 'strict', "
                         f"got {errors!r}")
    return errors


def _strings(x, what: str):
    t = convert_to_tensor(x, dtype=_dtypes.string, name="input")
    if t.shape.ndims is None:
        raise ValueError(f"tf.strings.{what}: the input's rank must be known")
    return t


def _nest(flat, splits, shape: TensorShape, what: str):
    """The decoded values of strings of `shape`: a vector for a scalar, else ragged."""
    if shape.ndims == 0:
        return flat
    rows = RaggedTensor.from_row_splits(flat, splits, validate=False)
    dims = shape.as_list()
    if any(d is None for d in dims[1:]):
        raise ValueError(f"tf.strings.{what}: all but the first dimension of the input must "
                         f"be known, got shape {shape}")
    for d in reversed(dims[1:]):
        nrows = _m.cast(_a.shape(rows.row_splits)[0] - 1, _dtypes.int64)
        outer = _a.range(_m.cast(0, _dtypes.int64), nrows + 1, d)
        rows = RaggedTensor.from_row_splits(rows, outer, validate=False)
    return rows


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters,
            with_offsets: bool, what: str):
    x = _strings(input, what)
    attrs = {"input_encoding": _check_input_encoding(input_encoding, what),
             "errors": _check_errors(errors, what),
             "replacement_char": int(replacement_char),
             "replace_control_characters": bool(replace_control_characters)}
    op_type = "UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode"
    op = make_op(op_type, [x], attrs, name=op_type)
    return x, op.outputs


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,
                   replace_control_characters=False, name=None):
    """The Unicode code points (int32) of each string: a vector for a scalar string, a
    `RaggedTensor` with one row per string otherwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.unicode_decode("añ", "UTF-8")).tolist()
    [97, 241]
    """
    with name_scope(name, "UnicodeDecode", [input]):
        x, (splits, values) = _decode(input, input_encoding, errors, replacement_char,
                                      replace_control_characters, False, "unicode_decode")
        return _nest(values, splits, x.shape, "unicode_decode")


def unicode_decode_with_offsets(input, input_encoding, errors="replace",
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """`unicode_decode` and, in the same structure, the byte offset (int64) where each
    character starts.

    Example
    -------
    >>> import flowgraph as tf
    >>> cps, offs = tf.strings.unicode_decode_with_offsets("añb", "UTF-8")
    >>> tf.Session().run(offs).tolist()
    [0, 1, 3]
    """
    with name_scope(name, "UnicodeDecodeWithOffsets", [input]):
        x, (splits, values, offsets) = _decode(input, input_encoding, errors,
                                               replacement_char, replace_control_characters,
                                               True, "unicode_decode_with_offsets")
        return (_nest(values, splits, x.shape, "unicode_decode_with_offsets"),
                _nest(offsets, splits, x.shape, "unicode_decode_with_offsets"))


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,
                  name=None):
    """Each string cut into its characters (each one a string in `input_encoding`): a
    vector for a scalar string, a `RaggedTensor` with one row per string otherwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.unicode_split("añ", "UTF-8")).tolist()
    [b'a', b'\\xc3\\xb1']
    """
    _check_encoding(input_encoding, "unicode_split", "input_encoding")
    with name_scope(name, "UnicodeSplit", [input]):
        x, (splits, values) = _decode(input, input_encoding, errors, replacement_char,
                                      False, False, "unicode_split")
        # Each character re-encoded on its own (an invalid sequence becomes the
        # replacement character, as in TensorFlow).
        each = _a.range(_m.cast(_a.size(values), _dtypes.int64) + 1)
        pieces = make_tensor("UnicodeEncode", [values, each], {
            "errors": "replace", "output_encoding": input_encoding,
            "replacement_char": int(replacement_char)}, name="UnicodeEncode")
        return _nest(pieces, splits, x.shape, "unicode_split")


def unicode_split_with_offsets(input, input_encoding, errors="replace",
                               replacement_char=65533, name=None):
    """`unicode_split` and, in the same structure, the byte offset (int64) where each
    character starts.

    Example
    -------
    >>> import flowgraph as tf
    >>> chars, offs = tf.strings.unicode_split_with_offsets("añb", "UTF-8")
    >>> tf.Session().run(offs).tolist()
    [0, 1, 3]
    """
    with name_scope(name, "UnicodeSplitWithOffsets", [input]):
        what = "unicode_split_with_offsets"
        _check_encoding(input_encoding, what, "input_encoding")
        x, (splits, values, offsets) = _decode(input, input_encoding, errors,
                                               replacement_char, False, True, what)
        each = _a.range(_m.cast(_a.size(values), _dtypes.int64) + 1)
        pieces = make_tensor("UnicodeEncode", [values, each], {
            "errors": "replace", "output_encoding": input_encoding,
            "replacement_char": int(replacement_char)}, name="UnicodeEncode")
        return (_nest(pieces, splits, x.shape, what), _nest(offsets, splits, x.shape, what))


def bytes_split(input, name=None):
    """Each string cut into single bytes: a vector for a scalar string, a `RaggedTensor`
    with one row per string otherwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.bytes_split(["ab", "c"])).to_list()
    [[b'a', b'b'], [b'c']]
    """
    with name_scope(name, "BytesSplit", [input]):
        x = _strings(input, "bytes_split")
        flat = _a.reshape(x, [-1])
        lengths = _m.cast(_length(flat), _dtypes.int64)
        splits = _a.concat([_a.zeros([1], _dtypes.int64), cumsum(lengths)], 0)
        rows = repeat(_a.range(_a.shape(flat, out_type=_dtypes.int64)[0]), lengths)
        pos = _a.range(splits[-1]) - _a.gather(splits, rows)
        pieces = _substr(_a.gather(flat, rows), _m.cast(pos, _dtypes.int32), 1)
        return _nest(pieces, splits, x.shape, "bytes_split")


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,
                   name=None):
    """Code points back to strings: each row of `input` (an int32 `RaggedTensor`, or a
    dense tensor of rank >= 1, its innermost dimension a row) becomes one string.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.unicode_encode([104, 233], "UTF-8"))
    b'h\\xc3\\xa9'
    """
    with name_scope(name, "UnicodeEncode", [input]):
        attrs = {"errors": _check_errors(errors, "unicode_encode"),
                 "output_encoding": _check_encoding(output_encoding, "unicode_encode",
                                                    "output_encoding"),
                 "replacement_char": int(replacement_char)}
        if isinstance(input, RaggedTensor):
            if input.ragged_rank != 1:
                raise ValueError("tf.strings.unicode_encode: only ragged rank 1 is supported")
            values = _m.cast(input.values, _dtypes.int32)
            splits = _m.cast(input.row_splits, _dtypes.int64)
            return make_tensor("UnicodeEncode", [values, splits], attrs, name="UnicodeEncode")
        x = convert_to_tensor(input, name="input")
        if not x.dtype.is_integer:
            raise TypeError(f"tf.strings.unicode_encode: input must hold int32 code points, "
                            f"got {x.dtype.base_dtype.name}")
        rank = x.shape.ndims
        if rank is None or rank == 0:
            raise ValueError(f"tf.strings.unicode_encode: input must have a known rank >= 1, "
                             f"got shape {x.shape}")
        width = _a.shape(x, out_type=_dtypes.int64)[-1]
        rows = _m.cast(_a.size(x, out_type=_dtypes.int64) // _m.maximum(width, 1),
                       _dtypes.int64)
        splits = _a.range(_m.cast(0, _dtypes.int64), rows + 1) * width
        out = make_tensor("UnicodeEncode", [_m.cast(_a.reshape(x, [-1]), _dtypes.int32),
                                            splits], attrs, name="UnicodeEncode")
        return _a.reshape(out, _a.shape(x)[:-1])


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Each string re-encoded from `input_encoding` to `output_encoding`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.unicode_transcode(["é"], "UTF-8", "UTF-16-BE")).tolist()
    [b'\\x00\\xe9']
    """
    with name_scope(name, "UnicodeTranscode", [input]):
        x = convert_to_tensor(input, dtype=_dtypes.string, name="input")
        attrs = {"input_encoding": _check_input_encoding(input_encoding, "unicode_transcode"),
                 "output_encoding": _check_encoding(output_encoding, "unicode_transcode",
                                                    "output_encoding"),
                 "errors": _check_errors(errors, "unicode_transcode"),
                 "replacement_char": int(replacement_char),
                 "replace_control_characters": bool(replace_control_characters)}
        return make_tensor("UnicodeTranscode", [x], attrs, name="UnicodeTranscode")
