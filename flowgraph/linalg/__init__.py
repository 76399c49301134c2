"""The `tf.linalg` namespace: re-exports only."""

from flowgraph.linalg import experimental
from flowgraph.linalg.linear_operator import (
    LinearOperator,
    LinearOperatorAdjoint,
    LinearOperatorComposition,
    LinearOperatorInversion,
    LinearOperatorLowerTriangular,
)
from flowgraph.linalg.linear_operator_basic import (
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorScaledIdentity,
)
from flowgraph.linalg.linear_operator_blocks import (
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
)
from flowgraph.linalg.linear_operator_structured import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
    LinearOperatorZeros,
)
from flowgraph.ops import linalg_expm as _linalg_expm
from flowgraph.ops.clip_ops import global_norm
from flowgraph.ops.linalg_basic import adjoint, eye, matrix_transpose, matvec
from flowgraph.ops.linalg_diag_ops import cross, trace
from flowgraph.ops.linalg_diag_ops import diag as tensor_diag
from flowgraph.ops.linalg_diag_ops import diag_part as tensor_diag_part
from flowgraph.ops.linalg_diag_ops import matrix_band_part as band_part
from flowgraph.ops.linalg_diag_ops import matrix_diag as diag
from flowgraph.ops.linalg_diag_ops import matrix_diag_part as diag_part
from flowgraph.ops.linalg_diag_ops import matrix_set_diag as set_diag
from flowgraph.ops.linalg_expm_pade import expm
from flowgraph.ops.linalg_funcs import logm, matrix_rank, normalize, pinv, sqrtm
from flowgraph.ops.linalg_lu import lu, lu_matrix_inverse, lu_reconstruct, lu_solve
from flowgraph.ops.linalg_norm import norm
from flowgraph.ops.linalg_ops import cholesky, cholesky_solve, logdet, qr, slogdet, svd
from flowgraph.ops.linalg_ops import matrix_determinant as det
from flowgraph.ops.linalg_ops import matrix_inverse as inv
from flowgraph.ops.linalg_ops import matrix_solve as solve
from flowgraph.ops.linalg_ops import matrix_solve_ls as lstsq
from flowgraph.ops.linalg_ops import matrix_triangular_solve as triangular_solve
from flowgraph.ops.linalg_ops import self_adjoint_eig as eigh
from flowgraph.ops.linalg_ops import self_adjoint_eigvals as eigvalsh
from flowgraph.ops.linalg_raw import banded_triangular_solve, eig, eigvals
from flowgraph.ops.linalg_tridiag import (
    eigh_tridiagonal,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from flowgraph.ops.math_ops import einsum, matmul
from flowgraph.ops.math_tensordot import tensordot
from flowgraph.ops.nn_ops import l2_normalize

transpose = matrix_transpose


def __getattr__(name: str):
    from flowgraph.framework.missing_api import missing_attribute

    raise missing_attribute("linalg", name)
