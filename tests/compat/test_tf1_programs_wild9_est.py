"""TF1 Estimator, feature column and tf.metrics programs "from the wild" (sweep 9), run
unchanged under ``import flowgraph as tf``.

The programs: canned DNN / Linear / DNNLinearCombined / Baseline classifiers and
regressors with ``weight_column``, ``label_vocabulary``, ``n_classes=3``, optimizers by
name and as callables, ``loss_reduction``, ``batch_norm`` and dropout; warm starts from a
path and from `WarmStartSettings` with regexes and `VocabInfo`; `train_and_evaluate` with
Best/Latest/Final exporters; `export_saved_model` with every kind of serving receiver;
RunConfig options; early-stopping and in-memory evaluator hooks; `predict` with
``predict_keys`` and ``yield_single_examples=False``; custom model_fns with scaffolds,
per-mode hooks and export outputs; heads; feature columns (shared embeddings, crossed,
bucketized, weighted, multi-valent indicators, vocabulary files, `linear_model`
combiners); and the tf.metrics corner cases. Every expected value below is what
TensorFlow 2.15 (`tensorflow.compat.v1`, the tf-oracle) printed for the same program.

Classes of discrepancy found and fixed: an unshuffled ``numpy_input_fn`` drew an op seed
(TF's FIFO queue draws none), so every seeded canned model started from other weights
than TF's; ``predict_keys`` naming some unknown keys raised (TF skips them); `VocabInfo`
remapping refused a partitioned variable (every canned DNN embedding is one) and a
checkpoint holding old OOV rows; serving signatures of a receiver alternative that does
not feed the model were exported (TF leaves them out); `MultiHead` trained heads with
different loss reductions; the output names of the top-k metrics and of the
careful-interpolation PR AUC; a Baseline model whose only feature is its weight.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

fc = tf.feature_column


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _r(values, n=4):
    return np.round(np.asarray(values, dtype=np.float64), n).tolist()


# -- seeded canned models start from TensorFlow's initial values ------------------------------
def test_seeded_dnn_classifier_with_every_option_matches_tensorflow(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.rand(12, 3).astype(np.float32)
    y = np.array(["cat", "dog", "bird"] * 4)
    w = np.linspace(0.5, 2.0, 12).astype(np.float32)
    est = tf.estimator.DNNClassifier(
        [4, 3], [fc.numeric_column("x", shape=[3])], n_classes=3,
        label_vocabulary=["bird", "cat", "dog"], weight_column="w", optimizer="Adagrad",
        loss_reduction=tf.losses.Reduction.SUM, batch_norm=True, dropout=0.1,
        model_dir=str(tmp_path), config=tf.estimator.RunConfig(tf_random_seed=1))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x, "w": w}, y, batch_size=4,
                                                 num_epochs=None, shuffle=False), steps=5)
    ev = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": x, "w": w}, y, batch_size=4,
                                                         num_epochs=1, shuffle=False))
    assert {k: round(float(v), 4) for k, v in ev.items()} == {
        "accuracy": 0.297, "average_loss": 1.1305, "global_step": 5, "loss": 5.6523}
    assert _r(est.get_variable_value("dnn/logits/bias")) == [-0.0625, 0.029, 0.0005]
    assert _r(est.get_variable_value("dnn/hiddenlayer_0/batchnorm_0/moving_mean")) == [
        0.0009, 0.0005, 0.0002, 0.0031]
    p = next(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=4,
                                                            shuffle=False)))
    assert {k: (np.asarray(v).dtype.name, np.asarray(v).shape) for k, v in p.items()} == {
        "all_class_ids": ("int32", (3,)), "all_classes": ("object", (3,)),
        "class_ids": ("int64", (1,)), "classes": ("object", (1,)),
        "logits": ("float32", (3,)), "probabilities": ("float32", (3,))}
    assert p["classes"].tolist() == [b"cat"] and p["class_ids"].tolist() == [1]
    assert _r(p["logits"]) == [-0.1617, 0.0936, 0.0747]


# -- predict_keys --------------------------------------------------------------------------
def test_predict_keys_skip_unknown_names_and_report_none_found(tmp_path):
    def model_fn(features, labels, mode):
        v = tf.get_variable("v", [], initializer=tf.ones_initializer())
        x = features["x"] * v
        return tf.estimator.EstimatorSpec(
            mode, predictions={"y": x, "z": x * 2, "w": x + 1}, loss=tf.reduce_sum(x),
            train_op=tf.assign_add(tf.train.get_global_step(), 1))

    est = tf.estimator.Estimator(model_fn, str(tmp_path))
    inp = tf.estimator.inputs.numpy_input_fn({"x": np.arange(3, dtype=np.float32)},
                                             batch_size=3, shuffle=False)
    assert next(est.predict(inp, predict_keys=["z", "nope"])) == {"z": 0.0}
    assert sorted(next(est.predict(inp, predict_keys=[]))) == ["w", "y", "z"]
    assert next(est.predict(inp, predict_keys="y")) == {"y": 0.0}
    for keys, shown in ((["nope"], "['nope']"), ("nope", "nope"), (("a", "b"), "('a', 'b')")):
        with pytest.raises(ValueError) as info:
            next(est.predict(inp, predict_keys=keys))
        assert str(info.value) == ("Expected to run at least one output from "
                                   f"dict_keys(['y', 'z', 'w']), provided {shown}.")


# -- warm starting a canned model's embedding with a new vocabulary --------------------------
def test_warm_start_remaps_a_canned_dnn_embedding_to_a_new_vocabulary(tmp_path):
    old_vocab, new_vocab = str(tmp_path / "old.txt"), str(tmp_path / "new.txt")
    (tmp_path / "old.txt").write_text("a\nb\nc\n")
    (tmp_path / "new.txt").write_text("c\nx\na\nb\n")
    x = np.linspace(0, 1, 8).reshape(4, 2).astype(np.float32)
    inp = tf.estimator.inputs.numpy_input_fn({"x": x, "c": np.array(["a", "b", "c", "q"])},
                                             np.array([0, 1, 1, 0]), batch_size=4,
                                             num_epochs=None, shuffle=False)

    def columns(vocab, size):
        cat = fc.categorical_column_with_vocabulary_file("c", vocab, vocabulary_size=size,
                                                         num_oov_buckets=1)
        return [fc.numeric_column("x", shape=[2]),
                fc.embedding_column(cat, 2, initializer=tf.truncated_normal_initializer(seed=1))]

    first = tf.estimator.DNNClassifier([3], columns(old_vocab, 3), model_dir=str(tmp_path / "a"),
                                       config=tf.estimator.RunConfig(tf_random_seed=5))
    first.train(inp, steps=3)
    emb = "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights"
    vocab_info = tf.estimator.VocabInfo(new_vocab=new_vocab, new_vocab_size=4, num_oov_buckets=1,
                                        old_vocab=old_vocab, old_vocab_size=3)
    settings = tf.estimator.WarmStartSettings(
        ckpt_to_initialize_from=str(tmp_path / "a"),
        vars_to_warm_start=[".*embedding.*", ".*hiddenlayer.*"],
        var_name_to_vocab_info={emb: vocab_info})
    second = tf.estimator.DNNClassifier(
        [3], columns(new_vocab, 4), model_dir=str(tmp_path / "b"), warm_start_from=settings,
        optimizer=tf.train.GradientDescentOptimizer(0.0),
        config=tf.estimator.RunConfig(tf_random_seed=6))
    second.train(inp, steps=1)
    # TF 2.15: rows for c, x (new: zeros), a, b, then the OOV bucket (zeros)
    assert _r(second.get_variable_value(emb)) == [[-0.1062, -0.1307], [0.0, 0.0],
                                                 [-1.4134, -0.0182], [-0.121, 1.1554],
                                                 [0.0, 0.0]]
    np.testing.assert_array_equal(second.get_variable_value("dnn/hiddenlayer_0/kernel"),
                                  first.get_variable_value("dnn/hiddenlayer_0/kernel"))
    assert _r(second.get_variable_value("dnn/logits/bias")) == [0.0]


# -- serving signatures of receiver alternatives --------------------------------------------
def test_receiver_alternatives_that_do_not_feed_the_model_are_left_out(tmp_path):
    x = np.linspace(0, 1, 12).reshape(6, 2).astype(np.float32)
    est = tf.estimator.LinearClassifier([fc.numeric_column("x", shape=[2])], n_classes=3,
                                        model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, np.array([0, 1, 2, 0, 1, 2]),
                                                 batch_size=6, num_epochs=None,
                                                 shuffle=False), steps=2)

    def receiver():
        serialized = tf.placeholder(tf.string, [None], name="examples")
        feats = tf.parse_example(serialized, {"x": tf.FixedLenFeature([2], tf.float32)})
        raw = tf.placeholder(tf.float32, [None, 2], name="raw_x")
        return tf.estimator.export.ServingInputReceiver(
            feats, {"examples": serialized}, receiver_tensors_alternatives={
                "parsed": {"x": feats["x"]}, "raw": raw, "both": {"a": serialized, "b": raw}})

    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        # TF 2.15: the "raw" alternative computes nothing the model uses, so it is dropped
        assert sorted(meta.signature_def) == ["both:predict", "classification",
                                              "parsed:predict", "predict", "serving_default"]
        sig = meta.signature_def["parsed:predict"]
        assert sig.inputs["x"].name == "ParseExample/ParseExampleV2:0"
        got = sess.run(sig.outputs["probabilities"].name, {sig.inputs["x"].name: x[:2]})
        assert _r(got) == [[0.3714, 0.3355, 0.293], [0.3447, 0.338, 0.3174]]


# -- MultiHead ---------------------------------------------------------------------------------
def test_multi_head_training_needs_one_loss_reduction(tmp_path):
    heads = tf.estimator.MultiHead([
        tf.estimator.MultiClassHead(3, label_vocabulary=["a", "b", "c"], name="cls"),
        tf.estimator.RegressionHead(name="reg", loss_reduction="sum")])

    def model_fn(features, labels, mode):
        net = tf.layers.dense(features["x"], 4)
        logits = {"cls": tf.layers.dense(net, 3), "reg": tf.layers.dense(net, 1)}
        return heads.create_estimator_spec(features, mode, logits, labels=labels,
                                           optimizer=tf.train.GradientDescentOptimizer(0.1),
                                           trainable_variables=tf.trainable_variables())

    def input_fn():
        return ({"x": tf.ones([2, 2])},
                {"cls": tf.constant([["a"], ["b"]]), "reg": tf.ones([2, 1])})

    est = tf.estimator.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match=r"^The loss_reduction must be the same for different "
                                         r"heads. Given: \['sum_over_batch_size', 'sum'\]$"):
        est.train(input_fn, steps=1)


# -- tf.metrics output names ----------------------------------------------------------------
def test_top_k_and_interpolated_auc_metric_tensors_are_named_as_tensorflow():
    labels = tf.constant([0, 1, 1, 0, 1, 0, 1, 1], tf.int64)
    pred = tf.constant([0.1, 0.8, 0.4, 0.35, 0.9, 0.6, 0.55, 0.2])
    logits = tf.constant([[0.1, 0.5, 0.2, 0.9], [0.8, 0.1, 0.05, 0.3], [0.2, 0.3, 0.6, 0.1]])
    top_labels = tf.constant([[3, 1], [2, -1], [2, 0]], tf.int64)
    metrics = {
        "auc": tf.metrics.auc(labels, pred, curve="PR", num_thresholds=50,
                              summation_method="careful_interpolation"),
        "p_at_2": tf.metrics.precision_at_k(top_labels, logits, 2),
        "r_at_2_c": tf.metrics.recall_at_k(tf.constant([[3], [0], [1]], tf.int64), logits, 2,
                                           class_id=3),
        "p_at_top": tf.metrics.precision_at_top_k(top_labels, tf.nn.top_k(logits, 2).indices,
                                                  k=2),
        "ap_at_2": tf.metrics.average_precision_at_k(top_labels, logits, 2),
    }
    assert {k: (v.op.name, u.op.name) for k, (v, u) in metrics.items()} == {
        "auc": ("auc/interpolate_pr_auc", "auc/interpolate_pr_auc_1"),
        "p_at_2": ("precision_at_2", "precision_at_2/update"),
        "r_at_2_c": ("recall_at_2_class3", "recall_at_2_class3/update"),
        "p_at_top": ("precision_at_2_1", "precision_at_2_1/update"),
        "ap_at_2": ("average_precision_at_2/mean", "average_precision_at_2")}
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for _ in range(2):
            sess.run([u for _, u in metrics.values()])
        got = {k: round(float(sess.run(v)), 4) for k, (v, _) in metrics.items()}
    assert got == {"auc": 0.8362, "p_at_2": 0.5, "r_at_2_c": 1.0, "p_at_top": 0.5,
                   "ap_at_2": 0.5}


# -- Baseline ------------------------------------------------------------------------------------
def test_baseline_regressor_whose_only_feature_is_the_weight(tmp_path):
    w = np.linspace(1, 2, 12).astype(np.float32)
    y = np.random.RandomState(1).rand(12, 2).astype(np.float32)
    est = tf.estimator.BaselineRegressor(
        model_dir=str(tmp_path), label_dimension=2, weight_column="w",
        optimizer=lambda: tf.train.GradientDescentOptimizer(0.1))
    est.train(tf.estimator.inputs.numpy_input_fn({"w": w}, y, batch_size=6, num_epochs=None,
                                                 shuffle=False), steps=3)
    assert _r(est.get_variable_value("baseline/bias")) == [0.2764, 0.3581]
    p = next(est.predict(tf.estimator.inputs.numpy_input_fn({"w": w}, batch_size=6,
                                                            shuffle=False)))
    assert _r(p["predictions"]) == [0.2764, 0.3581]

