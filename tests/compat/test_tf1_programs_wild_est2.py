"""TF1 estimator programs from the wild, round 7: partitioned canned linear models, feature
column edge cases, EstimatorSpec / input_fn validation, exporters, InMemoryEvaluatorHook.

Every expected value was printed by TensorFlow 2.15 (`tensorflow.compat.v1`, the
tf-oracle) running the same program. The fixture
tests/data/tf_formats/partitioned_linear_classifier is TF 2.15's checkpoint of the
``LinearClassifier(partitioner=tf.fixed_size_partitioner(2))`` trained in
`_train_partitioned` (3 FTRL steps).
"""

import glob
import os
import shutil

import numpy as np
import pytest

import flowgraph as tf

fc = tf.feature_column
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats",
                       "partitioned_linear_classifier")

X = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
C = np.array(["a", "b", "c", "a", "b", "z"])
Y = np.array([0, 1, 0, 1, 1, 0])
# TF 2.15: predicted probabilities after 3 FTRL(0.3) steps (also from its own checkpoint)
TF_PROBS = [[0.5101, 0.4899], [0.356, 0.644], [0.6336, 0.3664], [0.4684, 0.5316],
            [0.3187, 0.6813], [0.4536, 0.5464]]


def _columns():
    return [fc.numeric_column("x", shape=[2]),
            fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c", "d"])]


def _train_input():
    return tf.estimator.inputs.numpy_input_fn({"x": X, "c": C}, Y, batch_size=6,
                                              num_epochs=None, shuffle=False)


def _predict_input():
    return tf.estimator.inputs.numpy_input_fn({"x": X, "c": C}, batch_size=6, shuffle=False)


def _probs(est):
    return np.array([p["probabilities"] for p in est.predict(_predict_input())])


def _train_partitioned(model_dir, partitioner, steps=3):
    est = tf.estimator.LinearClassifier(_columns(), model_dir=model_dir,
                                        partitioner=partitioner,
                                        optimizer=tf.train.FtrlOptimizer(0.3))
    est.train(_train_input(), steps=steps)
    return est


# -- canned linear models partition their variables as TF's do ----------------------------
@pytest.mark.parametrize("partitioner", [
    lambda: tf.fixed_size_partitioner(2),
    lambda: tf.min_max_variable_partitioner(max_partitions=2, min_slice_size=4)])
def test_partitioned_linear_classifier_matches_tensorflow(tmp_path, partitioner):
    est = _train_partitioned(str(tmp_path), partitioner())
    names = est.get_variable_names()
    # TF: the weights under their full names, the slots per part
    for name in ["linear/linear_model/c/weights/part_0/Ftrl",
                 "linear/linear_model/c/weights/part_1/Ftrl_1",
                 "linear/linear_model/x/weights/part_1/Ftrl",
                 "linear/linear_model/bias_weights/part_0/Ftrl"]:
        assert name in names
    shapes = dict(tf.train.list_variables(str(tmp_path)))
    assert shapes["linear/linear_model/c/weights"] == [4, 1]
    assert shapes["linear/linear_model/x/weights"] == [2, 1]
    assert shapes["linear/linear_model/bias_weights"] == [1]
    assert "linear/linear_model/bias_weights/part_1/Ftrl" not in names  # one part of [1]
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/c/weights"),
                               [[0.052], [0.6293], [-0.5668], [0.0]], atol=1e-4)
    np.testing.assert_allclose(_probs(est), TF_PROBS, atol=1e-4)
    loss = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"x": X, "c": C}, Y, batch_size=6, num_epochs=1, shuffle=False))["loss"]
    assert loss == pytest.approx(3.3757, abs=1e-4)


def test_partitioned_linear_model_graph_holds_parts():
    with tf.Graph().as_default():
        with tf.variable_scope("linear", partitioner=tf.fixed_size_partitioner(2)):
            fc.linear_model({"x": tf.zeros([3, 2]), "c": tf.constant([["a"], ["b"], ["z"]])},
                            _columns(), units=2)
        assert sorted(v.op.name for v in tf.trainable_variables()) == [
            "linear/linear_model/bias_weights/part_0", "linear/linear_model/bias_weights/part_1",
            "linear/linear_model/c/weights/part_0", "linear/linear_model/c/weights/part_1",
            "linear/linear_model/x/weights/part_0", "linear/linear_model/x/weights/part_1"]


def test_partitioned_linear_regressor_two_labels_splits_the_bias(tmp_path):
    x2 = X.copy()
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path), label_dimension=2,
                                       partitioner=tf.fixed_size_partitioner(2))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X, "c": C}, x2, batch_size=6,
                                                 num_epochs=None, shuffle=False), steps=2)
    names = est.get_variable_names()
    assert "linear/linear_model/bias_weights/part_1/Ftrl" in names
    assert dict(tf.train.list_variables(str(tmp_path)))[
        "linear/linear_model/bias_weights"] == [2]


def test_partitioned_linear_model_trains_on_from_its_checkpoint(tmp_path):
    _train_partitioned(str(tmp_path), tf.fixed_size_partitioner(2), steps=2)
    est = _train_partitioned(str(tmp_path), tf.fixed_size_partitioner(2), steps=1)
    assert est.get_variable_value("global_step") == 3
    # same values as 3 steps in one run: the slots were restored
    np.testing.assert_allclose(_probs(est), TF_PROBS, atol=1e-4)


def test_tensorflow_partitioned_linear_checkpoint_predicts(tmp_path):
    model_dir = str(tmp_path / "m")
    shutil.copytree(FIXTURE, model_dir)
    est = tf.estimator.LinearClassifier(_columns(), model_dir=model_dir,
                                        partitioner=tf.fixed_size_partitioner(2))
    np.testing.assert_allclose(_probs(est), TF_PROBS, atol=1e-4)


# -- feature columns -------------------------------------------------------------------------
def _layer(features, columns):
    with tf.Graph().as_default():
        out = fc.input_layer(features, columns)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            return out, sess.run(out)


def test_indicator_of_multivalent_and_weighted_input_counts():
    sp = tf.SparseTensorValue([[0, 0], [0, 1], [0, 2], [2, 0]], np.array(["a", "a", "b", "c"]),
                              [3, 3])
    col = fc.indicator_column(fc.categorical_column_with_vocabulary_list("s", ["a", "b", "c"]))
    np.testing.assert_array_equal(_layer({"s": sp}, [col])[1],
                                  [[2, 1, 0], [0, 0, 0], [0, 0, 1]])
    ids = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], np.array([0, 2, 1], np.int64), [2, 2])
    w = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], np.array([0.5, 2.0, 3.0], np.float32),
                             [2, 2])
    wc = fc.weighted_categorical_column(fc.categorical_column_with_identity("ids", 3), "w")
    assert wc.name == "ids_weighted_by_w"
    feats = {"ids": ids, "w": w}
    np.testing.assert_allclose(_layer(feats, [fc.indicator_column(wc)])[1],
                               [[0.5, 0, 2.0], [0, 3.0, 0]])
    emb = fc.embedding_column(wc, 2, initializer=tf.ones_initializer(), combiner="sum")
    np.testing.assert_allclose(_layer(feats, [emb])[1], [[2.5, 2.5], [3.0, 3.0]])


def test_vocabulary_oov_default_and_hashed_ints():
    s = {"s": np.array([["a"], ["z"], ["c"], ["q"]]),
         "i": np.array([[10], [25], [30], [7]], np.int64)}
    oov = fc.categorical_column_with_vocabulary_list("s", ["a", "b", "c"], num_oov_buckets=2)
    np.testing.assert_array_equal(np.argmax(_layer(s, [fc.indicator_column(oov)])[1], 1),
                                  [0, 4, 2, 4])
    dflt = fc.categorical_column_with_vocabulary_list("s", ["a", "b", "c"], default_value=1)
    np.testing.assert_array_equal(np.argmax(_layer(s, [fc.indicator_column(dflt)])[1], 1),
                                  [0, 1, 2, 1])
    hashed = fc.categorical_column_with_hash_bucket("i", 5, dtype=tf.int64)
    np.testing.assert_array_equal(np.argmax(_layer(s, [fc.indicator_column(hashed)])[1], 1),
                                  [2, 3, 3, 3])


def test_crossed_column_with_hash_key():
    ab = fc.bucketized_column(fc.numeric_column("a"), [0.0, 1.0, 2.0])
    cross = fc.crossed_column([ab, "s"], 10, hash_key=12345)
    feats = {"a": np.array([[-1.0], [0.5], [1.5], [3.0]], np.float32),
             "s": np.array([["a"], ["b"], ["a"], ["c"]])}
    _, value = _layer(feats, [fc.indicator_column(cross)])
    np.testing.assert_array_equal(np.argmax(value, 1), [3, 5, 5, 4])


def test_embedding_combiners_and_max_norm():
    ids = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                               np.array([0, 1, 2, 1, 1, 3], np.int64), [4, 3])
    col = fc.categorical_column_with_identity("ids", 4)
    init = tf.constant_initializer(np.arange(8).reshape(4, 2) / 4.0)
    sqrtn = fc.embedding_column(col, 2, combiner="sqrtn", initializer=init)
    np.testing.assert_allclose(_layer({"ids": ids}, [sqrtn])[1],
                               [[0.3536, 0.7071], [1.0, 1.25], [1.4434, 1.8764], [0, 0]],
                               atol=1e-4)
    clipped = fc.embedding_column(col, 2, combiner="sum", initializer=init, max_norm=0.5)
    np.testing.assert_allclose(_layer({"ids": ids}, [clipped])[1],
                               [[0.2774, 0.666], [0.3123, 0.3904], [0.8801, 1.2117], [0, 0]],
                               atol=1e-4)


def test_sequence_columns_are_refused_by_input_layer():
    seq = fc.sequence_categorical_column_with_identity("ids", 4)
    sp = tf.SparseTensorValue([[0, 0], [0, 1], [1, 0]], np.array([0, 3, 1], np.int64), [2, 2])
    for col, kind in [(fc.embedding_column(seq, 2), "embedding_column"),
                      (fc.indicator_column(seq), "indicator_column")]:
        with tf.Graph().as_default(), pytest.raises(
                ValueError, match=f"In {kind}: .*must not be of type _SequenceCategoricalColumn"):
            fc.input_layer({"ids": sp}, [col])
    with tf.Graph().as_default():  # the sequence layer still reads them
        layer, _ = tf.contrib.feature_column.sequence_input_layer(
            {"ids": sp}, [fc.indicator_column(seq)])
        assert layer.shape.as_list()[-1] == 4


def test_ragged_tensor_feature_is_a_type_error():
    col = fc.indicator_column(fc.categorical_column_with_vocabulary_list("s", ["a", "b"]))
    with tf.Graph().as_default():
        ragged = tf.ragged.constant([["a", "b"], [], ["b"]])
        with pytest.raises(TypeError, match="RaggedTensor"):
            fc.input_layer({"s": ragged}, [col])


# -- Estimator: input_fn results, EstimatorSpec checks ------------------------------------------
def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
        loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


XS = np.arange(16, dtype=np.float32).reshape(16, 1) / 16.0
YS = (2 * XS + 1).astype(np.float32)


def test_input_fn_tuples_must_have_two_items(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    one = lambda: tf.data.Dataset.from_tensor_slices(({"x": XS},)).batch(4)  # noqa: E731
    three = lambda: tf.data.Dataset.from_tensor_slices(({"x": XS}, YS, YS)).batch(4)  # noqa
    with pytest.raises(ValueError, match="len 2 tuple"):
        list(est.predict(one))
    with pytest.raises(ValueError, match="len 2 tuple"):
        est.train(three, steps=1)


def test_estimator_spec_export_outputs_and_scaffold():
    M = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        v = tf.constant([1.0, 2.0])
        with pytest.raises(TypeError, match="ExportOutput"):
            tf.estimator.EstimatorSpec(M.PREDICT, predictions=v, export_outputs={"a": v})
        spec = tf.estimator.EstimatorSpec(M.PREDICT, predictions=v)
        assert isinstance(spec.scaffold, tf.train.Scaffold)  # TF's default
        with pytest.raises(TypeError, match=r"scaffold must be tf\.train\.Scaffold"):
            tf.estimator.EstimatorSpec(M.PREDICT, predictions=v, scaffold=3)


def test_numpy_input_fn_renames_its_label_key():
    x = {"__target_key__": np.arange(3)}
    with tf.Graph().as_default():
        feats, labels = tf.estimator.inputs.numpy_input_fn(x, np.arange(3), shuffle=False)()
        assert list(feats) == ["__target_key__"] and isinstance(labels, tf.Tensor)


# -- exporters and the in-memory evaluator ---------------------------------------------------
def _train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": XS}, YS)).batch(4).repeat()


def _eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": XS}, YS)).batch(8)


def test_best_exporter_always_exports_first(tmp_path):
    raw = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 1])})
    est = tf.estimator.Estimator(_model_fn, config=tf.estimator.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=5))
    best = tf.estimator.BestExporter("best", raw, exports_to_keep=2)
    tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(_train_input_fn, max_steps=10),
        tf.estimator.EvalSpec(_eval_input_fn, steps=None, exporters=[best], throttle_secs=0,
                              start_delay_secs=0))
    assert len(os.listdir(tmp_path / "export" / "best")) == 2  # TF: steps 5 and 10


def test_in_memory_evaluator_hook(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, _eval_input_fn,
                                                           every_n_iter=3, name="mem")
    est.train(_train_input_fn, steps=7, hooks=[hook])
    assert sorted(p for p in os.listdir(tmp_path) if p.startswith("eval")) == ["eval_mem"]
    seen = []
    for path in sorted(glob.glob(str(tmp_path / "eval_mem" / "events*"))):
        for event in tf.train.summary_iterator(path):
            for v in event.summary.value:
                if v.tag == "loss":
                    seen.append((event.step, round(v.simple_value, 4)))
    # TF 2.15: at the start, every 3 steps and at the end
    assert seen == [(0, 4.0859), (3, 3.9999), (6, 3.8757), (7, 3.8227)]
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.estimator.experimental.InMemoryEvaluatorHook(est, _eval_input_fn, every_n_iter=0)
    with pytest.raises(AttributeError):
        tf.estimator.experimental.InMemoryEvaluatorHook(3, _eval_input_fn)


# -- heads with a Keras optimizer, string labels; cols_to_vars; warm start -------------------
X2 = np.array([[0.1, 1.0], [0.5, 0.0], [-0.3, 2.0], [0.9, 1.0]], np.float32)
YB = np.array([[1], [0], [1], [1]])


def _multi_head_fn(features, labels, mode):
    opt = tf.keras.optimizers.SGD(0.1)
    opt.iterations = tf.train.get_or_create_global_step()  # as TF 2's heads expect
    head = tf.estimator.MultiHead([tf.estimator.BinaryClassHead(name="a"),
                                   tf.estimator.RegressionHead(name="b")])
    with tf.variable_scope("net", use_resource=True):
        net = tf.layers.dense(features["x"], 2, kernel_initializer=tf.zeros_initializer())
    return head.create_estimator_spec(
        features=features, mode=mode, logits={"a": net[:, :1], "b": net[:, 1:]},
        labels=labels, optimizer=opt, trainable_variables=tf.trainable_variables())


def test_multi_head_trains_with_a_keras_optimizer(tmp_path):
    est = tf.estimator.Estimator(_multi_head_fn, model_dir=str(tmp_path))
    labels = {"a": YB, "b": X2[:, :1]}
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X2}, labels, batch_size=4,
                                                 num_epochs=None, shuffle=False), steps=1)
    r = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X2}, labels, batch_size=4,
                                                        num_epochs=1, shuffle=False))
    expected = {"loss": 0.889, "loss/a": 0.6627, "loss/b": 0.2263, "accuracy/a": 0.75,
                "accuracy_baseline/a": 0.75, "auc_precision_recall/a": 1.0,
                "label/mean/b": 0.3, "prediction/mean/a": 0.5189,
                "prediction/mean/b": 0.0974, "recall/a": 1.0}
    for key, value in expected.items():
        assert r[key] == pytest.approx(value, abs=1e-4), key
    assert r["global_step"] == 1


def test_heads_refuse_keras_optimizer_without_variables():
    with tf.Graph().as_default():
        tf.train.create_global_step()
        head = tf.estimator.RegressionHead()
        with pytest.raises(ValueError, match="trainable_variables cannot be None"):
            head.create_estimator_spec(features={}, mode=tf.estimator.ModeKeys.TRAIN,
                                       logits=tf.zeros([2, 1]), labels=tf.zeros([2, 1]),
                                       optimizer=tf.keras.optimizers.SGD(0.1))


def test_binary_string_labels_without_vocabulary_are_unimplemented(tmp_path):
    est = tf.estimator.LinearClassifier([fc.numeric_column("x", shape=[2])],
                                        model_dir=str(tmp_path))
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float"):
        est.evaluate(tf.estimator.inputs.numpy_input_fn(
            {"x": X2}, np.where(YB == 1, "y", "n"), batch_size=4, num_epochs=1,
            shuffle=False))


def test_linear_model_cols_to_vars_lists_the_parts():
    ids = tf.SparseTensorValue([[0, 0], [1, 0], [1, 1]], np.array([0, 5, 2], np.int64), [2, 2])
    feats = {"ids": ids, "x": np.ones([2, 3], np.float32)}
    cols = [fc.categorical_column_with_identity("ids", 6), fc.numeric_column("x", shape=[3])]
    with tf.Graph().as_default():
        ctv = {}
        with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(3)):
            fc.linear_model(feats, cols, units=2, cols_to_vars=ctv)
        assert [(v.op.name, v.shape.as_list()) for v in ctv[cols[0]]] == [
            ("s/linear_model/ids/weights/part_0", [2, 2]),
            ("s/linear_model/ids/weights/part_1", [2, 2]),
            ("s/linear_model/ids/weights/part_2", [2, 2])]
        assert [v.op.name for v in ctv[cols[1]]] == [
            f"s/linear_model/x/weights/part_{i}" for i in range(3)]


def test_warm_start_into_a_partitioned_linear_model(tmp_path):
    cols = [fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c", "d"])]
    c, y = np.array(["a", "b", "c", "d"]), np.array([0, 1, 1, 0])
    fn = tf.estimator.inputs.numpy_input_fn({"c": c}, y, batch_size=4, num_epochs=None,
                                            shuffle=False)
    src = tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path / "src"),
                                        optimizer=tf.train.FtrlOptimizer(0.5))
    src.train(fn, steps=3)
    dst = tf.estimator.LinearClassifier(
        cols, model_dir=str(tmp_path / "dst"), partitioner=tf.fixed_size_partitioner(2),
        warm_start_from=tf.estimator.WarmStartSettings(src.model_dir,
                                                       vars_to_warm_start=".*weights.*"),
        optimizer=tf.train.GradientDescentOptimizer(0.0))
    dst.train(fn, steps=1)
    np.testing.assert_allclose(dst.get_variable_value("linear/linear_model/c/weights"),
                               [[-0.9118], [0.9118], [0.9118], [-0.9118]], atol=1e-4)
    assert dst.get_variable_value("linear/linear_model/bias_weights").tolist() == [0.0]


def _train_summaries(est):
    out = {}
    for path in sorted(glob.glob(os.path.join(est.model_dir, "events*"))):
        for event in tf.train.summary_iterator(path):
            for v in event.summary.value:
                if v.WhichOneof("value") == "simple_value":
                    out[(event.step, v.tag)] = round(v.simple_value, 4)
    return out


def test_canned_training_summaries_include_average_loss(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
    w = np.array([[1.0], [2.0], [0.5], [1.0], [3.0], [0.0]], np.float32)
    cols = [fc.numeric_column("x", shape=[2])]
    reg = tf.estimator.LinearRegressor(cols, label_dimension=2, weight_column="w",
                                       model_dir=str(tmp_path / "reg"))
    reg.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": x, "w": w}, x * 2)).batch(6).repeat(), steps=1)
    s = _train_summaries(reg)
    assert s[(1, "average_loss")] == 1.5133 and s[(1, "loss")] == 22.7
    part = tf.estimator.LinearClassifier(cols, model_dir=str(tmp_path / "part"),
                                         partitioner=tf.fixed_size_partitioner(2))
    part.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": x}, np.array([0, 1, 0, 1, 1, 0]))).batch(6).repeat(), steps=1)
    s = _train_summaries(part)
    # TF 2.15: the bias summary of a partitioned model too
    assert {k: v for k, v in s.items() if k[0] == 1} == {
        (1, "average_loss"): 0.6931, (1, "linear/bias"): 0.0,
        (1, "linear/fraction_of_zero_weights"): 1.0, (1, "loss"): 4.1589}
