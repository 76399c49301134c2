"""tf.data names added for TF1 API coverage (issue 15): FixedLengthRecordDataset, Options
and with_options, NumpyIterator, the cardinality constants. Expected records were
recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle."""

from __future__ import annotations

import doctest

import pytest

import flowgraph as tf
import flowgraph.data
from flowgraph.data import dataset_ops_fixed_length, options


@pytest.mark.parametrize("module", [options, dataset_ops_fixed_length])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _records(ds):
    with tf.Graph().as_default():
        nxt = tf.data.make_one_shot_iterator(ds.batch(10)).get_next()
        with tf.Session() as sess:
            return sess.run(nxt).tolist()


def test_fixed_length_records_match_tensorflow(tmp_path):
    path = str(tmp_path / "f.bin")
    with open(path, "wb") as f:
        f.write(b"HDR" + bytes(range(12)) + b"FT")
    got = _records(tf.data.FixedLengthRecordDataset([path, path], 4, header_bytes=3,
                                                    footer_bytes=2))
    assert got == [b"\x00\x01\x02\x03", b"\x04\x05\x06\x07", b"\x08\t\n\x0b"] * 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a whole number"):
        _records(tf.data.FixedLengthRecordDataset(path, 5, header_bytes=3))
    with pytest.raises(ValueError, match="record_bytes must be positive"):
        tf.data.FixedLengthRecordDataset(path, 0)


def test_gzip_fixed_length(tmp_path):
    import gzip

    path = str(tmp_path / "f.gz")
    with gzip.open(path, "wb") as f:
        f.write(b"abcdef")
    assert _records(tf.data.FixedLengthRecordDataset(path, 3, compression_type="GZIP")) == [
        b"abc", b"def"]


def test_options_merge_and_attach():
    a = tf.data.Options()
    a.experimental_deterministic = False
    a.threading.private_threadpool_size = 3
    ds = tf.data.Dataset.range(3).with_options(a)
    assert ds.options().deterministic is False
    assert ds.options().threading.private_threadpool_size == 3
    b = tf.data.Options()
    b.deterministic = True
    # TF 2 merges a conflicting option by taking the later value (with a warning).
    assert ds.map(lambda x: x).with_options(b).options().deterministic is True
    with pytest.raises(AttributeError, match="no option"):
        a.not_an_option = 1
    assert _records(ds) == [0, 1, 2]
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)


def test_numpy_iterator_structures():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0], [2.0]]})
    got = list(tf.data.NumpyIterator(ds))
    assert [int(e["a"]) for e in got] == [1, 2] and got[1]["b"].tolist() == [2.0]
