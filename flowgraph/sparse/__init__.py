"""The `tf.sparse` namespace: re-exports only (see `flowgraph/ops/sparse_ops.py`)."""

from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_ops import sparse_placeholder as placeholder
from flowgraph.ops.sparse_ops import sparse_concat as concat
from flowgraph.ops.sparse_ops import sparse_cross as cross
from flowgraph.ops.sparse_ops import sparse_cross_hashed as cross_hashed
from flowgraph.ops.sparse_ops import sparse_fill_empty_rows as fill_empty_rows
from flowgraph.ops.sparse_ops import sparse_from_dense as from_dense
from flowgraph.ops.sparse_ops import sparse_reduce_sum as reduce_sum
from flowgraph.ops.sparse_ops import sparse_reorder as reorder
from flowgraph.ops.sparse_ops import sparse_reshape as reshape
from flowgraph.ops.sparse_ops import sparse_retain as retain
from flowgraph.ops.sparse_ops import sparse_segment_mean as segment_mean
from flowgraph.ops.sparse_ops import sparse_segment_sqrt_n as segment_sqrt_n
from flowgraph.ops.sparse_ops import sparse_segment_sum as segment_sum
from flowgraph.ops.sparse_ops import sparse_tensor_dense_matmul as matmul
from flowgraph.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from flowgraph.ops.sparse_ops import sparse_tensor_to_dense as to_dense

__all__ = [
    "SparseTensor",
    "concat",
    "cross",
    "cross_hashed",
    "fill_empty_rows",
    "from_dense",
    "matmul",
    "placeholder",
    "reduce_sum",
    "reorder",
    "reshape",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "sparse_dense_matmul",
    "to_dense",
]

# More SparseTensor functions (issue 15).
from flowgraph.ops.sparse_extra_ops import sparse_add as add
from flowgraph.ops.sparse_extra_ops import sparse_mask as mask
from flowgraph.ops.sparse_extra_ops import sparse_maximum as maximum
from flowgraph.ops.sparse_extra_ops import sparse_merge as merge
from flowgraph.ops.sparse_extra_ops import sparse_minimum as minimum
from flowgraph.ops.sparse_extra_ops import sparse_reduce_max as reduce_max
from flowgraph.ops.sparse_extra_ops import (
    sparse_reduce_max_sparse as reduce_max_sparse,
)
from flowgraph.ops.sparse_extra_ops import (
    sparse_reduce_sum_sparse as reduce_sum_sparse,
)
from flowgraph.ops.sparse_extra_ops import sparse_reset_shape as reset_shape
from flowgraph.ops.sparse_extra_ops import sparse_slice as slice
from flowgraph.ops.sparse_extra_ops import sparse_softmax as softmax
from flowgraph.ops.sparse_extra_ops import sparse_split as split
from flowgraph.ops.sparse_extra_ops import sparse_to_indicator as to_indicator
from flowgraph.ops.sparse_extra_ops import sparse_transpose as transpose

__all__ += ["add", "mask", "maximum", "merge", "minimum", "reduce_max", "reduce_max_sparse",
            "reduce_sum_sparse", "reset_shape", "slice", "softmax", "split", "to_indicator",
            "transpose"]

# Counts, new axes and identity matrices (TF1 misc names).
from flowgraph.ops.sparse_bincount_ops import sparse_bincount as bincount  # noqa: E402
from flowgraph.ops.sparse_bincount_ops import sparse_expand_dims as expand_dims  # noqa: E402
from flowgraph.ops.sparse_bincount_ops import sparse_eye as eye  # noqa: E402

__all__ += ["bincount", "expand_dims", "eye"]
