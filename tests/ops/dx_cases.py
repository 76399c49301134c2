"""Op-contract cases for the tf.data Optional and iterator-state ops, the dataset writer
and variant ops (`flowgraph/ops/dataset_optional_ops.py`), RFFT3D / IRFFT3D
(`spectral_3d_ops.py`) and RaggedRange (`ragged_array_ops.py`), in the
``(inputs, build, options)`` form of `issue15_cov_cases.CONTRACT_CASES`;
`tests/ops/test_op_contract.py` runs them."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import flowgraph as tf

R = np.random.RandomState(16)
SETUP = "op_contract_setup"  # test_op_contract runs this collection's ops first


def _f64(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _optional(x):
    opt = tf.data.experimental.Optional.from_value((x, x * 2.0))
    opt.has_value()
    opt.get_value()
    tf.data.experimental.Optional.empty(tf.TensorSpec([2], tf.float64)).has_value()


def _iterator(x):
    it = tf.data.Dataset.from_tensor_slices(x).make_initializable_iterator()
    tf.add_to_collection(SETUP, it.initializer)
    opt = tf.data.experimental.get_next_as_optional(it)
    opt.get_value()
    saveable = tf.data.experimental.make_saveable_from_iterator(it)
    with tf.control_dependencies([opt.has_value()]):
        state = tf.identity(saveable.state)
    saveable.restore([state])


def _to_tfrecord(x):
    path = os.path.join(tempfile.mkdtemp(), "c.tfrecord")
    ds = tf.data.Dataset.from_tensor_slices(tf.as_string(x))
    tf.data.experimental.TFRecordWriter(path).write(ds)
    tf.data.experimental.to_variant(ds)


def _save_dataset(x):
    path = os.path.join(tempfile.mkdtemp(), "saved")
    tf.data.Dataset.from_tensor_slices(x).save(path)


def _fft3d(x):
    r = tf.signal.rfft3d(x)
    tf.signal.irfft3d(r, fft_length=[2, 3, 4])


def _ragged_range(x):
    n = tf.cast(tf.abs(x[:, 0]) * 3, tf.int64)
    tf.ragged.range(n)
    tf.ragged.range(tf.cast(x[:, 0], tf.float32), 3.0, 0.5)


# TensorFlow registers no gradient for these: tf.gradients raises LookupError (tested in
# tests/ops/test_ragged_signal_gapfill.py)
NO_GRADIENT_LIKE_TENSORFLOW = frozenset({"RFFT3D", "IRFFT3D"})

_NO_FETCH = {"fetch": lambda op: []}  # variants and handles are Python objects
_UNKNOWN = {"value_dependent": True}
_KNOWN_RANK = ("static", "batch", "dims")

CONTRACT_CASES: dict = {
    **{name: [([_f64(2)], _optional, {})] for name in (
        "OptionalHasValue", "OptionalGetValue")},
    **{name: [([_f64(2)], _optional, _NO_FETCH)] for name in (
        "OptionalFromValue", "OptionalNone")},
    "IteratorGetNextAsOptional": [([_f64(3, 2)], _iterator, _NO_FETCH)],
    "SerializeIterator": [([_f64(3, 2)], _iterator, {})],
    "DeserializeIterator": [([_f64(3, 2)], _iterator, _NO_FETCH)],
    # a dataset of slices needs the input's rank when it is built
    "DatasetToTFRecord": [([_f64(3)], _to_tfrecord, {**_NO_FETCH, "modes": _KNOWN_RANK})],
    "DatasetVariant": [([_f64(3)], _to_tfrecord, {**_NO_FETCH, "modes": _KNOWN_RANK})],
    "SaveDataset": [([_f64(3)], _save_dataset, {**_NO_FETCH, "modes": _KNOWN_RANK})],
    "RFFT3D": [([_f64(2, 2, 3, 4)], _fft3d, {})],
    "IRFFT3D": [([_f64(2, 2, 3, 4)], _fft3d, {})],
    "RaggedRange": [([_f64(4, 2)], _ragged_range, _UNKNOWN)],
}

