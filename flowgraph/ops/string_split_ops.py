"""``tf.string_split`` and TF1's ``tf.strings.split`` with their ``result_type``: a
`SparseTensor` (the default, from the ``StringSplit``/``StringSplitV2`` ops of
`flowgraph/ops/string_ops.py`) or a `RaggedTensor` with one row per input string.

TF1's ``tf.strings.split`` also takes a scalar (one row) or a tensor of rank >= 2 (one
ragged level per string, the outer dimensions uniform; as a `SparseTensor`, one more
dimension than the input).

Example
-------
>>> import flowgraph as tf
>>> rt = tf.strings.split(["a b", "c"], result_type="RaggedTensor")
>>> tf.Session().run(rt).to_list()
[[b'a', b'b'], [b'c']]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import array_ops as _a
from flowgraph.ops import string_ops as _s
from flowgraph.ops.ragged_tensor import RaggedTensor

__all__ = ["split", "string_split"]

_RESULT_TYPES = ("SparseTensor", "RaggedTensor")


def _check_result_type(result_type, what: str) -> None:
    if result_type not in _RESULT_TYPES:
        raise ValueError(f"{what}: result_type must be 'RaggedTensor' or 'SparseTensor', "
                         f"got {result_type!r}")


def _rows(sp: SparseTensor) -> RaggedTensor:
    return RaggedTensor.from_value_rowids(sp.values, sp.indices[:, 0],
                                          nrows=sp.dense_shape[0], validate=False)


def string_split(source, sep=None, skip_empty: bool = True, delimiter=None,
                 result_type: str = "SparseTensor", name=None):
    """Split each string of a vector at any of the characters of `sep` (TF1's
    ``tf.string_split``; `delimiter` is its old name, ``""`` splits into bytes).

    Example
    -------
    >>> import flowgraph as tf
    >>> rt = tf.string_split(["a,b", "c"], ",", result_type="RaggedTensor")
    >>> tf.Session().run(rt).to_list()
    [[b'a', b'b'], [b'c']]
    """
    _check_result_type(result_type, "string_split")
    if result_type == "SparseTensor":
        return _s.string_split(source, sep=sep, skip_empty=skip_empty, delimiter=delimiter,
                               name=name)
    with name_scope(name, "StringSplit", [source]) as scope:
        return _rows(_s.string_split(source, sep=sep, skip_empty=skip_empty,
                                     delimiter=delimiter, name=scope))


def _split_ragged(x, sep, maxsplit):
    """`x` (a string tensor of rank >= 1) split into a `RaggedTensor`."""
    with name_scope(None, "StringSplit", [x]) as scope:
        if x.shape.ndims is None or x.shape.ndims == 1:
            return _rows(_s.split(x, sep=sep, maxsplit=maxsplit, name=scope))
        rt = RaggedTensor.from_tensor(x)
        return rt.with_flat_values(_split_ragged(rt.flat_values, sep, maxsplit))


def split(input=None, sep=None, maxsplit: int = -1, result_type: str = "SparseTensor",
          source=None, name=None):
    """Split each string at `sep` (TF1's ``tf.strings.split``): ``sep=None`` splits at
    runs of whitespace and drops empty tokens, a given `sep` keeps them, as Python's
    ``str.split``; at most `maxsplit` splits per string when ``maxsplit >= 0``.

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.strings.split(["a--b"], sep="-")
    >>> tf.Session().run(sp.values).tolist()
    [b'a', b'', b'b']
    """
    input = _s._renamed_argument("input", input, "source", source)
    if input is None:
        raise ValueError("strings.split: give `input`")
    _check_result_type(result_type, "strings.split")
    with name_scope(name, "StringSplit", [input]) as scope:
        x = convert_to_tensor(input, dtype=_dtypes.string, name="input")
        if x.dtype.base_dtype != _dtypes.string:
            raise TypeError(f"strings.split: input must be a string tensor, got "
                            f"{x.dtype.base_dtype.name}")
        if x.shape.ndims == 0:
            x = _a.expand_dims(x, 0)
        if result_type == "SparseTensor" and x.shape.ndims == 1:
            return _s.split(x, sep=sep, maxsplit=maxsplit, name=scope)
        rt = _split_ragged(x, sep, maxsplit)
        return rt if result_type == "RaggedTensor" else rt.to_sparse()
