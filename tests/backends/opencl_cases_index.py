"""Parity cases for the OpenCL index kernels (GatherV2, ScatterNd, Select/SelectV2, Fill),
Prod and ArgMax/ArgMin, LogSoftmax, the sparse cross-entropy and BatchMatMul(V2).

Sizes avoid multiples of the work-group sizes; every op has an empty case, int and float
dtypes, and the index-taking ops both index dtypes.
"""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from tests.backends.opencl_cases import F32, F64, I32, Case, _rand

I64 = np.int64
_rng = np.random.default_rng(4321)


def _ids(shape, limit, dtype=I32):
    return _rng.integers(0, limit, shape).astype(dtype)


def _gather():
    cases = [
        Case([_rand((5, 7)), _ids((3,), 5)], consts=[np.int32(0)]),
        Case([_rand((5, 7)), _ids((2, 4), 7, I64)], consts=[np.int32(1)]),
        Case([_rand((4, 3, 6), I32), _ids((), 6)], consts=[np.int32(-1)]),
        Case([_rand((3, 300), F64), _ids((257,), 300)], consts=[np.int64(1)]),
        Case([_rand((5, 7), bool), _ids((0,), 5)], consts=[np.int32(0)]),
        Case([_rand((0, 4)), _ids((0, 2), 1)], consts=[np.int32(0)]),
        Case([_rand((6, 0, 3)), _ids((4,), 6, I64)], consts=[np.int32(0)]),
        Case([_rand((1000,)), _ids((1000,), 1000, I64)], consts=[np.int32(0)]),
        Case([_rand((3, 5), I64), _ids((2, 2), 3)], consts=[np.int32(0)]),
        Case([_rand((2, 5, 3)), _ids((2, 4), 5)], {"batch_dims": 1},
             consts=[np.int32(1)]),
        Case([_rand((2, 3, 5, 2)), _ids((2, 3, 4), 5, I64)], {"batch_dims": -1},
             consts=[np.int32(2)]),
    ]
    return cases


def _scatter():
    return [
        Case([_ids((6, 1), 4), _rand((6, 3))], consts=[np.array([4, 3], I32)]),
        Case([_ids((5, 2), 3), _rand((5, 2))], consts=[np.array([3, 3, 2], I32)]),
        Case([_ids((0, 1), 4), _rand((0, 3))], consts=[np.array([4, 3], I32)]),
        Case([_ids((300, 1), 7, I64), _rand((300, 17), F64)],
             consts=[np.array([7, 17], I64)]),
        Case([_ids((9, 1), 5), _rand((9,), I32)], consts=[np.array([5], I32)]),
        Case([_ids((2, 3, 1), 5, I64), _rand((2, 3, 4), I64)],
             consts=[np.array([5, 4], I64)]),
        Case([_ids((1000, 1), 3), _rand((1000,))], consts=[np.array([3], I32)]),
    ]


def _select():
    return [
        Case([_rand((3, 5), bool), _rand((3, 5)), _rand((3, 5))]),
        Case([_rand((), bool), _rand((3, 5), I32), _rand((3, 5), I32)]),
        Case([_rand((3,), bool), _rand((3, 5, 2), F64), _rand((3, 5, 2), F64)]),
        Case([_rand((0,), bool), _rand((0, 4)), _rand((0, 4))]),
        Case([_rand((4, 7), bool), _rand((4, 7), bool), _rand((4, 7), bool)]),
        Case([_rand((1001,), bool), _rand((1001,), I64), _rand((1001,), I64)]),
    ]


def _select_v2():
    return [
        Case([_rand((3, 1), bool), _rand((1, 5)), _rand((3, 5))]),
        Case([_rand((), bool), _rand((4,), I32), _rand((), I32)]),
        Case([_rand((2, 3, 1, 4, 1, 5), bool), _rand((3, 2, 4, 1, 5), F64),
              _rand((1, 1, 1, 1, 1), F64)]),
        Case([_rand((0, 3), bool), _rand((3,)), _rand((1, 3))]),
        Case([_rand((5,), bool), _rand((2, 5), I64), _rand((2, 1), I64)]),
        Case([_rand((2, 2), bool), _rand((2, 2), bool), _rand((2, 2), bool)]),
    ]


def _fill():
    return [
        Case([np.array([3, 5], I32), np.float32(2.5)]),
        Case([np.array([], I32), np.int32(-7)]),
        Case([np.array([0, 4], I32), np.float64(1.25)]),
        Case([np.array([1001], I64), np.bool_(True)]),
        Case([np.array([2, 3, 4], I64), np.int64(2 ** 40)]),
    ]


def _near_one(shape, dtype=F32):
    return _rand(shape, dtype, 0.999, 1.001) if np.dtype(dtype).kind == "f" else \
        _rng.choice(np.array([-1, 1, 1, 2], dtype), shape)


def _prod():
    cases = []
    for shape, axes in [((5, 7), [1]), ((5, 7), [0]), ((3, 4, 5), [0, 2]), ((3, 1, 4), [1]),
                        ((10000,), [0]), ((3, 9000), [1]), ((3, 0), [1]), ((3, 0), [0]),
                        ((4, 5), [])]:
        for keep in (False, True):
            cases.append(Case([_near_one(shape)], {"keep_dims": keep},
                              consts=[np.array(axes, I32)]))
    cases += [Case([_near_one((6, 7), d)], {"keep_dims": False}, consts=[np.array([1], I32)])
              for d in (F64, I32)]
    return cases


def _with_nans(shape, dtype=F32):
    x = _rand(shape, dtype)
    x[_rng.uniform(0, 1, shape) < 0.1] = np.nan
    return x


def _arg():
    cases = []
    for x, axis in [(_rand((5, 7)), 1), (_rand((5, 7)), 0), (_rand((3, 4, 5)), -2),
                    (_rand((10000,)), 0), (_rand((3, 9000)), 1), (_rand((0, 4)), 1),
                    (_rand((6, 50), I32, -1, 1), 1), (_rand((50, 6), I32, -1, 1), 0),
                    (_with_nans((9, 70)), 1), (_with_nans((70, 9)), 0),
                    (_rand((4, 6), F64), 1), (_rand((7, 1)), 1)]:
        for out in (tf.int64, tf.int32):
            cases.append(Case([x], {"output_type": out}, consts=[np.int32(axis)]))
    return cases


def _log_softmax():
    cases = [Case([_rand(s, lo=-20, hi=20)]) for s in [(3, 5), (2, 3, 100), (7,), (0, 3),
                                                       (4, 1), (2, 700)]]
    cases += [Case([_rand((3, 5))], {"axis": 0}), Case([_rand((2, 3, 4))], {"axis": 1}),
              Case([_rand((3, 4), F64)])]
    return cases


def _sparse_xent():
    cases = [Case([_rand(s, lo=-10, hi=10), _ids(s[:1], max(s[1], 1), d)], outputs=2)
             for s, d in [((3, 5), I32), ((4, 100), I64), ((1, 1), I32), ((0, 3), I32),
                          ((70, 300), I64)]]
    cases.append(Case([_rand((3, 4), F64), _ids((3,), 4)], outputs=2))
    return cases


def _batch_matmul(broadcast: bool):
    shapes = [((2, 3, 4), (2, 4, 5)), ((2, 3, 5, 4), (2, 3, 4, 7)), ((0, 3, 4), (0, 4, 5)),
              ((3, 4), (4, 5)), ((2, 3, 0), (2, 0, 5)), ((2, 33, 17), (2, 17, 40))]
    if broadcast:
        shapes += [((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5))]
    cases = []
    for sa, sb in shapes:
        for adj_x in (False, True):
            for adj_y in (False, True):
                a = _rand((*sa[:-2], sa[-1], sa[-2]) if adj_x else sa)
                b = _rand((*sb[:-2], sb[-1], sb[-2]) if adj_y else sb)
                cases.append(Case([a, b], {"adj_x": adj_x, "adj_y": adj_y}, rtol=1e-4))
    cases.append(Case([_rand((2, 3, 4), F64), _rand((2, 4, 2), F64)]))
    return cases


def _unsorted_segment_sum():
    cases = []
    for data, ids, n in [((7, 3), [0, 2, 2, -1, 1, 0, 2], 4), ((5,), [4, 0, 4, 4, 1], 5),
                         ((2, 3, 4), [[0, 1, 1], [2, 0, -1]], 3), ((0, 3), [], 2),
                         ((4, 2), [1, 1, 1, 1], 6), ((9000, 2), list(range(9000)), 9000)]:
        cases.append(Case([_rand(data), np.array(ids, np.int32).reshape(data[:np.ndim(ids)]),
                           np.array(n, np.int32)]))
    cases.append(Case([_rand((6, 2), F64), np.array([3, 0, 3, 1, 0, 3], np.int64),
                       np.array(4, np.int64)]))
    cases.append(Case([_rand((6, 2), I32), np.array([3, 0, 3, 1, 0, 3], np.int32),
                       np.array(5, np.int32)]))
    return cases


def _segment_sum():
    return [Case([_rand(s), np.array(ids, np.int32)]) for s, ids in [
        ((6, 3), [0, 0, 1, 3, 3, 3]), ((4,), [0, 1, 2, 3]), ((0, 2), []),
        ((5, 2, 2), [2, 2, 2, 2, 2])]] + [
        Case([_rand((3, 2), F64), np.array([0, 1, 1], np.int64)])]


CASES = {
    "UnsortedSegmentSum": _unsorted_segment_sum(),
    "SegmentSum": _segment_sum(),
    "GatherV2": _gather(),
    "ScatterNd": _scatter(),
    "Select": _select(),
    "SelectV2": _select_v2(),
    "Fill": _fill(),
    "Prod": _prod(),
    "ArgMax": _arg(),
    "ArgMin": _arg(),
    "LogSoftmax": _log_softmax(),
    "SparseSoftmaxCrossEntropyWithLogits": _sparse_xent(),
    "BatchMatMul": _batch_matmul(False),
    "BatchMatMulV2": _batch_matmul(True),
}
