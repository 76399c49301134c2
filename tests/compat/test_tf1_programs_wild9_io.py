"""TF1 input-pipeline programs from the wild, ninth sweep (area: io).

Nineteen programs in the style of 2016-2020 tutorials and answers, each run under
TensorFlow 2.15 (tf.compat.v1) and flowgraph with the tf-oracle: one-shot, initializable
(fed), reinitializable (``Iterator.from_structure``) and feedable (``string_handle``)
iterators; ``from_generator`` with ``output_shapes`` and ``padded_batch``; TFRecord files
(GZIP too) of Examples and SequenceExamples parsed with ``parse_single_example`` /
``parse_example`` / ``parse_single_sequence_example`` (VarLen, FixedLenSequence,
SparseFeature, feature columns); ``interleave`` over text files and ``cache`` to a file;
``tf.data.experimental`` (``unbatch``, ``enumerate_dataset``, ``make_batched_features_
dataset``, ``make_saveable_from_iterator``); queue pipelines (``string_input_producer`` +
``TextLineReader`` + ``decode_csv`` + ``batch(allow_smaller_final_batch=True)``,
``slice_input_producer`` + ``batch_join``, ``FixedLengthRecordReader`` + ``decode_raw``,
``TFRecordReader.read_up_to``, Coordinator/QueueRunner shutdown); ``tf.gfile``,
``read_file``/``write_file``, ``decode_png``/``decode_image`` of a file TF wrote; string
ops and ``py_func``/``py_function`` in ``map``.

Classes of discrepancy found (each test below fails on the code before its fix):

- A string tensor sliced to one element (``serialized[i]``, ``StridedSlice``) came back as
  a fixed-width bytes value, which drops trailing NUL bytes: a serialized Example whose
  last field is an int64 0 no longer parsed ("Could not parse example input").
- ``Dataset.cache(filename)`` kept the cache in memory only; TensorFlow writes a tensor
  bundle at `filename` and a later program (TensorFlow's or flowgraph's) reads it
  instead of its input.

The parsing functions now build TensorFlow's ``ParseExampleV2`` /
``ParseSequenceExampleV2`` (tests/ops/test_raw_parse.py). The other programs gave
TensorFlow's output first time; ``batch_join``'s interleaving of its two enqueue threads
is scheduling-dependent in both (only the element count is compared).
"""

from __future__ import annotations

import os

import numpy as np

import flowgraph as tf
from tests.framework.example_support import serialized_example

_example = serialized_example


def test_one_serialized_example_sliced_from_a_batch_keeps_its_trailing_zero_bytes():
    # {"l": int64 [0]} serializes to bytes ending in 0x00 (the varint 0)
    batch = np.array([_example(a=[1.0, 2.0], l=[1]), _example(a=[0.5, -1.0], l=[0])], object)
    assert batch[1].endswith(b"\x00")
    with tf.Graph().as_default():
        ser = tf.placeholder(tf.string, [None])
        one = tf.io.parse_single_example(ser[1], {"a": tf.io.FixedLenFeature([2], tf.float32),
                                                  "l": tf.io.VarLenFeature(tf.int64)})
        with tf.Session() as sess:
            out, length = sess.run([one, tf.strings.length(ser[1])], {ser: batch})
    # TensorFlow 2.15: a [0.5, -1.0], l values [0], the slice 33 bytes long
    assert out["a"].tolist() == [0.5, -1.0] and out["l"].values.tolist() == [0]
    assert length == len(batch[1]) == 33


def _cached_run(directory: str, base: int):
    path = os.path.join(directory, "feat_cache")
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices((
            np.arange(base, base + 4, dtype=np.float32), np.array([b"a", b"b", b"c", b"d"])))
        ds = ds.map(lambda x, s: (x * 2, s, tf.fill([2], x))).cache(path).batch(3)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        out = []
        with tf.Session() as sess:
            try:
                while True:
                    out.append([c.tolist() for c in sess.run(nxt)])
            except tf.errors.OutOfRangeError:
                pass
    return out


def test_cache_to_a_file_writes_tensorflows_bundle_and_a_later_program_reads_it(tmp_path):
    # TensorFlow 2.15 prints these batches, writes feat_cache.data-00000-of-00001 and
    # feat_cache.index with the keys '      0_0' .. '      3_2', and a second program
    # (whose input now starts at 100) replays the cached elements. TensorFlow reads
    # flowgraph's cache and flowgraph TensorFlow's (checked with the tf-oracle).
    expected = [[[0.0, 2.0, 4.0], [b"a", b"b", b"c"], [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]],
                [[6.0], [b"d"], [[3.0, 3.0]]]]
    assert _cached_run(str(tmp_path), 0) == expected
    assert sorted(os.listdir(tmp_path)) == ["feat_cache.data-00000-of-00001",
                                            "feat_cache.index"]
    keys = [k for k, _ in tf.train.list_variables(str(tmp_path / "feat_cache"))]
    assert keys == [f"{i:7d}_{j}" for i in range(4) for j in range(3)]
    reader = tf.train.load_checkpoint(str(tmp_path / "feat_cache"))
    assert reader.get_tensor("      3_1") == b"d"
    assert _cached_run(str(tmp_path), 100) == expected  # read back, input not used
