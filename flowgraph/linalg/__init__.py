"""The `tf.linalg` namespace: re-exports only."""

from flowgraph.ops.clip_ops import global_norm
from flowgraph.ops.linalg_basic import adjoint, eye, matrix_transpose, matvec
from flowgraph.ops.linalg_norm import norm
from flowgraph.ops.math_ops import einsum, matmul, tensordot
from flowgraph.ops.nn_ops import l2_normalize

transpose = matrix_transpose


def __getattr__(name: str):
    from flowgraph.framework.missing_api import missing_attribute

    raise missing_attribute("linalg", name)
