"""Registry-wide cases for the segment, partition/stitch, special-math and counter ops
(issue 15): `GRADIENT_CASES` merge into `test_gradient_registry.CASES` (and through it
into the op contract); `CONTRACT_CASES` are contract-only ``(inputs, build, options)``
cases for ops without a gradient; `VALUE_DEPENDENT` names the op types whose output
shapes depend on input values (the number of segments or of rows in a partition)."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import flowgraph as tf
from flowgraph.ops.gather_v1_ops import gather_v1

R = np.random.RandomState(1515)
SETUP = "op_contract_setup"


def _u(*shape, low=-2.0, high=2.0):
    return R.uniform(low, high, size=shape)


def _distinct(*shape):
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.1 - n * 0.05 + 0.03).reshape(shape)


def _away(*shape):
    return R.uniform(0.3, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)


_IDS = np.array([0, 0, 2, 2, 2, 3], np.int32)  # sorted, segment 1 empty
_UIDS = np.array([[2, 0, -1], [2, 3, 0]], np.int64)  # unsorted, 2-D, one dropped row
# Every segment present: an empty max/min segment holds the dtype's extreme value, whose
# product with the checker's random weights would overflow.
_UFULL = np.array([[2, 0, -1], [1, 3, 0]], np.int64)

VALUE_DEPENDENT = {"SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd",
                   "DynamicPartition"}

GRADIENT_CASES = {
    "Gather": [([_u(4, 3)], lambda x: gather_v1(x, [[2, 0], [2, 3]]) * 2.0),
               ([_u(5)], lambda x: gather_v1(x * x, np.array([4, 4, 1], np.int64)))],
    "SegmentSum": [([_u(6, 2)], lambda x: tf.segment_sum(x, _IDS)),
                   ([_u(6)], lambda x: tf.math.segment_sum(x * x, _IDS))],
    "SegmentMean": [([_u(6, 3)], lambda x: tf.segment_mean(x, _IDS))],
    "SegmentMax": [([_distinct(6, 2)], lambda x: tf.segment_max(x, _IDS))],
    "SegmentMin": [([_distinct(6, 2)], lambda x: tf.segment_min(x, _IDS))],
    "SegmentProd": [([_away(6, 2)], lambda x: tf.segment_prod(x, _IDS)),
                    ([np.array([0.0, 1.5, -0.7, 0.0, 0.0, 1.2])],  # one zero, then two
                     lambda x: tf.segment_prod(x, [0, 0, 1, 1, 1, 2]))],
    "UnsortedSegmentSum": [([_u(2, 3, 2)], lambda x: tf.unsorted_segment_sum(x, _UIDS, 4)),
                           ([_u(6)], lambda x: tf.unsorted_segment_mean(x, _IDS, 5)),
                           ([_u(6, 2)], lambda x: tf.unsorted_segment_sqrt_n(x, _IDS, 4))],
    "UnsortedSegmentMax": [([_distinct(2, 3, 2)],
                            lambda x: tf.unsorted_segment_max(x, _UFULL, 4))],
    "UnsortedSegmentMin": [([_distinct(2, 3)], lambda x: tf.unsorted_segment_min(x, _UFULL, 4))],
    "UnsortedSegmentProd": [([_away(2, 3, 2)], lambda x: tf.unsorted_segment_prod(
        x, _UIDS, 4)), ([np.array([[0.0, 1.5, 2.0], [0.5, 0.0, 0.0]])],
                        lambda x: tf.unsorted_segment_prod(x, [[0, 1, 1], [0, 2, 2]], 3))],
    "DynamicPartition": [([_u(5, 2)], lambda x: tf.concat(tf.dynamic_partition(
        x, [1, 0, 2, 1, 1], 3), 0) * np.arange(10.0).reshape(5, 2)),
        ([_u(2, 3)], lambda x: tf.dynamic_partition(x * x, [[0, 1, 0], [1, 1, 0]], 2)[1])],
    "DynamicStitch": [([_u(2, 2), _u(3, 2)], lambda a, b: tf.dynamic_stitch(
        [[0, 3], [1, 2, 4]], [a, b])),
        ([_u(2), _u(1)], lambda a, b: tf.dynamic_stitch([[2, 0], [1]], [a, b]))],
    "Acos": [([_u(3, 2, low=-0.8, high=0.8)], tf.acos)],
    "Asin": [([_u(3, 2, low=-0.8, high=0.8)], tf.asin)],
    "Atan": [([_u(3, 2)], tf.atan)],
    "Acosh": [([_u(3, 2, low=1.2, high=3.0)], tf.acosh)],
    "Asinh": [([_u(3, 2)], tf.asinh)],
    "Atanh": [([_u(3, 2, low=-0.8, high=0.8)], tf.atanh)],
    "Cosh": [([_u(3, 2)], tf.cosh)],
    "Sinh": [([_u(3, 2)], tf.sinh)],
    "Lgamma": [([_u(3, 2, low=0.5, high=4.0)], tf.lgamma)],
    "Digamma": [([_u(3, 2, low=0.5, high=4.0)], tf.digamma)],
    "Erfc": [([_u(3, 2)], tf.erfc)],
    "Erfinv": [([_u(3, 2, low=-0.8, high=0.8)], tf.math.erfinv)],
    "Ndtri": [([_u(3, 2, low=0.1, high=0.9)], tf.math.ndtri)],
    "BesselI0e": [([_away(3, 2)], tf.math.bessel_i0e)],
    "BesselI1e": [([_away(3, 2)], tf.math.bessel_i1e)],
    "Atan2": [([_u(3, 2), _away(3, 2)], tf.atan2),
              ([_u(3, 1), _away(2)], tf.atan2)],
    "Igamma": [([_u(3, 2, low=0.5, high=3.0)], lambda x: tf.igamma(
        np.array([[0.5, 1.5]]), x))],
    "Igammac": [([_u(3, 2, low=0.5, high=3.0)], lambda x: tf.igammac(
        np.array([1.0, 2.5]), x))],
    "Zeta": [([_u(3, 2, low=0.5, high=2.0)], lambda q: tf.zeta(np.array([2.0, 3.5]), q))],
    "Polygamma": [([_u(3, 2, low=0.5, high=3.0)], lambda x: tf.polygamma(
        np.array([0.0, 1.0]), x))],
    "Betainc": [([_u(3, 2, low=0.1, high=0.9)], lambda x: tf.betainc(
        np.full((3, 2), 1.5), np.full((3, 2), 2.5), x))],
    "Xlogy": [([_u(3, 2), _u(3, 2, low=0.3, high=2.0)], tf.math.xlogy),
              ([_u(2, 1), _u(3, low=0.3, high=2.0)], tf.math.xlogy)],
    "Xdivy": [([_u(3, 2), _away(3, 2)], tf.math.xdivy)],
    "Xlog1py": [([_u(3, 2), _u(3, 2, low=-0.5, high=2.0)], tf.math.xlog1py)],
}


def _count_up_to():
    v = tf.Variable(tf.constant(0, tf.int64), name="counter")
    tf.add_to_collection(SETUP, v.initializer)
    return tf.count_up_to(v, 10)


_FILES = tempfile.mkdtemp(prefix="issue15_math_cases_")
for _n in ("b.csv", "a.csv", "c.txt"):
    open(os.path.join(_FILES, _n), "w").close()
_I = np.array([[1, -8, 100], [7, 0, 3]], np.int32)
_S = np.array([2, 1, 40], np.int32)

CONTRACT_CASES = {
    "BitwiseAnd": [([_I, _S], tf.bitwise.bitwise_and, {})],
    "BitwiseOr": [([_I, _S], tf.bitwise.bitwise_or, {})],
    "BitwiseXor": [([_I, np.int32(5)], tf.bitwise.bitwise_xor, {})],
    "LeftShift": [([_I, _S], tf.bitwise.left_shift, {})],
    "RightShift": [([_I.astype(np.int64), _S.astype(np.int64)], tf.bitwise.right_shift, {})],
    "MatchingFiles": [([np.array([os.path.join(_FILES, "*.csv").encode(),
                                   os.path.join(_FILES, "c*").encode()], object)],
                       tf.matching_files, {"value_dependent": True})],
    "Invert": [([np.array([0, 5, 255], np.uint8)], tf.bitwise.invert, {})],
    "Rint": [([_u(3, 2) * 3], tf.rint, {})],
    "NextAfter": [([_u(3, 2), _u(2)], tf.math.nextafter, {})],
    "CountUpTo": [([], _count_up_to, {})],
    "SegmentSum": [([np.arange(6, dtype=np.int32)], lambda x: tf.segment_sum(x, _IDS), {})],
    "UnsortedSegmentMax": [([np.arange(6, dtype=np.int64).reshape(2, 3)],
                            lambda x: tf.unsorted_segment_max(x, _UIDS, 5), {})],
}
