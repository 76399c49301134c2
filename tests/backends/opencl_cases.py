"""Parity cases for the OpenCL kernels of the first increment (elementwise, reductions,
MatMul, softmax), and the helpers every ``opencl_cases_<family>.py`` module shares.

A case module defines ``CASES``: op type -> list of `Case`. `test_opencl_parity` gathers
the ``CASES`` of every ``tests/backends/opencl_cases*.py`` module; an op type may appear in
one module only.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op

F32, F64, I32 = np.float32, np.float64, np.int32
_rng = np.random.default_rng(1234)


def _rand(shape, dtype=F32, lo=-3.0, hi=3.0):
    if np.dtype(dtype).kind == "b":
        return _rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return _rng.integers(int(lo) * 3, int(hi) * 3 + 1, shape).astype(dtype)
    return _rng.uniform(lo, hi, shape).astype(dtype)


def _pos(shape, dtype=F32):
    return _rand(shape, dtype, 0.25, 4.0)


def _away_from_zero(shape, dtype=F32):
    x = _rand(shape, dtype, 0.25, 3.0)
    return np.where(_rng.integers(0, 2, shape) == 1, x, -x).astype(dtype)


SHAPES = [(), (7,), (3, 5), (2, 3, 17), (0, 4), (1000,)]
PAIRS = [((3, 5), (3, 5)), ((3, 5), (5,)), ((4, 1, 3), (1, 5, 1)), ((), (3, 4)),
         ((2, 0), (1,)), ((2, 3, 1, 5), (3, 4, 1)), ((2, 3, 1, 4, 1, 5), (3, 2, 4, 1, 5)),
         ((2, 1, 2, 1, 2, 3, 2), (1, 2, 1, 2, 1, 1))]  # 7-D, 6 after merging


class Case:
    """One op built from fed inputs: `inputs` (NumPy arrays), `attrs`, optional constant
    inputs appended (`consts`: e.g. reduction axes) and the number of outputs."""

    def __init__(self, inputs, attrs=None, consts=(), outputs=1, rtol=1e-5):
        self.inputs, self.attrs, self.consts = inputs, attrs or {}, consts
        self.outputs, self.rtol = outputs, rtol

    def build(self, op_type, placeholders):
        inputs = list(placeholders) + [tf.constant(c) for c in self.consts]
        op = make_op(op_type, inputs, dict(self.attrs))
        return op, list(op.outputs[:self.outputs])


def _unary(gen, dtypes=(F32, F64, I32), shapes=SHAPES):
    cases = [Case([gen(s)]) for s in shapes]
    cases += [Case([gen((4, 6), d)]) for d in dtypes if d != F32]
    return cases


def _binary(gen=_rand, gen2=None, dtypes=(F64, I32)):
    gen2 = gen2 or gen
    cases = [Case([gen(a), gen2(b)]) for a, b in PAIRS]
    cases += [Case([gen((4, 6), d), gen2((6,), d)]) for d in dtypes]
    return cases


def _reduce(dtypes=(F64, I32)):
    cases = []
    for shape, axes in [((5, 7), [1]), ((5, 7), [0]), ((3, 4, 5), [0, 2]), ((3, 4, 5), [-2]),
                        ((2, 3, 4, 5), [0, 2]), ((3, 1, 4), [1]), ((10000,), [0]),
                        ((3, 9000), [1]), ((9000, 3), [0]), ((3, 0), [1]), ((3, 0), [0]),
                        ((4, 5), [0, 1]), ((4, 5), [])]:
        for keep in (False, True):
            cases.append(Case([_pos(shape)], {"keep_dims": keep},
                              consts=[np.array(axes, np.int32)]))
    cases += [Case([_rand((6, 5), d)], {"keep_dims": False}, consts=[np.array([1], I32)])
              for d in dtypes]
    return cases


def _grad(gen_y=_rand):
    return [Case([_rand(s), gen_y(s)]) for s in [(3, 5), (0, 2), (2, 3, 17)]] + \
        [Case([_rand((4, 6), F64), gen_y((4, 6), F64)])]


def _output_grad(gen_y=_rand):
    """(y, dy) cases of the backward ops that take the forward output y first."""
    return [Case([gen_y(s), _rand(s)]) for s in [(3, 5), (0, 2), (2, 3, 17)]] + \
        [Case([gen_y((4, 6), F64), _rand((4, 6), F64)])]


def _relu6_input(shape, dtype=F32):
    return _rand(shape, dtype, -2.0, 8.0)


def _elu_output(shape, dtype=F32):
    return _rand(shape, dtype, -0.99, 3.0)


def _cast(src, dst):
    return Case([_rand((3, 7), src)], {"SrcT": tf.as_dtype(src), "DstT": tf.as_dtype(dst)})


def _matmul():
    cases = []
    # edges of both forms: the CPU form's 8x32 panels (partial, exact, several) and the
    # tiled form's 32x32 tiles; K = 0, and empty outputs
    for m, k, n in [(1, 1, 1), (3, 5, 7), (17, 33, 19), (64, 16, 32), (0, 3, 4), (3, 0, 4),
                    (17, 33, 65), (130, 257, 129), (8, 7, 32), (33, 0, 17), (5, 7, 0)]:
        for ta in (False, True):
            for tb in (False, True):
                a = _rand((k, m) if ta else (m, k))
                b = _rand((n, k) if tb else (k, n))
                cases.append(Case([a, b], {"transpose_a": ta, "transpose_b": tb}, rtol=1e-4))
    cases.append(Case([_rand((5, 6), F64), _rand((6, 3), F64)]))
    return cases


def _labels(shape, dtype=F32):
    x = _rng.uniform(0, 1, shape).astype(dtype)
    x[..., :1] = 0  # a class with zero probability
    return (x / np.maximum(x.sum(-1, keepdims=True), 1e-6)).astype(dtype)


CASES = {
    **{op: _unary(_rand) for op in ("Neg", "Abs", "Square", "Relu", "Sign")},
    **{op: _unary(_rand, dtypes=(F32, F64)) for op in ("Exp", "Tanh", "Sigmoid", "Elu",
                                                       "Floor", "Ceil")},
    "Relu6": _unary(_relu6_input),
    **{op: _unary(_pos, dtypes=(F32, F64)) for op in ("Sqrt", "Rsqrt", "Log")},
    "Reciprocal": _unary(_away_from_zero, dtypes=(F32, F64)),
    **{op: _binary() for op in ("Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum",
                                "SquaredDifference")},
    "RealDiv": _binary(_rand, _away_from_zero, dtypes=(F64,)),
    "DivNoNan": _binary(_rand, lambda s, d=F32: np.where(_rng.integers(0, 3, s) == 0, 0,
                                                         _away_from_zero(s, d)).astype(d),
                        dtypes=(F64,)),
    "Pow": _binary(_pos, lambda s, d=F32: _rand(s, d, -2.0, 2.0), dtypes=(F64,)),
    "ReluGrad": _grad(),
    "Relu6Grad": _grad(_relu6_input),
    "EluGrad": _grad(_elu_output),
    **{op: _output_grad() for op in ("TanhGrad", "SigmoidGrad")},
    **{op: _output_grad(_away_from_zero) for op in ("SqrtGrad", "RsqrtGrad", "ReciprocalGrad")},
    "Cast": [_cast(s, d) for s, d in [(F32, I32), (I32, F32), (F32, F64), (F64, F32),
                                      (F32, bool), (bool, F32), (I32, np.int64),
                                      (np.int64, I32), (F64, I32)]],
    **{op: [Case([_rand(s, d)]) for s, d in [((3, 5), F32), ((0,), F32), ((4,), I32),
                                             ((2, 2), bool)]]
       for op in ("Identity", "ZerosLike", "OnesLike")},
    "BiasAdd": [Case([_rand(v), _rand(b)], {"data_format": f}) for v, b, f in [
        ((3, 5), (5,), "NHWC"), ((2, 3, 4, 7), (7,), "NHWC"), ((0, 5), (5,), "NHWC"),
        ((2, 3, 4, 5), (3,), "NCHW")]] + [Case([_rand((4, 3), F64), _rand((3,), F64)]),
                                          Case([_rand((4, 3), I32), _rand((3,), I32)])],
    "BiasAddGrad": [Case([_rand(s)], {"data_format": f}) for s, f in [
        ((3, 5), "NHWC"), ((2, 3, 4, 7), "NHWC"), ((9000, 3), "NHWC"), ((0, 5), "NHWC"),
        ((2, 3, 4, 5), "NCHW")]] + [Case([_rand((4, 3), F64)])],
    **{op: _reduce() for op in ("Sum", "Mean", "Max", "Min")},
    "MatMul": _matmul(),
    "Softmax": [Case([_rand(s, lo=-20, hi=20)]) for s in [(3, 5), (2, 3, 100), (7,), (0, 3),
                                                          (4, 1)]] + [Case([_rand((3, 4), F64)])],
    "SoftmaxCrossEntropyWithLogits": [
        Case([_rand(s, lo=-10, hi=10), _labels(s)], outputs=2)
        for s in [(3, 5), (4, 100), (1, 1), (0, 3), (2, 0)]] + [
        Case([_rand((3, 4), F64), _labels((3, 4), F64)], outputs=2)],
}
