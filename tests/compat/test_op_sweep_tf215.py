"""Replay of the differential op sweep against TensorFlow 2.15's recorded results.

`op_sweep_cases.py` / `op_sweep_cases_more.py` generate ~2,600 small cases over about 200
public functions (elementwise math over bool, int8-64, uint8/16, float16-64, complex and
string; special values (NaN, inf, -0, integer limits); casts between every pair of dtypes;
array ops with negative and out-of-range axes, masks, batch_dims, pad modes and empty
shapes; nn, image, linalg, sparse and string ops). `op_sweep.py` runs each one and records
its output dtypes, static and dynamic shapes, values, `tf.gradients` values and where it
failed (build, run or gradient) with which exception class. TensorFlow's records live in
``tests/data/op_sweep_tf215.json`` (recorded with ``op_sweep.py --tf``); this test runs
every case under flowgraph and compares.

Classes of discrepancy the sweep found and fixed (each one fails this test when undone):
dtypes TensorFlow's ops accept but its CPU kernels do not (Reciprocal of ints, RealDiv /
FloorDiv / TruncateDiv of complex, Round of complex, Rint / Erfinv / Ndtri / Igamma(c) /
TruncateMod of float16, Unique of complex, Cast to and from string) build and fail at run;
refusals at build (Real of bool/string, ArgMax of complex, TruncateMod of small ints);
`div_no_nan` of integers; `l2_normalize` and `as_string` of complex; NaN in ArgMax/ArgMin;
the poles of digamma, zeta and polygamma (Eigen's NaN); integer and float16 means; float16
to uint16 casts; duplicate reduction axes; `log_sigmoid`'s gradient at 0, `cumprod`'s at 0,
NextAfter's; gradients of gather with batch_dims, of einsum with repeated labels and of
svd through u and v; no gradient for Unique and TruncateMod (LookupError); errors TF
raises at run rather than build (Slice/Transpose/Cumsum/MirrorPad/Reshape bounds); the
static shape of `sparse.maximum`'s indices; reshape of an empty tensor with -1.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

import flowgraph as tf

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # tf.to_int32 & co
              pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")]  # 1e30 as f16
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import op_sweep  # noqa: E402
import op_sweep_cases  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                       "op_sweep_tf215.json")

# Differences left on purpose: TensorFlow 2.15 artifacts, not TF1 behaviour to copy.
KNOWN = {
    # TF's constant conversion goes through NumPy < 2, which wraps out-of-range Python ints
    # silently (NumPy 2 raises); flowgraph refuses them with a TypeError
    "special/clip/uint8": "numpy<2 wraps -2 to uint8 254 in clip_by_value's bounds",
    "special/clip/uint16": "numpy<2 wraps -2 to uint16 65534 in clip_by_value's bounds",
    "shapes/python_big_int": "numpy<2 wraps 2**40 to int32 0",
    "shapes/int_overflow_const": "numpy<2 wraps 300 to int8 44",
    "shapes/neg_uint": "numpy<2 wraps -1 to uint8 255",
    # kernel internals
    "special/softmax/float32": "TF's vectorized float32 max skips NaN: softmax([nan, inf, "
                               "...]) is 0 off the NaN/inf entries in float32 only",
    "special/unique/float16": "TF hashes float16 -0.0 apart from 0.0",
    "array/reduce/count_nonzero_f": "TF's CPU flushes the denormal 1e-40 to zero",
    "array/reshape/two_minus1": "TF's graph optimizer folds a constant reshape with two -1 "
                                "entries (from a placeholder it fails at run, as in flowgraph)",
    # TF 2.15's compat.v1 image ops refuse uint8 images that TF 1.x resized / standardized
    "image/resize/nearest_u8": "TF 2.15: TypeError ('start' has DataType uint8)",
    "image/resize/bilinear_u8": "TF 2.15: TypeError ('start' has DataType uint8)",
    "image/standardization": "TF 2.15: TypeError ('start' has DataType uint8)",
}

FAMILIES = ["unary", "binary", "bcast", "special", "cast", "array", "nn", "image", "linalg",
            "sparse", "strings", "shapes"]


@pytest.fixture(scope="module")
def recorded():
    with open(FIXTURE) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def cases():
    return dict(op_sweep_cases.all_cases())


def test_every_case_is_recorded(recorded, cases):
    assert sorted(cases) == sorted(recorded)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_matches_tensorflow(family, recorded, cases):
    diffs = []
    for cid, fn in cases.items():
        if cid.split("/", 1)[0] != family or cid in KNOWN:
            continue
        d = op_sweep.compare(recorded[cid], op_sweep.run_case(tf, fn))
        if d:
            diffs.append(f"{cid}: {'; '.join(d)}")
    assert not diffs, "\n".join(diffs)


def test_known_differences_still_differ(recorded, cases):
    """A left difference that disappears should leave the list."""
    gone = [cid for cid in KNOWN
            if not op_sweep.compare(recorded[cid], op_sweep.run_case(tf, cases[cid]))]
    assert not gone, gone
