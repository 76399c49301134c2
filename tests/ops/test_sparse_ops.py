"""Sparse ops, bucketize, hashed crosses, string hashing and vocabulary lookups: NumPy
references, TensorFlow's exact ids, shape inference and errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.sparse
import flowgraph.strings
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops import sparse_ops as so
from flowgraph.ops import string_hash_ops as sh

R = np.random.RandomState(3)


def _dense_of(indices, values, shape):
    out = np.zeros(shape, dtype=np.asarray(values).dtype)
    for i, v in zip(indices, values):
        out[tuple(i)] += v
    return out


# -- to_dense / from_dense / reorder / reshape / retain / concat -----------------------------
def test_to_dense_matches_numpy(sess):
    idx = [[0, 1, 0], [1, 0, 2], [1, 2, 1]]
    vals = np.array([1.5, -2.0, 4.0], np.float32)
    sp = SparseTensor(idx, vals, [2, 3, 4])
    out = sess.run(tf.sparse.to_dense(sp, default_value=9.0))
    ref = np.full((2, 3, 4), 9.0, np.float32)
    ref[tuple(np.array(idx).T)] = vals
    np.testing.assert_array_equal(out, ref)
    assert out.dtype == np.float32
    strings = sess.run(tf.sparse.to_dense(SparseTensor([[1]], ["x"], [3])))
    assert strings.tolist() == [b"", b"x", b""]


def test_to_dense_validates_order_and_bounds(sess):
    unordered = SparseTensor([[1, 0], [0, 2]], [1, 2], [2, 3])
    with pytest.raises(InvalidArgumentError, match="out of order"):
        sess.run(tf.sparse.to_dense(unordered))
    out = sess.run(tf.sparse.to_dense(unordered, validate_indices=False))
    assert out.tolist() == [[0, 0, 2], [1, 0, 0]]
    with pytest.raises(InvalidArgumentError, match="repeated"):
        sess.run(tf.sparse.to_dense(SparseTensor([[0, 1], [0, 1]], [1, 2], [2, 3])))
    with pytest.raises(InvalidArgumentError, match="out of bounds"):
        sess.run(tf.sparse.to_dense(SparseTensor([[0, 5]], [1], [2, 3])))


def test_sparse_to_dense_low_level_and_shape(sess):
    out = so.sparse_to_dense([[0, 1], [1, 2]], [2, 4], [7, 8], default_value=-1)
    assert out.shape.as_list() == [2, 4]
    assert sess.run(out).tolist() == [[-1, 7, -1, -1], [-1, -1, 8, -1]]
    n = tf.placeholder(tf.int32, [])
    partial = so.sparse_to_dense([[0]], tf.stack([n]), [1.0])
    assert partial.shape.as_list() == [None]
    with pytest.raises(ValueError, match="scalar"):
        so.sparse_to_dense([[0]], [2], [1.0], default_value=[0.0, 1.0])


def test_from_dense_and_reorder(sess):
    sp = tf.sparse.from_dense(np.array([[0, 3, 0], [4, 0, 5]], np.int32))
    v = sess.run([sp.indices, sp.values, sp.dense_shape])
    assert v[0].tolist() == [[0, 1], [1, 0], [1, 2]] and v[1].tolist() == [3, 4, 5]
    idx = R.permutation([[i, j] for i in range(3) for j in range(4)])[:7]
    vals = R.randn(7).astype(np.float32)
    r = tf.sparse.reorder(SparseTensor(idx, vals, [3, 4]))
    got_i, got_v = sess.run([r.indices, r.values])
    order = np.lexsort(idx.T[::-1])
    np.testing.assert_array_equal(got_i, idx[order])
    np.testing.assert_array_equal(got_v, vals[order])
    assert r.indices.shape.as_list() == [7, 2]


def test_reshape_retain_concat(sess):
    sp = SparseTensor([[0, 5], [1, 2]], [1, 2], [2, 6])
    r = tf.sparse.reshape(sp, [-1, 4])
    i, s = sess.run([r.indices, r.dense_shape])
    assert i.tolist() == [[1, 1], [2, 0]] and s.tolist() == [3, 4]
    # a fully known shape is checked when the graph is built (TensorFlow's message) ...
    with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 12 elements to "
                                         r"shape \[5, 5\] \(25 elements\)"):
        tf.sparse.reshape(sp, [5, 5])
    # ... an unknown one by the kernel
    ph = tf.sparse_placeholder(tf.int32)
    with pytest.raises(InvalidArgumentError, match="cannot reshape"):
        sess.run(tf.sparse.reshape(ph, [5, 5]).indices,
                 {ph: tf.SparseTensorValue([[0, 5], [1, 2]], [1, 2], [2, 6])})
    kept = tf.sparse.retain(SparseTensor([[0], [2], [3]], [1, 2, 3], [4]), [True, False, True])
    assert sess.run(kept.values).tolist() == [1, 3]
    a = SparseTensor([[0, 0], [1, 1]], [1, 2], [2, 2])
    b = SparseTensor([[0, 2], [1, 0]], [3, 4], [2, 3])
    c = tf.sparse.concat(1, [a, b])
    ci, cv, cs = sess.run([c.indices, c.values, c.dense_shape])
    assert ci.tolist() == [[0, 0], [0, 4], [1, 1], [1, 2]]
    assert cv.tolist() == [1, 3, 2, 4] and cs.tolist() == [2, 5]
    wide = tf.sparse.concat(0, [a, b], expand_nonconcat_dim=True)
    assert sess.run(wide.dense_shape).tolist() == [4, 3]


def test_fill_empty_rows(sess):
    sp = SparseTensor([[1, 0], [1, 2], [3, 1]], [4.0, 5.0, 6.0], [5, 3])
    out, empty = tf.sparse.fill_empty_rows(sp, -1.0)
    i, v, e = sess.run([out.indices, out.values, empty])
    assert i.tolist() == [[0, 0], [1, 0], [1, 2], [2, 0], [3, 1], [4, 0]]
    assert v.tolist() == [-1.0, 4.0, 5.0, -1.0, 6.0, -1.0]
    assert e.tolist() == [True, False, True, False, True]
    assert out.indices.shape.as_list() == [None, 2]
    with pytest.raises(TypeError):
        tf.sparse.fill_empty_rows(sp, "x")


# -- reduce_sum / matmul ---------------------------------------------------------------------
@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (1, False), ([0, 2], True),
                                                (-1, False)])
def test_reduce_sum(sess, axis, keepdims):
    idx = np.array([[0, 1, 0], [1, 0, 3], [1, 2, 1], [0, 2, 3]])
    vals = R.randn(4)
    sp = SparseTensor(idx, vals, [2, 3, 4])
    out = tf.sparse.reduce_sum(sp, axis=axis, keepdims=keepdims)
    ref = _dense_of(idx, vals, (2, 3, 4)).sum(axis=None if axis is None else tuple(
        np.atleast_1d(axis)), keepdims=keepdims)
    np.testing.assert_allclose(sess.run(out), ref)
    assert out.shape.as_list() == list(np.shape(ref))


@pytest.mark.parametrize(("adj_a", "adj_b"), [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_sparse_dense_matmul(sess, adj_a, adj_b):
    idx = np.array([[0, 1], [1, 0], [1, 2], [2, 2]])
    vals = R.randn(4)
    a = _dense_of(idx, vals, (3, 3))[:, :3]
    a_shape = (3, 3)
    sp = SparseTensor(idx, vals, a_shape)
    b = R.randn(4, 3) if adj_b else R.randn(3, 4)
    out = tf.sparse.matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b)
    ref = (a.T if adj_a else a) @ (b.T if adj_b else b)
    np.testing.assert_allclose(sess.run(out), ref, rtol=1e-10)
    assert out.shape.as_list() == [3, 4]
    with pytest.raises(ValueError, match="inner dimensions"):
        tf.sparse.matmul(SparseTensor([[0, 0]], [1.0], [2, 5]), np.ones((3, 2), np.float32))


# -- segment reductions ------------------------------------------------------------------
def _segment_ref(data, indices, seg, n, combiner):
    out = np.zeros((n, *data.shape[1:]))
    count = np.zeros(n)
    for i, s in zip(indices, seg):
        out[s] += data[i]
        count[s] += 1
    scale = {"sum": np.ones(n), "mean": np.maximum(count, 1),
             "sqrtn": np.sqrt(np.maximum(count, 1))}[combiner]
    return out / scale.reshape(-1, *([1] * (data.ndim - 1)))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_segment_reductions(sess, combiner):
    fn = {"sum": tf.sparse.segment_sum, "mean": tf.sparse.segment_mean,
          "sqrtn": tf.sparse.segment_sqrt_n}[combiner]
    data = R.randn(5, 2, 3).astype(np.float32)
    indices, seg = [4, 0, 0, 2, 3], [0, 0, 2, 2, 3]
    out = fn(data, indices, seg)
    np.testing.assert_allclose(sess.run(out), _segment_ref(data, indices, seg, 4, combiner),
                               rtol=1e-6)
    assert out.shape.as_list() == [None, 2, 3]
    wide = fn(data, indices, seg, num_segments=6)
    assert wide.shape.as_list() == [6, 2, 3]
    assert sess.run(wide).shape == (6, 2, 3)


def test_segment_errors_and_shapes(sess):
    with pytest.raises(InvalidArgumentError, match="not increasing"):
        sess.run(tf.sparse.segment_sum(np.ones((3, 2), np.float32), [0, 1], [1, 0]))
    with pytest.raises(InvalidArgumentError, match="out of range"):
        sess.run(tf.sparse.segment_sum(np.ones((3, 2), np.float32), [0, 3], [0, 0]))
    with pytest.raises(ValueError, match=r"differ in length"):
        tf.sparse.segment_sum(np.ones((3, 2), np.float32), [0, 1, 2], [0, 0])
    with pytest.raises(ValueError, match="floating"):
        tf.sparse.segment_sum(np.ones((3, 2), np.int32), [0], [0])
    unknown = tf.sparse.segment_mean(tf.placeholder(tf.float32), [0], [0])
    assert unknown.shape.ndims is None


def test_segment_gradient_is_indexed_slices_with_sparse_gradient(sess):
    data = tf.constant(R.randn(6, 2))
    out = tf.sparse.segment_mean(data, [5, 1, 5], [0, 0, 1], sparse_gradient=True)
    dense_out = tf.sparse.segment_mean(data, [5, 1, 5], [0, 0, 1])
    grad_ys = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    (g,) = tf.gradients(out, [data], grad_ys=grad_ys)
    (dense,) = tf.gradients(dense_out, [data], grad_ys=grad_ys)
    assert isinstance(g, IndexedSlices) and not isinstance(dense, IndexedSlices)
    np.testing.assert_allclose(sess.run(dense)[[1, 5]], [[0.5, 1.0], [3.5, 5.0]])
    assert g.values.op.type == "SparseSegmentMeanGradV2"
    values, indices = sess.run([g.values, g.indices])
    # one row per distinct index, sorted (rows of a repeated index added up)
    np.testing.assert_array_equal(indices, [1, 5])
    np.testing.assert_allclose(values, [[0.5, 1.0], [3.5, 5.0]])


# -- bucketize / crosses ------------------------------------------------------------------
def test_bucketize(sess):
    x = np.array([[-5.0, 0.0], [3.0, 10.0]])
    out = so.bucketize(x, [0.0, 10.0])
    np.testing.assert_array_equal(sess.run(out), np.searchsorted([0.0, 10.0], x, "right"))
    assert out.dtype == tf.int32 and out.shape.as_list() == [2, 2]
    with pytest.raises(ValueError, match="sorted"):
        so.bucketize([1.0], [2.0, 1.0])
    with pytest.raises(TypeError, match="numeric"):
        so.bucketize(["a"], [1.0])


WORDS = dict(indices=[[0, 0], [0, 1], [2, 0]], values=["hello", "world", "foo"],
             dense_shape=[3, 2])


def test_cross_hashed_matches_tensorflow(sess):
    # Ids computed by TensorFlow 2.15 (tf.compat.v1.sparse.cross_hashed) for these inputs.
    words = SparseTensor(**WORDS)
    dense = tf.constant([["a", "b"], ["c", "d"], ["e", "f"]])
    out = tf.sparse.cross_hashed([words, dense], num_buckets=1000)
    i, v, s = sess.run([out.indices, out.values, out.dense_shape])
    assert i.tolist() == [[0, 0], [0, 1], [0, 2], [0, 3], [2, 0], [2, 1]]
    assert v.tolist() == [624, 841, 201, 455, 690, 990]
    assert s.tolist() == [3, 4]
    raw = tf.sparse.cross_hashed([words, dense], num_buckets=0, hash_key=0xDECAFCAFFE)
    assert sess.run(raw.values).tolist()[:2] == [5688361698657710624, 2019040470174113034]
    ints = tf.sparse.cross_hashed([tf.constant([[1, 2], [3, 4], [5, 6]], tf.int64),
                                   tf.constant([["a"], ["b"], ["c"]])], num_buckets=97)
    assert sess.run(ints.values).tolist() == [87, 78, 35, 50, 84, 0]


def test_cross_strings_and_errors(sess):
    out = tf.sparse.cross([tf.constant([["a"], ["b"]]), tf.constant([["x", "y"], ["z", "w"]])])
    assert sess.run(out.values).tolist() == [b"a_X_x", b"a_X_y", b"b_X_z", b"b_X_w"]
    with pytest.raises(TypeError, match="int64 or string"):
        tf.sparse.cross_hashed([tf.constant([[1.0]]), tf.constant([["a"]])])
    with pytest.raises(InvalidArgumentError, match="batch sizes"):
        sess.run(tf.sparse.cross([tf.constant([["a"]]), tf.constant([["x"], ["y"]])]).values)


# -- strings ---------------------------------------------------------------------------------
# Fingerprint64 % 2**62, from TensorFlow 2.15's to_hash_bucket_fast (every length class of
# FarmHash: 0, 1-3, 4-7, 8-16, 17-32, 33-64 and the > 64 loop, plus UTF-8).
TF_HASHES = {
    "": 1936946117179621455, "a": 3694432073954588131, "hello": 3786372426573024488,
    "abcdefgh": 4533385575889643785, "0123456789abcdef": 1493332391325024359,
    "the quick brown fox jumps": 1388962031143230994, "x" * 40: 3168538174772821140,
    "y" * 70: 2525296024834194218, "z" * 130: 460848126499287204,
    "日本語": 1846174170784512071, "omega": 2017805211946692578,
}


def test_hash_bucket_matches_tensorflow(sess):
    keys = list(TF_HASHES)
    out = tf.strings.to_hash_bucket_fast(keys, 2**62)
    assert out.dtype == tf.int64
    assert sess.run(out).tolist() == list(TF_HASHES.values())
    small = sess.run(tf.strings.to_hash_bucket_fast(keys, 1000000))
    assert small.tolist() == [397263, 363939, 800296, 807497, 412263, 394706, 984852, 582122,
                              675108, 675783, 856290]
    fed = tf.placeholder(tf.string, [None, 1])
    got = sess.run(tf.strings.to_hash_bucket_fast(fed, 1000000), {fed: [["hello"], ["a"]]})
    assert got.tolist() == [[800296], [363939]]  # str feeds hash like bytes constants
    with pytest.raises(TypeError, match="string"):
        tf.strings.to_hash_bucket_fast([1, 2], 10)
    with pytest.raises(ValueError, match=">= 1"):
        tf.strings.to_hash_bucket_fast(["a"], 0)


def test_as_string(sess):
    out = sess.run([tf.strings.as_string([7, -12]), tf.strings.as_string([True, False]),
                    tf.strings.as_string([1.5], precision=2),
                    tf.strings.as_string([3], width=4, fill="0")])
    assert out[0].tolist() == [b"7", b"-12"] and out[1].tolist() == [b"true", b"false"]
    assert out[2].tolist() == [b"1.50"] and out[3].tolist() == [b"0003"]
    with pytest.raises(ValueError, match="already a string"):
        tf.strings.as_string(["a"])


def test_vocab_lookup(sess, tmp_path):
    ids = sh.vocab_lookup(["b", "zz", "a"], vocabulary=["a", "b"])
    assert sess.run(ids).tolist() == [1, -1, 0]
    oov = sh.vocab_lookup(["red", "purple", "blue"], vocabulary=["red", "green", "blue"],
                          num_oov_buckets=2)
    assert sess.run(oov).tolist() == [0, 3, 2]  # TensorFlow's ids (OOV hashed by FarmHash)
    ints = sh.vocab_lookup(tf.constant([[30], [10], [99]], tf.int64), vocabulary=[10, 20, 30])
    assert sess.run(ints).tolist() == [[2], [0], [-1]]
    path = tmp_path / "vocab.txt"
    path.write_text("x\ny\nz\n")
    from_file = sh.vocab_lookup(["z", "y", "q"], vocabulary_file=str(path), vocab_size=2)
    assert sess.run(from_file).tolist() == [-1, 1, -1]
    too_big = sh.vocab_lookup(["z"], vocabulary_file=str(path), vocab_size=9,
                              column_name="col")
    with pytest.raises(InvalidArgumentError, match="vocab_size of column 'col'"):
        sess.run(too_big)
    with pytest.raises(TypeError, match="strings or integers"):
        sh.vocab_lookup([1.0], vocabulary=["a"])
