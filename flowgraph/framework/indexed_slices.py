"""`IndexedSlices`: a sparse representation of a dense tensor's gradient.

The gradient of ``tf.gather(params, indices)`` with respect to `params` is nonzero only in
the rows that were gathered. Rather than building a dense tensor of ``params``' shape
that is mostly zeros, the gradient is kept as the triple

    values       the gradient rows, shape ``[len(indices)] + params.shape[1:]``
    indices      which row of the dense tensor each row of `values` belongs to
    dense_shape  the shape of the dense tensor (a 1-D int tensor, or None)

Rows of `values` with the same index add up. An optimizer can apply the update to only
those rows; anything else converts the slices to a dense tensor with
`convert_to_tensor`, which warns when the dense tensor would be large (as TensorFlow does).
That conversion builds ops, so it is registered by the op library
(`flowgraph.ops.array_index_ops.indexed_slices_to_tensor`), as is ``-slices``
(`flowgraph.ops.math_ops`): this layer never imports the op library.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.framework.indexed_slices import IndexedSlices
>>> s = IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([2]), tf.constant([3, 2]))
>>> with tf.Session() as sess:
...     print(sess.run(tf.convert_to_tensor(s)))
[[0. 0.]
 [0. 0.]
 [1. 2.]]
"""

from __future__ import annotations

from collections import namedtuple

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import Tensor

# Dense conversions of more elements than this warn (TensorFlow's threshold).
LARGE_SPARSE_NUM_ELEMENTS = 100_000_000


class IndexedSlicesValue(namedtuple("IndexedSlicesValue",
                                     ["values", "indices", "dense_shape"])):
    """What fetching an `IndexedSlices` gives: its values, indices and dense shape as
    NumPy arrays (``dense_shape`` None when the slices have none).

    >>> IndexedSlicesValue([[1.0, 2.0]], [3], [5, 2]).indices
    [3]
    """

    __slots__ = ()


class IndexedSlices:
    """A sparse set of slices (rows) of a dense tensor of shape `dense_shape`.

    Parameters
    ----------
    values : Tensor
        The slices, shape ``[N] + dense_shape[1:]``.
    indices : Tensor
        1-D int32/int64 of length ``N``: the row of each slice in the dense tensor.
    dense_shape : Tensor, optional
        1-D int tensor: the shape of the dense tensor. Needed to convert to dense.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.framework.indexed_slices import IndexedSlices
    >>> s = IndexedSlices(tf.ones([2, 3]), tf.constant([0, 4]), tf.constant([5, 3]))
    >>> s.dtype.name, s.values.shape.as_list()
    ('float32', [2, 3])
    """

    def __init__(self, values, indices, dense_shape=None) -> None:
        if not isinstance(values, Tensor) or not isinstance(indices, Tensor):
            raise TypeError(
                f"IndexedSlices needs Tensors for values and indices, got "
                f"{type(values).__name__} and {type(indices).__name__}")
        if not indices.dtype.base_dtype.is_integer:
            raise TypeError(f"IndexedSlices indices must be int32 or int64, got "
                            f"{indices.dtype.name} ({indices.name})")
        if dense_shape is not None and not isinstance(dense_shape, Tensor):
            dense_shape = convert_to_tensor(dense_shape, dtype_hint=_dtypes.int32)
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Tensor:
        return self._values

    def _fetch_components(self):
        """Fetching (`flowgraph.runtime.fetch`): an `IndexedSlicesValue`, as TF gives."""
        if self._dense_shape is None:
            return ([self._values, self._indices],
                    lambda parts: IndexedSlicesValue(parts[0], parts[1], None))
        return ([self._values, self._indices, self._dense_shape],
                lambda parts: IndexedSlicesValue(*parts))

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Tensor | None:
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def shape(self):
        """The static shape of the dense tensor these slices belong to."""
        from flowgraph.framework.constant_op import constant_value_as_shape
        from flowgraph.framework.tensor_shape import TensorShape

        if self._dense_shape is None:
            return TensorShape(None)
        return constant_value_as_shape(self._dense_shape)

    def get_shape(self):
        return self.shape

    def consumers(self) -> list:
        return self._values.consumers()

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    def __bool__(self) -> bool:
        raise TypeError("Using IndexedSlices as a Python bool is not allowed; compare with "
                        "None instead.")
