"""`SparseTensor`: a tensor given by its nonzero entries, and `SparseTensorValue`.

A sparse tensor of rank R with N stored entries is the triple

    indices      int64 [N, R]   the coordinates of each stored entry
    values       [N]            the entries (any dtype)
    dense_shape  int64 [R]      the shape of the dense tensor

Every coordinate not listed holds the zero (or a default given when densifying). Most
ops expect indices in row-major ("canonical") order; `tf.sparse.reorder` restores it.
A `SparseTensor` is a composite of three graph tensors, not a graph element itself:

- feeding: ``sess.run(..., {sp: SparseTensorValue(...)})`` feeds its three tensors (the
  session expands any feed key with a ``_feed_tensors(value)`` method);
- fetching: ``sess.run(sp)`` gives a `SparseTensorValue` of NumPy arrays. The fetch mapper
  asks a composite for its parts and how to rebuild them through
  ``_fetch_components() -> (list_of_tensors, rebuild_fn)``.

Example
-------
>>> import flowgraph as tf
>>> sp = SparseTensor(indices=[[0, 1], [2, 0]], values=[5.0, 6.0], dense_shape=[3, 4])
>>> sp.dtype.name, sp.shape.as_list()
('float32', [3, 4])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value_as_shape, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape

__all__ = ["SparseTensor", "SparseTensorValue", "is_sparse"]


class SparseTensorValue(namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])):
    """The value of a `SparseTensor`: NumPy ``indices``, ``values`` and ``dense_shape``.

    Example
    -------
    >>> v = SparseTensorValue([[0, 0]], [1.0], [2, 3])
    >>> v.dense_shape
    [2, 3]
    """

    __slots__ = ()


class SparseTensor:
    """A sparse tensor: ``indices`` (int64 [N, rank]), ``values`` ([N]) and ``dense_shape``
    (int64 [rank]). Arguments that are not tensors are converted (indices and dense_shape
    to int64).

    Example
    -------
    >>> import flowgraph as tf
    >>> sp = tf.SparseTensor([[0, 0], [1, 2]], ["a", "b"], [2, 3])
    >>> sp.indices.dtype.name, sp.values.dtype.name, sp.dense_shape.dtype.name
    ('int64', 'string', 'int64')
    """

    def __init__(self, indices, values, dense_shape) -> None:
        with name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            indices = convert_to_tensor(indices, name="indices", dtype=_int64_if_plain(indices))
            values = convert_to_tensor(values, name="values")
            dense_shape = convert_to_tensor(dense_shape, name="dense_shape",
                                            dtype=_int64_if_plain(dense_shape))
        for what, t in (("indices", indices), ("dense_shape", dense_shape)):
            if t.dtype.base_dtype != _dtypes.int64:
                raise TypeError(f"SparseTensor {what} must be int64, got {t.dtype.name} "
                                f"({t.name}); cast it with tf.cast(x, tf.int64)")
        if indices.shape.ndims is not None and indices.shape.ndims != 2:
            raise ValueError(f"SparseTensor indices must have rank 2 [N, rank], got shape "
                             f"{indices.shape} ({indices.name})")
        if values.shape.ndims is not None and values.shape.ndims != 1:
            raise ValueError(f"SparseTensor values must have rank 1 [N], got shape "
                             f"{values.shape} ({values.name})")
        if dense_shape.shape.ndims is not None and dense_shape.shape.ndims != 1:
            raise ValueError(f"SparseTensor dense_shape must have rank 1 [rank], got shape "
                             f"{dense_shape.shape} ({dense_shape.name})")
        n_i = indices.shape[0] if indices.shape.ndims else None
        n_v = values.shape[0] if values.shape.ndims else None
        if n_i is not None and n_v is not None and not n_i.is_compatible_with(n_v):
            raise ValueError(f"SparseTensor has {n_i} indices but {n_v} values")
        rank_i = indices.shape[1] if indices.shape.ndims == 2 else None
        rank_s = dense_shape.shape[0] if dense_shape.shape.ndims == 1 else None
        if rank_i is not None and rank_s is not None and not rank_i.is_compatible_with(rank_s):
            raise ValueError(f"SparseTensor indices have {rank_i} columns but dense_shape has "
                             f"{rank_s} dimensions: each index row needs one coordinate per "
                             "dimension (indices [N, rank], dense_shape [rank])")
        self._indices = indices
        self._values = values
        self._dense_shape = dense_shape
        self._shape_hint: TensorShape | None = None

    @classmethod
    def from_value(cls, sparse_tensor_value) -> SparseTensor:
        """A `SparseTensor` of constants from a `SparseTensorValue` (a SparseTensor is
        returned unchanged)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        v = sparse_tensor_value
        if not all(hasattr(v, f) for f in ("indices", "values", "dense_shape")):
            raise TypeError(f"Argument sparse_tensor_value={v!r:.60} is neither a "
                            "SparseTensor nor SparseTensorValue.")
        return cls(v.indices, v.values, v.dense_shape)

    # -- the three parts ----------------------------------------------------------------
    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        """The op producing `values` (as in TensorFlow)."""
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def shape(self) -> TensorShape:
        """The static shape of the dense tensor: as much as is known at graph time."""
        shape = constant_value_as_shape(self._dense_shape)
        if self._shape_hint is not None:
            try:
                shape = shape.merge_with(self._shape_hint)
            except ValueError:
                pass
        rank = self._indices.shape[1].value if self._indices.shape.ndims == 2 else None
        if shape.ndims is None and rank is not None:
            shape = TensorShape([None] * rank)
        return shape

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """Refine the static dense shape (ValueError when `shape` is incompatible with
        what is known); ``dense_shape`` itself is unchanged."""
        self._shape_hint = self.shape.merge_with(as_shape(shape))

    def with_values(self, new_values) -> SparseTensor:
        """A SparseTensor with these indices and dense shape and `new_values` (one per
        index; any dtype)."""
        new_values = convert_to_tensor(new_values)
        self._values.shape.with_rank(1)[0].merge_with(new_values.shape.with_rank(1)[0])
        out = SparseTensor(self._indices, new_values, self._dense_shape)
        out._shape_hint = self._shape_hint
        return out

    def consumers(self) -> list:
        return self._values.consumers()

    def eval(self, feed_dict=None, session=None) -> SparseTensorValue:
        """The value in `session` (default: the default session)."""
        from flowgraph.framework.graph import get_default_session_or_raise

        sess = session or get_default_session_or_raise("evaluate a SparseTensor")
        idx, vals, shape = sess.run([self._indices, self._values, self._dense_shape],
                                    feed_dict=feed_dict)
        return SparseTensorValue(idx, vals, shape)

    # -- session protocols --------------------------------------------------------------
    def _feed_tensors(self, value) -> list:
        """Feeding: a `SparseTensorValue` (or any ``(indices, values, dense_shape)``)."""
        if isinstance(value, SparseTensor):
            raise TypeError(f"The value of a feed cannot be a SparseTensor object (feeding "
                            f"{self!r}); feed a tf.SparseTensorValue of arrays")
        try:
            parts = [value.indices, value.values, value.dense_shape] \
                if hasattr(value, "indices") else list(value)
        except TypeError:
            raise TypeError(f"A SparseTensor feed ({self!r}) must be a SparseTensorValue "
                            f"(indices, values, dense_shape), got {type(value).__name__}"
                            ) from None
        if len(parts) != 3:
            # TensorFlow pairs the components with the value's items as far as both go:
            # the shape check (or an unfed component) then names what is wrong.
            return list(zip([self._indices, self._values, self._dense_shape], parts))
        indices, values, dense_shape = parts
        indices = np.asarray(indices, dtype=np.int64)
        if indices.ndim == 1 and indices.size == 0:
            indices = indices.reshape(0, np.size(dense_shape))
        return [(self._indices, indices), (self._values, values),
                (self._dense_shape, np.asarray(dense_shape, dtype=np.int64))]

    def _fetch_components(self):
        """Fetching: the tensors to run and the function building the fetched value."""
        return ([self._indices, self._values, self._dense_shape],
                lambda parts: SparseTensorValue(*parts))

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")


def _int64_if_plain(x):
    return None if isinstance(x, Tensor) else _dtypes.int64


def is_sparse(x) -> bool:
    """True for a `SparseTensor` or a `SparseTensorValue`."""
    return isinstance(x, SparseTensor | SparseTensorValue)


def convert_to_sparse_tensor(value, name: str = "value") -> SparseTensor:
    """A `SparseTensor` from a SparseTensor, a `SparseTensorValue`, or any object with
    ``indices``/``values``/``dense_shape`` attributes (e.g. `tf.io.parse_example` output)."""
    if isinstance(value, SparseTensor):
        return value
    if all(hasattr(value, a) for a in ("indices", "values", "dense_shape")):
        return SparseTensor(value.indices, value.values, value.dense_shape)
    raise TypeError(f"{name}: expected a SparseTensor or SparseTensorValue, got "
                    f"{type(value).__name__}: {value!r}")
