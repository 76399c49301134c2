"""The sparse, segment-gradient, scatter, random and ragged op types of the raw-op gap
fill (`flowgraph/ops/sparse_raw_ops.py`, `scatter_raw_ops.py`, `random_raw_ops.py`,
`ragged_raw_ops.py`): values
and errors against TensorFlow 2.15's (the expected values are TensorFlow's, from the
tf-oracle), the op types TensorFlow's public functions emit, and a GraphDef TensorFlow
wrote with all of them (tests/data/tf_formats/raw_sparse/make_fixture.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf

R = tf.raw_ops
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_sparse")
I64 = tf.int64


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _c(x):
    return tf.constant(x, I64)


A_IDX, A_VAL, SHAPE = [[0, 2], [1, 0], [1, 2]], [1.0, -2.0, 3.0], [2, 3]
B_IDX, B_VAL = [[0, 1], [1, 0], [1, 2]], [5.0, 2.0, -2.9]


def _pair(op, **kw):
    return op(a_indices=_c(A_IDX), a_values=A_VAL, a_shape=_c(SHAPE), b_indices=_c(B_IDX),
              b_values=B_VAL, b_shape=_c(kw.pop("b_shape", SHAPE)), **kw)


# -- values, as TensorFlow computes them --------------------------------------------------
def test_sparse_add_thresholds_only_sums_of_two_entries():
    with tf.Graph().as_default():
        idx, val, shape = _run(_pair(R.SparseAdd, thresh=0.5))
    assert idx.tolist() == [[0, 1], [0, 2]] and shape.tolist() == [2, 3]
    np.testing.assert_allclose(val, [5.0, 1.0])


def test_sparse_add_grad_routes_each_sum_back_to_its_operands():
    with tf.Graph().as_default():
        a, b = _run(R.SparseAddGrad(
            backprop_val_grad=[1.0, 2.0, 3.0], a_indices=_c([[0, 0], [1, 1]]),
            b_indices=_c([[0, 1], [1, 1]]), sum_indices=_c([[0, 0], [0, 1], [1, 1]])))
    assert a.tolist() == [1.0, 3.0] and b.tolist() == [2.0, 3.0]


def test_sparse_sparse_maximum_and_minimum_count_missing_entries_as_zero():
    with tf.Graph().as_default():
        (idx, mx), (_, mn) = _run([_pair(R.SparseSparseMaximum), _pair(R.SparseSparseMinimum)])
    assert idx.tolist() == [[0, 1], [0, 2], [1, 0], [1, 2]]
    np.testing.assert_allclose(mx, [5.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(mn, [0.0, 0.0, -2.0, -2.9], rtol=1e-6)


def test_sparse_with_dense_operands():
    with tf.Graph().as_default():
        sp = {"sp_indices": _c(A_IDX), "sp_values": A_VAL, "sp_shape": _c(SHAPE)}
        out = _run([
            R.SparseTensorDenseAdd(a_indices=_c(A_IDX), a_values=A_VAL, a_shape=_c(SHAPE),
                                   b=tf.ones([2, 3])),
            R.SparseDenseCwiseMul(**sp, dense=tf.constant([1.0, 2.0, 3.0])),
            R.SparseDenseCwiseAdd(**sp, dense=tf.constant(1.0)),
            R.SparseDenseCwiseDiv(sp_indices=_c(A_IDX), sp_values=[7, -7, 9],
                                  sp_shape=_c(SHAPE), dense=tf.constant([[2], [2]]))])
    assert out[0].tolist() == [[1.0, 1.0, 2.0], [-1.0, 1.0, 4.0]]
    assert out[1].tolist() == [3.0, -2.0, 9.0]
    assert out[2].tolist() == [2.0, -1.0, 4.0]
    assert out[3].tolist() == [3, -3, 4]  # integer division truncates, as in C


def test_sparse_concat_slice_split():
    with tf.Graph().as_default():
        concat = R.SparseConcat(indices=[_c([[1, 0], [0, 1]]), _c([[0, 0]])],
                                values=[[1, 2], [3]], shapes=[_c([2, 2]), _c([2, 1])],
                                concat_dim=-1)
        sliced = R.SparseSlice(indices=_c([[0, 1], [1, 3], [2, 0], [1, 1]]),
                               values=[1, 2, 3, 4], shape=_c([3, 4]), start=_c([1, 1]),
                               size=_c([5, 2]))
        outside = R.SparseSlice(indices=_c([[0, 1]]), values=[1], shape=_c([3, 4]),
                                start=_c([4, 1]), size=_c([5, 2]))
        grad = R.SparseSliceGrad(backprop_val_grad=[10.0, 20.0],
                                 input_indices=_c([[0, 1], [1, 3], [2, 0], [1, 1]]),
                                 input_start=_c([1, 1]), output_indices=_c([[0, 2], [0, 0]]))
        split = R.SparseSplit(split_dim=_c(1), indices=_c([[0, 0], [0, 4], [1, 2], [1, 3]]),
                              values=[1, 2, 3, 4], shape=_c([2, 5]), num_split=2)
        c, s, o, g, sp = _run([concat, sliced, outside, grad, split])
    assert [x.tolist() for x in c] == [[[0, 1], [0, 2], [1, 0]], [2, 3, 1], [2, 3]]
    assert [x.tolist() for x in s] == [[[0, 0]], [4], [2, 2]]
    assert o[0].shape == (0, 2) and o[2].tolist() == [0, 2]
    assert g.tolist() == [0.0, 10.0, 0.0, 20.0]
    # TF's grouping: (output_indices, output_values, output_shape), each a list
    assert [x.tolist() for x in sp[0]] == [[[0, 0], [1, 2]], [[0, 1], [1, 0]]]
    assert [x.tolist() for x in sp[1]] == [[1, 3], [2, 4]]
    assert [x.tolist() for x in sp[2]] == [[2, 3], [2, 2]]


def test_sparse_softmax_comes_out_in_canonical_order():
    with tf.Graph().as_default():
        out = _run(R.SparseSoftmax(sp_indices=_c([[0, 0], [0, 2], [1, 1], [1, 0]]),
                                   sp_values=[1.0, 2.0, 5.0, 3.0], sp_shape=_c([2, 3])))
    np.testing.assert_allclose(out, [0.2689414322376251, 0.7310585975646973,
                                     0.11920291185379028, 0.8807970285415649], rtol=1e-6)


def test_sparse_reductions():
    with tf.Graph().as_default():
        kw = {"input_indices": _c([[2, 1], [0, 0], [0, 2]]),
              "input_values": [2.0, -1.0, -3.0], "input_shape": _c([3, 3])}
        rmax, rmax_all, mx, mx_keep, sm, sm_all = _run([
            R.SparseReduceMax(**kw, reduction_axes=[1]),
            R.SparseReduceMax(**kw, reduction_axes=[0, 1]),
            R.SparseReduceMaxSparse(**kw, reduction_axes=[1]),
            R.SparseReduceMaxSparse(**kw, reduction_axes=[-1], keep_dims=True),
            R.SparseReduceSumSparse(**kw, reduction_axes=[0]),
            R.SparseReduceSumSparse(**kw, reduction_axes=[0, 1])])
    assert rmax.tolist() == [-1.0, 0.0, 2.0] and float(rmax_all) == 2.0  # empty row: 0
    assert [x.tolist() for x in mx] == [[[0], [2]], [-1.0, 2.0], [3]]
    assert [x.tolist() for x in mx_keep] == [[[0, 0], [2, 0]], [-1.0, 2.0], [3, 1]]
    assert [x.tolist() for x in sm] == [[[0], [1], [2]], [-1.0, 2.0, -3.0], [3]]
    assert [x.tolist() for x in sm_all] == [[[]], [-2.0], []]


def test_serialize_sparse_writes_tensorflows_bytes_and_deserializes_batches():
    with tf.Graph().as_default():
        one = R.SerializeSparse(sparse_indices=_c([[0]]), sparse_values=[1.5],
                                sparse_shape=_c([2]))
        two = R.SerializeSparse(sparse_indices=_c([[1], [2]]), sparse_values=[2.5, 3.0],
                                sparse_shape=_c([3]))
        batch = R.DeserializeSparse(serialized_sparse=tf.stack([one, two]), dtype=tf.float32)
        grid = R.DeserializeSparse(serialized_sparse=tf.reshape(tf.stack([one, one]),
                                                                [1, 2, 3]), dtype=tf.float32)
        single = R.DeserializeSparse(serialized_sparse=one, dtype=tf.float32)
        s, b, g, o = _run([one, batch, grid, single])
    assert s.tolist() == [b'\x08\t\x12\x08\x12\x02\x08\x01\x12\x02\x08\x01"\x08' + bytes(8),
                          b'\x08\x01\x12\x04\x12\x02\x08\x01"\x04\x00\x00\xc0?',
                          b'\x08\t\x12\x04\x12\x02\x08\x01"\x08\x02' + bytes(7)]
    assert [x.tolist() for x in b] == [[[0, 0], [1, 1], [1, 2]], [1.5, 2.5, 3.0], [2, 3]]
    assert [x.tolist() for x in g] == [[[0, 0, 0], [0, 1, 0]], [1.5, 1.5], [1, 2, 2]]
    assert [x.tolist() for x in o] == [[[0]], [1.5], [2]]


@pytest.mark.parametrize(("kind", "dense", "rows", "unique"), [
    ("Sum", [[3.0], [0.0], [0.0], [1.0], [0.0]], [[3.0], [1.0]], [0, 3]),
    ("Mean", [[2.5], [0.0], [0.0], [0.5], [0.0]], [[2.5], [0.5]], [0, 3]),
    ("SqrtN", [[2.707106828689575], [0.0], [0.0], [0.7071067690849304], [0.0]],
     [[2.707106828689575], [0.7071067690849304]], [0, 3])])
def test_sparse_segment_gradients(kind, dense, rows, unique):
    with tf.Graph().as_default():
        d = getattr(R, f"SparseSegment{kind}Grad")(
            grad=[[1.0], [2.0]], indices=[0, 3, 0], segment_ids=[0, 0, 1], output_dim0=5)
        v2 = getattr(R, f"SparseSegment{kind}GradV2")(
            grad=[[1.0], [2.0]], indices=[3, 0, 0], segment_ids=[0, 0, 1],
            dense_output_dim0=5)
        got_d, (got_rows, got_unique) = _run([d, v2])
    np.testing.assert_allclose(got_d, dense, rtol=1e-6)
    np.testing.assert_allclose(got_rows, rows, rtol=1e-6)
    assert got_unique.tolist() == unique and got_unique.dtype == np.int32


def test_scatter_gather_and_stitch_ops():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 5.0, 3.0])
        rv = tf.Variable([[1.0, 5.0], [3.0, 4.0]], use_resource=True)
        nd_max = R.ScatterNdMax(ref=v, indices=[[0], [1]], updates=[4.0, 2.0])
        gathered = tf.gather_nd(rv, [[1, 0], [0, 1]])
        assert gathered.op.type == "ResourceGatherNd"
        out = [R.ScatterNdNonAliasingAdd(input=[1.0, 2.0, 3.0], indices=[[0], [0], [2]],
                                         updates=[5.0, 1.0, 1.0]),
               R.TensorStridedSliceUpdate(input=[1.0, 2.0, 3.0, 4.0], begin=[3], end=[0],
                                          strides=[-2], value=[9.0, 8.0]),
               R.ParallelDynamicStitch(indices=[[0, 2], [1]], data=[[1.0, 3.0], [2.0]])]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([nd_max, gathered, *out])
            sess.run(rv.scatter_nd_min([[0, 1]], [-1.0]).op)
            after = sess.run(rv)
    assert got[0].tolist() == [4.0, 5.0, 3.0] and got[1].tolist() == [3.0, 5.0]
    assert got[2].tolist() == [7.0, 2.0, 4.0] and got[3].tolist() == [1.0, 8.0, 3.0, 9.0]
    assert got[4].tolist() == [1.0, 2.0, 3.0] and after.tolist() == [[1.0, -1.0], [3.0, 4.0]]


def test_sparse_tensors_map_adds_and_takes_by_handle():
    with tf.Graph().as_default():
        one = R.AddSparseToTensorsMap(sparse_indices=_c([[0], [2]]), sparse_values=[1.0, 2.0],
                                      sparse_shape=_c([3]), shared_name="m")
        many = R.AddManySparseToTensorsMap(sparse_indices=_c([[0, 1], [1, 0], [1, 2]]),
                                           sparse_values=[3.0, 4.0, 5.0],
                                           sparse_shape=_c([3, 4]), shared_name="m")
        handles = tf.placeholder(tf.int64, [None])
        taken = R.TakeManySparseFromTensorsMap(sparse_handles=handles, dtype=tf.float32,
                                               shared_name="m")
        with tf.Session() as sess:
            a, b = sess.run([one, many])
            assert sorted([int(a), *b.tolist()]) == [0, 1, 2, 3] and b.shape == (3,)
            idx, val, shape = sess.run(taken, {handles: [b[1], a, b[0]]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=f"Unable to find SparseTensor: {b[1]} in map: m"):
                sess.run(taken, {handles: [b[1]]})  # taking removes it
    # TensorFlow's batch of the three (row 2 of `many` is empty)
    assert idx.tolist() == [[0, 0], [0, 2], [1, 0], [1, 2], [2, 1]]
    assert val.tolist() == [4.0, 5.0, 1.0, 2.0, 3.0] and shape.tolist() == [3, 4]


def test_sparse_cross_v2_joins_with_the_separator():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant(["a", "b", "c"]), [2, 2])
        ids = tf.SparseTensor([[0, 0], [1, 1]], tf.constant([7, 8], tf.int64), [2, 2])
        c = tf.sparse.cross([sp, ids, tf.constant([["x", "y"], ["z", "w"]])], separator="--")
        assert c.values.op.type == "SparseCrossV2"
        idx, val, shape = _run([c.indices, c.values, c.dense_shape])
    assert idx.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3]]
    assert val.tolist() == [b"a--7--x", b"a--7--y", b"b--8--z", b"b--8--w", b"c--8--z",
                            b"c--8--w"] and shape.tolist() == [2, 4]


# -- errors, with TensorFlow's messages ----------------------------------------------------
@pytest.mark.parametrize(("build", "message"), [
    (lambda: _pair(R.SparseAdd, thresh=0.0, b_shape=[2, 4]),
     "Operands' shapes do not match: got 3 and 4 for dimension 1"),
    (lambda: _pair(R.SparseSparseMaximum, b_shape=[3, 3]),
     "Operands' shapes do not match: got 2 and 3 for dimension 0"),
    (lambda: R.SparseTensorDenseAdd(a_indices=_c(A_IDX), a_values=A_VAL, a_shape=_c(SHAPE),
                                    b=tf.ones([2, 4])),
     "Dimension 1 does not equal (no broadcasting is supported): sparse side 3 vs dense "
     "side 4"),
    (lambda: R.SparseDenseCwiseDiv(sp_indices=_c(A_IDX), sp_values=[7, -7, 9],
                                   sp_shape=_c(SHAPE), dense=tf.constant([[0], [2]])),
     "SparseDenseCwiseDiv cannot divide by zero"),
    (lambda: R.SparseDenseCwiseMul(sp_indices=_c(A_IDX), sp_values=A_VAL, sp_shape=_c(SHAPE),
                                   dense=tf.ones([2, 2, 3])),
     "broadcasts dense to sparse only; got incompatible shapes: [2,3] vs. [2,2,3]"),
    (lambda: R.SparseConcat(indices=[_c([[1, 0]]), _c([[0, 0]])], values=[[1], [3]],
                            shapes=[_c([2, 2]), _c([3, 1])], concat_dim=1),
     "Input shapes must match: expected 2 for dimension 0 but got 3 at position 1"),
    (lambda: R.SparseSoftmax(sp_indices=_c([[0], [2]]), sp_values=[1.0, 2.0],
                             sp_shape=_c([3])),
     "Input should have rank >= 2, but received shape: 3"),
    (lambda: R.SparseReduceMax(input_indices=_c([[0, 0]]), input_values=[-1.0],
                               input_shape=_c([3, 3]), reduction_axes=[2]),
     "Invalid reduction dimension 2, for input with 2 dimensions."),
    (lambda: R.SparseSegmentSumGrad(grad=[[1.0], [2.0]], indices=[0, 7, 0],
                                    segment_ids=[0, 0, 1], output_dim0=5),
     "Index 7 out of range [0, 5)."),
])
def test_bad_input_raises_tensorflows_error(build, message):
    with tf.Graph().as_default():
        t = build()
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            _run(t)
    op = t[0].op if isinstance(t, tuple) else t.op
    assert message in str(err.value)
    assert f"{op.type} '{op.name}'" in str(err.value)  # the message names the op


@pytest.mark.parametrize("op_type", ["SparseSparseMaximum", "SparseSparseMinimum",
                                     "SparseDenseCwiseAdd"])
def test_gradients_tensorflow_leaves_unimplemented(op_type):
    with tf.Graph().as_default():
        x = tf.constant(A_VAL)
        if op_type == "SparseDenseCwiseAdd":
            y = R.SparseDenseCwiseAdd(sp_indices=_c(A_IDX), sp_values=x, sp_shape=_c(SHAPE),
                                      dense=tf.constant(1.0))
        else:
            y = getattr(tf.sparse, op_type[len("SparseSparse"):].lower())(
                tf.SparseTensor(A_IDX, x, SHAPE), tf.SparseTensor(B_IDX, B_VAL, SHAPE)).values
        with pytest.raises(NotImplementedError, match=f"Gradient for {op_type} is not"):
            tf.gradients(y, x)


# -- the op types TensorFlow's functions emit ----------------------------------------------
def _types(fn):
    with tf.Graph().as_default() as g:
        a = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
        b = tf.SparseTensor([[1, 0], [1, 2]], [10.0, 5.0], [2, 3])
        n = len(g.get_operations())
        fn(a, b)
        return {op.type for op in g.get_operations()[n:]}


@pytest.mark.parametrize(("fn", "op_type"), [
    (lambda a, b: tf.sparse.add(a, b), "SparseAdd"),
    (lambda a, b: tf.sparse.add(a, tf.ones([2, 3])), "SparseTensorDenseAdd"),
    (lambda a, b: a * tf.ones([2, 3]), "SparseDenseCwiseMul"),
    (lambda a, b: a / tf.ones([2, 3]), "SparseDenseCwiseDiv"),
    (lambda a, b: tf.sparse.concat(1, [a, b]), "SparseConcat"),
    (lambda a, b: tf.sparse.slice(a, [0, 0], [1, 2]), "SparseSlice"),
    (lambda a, b: tf.sparse.split(sp_input=a, num_split=2, axis=1), "SparseSplit"),
    (lambda a, b: tf.sparse.softmax(a), "SparseSoftmax"),
    (lambda a, b: tf.sparse.reduce_max(a, 1), "SparseReduceMax"),
    (lambda a, b: tf.sparse.reduce_max_sparse(a, 1), "SparseReduceMaxSparse"),
    (lambda a, b: tf.sparse.reduce_sum_sparse(a, 1), "SparseReduceSumSparse"),
    (lambda a, b: tf.sparse.maximum(a, b), "SparseSparseMaximum"),
    (lambda a, b: tf.sparse.minimum(a, b), "SparseSparseMinimum"),
    (lambda a, b: tf.io.serialize_sparse(a), "SerializeSparse"),
    (lambda a, b: tf.sparse.cross([tf.constant([["a"]]), tf.constant([["b"]])]),
     "SparseCrossV2"),
    (lambda a, b: tf.nn.embedding_lookup([tf.ones([2, 2]), tf.ones([3, 2])], [1, 2]),
     "ParallelDynamicStitch"),
    (lambda a, b: tf.random.stateless_gamma([2], seed=[1, 2], alpha=1.0),
     "StatelessRandomGammaV3"),
    (lambda a, b: tf.gradients(tf.sparse.add(a, b).values, [a.values]), "SparseAddGrad"),
    (lambda a, b: tf.gradients(tf.sparse.slice(a, [0, 0], [1, 2]).values, [a.values]),
     "SparseSliceGrad"),
])
def test_public_functions_emit_tensorflows_op_types(fn, op_type):
    assert op_type in _types(fn)


def test_sparse_segment_gradient_is_indexed_slices_of_the_v2_op_when_asked():
    # TF 2.15: dense rows by default; sparse_gradient=True gives the GradV2 IndexedSlices.
    with tf.Graph().as_default():
        d = tf.constant([[1.0], [2.0], [4.0], [5.0]])
        (g,) = tf.gradients(tf.sparse.segment_mean(d, [3, 0, 3], [0, 0, 1],
                                                   sparse_gradient=True) * [[1.0], [2.0]],
                            [d])
        (by_default,) = tf.gradients(tf.sparse.segment_mean(d, [3, 0, 3], [0, 0, 1]), [d])
        assert by_default.op.type == "SparseSegmentMeanGrad"
        (dense,) = tf.gradients(tf.sparse.segment_sum(d, tf.range(4), [0, 0, 1, 1]), [d])
        assert isinstance(g, tf.IndexedSlices)
        assert g.values.op.type == "SparseSegmentMeanGradV2"
        assert dense.op.type == "SparseSegmentSumGrad"
        got, got_dense = _run([tf.convert_to_tensor(g), dense])
    np.testing.assert_allclose(got.ravel(), [0.5, 0.0, 0.0, 2.5])
    assert got_dense.ravel().tolist() == [1.0, 1.0, 1.0, 1.0]


def test_sparse_concat_keeps_a_known_dense_shape():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
        b = tf.SparseTensor([[1, 0]], [2.0], [2, 3])
        assert tf.sparse.concat(1, [a, b]).shape.as_list() == [2, 5]
        wide = tf.sparse.concat(0, [a, b], expand_nonconcat_dim=True)
        assert _run(wide.dense_shape).tolist() == [4, 3]


# -- random ops: determinism, distributions, shapes, dtypes --------------------------------
def test_stateless_key_counter_alg_and_gamma_v3():
    with tf.Graph().as_default():
        key, counter, alg = R.StatelessRandomGetKeyCounterAlg(seed=[7, 11])
        alpha = tf.constant([1.0, 3.0])
        x = R.StatelessRandomGammaV3(shape=[20000, 2], key=key, counter=counter, alg=alg,
                                     alpha=alpha)
        (g,) = tf.gradients(tf.reduce_sum(x), [alpha])
        with tf.Session() as sess:
            k, c, a, first, again, grad = sess.run([key, counter, alg, x, x, g])
            assert sess.run(R.StatelessRandomGetAlg()) == 1
    # TensorFlow's key and counter of seed [7, 11], and Philox (1) on the CPU
    assert (k.dtype, c.dtype, a.dtype) == (np.uint64, np.uint64, np.int32) and a == 1
    assert np.array_equal(first, again) and first.dtype == np.float32
    np.testing.assert_allclose(first.mean(0), [1.0, 3.0], rtol=0.05)
    np.testing.assert_allclose(first.var(0), [1.0, 3.0], rtol=0.1)
    # d/dalpha of the sum of samples: about the number of samples (E[x] = alpha)
    np.testing.assert_allclose(grad, [20000.0, 20000.0], rtol=0.05)


def test_parameterized_truncated_normal_stays_in_bounds_per_batch():
    with tf.Graph().as_default():
        t = R.ParameterizedTruncatedNormal(shape=[2, 20000], means=[0.0, 5.0], stdevs=1.0,
                                           minvals=[-1.0, 4.0], maxvals=[1.0, 9.0], seed=3)
        v = _run(t)
    assert v.shape == (2, 20000) and v.dtype == np.float32
    assert v[0].min() >= -1.0 and v[0].max() <= 1.0 and v[1].min() >= 4.0
    assert abs(v[0].mean()) < 0.02  # symmetric bounds around the mean
    # E[x] of N(5, 1) cut to [4, 9]: 5 + phi(-1) / (1 - Phi(-1)) = 5.2876
    np.testing.assert_allclose(v[1].mean(), 5.2876, atol=0.02)


def test_random_poisson_v1_draws_tensorflows_stream_in_the_rates_dtype():
    with tf.Graph().as_default():
        p = R.RandomPoisson(shape=[3], rate=tf.constant([1.0, 30.0], tf.float64), seed=3,
                            seed2=4)
        p2 = R.RandomPoissonV2(shape=[3], rate=tf.constant([1.0, 30.0], tf.float64), seed=3,
                               seed2=4, dtype=tf.float64)
        assert p.dtype == tf.float64 and p.shape.as_list() == [3, 2]
        v, v2 = _run([p, p2])
    assert np.array_equal(v, v2)


def test_stateful_standard_normal_v1_draws_the_v2_stream_with_philox():
    with tf.Graph().as_default():
        state = tf.Variable(np.array([5, 0, 123], np.int64), use_resource=True, name="state")
        x = R.StatefulStandardNormal(resource=state.handle, shape=tf.constant([3], tf.int64))
        assert x.dtype == tf.float32 and x.shape.as_list() == [3]
        with tf.Session() as sess:
            sess.run(state.initializer)
            value, after = sess.run(x), sess.run(state)
    # TensorFlow's StatefulStandardNormalV2 (algorithm 1) from this state
    np.testing.assert_allclose(value, [-0.35793, -0.30279, -0.85581], atol=1e-5)
    assert after.tolist() == [773, 0, 123]  # the counter skips 256 blocks per value


def test_non_deterministic_ints():
    with tf.Graph().as_default():
        n = R.NonDeterministicInts(shape=[4])
        m = R.NonDeterministicInts(shape=[2, 3], dtype=tf.int32)
        assert (n.dtype, m.dtype, m.shape.as_list()) == (tf.int64, tf.int32, [2, 3])
        with tf.Session() as sess:
            a, b = sess.run(n), sess.run(n)
    assert a.dtype == np.int64 and not np.array_equal(a, b)


# -- ragged conversions -------------------------------------------------------------------
def test_ragged_to_tensor_and_to_sparse_at_any_ragged_rank():
    with tf.Graph().as_default():
        rt = tf.RaggedTensor.from_row_splits(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                                             tf.constant([0, 1, 3], tf.int64))
        rt2 = tf.RaggedTensor.from_nested_row_splits(
            tf.constant([1, 2, 3, 4, 5]), [tf.constant([0, 2, 3], tf.int64),
                                           tf.constant([0, 1, 1, 5], tf.int64)])
        dense, cut, nested = rt.to_tensor(), rt.to_tensor(9.0, shape=[3, 1, 2]), rt2.to_tensor()
        sp, sp2 = rt.to_sparse(), rt2.to_sparse()
        assert dense.op.type == "RaggedTensorToTensor" and sp.indices.op.type == \
            "RaggedTensorToSparse"
        assert dense.shape.as_list() == [2, None, 2] and cut.shape.as_list() == [3, 1, 2]
        out = _run([dense, cut, nested, [sp.indices, sp.dense_shape],
                    [sp2.indices, sp2.values, sp2.dense_shape]])
    assert out[0].tolist() == [[[1.0, 2.0], [0.0, 0.0]], [[3.0, 4.0], [5.0, 6.0]]]
    assert out[1].tolist() == [[[1.0, 2.0]], [[3.0, 4.0]], [[9.0, 9.0]]]
    assert out[2].tolist() == [[[1, 0, 0, 0], [0, 0, 0, 0]], [[2, 3, 4, 5], [0, 0, 0, 0]]]
    assert out[3][0].tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0],
                                  [1, 1, 1]] and out[3][1].tolist() == [2, 2, 2]
    assert [x.tolist() for x in out[4]] == [
        [[0, 0, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2], [1, 0, 3]], [1, 2, 3, 4, 5], [2, 2, 4]]


def test_ragged_tensor_to_tensor_partition_encodings_and_shapes():
    splits = [0, 2, 2, 5]
    with tf.Graph().as_default():
        rowids = R.RaggedTensorToTensor(
            shape=[-1, 3], values=[1, 2, 3, 4, 5], default_value=0,
            row_partition_tensors=[_c(3), _c([0, 0, 2, 2, 2])],
            row_partition_types=["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
        small = R.RaggedTensorToTensor(shape=[2, 1], values=[1, 2, 3, 4, 5], default_value=0,
                                       row_partition_tensors=[_c(splits)],
                                       row_partition_types=["ROW_SPLITS"])
        big = R.RaggedTensorToTensor(shape=[4, 4], values=[1, 2, 3, 4, 5], default_value=7,
                                     row_partition_tensors=[_c(splits)],
                                     row_partition_types=["ROW_SPLITS"])
        a, b, c = _run([rowids, small, big])
        with pytest.raises(ValueError, match=r"default_value\.rank must be less than"):
            R.RaggedTensorToTensor(shape=[-1, 3], values=[1, 2, 3, 4, 5],
                                   default_value=[0, 1], row_partition_tensors=[_c(splits)],
                                   row_partition_types=["ROW_SPLITS"])
    assert a.tolist() == [[1, 2, 0], [0, 0, 0], [3, 4, 5]] and b.tolist() == [[1], [0]]
    assert c.tolist() == [[1, 2, 7, 7], [7, 7, 7, 7], [3, 4, 5, 7], [7, 7, 7, 7]]


def test_gather_of_a_ragged_tensor_is_ragged_gather():
    with tf.Graph().as_default():
        v = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
        rt = tf.RaggedTensor.from_row_splits(v, tf.constant([0, 2, 2, 5], tf.int64))
        rt2 = tf.RaggedTensor.from_nested_row_splits(
            tf.constant([[1, 2], [3, 4], [5, 6], [7, 8]]),
            [tf.constant([0, 1, 3], tf.int64), tf.constant([0, 2, 2, 4], tf.int64)])
        a, b = tf.gather(rt, [2, 0, 2]), tf.gather(rt, [[1, 2], [0, 0]])
        c, d = tf.gather(rt, 2), tf.gather(rt2, [1, 0])
        assert a.flat_values.op.type == "RaggedGather"
        (g,) = tf.gradients(tf.reduce_sum(a.flat_values * tf.range(1.0, 9.0)), [v])
        out = _run([[*a.nested_row_splits, a.flat_values], [*b.nested_row_splits,
                                                            b.flat_values], c,
                    [*d.nested_row_splits, d.flat_values], tf.convert_to_tensor(g)])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not"):
            _run(tf.gather(rt, [3]).flat_values)
    # TensorFlow's values
    assert [x.tolist() for x in out[0]] == [[0, 3, 5, 8], [3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0,
                                                           5.0]]
    assert [x.tolist() for x in out[1]] == [[0, 2, 4], [0, 0, 3, 5, 7],
                                            [3.0, 4.0, 5.0, 1.0, 2.0, 1.0, 2.0]]
    assert out[2].tolist() == [3.0, 4.0, 5.0]
    assert [x.tolist() for x in out[3]] == [[0, 2, 3], [0, 0, 2, 4],
                                            [[5, 6], [7, 8], [1, 2], [3, 4]]]
    assert out[4].tolist() == [4.0, 5.0, 7.0, 9.0, 11.0]


def test_ragged_cross_keeps_the_input_order():
    with tf.Graph().as_default():
        r = tf.ragged.constant([["a"], ["b", "c"]])
        ri = tf.ragged.constant([[1, 2], [3]], dtype=tf.int64)
        d = tf.constant([["x"], ["y"]])
        sp = tf.SparseTensor([[0, 0], [1, 1]], tf.constant(["s", "t"]), [2, 2])
        plain = tf.ragged.cross([d, r, sp])
        hashed = tf.ragged.cross_hashed([ri, d], num_buckets=100)
        keyed = tf.ragged.cross_hashed([d, ri])
        assert plain.values.op.type == "RaggedCross"
        p, h, k = _run([plain, hashed, keyed])
    # TensorFlow's values
    assert p.to_list() == [[b"x_X_a_X_s"], [b"y_X_b_X_t", b"y_X_c_X_t"]]
    assert h.to_list() == [[59, 69], [95]]
    assert k.to_list() == [[4007690892585939727, 3987325992395097374], [2381860480059392834]]


def test_ragged_to_tensor_gradient_reaches_values_and_default():
    with tf.Graph().as_default():
        v, d = tf.constant([1.0, 2.0, 3.0]), tf.constant(0.5)
        t = tf.RaggedTensor.from_row_splits(v, tf.constant([0, 2, 2, 3], tf.int64)).to_tensor(d)
        gv, gd = tf.gradients(tf.reduce_sum(t * [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [v, d])
        assert isinstance(gv, tf.IndexedSlices)  # as TensorFlow's
        got_v, got_d = _run([tf.convert_to_tensor(gv), gd])
    assert got_v.tolist() == [1.0, 2.0, 5.0] and float(got_d) == 13.0


# -- a graph TensorFlow wrote ---------------------------------------------------------------
def test_tensorflow_graph_with_these_ops_imports_and_runs_to_tensorflows_values():
    expected = np.load(os.path.join(DATA, "expected.npz"))
    with open(os.path.join(DATA, "graph.pb"), "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    keys = [k for k in expected.files if k not in ("x", "init", "op_types")]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        assert {o.type for o in g.get_operations()} == set(expected["op_types"].tolist())
        with tf.Session() as sess:
            sess.run(str(expected["init"]))
            got = sess.run({k: f"out_{k}:0" for k in keys}, {"x:0": expected["x"]})
    for k in keys:
        want = expected[k]
        assert got[k].shape == want.shape, k
        if want.dtype.kind in "iubS":
            assert got[k].tolist() == want.tolist(), k
        else:
            np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6, err_msg=k)
