"""Registry-wide cases for the math, array and linear-algebra op types of the raw-op
gap-fill (`flowgraph/ops/linalg_diag_v3.py`, `linalg_raw.py`, `spectral_real_ops.py`,
`math_raw.py`, `array_raw.py`): `GRADIENT_CASES` merge into
`test_gradient_registry.CASES` (finite differences, and through it the op contract);
`CONTRACT_CASES` cover the ops without a gradient, in the format of `misc_names_cases`."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op, make_tensor

R = np.random.RandomState(1517)
_VD = {"value_dependent": True}


def _u(*shape, low=-1.0, high=1.0):
    return R.uniform(low, high, size=shape)


def _raw(op_type, attrs=None, *consts, out=0):
    """build(*xs): op `op_type` on the placeholders then the constants `consts`."""

    def build(*xs):
        ins = list(xs) + [tf.constant(c) if not isinstance(c, tf.Tensor) else c
                          for c in consts]
        op = make_op(op_type, ins, attrs)
        return op.outputs[out] if out is not None else op.outputs

    return build


def _k(*k):
    return np.array(k, np.int32)


def _zero(x):
    return tf.zeros([], x.dtype)


def _diag_v(v, **attrs):
    def build(d):
        k, rows, cols = attrs.get("k", _k(0)), attrs.get("rows", -1), attrs.get("cols", -1)
        ins = [d, tf.constant(k), tf.constant(rows), tf.constant(cols), _zero(d)]
        extra = {"align": attrs["align"]} if "align" in attrs else {}
        return make_tensor(f"MatrixDiag{v}", ins, extra)

    return build


def _part_v(v, k, align=None):
    def build(x):
        extra = {"align": align} if align else {}
        return make_tensor(f"MatrixDiagPart{v}", [x, tf.constant(k), _zero(x)], extra)

    return build


def _set_v(v, k, align=None):
    def build(x, d):
        extra = {"align": align} if align else {}
        return make_tensor(f"MatrixSetDiag{v}", [x, d, tf.constant(k)], extra)

    return build


def _spd(x, n):
    a = tf.reshape(x, [n, n])
    return tf.matmul(a, a, transpose_b=True) + n * tf.eye(n, dtype=x.dtype)


def _solve_ls(shape, l2):
    def build(a, b):
        return make_tensor("MatrixSolveLs", [a, b, tf.constant(l2, tf.float64)],
                           {"fast": True})

    return build


def _eig_values(x):
    a = x * 0.1 + tf.constant(np.diag([1.0, 2.5, 4.0]) + np.triu(np.ones((3, 3)), 1),
                              x.dtype)
    e, v = tf.linalg.eig(a)
    return [tf.math.real(e), tf.abs(tf.math.real(v[..., 0]))]


def _band(lower):
    def build(bands, rhs):
        shift = tf.constant([[2.0] * 4, [0.0] * 4] if lower else [[0.0] * 4, [2.0] * 4],
                            bands.dtype)
        return tf.raw_ops.BandedTriangularSolve(matrix=bands + shift, rhs=rhs, lower=lower)

    return build


def _fft(op_type, lengths):
    def build(x):
        return make_tensor(op_type, [x, tf.constant(lengths, tf.int32)],
                           {"Tcomplex": tf.complex128, "Treal": tf.float64})

    return build


GRADIENT_CASES = {
    "MatrixDiagV3": [
        ([_u(2, 3)], _diag_v("V3")),
        ([_u(2, 3, 2)], _diag_v("V3", k=_k(-1, 1), align="LEFT_RIGHT")),
        ([_u(2, 3)], _diag_v("V3", k=_k(0, 1), rows=3, cols=4)),
    ],
    "MatrixDiagV2": [([_u(3, 3)], _diag_v("V2", k=_k(-2, 0)))],
    "MatrixDiagPartV3": [
        ([_u(3, 4)], _part_v("V3", _k(-1, 2))),
        ([_u(2, 3, 3)], _part_v("V3", _k(1), "LEFT_LEFT")),
    ],
    "MatrixDiagPartV2": [([_u(2, 4, 3)], _part_v("V2", _k(-2, 0)))],
    "MatrixSetDiagV3": [([_u(3, 4), _u(3, 3)], _set_v("V3", _k(-1, 1)))],
    "MatrixSetDiagV2": [([_u(2, 3, 4), _u(2, 2, 3)], _set_v("V2", _k(0, 1)))],
    "MatrixSolveLs": [
        ([_u(4, 2), _u(4, 1)], _solve_ls((4, 2), 0.1)),
        ([_u(2, 3), _u(2, 2)], _solve_ls((2, 3), 0.5)),
    ],
    "Eig": [([_u(3, 3)], _eig_values)],
    "BandedTriangularSolve": [
        ([_u(2, 4), _u(4, 2)], _band(True)),
        ([_u(2, 4), _u(4, 1)], _band(False)),
    ],
    "BatchMatMulV3": [([_u(2, 2, 3), _u(3, 2)], lambda x, y: tf.matmul(
        x, y, output_type=tf.float64))],
    # float64 is flowgraph's extension (TensorFlow takes float32/bfloat16): exact enough
    # for finite differences; test_raw_math.py checks the float32 path against TensorFlow.
    "SparseMatMul": [([_u(2, 3), _u(2, 3)], lambda a, b: tf.raw_ops.SparseMatMul(
        a=a, b=b, transpose_b=True, b_is_sparse=True))],
    "RFFT": [([_u(2, 6)], _fft("RFFT", [5])), ([_u(4)], lambda x: tf.signal.rfft(x))],
    "RFFT2D": [([_u(3, 4)], _fft("RFFT2D", [3, 4]))],
    "IRFFT": [([_u(2, 4) + 1j * _u(2, 4)], _fft("IRFFT", [6])),
              ([_u(3) + 1j * _u(3)], _fft("IRFFT", [5]))],
    "IRFFT2D": [([_u(2, 3) + 1j * _u(2, 3)], _fft("IRFFT2D", [2, 4]))],
    "Div": [([_u(2, 3), _u(3, low=0.5, high=2.0)], _raw("Div"))],
    "Inv": [([_u(3, low=0.5, high=2.0)], _raw("Inv"))],
    "InvGrad": [([_u(3, low=0.5, high=2.0), _u(3)], _raw("InvGrad"))],
    "MulNoNan": [([_u(2, 3), _u(3)], tf.math.multiply_no_nan)],
    "ClipByValue": [([_u(2, 3, low=-2, high=2)], _raw("ClipByValue", None, np.float64(-0.5),
                                                      np.float64(0.5))),
                    ([_u(2, 2, low=-2, high=2), _u(2, 2, low=-3, high=-1)],
                     lambda t, lo: _raw("ClipByValue", None, np.float64(1.0))(t, lo))],
    "EuclideanNorm": [([_u(2, 3)], lambda x: tf.math.reduce_euclidean_norm(x, 1)),
                      ([_u(2, 3)], lambda x: tf.math.reduce_euclidean_norm(x, keepdims=True))],
    "CumulativeLogsumexp": [
        ([_u(2, 3)], lambda x: tf.math.cumulative_logsumexp(x, 1)),
        ([_u(4)], lambda x: tf.math.cumulative_logsumexp(x, exclusive=True, reverse=True)[:-1]),
    ],
    "AccumulateNV2": [([_u(2, 2), _u(2, 2)], lambda a, b: make_tensor(
        "AccumulateNV2", [a, b], {"N": 2, "shape": tf.TensorShape([2, 2])}))],
    "BiasAddV1": [([_u(2, 3), _u(3)], _raw("BiasAddV1"))],
    "Concat": [([_u(2, 3), _u(2, 1)], lambda a, b: tf.raw_ops.Concat(concat_dim=-1,
                                                                     values=[a, b]))],
    "Reverse": [([_u(2, 3)], _raw("Reverse", None, np.array([True, False])))],
    "NthElement": [([_u(2, 4)], _raw("NthElement", {"reverse": True}, np.int32(1)))],
    "TopK": [([_u(2, 4)], _raw("TopK", {"k": 2, "sorted": True}))],
    "ApproxTopK": [([_u(3, 4)], lambda x: tf.math.approx_max_k(x, 2)[0])],
    "EnsureShape": [([_u(2, 3)], lambda x: tf.ensure_shape(x, [None, 3]))],
    "CheckNumericsV2": [([_u(3)], _raw("CheckNumericsV2", {"message": "m"}))],
    "DebugGradientIdentity": [([_u(3)], _raw("DebugGradientIdentity"))],
}

_A = _u(2, 3, 3) + 3 * np.eye(3)
_SPD = np.einsum("bij,bkj->bik", _A, _A)
_I32 = np.array([[3, 1, 3], [0, 7, 2]], np.int32)

CONTRACT_CASES = {
    "Mod": [([_I32, np.array([2, -2, 3], np.int32)], _raw("Mod"), {}),
            ([_u(2, 3), np.array(0.7)], _raw("Mod"), {})],
    "ApproximateEqual": [([_u(2, 3), _u(2, 3)], _raw("ApproximateEqual", {"tolerance": 0.5}),
                          {})],
    "TileGrad": [([_u(2, 6)], _raw("TileGrad", None, np.array([1, 3], np.int32)), {})],
    "ToBool": [([_u(2, 3)], _raw("ToBool"), {}), ([np.array(0.0)], _raw("ToBool"), {})],
    "PopulationCount": [([_I32], _raw("PopulationCount"), {})],
    "IgammaGradA": [([_u(3, low=0.5, high=3), _u(3, low=0.5, high=3)], _raw("IgammaGradA"),
                     {})],
    "InTopK": [([_u(2, 4), np.array([1, 3], np.int32)], _raw("InTopK", {"k": 2}), {})],
    "HistogramFixedWidth": [([_u(7)], _raw("HistogramFixedWidth", {"dtype": tf.int32},
                                           np.array([-0.5, 0.5]), np.int32(4)), {})],
    "UniqueV2": [([_I32], _raw("UniqueV2", {"out_idx": tf.int32}, np.array([1], np.int64),
                               out=None), _VD)],
    "UniqueWithCountsV2": [([_I32], _raw("UniqueWithCountsV2", {"out_idx": tf.int64},
                                         np.array([0], np.int32), out=None), _VD)],
    "Empty": [([np.array([2, 3], np.int32)], _raw("Empty", {"dtype": tf.float32}), _VD)],
    "InplaceAdd": [([_u(3, 2), _u(1, 2)], lambda x, v: tf.raw_ops.InplaceAdd(
        x=x, i=[2], v=v), {})],
    "InplaceSub": [([_u(3, 2), _u(2, 2)], lambda x, v: tf.raw_ops.InplaceSub(
        x=x, i=[2, 0], v=v), {})],
    "InplaceUpdate": [([_u(3, 2), _u(1, 2)], lambda x, v: tf.raw_ops.InplaceUpdate(
        x=x, i=[1], v=v), {})],
    "ParallelConcat": [([_u(1, 3), _u(1, 3)], lambda a, b: make_tensor(
        "ParallelConcat", [a, b], {"N": 2, "shape": tf.TensorShape([2, 3])}), {})],
    "PreventGradient": [([_u(2)], _raw("PreventGradient", {"message": "no"}), {})],
    "GuaranteeConst": [([_u(2)], tf.guarantee_const, {})],
    "Snapshot": [([_u(2, 3)], _raw("Snapshot"), {})],
    "DeepCopy": [([_u(2, 3)], _raw("DeepCopy"), {})],
    "SelfAdjointEig": [([_SPD], _raw("SelfAdjointEig"), {})],
    "CholeskyGrad": [([np.linalg.cholesky(_SPD), _u(2, 3, 3)], _raw("CholeskyGrad"), {})],
    "BatchCholesky": [([_SPD], _raw("BatchCholesky"), {})],
    "BatchCholeskyGrad": [([np.linalg.cholesky(_SPD), _u(2, 3, 3)], _raw("BatchCholeskyGrad"),
                           {})],
    "BatchMatrixBandPart": [([_u(2, 3, 4)], _raw("BatchMatrixBandPart", None, np.int64(1),
                                                 np.int64(0)), {})],
    "BatchMatrixDeterminant": [([_A], _raw("BatchMatrixDeterminant"), {})],
    "BatchMatrixDiag": [([_u(2, 3)], _raw("BatchMatrixDiag"), {})],
    "BatchMatrixDiagPart": [([_u(2, 3, 4)], _raw("BatchMatrixDiagPart"), {})],
    "BatchMatrixInverse": [([_A], _raw("BatchMatrixInverse", {"adjoint": False}), {})],
    "BatchMatrixSetDiag": [([_u(2, 3, 4), _u(2, 3)], _raw("BatchMatrixSetDiag"), {})],
    "BatchMatrixSolve": [([_A, _u(2, 3, 2)], _raw("BatchMatrixSolve", {"adjoint": True}), {})],
    "BatchMatrixSolveLs": [([_A, _u(2, 3, 2)], _raw("BatchMatrixSolveLs", {"fast": True},
                                                    np.float64(0.0)), {})],
    "BatchMatrixTriangularSolve": [([_A, _u(2, 3, 2)], _raw(
        "BatchMatrixTriangularSolve", {"lower": True, "adjoint": False}), {})],
    "BatchSelfAdjointEig": [([_SPD], _raw("BatchSelfAdjointEig"), {})],
    "BatchSelfAdjointEigV2": [([_SPD], _raw("BatchSelfAdjointEigV2", {"compute_v": True},
                                            out=None), {})],
    "BatchSvd": [([_u(2, 3, 4)], _raw("BatchSvd", {"compute_uv": True,
                                                   "full_matrices": False}, out=None), {})],
    **{name: [([_u(2, 2, 4) + 1j * _u(2, 2, 4)], _raw(name), {})] for name in (
        "BatchFFT", "BatchFFT2D", "BatchFFT3D", "BatchIFFT", "BatchIFFT2D", "BatchIFFT3D")},
}

VALUE_DEPENDENT: set[str] = set()

# PlaceholderV2 must be fed: the contract check cannot run it (tests/ops/test_raw_math.py).
SKIP = {"PlaceholderV2": "a placeholder must be fed (tested in test_raw_math.py)"}

# TensorFlow's gradient of these raises LookupError naming the reason (test_raw_math.py).
GRADIENT_RAISES_LIKE_TENSORFLOW = {"PreventGradient"}

# TensorFlow registers no gradient for these: tf.gradients raises LookupError.
NO_GRADIENT_LIKE_TENSORFLOW = {
    "Mod", "TileGrad", "ToBool", "IgammaGradA", "InTopK", "HistogramFixedWidth", "UniqueV2",
    "UniqueWithCountsV2", "Empty", "InplaceAdd", "InplaceSub", "InplaceUpdate",
    "ParallelConcat", "GuaranteeConst", "Snapshot", "DeepCopy",
    "SelfAdjointEig", "CholeskyGrad", "Unique", "TruncateMod",
    *(n for n in CONTRACT_CASES if n.startswith("Batch"))}
