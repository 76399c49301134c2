"""TF1 text and string-processing programs, sweep 14 (area ``strings``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style NLP preprocessing): a tokenizer over a fed sentence
placeholder (``string_split`` with a delimiter set and ``skip_empty``, ``strings.split``,
``sparse_tensor_to_dense`` padding with ``"<pad>"``, ``strings.length`` in bytes and
UTF-8 characters, ``lower``/``upper``/``strip``, ``regex_replace`` with and without
``replace_global``, ``regex_full_match``, ``substr`` with negative positions, UTF-8 units
and its range errors); a hashed bag-of-words classifier (``string_to_hash_bucket_fast``,
``to_hash_bucket_strong`` with a key, legacy ``string_to_hash_bucket``, an embedding
mean and a few Adagrad steps) that also formats its numbers (``as_string`` precision,
scientific, shortest, width and fill; ``string_to_number`` with each out_type and its
errors; ``string_join``/``strings.join``, ``reduce_join`` with axis, keep_dims and a
separator; ``strings.format`` with summarize); a Unicode normalizer (``unicode_decode``
with every errors mode, offsets, ``unicode_split``, ``bytes_split``, ``unicode_encode``
to UTF-8 and UTF-16-BE, ``unicode_transcode``, ``unicode_script``, ``ngrams`` with
padding); a vocabulary model (``contrib.lookup.index_table_from_file`` with OOV buckets
and ``vocab_size``, ``index_table_from_tensor`` with a strong hasher, ``StaticHashTable``
over ``TextFileInitializer`` key/value columns, ``index_to_string_table_from_*``,
``embedding_lookup_sparse`` and a few SGD steps); and an I/O helper (``encode_base64``/
``decode_base64``, ``decode_compressed``, ``py_func`` returning bytes, unicode
constants, string feeds of lists, NumPy ``U``/``S``/object arrays); wide features from
strings (``categorical_column_with_vocabulary_file`` with OOV buckets, hash buckets, a
vocabulary list over a sparse placeholder, a crossed column, ``input_layer`` and
``linear_model`` trained with FTRL); and a vocabulary builder with string variables
(``unique``, ``equal``, ``where``, ``cond``, ``stack``/``pad``/``tile``, a string
``Variable`` saved, read back with ``NewCheckpointReader`` and restored,
``summary.text``); and ``py_func`` returning str, bytes and object arrays.

Left as is: fetching a fed placeholder itself returns, in TensorFlow, the fed value as
given (a NumPy ``U`` array comes back as ``str`` objects, a fed scalar ``"q"`` as a 0-d
object array); flowgraph returns the UTF-8 bytes the graph sees (an ``Identity`` of the
feed gives bytes in both). ``RaggedTensor.from_value_rowids`` names its row splits
``RaggedFromValueRowIds/concat`` (TensorFlow: ``.../RowPartitionFromValueRowIds/concat``)
and ragged static shapes do not carry a uniform row length or a constant-folded row
count (``strings.split`` of a ``(2, 2)`` constant is ``(2, ?, ?)``, TensorFlow's
``(2, 2, ?)``). ``decode_compressed`` with an unknown compression type fails when the
graph is built (TensorFlow: when the kernel is made).

Classes of discrepancy found and fixed (one focused test each below):

* ``unicode_decode``/``unicode_decode_with_offsets``/``unicode_transcode`` took only
  UTF-8, UTF-16-BE and UTF-32-BE as the input encoding; TensorFlow decodes any ICU
  converter name (ISO-8859-1, windows-1252 with its C1 holes, US-ASCII, UTF-16-LE,
  ``UTF-16`` with a byte-order mark else big-endian, Shift_JIS, any spelling of
  ``utf-8``) and an unknown name is an InvalidArgumentError when the kernel runs.
  ``unicode_split`` re-encodes in the input encoding, so it keeps TensorFlow's
  ValueError for one that is not an output encoding.
* ``tf.string_split`` and ``tf.strings.split`` refused ``result_type="RaggedTensor"``;
  they now return a RaggedTensor with TensorFlow's op names, and TF1's
  ``strings.split`` takes a scalar (one row) and inputs of rank >= 2 (a ragged result,
  or its ``to_sparse``).
* ``decode_base64`` accepted the standard alphabet, whitespace-free garbage (``"!!!"``
  decoded to ``b""``) and any padding; TensorFlow takes the web-safe alphabet only, at
  most two ``=`` on the last block of four, and says "length cannot be 1 modulo 4".
* ``decode_compressed`` raised InvalidArgumentError on corrupt data (TensorFlow:
  DataLossError), failed on a stream missing only its checksum (TensorFlow inflates the
  data) and read one member of a multi-member gzip (TensorFlow: all of them).
* A string placeholder fed ints, floats or None took them as objects; TensorFlow raises
  InternalError ("Unsupported object type int"). A signature's repeated runs (the
  session's fast path) passed a fed object array through unconverted, so ``str``
  elements reached the graph as ``str`` from the second run on.
* String padding: ``Pad`` filled strings with the int ``0`` and ``PadV2`` with
  ``np.bytes_``; ``ScatterNd`` of strings failed. TensorFlow pads with ``b""`` (or the
  given bytes) and scatters into ``b""``, concatenating duplicates.
"""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _ragged(sess, rt, feed=None):
    return sess.run(rt, feed).to_list()


# -- tokenizer ------------------------------------------------------------------------
def test_tokenizer_split_pad_and_normalize_program():
    s = tf.placeholder(tf.string, [None], name="sent")
    sp = tf.string_split(s)
    sp2 = tf.string_split(s, delimiter=" ,", skip_empty=False)
    assert (sp.indices.name, sp.values.name, sp.dense_shape.name) == (
        "StringSplit/StringSplit:0", "StringSplit/StringSplit:1", "StringSplit/StringSplit:2")
    assert (str(sp.values.shape), str(sp.indices.shape)) == ("(?,)", "(?, 2)")
    sp3 = tf.strings.split(s, sep=",")
    assert type(sp3).__name__ == "SparseTensor"
    dense = tf.sparse_tensor_to_dense(sp, default_value="<pad>")
    dense2 = tf.sparse.to_dense(sp, default_value="")
    assert (dense.name, str(dense.shape), dense.dtype) == ("SparseToDense:0", "(?, ?)",
                                                          tf.string)
    ln, ln8 = tf.strings.length(s), tf.strings.length(s, unit="UTF8_CHAR")
    low, up, st = tf.strings.lower(s), tf.strings.upper(s), tf.strings.strip(s)
    rr = tf.regex_replace(s, "[aeiou]", "_")
    rr1 = tf.strings.regex_replace(s, "[aeiou]", "_", replace_global=False)
    fm = tf.strings.regex_full_match(s, ".*o.*")
    assert [t.name for t in (ln, low, st, rr, fm)] == [
        "StringLength:0", "StringLower:0", "StringStrip:0", "StaticRegexReplace:0",
        "StaticRegexFullMatch:0"]
    assert fm.dtype == tf.bool
    sub, sub2 = tf.substr(s, 1, 3), tf.strings.substr(s, -3, 2)
    sub3 = tf.strings.substr(s, 0, 2, unit="UTF8_CHAR")
    assert (sub.name, sub2.name) == ("Substr:0", "Substr_1:0")
    feed = {s: ["Hello world, foo", "  a,,b  ", "héllo wörld"]}
    with tf.Session() as sess:
        r = sess.run({"idx": sp.indices, "val": sp.values, "shape": sp.dense_shape,
                      "val2": sp2.values, "shape2": sp2.dense_shape, "val3": sp3.values,
                      "dense": dense, "dense2": dense2, "ln": ln, "ln8": ln8, "low": low,
                      "up": up, "st": st, "rr": rr, "rr1": rr1, "fm": fm, "sub": sub,
                      "sub2": sub2, "sub3": sub3}, feed)
        single = sess.run(s[0], feed)
    assert r["idx"].tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]]
    assert r["val"].dtype == object and r["val"].tolist() == [
        b"Hello", b"world,", b"foo", b"a,,b", b"h\xc3\xa9llo", b"w\xc3\xb6rld"]
    assert r["shape"].tolist() == [3, 3] and r["shape2"].tolist() == [3, 7]
    assert r["val2"].tolist() == [b"Hello", b"world", b"", b"foo", b"", b"", b"a", b"",
                                  b"b", b"", b"", b"h\xc3\xa9llo", b"w\xc3\xb6rld"]
    assert r["val3"].tolist() == [b"Hello world", b" foo", b"  a", b"", b"b  ",
                                  b"h\xc3\xa9llo w\xc3\xb6rld"]
    assert r["dense"].tolist() == [[b"Hello", b"world,", b"foo"],
                                   [b"a,,b", b"<pad>", b"<pad>"],
                                   [b"h\xc3\xa9llo", b"w\xc3\xb6rld", b"<pad>"]]
    assert r["dense2"].tolist()[1] == [b"a,,b", b"", b""]
    assert r["ln"].dtype == np.int32 and r["ln"].tolist() == [16, 8, 13]
    assert r["ln8"].tolist() == [16, 8, 11]
    assert r["low"].tolist() == [b"hello world, foo", b"  a,,b  ",
                                 b"h\xc3\xa9llo w\xc3\xb6rld"]
    assert r["up"].tolist() == [b"HELLO WORLD, FOO", b"  A,,B  ",
                                b"H\xc3\xa9LLO W\xc3\xb6RLD"]
    assert r["st"].tolist()[1] == b"a,,b"
    assert r["rr"].tolist() == [b"H_ll_ w_rld, f__", b"  _,,b  ", b"h\xc3\xa9ll_ w\xc3\xb6rld"]
    assert r["rr1"].tolist() == [b"H_llo world, foo", b"  _,,b  ",
                                 b"h\xc3\xa9ll_ w\xc3\xb6rld"]
    assert r["fm"].tolist() == [True, False, True]
    assert r["sub"].tolist() == [b"ell", b" a,", b"\xc3\xa9l"]
    assert r["sub2"].tolist() == [b"fo", b"b ", b"rl"]
    assert r["sub3"].tolist() == [b"He", b"  ", b"h\xc3\xa9"]
    assert type(single) is bytes and single == b"Hello world, foo"


def test_substr_positions_and_range_errors():
    s = tf.placeholder(tf.string, [None])
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(tf.substr(s, 10, 2), {s: ["Hello world, foo", "  a,,b  "]})
        assert sess.run(tf.strings.substr(tf.constant("abc"), 2, 2, unit="UTF8_CHAR")) == b"c"
        assert sess.run(tf.strings.substr(tf.constant("abcdef"), -2, 5)) == b"ef"
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(tf.strings.substr(tf.constant("abc"), -5, 2))


# -- hashed bag of words ---------------------------------------------------------------
def test_hashed_bag_of_words_classifier_program():
    tf.set_random_seed(3)
    words = tf.placeholder(tf.string, [None, None], name="words")
    h1 = tf.string_to_hash_bucket_fast(words, 1000)
    h2 = tf.strings.to_hash_bucket_strong(words, 1000, key=[7, 11])
    h3 = tf.string_to_hash_bucket(words, 50)
    h4 = tf.strings.to_hash_bucket(words, 50)
    assert [t.name for t in (h1, h2, h3, h4)] == [
        "StringToHashBucketFast:0", "StringToHashBucketStrong:0", "StringToHashBucket:0",
        "StringToHashBucket_1:0"]
    assert h1.dtype == tf.int64 and str(h1.shape) == "(?, ?)"
    with tf.variable_scope("emb"):
        table = tf.get_variable("table", [1000, 4],
                                initializer=tf.random_uniform_initializer(-0.1, 0.1))
    pooled = tf.reduce_mean(tf.nn.embedding_lookup(table, h1), axis=1)
    w = tf.get_variable("w", [4, 1])
    logit = tf.squeeze(tf.matmul(pooled, w), 1)
    y = tf.placeholder(tf.float32, [None])
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    feed = {words: [["the", "cat", "sat"], ["a", "dog", "ran"]], y: [1.0, 0.0]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        r = sess.run([h1, h2, h3, h4], feed)
        losses = [round(float(sess.run([train, loss], feed)[1]), 5) for _ in range(3)]
    assert r[0].tolist() == [[354, 96, 913], [939, 112, 173]]
    assert r[1].tolist() == [[805, 716, 718], [380, 362, 935]]
    assert r[2].tolist() == r[3].tolist() == [[35, 35, 32], [18, 35, 37]]
    assert losses == [0.71083, 0.64518, 0.58323]


def test_as_string_and_string_to_number_formats():
    x = tf.constant([3.14159, -2.5, 1e-5, 123456.789, 0.0])
    a1 = tf.as_string(x)
    nums = tf.placeholder(tf.string, [None])
    n1 = tf.string_to_number(nums)
    n2 = tf.strings.to_number(nums, out_type=tf.int64)
    n3 = tf.string_to_number(nums, out_type=tf.float64)
    assert (a1.name, n1.name, n1.dtype, n2.dtype) == ("AsString:0", "StringToNumber:0",
                                                      tf.float32, tf.int64)
    with tf.Session() as sess:
        got = sess.run([a1, tf.as_string(x, precision=2),
                        tf.as_string(x, scientific=True, precision=3),
                        tf.as_string(x, shortest=True),
                        tf.as_string(tf.constant([7, -42, 3]), width=5, fill="0"),
                        tf.as_string(tf.constant([7, -42, 3]), width=4),
                        tf.as_string(tf.constant([True, False])),
                        tf.strings.as_string(tf.constant([1.5, 2.0], tf.float64), precision=1,
                                             width=8)])
        nf = {nums: ["1", "2.5", " 3", "-4e2"]}
        v1, v3 = sess.run([n1, n3], nf)
        v2 = sess.run(n2, {nums: ["12", "-7", "0"]})
        for bad in (["abc"], ["1.5"], [""]):
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(n2, {nums: bad})
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(n1, {nums: ["x1"]})
        inf = sess.run(n1, {nums: ["inf", "nan", "1e50"]})
    assert [g.tolist() for g in got] == [
        [b"3.141590", b"-2.500000", b"0.000010", b"123456.789062", b"0.000000"],
        [b"3.14", b"-2.50", b"0.00", b"123456.79", b"0.00"],
        [b"3.142e+00", b"-2.500e+00", b"1.000e-05", b"1.235e+05", b"0.000e+00"],
        [b"3.14159", b"-2.5", b"1e-05", b"123457", b"0"],
        [b"00007", b"-0042", b"00003"], [b"   7", b" -42", b"   3"], [b"true", b"false"],
        [b"     1.5", b"     2.0"]]
    assert v1.dtype == np.float32 and v1.tolist() == [1.0, 2.5, 3.0, -400.0]
    assert v3.dtype == np.float64 and v3.tolist() == [1.0, 2.5, 3.0, -400.0]
    assert v2.dtype == np.int64 and v2.tolist() == [12, -7, 0]
    assert np.isposinf(inf[0]) and np.isnan(inf[1]) and np.isposinf(inf[2])


def test_join_reduce_join_and_format():
    words = tf.placeholder(tf.string, [None, None], name="words")
    j1 = tf.string_join([words[:, 0], "x"], separator="-")
    j2 = tf.strings.join([words[:, 0], words[:, 1]])
    r1 = tf.reduce_join(words, axis=1, separator=" ")
    r2 = tf.strings.reduce_join(words, axis=0, keepdims=True, separator="|")
    r3 = tf.reduce_join(words)
    r4 = tf.reduce_join(words, 1, keep_dims=True)
    assert (j1.name, r1.name) == ("StringJoin:0", "ReduceJoin/ReduceJoin:0")
    assert [str(t.shape) for t in (r1, r2, r3, r4)] == ["(?,)", "(1, ?)", "()", "(?, 1)"]
    f1 = tf.strings.format("loss={} w={}", (tf.constant(1.5), tf.constant([1, 2])))
    assert (f1.name, str(f1.shape)) == ("StringFormat:0", "()")
    f2 = tf.strings.format("v: {}", tf.range(12), summarize=2)
    f3 = tf.strings.format("{}", tf.constant([["a", "b"], ["c", "d"]]))
    feed = {words: [["the", "cat", "sat"], ["a", "dog", "ran"]]}
    with tf.Session() as sess:
        r = sess.run([j1, j2, r1, r2, r3, r4], feed)
        v2, v3 = sess.run([f2, f3])
    assert r[0].tolist() == [b"the-x", b"a-x"] and r[1].tolist() == [b"thecat", b"adog"]
    assert r[2].tolist() == [b"the cat sat", b"a dog ran"]
    assert r[3].tolist() == [[b"the|a", b"cat|dog", b"sat|ran"]]
    assert type(r[4]) is bytes and r[4] == b"thecatsatadogran"
    assert r[5].tolist() == [[b"thecatsat"], [b"adogran"]]
    assert v2 == b"v: [0 1 ... 10 11]" and v3 == b'[["a" "b"]\n ["c" "d"]]'


# -- unicode normalizer ----------------------------------------------------------------
def test_unicode_decode_encode_transcode_program():
    s = tf.placeholder(tf.string, [None], name="s")
    d = tf.strings.unicode_decode(s, "UTF-8")
    assert (d.flat_values.name, d.row_splits.name, d.flat_values.dtype, str(d.shape)) == (
        "UnicodeDecode/UnicodeDecode:1", "UnicodeDecode/UnicodeDecode:0", tf.int32, "(?, ?)")
    d2 = tf.strings.unicode_decode(s, "UTF-8", errors="replace", replacement_char=63)
    d3 = tf.strings.unicode_decode(s, "UTF-8", errors="ignore")
    d4 = tf.strings.unicode_decode(s, "UTF-8", errors="strict")
    dd = d.to_tensor(default_value=-1)
    assert (dd.name, str(dd.shape)) == ("RaggedToTensor/RaggedTensorToTensor:0", "(?, ?)")
    _, offs = tf.strings.unicode_decode_with_offsets(s, "UTF-8")
    sp, bs = tf.strings.unicode_split(s, "UTF-8"), tf.strings.bytes_split(s)
    enc = tf.strings.unicode_encode(d, "UTF-8")
    enc16 = tf.strings.unicode_encode(d, "UTF-16-BE")
    assert (enc.name, str(enc.shape)) == ("UnicodeEncode/UnicodeEncode:0", "(?,)")
    tc = tf.strings.unicode_transcode(s, "UTF-8", "UTF-16-BE")
    tc2 = tf.strings.unicode_transcode(s, "UTF-8", "UTF-8", errors="replace",
                                       replacement_char=88)
    scr = tf.strings.unicode_script(tf.constant([72, 1488, 19968, 1040, 32, 945], tf.int32))
    enc2 = tf.strings.unicode_encode(tf.constant([[104, 105], [0x1F600, 33]]), "UTF-8")
    enc3 = tf.strings.unicode_encode(tf.constant([104, 0x110000, 105]), "UTF-8",
                                     errors="replace")
    ng = tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), 2, separator="_")
    ng2 = tf.strings.ngrams(tf.constant(["a", "b", "c", "d"]), [1, 2])
    ng3 = tf.strings.ngrams(tf.ragged.constant([["a", "b"], ["c"]]), 3,
                            pad_values=("<s>", "</s>"), padding_width=1)
    feed = {s: ["héllo".encode(), b"ab\xffc", "日本語".encode(), b""]}
    with tf.Session() as sess:
        assert _ragged(sess, d, feed) == [[104, 233, 108, 108, 111], [97, 98, 65533, 99],
                                          [26085, 26412, 35486], []]
        assert _ragged(sess, d2, feed)[1] == [97, 98, 63, 99]
        assert _ragged(sess, d3, feed)[1] == [97, 98, 99]
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(d4, feed)
        assert sess.run(dd, feed).tolist()[2] == [26085, 26412, 35486, -1, -1]
        assert _ragged(sess, offs, feed) == [[0, 1, 3, 4, 5], [0, 1, 2, 3], [0, 3, 6], []]
        assert _ragged(sess, sp, feed)[1] == [b"a", b"b", b"\xef\xbf\xbd", b"c"]
        assert _ragged(sess, bs, feed)[1] == [b"a", b"b", b"\xff", b"c"]
        assert sess.run(enc, feed).tolist() == [b"h\xc3\xa9llo", b"ab\xef\xbf\xbdc",
                                                b"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", b""]
        want16 = [b"\x00h\x00\xe9\x00l\x00l\x00o", b"\x00a\x00b\xff\xfd\x00c",
                  b"e\xe5g,\x8a\x9e", b""]
        assert sess.run(enc16, feed).tolist() == want16
        assert sess.run(tc, feed).tolist() == want16
        assert sess.run(tc2, feed).tolist()[1] == b"abXc"
        assert sess.run(scr).tolist() == [25, 19, 17, 8, 0, 14]
        assert sess.run(enc2).tolist() == [b"hi", b"\xf0\x9f\x98\x80!"]
        assert sess.run(enc3) == b"h\xef\xbf\xbdi"
        assert _ragged(sess, ng) == [[b"a_b", b"b_c"], []]
        assert sess.run(ng2).tolist() == [b"a", b"b", b"c", b"d", b"a b", b"b c", b"c d"]
        assert _ragged(sess, ng3) == [[b"<s> a b", b"a b </s>"], [b"<s> c </s>"]]
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(tf.strings.unicode_encode(tf.constant([104, -5]), "UTF-8",
                                               errors="strict"))


def test_unicode_decode_takes_any_icu_input_encoding():
    s = tf.constant([b"\xe9t\xe9", b"A\x80\x9f\xff"])
    want = {"ISO-8859-1": [233, 116, 233, 65, 128, 159, 255],
            "latin1": [233, 116, 233, 65, 128, 159, 255],
            "US-ASCII": [65533, 116, 65533, 65, 65533, 65533, 65533],
            "windows-1252": [233, 116, 233, 65, 8364, 376, 255],
            "UTF-16-LE": [29929, 65533, 32833, 65439],
            "UTF-16": [59764, 65533, 16768, 40959],
            "UTF-32-LE": [65533, 65533],
            "utf-8": [65533, 116, 65533, 65, 65533, 65533, 65533],
            "UTF8": [65533, 116, 65533, 65, 65533, 65533, 65533]}
    outs = {k: tf.strings.unicode_decode(s, k).flat_values for k in want}
    bom = tf.constant([b"\xe9t\xe9", b"\xff\xfeA\x00", b"\xfe\xff\x00A"])
    holes = tf.constant([b"\x81\x8d\xa4"])
    sjis = tf.constant([b"\x82\xa0a\x82"])
    with tf.Session() as sess:
        assert {k: v.tolist() for k, v in sess.run(outs).items()} == want
        assert sess.run(tf.strings.unicode_decode(bom, "UTF-16").flat_values).tolist() == [
            59764, 65533, 65, 65]
        assert sess.run(tf.strings.unicode_decode(bom, "UTF-16", errors="ignore")
                        .flat_values).tolist() == [59764, 65, 65]
        assert sess.run(tf.strings.unicode_decode_with_offsets(bom, "UTF-16-LE")[1]
                        .flat_values).tolist() == [0, 2, 0, 2, 0, 2]
        assert sess.run(tf.strings.unicode_transcode(bom, "windows-1252", "UTF-8")).tolist() \
            == [b"\xc3\xa9t\xc3\xa9", b"\xc3\xbf\xc3\xbeA\x00", b"\xc3\xbe\xc3\xbf\x00A"]
        assert sess.run(tf.strings.unicode_decode(holes, "windows-1252")
                        .flat_values).tolist() == [129, 141, 164]
        assert sess.run(tf.strings.unicode_decode(holes, "ISO-8859-15")
                        .flat_values).tolist() == [129, 141, 8364]
        cps, offs = tf.strings.unicode_decode_with_offsets(sjis, "Shift_JIS")
        assert sess.run(cps.flat_values).tolist() == [12354, 97, 65533]
        assert sess.run(offs.flat_values).tolist() == [0, 2, 3]
        for enc in ("UTF-16-LE", "US-ASCII"):
            with pytest.raises(errors.InvalidArgumentError):
                sess.run(tf.strings.unicode_decode(s, enc, errors="strict").flat_values)
        with pytest.raises(errors.InvalidArgumentError, match=r"converter.*UTF-9"):
            sess.run(tf.strings.unicode_decode(s, "UTF-9").flat_values)
        with pytest.raises(errors.InvalidArgumentError, match=r"converter.*UTF-9"):
            sess.run(tf.strings.unicode_transcode(s, "UTF-9", "UTF-8"))
    # characters come back in the input encoding, which must be an output encoding
    with pytest.raises(ValueError):
        tf.strings.unicode_split(s, "ISO-8859-1")
    with pytest.raises(ValueError):
        tf.strings.unicode_encode([[104, 233]], "UTF-16-LE")
    with pytest.raises(ValueError):
        tf.strings.unicode_transcode(["h"], "UTF-8", "utf-8")


# -- vocabulary model ------------------------------------------------------------------
def test_vocabulary_lookup_tables_program(tmp_path):
    lk = tf.contrib.lookup
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("<unk>\nthe\ncat\nsat\non\nmat\n")
    tsv = tmp_path / "vocab.tsv"
    tsv.write_text("the\t10\t0.5\ncat\t20\t0.25\ndog\t30\t0.125\n")
    tf.set_random_seed(42)
    sent = tf.placeholder(tf.string, [None], name="sentences")
    toks = tf.string_split(sent)
    t1 = lk.index_table_from_file(str(vocab), num_oov_buckets=3)
    t2 = lk.index_table_from_file(str(vocab), default_value=0, vocab_size=4)
    t3 = lk.index_table_from_tensor(tf.constant(["the", "cat", "sat"]), num_oov_buckets=2,
                                    hasher_spec=lk.StrongHashSpec([1, 2]))
    ids, ids2, ids3 = t1.lookup(toks), t2.lookup(toks.values), t3.lookup(toks.values)
    assert (ids.values.name, ids2.name, ids3.name) == (
        "hash_table_Lookup/SelectV2:0", "hash_table_Lookup_1/LookupTableFindV2:0",
        "hash_table_Lookup_2/SelectV2:0")
    assert (type(t1).__name__, t1.name, t1.size().name) == (
        "IdTableWithHashBuckets", "hash_table", "hash_table_Size/add:0")
    dense = tf.sparse_tensor_to_dense(ids, default_value=-1)
    assert (str(dense.shape), dense.dtype) == ("(?, ?)", tf.int64)
    h = lk.StaticHashTable(lk.TextFileInitializer(str(tsv), tf.string, 0, tf.int64, 1,
                                                  delimiter="\t"), -1)
    h2 = lk.StaticHashTable(lk.TextFileInitializer(str(tsv), tf.string, 0, tf.float32, 2,
                                                   delimiter="\t"), -1.0)
    h3 = lk.StaticHashTable(lk.TextFileInitializer(
        str(tsv), tf.int64, lk.TextFileIndex.LINE_NUMBER, tf.string,
        lk.TextFileIndex.WHOLE_LINE), "?")
    rev = lk.index_to_string_table_from_tensor(tf.constant(["a", "b", "c"]),
                                               default_value="UNK")
    rev2 = lk.index_to_string_table_from_file(str(vocab))
    with tf.variable_scope("embed"):
        emb = tf.get_variable("E", [9, 3])
    vec = tf.nn.embedding_lookup_sparse(emb, ids, None, combiner="mean")
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    label = tf.placeholder(tf.float32, [None])
    loss = tf.losses.sigmoid_cross_entropy(label, tf.reshape(tf.matmul(vec, w), [-1]))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    assert [t.name for t in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)] == [
        "string_to_index/hash_table/table_init/InitializeTableFromTextFileV2",
        "string_to_index_1/hash_table/table_init/InitializeTableFromTextFileV2",
        "string_to_index_2/hash_table/table_init/LookupTableImportV2",
        "text_file_init/InitializeTableFromTextFileV2",
        "text_file_init_1/InitializeTableFromTextFileV2",
        "text_file_init_2/InitializeTableFromTextFileV2",
        "index_to_string/table_init/LookupTableImportV2",
        "index_to_string_1/table_init/InitializeTableFromTextFileV2"]
    feed = {sent: ["the cat sat", "a dog on the mat", "zebra"], label: [1, 0, 1]}
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        r = sess.run([ids.values, dense, ids2, ids3, t1.size(), t2.size()], feed)
        hv = sess.run([h.lookup(tf.constant(["cat", "the", "x"])),
                       h2.lookup(tf.constant(["dog", "x"])),
                       h3.lookup(tf.constant([0, 2, 5], tf.int64)),
                       rev.lookup(tf.constant([0, 2, 7], tf.int64)),
                       rev2.lookup(tf.constant([[1, 5], [6, -1]], tf.int64))])
        losses = [round(float(sess.run([step, loss], feed)[1]), 5) for _ in range(3)]
        wv = sess.run(w)
    assert r[0].tolist() == [1, 2, 3, 6, 8, 4, 1, 5, 8]
    assert r[1].tolist() == [[1, 2, 3, -1, -1], [6, 8, 4, 1, 5], [8, -1, -1, -1, -1]]
    assert r[2].tolist() == [1, 2, 3, 0, 0, 0, 1, 0, 0]
    assert r[3].tolist() == [0, 1, 2, 3, 3, 4, 0, 3, 3]
    assert (int(r[4]), int(r[5])) == (9, 4)
    assert [v.tolist() for v in hv] == [
        [20, 10, -1], [0.125, -1.0], [b"the\t10\t0.5", b"dog\t30\t0.125", b"?"],
        [b"a", b"c", b"UNK"], [[b"the", b"mat"], [b"UNK", b"UNK"]]]
    assert losses == [0.69315, 0.69132, 0.68951]
    np.testing.assert_allclose(wv.ravel(), [-0.06880751, 0.05372087, -0.02267879],
                               rtol=1e-5)
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be"):
        h.lookup(tf.constant([1, 2], tf.int64))


# -- I/O helpers -----------------------------------------------------------------------
def test_base64_compression_py_func_and_unicode_constants_program():
    s = tf.placeholder(tf.string, [None], name="raw")
    b64, b64p = tf.encode_base64(s), tf.io.encode_base64(s, pad=True)
    dec, decp = tf.decode_base64(b64), tf.io.decode_base64(b64p)
    z = tf.placeholder(tf.string, [], name="z")
    dz = tf.io.decode_compressed(z, compression_type="ZLIB")
    dg = tf.decode_compressed(z, compression_type="GZIP")
    dn = tf.io.decode_compressed(z)
    pf = tf.py_func(lambda x: np.array([v.upper() + b"!" for v in x], dtype=object), [s],
                    tf.string, stateful=False, name="shout")
    pf2 = tf.py_func(lambda x: b"len=%d" % len(x), [s], tf.string)
    pf3 = tf.py_func(lambda x: np.array(["a", "bc"]), [s], tf.string)
    sp1 = tf.string_split(s, delimiter="")
    sp2 = tf.strings.split(s, sep="a", maxsplit=1)
    c1, c2 = tf.constant("héllo"), tf.constant(["a", b"b", "ü"])
    c3 = tf.constant(np.array(["x", "yy"]))
    c4 = tf.constant([[b"a"], [b"b"]], dtype=tf.string, shape=[2, 3])
    assert (c1.dtype, c2.shape.as_list(), c4.shape.as_list()) == (tf.string, [3], [2, 3])
    feed = {s: ["hello", "wörld", "a=b&c", ""]}
    with tf.Session() as sess:
        r = sess.run([b64, b64p, dec, decp, pf, pf2, pf3, sp1, sp2], feed)
        assert sess.run(dz, {z: zlib.compress(b"abc" * 3)}) == b"abcabcabc"
        assert sess.run(dg, {z: gzip.compress(b"xyz")}) == b"xyz"
        assert sess.run(dn, {z: b"plain"}) == b"plain"
        consts = sess.run([c1, c2, c3, c4])
    assert r[0].tolist() == [b"aGVsbG8", b"d8O2cmxk", b"YT1iJmM", b""]
    assert r[1].tolist() == [b"aGVsbG8=", b"d8O2cmxk", b"YT1iJmM=", b""]
    assert r[2].tolist() == r[3].tolist() == [b"hello", b"w\xc3\xb6rld", b"a=b&c", b""]
    assert r[4].tolist() == [b"HELLO!", b"W\xc3\xb6RLD!", b"A=B&C!", b"!"]
    assert r[5] == b"len=4" and r[6].tolist() == [b"a", b"bc"]
    assert r[7].values.tolist() == [b"h", b"e", b"l", b"l", b"o", b"w", b"\xc3", b"\xb6",
                                    b"r", b"l", b"d", b"a", b"=", b"b", b"&", b"c"]
    assert r[7].dense_shape.tolist() == [4, 6]
    assert r[8].indices.tolist() == [[0, 0], [1, 0], [2, 0], [2, 1], [3, 0]]
    assert r[8].values.tolist() == [b"hello", b"w\xc3\xb6rld", b"", b"=b&c", b""]
    assert consts[0] == b"h\xc3\xa9llo"
    assert consts[1].tolist() == [b"a", b"b", b"\xc3\xbc"] and consts[1].dtype == object
    assert consts[2].tolist() == [b"x", b"yy"]
    assert consts[3].tolist() == [[b"a", b"b", b"b"], [b"b", b"b", b"b"]]


def test_string_feeds_give_bytes_and_reject_non_strings():
    s = tf.placeholder(tf.string, [None])
    z = tf.placeholder(tf.string, [])
    i = tf.identity(s)
    with tf.Session() as sess:
        assert sess.run(i, {s: np.array(["a", "ü"])}).tolist() == [b"a", b"\xc3\xbc"]
        got = sess.run(i, {s: np.array([b"a", "b", "ü"], dtype=object)})
        assert got.dtype == object and got.tolist() == [b"a", b"b", b"\xc3\xbc"]
        assert sess.run(i, {s: np.array([np.str_("x"), np.bytes_(b"y")], dtype=object)}
                        ).tolist() == [b"x", b"y"]
        assert sess.run(s, {s: np.array([b"a", b"b"])}).tolist() == [b"a", b"b"]
        assert sess.run(tf.identity(z), {z: "q"}) == b"q"
        assert sess.run([tf.identity(z), tf.strings.length(z)], {z: "q"}) == [b"q", 1]
        for bad in ([1, 2], np.array([1, 2]), [b"a", 3], [1.5], [None]):
            with pytest.raises(errors.InternalError, match="unsupported object type"):
                sess.run(i, {s: bad})


# -- focused tests of the fixed classes ------------------------------------------------
def test_split_result_type_ragged_names_and_ranks():
    s = tf.placeholder(tf.string, [None], name="s")
    a = tf.strings.split(s, result_type="RaggedTensor")
    b = tf.string_split(s, "a", result_type="RaggedTensor")
    c = tf.strings.split(tf.constant("x y"), result_type="RaggedTensor")
    d = tf.strings.split(tf.constant("x y"))
    e = tf.strings.split(tf.constant([["a b", "c"], ["d", "e f g"]]))
    f = tf.strings.split(tf.constant([["a b", "c"], ["d", "e f g"]]),
                         result_type="RaggedTensor")
    assert type(a).__name__ == type(b).__name__ == "RaggedTensor"
    assert a.values.name == "StringSplit/StringSplit/StringSplitV2:1"
    assert b.values.name == "StringSplit_1/StringSplit:1"
    assert c.values.name == "StringSplit_2/StringSplit/StringSplitV2:1"
    assert (a.ragged_rank, str(a.shape), f.ragged_rank) == (1, "(?, ?)", 2)
    assert type(d).__name__ == "SparseTensor" and d.values.name == (
        "StringSplit_3/StringSplitV2:1")
    assert type(e).__name__ == "SparseTensor" and e.dense_shape.shape.as_list() == [3]
    with pytest.raises(ValueError, match="result_type must be 'RaggedTensor' or "
                                         "'SparseTensor'"):
        tf.strings.split(s, result_type="Dense")
    with pytest.raises(ValueError, match="result_type"):
        tf.string_split(s, result_type="ragged")
    fd = {s: ["ab a", " a", ""]}
    with tf.Session() as sess:
        assert _ragged(sess, a, fd) == [[b"ab", b"a"], [b"a"], []]
        assert _ragged(sess, b, fd) == [[b"b "], [b" "], []]
        assert _ragged(sess, c) == [[b"x", b"y"]]
        dv = sess.run(d)
        assert dv.values.tolist() == [b"x", b"y"] and dv.dense_shape.tolist() == [1, 2]
        ev = sess.run(e)
        assert ev.indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0],
                                       [1, 1, 1], [1, 1, 2]]
        assert ev.values.tolist() == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]
        assert ev.dense_shape.tolist() == [2, 2, 3]
        assert _ragged(sess, f) == [[[b"a", b"b"], [b"c"]], [[b"d"], [b"e", b"f", b"g"]]]
        assert sess.run(a.to_tensor(default_value="<pad>"), fd).tolist() == [
            [b"ab", b"a"], [b"a", b"<pad>"], [b"<pad>", b"<pad>"]]
        assert sess.run(a.row_lengths(), fd).tolist() == [2, 1, 0]


_B64_OK = {"aGk": b"hi", "aGk=": b"hi", "aGVsbG8": b"hello", "ab": b"i", "abc": b"i\xb7",
           "_-_-": b"\xff\xef\xfe", "": b"", "ab==": b"i", "abc=": b"i\xb7",
           "abcdef==": b"i\xb7\x1dy"}
_B64_BAD_CHAR = ["aGk==", "aGk===", "aG k", "aGk\n", "/+/+", "aGk=aGk", "ab=c",
                 "aGVsbG8==", "aG=", "a===", "ab="]
_B64_BAD_LENGTH = ["a", "abcd=", "=", "abcde"]


def test_decode_base64_is_web_safe_and_strict():
    s = tf.placeholder(tf.string, [None])
    d = tf.decode_base64(s)
    with tf.Session() as sess:
        assert sess.run(d, {s: list(_B64_OK)}).tolist() == list(_B64_OK.values())
        for bad in _B64_BAD_CHAR:
            with pytest.raises(errors.InvalidArgumentError, match="invalid character"):
                sess.run(d, {s: [bad]})
        for bad in _B64_BAD_LENGTH:
            with pytest.raises(errors.InvalidArgumentError, match="1 modulo 4"):
                sess.run(d, {s: [bad]})


def test_decode_compressed_data_loss_truncation_and_members():
    z = tf.placeholder(tf.string, [])
    dz = tf.io.decode_compressed(z, compression_type="ZLIB")
    dg = tf.io.decode_compressed(z, compression_type="GZIP")
    with tf.Session() as sess:
        with pytest.raises(errors.DataLossError, match="inflate"):
            sess.run(dz, {z: b"notzlib"})
        with pytest.raises(errors.DataLossError, match="inflate"):
            sess.run(dg, {z: b"notgzip"})
        assert sess.run(dz, {z: zlib.compress(b"abcdef")[:-3]}) == b"abcdef"
        assert sess.run(dz, {z: zlib.compress(b"abcdef" * 100)[:20]}) == b"abcdef" * 100
        assert sess.run(dg, {z: gzip.compress(b"hello")[:-4]}) == b"hello"
        assert sess.run(dg, {z: gzip.compress(b"a") + gzip.compress(b"b")}) == b"ab"


def test_repeated_string_feeds_encode_str_every_run():
    # the second and later runs of one signature take the session's fast path
    s = tf.placeholder(tf.string, [None])
    i = tf.identity(s)
    with tf.Session() as sess:
        for _ in range(3):
            got = sess.run(i, {s: np.array([b"a", "ü"], dtype=object)})
            assert got.tolist() == [b"a", b"\xc3\xbc"]
        for _ in range(2):
            with pytest.raises(errors.InternalError, match="unsupported object type int"):
                sess.run(i, {s: np.array([b"a", 3], dtype=object)})
        assert sess.run(i, {s: np.array([b"x", b"y"], dtype=object)}).tolist() == [b"x", b"y"]


# -- string feature columns ------------------------------------------------------------
def test_string_feature_columns_with_vocab_file_hashing_and_crosses(tmp_path):
    vf = tmp_path / "colors.txt"
    vf.write_text("red\ngreen\nblue\n")
    tf.set_random_seed(11)
    fc = tf.feature_column
    color = fc.categorical_column_with_vocabulary_file("color", str(vf), num_oov_buckets=2)
    city = fc.categorical_column_with_hash_bucket("city", 20)
    tags = fc.categorical_column_with_vocabulary_list("tags", ["a", "b", "c"],
                                                      default_value=0)
    cross = fc.crossed_column(["city", "color_raw"], 7)
    feats = {"color": tf.placeholder(tf.string, [None, 1], name="color"),
             "city": tf.placeholder(tf.string, [None, 1], name="city"),
             "tags": tf.sparse_placeholder(tf.string, name="tags"),
             "color_raw": tf.placeholder(tf.string, [None, 1], name="color_raw")}
    net = fc.input_layer(feats, [
        fc.indicator_column(color), fc.embedding_column(city, 3, initializer=tf.ones_initializer()),
        fc.indicator_column(tags), fc.indicator_column(cross)])
    lin = fc.linear_model(feats, [color, city, tags, cross])
    assert (net.name, str(net.shape)) == ("input_layer/concat:0", "(?, 18)")
    assert (lin.name, str(lin.shape)) == ("linear_model_1/linear_model/weighted_sum:0",
                                          "(?, 1)")
    y = tf.placeholder(tf.float32, [None, 1])
    loss = tf.losses.mean_squared_error(y, lin + tf.reduce_sum(net, 1, keepdims=True) * 0.01)
    step = tf.train.FtrlOptimizer(0.3).minimize(loss)
    assert "linear_model/city_X_color_raw/weights:0" in [v.name for v in tf.global_variables()]
    feed = {feats["color"]: [["red"], ["purple"], ["blue"]],
            feats["city"]: [["paris"], ["tokyo"], ["nyc"]],
            feats["color_raw"]: [["red"], ["purple"], ["blue"]],
            feats["tags"]: tf.SparseTensorValue([[0, 0], [0, 1], [2, 0]], ["a", "z", "c"],
                                                [3, 2]),
            y: [[1.0], [0.0], [2.0]]}
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        dense = sess.run(net, feed)
        losses = [round(float(sess.run([loss, step], feed)[0]), 5) for _ in range(3)]
        out = sess.run(lin, feed)
    assert dense.tolist() == [
        [1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0, 0],
        [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1]]
    assert losses == [1.54367, 0.3461, 0.07288]
    np.testing.assert_allclose(out.ravel(), [1.11781, 0.10871, 1.92758], atol=1e-5)


# -- string variables, array ops and checkpoints ---------------------------------------
def test_string_variables_array_ops_saver_and_text_summary(tmp_path):
    words = tf.placeholder(tf.string, [None], name="w")
    vocab = tf.Variable(["<pad>"], dtype=tf.string, validate_shape=False, name="vocab")
    assert (vocab.name, vocab.dtype.name, vocab.shape.ndims) == ("vocab:0", "string_ref", None)
    uniq, idx = tf.unique(words)
    cnt = tf.unique_with_counts(words)
    assert (uniq.name, idx.dtype, cnt.count.dtype) == ("Unique:0", tf.int32, tf.int32)
    upd = tf.assign(vocab, tf.concat([vocab, uniq], 0), validate_shape=False)
    eq, ne = tf.equal(words, "cat"), tf.not_equal(words, tf.constant("dog"))
    sel = tf.where(eq, words, tf.fill(tf.shape(words), "other"))
    cond = tf.cond(tf.reduce_any(eq), lambda: tf.constant("has cat"),
                   lambda: tf.constant("no cat"))
    srt = tf.gather(words, tf.argsort(tf.strings.length(words)))
    msg = tf.Variable("hello", name="msg")
    assign_msg = msg.assign(tf.strings.join([msg, "!"]))
    saver = tf.train.Saver([msg])
    st = tf.stack([words, tf.strings.upper(words)], axis=1)
    pad = tf.pad(tf.reshape(words, [1, -1]), [[0, 0], [1, 1]], constant_values="_")
    assert (str(st.shape), str(pad.shape), pad.name) == ("(?, 2)", "(1, ?)", "PadV2:0")
    summ = tf.summary.text("words", words)
    feed = {words: ["cat", "dog", "cat", "emu", "a"]}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        r = sess.run([uniq, idx, cnt.count, eq, ne, sel, cond, srt, tf.transpose(st),
                      tf.tile(words[:1], [3]), pad], feed)
        assert sess.run(upd, feed).tolist() == [b"<pad>", b"cat", b"dog", b"emu", b"a"]
        sess.run(assign_msg)
        sess.run(assign_msg)
        path = saver.save(sess, str(tmp_path / "m.ckpt"))
        reader = tf.train.NewCheckpointReader(path)
        assert reader.get_variable_to_dtype_map() == {"msg": tf.string}
        assert reader.get_tensor("msg") == b"hello!!"
        sess.run(msg.initializer)
        assert sess.run(msg) == b"hello"
        saver.restore(sess, path)
        assert sess.run(msg) == b"hello!!"
        sm = tf.Summary.FromString(sess.run(summ, feed))
        assert sess.run(tf.add(words, words), feed).tolist()[0] == b"catcat"
    assert [(v.tag, v.metadata.plugin_data.plugin_name, list(v.tensor.string_val))
            for v in sm.value] == [("words", "text", [b"cat", b"dog", b"cat", b"emu", b"a"])]
    assert r[0].tolist() == [b"cat", b"dog", b"emu", b"a"]
    assert r[1].tolist() == [0, 1, 0, 2, 3] and r[2].tolist() == [2, 1, 1, 1]
    assert r[3].tolist() == [True, False, True, False, False]
    assert r[4].tolist() == [True, False, True, True, True]
    assert r[5].tolist() == [b"cat", b"other", b"cat", b"other", b"other"]
    assert r[6] == b"has cat"
    assert r[7].tolist() == [b"a", b"cat", b"dog", b"cat", b"emu"]
    assert r[8].tolist() == [[b"cat", b"dog", b"cat", b"emu", b"a"],
                             [b"CAT", b"DOG", b"CAT", b"EMU", b"A"]]
    assert r[9].tolist() == [b"cat", b"cat", b"cat"]
    assert r[10].tolist() == [[b"_", b"cat", b"dog", b"cat", b"emu", b"a", b"_"]]
    assert all(type(v) is bytes for v in r[10].ravel())
    with pytest.raises(TypeError):
        tf.reduce_sum(words)
    with pytest.raises(TypeError):
        tf.equal(words, 1)


def test_string_pad_and_scatter_nd_fill_with_empty_bytes():
    w = tf.constant([["a", "b"]])
    outs = [tf.pad(w, [[1, 0], [0, 1]]), tf.pad(w, [[0, 0], [1, 1]], constant_values="_"),
            tf.pad(w, [[0, 0], [1, 1]], mode="REFLECT"),
            tf.scatter_nd([[1], [1], [0]], tf.constant(["x", "y", "z"]), [3]),
            tf.sparse_tensor_to_dense(tf.SparseTensor([[0, 1]], ["v"], [2, 2]))]
    with tf.Session() as sess:
        got = sess.run(outs)
    assert [v.tolist() for v in got] == [
        [[b"", b"", b""], [b"a", b"b", b""]], [[b"_", b"a", b"b", b"_"]],
        [[b"b", b"a", b"b", b"a"]], [b"z", b"xy", b""], [[b"", b"v"], [b"", b""]]]
    assert all(type(x) is bytes for v in got for x in v.ravel())


def test_py_func_string_returns_become_bytes():
    s = tf.placeholder(tf.string, [None])
    str_scalar = tf.py_func(lambda x: "héllo", [s], tf.string)
    list_str = tf.py_func(lambda x: ["a", "é"], [s], tf.string)
    np_s = tf.py_func(lambda x: np.array([b"ab", b"c"]), [s], tf.string)
    mixed = tf.py_func(lambda x: np.array(["u", b"v"], dtype=object), [s], tf.string)
    two = tf.py_func(lambda x: (x, np.int64(len(x))), [s], [tf.string, tf.int64])
    seen = tf.py_func(lambda x: np.array([type(x).__name__, x.dtype.str, type(x[0]).__name__]),
                      [s], tf.string)
    assert str_scalar.shape.ndims is None
    feed = {s: ["x", "yz"]}
    with tf.Session() as sess:
        assert sess.run(str_scalar, feed) == b"h\xc3\xa9llo"
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(list_str, feed)  # a list is two return values, not one
        got = sess.run([np_s, mixed, seen], feed)
        assert [(g.dtype, g.tolist()) for g in got] == [
            (object, [b"ab", b"c"]), (object, [b"u", b"v"]),
            (object, [b"ndarray", b"|O", b"bytes"])]
        x, n = sess.run(two, feed)
        assert x.tolist() == [b"x", b"yz"] and int(n) == 2
    assert (tf.compat.as_text(b"\xc3\xa9"), tf.compat.as_bytes("é"),
            tf.compat.as_str_any(3)) == ("é", b"\xc3\xa9", "3")
