"""Sets, edit distance, audio, fingerprints, Poisson samples, tf.Module, tf.config and
other TF1 names added for API coverage (issue 15). Expected values were recorded from
TensorFlow 2.15 (tf.compat.v1) with the tf-oracle on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from module_examples import assert_examples_pass

import flowgraph as tf

MODULES = ["flowgraph.ops.set_ops", "flowgraph.ops.sets_namespace", "flowgraph.ops.audio_ops",
           "flowgraph.ops.misc_compat_ops", "flowgraph.ops.module",
           "flowgraph.backends.config_compat", "flowgraph.ops.type_spec",
           "flowgraph.ops.fake_quant_ops", "flowgraph.ops.quantization_namespace",
           "flowgraph.ops.sparse_serialize_ops"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    assert_examples_pass(name)


def _sp(x):
    return (x.indices, x.values, x.dense_shape)


def _lists(v):
    return [np.asarray(x).tolist() for x in v]


def test_sets_and_edit_distance_match_tensorflow():
    with tf.Graph().as_default():
        a = tf.constant([[1, 2, 2, 0], [3, 3, 4, 5]])
        b = tf.constant([[2, 7, 0, 0], [5, 6, 3, 3]])
        sb = tf.SparseTensor([[0, 0], [1, 1], [1, 2]], [9, 4, 1], [2, 3])
        h = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], [2, 1, 1])
        t = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1]], ["a", "b", "c"], [2, 2, 2])
        with tf.Session() as sess:
            got = sess.run({
                "u": _sp(tf.sets.union(a, b)), "i": _sp(tf.sets.intersection(a, b)),
                "d": _sp(tf.sets.difference(a, b)),
                "d2": _sp(tf.sets.difference(a, b, aminusb=False)),
                "szs": tf.sets.size(sb), "us": _sp(tf.sets.union(a[:, :3], sb)),
                "ed": tf.edit_distance(h, t), "ed2": tf.edit_distance(h, t, normalize=False),
            })
    assert _lists(got["u"])[1:] == [[0, 1, 2, 7, 3, 4, 5, 6], [2, 4]]
    assert _lists(got["i"]) == [[[0, 0], [0, 1], [1, 0], [1, 1]], [0, 2, 3, 5], [2, 2]]
    assert _lists(got["d"]) == [[[0, 0], [1, 0]], [1, 4], [2, 1]]
    assert _lists(got["d2"])[1] == [7, 6] and got["szs"].tolist() == [1, 2]
    assert _lists(got["us"])[1:] == [[1, 2, 9, 1, 3, 4], [2, 3]]
    assert got["ed"].tolist() == [[np.inf, 1.0], [0.5, 0.0]]
    assert got["ed2"].tolist() == [[1.0, 1.0], [1.0, 0.0]]
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sets.size([[1, 2]])


def test_fingerprint_audio_poisson():
    with tf.Graph().as_default():
        wav = tf.audio.encode_wav(tf.constant([[0.25, -0.5], [1.0, 0.0]]), 16000)
        audio, rate = tf.audio.decode_wav(wav, desired_samples=3)
        mono, _ = tf.audio.decode_wav(tf.audio.encode_wav([[0.5]], 8000), desired_channels=2)
        draws = tf.random_poisson([0.5, 20.0], [4000], seed=3)
        with tf.Session() as sess:
            fp, fps, a, r, m, d = sess.run([
                tf.fingerprint(tf.constant([[1, 2], [3, 4]])),
                tf.fingerprint(tf.constant(["ab", "c"])), audio, rate, mono, draws])
    assert fp.tolist() == [[76, 18, 253, 133, 168, 204, 240, 10],
                           [254, 162, 60, 240, 103, 244, 53, 255]]
    assert fps.tolist() == [[30, 165, 173, 66, 82, 110, 141, 170],
                            [40, 123, 203, 224, 169, 24, 161, 158]]
    # 1.0 saturates to the largest 16-bit sample, 32767 / 32768
    np.testing.assert_allclose(a, [[0.25, -0.5], [32767 / 32768, 0.0], [0.0, 0.0]])
    assert int(r) == 16000 and m.tolist() == [[0.5, 0.5]]
    assert d.shape == (4000, 2) and abs(d[:, 0].mean() - 0.5) < 0.05
    assert abs(d[:, 1].mean() - 20.0) < 0.5


def test_module_tracks_variables():
    class Block(tf.Module):
        def __init__(self):
            super().__init__()
            with self.name_scope:
                self.inner = [tf.Variable(1.0, name="a"), {"k": tf.Variable(2.0, name="b")}]

    class Model(tf.Module):
        def __init__(self):
            super().__init__(name="model")
            self.block = Block()
            self.frozen = tf.Variable(3.0, trainable=False, name="c")

    with tf.Graph().as_default():
        m = Model()
        assert len(m.variables) == 3 and len(m.trainable_variables) == 2
        assert m.submodules == (m.block,) and m.block.name == "block"
        assert m.non_trainable_variables[0].op.name == "c"
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="bad name")


def test_patches_conv_and_partitioned_variables():
    rng = np.random.RandomState(0)
    v = rng.randn(1, 3, 4, 4, 2).astype(np.float32)
    with tf.Graph().as_default():
        p = tf.extract_volume_patches(tf.constant(v), [1, 2, 2, 2, 1], [1, 1, 2, 2, 1], "SAME")
        x = tf.constant(rng.randn(1, 5, 5, 2).astype(np.float32))
        f = tf.constant(rng.randn(3, 3, 2, 4).astype(np.float32))
        got_conv = tf.conv(x, f, [1, 1, 1, 1], "SAME")
        want_conv = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME")
        parts = tf.create_partitioned_variables([5, 2], [2, 1],
                                                np.arange(10.0).reshape(5, 2), name="emb")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            patches, c1, c2, p0, p1 = sess.run([p, got_conv, want_conv, *parts])
    assert patches.shape == (1, 3, 2, 2, 16)
    # SAME padding: the first patch starts at (0, 0, 0); its first element is v[0,0,0,0]
    np.testing.assert_array_equal(patches[0, 0, 0, 0, :2], v[0, 0, 0, 0])
    np.testing.assert_allclose(c1, c2, rtol=1e-5)
    assert p0.tolist() == [[0, 1], [2, 3], [4, 5]] and p1.tolist() == [[6, 7], [8, 9]]
    assert [t.op.name for t in parts] == ["emb/part_0", "emb/part_1"]


def test_serialized_sparse_minibatches_match_tensorflow():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1, 0], [2, 0, 1], [2, 1, 1]], [1.5, 2.5, 3.5], [3, 2, 2])
        rows = tf.serialize_many_sparse(sp)
        back = tf.deserialize_many_sparse(rows, tf.float32)
        js = tf.decode_json_example(['{"features": {"feature": {"n": {"int64List": '
                                     '{"value": ["7", 8]}}, "s": {"bytesList": {"value": '
                                     '["YWI="]}}}}}'])
        with tf.Session() as sess:
            r, bi, bv, bs, j = sess.run([rows, back.indices, back.values, back.dense_shape,
                                         js])
    # TensorFlow's bytes for the first entry and for the empty second one
    assert r[0, 1] == b'\x08\x01\x12\x04\x12\x02\x08\x01"\x04\x00\x00\xc0?'
    assert r[1, 0] == b"\x08\t\x12\x06\x12\x00\x12\x02\x08\x02"
    assert r[1, 1] == b"\x08\x01\x12\x02\x12\x00"
    assert bi.tolist() == [[0, 1, 0], [2, 0, 1], [2, 1, 1]] and bs.tolist() == [3, 2, 2]
    assert bv.tolist() == [1.5, 2.5, 3.5]
    ex = tf.train.Example.FromString(j[0])
    assert list(ex.features.feature["n"].int64_list.value) == [7, 8]
    assert list(ex.features.feature["s"].bytes_list.value) == [b"ab"]


def test_approx_top_k_along_any_axis_matches_numpy():
    # tf.nn and tf.math share one implementation; a non-last axis is swapped to the end
    # and back, so the values and the indices must both come back on that axis.
    assert tf.nn.approx_max_k is tf.math.approx_max_k
    assert tf.nn.approx_min_k is tf.math.approx_min_k
    x = np.random.RandomState(3).randn(5, 4, 3).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        (vmax, imax), (vmin, imin) = sess.run(
            [tf.nn.approx_max_k(x, 2, reduction_dimension=0),
             tf.math.approx_min_k(x, 2, reduction_dimension=1)])
    np.testing.assert_array_equal(vmax, -np.sort(-x, axis=0)[:2])
    np.testing.assert_array_equal(np.take_along_axis(x, imax, 0), vmax)
    np.testing.assert_array_equal(vmin, np.sort(x, axis=1)[:, :2])
    np.testing.assert_array_equal(np.take_along_axis(x, imin, 1), vmin)
