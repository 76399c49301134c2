"""The `tf.linalg` namespace: re-exports only."""

from flowgraph.ops.math_ops import einsum, matmul, tensordot
