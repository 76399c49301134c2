"""TF1 graph-network, sparse and segment programs, sweep 13 (area ``sparse``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): a Kipf-style GCN fed through ``tf.sparse_placeholder``
(tuple and ``SparseTensorValue`` feeds, a shape given as a tensor) with sparse dropout
(``sparse_retain`` and ``sp * scalar``), ``sparse_tensor_dense_matmul`` and a masked
softmax loss under Adam; a GAT sparse attention head (``adj * f``, ``sparse_add``,
``sparse_softmax``, ``sparse_reshape``, ``sparse_tensor_to_dense`` with a default value
and ``validate_indices=False``); a message-passing network over an edge list with every
``unsorted_segment_*`` aggregator (sum/max/min/prod/mean/sqrt_n) under Momentum, the
sorted ``segment_*`` family and its errors (unsorted ids, out-of-range ids);
GraphSAGE-style neighbour sampling (``random_shuffle``/``slice``), mean/max aggregators,
``embedding_lookup_sparse`` (mean/sqrtn/sum, with and without weights),
``dynamic_partition``/``dynamic_stitch``, ``scatter_nd``, ``tensor_scatter_nd_add``,
``gather_nd`` with ``batch_dims``, ``sparse_reduce_sum(_sparse)``, ``sparse_maximum``,
``sparse.to_indicator``, ``sparse_mask``, ``sparse_slice``/``transpose``/``concat``/
``to_dense``; a DeepWalk/node2vec skip-gram with ``nce_loss``, summaries and a Saver;
``IndexedSlices`` gradients densified by ``convert_to_tensor`` (TensorFlow's size
warning); an adjacency preprocessing pipeline (reorder, reshape, transpose, slice,
concat with ``expand_nonconcat_dim``, reduce with ``keep_dims``) with the run-time
errors of unsorted, repeated and out-of-bounds indices; a supervised GraphSAGE with
train/validation split by ``dynamic_partition`` and ``dynamic_stitch`` of predictions;
and a dense multi-head graph attention with ``einsum`` and ``tensordot`` under RMSProp.

Classes of discrepancy found and fixed (one focused test each below):

* Segment gradients were flowgraph's own graphs (``SegmentMax_grad/mul_3``,
  ``UnsortedSegmentSum_grad/mul``); they are now built op for op as TensorFlow's
  (``SelectV2`` ends, ``_GatherDropNegatives`` for the unsorted ops) and
  ``unsorted_segment_mean``/``sqrt_n`` build their counts first (the data sum is
  ``UnsortedSegmentSum_1``), so every gradient tensor has TensorFlow's name.
* ``SparseTensor`` operators: ``sp * y`` and ``sp / y`` open TensorFlow's ``mul``/
  ``truediv`` scopes (the op named after the scope, the operand converted as ``y``);
  ``/`` of integer values casts to floating point first.
* Static shapes of derived sparse tensors: TensorFlow keeps only what the dense-shape
  tensor's constant value gives, so ``sparse_retain``, ``sparse_fill_empty_rows`` and the
  operators of a ``sparse_placeholder`` with a known shape are ``(?, ?)``;
  ``sparse_add`` of two fully known shapes gets a constant dense shape and otherwise the
  op's output; ``SparseReduceSum``/``Max`` know their result only for a constant dense
  shape; ``SparseReduce*Sparse`` outputs are unknown.
* Op names: ``sparse_add`` opens no scope (``threshold`` converted at the call site,
  ``SparseTensorDenseAdd`` under its own name); ``sparse_softmax`` names its op inside
  its scope; ``sparse_fill_empty_rows`` converts its default as ``Const``;
  ``sparse_mask`` names the gather after its scope.
* The gradient of a plain ``einsum`` builds ``Einsum`` ops in the gradient scope
  (``Einsum_grad/Einsum_1``), not a nested ``einsum/Einsum``; the gradient of
  ``sparse_tensor_dense_matmul`` is TensorFlow's (per-entry batched ``MatMul`` ending in
  ``_grad/Squeeze``, ``matrix_transpose`` for an adjointed operand), not a ``Sum``.
* ``embedding_lookup_sparse`` with weights (or ``max_norm``) builds TensorFlow 2.15's
  graph: ``Unique`` ids looked up once and gathered back, ``SegmentSum`` reductions, so
  the table's ``IndexedSlices`` gradient has one row per distinct id.
* ``tf.sparse.expand_dims`` slices at a tensor position as TensorFlow does, so the
  result's static shape is ``(?, ?, 1)`` (rank and the new dimension only).
* ``gather_nd`` with ``batch_dims`` is TensorFlow's graph (a ``meshgrid`` index grid
  prepended to the indices, one ``GatherNd`` on the unreshaped params, so its gradient is
  ``GatherNd_grad/ScatterNd``; indices of unknown rank are accepted); ``tf.meshgrid``
  multiplies by ``ones`` of the grid as TensorFlow does; ``tf.ones``/``tf.zeros`` of a
  scalar shape tensor reshape it to a vector (``ones/Reshape``) instead of failing.
* Converting an ``IndexedSlices`` without a dense shape raises TensorFlow's message.

Left as is: a ``SparseTensor`` from an iterator is built from three iterator outputs
(``IteratorGetNext:0``), where TensorFlow deserializes a variant (``DeserializeSparse:0``);
the gradient of ``sparse_maximum`` raises NotImplementedError (TensorFlow's registered
gradient fails with a TypeError); ``compute_gradients`` does not gate a ``MatMul`` gradient through
``tuple/control_dependency_1`` when the op's other input does not lead to a variable
(a deliberate saving, documented in ``flowgraph/ops/gradients.py``); the gradients of
``einsum`` with summed-away labels or broadcast ellipses build different (equal-valued)
graphs from TensorFlow's.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import flowgraph as tf


def _close(got, want, atol=2e-4):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               atol=atol)


# -- GCN ---------------------------------------------------------------------------------
def test_gcn_with_sparse_dropout_and_sparse_feeds():
    n, f, h, c = 6, 5, 4, 3
    rng = np.random.RandomState(0)
    a = (rng.rand(n, n) > 0.6).astype(np.float32) + np.eye(n, dtype=np.float32)
    a = np.minimum(a + a.T, 1.0)
    d = a.sum(1) ** -0.5
    an = (a * d[:, None]) * d[None, :]
    idx = np.array(np.nonzero(an)).T.astype(np.int64)
    vals = an[np.nonzero(an)].astype(np.float32)
    x_np = (rng.rand(n, f) > 0.5).astype(np.float32)
    labels = np.eye(c)[rng.randint(0, c, n)].astype(np.float32)
    mask = np.array([1, 1, 0, 1, 0, 1], bool)

    def glorot(shape, name):
        r = np.sqrt(6.0 / (shape[0] + shape[1]))
        return tf.Variable(tf.random_uniform(shape, minval=-r, maxval=r, seed=1), name=name)

    tf.set_random_seed(42)
    support = tf.sparse_placeholder(tf.float32, name="support")
    feats = tf.sparse_placeholder(tf.float32, shape=tf.constant([n, f], dtype=tf.int64))
    lab = tf.placeholder(tf.float32, shape=(None, c))
    lmask = tf.placeholder(tf.int32)
    dropout = tf.placeholder_with_default(0., shape=())
    nnz = tf.placeholder(tf.int32)
    assert (support.indices.name, str(support.dense_shape.shape)) == ("support/indices:0",
                                                                      "(?,)")
    assert (feats.values.name, feats.shape.as_list()) == ("Placeholder:0", [6, 5])
    with tf.variable_scope("gcn"):
        w0 = glorot([f, h], "weights_0")
        w1 = glorot([h, c], "weights_1")
    keep = 1 - dropout
    noise = keep + tf.random_uniform(nnz, seed=3)
    x = tf.sparse_retain(feats, tf.cast(tf.floor(noise), dtype=tf.bool)) * (1. / keep)
    assert (x.indices.name, x.values.name, x.dense_shape.name) == ("GatherV2:0", "mul:0",
                                                                   "Identity:0")
    assert x.shape.as_list() == [None, None]
    pre = tf.sparse_tensor_dense_matmul(x, w0)
    assert (pre.name, pre.shape.as_list()) == (
        "SparseTensorDenseMatMul/SparseTensorDenseMatMul:0", [None, 4])
    hid = tf.nn.relu(tf.sparse_tensor_dense_matmul(support, pre))
    out = tf.sparse_tensor_dense_matmul(support, tf.matmul(hid, w1))
    loss = tf.nn.softmax_cross_entropy_with_logits(logits=out, labels=lab)
    m = tf.cast(lmask, tf.float32)
    m /= tf.reduce_mean(m)
    loss = tf.reduce_mean(loss * m) + 5e-4 * tf.nn.l2_loss(w0)
    opt = tf.train.AdamOptimizer(0.01)
    gv = opt.compute_gradients(loss)
    assert [(g.name, v.name) for g, v in gv] == [
        ("gradients/AddN:0", "gcn/weights_0:0"),
        ("gradients/MatMul_grad/tuple/control_dependency_1:0", "gcn/weights_1:0")]
    train = opt.apply_gradients(gv)
    feed = {support: (idx, vals, np.array([n, n])),
            feats: tf.SparseTensorValue(np.array(np.nonzero(x_np)).T.astype(np.int64),
                                        x_np[np.nonzero(x_np)], [n, f]),
            lab: labels, lmask: mask, dropout: 0.5, nnz: [int(x_np.sum())]}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        losses = [s.run([loss, train], feed)[0] for _ in range(5)]
        _close(losses, [1.09925, 1.19564, 1.09097, 1.06528, 1.08315], atol=1e-5)
        sv = s.run(x, feed)
        assert sv.indices.shape == (5, 2) and sv.dense_shape.tolist() == [6, 5]
        _close(sv.values, [2.0] * 5)
        del feed[dropout]
        _close(s.run(out, feed), [[-0.1577, 0.2045, 0.1369], [-0.1483, 0.2019, 0.1284],
                                  [-0.1577, 0.2045, 0.1369], [-0.1483, 0.2019, 0.1284],
                                  [-0.0578, 0.1225, 0.0485], [-0.1577, 0.2045, 0.1369]])


# -- GAT (sparse) --------------------------------------------------------------------------
def test_gat_sparse_attention_head():
    n, f, h = 5, 4, 3
    rng = np.random.RandomState(1)
    adj = np.eye(n) + (rng.rand(n, n) > 0.5)
    adj = np.minimum(adj + adj.T, 1)
    ai = np.array(np.nonzero(adj)).T.astype(np.int64)
    x_np = rng.randn(1, n, f).astype(np.float32)
    y_np = rng.randint(0, 2, n).astype(np.int32)
    tf.set_random_seed(7)
    bias_in = tf.sparse_placeholder(dtype=tf.float32, name="bias_in")
    ftr_in = tf.placeholder(tf.float32, shape=(1, n, f), name="ftr_in")
    lbl = tf.placeholder(tf.int32, shape=(n,))
    assert bias_in.shape.ndims is None and bias_in.dense_shape.name == "bias_in/shape:0"
    with tf.name_scope("sp_attn"):
        seq_fts = tf.layers.conv1d(ftr_in, h, 1, use_bias=False)
        f_1 = tf.reshape(tf.layers.conv1d(seq_fts, 1, 1), (n, 1))
        f_2 = tf.reshape(tf.layers.conv1d(seq_fts, 1, 1), (n, 1))
        f_1 = bias_in * f_1
        f_2 = bias_in * tf.transpose(f_2, [1, 0])
        assert f_1.values.name == "sp_attn/mul:0" and f_1.shape.ndims is None
        logits = tf.sparse_add(f_1, f_2)
        assert (logits.indices.name, logits.dense_shape.name) == ("sp_attn/SparseAdd:0",
                                                                  "sp_attn/SparseAdd:2")
        lrelu = tf.SparseTensor(logits.indices, tf.nn.leaky_relu(logits.values),
                                logits.dense_shape)
        coefs = tf.sparse_softmax(lrelu)
        assert coefs.values.name == "sp_attn/SparseSoftmax/SparseSoftmax:0"
        coefs = tf.sparse_reshape(coefs, [n, n])
        assert (coefs.indices.name, coefs.shape.as_list()) == ("sp_attn/SparseReshape:0",
                                                               [None, None])
        vals = tf.expand_dims(tf.sparse_tensor_dense_matmul(coefs, tf.squeeze(seq_fts)), 0)
        vals.set_shape([1, n, h])
        out = tf.nn.elu(vals)
    assert (out.name, out.shape.as_list()) == ("sp_attn/Elu:0", [1, 5, 3])
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=lbl, logits=tf.squeeze(out)[:, :2]))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    feed = {bias_in: (ai, np.ones(len(ai), np.float32), adj.shape), ftr_in: x_np, lbl: y_np}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close([s.run([loss, train], feed)[0] for _ in range(4)],
               [1.31745, 0.8725, 0.69745, 0.649], atol=1e-5)
        c = s.run(coefs, feed)
        _close(c.values, [0.1409, 0.2257, 0.388, 0.2454, 0.2304, 0.2571, 0.2512, 0.2614,
                          0.277, 0.2468, 0.4762, 0.2238, 0.244, 0.2783, 0.2539, 0.2225,
                          0.2483, 0.2767, 0.2525])
        dense = s.run(tf.sparse_tensor_to_dense(coefs, default_value=-1.0,
                                                validate_indices=False), feed)
        _close(dense[2], [-1., 0.277, 0.247, 0.476, -1.], atol=6e-4)


# -- message passing -----------------------------------------------------------------------
def test_mpnn_unsorted_segment_aggregators():
    rng = np.random.RandomState(3)
    senders = np.array([0, 1, 1, 2, 3, 3, 4, 0], np.int32)
    receivers = np.array([1, 0, 2, 1, 4, 2, 3, 3], np.int32)
    nodes = rng.randn(5, 3).astype(np.float32)
    tf.set_random_seed(11)
    x = tf.placeholder(tf.float32, [None, 3], name="nodes")
    snd = tf.placeholder(tf.int32, [None], name="senders")
    rcv = tf.placeholder(tf.int32, [None], name="receivers")
    n = tf.placeholder(tf.int32, [], name="n_node")
    with tf.variable_scope("mpnn"):
        w = tf.get_variable("W_msg", [3, 3], initializer=tf.glorot_uniform_initializer(seed=2))
        msgs = tf.matmul(tf.gather(x, snd), w)
        aggs = [tf.unsorted_segment_sum(msgs, rcv, n), tf.unsorted_segment_max(msgs, rcv, n),
                tf.math.unsorted_segment_mean(msgs, rcv, n),
                tf.math.unsorted_segment_sqrt_n(msgs, rcv, n),
                tf.unsorted_segment_min(msgs, rcv, num_segments=n),
                tf.math.unsorted_segment_prod(msgs, rcv, n)]
    assert [(t.name, t.op.type, t.shape.as_list()) for t in aggs] == [
        ("mpnn/UnsortedSegmentSum:0", "UnsortedSegmentSum", [None, 3]),
        ("mpnn/UnsortedSegmentMax:0", "UnsortedSegmentMax", [None, 3]),
        ("mpnn/UnsortedSegmentMean/truediv:0", "RealDiv", [None, 3]),
        ("mpnn/UnsortedSegmentSqrtN/truediv:0", "RealDiv", [None, 3]),
        ("mpnn/UnsortedSegmentMin:0", "UnsortedSegmentMin", [None, 3]),
        ("mpnn/UnsortedSegmentProd:0", "UnsortedSegmentProd", [None, 3])]
    hid = tf.nn.tanh(aggs[0] + aggs[2] + aggs[3] + 0.1 * aggs[1])
    loss = tf.reduce_sum(tf.square(hid - 0.5))
    grads = tf.gradients(loss, [w, x])
    assert [g.name for g in grads] == ["gradients/mpnn/MatMul_grad/MatMul_1:0",
                                       "gradients/mpnn/GatherV2_grad/Reshape:0"]
    assert isinstance(grads[1], tf.IndexedSlices)
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    feed = {x: nodes, snd: senders, rcv: receivers, n: 5}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close([s.run([loss, train], feed)[0] for _ in range(3)],
               [15.07378, 14.98159, 14.96632], atol=1e-5)
        _close(s.run(aggs[1], feed), [[1.3503, 4.5369, 2.3318], [1.2899, 0.875, 0.3468],
                                      [2.8191, 4.5369, 2.3318], [-1.6334, -3.838, -1.7452],
                                      [2.8191, 2.3206, 1.1849]])
        _close(s.run(aggs[4], feed)[1:4], [[-1.6334, -4.4917, -2.3289],
                                           [1.3503, 2.3206, 1.1849],
                                           [-3.7943, -4.4917, -2.3289]])
        _close(s.run(aggs[5], feed)[1:4], [[-2.1069, -3.9304, -0.8078],
                                           [3.8066, 10.5282, 2.7629],
                                           [6.1978, 17.2389, 4.0643]])
        gx = s.run(grads[1], feed)
        assert gx.indices.tolist() == [0, 1, 1, 2, 3, 3, 4, 0]
        assert gx.dense_shape.tolist() == [5, 3]
        _close(gx.values[[0, 1, 3, 4]], [[1.3706, 6.4369, 0.0416], [-0.0012, -0.0057, 0.0],
                                         [1.4327, 6.7285, 0.0434], [-0.0096, -0.0032, 0.0007]])


def test_sorted_segment_family_gradients_and_errors():
    receivers = np.array([1, 0, 2, 1, 4, 2, 3, 3], np.int32)
    seg = tf.constant(np.sort(receivers, kind="stable"))
    data = tf.constant(np.arange(16, dtype=np.float32).reshape(8, 2))
    ops = [tf.segment_sum(data, seg), tf.segment_mean(data, seg), tf.segment_max(data, seg),
           tf.segment_min(data, seg), tf.segment_prod(data, seg, name="prod")]
    assert [(o.name, o.shape.as_list()) for o in ops] == [
        ("SegmentSum:0", [None, 2]), ("SegmentMean:0", [None, 2]), ("SegmentMax:0", [None, 2]),
        ("SegmentMin:0", [None, 2]), ("prod:0", [None, 2])]
    gmax = tf.gradients(tf.reduce_sum(ops[2] * 2.0), data)[0]
    gmean = tf.gradients(tf.reduce_sum(ops[1]), data)[0]
    assert gmax.name == "gradients/SegmentMax_grad/SelectV2:0"
    with tf.Session() as s:
        assert s.run(ops).__len__() == 5
        assert s.run(ops[0]).tolist() == [[0, 1], [6, 8], [14, 16], [22, 24], [14, 15]]
        assert s.run(ops[4]).tolist() == [[0, 1], [8, 15], [48, 63], [120, 143], [14, 15]]
        assert s.run(gmax).tolist() == [[2, 2], [0, 0], [2, 2], [0, 0], [2, 2], [0, 0],
                                        [2, 2], [2, 2]]
        assert s.run(gmean).tolist() == [[1, 1]] + [[0.5, 0.5]] * 6 + [[1, 1]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids"):
            s.run(tf.segment_sum(data, tf.constant([0, 0, 1, 1, 2, 2, 4, 3])))
        with pytest.raises(tf.errors.InvalidArgumentError, match="9"):
            s.run(tf.unsorted_segment_sum(data, tf.constant([0, 0, 1, 1, 2, 2, 9, 3]), 5))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = 9 is not in \[0, 8\)"):
            s.run(tf.gather(data, [0, 9]))


# -- GraphSAGE sampling and the sparse family ------------------------------------------
def test_graphsage_sampling_lookup_sparse_and_sparse_family():
    tf.set_random_seed(5)
    adj_info = tf.constant(np.array([[1, 2, 3, 4], [0, 2, 2, 3], [0, 1, 4, 4], [0, 1, 2, 2],
                                     [0, 2, 3, 1]], np.int32))
    ids = tf.placeholder(tf.int32, [None], name="batch")
    lists = tf.nn.embedding_lookup(adj_info, ids)
    lists = tf.transpose(tf.random_shuffle(tf.transpose(lists), seed=4))
    lists = tf.slice(lists, [0, 0], [-1, 2])
    assert (lists.name, lists.shape.as_list()) == ("Slice:0", [None, 2])
    emb = tf.get_variable("emb", initializer=tf.constant(
        np.arange(15, dtype=np.float32).reshape(5, 3) / 10.))
    neigh = tf.nn.embedding_lookup(emb, lists)
    mean_agg, max_agg = tf.reduce_mean(neigh, axis=1), tf.reduce_max(neigh, axis=1)
    pos = [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]]
    sp_ids = tf.SparseTensor(pos, tf.constant([1, 3, 0, 2, 2, 4], tf.int64), [3, 3])
    sp_w = tf.SparseTensor(pos, [1., 2., 0.5, 1., 1., 3.], [3, 3])
    outs = [tf.nn.embedding_lookup_sparse(emb, sp_ids, sp_w, combiner=c)
            for c in ("mean", "sqrtn", "sum")]
    assert [(o.name, o.shape.as_list()) for o in outs] == [
        ("embedding_lookup_sparse:0", [None, 3]), ("embedding_lookup_sparse_1:0", [None, 3]),
        ("embedding_lookup_sparse_2:0", [None, 3])]
    nw = tf.nn.embedding_lookup_sparse(emb, sp_ids, None, combiner="mean", name="nw")
    assert nw.name == "nw:0"
    parts = tf.dynamic_partition(tf.range(6), tf.constant([0, 1, 0, 2, 1, 0]), 3)
    st = tf.dynamic_stitch([tf.constant([0, 2, 5]), tf.constant([1, 4]), tf.constant([3])],
                           [p * 10 for p in parts])
    assert [p.name for p in parts] == [f"DynamicPartition:{i}" for i in range(3)]
    assert (st.name, st.shape.as_list()) == ("DynamicStitch:0", [6])
    sc = tf.scatter_nd(tf.constant([[0], [2], [0]]), tf.constant([1., 2., 3.]), tf.constant([4]))
    tsa = tf.tensor_scatter_nd_add(tf.ones([3, 2]), [[1], [1]], [[1., 2.], [3., 4.]])
    gnd = tf.gather_nd(tf.reshape(tf.range(24), [2, 3, 4]), [[[0, 1], [2, 3]], [[1, 0], [0, 2]]],
                       batch_dims=1)
    assert (sc.name, sc.shape.as_list(), tsa.name) == ("ScatterNd:0", [4], "TensorScatterAdd:0")
    assert (gnd.name, gnd.shape.as_list()) == ("BatchGatherND/Reshape_3:0", [2, 2])
    srs = tf.sparse_reduce_sum(sp_w, axis=1, keep_dims=True)
    srs2 = tf.sparse_reduce_sum_sparse(sp_w, axis=0)
    assert (srs.name, srs.shape.as_list()) == ("SparseReduceSum:0", [3, 1])
    assert srs2.indices.name == "SparseReduceSumSparse:0" and srs2.shape.ndims is None
    spmax = tf.sparse_maximum(sp_w, tf.SparseTensor([[0, 1], [1, 1]], [5., 5.], [3, 3]))
    ind = tf.sparse.to_indicator(sp_ids, 5)
    assert (spmax.indices.name, spmax.shape.as_list()) == ("SparseSparseMaximum:0", [3, 3])
    assert (ind.name, ind.shape.as_list()) == ("SparseToIndicator:0", [3, 5])
    sl, tr = tf.sparse_slice(sp_w, [1, 0], [2, 2]), tf.sparse_transpose(sp_w)
    cc = tf.sparse_concat(1, [sp_w, sp_w])
    std = tf.sparse_to_dense([[0, 1], [2, 2]], [3, 3], [4., 5.], default_value=-1.)
    assert (sl.indices.name, sl.shape.as_list(), tr.shape.as_list(), cc.shape.as_list()) == (
        "SparseSlice:0", [None, None], [3, 3], [3, 6])
    assert (std.name, std.shape.as_list()) == ("SparseToDense:0", [3, 3])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(lists, {ids: [0, 3, 4]}).tolist() == [[1, 4], [0, 2], [0, 1]]
        m, x = s.run([mean_agg, max_agg], {ids: [0, 3, 4]})
        _close(m, [[0.75, 0.85, 0.95], [0.3, 0.4, 0.5], [0.15, 0.25, 0.35]])
        _close(x, [[1.2, 1.3, 1.4], [0.6, 0.7, 0.8], [0.3, 0.4, 0.5]])
        mean, sqrtn, total = s.run(outs)
        _close(mean, [[0.7, 0.8, 0.9], [0.0, 0.1, 0.2], [0.96, 1.06, 1.16]])
        _close(sqrtn, [[0.9391, 1.0733, 1.2075], [0.0, 0.1, 0.2], [1.4473, 1.598, 1.7488]])
        _close(total, [[2.1, 2.4, 2.7], [0.0, 0.05, 0.1], [4.8, 5.3, 5.8]])
        _close(s.run(nw), [[0.6, 0.7, 0.8], [0.0, 0.1, 0.2], [0.8, 0.9, 1.0]])
        assert s.run(st).tolist() == [0, 10, 20, 30, 40, 50]
        assert s.run(sc).tolist() == [4.0, 0.0, 2.0, 0.0]
        assert s.run(tsa).tolist() == [[1, 1], [5, 7], [1, 1]]
        assert s.run(gnd).tolist() == [[1, 11], [16, 14]]
        assert s.run(srs).tolist() == [[3.0], [0.5], [5.0]]
        v = s.run(srs2)
        assert v.indices.tolist() == [[0], [1], [2]] and v.values.tolist() == [2.5, 3, 3]
        assert s.run(spmax).values.tolist() == [1, 5, 0.5, 5, 1, 1, 3]
        assert s.run(ind).tolist() == [[False, True, False, True, False],
                                       [True, False, False, False, False],
                                       [False, False, True, False, True]]
        v = s.run(sl)
        assert v.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
        assert v.dense_shape.tolist() == [2, 2]
        assert s.run(tf.sparse_tensor_to_dense(tr)).tolist() == [[1, 0.5, 1], [2, 0, 1],
                                                                 [0, 0, 3]]
        assert s.run(std).tolist() == [[-1, 4, -1], [-1, -1, -1], [-1, -1, 5]]
        assert s.run(cc.dense_shape).tolist() == [3, 6]
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
            s.run(tf.sparse_tensor_to_dense(tf.SparseTensor([[1, 0], [0, 1]], [1., 2.],
                                                            [2, 2])))
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(tf.nn.embedding_lookup(emb, [0, 9]))


# -- node2vec / DeepWalk ------------------------------------------------------------------
def test_node2vec_skipgram_with_nce_loss_and_saver(tmp_path):
    pairs = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [5, 6], [6, 7], [8, 9], [9, 10],
                      [10, 11], [1, 0], [4, 3], [11, 10]], np.int32)
    tf.set_random_seed(1234)
    inputs = tf.placeholder(tf.int32, shape=[None], name="train_inputs")
    labels = tf.placeholder(tf.int32, shape=[None, 1], name="train_labels")
    with tf.name_scope("embeddings"):
        emb = tf.Variable(tf.random_uniform([12, 8], -1.0, 1.0), name="node_emb")
        embed = tf.nn.embedding_lookup(emb, inputs)
    with tf.name_scope("weights"):
        nce_w = tf.Variable(tf.truncated_normal([12, 8], stddev=1.0 / np.sqrt(8)))
    with tf.name_scope("biases"):
        nce_b = tf.Variable(tf.zeros([12]))
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_w, biases=nce_b, labels=labels,
                                             inputs=embed, num_sampled=4, num_classes=12))
    tf.summary.scalar("loss", loss)
    assert (embed.name, loss.name) == ("embeddings/embedding_lookup/Identity:0", "loss/Mean:0")
    assert [v.name for v in tf.global_variables()] == [
        "embeddings/node_emb:0", "weights/Variable:0", "biases/Variable:0"]
    with tf.name_scope("optimizer"):
        opt = tf.train.GradientDescentOptimizer(1.0)
        gvs = opt.compute_gradients(loss)
        train = opt.apply_gradients(gvs)
    assert [g.values.name for g, _ in gvs] == [
        "optimizer/gradients/embeddings/embedding_lookup_grad/Reshape:0",
        "optimizer/gradients/loss/nce_loss/embedding_lookup_grad/Reshape:0",
        "optimizer/gradients/loss/nce_loss/embedding_lookup_1_grad/Reshape:0"]
    normed = emb / tf.sqrt(tf.reduce_sum(tf.square(emb), 1, keepdims=True))
    sim = tf.matmul(tf.nn.embedding_lookup(normed, tf.constant([0, 5])), normed,
                    transpose_b=True)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver()
    dense_g = tf.convert_to_tensor(gvs[0][0])
    d2 = tf.multiply(gvs[0][0], 2.0)
    assert (dense_g.name, dense_g.op.type, dense_g.shape.as_list()) == (
        "UnsortedSegmentSum:0", "UnsortedSegmentSum", [12, 8])
    assert (d2.name, d2.shape.as_list()) == ("Mul:0", [12, 8])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        losses = []
        for step in range(6):
            i = np.arange(step, step + 6) % len(pairs)
            losses.append(s.run([train, merged, loss],
                                {inputs: pairs[i, 0], labels: pairs[i, 1:]})[2])
        _close(losses, [5.35711, 5.22513, 3.18183, 5.61176, 4.00945, 2.10727], atol=1e-5)
        _close(s.run(sim)[:, :4], [[1., 0.0269, -0.6626, -0.4263], [0.2876, 0.4728, 0.4208,
                                                                     0.3634]])
        g = s.run(dense_g, {inputs: [0, 0, 3], labels: [[1], [1], [4]]})
        _close(g[0], [-0.1439, -0.0909, 0.2402, 0.2814, -0.3273, 0.2922, 0.174, 0.1744])
        assert not g[1:3].any()
        path = saver.save(s, os.path.join(str(tmp_path), "model.ckpt"), global_step=6)
    assert os.path.basename(path) == "model.ckpt-6"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-6.data-00000-of-00001",
                                            "model.ckpt-6.index", "model.ckpt-6.meta"]
    assert [n for n, _ in tf.train.list_variables(path)] == [
        "biases/Variable", "embeddings/node_emb", "weights/Variable"]


# -- IndexedSlices --------------------------------------------------------------------------
def test_indexed_slices_densified_and_accumulated():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    idx = tf.placeholder(tf.int32, [None], name="idx")
    g = tf.gradients(tf.reduce_sum(tf.gather(x, idx) ** 2), x)[0]
    assert (g.dense_shape.name, g.dense_shape.shape.as_list()) == (
        "gradients/GatherV2_grad/Cast:0", [2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = tf.convert_to_tensor(g)  # unknown shape: TensorFlow 2.15 warns only when large
    assert [str(w.message) for w in caught] == []
    assert (d.name, d.shape.as_list()) == ("UnsortedSegmentSum:0", [None, 3])
    v = tf.Variable(tf.ones([4, 2]), name="v")
    d2 = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(tf.gather(v, idx)), v)[0])
    assert (d2.name, d2.shape.as_list()) == ("UnsortedSegmentSum_1:0", [4, 2])
    big = tf.IndexedSlices(tf.constant([[1., 2.]]), tf.constant([1]),
                           dense_shape=tf.constant([20000000, 10], tf.int64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tf.convert_to_tensor(big)
    assert [str(w.message) for w in caught] == [
        "Converting sparse IndexedSlices to a dense Tensor with 200000000 elements. This "
        "may consume a large amount of memory."]
    loss = tf.reduce_sum(tf.gather(v, [0, 1])) + tf.reduce_sum(tf.gather(v, [1, 3]) * 3.0)
    gg = tf.gradients(loss, v)[0]
    assert (gg.values.name, gg.indices.name) == ("gradients_2/concat:0",
                                                 "gradients_2/concat_1:0")
    opt = tf.train.AdagradOptimizer(0.5)
    step = opt.minimize(loss, var_list=[v])
    assert [t.name for t in opt.variables()] == ["v/Adagrad:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(d, {x: np.ones((3, 3)), idx: [0, 2, 2]}).tolist() == [
            [2, 2, 2], [0, 0, 0], [4, 4, 4]]
        assert s.run(d2, {idx: [3, 3]}).tolist() == [[0, 0], [0, 0], [0, 0], [2, 2]]
        gv = s.run(gg)
        assert gv.values.tolist() == [[1, 1], [1, 1], [3, 3], [3, 3]]
        assert gv.indices.tolist() == [0, 1, 1, 3]
        s.run(step)
        s.run(step)
        _close(s.run(v)[:, 0], [0.17824, 0.14855, 1.0, 0.15018], atol=1e-5)


def test_indexed_slices_without_dense_shape_error_message():
    s = tf.IndexedSlices(tf.constant([[1., 2.]]), tf.constant([1]))
    with pytest.raises(ValueError) as err:
        tf.convert_to_tensor(s)
    assert str(err.value).startswith(
        "Tensor conversion requested for IndexedSlices for argument `value` without "
        "dense_shape: IndexedSlices(indices=Tensor(\"Const_1:0\", shape=(1,), dtype=int32), "
        "values=Tensor(\"Const:0\", shape=(1, 2), dtype=float32))")


# -- adjacency preprocessing ------------------------------------------------------------
def test_sparse_preprocessing_pipeline_and_runtime_errors():
    sp_in = tf.sparse_placeholder(tf.float32, shape=[None, None], name="adj")
    ro = tf.sparse_reorder(sp_in)
    parts = {"ro": ro, "rs": tf.sparse_reshape(ro, [-1, 2]),
             "tr": tf.sparse_transpose(ro, [1, 0]), "sl": tf.sparse_slice(ro, [0, 0], [2, 3]),
             "cc": tf.sparse_concat(0, [ro, ro]),
             "cc1": tf.sparse_concat(1, [ro, ro], expand_nonconcat_dim=True)}
    assert {k: (t.indices.name, t.dense_shape.name, t.shape.as_list())
            for k, t in parts.items()} == {
        "ro": ("SparseReorder:0", "Identity:0", [None, None]),
        "rs": ("SparseReshape:0", "SparseReshape:1", [None, None]),
        "tr": ("SparseTranspose/SparseReorder:0", "SparseTranspose/Identity:0", [None, None]),
        "sl": ("SparseSlice:0", "SparseSlice:2", [None, None]),
        "cc": ("SparseConcat:0", "SparseConcat:2", [None, None]),
        "cc1": ("SparseConcat_1:0", "SparseConcat_1:2", [None, None])}
    rsum = tf.sparse_reduce_sum(ro, axis=1)
    rsum_k = tf.sparse_reduce_sum(ro, axis=-1, keep_dims=True)
    dense = tf.sparse_tensor_to_dense(ro, default_value=0.5)
    dense_nv = tf.sparse.to_dense(sp_in, validate_indices=False)
    assert (rsum.name, rsum.shape.ndims, rsum_k.shape.ndims) == ("SparseReduceSum:0", None, None)
    assert (dense.name, dense.shape.as_list(), dense_nv.name) == (
        "SparseToDense:0", [None, None], "SparseToDense_1:0")
    feed = {sp_in: tf.SparseTensorValue([[2, 1], [0, 3], [1, 0]], [3., 1., 2.], [3, 4])}
    want = {"ro": ([[0, 3], [1, 0], [2, 1]], [1, 2, 3], [3, 4]),
            "rs": ([[1, 1], [2, 0], [4, 1]], [1, 2, 3], [6, 2]),
            "tr": ([[0, 1], [1, 2], [3, 0]], [2, 3, 1], [4, 3]),
            "sl": ([[1, 0]], [2], [2, 3]),
            "cc": ([[0, 3], [1, 0], [2, 1], [3, 3], [4, 0], [5, 1]], [1, 2, 3, 1, 2, 3], [6, 4]),
            "cc1": ([[0, 3], [0, 7], [1, 0], [1, 4], [2, 1], [2, 5]], [1, 1, 2, 2, 3, 3],
                    [3, 8])}
    with tf.Session() as s:
        for k, t in parts.items():
            v = s.run(t, feed)
            assert (v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()) == want[k]
        assert s.run(rsum, feed).tolist() == [1, 2, 3]
        assert s.run(rsum_k, feed).tolist() == [[1], [2], [3]]
        assert s.run(dense, feed).tolist() == [[0.5, 0.5, 0.5, 1], [2, 0.5, 0.5, 0.5],
                                               [0.5, 3, 0.5, 0.5]]
        assert s.run(dense_nv, feed).tolist() == [[0, 0, 0, 1], [2, 0, 0, 0], [0, 3, 0, 0]]
        bad = [(tf.sparse_tensor_to_dense(sp_in), feed, r"indices\[1\] = \[0,3\] is out of order"),
               (dense, {sp_in: ([[0, 0], [5, 1]], [1., 2.], [3, 4])},
                r"indices\[1\] = \[5,1\] is out of bounds: need 0 <= index < \[3,4\]"),
               (dense, {sp_in: ([[0, 0], [0, 0]], [1., 2.], [3, 4])},
                r"indices\[1\] = \[0,0\] is repeated"),
               (tf.sparse_to_dense([[0], [4]], [3], [1., 2.]), None,
                r"indices\[1\] = \[4\] is out of bounds"),
               (tf.sparse_concat(1, [sp_in, tf.SparseTensor([[0, 0]], [1.], [2, 2])]), feed,
                "Input shapes must match: expected 3 for dimension 0 but got 2 at position 1"),
               (tf.sparse_add(sp_in, tf.SparseTensor([[0, 0]], [1.], [2, 2])), feed,
                "Operands' shapes do not match: got 3 and 2 for dimension 0")]
        for t, fd, msg in bad:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                s.run(t, fd)
        assert s.run(tf.sparse_to_dense([[1], [0]], [3], [1., 2.],
                                        validate_indices=False)).tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.sparse_tensor_dense_matmul(tf.SparseTensor([[0, 0]], [1.], [3, 2]), tf.ones([3, 4]))


# -- supervised GraphSAGE -----------------------------------------------------------------
def test_supervised_graphsage_with_partition_and_stitch():
    n, f, d, c = 8, 4, 3, 2
    rng = np.random.RandomState(5)
    feats = rng.randn(n, f).astype(np.float32)
    adj = rng.randint(0, n, size=(n, 3)).astype(np.int32)
    labels = rng.randint(0, c, n).astype(np.int64)
    tf.set_random_seed(21)
    features = tf.Variable(tf.constant(feats), trainable=False, name="features")
    adj_info = tf.Variable(tf.constant(adj), trainable=False, name="adj_info")
    batch = tf.placeholder(tf.int32, [None], name="batch")
    is_val = tf.placeholder(tf.int32, [None], name="is_val")
    y = tf.placeholder(tf.int64, [None], name="labels")

    def aggregate(self_vecs, neigh_vecs, name, pool):
        with tf.variable_scope(name + "_vars"):
            nw = tf.get_variable("neigh_weights", [f, d],
                                 initializer=tf.glorot_uniform_initializer(seed=1))
            sw = tf.get_variable("self_weights", [f, d],
                                 initializer=tf.glorot_uniform_initializer(seed=2))
        neigh = pool(neigh_vecs, axis=1)
        return tf.nn.relu(tf.concat([tf.matmul(self_vecs, sw), tf.matmul(neigh, nw)], axis=1))

    neigh_ids = tf.nn.embedding_lookup(adj_info, batch)
    self_vecs = tf.nn.embedding_lookup(features, batch)
    neigh_vecs = tf.nn.embedding_lookup(features, neigh_ids)
    assert (neigh_ids.name, neigh_vecs.shape.as_list()) == ("embedding_lookup/Identity:0",
                                                            [None, 3, 4])
    hid = (aggregate(self_vecs, neigh_vecs, "agg_mean", tf.reduce_mean)
           + aggregate(self_vecs, neigh_vecs, "agg_max", tf.reduce_max))
    logits = tf.layers.dense(tf.nn.l2_normalize(hid, 1), c, name="node_pred",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    train_logits, val_logits = tf.dynamic_partition(logits, is_val, 2)
    train_y, val_y = tf.dynamic_partition(y, is_val, 2)
    assert (train_logits.name, train_logits.shape.as_list(), val_y.name) == (
        "DynamicPartition:0", [None, 2], "DynamicPartition_1:1")
    loss = tf.losses.sparse_softmax_cross_entropy(train_y, train_logits)
    cond_idx = tf.dynamic_partition(tf.range(tf.shape(batch)[0]), is_val, 2)
    preds = tf.dynamic_stitch(cond_idx, [tf.argmax(train_logits, 1), tf.argmax(val_logits, 1)])
    assert (preds.name, preds.shape.as_list(), loss.name) == (
        "DynamicStitch:0", [None], "sparse_softmax_cross_entropy_loss/value:0")
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    train = tf.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    feed = {batch: np.arange(n), is_val: [0, 0, 1, 0, 0, 1, 0, 0], y: labels}
    a, b = tf.constant([1., 2.]), tf.constant([3., 4.])
    st = tf.dynamic_stitch([[0, 2], [1, 2]], [a, b])
    gst = tf.gradients(tf.reduce_sum(st * [1., 10., 100.]), [a, b])
    dp = tf.dynamic_partition(tf.constant([[1., 2.], [3., 4.], [5., 6.]]), [1, 0, 1], 2)
    gdp = tf.gradients(tf.reduce_sum(dp[1] * 2.0), dp[0].op.inputs[0])[0]
    assert [g.name for g in gst] == ["gradients_1/DynamicStitch_1_grad/GatherV2:0",
                                     "gradients_1/DynamicStitch_1_grad/GatherV2_1:0"]
    assert gdp.name == "gradients_2/DynamicPartition_3_grad/Reshape_1:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        _close([s.run([loss, train], feed)[0] for _ in range(5)],
               [0.75004, 0.68636, 0.63994, 0.59627, 0.55333], atol=1e-5)
        assert s.run(preds, feed).tolist() == [1, 1, 0, 1, 0, 1, 0, 1]
        assert s.run(tf.train.get_global_step()) == 5
        assert s.run(st).tolist() == [1, 3, 4]
        assert [v.tolist() for v in s.run(gst)] == [[1, 100], [10, 100]]
        assert s.run(gdp).tolist() == [[2, 2], [0, 0], [2, 2]]
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(tf.dynamic_partition(tf.constant([1, 2]), tf.constant([0, 3]), 2))


# -- dense GAT with einsum ---------------------------------------------------------------
def test_dense_graph_attention_with_einsum_and_tensordot():
    b, n, f, h, k = 2, 4, 3, 5, 2
    rng = np.random.RandomState(9)
    x_np = rng.randn(b, n, f).astype(np.float32)
    a_np = np.minimum((rng.rand(b, n, n) > 0.5).astype(np.float32)
                      + np.eye(n, dtype=np.float32)[None], 1.)
    tf.set_random_seed(3)
    x = tf.placeholder(tf.float32, [None, n, f], name="x")
    adj = tf.placeholder(tf.float32, [None, n, n], name="adj")
    with tf.variable_scope("gat"):
        w = tf.get_variable("W", [k, f, h], initializer=tf.glorot_uniform_initializer(seed=4))
        a_self = tf.get_variable("a_self", [k, h, 1],
                                 initializer=tf.glorot_uniform_initializer(seed=5))
        a_neigh = tf.get_variable("a_neigh", [k, h, 1],
                                  initializer=tf.glorot_uniform_initializer(seed=6))
        hid = tf.einsum("bnf,kfh->bknh", x, w)
        f1 = tf.einsum("bknh,kho->bkno", hid, a_self)
        f2 = tf.einsum("bknh,kho->bkon", hid, a_neigh)
        e = tf.nn.leaky_relu(f1 + f2, alpha=0.2)
        att = tf.nn.softmax(e - 1e9 * (1.0 - tf.expand_dims(adj, 1)), axis=-1)
        out = tf.reduce_mean(tf.einsum("bkij,bkjh->bkih", att, hid), axis=1)
        td = tf.tensordot(out, tf.ones([h, 2]), axes=[[2], [0]])
        td2 = tf.tensordot(out, tf.ones([h]), axes=1)
    assert (hid.name, hid.shape.as_list()) == ("gat/einsum/Einsum:0", [None, 2, 4, 5])
    assert (f1.shape.as_list(), f2.shape.as_list()) == ([None, 2, 4, 1], [None, 2, 1, 4])
    assert (att.name, out.name, out.shape.as_list()) == ("gat/Softmax:0", "gat/Mean:0",
                                                         [None, 4, 5])
    assert [(t.name, t.shape.as_list()) for t in (td, td2)] == [
        ("gat/Tensordot:0", [None, 4, 2]), ("gat/Tensordot_1:0", [None, 4])]
    loss = tf.reduce_mean(tf.square(td - 1.0)) + tf.reduce_mean(td2)
    train = tf.train.RMSPropOptimizer(0.01).minimize(loss)
    assert sorted(v.name for v in tf.global_variables()) == [
        "gat/W/RMSProp:0", "gat/W/RMSProp_1:0", "gat/W:0", "gat/a_neigh/RMSProp:0",
        "gat/a_neigh/RMSProp_1:0", "gat/a_neigh:0", "gat/a_self/RMSProp:0",
        "gat/a_self/RMSProp_1:0", "gat/a_self:0"]
    gw = tf.gradients(loss, w)[0]
    assert gw.name == "gradients_1/gat/einsum/Einsum_grad/Einsum_1:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        feed = {x: x_np, adj: a_np}
        _close([s.run([loss, train], feed)[0] for _ in range(4)],
               [1.10138, 1.09239, 1.0836, 1.07499], atol=1e-5)
        _close(s.run(att, feed)[0, 0], [[0.693, 0., 0., 0.307], [0.5615, 0.4385, 0., 0.],
                                        [0.6887, 0., 0.3113, 0.], [0.3806, 0., 0.3209, 0.2986]])
        _close(s.run(gw, feed)[1, 0], [0.1678, 0.1865, 0.1721, 0.1748, 0.1746])
    with pytest.raises(ValueError):
        tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 5]))
    with pytest.raises(ValueError):
        tf.tensordot(tf.ones([2, 3]), tf.ones([4, 5]), axes=1)


# -- focused tests of the fixed classes ---------------------------------------------------
def test_segment_gradients_are_built_as_tensorflow_builds_them():
    data = tf.constant(np.array([[1., 2.], [3., 0.], [3., 5.], [0., 0.], [2., 2.]], np.float32))
    ids = tf.constant([0, 0, 1, 1, 2])
    uids = tf.constant([1, 0, 1, -1, 2])
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    outs = [tf.segment_max(data, ids), tf.segment_min(data, ids), tf.segment_prod(data, ids),
            tf.unsorted_segment_sum(data, uids, 3), tf.unsorted_segment_max(data, uids, 3),
            tf.unsorted_segment_min(data, uids, 3), tf.unsorted_segment_prod(data, uids, 3),
            tf.math.unsorted_segment_mean(data, uids, 3),
            tf.math.unsorted_segment_sqrt_n(data, uids, 3)]
    grads = [tf.gradients(tf.reduce_sum(o * w), data)[0] for o in outs]
    assert [g.name for g in grads] == [
        "gradients/SegmentMax_grad/SelectV2:0", "gradients_1/SegmentMin_grad/SelectV2:0",
        "gradients_2/SegmentProd_grad/mul:0", "gradients_3/UnsortedSegmentSum_grad/SelectV2:0",
        "gradients_4/UnsortedSegmentMax_grad/SelectV2_2:0",
        "gradients_5/UnsortedSegmentMin_grad/SelectV2_2:0",
        "gradients_6/UnsortedSegmentProd_grad/mul:0",
        "gradients_7/UnsortedSegmentMean/UnsortedSegmentSum_1_grad/SelectV2:0",
        "gradients_8/UnsortedSegmentSqrtN/UnsortedSegmentSum_1_grad/SelectV2:0"]
    with tf.Session() as s:
        got = s.run(grads)
    r2 = np.sqrt(2.0)
    want = [[[0, 1], [0, 0], [2, 3], [0, 0], [4, 5]], [[0, 0], [0, 1], [0, 0], [2, 3], [4, 5]],
            [[0, 0], [0, 2], [0, 0], [6, 15], [4, 5]], [[2, 3], [0, 1], [2, 3], [0, 0], [4, 5]],
            [[0, 0], [0, 1], [2, 3], [0, 0], [4, 5]], [[2, 3], [0, 1], [0, 0], [0, 0], [4, 5]],
            [[6, 15], [0, 1], [2, 6], [0, 0], [4, 5]],
            [[1, 1.5], [0, 1], [1, 1.5], [0, 0], [4, 5]],
            [[r2, 1.5 * r2], [0, 1], [r2, 1.5 * r2], [0, 0], [4, 5]]]
    for g, v in zip(got, want):
        _close(g, v, atol=1e-6)


def test_unsorted_segment_mean_counts_before_summing():
    d = tf.placeholder(tf.float32, [None, 2], name="d")
    s = tf.placeholder(tf.int32, [None], name="s")
    tf.math.unsorted_segment_mean(d, s, 3)
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()[2:]]
    assert ops == [
        ("UnsortedSegmentMean/Const", "Const"), ("UnsortedSegmentMean/Shape", "Shape"),
        ("UnsortedSegmentMean/ones/Const", "Const"), ("UnsortedSegmentMean/ones", "Fill"),
        ("UnsortedSegmentMean/UnsortedSegmentSum", "UnsortedSegmentSum"),
        ("UnsortedSegmentMean/strided_slice/stack", "Const"),
        ("UnsortedSegmentMean/strided_slice/stack_1", "Const"),
        ("UnsortedSegmentMean/strided_slice/stack_2", "Const"),
        ("UnsortedSegmentMean/strided_slice", "StridedSlice"),
        ("UnsortedSegmentMean/Rank", "Const"), ("UnsortedSegmentMean/Rank_1", "Const"),
        ("UnsortedSegmentMean/sub", "Sub"), ("UnsortedSegmentMean/ones_1/packed", "Pack"),
        ("UnsortedSegmentMean/ones_1/Const", "Const"), ("UnsortedSegmentMean/ones_1", "Fill"),
        ("UnsortedSegmentMean/concat/axis", "Const"), ("UnsortedSegmentMean/concat", "ConcatV2"),
        ("UnsortedSegmentMean/Reshape", "Reshape"), ("UnsortedSegmentMean/Maximum/y", "Const"),
        ("UnsortedSegmentMean/Maximum", "Maximum"),
        ("UnsortedSegmentMean/UnsortedSegmentSum_1/num_segments", "Const"),
        ("UnsortedSegmentMean/UnsortedSegmentSum_1", "UnsortedSegmentSum"),
        ("UnsortedSegmentMean/truediv", "RealDiv")]


def test_sparse_operators_open_tensorflow_scopes():
    sp = tf.SparseTensor([[0, 0], [1, 2]], [3, 7], [2, 3])
    q = sp / 2
    assert (q.values.name, q.dtype) == ("truediv:0", tf.float64)
    assert [t.name for t in q.values.op.inputs] == [
        "SparseTensor/indices:0", "truediv/Cast:0", "SparseTensor/dense_shape:0",
        "truediv/Cast_1:0"]
    m = tf.SparseTensor([[0, 0]], [1.0], [2, 2]) * 2.0
    assert (m.values.name, m.values.op.type, m.values.op.inputs[3].name) == (
        "mul:0", "SparseDenseCwiseMul", "mul/y:0")
    with tf.Session() as s:
        assert s.run(q.values).tolist() == [1.5, 3.5]
        assert s.run(m.values).tolist() == [2.0]
    with pytest.raises(TypeError):
        2.0 * tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    with pytest.raises(TypeError):
        sp + 1


def test_derived_sparse_static_shapes_come_from_the_dense_shape_tensor():
    ph = tf.sparse_placeholder(tf.float32, shape=[4, 3], name="ph")
    ph2 = tf.sparse_placeholder(tf.float32, shape=[None, 3], name="ph2")
    assert ph.shape.as_list() == [4, 3]
    shapes = [tf.sparse_fill_empty_rows(ph, 0.0)[0], tf.sparse_softmax(ph),
              tf.sparse_reorder(ph), tf.sparse_add(ph, ph), tf.sparse_add(ph2, ph2),
              tf.sparse_reorder(ph2), tf.sparse_retain(ph2, [True]), ph * 2.0,
              tf.sparse_maximum(ph, ph)]
    assert [t.shape.as_list() for t in shapes] == [
        [None, None], [None, None], [4, 3], [4, 3], [None, None], [None, 3], [None, None],
        [None, None], [None, None]]
    assert shapes[3].dense_shape.op.type == "Const"
    assert shapes[4].dense_shape.name == "SparseAdd_1:2"
    c = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    assert tf.sparse_retain(c, [True]).shape.as_list() == [2, 3]
    r = tf.sparse_reduce_sum_sparse(ph, 0)
    assert [t.shape.ndims for t in (r.indices, r.values, r.dense_shape)] == [None] * 3
    assert r.shape.ndims is None
    assert tf.sparse_reduce_sum(ph, 1).shape.ndims is None
    assert tf.sparse_reduce_sum(c, 1, keep_dims=True).shape.as_list() == [2, 1]
    assert tf.sparse_reduce_max(c, 0).shape.as_list() == [3]


def test_sparse_add_softmax_fill_empty_rows_and_mask_names():
    a = tf.sparse_placeholder(tf.float32, shape=[4, 3], name="a")
    b = tf.sparse_placeholder(tf.float32, shape=[None, 3], name="b")
    n0 = len(tf.get_default_graph().get_operations())
    with tf.name_scope("att"):
        r1 = tf.sparse_add(a, a)
        r2 = tf.sparse_add(b, b, thresh=0.1)
        r3 = tf.sparse_add(a, tf.ones([4, 3]))
        r4 = tf.sparse_softmax(b, name="soft")
        tf.sparse_fill_empty_rows(b, 0.)
    assert [(o.name, o.type) for o in tf.get_default_graph().get_operations()[n0:]] == [
        ("att/threshold", "Const"), ("att/SparseAdd", "SparseAdd"),
        ("att/SparseTensor/dense_shape", "Const"), ("att/threshold_1", "Const"),
        ("att/SparseAdd_1", "SparseAdd"), ("att/ones", "Const"),
        ("att/SparseTensorDenseAdd", "SparseTensorDenseAdd"),
        ("att/soft/SparseSoftmax", "SparseSoftmax"), ("att/SparseFillEmptyRows/Const", "Const"),
        ("att/SparseFillEmptyRows/SparseFillEmptyRows", "SparseFillEmptyRows")]
    assert (r1.dense_shape.name, r2.dense_shape.name, r3.name, r4.values.name) == (
        "att/SparseTensor/dense_shape:0", "att/SparseAdd_1:2", "att/SparseTensorDenseAdd:0",
        "att/soft/SparseSoftmax:0")
    msk = tf.sparse_mask(tf.IndexedSlices(tf.ones([3, 2]), tf.constant([0, 2, 4])),
                         tf.constant([2]))
    assert (msk.values.name, msk.indices.name) == ("sparse_mask:0", "sparse_mask/ListDiff:0")
    feed = {a: ([[0, 1], [3, 2]], [1., -2.], [4, 3])}
    with tf.Session() as s:
        v = s.run(r1, feed)
        assert (v.indices.tolist(), v.values.tolist()) == ([[0, 1], [3, 2]], [2., -4.])
        assert s.run(r3, feed).tolist()[3] == [1., 1., -1.]
        assert s.run(msk.indices).tolist() == [0, 4]


def test_einsum_gradients_build_einsum_ops_in_the_gradient_scope():
    a = tf.constant(np.arange(6.).reshape(2, 3), tf.float32)
    b = tf.constant(np.arange(12.).reshape(3, 4), tf.float32)
    c = tf.constant(np.arange(24.).reshape(2, 3, 4), tf.float32)
    cases = [("ij,jk->ik", [a, b]), ("ij->ji", [a]), ("bij,jk->bik", [c[:, :, :3], b])]
    grads = []
    for eq, xs in cases:
        y = tf.einsum(eq, *xs)
        grads.append(tf.gradients(tf.reduce_sum(y * y), xs))
    assert [[t.name for t in g] for g in grads] == [
        ["gradients/einsum/Einsum_grad/Einsum:0", "gradients/einsum/Einsum_grad/Einsum_1:0"],
        ["gradients_1/einsum_1/Einsum_grad/Einsum:0"],
        ["gradients_2/einsum_2/Einsum_grad/Einsum:0",
         "gradients_2/einsum_2/Einsum_grad/Einsum_1:0"]]
    with tf.Session() as s:
        assert [[float(v.sum()) for v in s.run(g)] for g in grads] == [
            [13452.0, 7692.0], [30.0], [156024.0, 411048.0]]


def test_sparse_dense_matmul_gradient_is_built_as_tensorflow_builds_it():
    vals = tf.Variable([1., 2., 3., 4.], name="vals")
    sp = tf.SparseTensor(tf.constant([[0, 0], [0, 2], [1, 1], [2, 1]], tf.int64), vals, [3, 3])
    dense = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="dense")
    grads = []
    for adj_a in (False, True):
        for adj_b in (False, True):
            b = tf.transpose(dense) if adj_b else dense
            y = tf.sparse_tensor_dense_matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b)
            grads.append(tf.gradients(tf.reduce_sum(y * y), [vals, dense]))
    assert [g[0].name for g in grads] == [
        f"gradients{s}/SparseTensorDenseMatMul{s}/SparseTensorDenseMatMul_grad/Squeeze:0"
        for s in ("", "_1", "_2", "_3")]
    assert grads[1][1].name == "gradients_1/transpose_grad/transpose:0"
    names = [o.name for o in tf.get_default_graph().get_operations()]
    assert ("gradients_3/SparseTensorDenseMatMul_3/SparseTensorDenseMatMul_grad/"
            "matrix_transpose/transpose") in names
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = s.run(grads)
    assert [g[0].tolist() for g in got] == [[22, 174, 78, 104]] * 2 + [[2, 4, 262, 466]] * 2
    assert got[0][1].tolist() == [[16, 22], [100, 150], [32, 44]] == got[1][1].tolist()
    assert got[2][1].tolist() == [[0, 10], [132, 174], [176, 232]] == got[3][1].tolist()


def test_embedding_lookup_sparse_looks_up_distinct_ids_once():
    p = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="p")
    idx = tf.constant([[0, 0], [0, 2], [1, 1], [2, 1]], tf.int64)
    ids = tf.SparseTensor(idx, tf.constant([0, 2, 1, 1], tf.int64), [3, 3])
    w = tf.SparseTensor(idx, [1., 2., 3., 4.], [3, 3])
    n0 = len(tf.get_default_graph().get_operations())
    e = tf.nn.embedding_lookup_sparse(p, ids, w, combiner="mean")
    types = [(o.name, o.type) for o in tf.get_default_graph().get_operations()[n0:]]
    assert types[4:10] == [
        ("embedding_lookup_sparse/Unique", "Unique"),
        ("embedding_lookup_sparse/embedding_lookup/axis", "Const"),
        ("embedding_lookup_sparse/embedding_lookup", "GatherV2"),
        ("embedding_lookup_sparse/embedding_lookup/Identity", "Identity"),
        ("embedding_lookup_sparse/Cast", "Cast"),
        ("embedding_lookup_sparse/GatherV2/axis", "Const")]
    assert types[-3:] == [("embedding_lookup_sparse/SegmentSum", "SegmentSum"),
                          ("embedding_lookup_sparse/SegmentSum_1", "SegmentSum"),
                          ("embedding_lookup_sparse", "DivNoNan")]
    total = tf.nn.embedding_lookup_sparse(p, ids, w, combiner="sum")
    normed = tf.nn.embedding_lookup_sparse(p, ids, None, combiner="mean", max_norm=5.0)
    assert [(t.name, t.op.type) for t in (total, normed)] == [
        ("embedding_lookup_sparse_1:0", "SegmentSum"),
        ("embedding_lookup_sparse_2:0", "SparseSegmentMean")]
    g = tf.gradients(e, p)[0]
    assert g.values.name == "gradients/embedding_lookup_sparse/embedding_lookup_grad/Reshape:0"
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        v = s.run(g)
        assert v.indices.tolist() == [0, 2, 1]
        _close(v.values, [[1 / 3] * 3, [2 / 3] * 3, [2.0] * 3], atol=1e-6)
        assert s.run(total).tolist() == [[12, 15, 18], [9, 12, 15], [12, 16, 20]]


def test_sparse_expand_dims_slices_at_a_tensor_position():
    sp = tf.SparseTensor([[0, 1], [1, 2]], [5., 6.], [2, 3])
    n0 = len(tf.get_default_graph().get_operations())
    e = tf.sparse.expand_dims(sp, axis=-1)
    ops = [o.name for o in tf.get_default_graph().get_operations()[n0:]]
    assert ops[:8] == ["expand_dims/axis", "expand_dims/GreaterEqual/y",
                       "expand_dims/GreaterEqual", "expand_dims/add/y", "expand_dims/add",
                       "expand_dims/add_1/y", "expand_dims/add_1", "expand_dims/SelectV2"]
    assert ops[-4:] == ["expand_dims/Slice_3", "expand_dims/new_shape",
                        "expand_dims/concat_1/axis", "expand_dims/concat_1"]
    e1 = tf.sparse.expand_dims(sp, 0, name="ex")
    assert (e.shape.as_list(), e1.shape.as_list(), e1.indices.name) == (
        [None, None, 1], [1, None, None], "ex/concat:0")
    with tf.Session() as s:
        v, v1 = s.run([e, e1])
    assert (v.indices.tolist(), v.dense_shape.tolist()) == ([[0, 1, 0], [1, 2, 0]], [2, 3, 1])
    assert (v1.indices.tolist(), v1.dense_shape.tolist()) == ([[0, 0, 1], [0, 1, 2]], [1, 2, 3])


def test_gather_nd_with_batch_dims_is_built_as_tensorflow_builds_it():
    x = tf.reshape(tf.range(24.), [2, 3, 4])
    n0 = len(tf.get_default_graph().get_operations())
    g = tf.gather_nd(x, [[[0, 1]], [[2, 3]]], batch_dims=1)
    ops = [(o.name, o.type) for o in tf.get_default_graph().get_operations()[n0:]]
    assert ops[7:9] == [("BatchGatherND/Prod/reduction_indices", "Const"),
                        ("BatchGatherND/Prod", "Prod")]
    assert ops[18:24] == [("BatchGatherND/unstack", "Unpack"), ("BatchGatherND/Cast", "Cast"),
                          ("BatchGatherND/Range/start", "Const"),
                          ("BatchGatherND/Range/delta", "Const"),
                          ("BatchGatherND/Range", "Range"), ("BatchGatherND/Cast_1", "Cast")]
    assert ("BatchGatherND/GatherNd", "GatherNd") in ops
    gg = tf.gradients(tf.reduce_sum(g * 3.0), x)[0]
    assert (g.name, g.shape.as_list(), gg.name) == (
        "BatchGatherND/Reshape_3:0", [2, 1], "gradients/BatchGatherND/GatherNd_grad/ScatterNd:0")
    y = tf.reshape(tf.range(48.), [2, 3, 2, 4])
    g2 = tf.gather_nd(y, [[[[1], [0]], [[0], [1]], [[1], [1]]],
                          [[[0], [0]], [[1], [0]], [[0], [1]]]], batch_dims=2)
    p = tf.placeholder(tf.float32, [None, 3, 4])
    i = tf.placeholder(tf.int32, [None, 2, 1])
    g3 = tf.gather_nd(p, i, batch_dims=1)
    assert (g2.name, g2.shape.as_list(), g3.shape.as_list()) == (
        "BatchGatherND_1/Reshape_4:0", [2, 3, 2, 4], [None, 2, 4])
    with tf.Session() as s:
        assert s.run(g).tolist() == [[1.0], [23.0]] and s.run(gg).sum() == 6.0
        assert s.run(g2)[1, 1].tolist() == [[36, 37, 38, 39], [32, 33, 34, 35]]
        assert s.run(g3, {p: np.arange(24.).reshape(2, 3, 4),
                          i: [[[2], [0]], [[1], [1]]]}).tolist() == [
            [[8, 9, 10, 11], [0, 1, 2, 3]], [[16, 17, 18, 19], [16, 17, 18, 19]]]


def test_meshgrid_and_ones_of_a_scalar_shape_as_tensorflow_builds_them():
    a, b = tf.constant([1, 2, 3]), tf.placeholder(tf.int32, [None])
    n0 = len(tf.get_default_graph().get_operations())
    xx, yy = tf.meshgrid(a, b)
    assert [(o.name, o.type) for o in tf.get_default_graph().get_operations()[n0:]] == [
        ("meshgrid/Reshape/shape", "Const"), ("meshgrid/Reshape", "Reshape"),
        ("meshgrid/Reshape_1/shape", "Const"), ("meshgrid/Reshape_1", "Reshape"),
        ("meshgrid/Size", "Const"), ("meshgrid/Size_1", "Size"),
        ("meshgrid/Reshape_2/shape", "Const"), ("meshgrid/Reshape_2", "Reshape"),
        ("meshgrid/Reshape_3/shape", "Const"), ("meshgrid/Reshape_3", "Reshape"),
        ("meshgrid/ones/packed", "Pack"), ("meshgrid/ones/Const", "Const"),
        ("meshgrid/ones", "Fill"), ("meshgrid/mul", "Mul"), ("meshgrid/mul_1", "Mul")]
    n = tf.placeholder(tf.int32, [])
    n0 = len(tf.get_default_graph().get_operations())
    o = tf.ones(n, tf.int32)
    z = tf.zeros(tf.constant(2))
    assert [(t.name, t.type) for t in tf.get_default_graph().get_operations()[n0:]] == [
        ("ones/Reshape/shape", "Const"), ("ones/Reshape", "Reshape"), ("ones/Const", "Const"),
        ("ones", "Fill"), ("Const_1", "Const"), ("zeros/Reshape/shape", "Const"),
        ("zeros/Reshape", "Reshape"), ("zeros/Const", "Const"), ("zeros", "Fill")]
    assert (o.shape.as_list(), z.shape.as_list()) == ([None], [2])
    with tf.Session() as s:
        gx, gy = s.run([xx, yy], {b: [4, 5]})
        assert (gx.tolist(), gy.tolist()) == ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
        assert s.run(o, {n: 3}).tolist() == [1, 1, 1] and s.run(z).tolist() == [0, 0]
