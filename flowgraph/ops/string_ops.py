"""String ops: splitting into a `tf.SparseTensor`, parsing numbers, joining, substrings
and byte lengths (``tf.string_split``, ``tf.strings.*``), plus TF1's ``tf.arg_max`` /
``tf.arg_min`` names.

Splitting follows TensorFlow's two rules. ``tf.string_split`` (``StringSplit``) treats
each character of `delimiter` as a separator (an empty delimiter splits into bytes) and
drops empty tokens when ``skip_empty``. ``tf.strings.split`` (``StringSplitV2``) splits
on the whole `sep` string as Python's ``bytes.split`` does (``sep=None``: runs of
whitespace), keeping empty tokens. Both return a SparseTensor with indices ``[row, i]``
and dense shape ``[rows, longest]``. Kernels: `flowgraph/backends/cpu/kernels_string.py`.

Example
-------
>>> import flowgraph as tf
>>> sp = tf.string_split(["a b", "c"])
>>> with tf.Session() as sess:
...     print(sess.run(sp.values), sess.run(sp.dense_shape))
[b'a' b'b' b'c'] [2 2]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.math_reduce import argmax, argmin
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = [
    "arg_max",
    "arg_min",
    "string_join",
    "string_split",
    "string_to_number",
    "substr",
]

_NUMBER_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64)


# -- registrations ---------------------------------------------------------------------
def _split_shape(op, source, sep):
    if source.ndims not in (None, 1):
        raise op.shape_error(f"input must be a vector of strings, got shape {source}")
    if sep.ndims not in (None, 0):
        raise op.shape_error(f"the delimiter must be a scalar, got shape {sep}")
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_SPLIT_DTYPES = fixed_dtype(_dtypes.int64, _dtypes.string, _dtypes.int64)
register_op("StringSplit", attrs={"skip_empty": True}, num_outputs=3,
            dtype_fn=_SPLIT_DTYPES)(_split_shape)
register_op("StringSplitV2", attrs={"maxsplit": -1}, num_outputs=3,
            dtype_fn=_SPLIT_DTYPES)(_split_shape)


@register_op("StringToNumber", attrs={"out_type": _dtypes.float32},
             dtype_fn=attr_dtype("out_type"))
def _to_number_shape(op, x):
    return [x]


def _broadcast_shape(op, *shapes):
    out = TensorShape([])
    for s in shapes:
        if s.ndims == 0:
            continue
        if out.ndims == 0:
            out = s
        elif not out.is_compatible_with(s):
            raise op.shape_error(f"inputs must be scalars or of one shape, got {out} and {s}")
        else:
            out = out.merge_with(s)
    return [out]


register_op("StringJoin", attrs={"separator": ""},
            dtype_fn=fixed_dtype(_dtypes.string))(_broadcast_shape)
register_op("Substr", attrs={"unit": "BYTE"},
            dtype_fn=fixed_dtype(_dtypes.string))(_broadcast_shape)


@register_op("StringLength", attrs={"unit": "BYTE"}, dtype_fn=fixed_dtype(_dtypes.int32))
def _length_shape(op, x):
    return [x]


not_differentiable("StringSplit", "StringSplitV2", "StringToNumber", "StringJoin", "Substr",
                   "StringLength")


# -- wrappers ----------------------------------------------------------------------------
def _strings(x, what: str):
    if isinstance(x, Tensor) and x.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"{what}: input must be a string tensor, got {x.dtype.base_dtype.name}"
                        f" ({x.name}); convert numbers with tf.strings.as_string first.")
    t = convert_to_tensor(x, dtype=_dtypes.string, name="input")
    if t.dtype.base_dtype != _dtypes.string:
        raise TypeError(f"{what}: input must be a string tensor, got {t.dtype.name}")
    return t


def _sparse(op) -> SparseTensor:
    return SparseTensor(*op.outputs)


def string_split(source, sep=None, skip_empty: bool = True, delimiter=None,
                 result_type: str = "SparseTensor", name=None) -> SparseTensor:
    """Split each string of the vector `source` at any character of `delimiter`.

    Parameters
    ----------
    source : 1-D string Tensor
    sep : str
        Each character separates tokens (default ``" "``); ``""`` splits into single
        bytes. `delimiter` is its old name.
    skip_empty : bool
        Drop empty tokens.

    Returns
    -------
    SparseTensor of strings, dense shape ``[len(source), longest]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.string_split(["a,b;c"], delimiter=",;")
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [b'a' b'b' b'c']
    """
    delimiter = _renamed_argument("sep", sep, "delimiter", delimiter)
    if delimiter is None:
        delimiter = " "
    if result_type != "SparseTensor":
        raise ValueError(f"string_split: flowgraph has no RaggedTensor; result_type must be "
                         f"'SparseTensor', got {result_type!r}")
    with name_scope(name, "StringSplit", [source]):
        # (TensorFlow converts the delimiter, then the source, without names: "Const")
        delim = convert_to_tensor(delimiter, dtype=_dtypes.string)
        src = _strings(source if isinstance(source, Tensor) else
                       convert_to_tensor(source, dtype=_dtypes.string), "string_split")
        return _sparse(make_op("StringSplit", [src, delim], {"skip_empty": bool(skip_empty)},
                               name="StringSplit"))


def split(input=None, sep=None, maxsplit: int = -1, result_type: str = "SparseTensor",
          source=None, name=None) -> SparseTensor:
    """Split each string of a vector at `sep` (``tf.strings.split``, TF1 version: a
    SparseTensor). ``sep=None`` splits at runs of whitespace and drops empty tokens; a
    given `sep` keeps them, as Python's ``str.split``. At most `maxsplit` splits per
    string when ``maxsplit >= 0``.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.strings.split(["a--b"], sep="-")
    >>> with tf.Session() as sess:
    ...     print(sess.run(sp.values))
    [b'a' b'' b'b']
    """
    if input is None:
        input = source
    if input is None:
        raise ValueError("strings.split: give `input`")
    if result_type != "SparseTensor":
        raise ValueError(f"strings.split: flowgraph has no RaggedTensor; result_type must be "
                         f"'SparseTensor', got {result_type!r}")
    if sep == "":
        raise ValueError("strings.split: sep must not be empty (use None for whitespace)")
    with name_scope(name, "StringSplit", [input]):
        src = _strings(input, "strings.split")
        delim = convert_to_tensor(sep or "", dtype=_dtypes.string)
        return _sparse(make_op("StringSplitV2", [src, delim], {"maxsplit": int(maxsplit)},
                               name="StringSplitV2"))


def _renamed_argument(new_name, new_value, old_name, old_value):
    """The value of an argument TF renamed, given under either name (not both)."""
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new_value if new_value is not None else old_value


def string_to_number(string_tensor=None, out_type=_dtypes.float32, name=None, input=None):
    """Parse each string as a number of `out_type` (float32, float64, int32 or int64); a
    string that is not one is an `InvalidArgumentError`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.strings.to_number(["1.5", "-2"])
    >>> with tf.Session() as sess:
    ...     print(sess.run(x))
    [ 1.5 -2. ]
    """
    string_tensor = _renamed_argument("input", input, "string_tensor", string_tensor)
    out_type = _dtypes.as_dtype(out_type).base_dtype
    if out_type not in _NUMBER_TYPES:
        raise TypeError(f"string_to_number: out_type must be one of "
                        f"{[d.name for d in _NUMBER_TYPES]}, got {out_type.name}")
    x = _strings(string_tensor, "string_to_number")
    return make_tensor("StringToNumber", [x], {"out_type": out_type},
                       name=name or "StringToNumber")


# TF 2.15's compat.v1 ``tf.strings.to_number`` is ``tf.string_to_number`` itself.
to_number = string_to_number


def string_join(inputs, separator: str = "", name=None):
    """Join strings elementwise: ``inputs[0] + separator + inputs[1] + ...``; scalars are
    broadcast against the other inputs, which must share one shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> j = tf.strings.join([["a", "b"], "x"], separator="-")
    >>> with tf.Session() as sess:
    ...     print(sess.run(j))
    [b'a-x' b'b-x']
    """
    if not isinstance(inputs, list | tuple) or not inputs:
        raise ValueError("string_join: inputs must be a non-empty list of string tensors")
    # one op named `name` (TensorFlow's generated wrapper): constants inside its scope,
    # named after the list argument ("inputs_1")
    with op_scope(name, "StringJoin", inputs) as scope:
        xs = [x if isinstance(x, Tensor) else
              convert_to_tensor(x, dtype=_dtypes.string, name=f"inputs_{i}")
              for i, x in enumerate(inputs)]
        xs = [_strings(x, "string_join") for x in xs]
        return make_tensor("StringJoin", xs, {"separator": str(separator)}, name=scope)


join = string_join


def substr(input, pos, len, name=None, unit: str = "BYTE"):
    """The substring of `len` bytes from byte `pos` of each string (negative `pos` counts
    from the end; `len` is clipped at the end). `pos`/`len` are scalars or of the
    input's shape; a `pos` outside a string is an `InvalidArgumentError`.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.strings.substr(["hello", "world"], 1, 3)
    >>> with tf.Session() as sess:
    ...     print(sess.run(s))
    [b'ell' b'orl']
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"substr: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    with op_scope(name, "Substr", [input, pos, len]) as scope:
        x = _strings(input, "substr")
        p = convert_to_tensor(pos, name="pos")
        n = convert_to_tensor(len, dtype=p.dtype, name="len")
        if not p.dtype.is_integer:
            raise TypeError(f"substr: pos and len must be integers, got {p.dtype.name}")
        return make_tensor("Substr", [x, p, n], {"unit": unit}, name=scope)


def string_length(input, name=None, unit: str = "BYTE"):
    """The length of each string in bytes (``unit="BYTE"``) or UTF-8 characters (int32).

    Example
    -------
    >>> import flowgraph as tf
    >>> n = tf.strings.length(["héllo", ""])
    >>> with tf.Session() as sess:
    ...     print(sess.run(n))
    [6 0]
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    if (h := handler_for("unary", input)) is not None:  # a RaggedTensor
        return h(lambda v, name=None: string_length(v, name, unit), input, name=name)
    x = _strings(input, "strings.length")
    return make_tensor("StringLength", [x], {"unit": unit}, name=name or "StringLength")


length = string_length


def arg_max(input, dimension, output_type=_dtypes.int64, name=None):
    """TF1's name of `tf.argmax` (``dimension`` is the axis).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.arg_max([[1, 5], [7, 0]], 1)))
    [1 0]
    """
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=_dtypes.int64, name=None):
    """TF1's name of `tf.argmin` (``dimension`` is the axis).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.arg_min([[1, 5], [7, 0]], 0)))
    [0 1]
    """
    return argmin(input, axis=dimension, name=name, output_type=output_type)
