"""Array ops: placeholders (dense and sparse) here; the rest of the family lives in the
`array_*_ops` modules by concept and is re-exported from this one, so
``from flowgraph.ops.array_ops import *`` gives the whole family:

- `array_identity_ops`: identity, stop_gradient (kept apart so that `math_reduce`, which
  `array_gen_ops` uses, needs no import of this module)
- `array_shape_ops`: shape, shape_n, size, rank, reshape, expand_dims, squeeze,
  transpose, fill, zeros, ones, zeros_like, ones_like
- `array_join_ops`: concat, split, stack, unstack, tile, pad, reverse, reverse_sequence
- `array_index_ops`: slice, strided_slice, ``Tensor.__getitem__``, gather, gather_nd,
  scatter_nd, where, where_v2, boolean_mask, newaxis
- `array_gen_ops`: range, linspace, one_hot, sequence_mask, unique, invert_permutation

Each op: registration (shape function), then the user-facing function.
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.op_util import attr_dtype, make_tensor

__all__ = [
    "identity",
    "placeholder",
    "placeholder_with_default",
    "sparse_placeholder",
    "stop_gradient",
]

# -- Placeholder ------------------------------------------------------------------------
@register_op("Placeholder", attrs={"dtype": None, "shape": None},
             dtype_fn=attr_dtype("dtype"))
def _placeholder_shape(op):
    return [as_shape(op.attrs["shape"])]


not_differentiable("Placeholder")


def placeholder(dtype, shape=None, name: str | None = None):
    """A tensor that must be fed in `Session.run`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    >>> x.shape.as_list()
    [None, 3]
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    try:
        shape = as_shape(shape)
    except TypeError as e:  # TensorFlow's wording for a shape attribute it cannot read
        raise TypeError(f"Error converting shape to a TensorShape: {e}.") from e
    return make_tensor("Placeholder", [], {"dtype": dtype, "shape": shape},
                       name=name or "Placeholder")


@register_op("PlaceholderWithDefault", attrs={"dtype": None, "shape": None})
def _placeholder_with_default_shape(op, default):
    return [as_shape(op.attrs["shape"])]


def placeholder_with_default(input, shape, name: str | None = None):
    """A tensor that is `input` unless it is fed.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.placeholder_with_default([1.0, 2.0], shape=[None])
    >>> p.shape.as_list()
    [None]
    """
    with name_scope(name, "PlaceholderWithDefault", [input]) as scope:
        value = convert_to_tensor(input, name="input")
        shape = as_shape(shape)
        if not value.shape.is_compatible_with(shape):
            raise ValueError(
                f"placeholder_with_default: default value of shape {value.shape} is not "
                f"compatible with the declared shape {shape}"
            )
        return make_tensor("PlaceholderWithDefault", [value],
                           {"dtype": value.dtype, "shape": shape}, name=scope)


# -- SparsePlaceholder -------------------------------------------------------------------
def sparse_placeholder(dtype, shape=None, name: str | None = None) -> SparseTensor:
    """A `SparseTensor` of placeholders to feed with a `SparseTensorValue`.

    The parts are named ``<name>/indices``, ``<name>/values`` and ``<name>/shape`` (plain
    ``Placeholder``s without a `name`, as in TensorFlow). With a
    `shape`, the dense shape need not be fed (unknown dimensions default to -1).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.sparse_placeholder(tf.float32, shape=[None, 5])
    >>> with tf.Session() as sess:
    ...     v = sess.run(sp.values, {sp: tf.SparseTensorValue([[0, 4]], [2.5], [3, 5])})
    >>> v
    array([2.5], dtype=float32)
    """
    # TensorFlow's names and order: no scope of its own; the dense shape first (plain
    # `Placeholder`s, or `<name>/shape`, `<name>/shape_default`), then values and indices
    dtype = _dtypes.as_dtype(dtype)
    if isinstance(shape, Tensor):
        # As TensorFlow: a tensor is the dense shape's default, its value the static shape.
        return _sparse_placeholder_of_tensor_shape(dtype, shape, name)
    static = as_shape(shape) if shape is not None else TensorShape(None)
    rank = static.ndims

    def part(what):
        return None if name is None else f"{name}/{what}"

    if shape is None:
        dense_shape = placeholder(_dtypes.int64, shape=[rank], name=part("shape"))
    else:
        default = np.asarray([-1 if d is None else d for d in static.as_list()], np.int64)
        default = convert_to_tensor(default, name=part("shape_default") or "Const")
        dense_shape = placeholder_with_default(default, [rank], name=part("shape"))
    values = placeholder(dtype, shape=[None], name=part("values"))
    indices = placeholder(_dtypes.int64, shape=[None, rank], name=part("indices"))
    sp = SparseTensor(indices, values, dense_shape)
    sp._shape_hint = static
    return sp


def _sparse_placeholder_of_tensor_shape(dtype, shape, name):
    rank = shape.get_shape()[0]
    static = constant_value_as_shape(shape)
    dense_shape = placeholder_with_default(
        shape, [rank], name=None if name is None else f"{name}/shape")
    values = placeholder(dtype, shape=[None], name=None if name is None else f"{name}/values")
    indices = placeholder(_dtypes.int64, shape=[None, rank],
                          name=None if name is None else f"{name}/indices")
    sp = SparseTensor(indices, values, dense_shape)
    sp._shape_hint = static
    return sp


# -- the rest of the family (re-exported) ----------------------------------------------
from flowgraph.ops import array_gen_ops, array_index_ops, array_join_ops  # noqa: E402
from flowgraph.ops import array_shape_ops as _shape_ops  # noqa: E402
from flowgraph.ops.array_gen_ops import *  # noqa: E402, F403
from flowgraph.ops.array_identity_ops import identity, stop_gradient  # noqa: E402
from flowgraph.ops.array_index_ops import *  # noqa: E402, F403
from flowgraph.ops.array_join_ops import *  # noqa: E402, F403
from flowgraph.ops.array_shape_ops import *  # noqa: E402, F403

__all__ += [*_shape_ops.__all__, *array_join_ops.__all__, *array_index_ops.__all__,
            *array_gen_ops.__all__]
