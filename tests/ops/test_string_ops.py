"""String ops against TensorFlow's values (recorded with the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

S = ["a b  c", "", "d,e f", "  x  "]


def _run(x):
    with tf.Session() as sess:
        return sess.run(x)


def _sp(sp):
    v = _run(sp)
    return v.indices.tolist(), [x.decode() for x in v.values.tolist()], v.dense_shape.tolist()


@pytest.mark.parametrize(("build", "want"), [
    (lambda: tf.string_split(S), (
        [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]], ["a", "b", "c", "d,e", "f", "x"],
        [4, 3])),
    (lambda: tf.string_split(S, delimiter=", "), (
        [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2], [3, 0]],
        ["a", "b", "c", "d", "e", "f", "x"], [4, 3])),
    (lambda: tf.string_split(S, delimiter=" ", skip_empty=False), (
        [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2], [3, 3],
         [3, 4]], ["a", "b", "", "c", "d,e", "f", "", "", "x", "", ""], [4, 5])),
    (lambda: tf.string_split(["ab", "c"], delimiter=""), (
        [[0, 0], [0, 1], [1, 0]], ["a", "b", "c"], [2, 2])),
    (lambda: tf.strings.split(S), (
        [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]], ["a", "b", "c", "d,e", "f", "x"],
        [4, 3])),
    (lambda: tf.strings.split(S, sep=" "), (
        [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2],
         [3, 3], [3, 4]], ["a", "b", "", "c", "", "d,e", "f", "", "", "x", "", ""], [4, 5])),
    (lambda: tf.strings.split(S, sep=" ", maxsplit=1), (
        [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0], [3, 1]],
        ["a", "b  c", "", "d,e", "f", "", " x  "], [4, 2])),
])
def test_split_matches_tensorflow(build, want):
    sp = build()
    assert sp.indices.shape.as_list() == [None, 2]
    assert _sp(sp) == want


def test_numbers_join_substr_length_arg():
    x = tf.strings.to_number(["1.5", "-2", "1e3", " 7"])
    assert x.dtype == tf.float32 and x.shape.as_list() == [4]
    np.testing.assert_array_equal(_run(x), [1.5, -2.0, 1000.0, 7.0])
    i = _run(tf.string_to_number(["12", "-3"], out_type=tf.int32))
    assert i.tolist() == [12, -3] and i.dtype == np.int32
    assert _run(tf.strings.to_number(["12"], out_type=tf.int64)).dtype == np.int64
    j = tf.strings.join([tf.constant(["a", "b"]), "-", tf.constant(["x", "y"])], separator="+")
    assert j.shape.as_list() == [2]
    assert _run(j).tolist() == [b"a+-+x", b"b+-+y"]
    assert _run(tf.string_join([tf.constant("a"), tf.constant(["x", "y"])])).tolist() == [
        b"ax", b"ay"]
    assert _run(tf.strings.substr(["hello", "world"], 1, 3)).tolist() == [b"ell", b"orl"]
    assert _run(tf.substr(["hello", "world"], [0, 2], [2, 10])).tolist() == [b"he", b"rld"]
    assert _run(tf.strings.substr(["hello"], -3, 2)).tolist() == [b"ll"]
    n = _run(tf.strings.length(["héllo", ""]))
    assert n.tolist() == [6, 0] and n.dtype == np.int32
    assert _run(tf.strings.length(["héllo"], unit="UTF8_CHAR")).tolist() == [5]
    assert _run(tf.arg_max([[1, 5, 2], [7, 0, 1]], 1)).tolist() == [1, 0]
    am = _run(tf.arg_min([[1, 5, 2], [7, 0, 1]], 0, output_type=tf.int32))
    assert am.tolist() == [0, 1, 1] and am.dtype == np.int32


def test_errors():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert"):
            sess.run(tf.strings.to_number(["x1"]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="pos 5 out of range"):
            sess.run(tf.strings.substr(["abc"], 5, 1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="3000000000"):
            sess.run(tf.strings.to_number(["3000000000"], out_type=tf.int32))
    with pytest.raises(ValueError, match="vector of strings"):
        tf.string_split([["a"]])
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.strings.split(["a"], result_type="Ragged")
    with pytest.raises(TypeError, match="out_type"):
        tf.strings.to_number(["1"], out_type=tf.bool)
