"""Parity cases for the OpenCL shape kernels (kernels_shape.py): views and host-side
shape queries."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from tests.backends.opencl_cases import F32, F64, I32, Case, _rand

I64 = np.int64


def _reshape():
    return [Case([_rand(s, d), np.array(t, np.int32)]) for s, t, d in [
        ((3, 4), [12], F32), ((3, 4), [-1, 2], F32), ((2, 3, 4), [4, -1], I32),
        ((0, 4), [2, 0, 2], F32), ((5,), [5, 1, 1], F64), ((), [1, 1], F32),
        ((6,), [], F32)] if not (t == [] and s != (1,))] + [
        Case([_rand((1,)), np.array([], np.int32)])]


CASES = {
    "Reshape": _reshape(),
    "ExpandDims": [Case([_rand(s), np.array(a, np.int32)]) for s, a in [
        ((3, 4), 0), ((3, 4), -1), ((3, 4), 2), ((), 0), ((0, 2), 1)]],
    "Squeeze": [Case([_rand(s)], {"squeeze_dims": d}) for s, d in [
        ((1, 3, 1), []), ((1, 3, 1), [0]), ((1, 3, 1), [-1]), ((1, 1), []), ((0, 1), [1])]],
    "Shape": [Case([_rand(s)], {"out_type": t}) for s, t in [
        ((3, 4), tf.int32), ((), tf.int32), ((0, 5, 2), tf.int64)]],
    "ShapeN": [Case([_rand((3, 4)), _rand((2,))], {"N": 2, "out_type": tf.int32}, outputs=2)],
    "Size": [Case([_rand(s)], {"out_type": t}) for s, t in [
        ((3, 4), tf.int32), ((), tf.int64), ((0, 3), tf.int32)]],
    "Rank": [Case([_rand(s)]) for s in [(3, 4), (), (2, 1, 5)]],
    "BroadcastGradientArgs": [
        Case([np.array(a, d), np.array(b, d)], outputs=2) for a, b, d in [
            ([2, 3], [3], np.int32), ([4, 1, 3], [1, 5, 1], np.int32), ([], [2, 2], np.int32),
            ([2, 1], [2, 1], I64)]],
}
