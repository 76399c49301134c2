"""TF1 tree and clustering estimator programs, sweep 15 (area ``trees``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): ``tf.estimator.experimental.KMeans`` over a
``limit_epochs`` input with fixed initial centers, a few full-batch ``train`` calls,
``cluster_centers``/``score``/``predict_cluster_index``/``transform``/``evaluate`` and the
checkpoint's variables; the same estimator in every mode (seeded random and k-means++
initialization, cosine distance, mini-batch with ``mini_batch_steps_per_iteration``,
``relative_tolerance``, bad arguments); the raw k-means ops under a seed sweep; the
``tf.contrib.factorization.KMeans`` graph class inside a variable scope fed through a
placeholder, with ``tf.set_random_seed``; k-MC^2 initialization of the graph class
(run until ``initialized``, squared-Euclidean and cosine); the graph class over two input
shards (random and k-means++ with ``kmeans_plus_plus_num_retries=-1``); ``numpy_input_fn`` and
``pandas_input_fn`` feeding KMeans (dict features, ``feature_columns``, ``steps`` and
``max_steps``, a named ``evaluate``, ``predict_keys``); and ``BoostedTreesClassifier``/
``BoostedTreesRegressor`` over bucketized and indicator columns with center bias,
weights, post-pruning, feature importances and directional feature contributions, and
an in-memory classifier with a label vocabulary exported as a SavedModel.

TensorFlow 2.15 has no boosted-trees estimators (tensorflow_estimator dropped them), so
their tests hold TF 1.x's documented behaviour (metric and prediction keys, training
stopping by itself after ``n_trees``, the binary-only classifier and its errors, ``bias +
sum(dfc)`` being the prediction) rather than oracle values.

Left as is: TensorFlow's mini-batch k-means update reads the per-center counts with no
ordering against their ``scatter_add``, and its k-MC^2 loop reads the centers variable
while assigning it; both race in TF's executor, so repeated TensorFlow runs of the same
program differ (p4's mini-batch loss after 5 steps: 2.7828, 3.0181 or 2.9887; the k-MC^2
program's loss 384.52 or 1376.332). flowgraph is deterministic and gives one of
TensorFlow's outcomes (the one of most runs where there is one); the tests below pin
those. A randomly initialized KMeans without any seed is unseeded in TF too.

Classes of discrepancy found and fixed (one focused test each below):

* ``KmeansPlusPlusInitialization`` and ``KMC2ChainInitialization`` drew from NumPy's
  generator; they now walk TensorFlow's ``PhiloxRandom(seed)`` word by word as its
  ``SimplePhilox`` does (unbiased 64-bit uniform for the first point, float32 draws
  over the float32 cumulative half squared distances, retries keeping the smallest
  potential, no point chosen twice), so k-means++ centers are TensorFlow's exactly; the
  kernel's errors are TF's (``Expected num_to_sample > 0.`` ...).
* k-means++ with no op seed and no graph-level seed quietly used seed 0; TensorFlow
  fails building the graph with a ``ValueError`` (``Tried to convert 'seed' to a
  tensor``).
* The graph class's ``initial_clusters='kmc2'`` raised ``NotImplementedError``; it now
  adds one center per run of the init op as TF's does (the first point, then a k-MC^2
  chain over a slice of ``kmc2_chain_length`` points), and
  ``clustering_ops.kmc2_chain_initialization`` is public.
* ``NearestNeighbors`` and ``KmeansPlusPlusInitialization`` inferred static shapes
  (``(?,)`` cluster indices); TensorFlow leaves them unknown. ``training_graph`` returned
  lists per shard where TensorFlow returns tuples.
* ``Estimator.train`` warned "made no steps" whenever no step completed; TensorFlow warns
  only when the session stops before a first step (input ending at the first step, as a
  second ``train`` over ``limit_epochs`` data, is silent).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import flowgraph as tf
from flowgraph.ops import clustering_ops as co

KMeansEst = tf.compat.v1.estimator.experimental.KMeans


def _limit_fn(pts):
    def input_fn():
        return tf.train.limit_epochs(tf.constant(pts), num_epochs=1)
    return input_fn


# -- p1: KMeans estimator with fixed initial centers -------------------------------------
def test_kmeans_estimator_fixed_centers_program(tmp_path):
    rng = np.random.RandomState(0)
    pts = np.concatenate([rng.randn(20, 2), rng.randn(20, 2) + np.array([6, 6]),
                          rng.randn(20, 2) + np.array([0, 6])]).astype(np.float32)
    inp = _limit_fn(pts)
    md = str(tmp_path)
    km = KMeansEst(num_clusters=3, model_dir=md, use_mini_batch=False,
                   initial_clusters=np.array([[1., 1.], [5., 5.], [1., 5.]], np.float32))
    for _ in range(3):
        km.train(inp)
        np.testing.assert_allclose(km.cluster_centers(), [[0.5268, 0.0983], [5.4555, 5.7973],
                                                          [0.2222, 6.6956]], atol=1e-4)
    assert round(float(km.score(inp)), 3) == 110.033
    idx = list(km.predict_cluster_index(inp))
    assert len(idx) == 60 and idx[:10] == [0] * 10
    tr = next(km.transform(inp))
    assert tr.dtype == np.float32
    np.testing.assert_allclose(tr, [1.2736, 6.5388, 6.4815], atol=1e-4)
    ev = km.evaluate(inp)
    assert sorted((k, round(float(v), 3)) for k, v in ev.items()) == [
        ("global_step", 6.0), ("loss", 110.033), ("score", 110.033)]
    assert tf.train.list_variables(md) == [("clusters", [3, 2]), ("global_step", []),
                                           ("initialized", [])]
    pred = next(km.predict(inp))
    assert sorted(pred) == ["all_distances", "cluster_index"]
    assert pred["cluster_index"].dtype == np.int64
    np.testing.assert_allclose(pred["all_distances"], [1.622, 42.755, 42.01], atol=1e-3)
    assert sorted(f for f in os.listdir(md) if f.startswith("model.ckpt") and
                  f.endswith(".index")) == [f"model.ckpt-{i}.index" for i in (0, 2, 4, 6)]


# -- p2: every mode of the estimator -----------------------------------------------------
def _two_blobs():
    rng = np.random.RandomState(1)
    return np.concatenate([rng.randn(16, 3) + 1, rng.randn(16, 3) - 2]).astype(np.float32)


_MODES = {
    "random": (dict(num_clusters=2, seed=7, use_mini_batch=False),
               [[-2.2981, -1.5115, -2.0756], [0.2528, 2.6925, 1.0508]], 125.229,
               [1] * 16 + [0] * 16),
    "cos": (dict(num_clusters=2, init_rows=(0, 20), distance_metric="cosine",
                 use_mini_batch=False),
            [[0.5165, 0.6454, 0.5628], [-0.6776, -0.4908, -0.5477]], 4.786,
            [0] * 16 + [1] * 16),
    "mini": (dict(num_clusters=2, init_rows=(0, 20), use_mini_batch=True),
             [[1.7907, 0.7391, 0.6588], [-2.4348, -1.2172, -1.5756]], 95.265,
             [0] * 16 + [1] * 16),
    "mini3": (dict(num_clusters=2, init_rows=(0, 20), use_mini_batch=True,
                   mini_batch_steps_per_iteration=3),
              [[2.6243, 0.3882, 0.4718], [-2.7544, -0.7471, -1.4871]], 154.46,
              [0] * 16 + [1] * 16),
    "mini2_cos": (dict(num_clusters=2, init_rows=(0, 20), use_mini_batch=True,
                       mini_batch_steps_per_iteration=2, distance_metric="cosine"),
                  [[0.9739, 0.1441, 0.1751], [-0.8559, -0.2322, -0.4621]], 9.446,
                  [0, 1] + [0] * 14 + [1] * 16),
    "tol": (dict(num_clusters=2, init_rows=(0, 1), use_mini_batch=False,
                 relative_tolerance=0.1),
            [[1.2299, 0.7755, 1.4694], [-1.4247, -0.7925, -1.2587]], 105.268,
            [0, 1] + [0] * 14 + [1] * 16),
}


@pytest.mark.parametrize("mode", sorted(_MODES))
def test_kmeans_estimator_modes(tmp_path, mode):
    kw, centers, score, idx = _MODES[mode]
    pts = _two_blobs()
    kw = dict(kw)
    if "init_rows" in kw:
        kw["initial_clusters"] = pts[list(kw.pop("init_rows"))]
    km = KMeansEst(model_dir=str(tmp_path), **kw)
    inp = _limit_fn(pts)
    km.train(inp, steps=4)
    np.testing.assert_allclose(km.cluster_centers(), centers, atol=1e-4)
    assert round(float(km.score(inp)), 3) == score
    assert [int(i) for i in km.predict_cluster_index(inp)] == idx
    names = [n for n, _ in tf.train.list_variables(str(tmp_path))]
    extra = {"mini": ["Variable"], "mini3": ["Variable", "clusters_updated", "update_in_steps"],
             "mini2_cos": ["Variable", "clusters_updated", "update_in_steps"]}.get(mode, [])
    assert names == sorted(["clusters", "global_step", "initialized", *extra])


def test_kmeans_estimator_bad_arguments():
    with pytest.raises(ValueError, match="Unsupported initialization algorithm 'bogus'"):
        KMeansEst(2, initial_clusters="bogus")
    with pytest.raises(ValueError, match="Unsupported distance metric 'manhattan'"):
        KMeansEst(2, distance_metric="manhattan")


# -- fixed class: k-means++ on TF's Philox stream -----------------------------------------
def test_kmeans_plus_plus_estimator_centers_are_tfs(tmp_path):
    pts = _two_blobs()
    km = KMeansEst(2, model_dir=str(tmp_path / "a"), initial_clusters="kmeans_plus_plus",
                   seed=3, use_mini_batch=False)
    km.train(_limit_fn(pts), steps=4)
    np.testing.assert_allclose(km.cluster_centers(), [[-0.073, 1.8654, -1.3015],
                                                      [-1.8017, -1.881, -2.6707]], atol=1e-4)
    assert round(float(km.score(_limit_fn(pts))), 3) == 188.042
    km = KMeansEst(3, model_dir=str(tmp_path / "b"), initial_clusters="kmeans_plus_plus",
                   seed=11, distance_metric="cosine", use_mini_batch=True)
    km.train(_limit_fn(pts), steps=4)
    np.testing.assert_allclose(km.cluster_centers(), [[-0.5142, -0.6869, -0.5136],
                                                      [0.6627, 0.5876, 0.4643],
                                                      [-0.1186, 0.9823, 0.145]], atol=1e-4)
    assert round(float(km.score(_limit_fn(pts))), 3) == 3.894


def test_kmeans_plus_plus_and_kmc2_ops_follow_tf_streams():
    rng = np.random.RandomState(5)
    pts = rng.randn(50, 4).astype(np.float32)
    x = tf.constant(pts)
    cases = {(0, -1): [8, 9, 30, 6, 49], (0, 0): [29, 37, 0, 38, 20],
             (0, 1): [8, 20, 48, 28, 7], (1, 0): [48, 44, 10, 1, 27],
             (1, 1): [48, 2, 27, 44, 6], (7, 3): [3, 7, 13, 4, 20],
             (123456789012, 0): [8, 11, 14, 34, 13], (123456789012, 3): [8, 48, 15, 20, 47]}
    outs = {key: co.kmeans_plus_plus_initialization(x, 5, key[0], key[1]) for key in cases}
    d = tf.constant(rng.rand(30).astype(np.float32))
    chains = [co.kmc2_chain_initialization(d, s) for s in (0, 3, 99)]
    same = co.kmeans_plus_plus_initialization(np.ones((4, 2), np.float32), 3, 2, 1)
    with tf.Session() as sess:
        for key, want in cases.items():
            got = sess.run(outs[key])
            assert [int(np.where((pts == r).all(1))[0][0]) for r in got] == want, key
        assert [int(i) for i in sess.run(chains)] == [26, 24, 28]
        assert sess.run(same).tolist() == [[1.0, 1.0]] * 3
        for bad, k, msg in ((np.zeros((0, 2), np.float32), 1, r"points.rows\(\) > 0"),
                            (pts, 0, "num_to_sample > 0"),
                            (pts, 60, r"num_to_sample <= points.rows\(\). 60 vs 50")):
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                sess.run(co.kmeans_plus_plus_initialization(bad, k, 0, 0))


def test_kmeans_plus_plus_without_any_seed_is_a_value_error(tmp_path):
    km = KMeansEst(40, model_dir=str(tmp_path), initial_clusters="kmeans_plus_plus",
                   use_mini_batch=False)
    with pytest.raises(ValueError, match="Tried to convert 'seed' to a tensor"):
        km.train(_limit_fn(_two_blobs()), steps=1)
    for init in ("kmc2", "kmeans_plus_plus"):
        with tf.Graph().as_default(), pytest.raises(ValueError, match="Tried to convert 'seed'"):
            co.KMeans(tf.zeros([5, 2]), 2, initial_clusters=init,
                      random_seed=None).training_graph()


# -- p4: the contrib.factorization graph class --------------------------------------------
def _three_blobs():
    rng = np.random.RandomState(3)
    return np.concatenate([rng.randn(30, 2) * 0.5 + [2, 2], rng.randn(30, 2) * 0.5 - [2, 2],
                           rng.randn(30, 2) * 0.5 + [2, -2]]).astype(np.float32)


def test_contrib_factorization_kmeans_graph_program():
    data = _three_blobs()
    tf.set_random_seed(42)
    X = tf.placeholder(tf.float32, shape=[None, 2], name="X")
    with tf.variable_scope("clustering"):
        kmeans = tf.contrib.factorization.KMeans(
            inputs=X, num_clusters=3, initial_clusters="random",
            distance_metric="squared_euclidean", use_mini_batch=False)
        out = kmeans.training_graph()
    _, cluster_idx, scores, init_flag, init_op, train_op = out
    cluster_idx = cluster_idx[0]
    avg_distance = tf.reduce_mean(scores)
    assert (cluster_idx.name, scores[0].name, init_op.name, train_op.name, init_flag.name) == (
        "clustering/Squeeze_1:0", "clustering/Squeeze:0", "clustering/cond/Merge:0",
        "clustering/Assign:0", "clustering/initialized:0")
    assert [v.name for v in tf.global_variables()] == ["clustering/clusters:0",
                                                       "clustering/initialized:0"]
    assert [v.name for v in tf.trainable_variables()] == ["clustering/clusters:0",
                                                          "clustering/initialized:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer(), feed_dict={X: data})
        assert not sess.run(init_flag)
        sess.run(init_op, feed_dict={X: data})
        assert sess.run(init_flag)
        avgs = []
        for _ in range(5):
            _, d, idx = sess.run([train_op, avg_distance, cluster_idx], feed_dict={X: data})
            avgs.append(round(float(d), 4))
        assert avgs == [8.0851, 2.899, 1.8288, 0.519, 0.448]
        assert np.bincount(idx, minlength=3).tolist() == [30, 30, 30]
        np.testing.assert_allclose(sess.run(tf.global_variables()[0]),
                                   [[1.9047, -1.9719], [-2.0907, -1.821], [1.962, 1.8086]],
                                   atol=1e-4)


def test_clustering_shapes_unknown_and_shards_are_tuples():
    a, c = tf.zeros([4, 2]), tf.zeros([3, 2])
    idx, dist = co.nearest_neighbors(a, c, 1)
    assert idx.shape.ndims is None and dist.shape.ndims is None
    assert co.kmeans_plus_plus_initialization(a, 2, 1, 1).shape.ndims is None
    assert co.kmc2_chain_initialization(tf.zeros([4]), 1).shape.as_list() == []
    x = tf.placeholder(tf.float32, [None, 2])
    out = co.KMeans([x, x], 2, initial_clusters=np.zeros((2, 2), np.float32),
                    use_mini_batch=False).training_graph()
    assert type(out) is tuple and [type(o) for o in out[:3]] == [tuple] * 3
    assert all(len(o) == 2 and o[0].shape.ndims is None for o in out[:3])


# -- fixed class: k-MC^2 initialization ----------------------------------------------------
@pytest.mark.parametrize("metric,centers,loss", [
    ("squared_euclidean", [[4.0912, 5.0913, 2.053], [-1.9341, -2.9681, -4.2493],
                           [2.7992, 4.0014, 3.0785]], 384.52),
    ("cosine", [[0.5976, 0.7436, 0.2999], [-0.3496, -0.5365, -0.7681],
                [0.4849, 0.6932, 0.5333]], 20.013),
])
def test_kmc2_initialization_adds_one_center_per_run(metric, centers, loss):
    rng = np.random.RandomState(8)
    data = np.concatenate([rng.randn(40, 3) + 4, rng.randn(40, 3) - 4,
                           rng.randn(40, 3)]).astype(np.float32)
    tf.set_random_seed(1)
    X = tf.placeholder(tf.float32, [None, 3], name="points")
    km = tf.contrib.factorization.KMeans(X, 3, initial_clusters=tf.contrib.factorization
                                         .KMC2_INIT, distance_metric=metric,
                                         random_seed=5, kmc2_chain_length=30)
    _, _, scores, inited, init_op, train_op = km.training_graph()
    assert (init_op.name, train_op.name) == ("cond/Merge:0", "Assign:0")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer(), {X: data})
        runs = [bool(sess.run(init_op, {X: data})) for _ in range(3)]
        assert runs == [False, False, True] and sess.run(inited)
        np.testing.assert_allclose(sess.run(tf.global_variables()[0]), centers, atol=1e-4)
        for _ in range(3):
            sess.run(train_op, {X: data})
        assert round(float(sess.run(tf.reduce_sum(scores[0]), {X: data})), 3) == loss


# -- p6: numpy_input_fn / pandas_input_fn feeding KMeans ----------------------------------
def _xy():
    rng = np.random.RandomState(4)
    x1 = np.concatenate([rng.randn(24) + 3, rng.randn(24) - 3]).astype(np.float32)
    x2 = np.concatenate([rng.randn(24), rng.randn(24) + 4]).astype(np.float32)
    return x1, x2


def test_kmeans_numpy_input_fn_steps_and_max_steps(tmp_path):
    x1, x2 = _xy()
    feats = {"b": x2[:, None], "a": x1[:, None]}
    inp = tf.estimator.inputs.numpy_input_fn(feats, batch_size=16, shuffle=False,
                                             num_epochs=None)
    md = str(tmp_path)
    km = KMeansEst(2, model_dir=md, initial_clusters=np.array([[2., 1.], [-2., 3.]],
                                                              np.float32),
                   use_mini_batch=True, mini_batch_steps_per_iteration=2)
    steps = []
    for kw in (dict(steps=3), dict(max_steps=5), dict(max_steps=4)):
        km.train(inp, **kw)
        steps.append(int(km.get_variable_value("global_step")))
    assert steps == [3, 5, 5]
    np.testing.assert_allclose(km.cluster_centers(), [[2.7165, 0.2912], [-2.6285, 3.7102]],
                               atol=1e-4)
    ev = km.evaluate(inp, steps=2, name="twice")
    assert sorted((k, round(float(v), 3)) for k, v in ev.items()) == [
        ("global_step", 5.0), ("loss", 28.689), ("score", 28.689)]
    assert "eval_twice" in os.listdir(md)
    once = tf.estimator.inputs.numpy_input_fn(feats, batch_size=20, shuffle=False,
                                              num_epochs=1)
    preds = list(km.predict(once, predict_keys=["cluster_index"]))
    assert len(preds) == 48 and sorted(preds[0]) == ["cluster_index"]
    assert round(float(km.score(once)), 3) == 32.484


def test_kmeans_pandas_input_fn_with_feature_columns(tmp_path):
    x1, x2 = _xy()
    df = pd.DataFrame({"x1": x1, "x2": x2})
    pin = tf.estimator.inputs.pandas_input_fn(df, shuffle=False, batch_size=48, num_epochs=1)
    cols = [tf.feature_column.numeric_column("x2"), tf.feature_column.numeric_column("x1")]
    km = KMeansEst(2, model_dir=str(tmp_path), use_mini_batch=False, feature_columns=cols,
                   initial_clusters=np.array([[1., 2.], [3., -2.]], np.float32))
    for _ in range(3):
        km.train(pin)
    np.testing.assert_allclose(km.cluster_centers(), [[-2.838, 3.9469], [2.8998, 0.1937]],
                               atol=1e-4)
    assert int(km.get_variable_value("global_step")) == 6
    np.testing.assert_allclose(next(km.transform(pin)), [7.2003, 0.4186], atol=1e-4)
    assert round(float(km.score(pin)), 3) == 91.695
    with pytest.raises(ValueError, match="does not take labels, but input_fn returns labels"):
        km.train(tf.estimator.inputs.pandas_input_fn(df, y=df.x1, shuffle=False,
                                                     num_epochs=1))


# -- p5/p8: boosted trees (TF 1.x documented behaviour; not in TF 2.15) ------------------
def _bt_data():
    rng = np.random.RandomState(0)
    n = 200
    age = rng.uniform(18, 80, n).astype(np.float32)
    income = rng.uniform(0, 100, n).astype(np.float32)
    sex = rng.choice(["m", "f"], n)
    y = ((age > 40) & (income > 30) | (sex == "f") & (income > 70)).astype(np.int64)
    fc = tf.feature_column
    cols = [fc.bucketized_column(fc.numeric_column("age"), [25, 35, 45, 55, 65]),
            fc.bucketized_column(fc.numeric_column("income"), [20, 40, 60, 80]),
            fc.indicator_column(fc.categorical_column_with_vocabulary_list("sex",
                                                                           ["m", "f"]))]
    return {"age": age, "income": income, "sex": sex}, y, cols


def test_boosted_trees_classifier_program(tmp_path):
    feats, y, cols = _bt_data()
    train_fn = tf.estimator.inputs.numpy_input_fn(feats, y, batch_size=200, shuffle=False,
                                                  num_epochs=None)
    eval_fn = tf.estimator.inputs.numpy_input_fn(feats, y, batch_size=200, shuffle=False,
                                                 num_epochs=1)
    est = tf.estimator.BoostedTreesClassifier(cols, n_batches_per_layer=1,
                                              model_dir=str(tmp_path), n_trees=3,
                                              max_depth=2, learning_rate=0.5,
                                              center_bias=True)
    est.train(train_fn, max_steps=100)        # stops by itself once 3 trees are grown
    ev = est.evaluate(eval_fn)
    assert sorted(ev) == ["accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                          "average_loss", "global_step", "label/mean", "loss", "precision",
                          "prediction/mean", "recall"]
    assert ev["global_step"] < 100 and ev["accuracy"] > 0.85
    assert round(float(ev["label/mean"]), 3) == 0.485
    pred = next(est.predict(eval_fn))
    assert sorted(pred) == ["all_class_ids", "all_classes", "class_ids", "classes",
                            "logistic", "logits", "probabilities"]
    imp = est.experimental_feature_importances(normalize=True)
    assert list(imp) == ["income_bucketized", "age_bucketized", "sex"]
    assert abs(sum(imp.values()) - 1.0) < 1e-6
    exp = next(est.experimental_predict_with_explanations(eval_fn))
    assert sorted(exp) == sorted([*pred, "bias", "dfc"])
    assert round(exp["bias"], 3) == 0.485     # the centered bias is the label mean
    assert abs(exp["bias"] + sum(exp["dfc"].values()) - exp["probabilities"][1]) < 1e-5


def test_boosted_trees_regressor_weights_and_post_pruning(tmp_path):
    rng = np.random.RandomState(2)
    n = 120
    x = rng.uniform(0, 10, n).astype(np.float32)
    z = rng.uniform(0, 1, n).astype(np.float32)
    w = np.where(x > 5, 2.0, 1.0).astype(np.float32)
    y = (np.where(x > 5, 3.0, -1.0) + np.where(z > 0.5, 1.0, 0.0)).astype(np.float32)
    fc = tf.feature_column
    cols = [fc.bucketized_column(fc.numeric_column("x"), [2.5, 5.0, 7.5]),
            fc.bucketized_column(fc.numeric_column("z"), [0.25, 0.5, 0.75])]
    feats = {"x": x, "z": z, "w": w}
    inp = tf.estimator.inputs.numpy_input_fn(feats, y, batch_size=60, shuffle=False,
                                             num_epochs=None)
    ev_in = tf.estimator.inputs.numpy_input_fn(feats, y, batch_size=n, shuffle=False,
                                               num_epochs=1)
    est = tf.estimator.BoostedTreesRegressor(
        cols, n_batches_per_layer=2, n_trees=2, max_depth=2, learning_rate=1.0,
        l2_regularization=0.01, tree_complexity=0.001, pruning_mode="post",
        weight_column="w", model_dir=str(tmp_path))
    est.train(inp, max_steps=50)
    # two trees of two layers, each layer over two batches
    assert int(est.get_variable_value("global_step")) == 8
    ev = est.evaluate(ev_in)
    assert sorted(ev) == ["average_loss", "global_step", "label/mean", "loss",
                          "prediction/mean"]
    assert ev["average_loss"] < 1e-3
    preds = [float(p["predictions"][0]) for p in est.predict(ev_in)]
    np.testing.assert_allclose(preds[:3], [y[0], y[1], y[2]], atol=0.02)
    assert list(est.experimental_feature_importances()) == ["x_bucketized", "z_bucketized"]


def test_boosted_trees_bad_arguments_follow_tf1():
    _, _, cols = _bt_data()
    fc = tf.feature_column
    BT = tf.estimator.BoostedTreesClassifier
    with pytest.raises(ValueError, match="only binary classification is supported"):
        BT(cols, n_batches_per_layer=1, n_classes=3)
    with pytest.raises(ValueError, match="Tree complexity have no effect"):
        BT(cols, n_batches_per_layer=1, tree_complexity=0.1)
    with pytest.raises(ValueError, match="n_batches_per_layer should be set as 1"):
        BT(cols, n_batches_per_layer=2, train_in_memory=True)
    feats, y, _ = _bt_data()
    inp = tf.estimator.inputs.numpy_input_fn(feats, y, batch_size=200, shuffle=False)
    for col in (fc.numeric_column("age"),
                fc.embedding_column(fc.categorical_column_with_vocabulary_list(
                    "sex", ["m", "f"]), 2)):
        with pytest.raises(ValueError, match="bucketized_column and indicator_column"):
            BT([col], n_batches_per_layer=1).train(inp, max_steps=1)


# -- fixed class: the "made no steps" warning ---------------------------------------------
def test_no_steps_warning_only_when_the_session_stops_before_a_step(tmp_path, caplog):
    pts = np.arange(8, dtype=np.float32).reshape(4, 2)

    class Stopper(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            coord.request_stop()

    km = KMeansEst(2, model_dir=str(tmp_path), initial_clusters=pts[:2], use_mini_batch=False)
    with caplog.at_level("WARNING", logger="tensorflow"):
        km.train(_limit_fn(pts))
        km.train(_limit_fn(pts))            # the input ends at the first step: silent
        km.train(lambda: tf.data.Dataset.from_tensor_slices(pts).take(0).batch(2))
        assert not [r for r in caplog.records if "made no steps" in r.getMessage()]
        km.train(_limit_fn(pts), hooks=[Stopper()])
    assert [r.getMessage() for r in caplog.records if "made no steps" in r.getMessage()] == [
        "Training with estimator made no steps. Perhaps input is empty or misspecified."]
    assert int(km.get_variable_value("global_step")) == 5


# -- p11: the graph class over two input shards -------------------------------------------
@pytest.mark.parametrize("init,metric,first,loss,counts", [
    ("random", "squared_euclidean", [-1.264, -1.566, -3.12, -1.111], 140.598,
     [[0, 0, 20], [10, 10, 0]]),
    ("kmeans_plus_plus", "cosine", [0.509, 0.435, 0.537, 0.514], 3.213,
     [[19, 0, 1], [0, 19, 1]]),
    ("random", "cosine", [-0.326, -0.404, -0.805, -0.287], 3.107, [[0, 0, 20], [10, 10, 0]]),
    ("kmeans_plus_plus", "squared_euclidean", [1.539, 1.799, 1.428, 1.397], 142.957,
     [[0, 16, 4], [20, 0, 0]]),
])
def test_kmeans_graph_class_over_two_shards(init, metric, first, loss, counts):
    rng = np.random.RandomState(12)
    a = (rng.randn(20, 4) + 2).astype(np.float32)
    b = (rng.randn(20, 4) - 2).astype(np.float32)
    tf.set_random_seed(3)
    with tf.name_scope("km"):
        km = tf.contrib.factorization.KMeans(
            [tf.constant(a), tf.constant(b)], 3, initial_clusters=init, distance_metric=metric,
            use_mini_batch=False, random_seed=21, kmeans_plus_plus_num_retries=-1)
        _, idx, scores, _, init_op, train_op = km.training_graph()
    assert [t.name for t in idx] == ["km/Squeeze_1:0", "km/Squeeze_3:0"]
    assert (init_op.name, train_op.name) == ("km/cond/Merge:0", "km/Assign:0")
    total = tf.add_n([tf.reduce_sum(s) for s in scores])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op)
        np.testing.assert_allclose(sess.run(tf.global_variables()[0])[0], first, atol=1e-3)
        for _ in range(3):
            sess.run(train_op)
        assert round(float(sess.run(total)), 3) == loss
        assert [np.bincount(i, minlength=3).tolist() for i in sess.run(idx)] == counts


def test_boosted_trees_in_memory_with_label_vocabulary_and_export(tmp_path):
    rng = np.random.RandomState(6)
    n = 100
    x = rng.uniform(-1, 1, n).astype(np.float32)
    c = rng.choice(["a", "b", "c"], n)
    lab = np.where((x > 0) ^ (c == "b"), "yes", "no")
    fc = tf.feature_column
    cols = [fc.bucketized_column(fc.numeric_column("x"), [-0.5, 0.0, 0.5]),
            fc.indicator_column(fc.categorical_column_with_vocabulary_list("c",
                                                                           ["a", "b", "c"]))]

    def input_fn():                           # the tutorials' whole data set as one batch
        return {"x": tf.constant(x), "c": tf.constant(c)}, tf.constant(lab)

    est = tf.estimator.BoostedTreesClassifier(
        cols, n_batches_per_layer=1, model_dir=str(tmp_path / "m"), n_trees=4, max_depth=3,
        learning_rate=0.3, label_vocabulary=["no", "yes"], train_in_memory=True,
        l1_regularization=0.01, min_node_weight=0.01)
    est.train(input_fn, max_steps=100)
    ev = est.evaluate(input_fn, steps=1)
    assert int(ev["global_step"]) == 12       # 4 trees of 3 layers, one batch a layer
    assert ev["accuracy"] == 1.0 and round(float(ev["label/mean"]), 2) == 0.52
    p = next(est.predict(input_fn))
    assert p["classes"].tolist() == [b"no"] and p["class_ids"].tolist() == [0]
    with pytest.raises(ValueError, match="center_bias must be enabled"):
        next(est.experimental_predict_with_explanations(input_fn))

    def serving():
        fs = {"x": tf.placeholder(tf.float32, [None]), "c": tf.placeholder(tf.string, [None])}
        return tf.estimator.export.ServingInputReceiver(fs, fs)

    d = est.export_saved_model(str(tmp_path / "export"), serving)
    assert sorted(os.listdir(d)) == [b"saved_model.pb", b"variables"]
