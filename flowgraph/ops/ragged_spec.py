"""`tf.RaggedTensorSpec`: the type of a `RaggedTensor` (shape, dtype, ragged rank and
row-partition dtype), as `tf.TensorSpec` is a tensor's.

Example
-------
>>> import flowgraph as tf
>>> spec = tf.RaggedTensorSpec([2, None], tf.int32)
>>> spec.ragged_rank, spec.row_splits_dtype
(1, tf.int64)
>>> spec.is_compatible_with(tf.ragged.constant([[1, 2], [3]]))
True
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.ragged_tensor import RaggedTensor
from flowgraph.ops.type_spec import TypeSpec, _read_only

__all__ = ["RaggedTensorSpec"]


def _shape_repr(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "TensorShape(None)"
    dims = ", ".join(f"Dimension({d.value})" for d in shape.dims)
    return f"TensorShape([{dims}])"


class RaggedTensorSpec(TypeSpec):
    """The spec of a `RaggedTensor`.

    `ragged_rank` defaults to ``rank - 1`` (every dimension after the first ragged); it
    must be below the rank when the rank is known.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.RaggedTensorSpec([None, None, 3], tf.float32, ragged_rank=1).shape.as_list()
    [None, None, 3]
    """

    _fields = ("shape", "dtype", "ragged_rank", "row_splits_dtype")

    shape = _read_only("shape", "The `TensorShape` (ragged dimensions are None).")
    dtype = _read_only("dtype", "The `DType` of the values.")
    ragged_rank = _read_only("ragged_rank", "The number of ragged dimensions.")
    row_splits_dtype = _read_only("row_splits_dtype", "int32 or int64.")
    flat_values_spec = _read_only("flat_values_spec",
                                  "The spec of the flat values, when one was given.")

    def __init__(self, shape=None, dtype=_dtypes.float32, ragged_rank=None,
                 row_splits_dtype=_dtypes.int64, flat_values_spec=None) -> None:
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._row_splits_dtype = _dtypes.as_dtype(row_splits_dtype).base_dtype
        if self._row_splits_dtype not in (_dtypes.int32, _dtypes.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64, got "
                             f"{self._row_splits_dtype.name}")
        rank = self.shape.ndims
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank. "
                                 f"Received: ragged_rank=None, shape={self.shape}")
            ragged_rank = max(rank - 1, 0)
        if not isinstance(ragged_rank, int) or ragged_rank < 0:
            raise TypeError(f"Argument `ragged_rank` must be a non-negative int. Received: "
                            f"ragged_rank={ragged_rank!r}")
        if rank is not None and rank > 0 and ragged_rank >= rank:
            raise ValueError(f"Argument `ragged_rank` ({ragged_rank}) must be less than "
                             f"rank ({rank}).")
        self._ragged_rank = ragged_rank
        self._flat_values_spec = flat_values_spec

    @property
    def value_type(self):
        return RaggedTensor

    def __repr__(self) -> str:
        return (f"RaggedTensorSpec({_shape_repr(self.shape)}, {self.dtype!r}, "
                f"{self.ragged_rank}, {self.row_splits_dtype!r})")

    @classmethod
    def from_value(cls, value: RaggedTensor) -> RaggedTensorSpec:
        """The spec of the ragged tensor `value`."""
        if not isinstance(value, RaggedTensor):
            raise TypeError(f"RaggedTensorSpec.from_value expects a RaggedTensor, got "
                            f"{type(value).__name__}")
        return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if isinstance(other, RaggedTensor):
            other = RaggedTensorSpec.from_value(other)
        if not isinstance(other, RaggedTensorSpec):
            return False
        return (self.dtype == other.dtype and self.ragged_rank == other.ragged_rank
                and self.row_splits_dtype == other.row_splits_dtype
                and self.shape.is_compatible_with(other.shape))
