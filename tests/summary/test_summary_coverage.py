"""tf.summary names added for TF1 API coverage (issue 15): audio (WAV bytes equal to
TensorFlow 2.15's, by MD5, for the same inputs), SummaryDescription and
get_summary_description, all_v2_summary_ops."""

from __future__ import annotations

import doctest
import hashlib

import numpy as np

import flowgraph as tf
from flowgraph.summary import summary_extra


def test_docstring_examples():
    result = doctest.testmod(summary_extra, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_audio_matches_tensorflow_bytes():
    wave = np.sin(np.arange(2 * 50 * 2) * 0.3).reshape(2, 50, 2).astype(np.float32) * 1.2
    with tf.Graph().as_default():
        x = tf.constant(wave)
        s = tf.summary.audio("clip", x, 8000, max_outputs=1)
        s2 = tf.summary.audio("mono", x[:, :, 0], 16000.0)
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s, s2]
        with tf.Session() as sess:
            values = [v for raw in sess.run([s, s2]) for v in tf.Summary.FromString(raw).value]
    got = [(v.tag, v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames,
            v.audio.content_type, hashlib.md5(v.audio.encoded_audio_string).hexdigest())
           for v in values]
    assert got == [
        ("clip/audio", 8000.0, 2, 50, "audio/wav", "2b8cf74c407d981e522f17481c5de45d"),
        ("mono/audio/0", 16000.0, 1, 50, "audio/wav", "36d3d06c8722b749242528f6c1d83e7b"),
        ("mono/audio/1", 16000.0, 1, 50, "audio/wav", "bb18bb32743daf044f8211f59680e56e")]


def test_summary_description():
    node = tf.NodeDef(name="s", op="TensorSummary",
                      attr={"description": tf.AttrValue(s=b'{"typeHint": "scalar"}')})
    desc = tf.summary.get_summary_description(node)
    assert tf.summary.SummaryDescription.FromString(desc.SerializeToString()).type_hint == \
        "scalar"
    try:
        tf.summary.get_summary_description(tf.NodeDef(name="x", op="ScalarSummary"))
    except ValueError as e:
        assert "ScalarSummary" in str(e)
    else:
        raise AssertionError("a non-TensorSummary node must be rejected")
    with tf.Graph().as_default():
        assert tf.summary.all_v2_summary_ops() == []
