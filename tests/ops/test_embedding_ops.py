"""embedding_lookup / embedding_lookup_sparse / safe_embedding_lookup_sparse: NumPy
references, sharding strategies, sparse (IndexedSlices) gradients, and a training step on
a 1,000,000-row table whose memory stays far below the table's size."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.sparse
import flowgraph.strings
from flowgraph import feature_column as fc
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.embedding_ops import (
    embedding_lookup,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)

R = np.random.RandomState(11)
TABLE = R.randn(10, 3)


def test_lookup_single_table(sess):
    ids = np.array([[2, 9], [0, 2], [5, 5]])
    out = embedding_lookup(TABLE, ids)
    assert out.shape.as_list() == [3, 2, 3] and out.op.name == "embedding_lookup/Identity"
    np.testing.assert_array_equal(sess.run(out), TABLE[ids])
    p = tf.placeholder(tf.float64, [None, 3])
    assert embedding_lookup(p, tf.placeholder(tf.int64, [None])).shape.as_list() == [None, 3]
    with pytest.raises(TypeError, match="int32 or int64"):
        embedding_lookup(TABLE, [0.5])
    with pytest.raises(ValueError, match="partition_strategy"):
        embedding_lookup(TABLE, [0], partition_strategy="range")


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lookup_sharded(sess, strategy):
    n = 3
    if strategy == "mod":
        shards = [TABLE[k::n] for k in range(n)]
    else:  # 10 ids over 3 shards: sizes 4, 3, 3
        shards = [TABLE[0:4], TABLE[4:7], TABLE[7:10]]
    ids = np.array([[9, 0], [4, 3], [7, 1]])
    out = embedding_lookup([tf.constant(s) for s in shards], ids, partition_strategy=strategy)
    assert out.shape.as_list() == [3, 2, 3]
    np.testing.assert_allclose(sess.run(out), TABLE[ids])


def test_lookup_max_norm(sess):
    table = np.array([[3.0, 4.0], [0.3, 0.4]])
    out = sess.run(embedding_lookup(table, [0, 1, 0], max_norm=1.0))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.6, 0.8]])


def test_lookup_gradient_is_indexed_slices(sess):
    w = tf.Variable(TABLE)
    out = embedding_lookup(w, [[4], [1], [4]])
    (g,) = tf.gradients(tf.reduce_sum(out * 2.0), [w])
    assert isinstance(g, IndexedSlices)
    sess.run(tf.global_variables_initializer())
    vals, idx = sess.run([g.values, g.indices])
    assert sorted(idx.tolist()) == [1, 4, 4]
    np.testing.assert_allclose(vals, np.full((3, 3), 2.0))


def _sparse_ref(table, rows, weights, combiner, batch):
    out = np.zeros((batch, table.shape[1]))
    for b in range(batch):
        ids = rows.get(b, [])
        if not ids:
            continue
        w = np.array(weights[b]) if weights else np.ones(len(ids))
        s = (table[ids] * w[:, None]).sum(0)
        out[b] = s / {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w * w).sum())}[combiner]
    return out


ROWS = {0: [3, 7, 3], 1: [0], 3: [9, 2]}
WEIGHTS = {0: [1.0, 0.5, 2.0], 1: [3.0], 3: [0.25, 1.0]}


def _sp(rows, values, batch=4):
    idx = [[b, j] for b in sorted(rows) for j in range(len(rows[b]))]
    vals = [v for b in sorted(rows) for v in values[b]]
    return idx, vals, [batch, 3]


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_lookup_sparse(sess, combiner, weighted):
    idx, vals, shape = _sp(ROWS, ROWS)
    ids = SparseTensor(idx, tf.constant(vals, tf.int64), shape)
    w = SparseTensor(idx, _sp(ROWS, WEIGHTS)[1], shape) if weighted else None
    table = tf.constant(TABLE.astype(np.float32))
    out = embedding_lookup_sparse(table, ids, w, combiner=combiner)
    ref = _sparse_ref(TABLE, ROWS, WEIGHTS if weighted else None, combiner, 4)
    got = sess.run(out)
    if weighted and combiner != "sum":  # as TF 2.15 (div_no_nan): 0 for a row without ids
        assert (got[2] == 0.0).all()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    safe = safe_embedding_lookup_sparse(table, ids, w, combiner=combiner)
    # TF 2.15: (4, 3), the batch dimension known from the ids' constant dense shape
    assert safe.shape.as_list() == [4, 3]
    np.testing.assert_allclose(sess.run(safe), ref, rtol=1e-5, atol=1e-6)


def test_lookup_sparse_errors():
    ids = SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    with pytest.raises(ValueError, match="combiner"):
        embedding_lookup_sparse(TABLE, ids, None, combiner="max")
    with pytest.raises(TypeError, match="SparseTensor"):
        embedding_lookup_sparse(TABLE, [[1]], None)
    with pytest.raises(TypeError, match="sp_weights"):
        embedding_lookup_sparse(TABLE, ids, [1.0])
    with pytest.raises(ValueError, match="embedding_weights"):
        safe_embedding_lookup_sparse(None, ids)


def test_safe_lookup_prunes_and_defaults(sess):
    table = tf.constant([[1.0, 1.0], [3.0, 5.0], [7.0, 11.0]])
    ids = SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], tf.constant([1, -1, -4, 2], tf.int64),
                       [4, 2])
    out = sess.run(safe_embedding_lookup_sparse(table, ids))
    np.testing.assert_allclose(out, [[3, 5], [0, 0], [0, 0], [7, 11]])
    with_default = sess.run(safe_embedding_lookup_sparse(table, ids, default_id=0))
    np.testing.assert_allclose(with_default, [[3, 5], [1, 1], [1, 1], [7, 11]])
    weights = SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], [2.0, 1.0, 1.0, 0.0], [4, 2])
    pruned = sess.run(safe_embedding_lookup_sparse(table, ids, weights, combiner="mean"))
    np.testing.assert_allclose(pruned, [[3, 5], [0, 0], [0, 0], [0, 0]])  # weight 0 dropped


def test_safe_lookup_rank3(sess):
    table = tf.constant(TABLE)
    ids = SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1]], tf.constant([2, 4, 6], tf.int64),
                       [2, 2, 2])
    out = safe_embedding_lookup_sparse(table, ids, combiner="sum")
    assert out.shape.as_list() in ([None, None, 3], [2, 2, 3])
    got = sess.run(out)
    ref = np.zeros((2, 2, 3))
    ref[0, 1] = TABLE[2]
    ref[1, 0] = TABLE[4] + TABLE[6]
    np.testing.assert_allclose(got, ref)


@pytest.mark.parametrize("optimizer", ["GradientDescentOptimizer", "AdagradOptimizer"])
def test_million_row_table_trains_sparsely(sess, optimizer):
    """A 1,000,000 x 32 float32 table (128 MB) behind a hashed column: one training step
    allocates far less than the table (only looked-up rows are read, differentiated and
    updated) and changes only the rows of the batch's ids."""
    rows, dim = 1_000_000, 32
    col = fc.embedding_column(fc.categorical_column_with_hash_bucket("q", rows), dim,
                              initializer=tf.zeros_initializer())
    q = tf.placeholder(tf.string, [None, 1])
    net = fc.input_layer({"q": q}, [col])
    loss = tf.reduce_sum(tf.square(net - 1.0))
    opt = getattr(tf.train, optimizer)(0.1)
    train = opt.minimize(loss)
    (table,) = [v for v in tf.global_variables() if v.name.endswith("embedding_weights:0")]
    assert table.name == "input_layer/q_embedding/embedding_weights:0"
    (grad,) = tf.gradients(loss, [table])
    assert isinstance(grad, IndexedSlices)
    sess.run(tf.global_variables_initializer())
    feed = {q: [["apple"], ["pear"], ["apple"], ["fig"]]}
    sess.run(train, feed)  # first step: builds the plan and kernels
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        sess.run(train, feed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    table_bytes = rows * dim * 4
    assert peak < 0.1 * table_bytes, f"training step peaked at {peak} bytes"
    ids = sess.run(tf.strings.to_hash_bucket_fast(["apple", "pear", "fig"], rows))
    value = sess.run(table)
    touched = np.flatnonzero(np.any(value != 0.0, axis=1))
    assert sorted(touched.tolist()) == sorted(set(ids.tolist()))


# -- the fused safe lookup (SafeSparseLookup) against the general graph ------------------------
@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_fused_safe_lookup_equals_the_general_graph(monkeypatch, combiner):
    from flowgraph.ops import embedding_ops as eo

    rng = np.random.RandomState(5)
    table_np = rng.normal(size=(9, 3)).astype(np.float32)
    # Rows with several ids, a repeated id, negative ids (dropped), rows left empty.
    idx = [[0, 0], [0, 1], [0, 2], [1, 0], [3, 0], [3, 1], [4, 0], [6, 0], [6, 1]]
    ids = [2, 7, 2, -1, 0, 8, -3, 5, 5]
    seed = rng.normal(size=(7, 3)).astype(np.float32)

    def run():
        with tf.Graph().as_default():
            table = tf.Variable(table_np)
            sp = tf.SparseTensor(idx, tf.constant(ids, tf.int64), [7, 3])
            out = tf.nn.safe_embedding_lookup_sparse(table, sp, combiner=combiner)
            (grad,) = tf.gradients(tf.reduce_sum(out * seed), [table])
            types = {op.type for op in tf.get_default_graph().get_operations()}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                value, dense = sess.run([out, tf.convert_to_tensor(grad)])
        return value, dense, out.shape.as_list(), "SafeSparseLookup" in types

    fused = run()
    monkeypatch.setattr(eo, "_fused_safe_lookup", lambda *a: None)
    general = run()
    assert fused[3] and not general[3]
    np.testing.assert_allclose(fused[0], general[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fused[1], general[1], rtol=1e-6, atol=1e-6)
    assert fused[2] == general[2] == [7, 3]  # TF 2.15: the constant dense shape's batch


def test_fused_safe_lookup_rejects_out_of_range_ids():
    with tf.Graph().as_default():
        table = tf.constant(np.zeros((4, 2), np.float32))
        sp = tf.SparseTensor([[0, 0]], tf.constant([4], tf.int64), [1, 1])
        out = tf.nn.safe_embedding_lookup_sparse(table, sp)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="out of range"):
            sess.run(out)
