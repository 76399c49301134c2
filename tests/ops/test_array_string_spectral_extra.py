"""Array, string, complex/FFT and namespace additions for TF1 API coverage (issue 15).
Expected values were recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle
running the same calls; FFTs are checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from module_examples import assert_examples_pass

import flowgraph as tf

MODULES = ["flowgraph.ops.array_extra_ops", "flowgraph.ops.spectral_ops",
           "flowgraph.math.signal", "flowgraph.ops.string_extra_ops",
           "flowgraph.ops.queue_namespace", "flowgraph.ops.manip_namespace",
           "flowgraph.framework.nest", "flowgraph.framework.tf_messages",
           "flowgraph.ops.gradient_shortcuts", "flowgraph.saved_model.tf_messages",
           "flowgraph.ops.string_legacy_hash_ops"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    assert_examples_pass(name)


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_array_ops_match_tensorflow():
    with tf.Graph().as_default():
        got = _run({
            "stb4": tf.space_to_batch(tf.reshape(tf.range(16), [1, 4, 4, 1]),
                                      [[0, 0], [0, 0]], 2),
            "rsbp": tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 1]]),
            "rep": tf.repeat([[1, 2], [3, 4]], 3),
            "rep1": tf.repeat([[1, 2], [3, 4]], [2, 1], axis=1),
            "bg": tf.batch_gather([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]],
                                  [[2, 0], [1, 1]]),
            "uwc": tf.unique_with_counts([4, 1, 4, 2, 1, 4]),
            "sd": tf.setdiff1d([5, 1, 5, 2], [2]),
            "ss": tf.searchsorted([[1, 3, 5], [2, 4, 6]], [[3, 6], [1, 7]]),
            "unr": tf.unravel_index(7, [3, 4]),
            "bc": tf.bitcast(tf.constant([1, 2], tf.int8), tf.int16),
            "roll": tf.roll(tf.reshape(tf.range(6), [2, 3]), [1, 1], [1, 1]),
        })
    assert got["stb4"].ravel().tolist() == [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7,
                                            13, 15]
    assert [a.ravel().tolist() for a in got["rsbp"]] == [[1, 0, 0, 2], [0, 0, 0, 1]]
    assert got["rep"].tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    assert got["rep1"].tolist() == [[1, 1, 2], [3, 3, 4]]
    assert got["bg"].ravel().tolist() == [5, 6, 1, 2, 9, 10, 9, 10]
    assert [a.tolist() for a in got["uwc"]] == [[4, 1, 2], [0, 1, 0, 2, 1, 0], [3, 2, 1]]
    assert [a.tolist() for a in got["sd"]] == [[5, 1, 5], [0, 1, 2]]
    assert got["ss"].tolist() == [[1, 3], [0, 3]] and got["unr"].tolist() == [1, 3]
    assert got["bc"].item() == 513 and got["roll"].tolist() == [[1, 2, 0], [4, 5, 3]]


def test_array_op_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not divisible"):
            tf.space_to_batch_nd(tf.zeros([1, 3, 4, 1]), [2, 2], [[0, 0], [0, 0]])
        with pytest.raises(ValueError, match="side must be"):
            tf.searchsorted([1], [1], side="middle")
        with pytest.raises(tf.errors.InvalidArgumentError, match="flat indices"):
            _run(tf.unravel_index(12, [3, 4]))


def test_strings_match_tensorflow():
    s = [[" Ab1 c22 ", "x"], ["yZ", "22 "]]
    with tf.Graph().as_default():
        got = _run({
            "rr": tf.regex_replace(s, "([0-9])", r"<\1>"),
            "rr1": tf.regex_replace(s, "[0-9]", "#", replace_global=False),
            "rj0": tf.reduce_join(s, 0, separator="|"),
            "rj1": tf.reduce_join(s, axis=1, keep_dims=True),
            "b64p": tf.encode_base64(s, pad=True),
            "raw": tf.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"]),
                                 tf.int16),
            "rawbe": tf.decode_raw([b"\x01\x00\x02\x00"], tf.uint16, little_endian=False),
            "ser": tf.serialize_tensor(tf.constant([[1.5, 2.0]])),
            "ser_s": tf.serialize_tensor(tf.constant(["ab", "c"])),
            "up": tf.strings.upper(s), "strip": tf.string_strip(s),
        })
    assert got["rr"].tolist() == [[b" Ab<1> c<2><2> ", b"x"], [b"yZ", b"<2><2> "]]
    assert got["rr1"].tolist() == [[b" Ab# c22 ", b"x"], [b"yZ", b"#2 "]]
    assert got["rj0"].tolist() == [b" Ab1 c22 |yZ", b"x|22 "]
    assert got["rj1"].tolist() == [[b" Ab1 c22 x"], [b"yZ22 "]]
    assert got["b64p"].tolist() == [[b"IEFiMSBjMjIg", b"eA=="], [b"eVo=", b"MjIg"]]
    assert got["raw"].tolist() == [[1, 2], [-1, 256]] and got["rawbe"].tolist() == [[256, 512]]
    # byte-equal to TensorFlow's serialized TensorProtos
    assert got["ser"] == b'\x08\x01\x12\x08\x12\x02\x08\x01\x12\x02\x08\x02"\x08\x00\x00\xc0?' \
        b"\x00\x00\x00@"
    assert got["ser_s"] == b"\x08\x07\x12\x04\x12\x02\x08\x02B\x02abB\x01c"
    assert got["up"].tolist() == [[b" AB1 C22 ", b"X"], [b"YZ", b"22 "]]
    assert got["strip"].tolist() == [[b"Ab1 c22", b"x"], [b"yZ", b"22"]]


def test_files_and_parse_errors(tmp_path):
    path = str(tmp_path / "sub" / "f.bin")
    with tf.Graph().as_default():
        write = tf.write_file(path, tf.serialize_tensor([1.0, 2.0]))
        back = tf.parse_tensor(tf.read_file(path), tf.float32)
        wrong = tf.parse_tensor(tf.read_file(path), tf.int32)
        with tf.Session() as sess:
            sess.run(write)
            assert sess.run(back).tolist() == [1.0, 2.0]
            with pytest.raises(tf.errors.InvalidArgumentError, match="type mismatch"):
                sess.run(wrong)
            with pytest.raises(tf.errors.NotFoundError):
                sess.run(tf.read_file(str(tmp_path / "missing")))


def test_complex_and_fft_match_numpy():
    rng = np.random.RandomState(5)
    z = (rng.randn(2, 4, 6) + 1j * rng.randn(2, 4, 6)).astype(np.complex64)
    with tf.Graph().as_default():
        x = tf.constant(z)
        got = _run([tf.fft(x), tf.ifft(x), tf.fft2d(x), tf.ifft2d(x), tf.fft3d(x),
                    tf.ifft3d(x), tf.real(x), tf.imag(x), tf.angle(x),
                    tf.complex(tf.real(x), tf.imag(x)), tf.signal.rfft(tf.real(x)),
                    tf.angle(tf.constant([-1.0, 2.0]))])
    want = [np.fft.fft(z), np.fft.ifft(z), np.fft.fft2(z), np.fft.ifft2(z),
            np.fft.fftn(z, axes=(-3, -2, -1)), np.fft.ifftn(z, axes=(-3, -2, -1)),
            z.real, z.imag, np.angle(z), z, np.fft.rfft(z.real)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[-1], [np.pi, 0.0])
    assert got[0].dtype == np.complex64 and got[6].dtype == np.float32
    with pytest.raises(TypeError, match="complex64 or complex128"):
        tf.fft(tf.zeros([4]))


def test_nest_and_namespaces():
    Pair = __import__("collections").namedtuple("Pair", "a b")
    structure = {"z": Pair(1, [2, 3]), "a": None}
    assert tf.nest.flatten(structure) == [None, 1, 2, 3]
    packed = tf.nest.pack_sequence_as(structure, ["n", 10, 20, 30])
    assert packed == {"z": Pair(10, [20, 30]), "a": "n"}
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.assert_same_structure([1, [2]], [1, 2])
    assert tf.queue.RandomShuffleQueue is tf.RandomShuffleQueue
    assert tf.spectral.fft is tf.fft and tf.manip.space_to_batch_nd is tf.space_to_batch_nd
    assert tf.io.decode_raw is tf.decode_raw and tf.strings.strip is tf.string_strip


def test_legacy_string_hashes_match_tensorflow():
    strings = ["", "a", "ab", "hello", "1234567", "12345678", "123456789",
               "a much longer string with spaces"]
    with tf.Graph().as_default():
        weak = tf.string_to_hash_bucket(strings, 1000003)
        strong = tf.strings.to_hash_bucket_strong(strings, 1000003, key=[1, 2])
        got_weak, got_strong = _run([weak, strong])
    assert got_weak.tolist() == [598820, 789371, 280251, 546981, 323898, 866643, 521224,
                                 42886]
    assert got_strong.tolist() == [383377, 332029, 682334, 430577, 927678, 398241, 179736,
                                   62075]
    with pytest.raises(ValueError, match="int64 range"):
        tf.string_to_hash_bucket_strong(strings, 5, key=[2 ** 63, 1])
