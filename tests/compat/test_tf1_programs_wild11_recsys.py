"""TF1 recommender and CTR programs, sweep 11 (area ``recsys``), run under TensorFlow 2.15
and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2017-2019 style): a factorization machine fed through
``tf.sparse_placeholder`` (``SparseTensorValue`` and tuple feeds) with
``sparse_tensor_dense_matmul``, FTRL with l1/l2/shrinkage and ``tf.metrics.auc`` with
both curves and every summation method; matrix factorization over a ``tf.SparseTensor``
of ratings with the ``tf.sparse.*`` family (reorder, reduce_sum(_sparse), to_dense,
concat, add, retain, fill_empty_rows, reduce_max, maximum, softmax, slice, split,
reshape, transpose) and the proximal optimizers; wide & deep with hashed, identity,
vocabulary, weighted, bucketized and crossed columns in ``linear_model`` (sqrtn
combiner) and shared/plain embeddings in ``input_layer``, FTRL on the wide part and
Adagrad on the deep part; NeuMF from a CSV (``decode_csv`` with ``select_cols``, a
``CsvDataset`` with a header and ``na_value``) with weighted log loss and metrics; a
YouTube-DNN candidate generator as an Estimator over TFRecords (``VarLenFeature``,
``SparseFeature``, weighted ``embedding_lookup_sparse`` and
``safe_embedding_lookup_sparse``, ``sampled_softmax_loss`` and ``nce_loss`` with
explicit samplers, ``recall_at_k``, export through
``build_parsing_serving_input_receiver_fn``); DeepFM/DCN/xDeepFM (FM terms, cross
layers with ``tensordot``, a CIN with ``conv1d``, ``einsum``, batch norm under a
training placeholder, clipped Adam); a field-aware FM over ``string_split``/hashed string
features with a partitioned table, segment sums and a sharded Saver; a deep interest
network (tiled query attention with a sequence mask, Dice and PReLU, a staircase decay,
global-norm clipping); and a canned
``DNNLinearCombinedClassifier`` (FTRL with l1, ProximalAdagrad, ``sqrtn`` sparse combiner)
exported with ``make_parse_example_spec`` and served from the loaded SavedModel.

Left as is: TensorFlow's shape inference evaluates small constant subgraphs feeding a
shape input (``StringSplit`` of a constant string tensor gives a known ``(4, 3)`` dense
shape); flowgraph folds only its registered constant evaluators, so such shapes stay
``(?, ?)`` (the program above feeds its strings, as real input pipelines do).

Classes of discrepancy found and fixed (one focused test each below):

* Sparse ops named as TensorFlow's Python wrappers build them:
  ``sparse_tensor_dense_matmul`` puts its op inside its scope
  (``SparseTensorDenseMatMul/SparseTensorDenseMatMul``) and takes a sparse right
  operand (the transposed product); ``sparse_concat`` has no scope (helpers at the call
  site, one input returned as is, a constant dense shape when known, the static shape
  otherwise); ``sparse_fill_empty_rows`` names its op inside its scope;
  ``sparse_retain`` has no scope and passes the dense shape through an ``Identity``;
  ``sparse_reorder`` gives a known shape a new constant (else an ``Identity``);
  ``sparse_transpose`` is TensorFlow's transpose-gather-transpose with a constant
  dense shape; ``sparse_merge`` takes a list of id tensors (one per trailing dimension);
  ``sparse_to_indicator`` is a ``sparse_merge`` in its scope ending in a ``SparseToDense``
  named after the scope; ``sparse.segment_*`` with ``num_segments`` build and name the
  ``...WithNumSegments`` op; ``sparse.cross_hashed`` is named ``SparseCross`` as in
  TensorFlow.
* A parsed ``SparseFeature`` is a ``SparseMerge`` built after the parse's scope, so its
  dense shape is a ``concat`` whose known size reaches shape inference
  (``sparse.to_dense`` is ``(?, size)``); the parsed dict lists sparse, then dense keys
  (each sorted), then the SparseFeatures; a sparse component coming out of an iterator
  restores the known sizes of its spec into its dense shape (a constant, or a
  ``stack``), so a model fed by ``tf.data`` sees ``(?, 4)`` too.
* ``tf.data`` kept dict elements in sorted key order; TensorFlow keeps the order the
  program wrote (``features.items()`` walks it). Functions traced by ``map``/``filter``/
  ``flat_map`` opened a ``map_<fn>`` scope and named arguments ``arg0``; TensorFlow's
  function graphs have no scope and name arguments ``args_0``.
* ``safe_embedding_lookup_sparse`` ended in an Identity named after its scope;
  TensorFlow ends in a ``Reshape`` numbered after the reshapes before it
  (``embedding_lookup/Reshape_3`` with weights and ``sum``), the empty-row select being
  the op named after the scope.
* Batch normalization's moving averages (``tf.layers`` non-fused, and Keras with
  ``training=True``) computed the decay as ``1 - float32(momentum)``; TensorFlow
  converts the Python ``1 - momentum`` (``AssignMovingAvg/decay`` is a Const), so the
  moving statistics drift in the last float bits.
* ``tf.metrics.auc`` refused ``num_thresholds < 2`` and worded its argument errors its own
  way; TensorFlow takes any int (two end thresholds, the curve summed over the first
  ``num_thresholds`` points) and raises its own messages.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf


# -- factorization machine ---------------------------------------------------------------
def _fm_data():
    rng = np.random.RandomState(0)
    n, p = 16, 12
    idx, vals = [], []
    for i in range(n):
        for c in sorted(rng.choice(p, 3, replace=False)):
            idx.append([i, c])
            vals.append(float(rng.rand()))
    y = (rng.rand(n, 1) > 0.5).astype(np.float32)
    return np.array(idx, np.int64), np.array(vals, np.float32), y, n, p


def test_factorization_machine_with_sparse_feeds_ftrl_and_auc_variants():
    idx, vals, y, n, p = _fm_data()
    k = 4
    tf.set_random_seed(1)
    x = tf.sparse_placeholder(tf.float32, name="x")
    label = tf.placeholder(tf.float32, [None, 1], name="y")
    assert (x.indices.name, x.values.name, x.dense_shape.name) == (
        "x/indices:0", "x/values:0", "x/shape:0")
    w0 = tf.Variable(tf.zeros([1]), name="w0")
    w = tf.get_variable("w", [p, 1],
                        initializer=tf.truncated_normal_initializer(stddev=0.01, seed=3))
    v = tf.get_variable("v", [p, k], initializer=tf.random_normal_initializer(stddev=0.01,
                                                                              seed=4))
    lin = tf.add(w0, tf.sparse_tensor_dense_matmul(x, w), name="linear")
    xv = tf.sparse_tensor_dense_matmul(x, v)
    x2 = tf.SparseTensor(x.indices, tf.pow(x.values, 2), x.dense_shape)
    x2v2 = tf.sparse_tensor_dense_matmul(x2, tf.pow(v, 2))
    inter = 0.5 * tf.reduce_sum(tf.square(xv) - x2v2, axis=1, keepdims=True)
    logits = tf.add(lin, inter, name="logits")
    assert [t.shape.as_list() for t in (lin, xv, inter, logits)] == [[None, 1], [None, 4],
                                                                     [None, 1], [None, 1]]
    assert xv.name == "SparseTensorDenseMatMul_1/SparseTensorDenseMatMul:0"
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=label,
                                                                  logits=logits))
    total = loss + 0.001 * (tf.nn.l2_loss(w) + tf.nn.l2_loss(v))
    opt = tf.train.FtrlOptimizer(0.5, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                                 l1_regularization_strength=0.01,
                                 l2_regularization_strength=0.02,
                                 l2_shrinkage_regularization_strength=0.03)
    train = opt.minimize(total, global_step=tf.train.get_or_create_global_step())
    assert (train.name, train.type, opt.get_slot_names()) == ("Ftrl", "AssignAdd",
                                                              ["accum", "linear"])
    pred = tf.sigmoid(logits)
    auc, auc_up = tf.metrics.auc(label, pred, num_thresholds=50, name="auc_roc")
    pr, pr_up = tf.metrics.auc(label, pred, curve="PR",
                               summation_method="careful_interpolation", name="auc_pr")
    mi, mi_up = tf.metrics.auc(label, pred, summation_method="minoring", num_thresholds=20)
    ma, ma_up = tf.metrics.auc(label, pred, summation_method="majoring", num_thresholds=20)
    assert [auc.name, auc_up.name, pr.name, mi.name, ma_up.name] == [
        "auc_roc/value:0", "auc_roc/update_op:0", "auc_pr/interpolate_pr_auc:0",
        "auc/value:0", "auc_1/update_op:0"]
    assert len(tf.local_variables()) == 16
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        feed = {x: tf.SparseTensorValue(idx, vals, [n, p]), label: y}
        losses = [s.run([train, total], feed)[1] for _ in range(5)]
        np.testing.assert_allclose(losses, [0.692309, 0.670252, 0.651276, 0.637166,
                                            0.625863], atol=2e-6)
        np.testing.assert_allclose(s.run(w)[:5, 0], [-0.087711, 0.296178, 0.314332,
                                                     0.013313, -0.104367], atol=2e-6)
        np.testing.assert_allclose(s.run(opt.get_slot(w, "accum"))[:4, 0],
                                   [0.101271, 0.11358, 0.115326, 0.100078], atol=2e-6)
        np.testing.assert_allclose(s.run(opt.get_slot(v, "linear"))[0],
                                   [0.000631, -0.000382, 0.000236, 0.000636], atol=2e-6)
        s.run([auc_up, pr_up, mi_up, ma_up], feed)
        np.testing.assert_allclose(s.run([auc, pr, mi, ma]),
                                   [0.896825, 0.90887, 0.777778, 0.952381], atol=2e-6)
        got = s.run(logits, {x: (idx, vals, np.array([n, p])), label: y})
        np.testing.assert_allclose(got[:3, 0], [0.071719, 0.321168, 0.330433], atol=2e-6)


# -- matrix factorization over a SparseTensor of ratings ----------------------------------
def test_matrix_factorization_with_the_sparse_family_and_proximal_optimizers():
    rng = np.random.RandomState(1)
    users, items, k = 6, 5, 3
    ind = np.array([[0, 1], [0, 3], [1, 0], [2, 2], [2, 4], [3, 1], [4, 0], [4, 3], [5, 2],
                    [5, 4]], np.int64)
    r = np.array([4, 3, 5, 2, 1, 4, 3, 5, 2, 4], np.float32)
    perm = rng.permutation(len(r))
    tf.set_random_seed(7)
    ratings = tf.SparseTensor(ind[perm], r[perm], [users, items])
    ro = tf.sparse.reorder(ratings)
    rows_sum = tf.sparse_reduce_sum(ro, axis=1)
    rows_sum_kd = tf.sparse.reduce_sum(ro, axis=1, keepdims=True)
    rs_sp = tf.sparse_reduce_sum_sparse(ro, axis=0)
    cnt = tf.sparse_reduce_sum(tf.SparseTensor(ro.indices, tf.ones_like(ro.values),
                                               ro.dense_shape), 1)
    mean = rows_sum / tf.maximum(cnt, 1.0)
    dense = tf.sparse.to_dense(ro, default_value=-1.0, validate_indices=True)
    extra = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [users, 2])
    cat = tf.sparse_concat(1, [ro, extra])
    cat2 = tf.sparse.concat(axis=1, sp_inputs=[ro, extra], expand_nonconcat_dim=True)
    sadd = tf.sparse_add(ro, tf.SparseTensor([[0, 1], [5, 0]], [1.0, 1.0], [users, items]),
                         threshold=0.5)
    keep = tf.sparse_retain(ro, tf.greater(ro.values, 2.5))
    filled, empty = tf.sparse_fill_empty_rows(keep, -3.0)
    mx = tf.sparse_reduce_max(ro, 1)
    smax = tf.sparse.maximum(ro, tf.SparseTensor(ro.indices, tf.fill(tf.shape(ro.values), 3.0),
                                                 ro.dense_shape))
    ssm = tf.sparse_softmax(ro)
    sl = tf.sparse.slice(ro, [1, 0], [3, 5])
    ssplit = tf.sparse.split(sp_input=ro, num_split=2, axis=0)
    resh = tf.sparse_reshape(ro, [-1, 10])
    tr = tf.sparse_transpose(ro)
    pmat = tf.get_variable("P", [users, k],
                           initializer=tf.random_normal_initializer(0., 0.1, seed=1))
    qmat = tf.get_variable("Q", [items, k],
                           initializer=tf.random_normal_initializer(0., 0.1, seed=2))
    bu = tf.get_variable("bu", [users], initializer=tf.zeros_initializer())
    uid, iid = ro.indices[:, 0], ro.indices[:, 1]
    pred = (tf.reduce_sum(tf.gather(pmat, uid) * tf.gather(qmat, iid), 1) + tf.gather(bu, uid)
            + tf.reduce_mean(ro.values))
    err = (tf.reduce_sum(tf.square(pred - ro.values))
           + 0.01 * tf.add_n([tf.nn.l2_loss(pmat), tf.nn.l2_loss(qmat)]))
    spd = tf.sparse_tensor_dense_matmul(ro, qmat, name="RQ")
    spd_t = tf.sparse.sparse_dense_matmul(ro, pmat, adjoint_a=True)
    assert [(t.name, t.shape.as_list()) for t in (
        ro.values, rows_sum, rows_sum_kd, dense, cat.values, sadd.values, filled.values,
        empty, tr.values, spd, spd_t)] == [
        ("SparseReorder:1", [10]), ("SparseReduceSum:0", [6]), ("SparseReduceSum_1:0", [6, 1]),
        ("SparseToDense:0", [6, 5]), ("SparseConcat:1", [12]), ("SparseAdd:1", [None]),
        ("SparseFillEmptyRows/SparseFillEmptyRows:1", [None]),
        ("SparseFillEmptyRows/SparseFillEmptyRows:2", [6]),
        ("SparseTranspose/SparseReorder:1", [10]), ("RQ/SparseTensorDenseMatMul:0", [6, 3]),
        ("SparseTensorDenseMatMul/SparseTensorDenseMatMul:0", [5, 3])]
    assert rs_sp.values.name == "SparseReduceSumSparse:1"
    assert tr.dense_shape.name == "SparseTranspose/SparseTensor_1/dense_shape:0"
    opt = tf.train.ProximalAdagradOptimizer(0.3, initial_accumulator_value=0.1,
                                            l1_regularization_strength=0.001,
                                            l2_regularization_strength=0.01)
    step = opt.minimize(err, var_list=[pmat, qmat])
    assert (step.type, opt.get_slot_names()) == ("NoOp", ["accumulator"])
    step2 = tf.train.ProximalGradientDescentOptimizer(
        0.05, l1_regularization_strength=0.01).minimize(err, var_list=[bu])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(ro).indices.tolist() == ind.tolist()
        np.testing.assert_array_equal(s.run(rows_sum), [7, 5, 3, 4, 8, 6])
        np.testing.assert_array_equal(s.run(mean), [3.5, 5, 1.5, 4, 4, 3])
        np.testing.assert_array_equal(s.run(rows_sum_kd).ravel(), [7, 5, 3, 4, 8, 6])
        got = s.run(rs_sp)
        assert (got.indices.ravel().tolist(), got.values.tolist()) == ([0, 1, 2, 3, 4],
                                                                       [8, 8, 4, 8, 5])
        np.testing.assert_array_equal(s.run(dense)[0], [-1, 4, -1, 3, -1])
        c = s.run(cat)
        assert c.indices.tolist() == [[0, 1], [0, 3], [0, 5], [1, 0], [1, 6], [2, 2], [2, 4],
                                      [3, 1], [4, 0], [4, 3], [5, 2], [5, 4]]
        assert c.values.tolist() == [4, 3, 1, 5, 2, 2, 1, 4, 3, 5, 2, 4]
        assert c.dense_shape.tolist() == [6, 7] == s.run(cat2).dense_shape.tolist()
        a = s.run(sadd)
        assert a.values.tolist() == [5, 3, 5, 2, 1, 4, 3, 5, 1, 2, 4]
        f, e = s.run([filled, empty])
        assert f.indices.tolist() == [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1], [4, 0], [4, 3],
                                      [5, 4]]
        assert f.values.tolist() == [4, 3, 5, -3, 4, 3, 5, 4]
        assert e.tolist() == [False, False, True, False, False, False]
        assert s.run(mx).tolist() == [4, 5, 2, 4, 5, 4]
        assert s.run(smax).values.tolist() == [4, 3, 5, 3, 3, 4, 3, 5, 3, 4]
        np.testing.assert_allclose(s.run(ssm).values, [0.73106, 0.26894, 1, 0.73106, 0.26894,
                                                       1, 0.1192, 0.8808, 0.1192, 0.8808],
                                   atol=1e-5)
        got = s.run(sl)
        assert (got.indices.tolist(), got.values.tolist()) == (
            [[0, 0], [1, 2], [1, 4], [2, 1]], [5, 2, 1, 4])
        assert [x.indices.tolist() for x in s.run(ssplit)] == [
            [[0, 1], [0, 3], [1, 0], [2, 2], [2, 4]], [[0, 1], [1, 0], [1, 3], [2, 2], [2, 4]]]
        assert s.run(resh).indices.tolist()[:4] == [[0, 1], [0, 3], [0, 5], [1, 2]]
        np.testing.assert_allclose(s.run(spd_t)[0], [-0.45447, 0.23469, 0.35128], atol=1e-5)
        errs = [s.run([step, step2, err])[2] for _ in range(6)]
        np.testing.assert_allclose(errs, [16.04754, 10.69097, 4.82555, 1.21436, 0.19861,
                                          0.08262], atol=1e-4)
        np.testing.assert_allclose(s.run(bu), [0.07764, 0.46119, -0.73725, 0.16187, 0.43105,
                                               -0.22383], atol=1e-4)


# -- wide & deep with feature columns ------------------------------------------------------
def test_wide_and_deep_columns_with_ftrl_on_wide_and_adagrad_on_deep():
    fc = tf.feature_column
    tf.set_random_seed(3)
    features = {
        "user": tf.constant([["u1"], ["u2"], ["u3"], ["u1"]]),
        "item": tf.constant([[3], [7], [1], [9]], tf.int64),
        "age": tf.constant([[23.0], [41.0], [35.0], [67.0]]),
        "tags": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 2]],
                                ["a", "b", "c", "a", "d"], [4, 3]),
        "tagw": tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 2]],
                                [0.5, 2.0, 1.0, 1.5, 0.3], [4, 3]),
        "hist": tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]],
                                tf.constant([4, 2, 9, 1], tf.int64), [4, 2]),
    }
    user = fc.categorical_column_with_hash_bucket("user", 20)
    item = fc.categorical_column_with_identity("item", 10)
    hist = fc.categorical_column_with_identity("hist", 10)
    tags = fc.categorical_column_with_vocabulary_list("tags", ["a", "b", "c", "d"],
                                                      num_oov_buckets=1)
    tagw = fc.weighted_categorical_column(tags, "tagw")
    age = fc.numeric_column("age")
    age_b = fc.bucketized_column(age, [25, 35, 50])
    cross = fc.crossed_column([age_b, "user"], 16)
    cross2 = fc.crossed_column(["user", item], 32, hash_key=None)
    shared = fc.shared_embedding_columns(
        [item, hist], 4, combiner="sqrtn",
        initializer=tf.truncated_normal_initializer(stddev=0.1, seed=11),
        shared_embedding_collection_name="items_shared")
    deep = [
        *shared,
        fc.embedding_column(user, 3, combiner="mean",
                            initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=5)),
        fc.embedding_column(tagw, 2, combiner="sum", initializer=tf.ones_initializer()),
        fc.indicator_column(age_b), age]
    with tf.variable_scope("wide"):
        cols_to_vars = {}
        lin = fc.linear_model(features, [cross, cross2, age_b, tagw], units=1,
                              sparse_combiner="sqrtn", cols_to_vars=cols_to_vars)
    with tf.variable_scope("deep"):
        net = fc.input_layer(features, deep)
    assert (net.name, net.shape.as_list(), lin.name) == (
        "deep/input_layer/concat:0", [4, 18], "wide/linear_model_1/linear_model/weighted_sum:0")
    assert sorted(v.name for v in tf.trainable_variables("wide")) == [
        "wide/linear_model/age_bucketized/weights:0",
        "wide/linear_model/age_bucketized_X_user/weights:0",
        "wide/linear_model/bias_weights:0", "wide/linear_model/item_X_user/weights:0",
        "wide/linear_model/tags_weighted_by_tagw/weights:0"]
    assert sorted((v.name, v.shape.as_list()) for v in tf.trainable_variables("deep")) == [
        ("deep/input_layer/items_shared/embedding_weights:0", [10, 4]),
        ("deep/input_layer/tags_weighted_by_tagw_embedding/embedding_weights:0", [5, 2]),
        ("deep/input_layer/user_embedding/embedding_weights:0", [20, 3])]
    assert sorted(getattr(c, "name", c) for c in cols_to_vars) == [
        "age_bucketized", "age_bucketized_X_user", "bias", "item_X_user",
        "tags_weighted_by_tagw"]
    h = tf.layers.dense(net, 8, tf.nn.relu,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=9))
    logits = lin + tf.layers.dense(h, 1, kernel_initializer=tf.glorot_uniform_initializer(
        seed=10))
    loss = tf.losses.sigmoid_cross_entropy(tf.constant([[1.0], [0.0], [1.0], [0.0]]), logits)
    gs = tf.train.get_or_create_global_step()
    ftrl = tf.train.FtrlOptimizer(0.2, l1_regularization_strength=0.01,
                                  l2_regularization_strength=0.1)
    ada = tf.train.AdagradOptimizer(0.1)
    train = tf.group(
        ftrl.minimize(loss, var_list=tf.trainable_variables("wide"), global_step=gs),
        ada.minimize(loss, var_list=[v for v in tf.trainable_variables()
                                     if not v.name.startswith("wide")]))
    assert (train.type, train.name) == ("NoOp", "group_deps")
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        n0 = s.run(net)
        np.testing.assert_allclose(n0[0, :5], [23, 1, 0, 0, 0])
        np.testing.assert_allclose(n0[0, 5:9], [0.11452, 0.12923, -0.01621, -0.08689],
                                   atol=1e-5)
        np.testing.assert_allclose(n0[:, 13], [2.5, 1.0, 0.0, 1.8], atol=1e-6)
        np.testing.assert_allclose(n0[2, 15:], [0.0067, -0.01371, 0.03037], atol=1e-5)
        np.testing.assert_array_equal(s.run(lin).ravel(), [0, 0, 0, 0])
        losses = [s.run([train, loss])[1] for _ in range(4)]
        np.testing.assert_allclose(losses, [1.925119, 1.145816, 0.519755, 0.464864], atol=3e-6)
        assert s.run(gs) == 4
        np.testing.assert_allclose(s.run(cols_to_vars["bias"]), [[0.01914]], atol=1e-5)


# -- NeuMF from a CSV ----------------------------------------------------------------------
def test_neumf_from_csv_with_select_cols_na_values_and_weighted_metrics(tmp_path):
    path = str(tmp_path / "r.csv")
    rng = np.random.RandomState(2)
    with open(path, "w") as f:
        f.write("user,item,ts,rating,label\n")
        for i in range(20):
            lab = "" if i % 7 == 3 else str(int(rng.rand() > 0.5))
            u, it, r = rng.randint(8), rng.randint(12), rng.rand() * 5
            f.write(f"{u},{it},{1000 + i},{r:.1f},{lab}\n")
    decoded = []

    def parse(line):
        u, it, r, lab = tf.decode_csv(line, record_defaults=[[0], tf.constant([0], tf.int64),
                                                             [0.0], [-1]],
                                      select_cols=[0, 1, 3, 4], name="csv")
        decoded.append((u.name, u.dtype, it.dtype, r.shape.as_list(), lab.op.type))
        return {"user": u, "item": it, "rating": r}, lab

    ds = tf.data.TextLineDataset(path).skip(1).map(parse).shuffle(8, seed=4).repeat(2).batch(
        6, drop_remainder=True)
    assert decoded == [("csv:0", tf.int32, tf.int64, [], "DecodeCSV")]
    shapes = tf.data.get_output_shapes(ds)
    assert list(shapes[0]) == ["user", "item", "rating"]  # the order the program wrote
    assert shapes[0]["user"].as_list() == [6] and shapes[1].as_list() == [6]
    it = tf.data.make_initializable_iterator(ds)
    feat, lab = it.get_next()
    csv2 = tf.data.experimental.CsvDataset(
        path, [tf.int32, tf.constant([0.0], tf.float32), tf.constant([-1], tf.int32)],
        header=True, select_cols=[0, 3, 4], na_value="")
    b2 = tf.data.make_one_shot_iterator(csv2.batch(5)).get_next()
    assert [t.dtype for t in b2] == [tf.int32, tf.float32, tf.int32]
    assert [t.shape.as_list() for t in b2] == [[None]] * 3
    tf.set_random_seed(5)
    nu, ni, k = 8, 12, 4
    init = [tf.random_normal_initializer(stddev=0.01, seed=s) for s in (1, 2, 3, 4)]
    ue_gmf = tf.get_variable("ue_gmf", [nu, k], initializer=init[0])
    ie_gmf = tf.get_variable("ie_gmf", [ni, k], initializer=init[1])
    ue_mlp = tf.get_variable("ue_mlp", [nu, k], initializer=init[2])
    ie_mlp = tf.get_variable("ie_mlp", [ni, k], initializer=init[3])
    gmf = tf.multiply(tf.nn.embedding_lookup(ue_gmf, feat["user"]),
                      tf.nn.embedding_lookup(ie_gmf, feat["item"]))
    mlp = tf.concat([tf.nn.embedding_lookup(ue_mlp, feat["user"]),
                     tf.nn.embedding_lookup(ie_mlp, feat["item"])], -1)
    for i, units in enumerate([8, 4]):
        mlp = tf.layers.dense(mlp, units, activation=tf.nn.relu,
                              kernel_regularizer=tf.keras.regularizers.l2(0.005),
                              kernel_initializer=tf.glorot_normal_initializer(seed=20 + i),
                              name=f"mlp{i}")
    out = tf.layers.dense(tf.concat([gmf, mlp], 1), 1,
                          kernel_initializer=tf.keras.initializers.lecun_uniform(seed=30),
                          name="pred")
    logit = tf.squeeze(out, 1)
    w = tf.cast(tf.not_equal(lab, -1), tf.float32)
    labf = tf.cast(tf.maximum(lab, 0), tf.float32)
    prob = tf.sigmoid(logit)
    loss = (tf.losses.log_loss(labf, prob, weights=w, epsilon=1e-7)
            + tf.losses.get_regularization_loss())
    assert (loss.name, len(tf.losses.get_losses()),
            len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))) == ("add:0", 1, 2)
    train = tf.train.AdamOptimizer(0.05, beta1=0.8, epsilon=1e-6).minimize(loss)
    auc, auc_op = tf.metrics.auc(labf, prob, weights=w, num_thresholds=30)
    acc, acc_op = tf.metrics.accuracy(labf, tf.round(prob), weights=w)
    scores = tf.matmul(ue_gmf, ie_gmf, transpose_b=True)
    _, topi = tf.nn.top_k(scores, k=3, sorted=True)
    hit = tf.nn.in_top_k(scores, tf.constant([1, 2, 3, 4, 5, 6, 7, 8], tf.int32), 3)
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
               it.initializer])
        first = s.run(b2)
        assert first[0].tolist() == [5, 0, 5, 4, 2]
        np.testing.assert_allclose(first[1], [2.7, 1.7, 3.2, 3.4, 3.6], atol=1e-6)
        assert first[2].tolist() == [0, 0, 0, -1, 0]
        losses = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                losses.append(s.run([train, loss, auc_op, acc_op])[1])
        np.testing.assert_allclose(losses, [0.765163, 0.717404, 0.673631, 0.681799, 0.481582,
                                            0.554541], atol=2e-6)
        np.testing.assert_allclose(s.run([auc, acc]), [0.442308, 0.709677], atol=2e-6)
        assert s.run(topi)[:3].tolist() == [[6, 5, 1], [7, 6, 4], [6, 10, 1]]
        assert s.run(hit).tolist() == [True, False, False, False, True, False, False, False]


# -- YouTube-DNN candidate generation as an Estimator --------------------------------------
_N_ITEMS = 30


def _write_watch_records(path):
    rng = np.random.RandomState(3)
    feature = tf.train.Feature
    with tf.python_io.TFRecordWriter(path) as w:
        for _ in range(24):
            n = rng.randint(1, 5)
            ex = tf.train.Example(features=tf.train.Features(feature={
                "watched": feature(int64_list=tf.train.Int64List(
                    value=rng.randint(_N_ITEMS, size=n).tolist())),
                "wt": feature(float_list=tf.train.FloatList(value=rng.rand(n).round(2).tolist())),
                "geo_idx": feature(int64_list=tf.train.Int64List(value=[rng.randint(4)])),
                "geo_val": feature(float_list=tf.train.FloatList(value=[1.0])),
                "age": feature(float_list=tf.train.FloatList(value=[rng.rand()])),
                "label": feature(int64_list=tf.train.Int64List(value=[rng.randint(_N_ITEMS)])),
            }))
            w.write(ex.SerializeToString())


def test_youtube_dnn_estimator_with_sampled_losses_sparse_features_and_export(tmp_path):
    rec = str(tmp_path / "train.tfrecord")
    _write_watch_records(rec)
    spec = {
        "watched": tf.VarLenFeature(tf.int64),
        "wt": tf.io.VarLenFeature(tf.float32),
        "geo": tf.SparseFeature(index_key="geo_idx", value_key="geo_val", dtype=tf.float32,
                                size=4),
        "age": tf.FixedLenFeature([1], tf.float32, default_value=[0.5]),
        "label": tf.FixedLenFeature([], tf.int64),
    }
    seen = []

    def input_fn():
        ds = tf.data.TFRecordDataset(rec).batch(8).map(lambda s: tf.parse_example(s, spec))
        return ds.map(lambda f: (f, f.pop("label")))

    def model_fn(features, labels, mode, params):
        emb = tf.get_variable("item_emb", [_N_ITEMS, params["k"]],
                              initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1))
        hist_mean = tf.nn.embedding_lookup_sparse(emb, features["watched"], None,
                                                  combiner="mean")
        hist_w = tf.nn.embedding_lookup_sparse(emb, features["watched"], features["wt"],
                                               combiner="sqrtn", name="hw")
        safe = tf.nn.safe_embedding_lookup_sparse(emb, features["watched"], features["wt"],
                                                  combiner="sum", default_id=None)
        geo = tf.sparse.to_dense(features["geo"])
        x = tf.concat([hist_mean, hist_w, safe, geo, features["age"]], 1)
        seen.append((x.shape.as_list(), hist_w.name, hist_mean.name, safe.name))
        h = tf.layers.dense(x, params["k"], tf.nn.relu,
                            kernel_initializer=tf.glorot_uniform_initializer(seed=2))
        sw = tf.get_variable("softmax_w", [_N_ITEMS, params["k"]],
                             initializer=tf.truncated_normal_initializer(stddev=0.1, seed=3))
        sb = tf.get_variable("softmax_b", [_N_ITEMS], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, sw, transpose_b=True) + sb
        if mode == tf.estimator.ModeKeys.PREDICT:
            top = tf.nn.top_k(logits, 5)
            return tf.estimator.EstimatorSpec(
                mode, predictions={"top": top.indices, "scores": top.values},
                export_outputs={"rec": tf.estimator.export.PredictOutput({"top": top.indices})})
        lab = tf.reshape(labels, [-1, 1])
        sampled = tf.nn.sampled_softmax_loss(
            sw, sb, lab, h, num_sampled=6, num_classes=_N_ITEMS, num_true=1,
            sampled_values=tf.nn.log_uniform_candidate_sampler(lab, 1, 6, True, _N_ITEMS,
                                                               seed=7),
            remove_accidental_hits=True)
        nce = tf.nn.nce_loss(sw, sb, lab, h, num_sampled=5, num_classes=_N_ITEMS,
                             sampled_values=tf.nn.fixed_unigram_candidate_sampler(
                                 lab, 1, 5, True, _N_ITEMS,
                                 unigrams=list(range(1, _N_ITEMS + 1)), distortion=0.75,
                                 seed=8))
        loss = tf.reduce_mean(sampled) + 0.1 * tf.reduce_mean(nce)
        if mode == tf.estimator.ModeKeys.EVAL:
            full = tf.losses.sparse_softmax_cross_entropy(labels, logits)
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "recall5": tf.metrics.recall_at_k(labels, logits, 5),
                "full": tf.metrics.mean(full)})
        opt = tf.train.ProximalAdagradOptimizer(0.5, l2_regularization_strength=0.001)
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=opt.minimize(loss, tf.train.get_global_step()))

    cfg = tf.estimator.RunConfig(tf_random_seed=11, save_summary_steps=100,
                                 log_step_count_steps=100)
    est = tf.estimator.Estimator(model_fn, str(tmp_path / "m"), cfg, params={"k": 6})
    est.train(input_fn, steps=6)
    ev = est.evaluate(input_fn, steps=2)
    assert ev["global_step"] == 3  # the 24 records make 3 batches
    assert {k: round(float(v), 4) for k, v in ev.items() if k != "global_step"} == {
        "full": 2.9595, "loss": 1.7319, "recall5": 0.6875}
    preds = list(est.predict(input_fn, yield_single_examples=True))
    assert (len(preds), sorted(preds[0]), preds[0]["top"].tolist()) == (
        24, ["scores", "top"], [16, 20, 26, 0, 9])
    assert seen[0] == ([None, 23], "hw:0", "embedding_lookup_sparse:0",
                       "embedding_lookup/Reshape_3:0")
    srv = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        {k: v for k, v in spec.items() if k != "label"}, default_batch_size=None)
    with tf.Graph().as_default():
        r = srv()
        assert (sorted(r.receiver_tensors), r.receiver_tensors["examples"].name,
                sorted(r.features)) == (["examples"], "input_example_tensor:0",
                                        ["age", "geo", "watched", "wt"])
    path = est.export_saved_model(str(tmp_path / "exp"), srv)
    assert sorted(os.listdir(path)) == [b"saved_model.pb", b"variables"] or sorted(
        os.listdir(path)) == ["saved_model.pb", "variables"]


# -- DeepFM / DCN / xDeepFM ----------------------------------------------------------------
def test_deepfm_cross_network_and_cin_with_batch_norm_under_a_training_placeholder():
    fields, vocab, k, batch = 5, 40, 4, 8
    rng = np.random.RandomState(4)
    ids_np = rng.randint(vocab, size=(batch, fields))
    vals_np = rng.rand(batch, fields).astype(np.float32)
    y_np = rng.randint(2, size=(batch, 1)).astype(np.float32)
    tf.set_random_seed(21)
    feat_index = tf.placeholder(tf.int32, [None, fields], name="feat_index")
    feat_value = tf.placeholder(tf.float32, [None, fields], name="feat_value")
    label = tf.placeholder(tf.float32, [None, 1], name="label")
    training = tf.placeholder_with_default(False, [], name="training")
    emb = tf.Variable(tf.random_normal([vocab, k], 0.0, 0.01, seed=1), name="feature_embeddings")
    bias = tf.Variable(tf.random_uniform([vocab, 1], 0.0, 1.0, seed=2), name="feature_bias")
    e = tf.multiply(tf.nn.embedding_lookup(emb, feat_index), tf.reshape(feat_value,
                                                                        [-1, fields, 1]))
    first = tf.reduce_sum(tf.multiply(tf.nn.embedding_lookup(bias, feat_index),
                                      tf.expand_dims(feat_value, 2)), 2)
    second = 0.5 * tf.subtract(tf.square(tf.reduce_sum(e, 1)), tf.reduce_sum(tf.square(e), 1))
    x0 = tf.reshape(e, [-1, fields * k])
    xl, cross_ops = x0, []
    for i in range(2):
        w = tf.get_variable(f"cross_w{i}", [fields * k, 1],
                            initializer=tf.glorot_normal_initializer(seed=10 + i))
        b = tf.get_variable(f"cross_b{i}", [fields * k], initializer=tf.zeros_initializer())
        xlw = tf.tensordot(xl, w, axes=1)
        cross_ops.append((xlw.name, xlw.shape.as_list(), xlw.op.type))
        xl = x0 * xlw + b + xl
    hidden, cin_out, cin_shapes = [e], [], []
    split0 = tf.split(hidden[0], k * [1], 2)
    for i, size in enumerate([3, 2]):
        split_i = tf.split(hidden[-1], k * [1], 2)
        dot = tf.matmul(split0, split_i, transpose_b=True)
        dot = tf.transpose(tf.reshape(dot, [k, -1, fields * hidden[-1].shape[1].value]),
                           [1, 0, 2])
        filt = tf.get_variable(f"cin_f{i}", [1, fields * hidden[-1].shape[1].value, size],
                               initializer=tf.glorot_uniform_initializer(seed=20 + i))
        cur = tf.nn.conv1d(dot, filters=filt, stride=1, padding="VALID")
        cur = tf.nn.bias_add(cur, tf.get_variable(f"cin_b{i}", [size],
                                                  initializer=tf.zeros_initializer()))
        cur = tf.transpose(cur, [0, 2, 1])
        cin_shapes.append((cur.name, cur.shape.as_list()))
        hidden.append(cur)
        cin_out.append(tf.reduce_sum(cur, -1))
    ein = tf.einsum("bfk,bgk->bfg", e, e)
    d = tf.layers.dense(x0, 8, use_bias=False,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=30))
    d = tf.nn.relu(tf.layers.batch_normalization(d, training=training, momentum=0.9))
    d = tf.layers.dropout(d, 0.3, training=training, seed=31)
    cat = tf.concat([first, second, xl, tf.concat(cin_out, 1), d, tf.layers.flatten(ein)],
                    axis=1)
    logit = tf.layers.dense(cat, 1, kernel_initializer=tf.glorot_uniform_initializer(seed=32),
                            name="out")
    loss = tf.losses.log_loss(label, tf.sigmoid(logit),
                              reduction=tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS)
    loss += 0.01 * tf.nn.l2_loss(emb)
    upd = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert (e.name, e.shape.as_list()) == ("Mul:0", [None, 5, 4])
    assert cross_ops == [("Tensordot:0", [None, 1], "Reshape"),
                         ("Tensordot_1:0", [None, 1], "Reshape")]
    assert cin_shapes == [("transpose_1:0", [None, 3, 4]), ("transpose_3:0", [None, 2, 4])]
    assert (ein.name, ein.shape.as_list(), ein.op.type) == ("einsum/Einsum:0", [None, 5, 5],
                                                            "Einsum")
    assert cat.shape.as_list() == [None, 67]
    assert [u.name for u in upd] == ["batch_normalization/cond_2/Merge",
                                     "batch_normalization/cond_3/Merge"]
    with tf.control_dependencies(upd):
        opt = tf.train.AdamOptimizer(0.01)
        gv = [(tf.clip_by_norm(g, 1.0), v) for g, v in opt.compute_gradients(loss)
              if g is not None]
        train = opt.apply_gradients(gv)
    moving_mean = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                    "batch_normalization/moving_mean")[0]
    feed = {feat_index: ids_np, feat_value: vals_np, label: y_np, training: True}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        losses = [s.run([train, loss], feed)[1] for _ in range(5)]
        np.testing.assert_allclose(losses, [0.70569, 0.65117, 0.61332, 0.57768, 0.56431],
                                   atol=1e-5)
        got = s.run(tf.sigmoid(logit), {feat_index: ids_np, feat_value: vals_np})
        np.testing.assert_allclose(got.ravel(), [0.37096, 0.3797, 0.34323, 0.36291, 0.37608,
                                                 0.38116, 0.35068, 0.3805], atol=1e-5)
        np.testing.assert_allclose(s.run(moving_mean), [5.9e-4, 1.2e-4, -2.47e-3, -1.48e-3,
                                                        -1.9e-4, -3e-5, 3.9e-3, -1.1e-4],
                                   atol=1e-5)


# -- field-aware FM over hashed string features ---------------------------------------------
def test_field_aware_fm_over_hashed_strings_with_a_partitioned_table(tmp_path):
    tf.set_random_seed(9)
    lines = tf.placeholder(tf.string, [None], name="lines")
    cols = tf.string_split(lines, "|", skip_empty=False)
    assert (cols.indices.name, cols.values.name, cols.dense_shape.name) == (
        "StringSplit/StringSplit:0", "StringSplit/StringSplit:1", "StringSplit/StringSplit:2")
    dense_cols = tf.sparse.to_dense(cols, default_value="")
    user = dense_cols[:, 0]
    tags = tf.string_split(dense_cols[:, 1], ",")
    item = tf.strings.to_number(dense_cols[:, 2], out_type=tf.int64)
    uh = tf.string_to_hash_bucket_fast(user, 50)
    th = tf.SparseTensor(tags.indices, tf.string_to_hash_bucket_strong(tags.values, 50,
                                                                       key=[1, 2]),
                         tags.dense_shape)
    th2 = tf.strings.to_hash_bucket(tags.values, 50)
    assert (tags.values.name, uh.name, th.values.name, th2.name) == (
        "StringSplit_1/StringSplit:1", "StringToHashBucketFast:0", "StringToHashBucketStrong:0",
        "StringToHashBucket:0")
    ind = tf.sparse.to_indicator(th, 50)
    assert (ind.name, ind.shape.as_list()) == ("SparseToIndicator:0", [None, 50])
    with tf.variable_scope("ffm", partitioner=tf.fixed_size_partitioner(3)):
        v = tf.get_variable("V", [50, 3, 4],
                            initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1))
        w = tf.get_variable("W", [50, 1], initializer=tf.zeros_initializer())
    assert [p.name for p in v] == ["ffm/V/part_0:0", "ffm/V/part_1:0", "ffm/V/part_2:0"]
    eu = tf.nn.embedding_lookup(v, uh, partition_strategy="div")
    et = tf.nn.embedding_lookup_sparse(v, th, None, combiner="sqrtn", partition_strategy="div")
    ei = tf.nn.embedding_lookup(v, item % 50)
    assert (eu.name, et.name, [t.shape.as_list() for t in (eu, et, ei)]) == (
        "embedding_lookup/Reshape_1:0", "embedding_lookup_sparse:0", [[None, 3, 4]] * 3)
    fields = [eu, et, ei]
    inter = [tf.reduce_sum(fields[i][:, j] * fields[j][:, i], 1)
             for i in range(3) for j in range(i + 1, 3)]
    lin = (tf.squeeze(tf.nn.embedding_lookup(w, uh), 1)
           + tf.squeeze(tf.nn.embedding_lookup_sparse(w, th, None, combiner="sum"), 1))
    logit = lin + tf.add_n(inter)
    seg = tf.math.unsorted_segment_sum(tf.ones_like(th.values, tf.float32), th.indices[:, 0], 4)
    table = tf.reshape(tf.range(12, dtype=tf.float32), [6, 2])
    sseg = tf.sparse.segment_sum(table, [0, 1, 2, 3], [0, 0, 2, 2], num_segments=4)
    ssq = tf.sparse.segment_sqrt_n(table, [0, 1, 5], [0, 0, 1])
    assert (seg.name, sseg.name, sseg.shape.as_list(), ssq.name) == (
        "UnsortedSegmentSum:0", "SparseSegmentSumWithNumSegments:0", [4, 2],
        "SparseSegmentSqrtN:0")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.constant([1.0, 0.0, 0.0, 1.0]), logits=logit))
    opt = tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.001, accum_name="acc",
                                 linear_name="lin")
    train = opt.minimize(loss)
    assert sorted(x.name for x in tf.global_variables() if "/acc" in x.name)[:2] == [
        "ffm/V/part_0/acc:0", "ffm/V/part_1/acc:0"]
    saver = tf.train.Saver(sharded=True, max_to_keep=2)
    fd = {lines: ["u1|a,b,c|3", "u2|b|7", "u3||1", "u1|c,d|2"]}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(dense_cols, fd)[2].tolist() == [b"u3", b"", b"1"]
        assert s.run(tags, fd).indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [3, 0],
                                                    [3, 1]]
        assert s.run(uh, fd).tolist() == [9, 47, 11, 9]
        assert s.run(th, fd).values.tolist() == [46, 34, 49, 34, 49, 18]
        assert s.run(th2, fd).tolist() == [18, 20, 47, 20, 47, 39]
        assert np.nonzero(s.run(ind, fd))[1].tolist() == [34, 46, 49, 34, 18, 49]
        assert s.run(seg, fd).tolist() == [3, 1, 0, 2]
        assert s.run(sseg).tolist() == [[2, 4], [0, 0], [10, 12], [0, 0]]
        np.testing.assert_allclose(s.run(ssq), [[1.41421, 2.82843], [10, 11]], atol=1e-5)
        losses = [s.run([train, loss], fd)[1] for _ in range(4)]
        np.testing.assert_allclose(losses, [0.690363, 0.560834, 0.479411, 0.422287], atol=2e-6)
        path = saver.save(s, str(tmp_path / "m"), global_step=3)
    assert os.path.basename(path) == "m-3"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-3.data-00000-of-00001",
                                            "m-3.index", "m-3.meta"]
    assert sorted(n for n, _ in tf.train.list_variables(str(tmp_path))) == [
        "ffm/V", "ffm/V/acc", "ffm/V/lin", "ffm/W", "ffm/W/acc", "ffm/W/lin"]


# -- canned wide & deep exported for serving and loaded back -------------------------------
def _serialized(user, item, price):
    feature = tf.train.Feature
    return tf.train.Example(features=tf.train.Features(feature={
        "user": feature(bytes_list=tf.train.BytesList(value=[user])),
        "item": feature(int64_list=tf.train.Int64List(value=[item])),
        "price": feature(float_list=tf.train.FloatList(value=[price]))})).SerializeToString()


def test_canned_wide_and_deep_with_ftrl_exported_with_a_parse_spec_and_served(tmp_path):
    fc = tf.feature_column
    rng = np.random.RandomState(5)
    n = 32
    data = {"user": np.array([f"u{i}" for i in rng.randint(6, size=n)]),
            "item": rng.randint(10, size=n).astype(np.int64),
            "price": rng.rand(n).astype(np.float32)}
    y = (rng.rand(n) > 0.5).astype(np.int64)
    user = fc.categorical_column_with_hash_bucket("user", 16)
    item = fc.categorical_column_with_identity("item", 10)
    price = fc.numeric_column("price")
    wide = [fc.crossed_column(["user", item], 40), user,
            fc.bucketized_column(price, [0.25, 0.5, 0.75])]
    deep = [fc.embedding_column(user, 3, initializer=tf.truncated_normal_initializer(
                stddev=0.1, seed=1)),
            fc.embedding_column(item, 3, initializer=tf.truncated_normal_initializer(
                stddev=0.1, seed=2)), price]

    def input_fn(shuffle):
        def fn():
            ds = tf.data.Dataset.from_tensor_slices((data, y))
            if shuffle:
                ds = ds.shuffle(32, seed=3).repeat()
            return ds.batch(8)
        return fn

    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "m"), linear_feature_columns=wide, dnn_feature_columns=deep,
        dnn_hidden_units=[4],
        linear_optimizer=tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
        dnn_optimizer=tf.train.ProximalAdagradOptimizer(0.1), linear_sparse_combiner="sqrtn",
        config=tf.estimator.RunConfig(tf_random_seed=4, save_summary_steps=1000,
                                      log_step_count_steps=1000))
    est.train(input_fn(True), steps=8)
    ev = est.evaluate(input_fn(False))
    assert {k: round(float(v), 4) for k, v in ev.items()} == {
        "accuracy": 0.8438, "accuracy_baseline": 0.5312, "auc": 0.9137,
        "auc_precision_recall": 0.9105, "average_loss": 0.566, "global_step": 8.0,
        "label/mean": 0.5312, "loss": 4.5278, "precision": 0.8, "prediction/mean": 0.521,
        "recall": 0.9412}
    assert [v for v in est.get_variable_names() if "Proximal" in v][:2] == [
        "dnn/hiddenlayer_0/bias/ProximalAdagrad", "dnn/hiddenlayer_0/kernel/ProximalAdagrad"]
    spec = fc.make_parse_example_spec(wide + deep)
    assert sorted((k, type(v).__name__) for k, v in spec.items()) == [
        ("item", "VarLenFeature"), ("price", "FixedLenFeature"), ("user", "VarLenFeature")]
    path = est.export_saved_model(
        str(tmp_path / "exp"), tf.estimator.export.build_parsing_serving_input_receiver_fn(spec))
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, [tf.saved_model.tag_constants.SERVING], path)
        assert sorted(meta.signature_def) == ["classification", "predict", "regression",
                                              "serving_default"]
        sig = meta.signature_def["predict"]
        assert {k: v.name for k, v in sig.inputs.items()} == {
            "examples": "input_example_tensor:0"}
        assert sorted(sig.outputs) == ["all_class_ids", "all_classes", "class_ids", "classes",
                                       "logistic", "logits", "probabilities"]
        out = s.run({k: sig.outputs[k].name for k in ["probabilities", "class_ids"]},
                    {sig.inputs["examples"].name: [_serialized(b"u1", 3, 0.2),
                                                   _serialized(b"u4", 7, 0.9)]})
        np.testing.assert_allclose(out["probabilities"], [[0.36186, 0.63814],
                                                          [0.41162, 0.58838]], atol=1e-5)
        assert out["class_ids"].ravel().tolist() == [1, 1]
        cls = meta.signature_def["serving_default"]
        assert (cls.method_name, sorted(cls.outputs)) == ("tensorflow/serving/classify",
                                                          ["classes", "scores"])


# -- deep interest network: attention over the behaviour sequence ---------------------------
def test_deep_interest_network_attention_dice_and_prelu():
    rng = np.random.RandomState(7)
    batch, steps, n_items, dim = 6, 5, 20, 4
    hist_np = rng.randint(n_items, size=(batch, steps))
    len_np = rng.randint(1, steps + 1, size=batch)
    item_np = rng.randint(n_items, size=batch)
    y_np = rng.randint(2, size=batch).astype(np.float32)
    tf.set_random_seed(13)
    hist = tf.placeholder(tf.int32, [None, steps])
    lengths = tf.placeholder(tf.int32, [None])
    item = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.float32, [None])
    emb = tf.get_variable("item_emb", [n_items, dim],
                          initializer=tf.random_normal_initializer(0, 0.1, seed=1))
    q = tf.nn.embedding_lookup(emb, item)
    k = tf.nn.embedding_lookup(emb, hist)

    def dice(x, name):
        with tf.variable_scope(name, reuse=tf.AUTO_REUSE):
            alpha = tf.get_variable("alpha", x.get_shape()[-1],
                                    initializer=tf.constant_initializer(0.0), dtype=tf.float32)
            p = tf.sigmoid(tf.layers.batch_normalization(x, center=False, scale=False,
                                                         training=True, epsilon=1e-9, name="bn"))
            return alpha * (1.0 - p) * x + p * x

    def prelu(x, name):
        with tf.variable_scope(name):
            a = tf.get_variable("a", x.get_shape()[-1],
                                initializer=tf.constant_initializer(0.25))
            return tf.maximum(0.0, x) + a * tf.minimum(0.0, x)

    qs = tf.reshape(tf.tile(q, [1, tf.shape(k)[1]]), tf.shape(k))
    din_all = tf.concat([qs, k, qs - k, qs * k], axis=-1)
    assert (din_all.shape.as_list(), qs.shape.as_list()) == ([None, 5, 16], [None, 5, 4])
    d1 = tf.layers.dense(din_all, 8, activation=tf.nn.sigmoid, name="f1_att",
                         kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    d3 = tf.layers.dense(d1, 1, name="f3_att",
                         kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    scores = tf.transpose(tf.reshape(d3, [-1, 1, steps]), [0, 1, 2])
    mask = tf.expand_dims(tf.sequence_mask(lengths, steps), 1)
    scores = tf.where(mask, scores, tf.ones_like(scores) * (-2 ** 32 + 1))
    scores = tf.nn.softmax(scores / (dim ** 0.5))
    att = tf.squeeze(tf.matmul(scores, k), 1)
    assert (att.name, att.shape.as_list(), mask.shape.as_list(), scores.name) == (
        "Squeeze:0", [None, 4], [None, 1, 5], "Softmax:0")
    x = tf.concat([q, att, q * att], 1)
    h = dice(tf.layers.dense(x, 6, kernel_initializer=tf.glorot_uniform_initializer(seed=4),
                             name="f1"), "dice_1")
    h = prelu(tf.layers.dense(h, 4, kernel_initializer=tf.glorot_uniform_initializer(seed=5),
                              name="f2"), "prelu_2")
    logit = tf.squeeze(tf.layers.dense(h, 1, name="f3",
                                       kernel_initializer=tf.glorot_uniform_initializer(seed=6)),
                       1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=logit, labels=y))
    gs = tf.Variable(0, trainable=False, name="global_step")
    lr = tf.train.exponential_decay(0.1, gs, 2, 0.9, staircase=True)
    grads = tf.gradients(loss, tf.trainable_variables())
    clipped, norm = tf.clip_by_global_norm(grads, 5)
    train = tf.train.GradientDescentOptimizer(lr).apply_gradients(
        zip(clipped, tf.trainable_variables()), global_step=gs)
    assert [v.name for v in tf.global_variables()][6:10] == [
        "f1/bias:0", "dice_1/alpha:0", "dice_1/bn/moving_mean:0", "dice_1/bn/moving_variance:0"]
    feed = {hist: hist_np, lengths: len_np, item: item_np, y: y_np}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = [s.run([train, loss, norm], feed)[1:] for _ in range(4)]
        np.testing.assert_allclose(got, [[0.684845, 0.490937], [0.664488, 0.405059],
                                         [0.647879, 0.44], [0.631315, 0.3926]], atol=2e-6)
        np.testing.assert_allclose(s.run(lr), 0.081, rtol=1e-6)
        np.testing.assert_allclose(s.run(scores, feed)[0, 0], [0.50285, 0.49715, 0, 0, 0],
                                   atol=1e-5)


# -- focused regressions -------------------------------------------------------------------
def test_sparse_wrappers_name_and_shape_their_results_as_tensorflow():
    a = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    b = tf.SparseTensor([[0, 0]], [1.0], [2, 3])
    t = tf.sparse_transpose(b)
    assert (t.dense_shape.name, t.indices.name) == (
        "SparseTranspose/SparseTensor_1/dense_shape:0", "SparseTranspose/SparseReorder:0")
    with tf.name_scope("sc"):
        t = tf.sparse.transpose(b, [1, 0])
    assert t.dense_shape.name == "sc/SparseTranspose/SparseTensor_1/dense_shape:0"
    c = tf.sparse.concat(1, [a, b], name="cc")
    assert (c.indices.name, c.dense_shape.name, c.shape.as_list()) == ("cc:0", "Const:0",
                                                                       [2, 5])
    c = tf.sparse.concat(-1, [a, b], expand_nonconcat_dim=True)
    assert (c.indices.name, c.dense_shape.name, c.shape.as_list(),
            c.indices.op.get_attr("concat_dim")) == ("SparseConcat:0", "Const_1:0", [2, 5], -1)
    p = tf.sparse_placeholder(tf.float32, [None, 3])
    c2 = tf.sparse.concat(0, [b, p])
    assert (c2.indices.name, c2.dense_shape.name, c2.shape.as_list()) == (
        "SparseConcat_1:0", "SparseConcat_1:2", [None, 3])
    assert tf.sparse.concat(0, [a]) is a
    f, e = tf.sparse.fill_empty_rows(a, 0.0, name="fe")
    assert (f.values.name, e.name, f.dense_shape.name) == (
        "fe/SparseFillEmptyRows:1", "fe/SparseFillEmptyRows:2", "SparseTensor/dense_shape:0")
    g = tf.get_default_graph()
    sp = tf.SparseTensor(tf.constant([[0, 0], [1, 1]], tf.int64), tf.constant([1.0, 2.0]),
                         tf.constant([2, 3], tf.int64))
    n = len(g.get_operations())
    r = tf.sparse_retain(sp, [True, False])
    assert [o.type for o in g.get_operations()[n:]] == [
        "Const", "Where", "Const", "Reshape", "Const", "GatherV2", "Const", "GatherV2",
        "Identity"]
    assert r.dense_shape.name == "Identity:0"
    dense = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    right = tf.SparseTensor([[0, 1], [2, 0]], [2.0, 3.0], [3, 2])
    prod = tf.sparse.sparse_dense_matmul(dense, right)
    prod2 = tf.sparse_tensor_dense_matmul(tf.transpose(dense), right, adjoint_a=True)
    assert (prod.name, prod.shape.as_list(), prod2.name) == ("transpose:0", [2, 2],
                                                             "transpose_2:0")
    strs = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["x", "y", "z"], [2, 2])
    ids = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([3, 4], tf.int64), [2, 1])
    crosses = [tf.sparse.cross([strs, tf.constant([["p"], ["q"]])]),
               tf.sparse.cross_hashed([strs, ids], num_buckets=100, hash_key=7),
               tf.sparse.cross_hashed([strs, ids], num_buckets=0)]
    assert [(x.values.name, x.values.op.type) for x in crosses] == [
        ("SparseCrossV2:1", "SparseCrossV2"), ("SparseCross:1", "SparseCross"),
        ("SparseCross_1:1", "SparseCross")]
    with tf.Session() as s:
        assert s.run(c).dense_shape.tolist() == [2, 5]
        assert s.run(crosses[0]).values.tolist() == [b"x_X_p", b"y_X_q", b"z_X_q"]
        assert s.run(prod).tolist() == [[6.0, 0.0], [15.0, 6.0]] == s.run(prod2).tolist()


def test_sparse_merge_takes_one_id_tensor_per_trailing_dimension():
    m = tf.sparse_merge(
        tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 1, 2], tf.int64), [2, 2]),
        tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 1.5, 2.5], [2, 2]), 5)
    assert (m.indices.name, m.dense_shape.name, m.shape.as_list()) == (
        "SparseMerge/SparseReorder:0", "SparseMerge/concat_1:0", [2, 5])
    m2 = tf.sparse_merge([tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [1, 1]),
                          tf.SparseTensor([[0, 0]], tf.constant([2], tf.int64), [1, 1])],
                         tf.SparseTensor([[0, 0]], [7.0], [1, 1]), [3, 4])
    assert m2.shape.as_list() == [1, 3, 4]
    with tf.Session() as s:
        got = s.run(m)
        assert (got.indices.tolist(), got.values.tolist()) == ([[0, 1], [0, 3], [1, 2]],
                                                               [1.5, 0.5, 2.5])
        got = s.run(m2)
        assert (got.indices.tolist(), got.dense_shape.tolist()) == ([[0, 1, 2]], [1, 3, 4])
    with pytest.raises(TypeError):
        tf.sparse_merge(tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1]),
                        tf.SparseTensor([[0, 0]], [7.0], [1, 1]), [3, 4])


def test_parsed_sparse_features_keep_their_known_size_through_datasets():
    spec = {"watched": tf.VarLenFeature(tf.int64),
            "geo": tf.SparseFeature(index_key="geo_idx", value_key="geo_val",
                                    dtype=tf.float32, size=4),
            "geo2": tf.SparseFeature(index_key=["gi", "gj"], value_key="geo_val",
                                     dtype=tf.float32, size=[4, 3]),
            "age": tf.FixedLenFeature([1], tf.float32, default_value=[0.5])}
    s = tf.placeholder(tf.string, [None])
    f = tf.parse_example(s, spec)
    assert [(f[k].shape.as_list(), f[k].values.name, f[k].dense_shape.name)
            for k in ("geo", "geo2")] == [
        ([None, 4], "SparseMerge/SparseReorder:1", "SparseMerge/concat_1:0"),
        ([None, 4, 3], "SparseMerge_1/SparseReorder:1", "SparseMerge_1/concat_1:0")]
    assert f["watched"].dense_shape.name == "ParseExample/ParseExampleV2:14"
    assert tf.sparse.to_dense(f["geo"]).shape.as_list() == [None, 4]
    assert list(tf.parse_example(s, {
        "z": tf.FixedLenFeature([1], tf.float32), "b": tf.VarLenFeature(tf.int64),
        "a": tf.VarLenFeature(tf.int64), "y": tf.FixedLenFeature([1], tf.float32),
        "c": tf.SparseFeature("ci", "cv", tf.float32, 3)})) == ["a", "b", "y", "z", "c"]
    one = tf.parse_single_example(s[0], spec)
    assert (one["geo"].shape.as_list(), one["geo"].dense_shape.name) == (
        [4], "ParseSingleExample/SparseMerge/concat_1:0")
    ds = tf.data.Dataset.from_tensors(tf.constant([""], tf.string)).map(
        lambda x: tf.parse_example(x, {"geo": spec["geo"], "w": spec["watched"],
                                       "a": tf.FixedLenFeature([2], tf.float32)}))
    got = tf.data.make_one_shot_iterator(ds).get_next()
    assert list(got) == ["w", "a", "geo"]  # sparse, dense, then SparseFeatures
    assert (got["geo"].shape.as_list(), got["geo"].dense_shape.name) == ([None, 4], "stack:0")
    assert tf.sparse.to_dense(got["geo"]).shape.as_list() == [None, 4]
    assert got["w"].shape.as_list() == [None, None]
    sp = tf.sparse_placeholder(tf.float32, [None, 4])
    assert (sp.shape.as_list(), tf.sparse.to_dense(sp).shape.as_list()) == ([None, 4],
                                                                           [None, None])


def test_dataset_dicts_keep_the_written_key_order_and_functions_have_no_scope():
    ds = tf.data.Dataset.from_tensors({"b": 1, "a": 2.0})
    assert list(tf.data.get_output_types(ds)) == ["b", "a"]
    ds2 = tf.data.Dataset.range(3).map(lambda x: {"z": x, "y": x + 1})
    assert list(tf.data.get_output_types(ds2)) == ["z", "y"]
    assert list(tf.data.get_output_types(ds2.batch(2).shuffle(2).repeat())) == ["z", "y"]
    nxt = tf.data.make_one_shot_iterator(ds2).get_next()
    assert [(k, t.name) for k, t in nxt.items()] == [("z", "IteratorGetNext:1"),
                                                     ("y", "IteratorGetNext:0")]
    names = []

    def f(x, y):
        names.append((x.name, y.dense_shape.shape.as_list()))
        with tf.name_scope("inner"):
            z = tf.identity(x)
        names.append(z.name)
        c = tf.constant(1, tf.int32, name="cc")
        names.append((x + c).name)
        return z

    mapped = tf.data.Dataset.from_tensors((1, tf.SparseTensor([[0]], [1.0], [2]))).map(f)
    mapped.filter(lambda z: tf.greater(z, 0, name="gt"))
    mapped.flat_map(lambda z: (names.append(z.name), tf.data.Dataset.from_tensors(z))[1])
    assert names == [("args_0:0", [1]), "inner/Identity:0", "add:0",
                     "args_0:0"]
    with tf.Session() as s:
        assert s.run(tf.data.make_one_shot_iterator(mapped).get_next()) == 1


def test_safe_embedding_lookup_sparse_ends_in_tensorflows_reshape():
    emb = tf.get_variable("e", [10, 3], initializer=tf.constant_initializer(
        np.arange(30, dtype=np.float32).reshape(10, 3)))
    ids = tf.SparseTensor(tf.constant([[0, 0], [1, 1]], tf.int64), tf.constant([1, 4], tf.int64),
                          tf.constant([3, 3], tf.int64))
    w = tf.SparseTensor(tf.constant([[0, 0], [1, 1]], tf.int64), tf.constant([1.0, 2.0]),
                        tf.constant([3, 3], tf.int64))
    cases = [dict(sparse_weights=w, combiner="sum"), dict(combiner="mean"),
             dict(sparse_weights=w, combiner="mean"), dict(combiner="sqrtn", default_id=2),
             dict(sparse_weights=w, default_id=1)]
    outs = [tf.nn.safe_embedding_lookup_sparse(emb, ids, **kw) for kw in cases]
    assert [(o.name, o.op.type, o.shape.as_list()) for o in outs] == [
        ("embedding_lookup/Reshape_3:0", "Reshape", [3, 3]),
        ("embedding_lookup_1/Reshape_2:0", "Reshape", [3, 3]),
        ("embedding_lookup_2/Reshape_5:0", "Reshape", [3, 3]),
        ("embedding_lookup_3/Reshape_1:0", "Reshape", [3, 3]),
        ("embedding_lookup_4/Reshape_5:0", "Reshape", [3, 3])]
    assert tf.get_default_graph().get_operation_by_name("embedding_lookup_1") is not None
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = s.run(outs)
    np.testing.assert_allclose(got[0], [[3, 4, 5], [24, 26, 28], [0, 0, 0]])
    np.testing.assert_allclose(got[1], [[3, 4, 5], [12, 13, 14], [0, 0, 0]])
    np.testing.assert_allclose(got[3], [[3, 4, 5], [12, 13, 14], [6, 7, 8]])
    np.testing.assert_allclose(got[4], [[3, 4, 5], [12, 13, 14], [3, 4, 5]])


def test_batch_norm_moving_average_decay_is_tensorflows_python_constant():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    training = tf.placeholder_with_default(False, [])
    tf.layers.batch_normalization(x, training=training, momentum=0.9)
    tf.layers.batch_normalization(x, training=True, momentum=0.7, fused=False)
    keras_bn = tf.keras.layers.BatchNormalization(momentum=0.9)
    keras_bn(x, training=True)
    graph = tf.get_default_graph()
    assert [(o.name, o.type) for o in graph.get_operations() if o.name.endswith("/decay")] == [
        ("batch_normalization/cond_2/AssignMovingAvg/decay", "Const"),
        ("batch_normalization/cond_3/AssignMovingAvg/decay", "Const"),
        ("batch_normalization_1/AssignMovingAvg/decay", "Const"),
        ("batch_normalization_1/AssignMovingAvg_1/decay", "Const"),
        ("batch_normalization_2/AssignMovingAvg/decay", "Const"),
        ("batch_normalization_2/AssignMovingAvg_1/decay", "Const")]
    means = [v for v in tf.global_variables() if "moving_mean" in v.name]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS) + list(keras_bn.updates)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(updates, {training: True})
        s.run(updates, {training: True})
        got = s.run(means)
    # float32 bit patterns as TensorFlow's: 1 - 0.9 is converted once, in Python
    assert [m.tolist() for m in got] == [
        [np.float32(0.8550000190734863), np.float32(1.0449999570846558),
         np.float32(1.2350000143051147)],
        [np.float32(2.2950000762939453), np.float32(2.805000066757202),
         np.float32(3.315000057220459)],
        [np.float32(0.8550000190734863), np.float32(1.0449999570846558),
         np.float32(1.2350000143051147)]]


def test_auc_argument_checks_and_tiny_threshold_counts_follow_tensorflow():
    lab, pred = tf.constant([1, 0, 1]), tf.constant([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"^Curve must be either ROC or PR\. Curve XY is "):
        tf.metrics.auc(lab, pred, curve="XY")
    with pytest.raises(ValueError, match=r"^Invalid summation_method: simpson summation_method "
                                         r"should be 'trapezoidal', 'careful_interpolation'"):
        tf.metrics.auc(lab, pred, summation_method="simpson")
    # TensorFlow takes any int: two end thresholds, summed over the first num_thresholds
    updates = [tf.metrics.auc(lab, pred, num_thresholds=n)[1] for n in (1, 0, -3)]
    assert tf.local_variables()[-1].shape.as_list() == [2]
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        np.testing.assert_allclose(s.run(updates), [0.0, 0.49999976, 0.0], rtol=1e-6)
