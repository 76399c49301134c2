"""``tf.strings.ngrams``, ``unicode_split_with_offsets``, ``unsorted_segment_join`` and
``unicode_script`` against TensorFlow 2.15 (``tf.compat.v1`` graph mode): every expected
value below is what the tf-oracle printed for the same call."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _run(x):
    with tf.Session() as sess:
        v = sess.run(x)
    return v.to_list() if hasattr(v, "to_list") else v


RT = [["a", "b", "c"], ["d"], []]


@pytest.mark.parametrize("kwargs, expected", [
    (dict(ngram_width=2), [[b"a b", b"b c"], [], []]),
    (dict(ngram_width=2, separator="_"), [[b"a_b", b"b_c"], [], []]),
    (dict(ngram_width=3, preserve_short_sequences=True), [[b"a b c"], [b"d"], []]),
    (dict(ngram_width=(1, 2)), [[b"a", b"b", b"c", b"a b", b"b c"], [b"d"], []]),
    (dict(ngram_width=2, pad_values=("L", "R")),
     [[b"L a", b"a b", b"b c", b"c R"], [b"L d", b"d R"], [b"L R"]]),
    (dict(ngram_width=4, pad_values=("L", "R"), padding_width=2),
     [[b"L L a b", b"L a b c", b"a b c R", b"b c R R"], [b"L L d R", b"L d R R"],
      [b"L L R R"]]),
    (dict(ngram_width=4, pad_values=("L", "R"), preserve_short_sequences=True),
     [[b"L L L a", b"L L a b", b"L a b c", b"a b c R", b"b c R R", b"c R R R"],
      [b"L L L d", b"L L d R", b"L d R R", b"d R R R"], [b"L L L R", b"L L R R", b"L R R R"]]),
    # a padding width past width - 1 is clipped to it
    (dict(ngram_width=2, pad_values="P", padding_width=2),
     [[b"P a", b"a b", b"b c", b"c P"], [b"P d", b"d P"], [b"P P"]]),
])
def test_ngrams_of_ragged_rows(kwargs, expected):
    out = tf.strings.ngrams(tf.ragged.constant(RT), **kwargs)
    assert isinstance(out, tf.RaggedTensor)
    assert out.flat_values.op.type == "StringNGrams"
    assert _run(out) == expected


def test_ngrams_of_dense_and_nested_inputs():
    vec = tf.strings.ngrams(tf.constant(["a", "b", "c"]), 3, pad_values=("<s>", "</s>"))
    assert vec.shape.as_list() == [None] and vec.dtype == tf.string
    assert _run(vec).tolist() == [b"<s> <s> a", b"<s> a b", b"a b c", b"b c </s>",
                                  b"c </s> </s>"]
    assert _run(tf.strings.ngrams(["a", "b", "c"], 3, pad_values="P", padding_width=1)
                ).tolist() == [b"P a b", b"a b c", b"b c P"]
    dense = tf.strings.ngrams(tf.constant([["a", "b", "c", "d"], ["e", "f", "g", "h"]]), 2)
    assert _run(dense).tolist() == [[b"a b", b"b c", b"c d"], [b"e f", b"f g", b"g h"]]
    nested = tf.ragged.constant([[["a", "b"], ["c"]], [["d", "e", "f"]]])
    assert _run(tf.strings.ngrams(nested, 2)) == [[[b"a b"], []], [[b"d e", b"e f"]]]


def test_ngrams_errors_match_tensorflow():
    rt = tf.ragged.constant(RT)
    with pytest.raises(ValueError, match="Data must have rank>0"):
        tf.strings.ngrams(tf.constant("a"), 2)
    with pytest.raises(ValueError, match=r"All ngram_widths must be greater than 0\. Got 0"):
        tf.strings.ngrams(rt, 0)
    with pytest.raises(ValueError, match="pad_values must be provided if padding_width"):
        tf.strings.ngrams(rt, 2, padding_width=1)
    # TensorFlow takes the first two of a longer tuple
    assert _run(tf.strings.ngrams(rt, 2, pad_values=("a", "b", "c"))) == [
        [b"a a", b"a b", b"b c", b"c b"], [b"a d", b"d b"], [b"a b"]]


def test_ngram_kernel_matches_a_reference():
    rng = np.random.default_rng(0)
    words = [[f"w{int(i)}" for i in rng.integers(0, 9, rng.integers(0, 6))] for _ in range(7)]
    got = _run(tf.strings.ngrams(tf.ragged.constant(words, dtype=tf.string), (2, 3),
                                 pad_values=("<", ">"), padding_width=1))
    for row, out in zip(words, got):
        ref = []
        for w in (2, 3):
            p = ["<", *row, ">"]
            ref += [" ".join(p[i:i + w]).encode() for i in range(len(p) - w + 1)]
        assert out == ref


def test_unicode_split_with_offsets():
    chars, offsets = tf.strings.unicode_split_with_offsets(tf.constant(["héllo", "añ"]),
                                                           "UTF-8")
    assert _run(chars) == [[b"h", b"\xc3\xa9", b"l", b"l", b"o"], [b"a", b"\xc3\xb1"]]
    assert _run(offsets) == [[0, 1, 3, 4, 5], [0, 1]]
    c, o = tf.strings.unicode_split_with_offsets("añ", "UTF-8")
    assert _run(c).tolist() == [b"a", b"\xc3\xb1"]
    assert _run(o).tolist() == [0, 1] and _run(o).dtype == np.int64


def test_unsorted_segment_join():
    out = tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 5,
                                           separator="-")
    assert out.op.type == "UnsortedSegmentJoin"
    assert _run(out).tolist() == [b"b", b"a-c", b"", b"d", b""]
    assert _run(tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [[0, 1], [1, 0]],
                                                 2)).tolist() == [b"ad", b"bc"]
    assert _run(tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [1, 0], 3,
                                                 separator=",")).tolist() == [
        [b"c", b"d"], [b"a", b"b"], [b"", b""]]
    shaped = tf.strings.unsorted_segment_join(tf.placeholder(tf.string, [4, 3]),
                                              [0, 1, 0, 1], 2)
    assert shaped.shape.as_list() == [2, 3]
    for ids in ([-1, 0], [5, 0]):
        with pytest.raises(errors.InvalidArgumentError, match="segment_ids"):
            _run(tf.strings.unsorted_segment_join(["a", "b"], ids, 2))


# TensorFlow 2.15 (ICU) for these code points.
SCRIPT_CPS = [0x41, 0x3B1, 0x416, 0x5D0, 0x627, 0x915, 0x4E2D, 0x3042, 0x30A2, 0xAC00,
              0xE01, 0x20, 0x31, 0x300, 0x10A0, 0x1200, 0x13A0, 0x531, 0x980, 0xA00, 0xA80,
              0xB00, 0xB80, 0xC00, 0xC80, 0xD00, 0xD80, 0xE80, 0xF00, 0x1000, 0x1780, 0x1800,
              0x700, 0x780, 0x1100, 0x3105, 0xA000, 0x2E80, 0xFF21, 0xFF71, 0x1F600, -1,
              0x110000, 0x2000, 0x3000, 0x3005, 0x3007, 0x309B, 0x30FC, 0xE000, 0x2F800,
              0x20000, 0x10000, 0x1D400, 0xFB1D, 0xFE70, 0x1680, 0x16A0, 0x1E00, 0x400,
              0x1D00, 0x1D2B, 0xB7, 0x2BC, 0x2B0, 0xAA, 0xBA, 0x1F1E6, 0x3400]
SCRIPT_CODES = [25, 14, 8, 19, 2, 10, 17, 20, 22, 18, 38, 0, 0, 1, 12, 11, 6, 3, 4, 103, 103,
                103, 103, 36, 21, 26, 103, 103, 39, 28, 23, 27, 34, 37, 18, 5, 41, 17, 25, 22,
                0, -1, -1, 0, 0, 17, 17, 0, 0, 103, 17, 17, 49, 0, 19, 2, 29, 32, 25, 8, 25, 8,
                0, 0, 25, 25, 25, 0, 17]


def test_unicode_script_matches_icu():
    out = tf.strings.unicode_script(SCRIPT_CPS)
    assert out.op.type == "UnicodeScript" and out.dtype == tf.int32
    assert _run(out).tolist() == SCRIPT_CODES
    assert tf.strings.unicode_script(tf.placeholder(tf.int32, [2, None])).shape.as_list() == [
        2, None]
    with pytest.raises(TypeError, match="int64 that does not match expected type of int32"):
        tf.strings.unicode_script(tf.constant([1], tf.int64))


def test_script_table_covers_the_code_space():
    from flowgraph.ops.string_script_table import RUN_COUNT, script_runs

    starts, codes = script_runs()
    assert len(starts) == len(codes) == RUN_COUNT and starts[0] == 0
    assert np.all(np.diff(starts) > 0) and starts[-1] <= 0x10FFFF
    assert np.all(codes[1:] != codes[:-1])  # runs are maximal
