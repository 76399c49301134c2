"""More string and byte ops with TensorFlow 1.x's op types: ``StaticRegexReplace``,
``RegexFullMatch``, ``StringStrip``, ``StringLower``/``StringUpper``, ``ReduceJoin``,
``EncodeBase64``/``DecodeBase64`` (web-safe alphabet), ``DecodeRaw``,
``DecodeCompressed``, ``ReadFile``/``WriteFile`` and ``SerializeTensor``/``ParseTensor``
(TensorProto bytes). None is differentiable.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.regex_replace(["a1b22"], "[0-9]+", "#")))
[b'a#b#']
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = ["decode_base64", "decode_compressed", "decode_raw", "encode_base64",
           "parse_tensor", "read_file", "reduce_join", "regex_full_match", "regex_replace",
           "serialize_tensor", "string_lower", "string_strip", "string_upper", "write_file"]

_STRING = fixed_dtype(_dtypes.string)


def _same(op, x, *rest):
    return [x]


register_op("StaticRegexReplace", attrs={"pattern": "", "rewrite": "", "replace_global": True},
            dtype_fn=_STRING)(_same)
register_op("StaticRegexFullMatch", attrs={"pattern": ""},
            dtype_fn=fixed_dtype(_dtypes.bool))(_same)


def _regex_shape(op, x, pattern, *rewrite):
    # TensorFlow's RegexFullMatch / RegexReplace: the pattern (and rewrite) are scalars
    # read when the op runs.
    for what, s in zip(("pattern", "rewrite"), (pattern, *rewrite)):
        if s.ndims not in (None, 0):
            raise op.shape_error(f"{what} must be a scalar string, got shape {s}")
    return [x]


register_op("RegexFullMatch", dtype_fn=fixed_dtype(_dtypes.bool))(_regex_shape)
register_op("RegexReplace", attrs={"replace_global": True}, dtype_fn=_STRING)(_regex_shape)
register_op("StringStrip", dtype_fn=_STRING)(_same)
register_op("StringLower", attrs={"encoding": ""}, dtype_fn=_STRING)(_same)
register_op("StringUpper", attrs={"encoding": ""}, dtype_fn=_STRING)(_same)
register_op("EncodeBase64", attrs={"pad": False}, dtype_fn=_STRING)(_same)
register_op("DecodeBase64", dtype_fn=_STRING)(_same)
register_op("DecodeCompressed", attrs={"compression_type": ""}, dtype_fn=_STRING)(_same)


@register_op("ReduceJoin", attrs={"keep_dims": False, "separator": "", "axes": None},
             dtype_fn=_STRING)
def _reduce_join_shape(op, x, axes):
    axes_attr = op.attrs["axes"]
    if x.ndims is None or axes_attr is None:
        return [TensorShape(None)]
    axes_norm = {a % x.ndims for a in axes_attr} if x.ndims else set()
    dims = [1 if i in axes_norm else d for i, d in enumerate(x.dims)
            ] if op.attrs["keep_dims"] else [d for i, d in enumerate(x.dims)
                                             if i not in axes_norm]
    return [TensorShape(dims)]


@register_op("DecodeRaw", attrs={"out_type": None, "little_endian": True},
             dtype_fn=attr_dtype("out_type"))
def _decode_raw_shape(op, x):
    return [TensorShape(None) if x.ndims is None else TensorShape([*x.dims, None])]


@register_op("ReadFile", dtype_fn=_STRING)
def _read_file_shape(op, filename):
    return [TensorShape([])]


@register_op("WriteFile", num_outputs=0, stateful=True)
def _write_file_shape(op, filename, contents):
    return []


@register_op("SerializeTensor", dtype_fn=_STRING)
def _serialize_tensor_shape(op, x):
    return [TensorShape([])]


@register_op("ParseTensor", attrs={"out_type": None}, dtype_fn=attr_dtype("out_type"))
def _parse_tensor_shape(op, x):
    return [TensorShape(None)]


not_differentiable("StaticRegexReplace", "RegexFullMatch", "StaticRegexFullMatch",
                   "RegexReplace", "StringStrip", "StringLower",
                   "StringUpper", "EncodeBase64", "DecodeBase64", "DecodeCompressed",
                   "ReduceJoin", "DecodeRaw", "ReadFile", "WriteFile", "SerializeTensor",
                   "ParseTensor")


def _strings(x, what):
    t = convert_to_tensor(x, name=what)
    if t.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"{what} must be a string tensor, got {t.dtype.base_dtype.name}")
    return t


def _python_str(value) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value if isinstance(value, str) else None


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replace matches of the RE2-style regular expression `pattern` in each string with
    `rewrite` (``\\1`` refers to a group); only the first match without
    `replace_global`. Python-string `pattern` and `rewrite` build
    ``StaticRegexReplace``, tensors ``RegexReplace`` (as TensorFlow does).

    Example
    -------
    >>> import flowgraph as tf
    >>> out = tf.strings.regex_replace(["a1b22"], tf.constant("[0-9]+"), "#")
    >>> out.op.type, tf.Session().run(out).tolist()
    ('RegexReplace', [b'a#b#'])
    """
    static_pattern, static_rewrite = _python_str(pattern), _python_str(rewrite)
    if static_pattern is not None and static_rewrite is not None:
        with op_scope(name, "StaticRegexReplace", [input]) as scope:
            return make_tensor("StaticRegexReplace", [_strings(input, "input")], {
                "pattern": static_pattern, "rewrite": static_rewrite,
                "replace_global": bool(replace_global)}, name=scope)
    with op_scope(name, "RegexReplace", [input, pattern, rewrite]) as scope:
        return make_tensor("RegexReplace", [
            _strings(input, "input"), _strings(pattern, "pattern"),
            _strings(rewrite, "rewrite")], {"replace_global": bool(replace_global)},
            name=scope)


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches `pattern`: ``StaticRegexFullMatch`` for a
    Python-string pattern, ``RegexFullMatch`` for a tensor (as TensorFlow does).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.strings.regex_full_match(["ab1", "ab"], "[a-z]+")).tolist()
    [False, True]
    """
    static = _python_str(pattern)
    if static is not None:
        with op_scope(name, "StaticRegexFullMatch", [input]) as scope:
            return make_tensor("StaticRegexFullMatch", [_strings(input, "input")],
                               {"pattern": static}, name=scope)
    with op_scope(name, "RegexFullMatch", [input, pattern]) as scope:
        return make_tensor("RegexFullMatch", [_strings(input, "input"),
                                              _strings(pattern, "pattern")], name=scope)


def string_strip(input, name=None):
    """Each string without leading and trailing whitespace.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.string_strip(["  a b \\n"])).tolist()
    [b'a b']
    """
    return make_tensor("StringStrip", [_strings(input, "input")], name=name or "StringStrip")


def string_lower(input, encoding="", name=None):
    """Each string in lower case (ASCII, or Unicode with ``encoding="utf-8"``)."""
    return make_tensor("StringLower", [_strings(input, "input")], {"encoding": encoding},
                       name=name or "StringLower")


def string_upper(input, encoding="", name=None):
    """Each string in upper case (ASCII, or Unicode with ``encoding="utf-8"``)."""
    return make_tensor("StringUpper", [_strings(input, "input")], {"encoding": encoding},
                       name=name or "StringUpper")


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Join strings along `axis` (all axes when None) with `separator`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-"))
    array([b'a-b', b'c-d'], dtype=object)
    """
    axis = reduction_indices if axis is None else axis
    keep = keep_dims if keepdims is None else keepdims
    # TensorFlow's wrapper: a "ReduceJoin" scope around the generated op (named `name`,
    # or "ReduceJoin" again); without an axis, every axis, last first, as one constant
    with name_scope(None, "ReduceJoin", [inputs]):
        x = _strings(inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs),
                     "inputs")
        if axis is None:
            if x.shape.ndims is None:
                raise ValueError("tf.reduce_join: axis=None needs a known rank")
            axes = list(range(x.shape.ndims - 1, -1, -1))
            axes_t = convert_to_tensor(axes, dtype=_dtypes.int32)
        else:
            axes = [int(a) for a in (axis if isinstance(axis, list | tuple) else [axis])]
            axes_t = None
        with op_scope(name, "ReduceJoin", [x, axes_t if axes_t is not None else axis]) as scope:
            if axes_t is None:
                axes_t = convert_to_tensor(axes, dtype=_dtypes.int32, name="reduction_indices")
            return make_tensor("ReduceJoin", [x, axes_t], {"keep_dims": bool(keep),
                                                           "separator": str(separator),
                                                           "axes": tuple(axes)}, name=scope)


def encode_base64(input, pad=False, name=None):
    """The web-safe base64 (``-`` and ``_``) of each string, padded with ``=`` only with
    `pad`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.encode_base64(["hi?"])).tolist()
    [b'aGk_']
    """
    return make_tensor("EncodeBase64", [_strings(input, "input")], {"pad": bool(pad)},
                       name=name or "EncodeBase64")


def decode_base64(input, name=None):
    """The bytes of each web-safe base64 string (padding optional).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.decode_base64(["aGk_"])).tolist()
    [b'hi?']
    """
    return make_tensor("DecodeBase64", [_strings(input, "input")], name=name or "DecodeBase64")


_DECODE_RAW_TYPES = ("float16", "float32", "float64", "int32", "uint16", "uint8", "int16",
                     "int8", "int64", "complex64", "complex128", "bool", "bfloat16")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """Reinterpret the bytes of each string as a vector of `out_type` (every string must
    have the same length, a multiple of the type's size): shape ``input.shape + [n]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.decode_raw([b"\\x01\\x00\\x02\\x00"], tf.int16)).tolist()
    [[1, 2]]
    """
    x = _strings(bytes if input_bytes is None else input_bytes, "input_bytes")
    if out_type is None:
        raise TypeError("tf.decode_raw: out_type is required")
    out_type = _dtypes.as_dtype(out_type)
    if out_type.name not in _DECODE_RAW_TYPES:
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list "
            f"of allowed values: {', '.join(_DECODE_RAW_TYPES)} (tf.decode_raw reads "
            "fixed-size numbers; a string needs no decoding)")
    return make_tensor("DecodeRaw", [x], {"out_type": _dtypes.as_dtype(out_type),
                                          "little_endian": bool(little_endian)},
                       name=name or "DecodeRaw")


def decode_compressed(bytes, compression_type="", name=None):
    """Each string decompressed: ``"ZLIB"``, ``"GZIP"`` or ``""`` (unchanged).

    Example
    -------
    >>> import gzip
    >>> import flowgraph as tf
    >>> packed = gzip.compress(b"hello")
    >>> tf.Session().run(tf.decode_compressed([packed], "GZIP")).tolist()
    [b'hello']
    """
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"tf.decode_compressed: compression_type must be '', 'ZLIB' or "
                         f"'GZIP', got {compression_type!r}")
    return make_tensor("DecodeCompressed", [_strings(bytes, "bytes")],
                       {"compression_type": compression_type},
                       name=name or "DecodeCompressed")


def read_file(filename, name=None):
    """The whole content of the file `filename` (a scalar string) when the op runs.

    Example
    -------
    >>> import os, tempfile
    >>> import flowgraph as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "f.txt")
    >>> with tf.Session() as sess:
    ...     sess.run(tf.write_file(path, "data"))
    ...     print(sess.run(tf.read_file(path)))
    b'data'
    """
    return make_tensor("ReadFile", [_strings(filename, "filename")], name=name or "ReadFile")


def write_file(filename, contents, name=None):
    """An op writing the scalar string `contents` to the file `filename` (created or
    replaced, directories included)."""
    return make_op("WriteFile", [_strings(filename, "filename"), _strings(contents,
                                                                           "contents")],
                   name=name or "WriteFile")


def serialize_tensor(tensor, name=None):
    """A scalar string: `tensor` as a serialized TensorFlow ``TensorProto``.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.serialize_tensor(tf.constant([[1, 2]]))
    >>> tf.Session().run(tf.parse_tensor(s, tf.int32)).tolist()
    [[1, 2]]
    """
    return make_tensor("SerializeTensor", [convert_to_tensor(tensor, name="tensor")],
                       name=name or "SerializeTensor")


def parse_tensor(serialized, out_type, name=None):
    """The tensor of a serialized ``TensorProto`` (`serialize_tensor`'s output); its dtype
    must be `out_type`."""
    return make_tensor("ParseTensor", [_strings(serialized, "serialized")],
                       {"out_type": _dtypes.as_dtype(out_type)}, name=name or "ParseTensor")
