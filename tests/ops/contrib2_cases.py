"""Registry-wide contract cases for the tf.contrib round-2 ops: staging areas
(``Stage`` ...), summary writers (``SummaryWriter``, ``Write*Summary`` ...) and k-means
(``NearestNeighbors`` ...), in the ``(inputs, build, options)`` format of
`issue15_math_cases`."""

from __future__ import annotations

import tempfile

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op

R = np.random.RandomState(1602)
SETUP = "op_contract_setup"
_LOGDIR = tempfile.mkdtemp(prefix="fg_contract_summaries_")
_NO_FETCH = {"fetch": lambda op: []}
_UNKNOWN = {"value_dependent": True}  # TF leaves these shapes unknown too


def _f64(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _staging(x):
    area = tf.contrib.staging.StagingArea([x.dtype.base_dtype])
    put = area.put([x])
    with tf.control_dependencies([put]):
        size = area.size()
        peek = area.peek(0)
    with tf.control_dependencies([size, *peek]):
        got = area.get()
    with tf.control_dependencies(got):
        area.clear()


def _writer():
    res = make_op("SummaryWriter", [], {"shared_name": "contract"}).outputs[0]
    init = make_op("CreateSummaryFileWriter", [
        res, tf.constant(_LOGDIR), tf.constant(10), tf.constant(1000), tf.constant(".v2")])
    tf.add_to_collection(SETUP, init)
    return res


def _write(op_type, make_inputs, attrs=None):
    def build(x):
        res = _writer()
        make_op(op_type, [res, *make_inputs(x)], attrs or {})
    return build


def _step():
    return tf.constant(3, tf.int64)


_WRITES = {
    "WriteScalarSummary": _write("WriteScalarSummary", lambda x: [
        _step(), tf.constant("s"), tf.reduce_sum(x)], {"T": tf.float64}),
    "WriteHistogramSummary": _write("WriteHistogramSummary", lambda x: [
        _step(), tf.constant("h"), x], {"T": tf.float64}),
    "WriteImageSummary": _write("WriteImageSummary", lambda x: [
        _step(), tf.constant("i"), tf.reshape(tf.cast(x, tf.float32), [1, 2, 3, 1]),
        tf.constant([255, 0, 0, 255], tf.uint8)], {"max_images": 1, "T": tf.float32}),
    "WriteAudioSummary": _write("WriteAudioSummary", lambda x: [
        _step(), tf.constant("a"), tf.reshape(tf.cast(x, tf.float32), [1, 6]),
        tf.constant(8000.0)], {"max_outputs": 1}),
    "WriteSummary": _write("WriteSummary", lambda x: [
        _step(), x, tf.constant("t"), tf.constant("")], {"T": tf.float64}),
    "WriteGraphSummary": _write("WriteGraphSummary", lambda x: [_step(), tf.constant(b"")]),
    "ImportEvent": _write("ImportEvent", lambda x: [tf.constant(
        tf.Event(step=1, wall_time=2.0).SerializeToString())]),
    "FlushSummaryWriter": _write("FlushSummaryWriter", lambda x: []),
    "CloseSummaryWriter": _write("CloseSummaryWriter", lambda x: []),
}


def _clustering(x):
    pts = tf.cast(x, tf.float32)
    make_op("NearestNeighbors", [pts, pts[:2], tf.constant(2, tf.int64)])
    make_op("KmeansPlusPlusInitialization", [pts, tf.constant(2, tf.int64),
                                             tf.constant(5, tf.int64),
                                             tf.constant(-1, tf.int64)])
    make_op("KMC2ChainInitialization", [tf.reduce_sum(pts * pts, 1), tf.constant(3, tf.int64)])


CONTRACT_CASES: dict = {
    "Stage": [([_f64(2, 3)], _staging, {})],
    "StageSize": [([_f64(2, 3)], _staging, {})],
    "StageClear": [([_f64(2, 3)], _staging, {})],
    "Unstage": [([_f64(2, 3)], _staging, _UNKNOWN)],
    "StagePeek": [([_f64(2, 3)], _staging, _UNKNOWN)],
    "SummaryWriter": [([_f64(3)], _write("FlushSummaryWriter", lambda x: []), _NO_FETCH)],
    "CreateSummaryFileWriter": [([_f64(3)], _write("FlushSummaryWriter", lambda x: []), {})],
    **{name: [([_f64(2, 3)], build, {})] for name, build in _WRITES.items()},
    # TF leaves the shapes of NearestNeighbors and KmeansPlusPlusInitialization unknown.
    **{name: [([_f64(4, 3)], _clustering, _UNKNOWN)] for name in (
        "NearestNeighbors", "KmeansPlusPlusInitialization")},
    "KMC2ChainInitialization": [([_f64(4, 3)], _clustering, {})],
}

SKIP = {"CreateSummaryDbWriter": "raises UnimplementedError (no SQLite sink); "
                                 "tests/compat/test_contrib_round2.py checks the error"}
