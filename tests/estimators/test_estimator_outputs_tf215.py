"""What Estimator programs leave in model_dir and print, as TensorFlow 2.15 does.

Each expectation was read off TF 2.15 (``tensorflow.compat.v1`` + tensorflow-estimator
2.15) running the same program: checkpoint keys of the canned estimators (optimizer slots
and non-slot variables included), the event files of ``evaluate`` and the INFO log lines.
"""

import glob
import logging
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators.estimator_util import dict_to_str


def _xy(n=16, seed=0):
    x = np.random.RandomState(seed).randn(n, 2).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64)


def _numpy_input(x, y, train=True):
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=8,
                                              num_epochs=None if train else 1, shuffle=False)


def _columns():
    return [tf.feature_column.numeric_column("x", [2])]


def _config(**kwargs):
    return tf.estimator.RunConfig(tf_random_seed=1, save_summary_steps=None,
                                  log_step_count_steps=None, **kwargs)


def _checkpoint_keys(model_dir):
    return dict(tf.train.list_variables(model_dir))


# -- canned estimators' checkpoint keys ----------------------------------------------------
def test_dnn_classifier_partitions_like_tf_so_slots_are_keyed_t_0(tmp_path):
    # tf.estimator.DNNClassifier: "dnn" partitions into max(1, num_ps_replicas) parts and
    # minimize runs inside it, so TF keys the Adagrad slots ".../kernel/t_0/Adagrad".
    x, _ = _xy()
    y = np.digitize(x[:, 0], [-0.5, 0.5]).astype(np.int64)
    est = tf.estimator.DNNClassifier([4], _columns(), n_classes=3, model_dir=str(tmp_path),
                                     config=_config())
    est.train(_numpy_input(x, y), steps=2)
    assert _checkpoint_keys(str(tmp_path)) == {
        "dnn/hiddenlayer_0/bias": [4], "dnn/hiddenlayer_0/bias/t_0/Adagrad": [4],
        "dnn/hiddenlayer_0/kernel": [2, 4], "dnn/hiddenlayer_0/kernel/t_0/Adagrad": [2, 4],
        "dnn/logits/bias": [3], "dnn/logits/bias/t_0/Adagrad": [3],
        "dnn/logits/kernel": [4, 3], "dnn/logits/kernel/t_0/Adagrad": [4, 3],
        "global_step": []}


def test_dnn_with_batch_norm_embedding_and_adam_matches_tf_keys(tmp_path):
    # TF 2.15: gamma/beta and the embedding are partitioned (t_0 slots), the moving
    # statistics are not; Adam's powers live in the head's name scope "dnn/head".
    x, y = _xy(32)
    color = np.array(["r", "g"] * 16)
    columns = [*_columns(), tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_vocabulary_list("c", ["r", "g"]), 3)]
    est = tf.estimator.DNNClassifier([5], columns, n_classes=3, batch_norm=True,
                                     optimizer=lambda: tf.train.AdamOptimizer(0.01),
                                     model_dir=str(tmp_path), config=_config())
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x, "c": color}, y + (color == "r"),
                                                 batch_size=8, num_epochs=None,
                                                 shuffle=False), steps=3)
    expected = {"dnn/head/beta1_power": [], "dnn/head/beta2_power": [], "global_step": [],
                "dnn/hiddenlayer_0/batchnorm_0/moving_mean": [5],
                "dnn/hiddenlayer_0/batchnorm_0/moving_variance": [5]}
    for name, shape in [("dnn/hiddenlayer_0/batchnorm_0/beta", [5]),
                        ("dnn/hiddenlayer_0/batchnorm_0/gamma", [5]),
                        ("dnn/hiddenlayer_0/bias", [5]), ("dnn/hiddenlayer_0/kernel", [5, 5]),
                        ("dnn/input_from_feature_columns/input_layer/c_embedding/"
                         "embedding_weights", [2, 3]),
                        ("dnn/logits/bias", [3]), ("dnn/logits/kernel", [5, 3])]:
        expected.update({name: shape, f"{name}/t_0/Adam": shape, f"{name}/t_0/Adam_1": shape})
    assert _checkpoint_keys(str(tmp_path)) == expected


@pytest.mark.parametrize("make, expected", [
    (lambda d: tf.estimator.DNNClassifier([3], _columns(), model_dir=d, optimizer="Adam"),
     ["dnn/head/beta1_power", "dnn/head/beta2_power"]),
    (lambda d: tf.estimator.LinearClassifier(_columns(), model_dir=d, optimizer="Adam"),
     ["linear/head/beta1_power", "linear/head/beta2_power"]),
    (lambda d: tf.estimator.BaselineClassifier(model_dir=d, optimizer="Adam"),
     ["head/beta1_power", "head/beta2_power"]),
    (lambda d: tf.estimator.DNNLinearCombinedClassifier(
        model_dir=d, linear_feature_columns=_columns(), dnn_feature_columns=_columns(),
        dnn_hidden_units=[2], dnn_optimizer="Adam", linear_optimizer="Adam"),
     ["head/beta1_power", "head/beta1_power_1", "head/beta2_power", "head/beta2_power_1"]),
])
def test_canned_v1_heads_build_the_train_op_in_their_name_scope(tmp_path, make, expected):
    # TF1's canned estimators (v1 heads) call minimize inside name_scope "head": Adam's
    # non-slot variables and the gradients are "<scope>/head/...", not "training/...".
    x, y = _xy()
    est = make(str(tmp_path))
    est.train(_numpy_input(x, y), steps=1)
    assert sorted(n for n in _checkpoint_keys(str(tmp_path)) if "_power" in n) == expected
    graph = tf.Graph()
    with graph.as_default():
        tf.train.import_meta_graph(est.latest_checkpoint() + ".meta")
    grads = {o.name.split("/gradients")[0] for o in graph.get_operations()
             if "/gradients" in o.name}
    assert grads == {expected[0].rsplit("/", 1)[0]}


def test_custom_model_fn_with_v2_head_keeps_the_training_scope(tmp_path):
    # tf.estimator.BinaryClassHead (TF 2's head) builds its train op under "training".
    def model_fn(features, labels, mode):
        logits = tf.layers.dense(features["x"], 1)
        return tf.estimator.BinaryClassHead().create_estimator_spec(
            features, mode, logits, labels=labels, optimizer=tf.train.AdamOptimizer(0.1))

    x, y = _xy()
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=_config())
    est.train(_numpy_input(x, y.reshape(-1, 1)), steps=1)
    assert {"training/beta1_power", "training/beta2_power"} <= set(
        _checkpoint_keys(str(tmp_path)))


def test_batch_norm_under_a_partitioner_splits_only_gamma_and_beta(tmp_path):
    # tf.layers.batch_normalization in a partitioning variable scope: TF partitions gamma
    # and beta (one part each here), never moving_mean/moving_variance.
    with tf.Graph().as_default():
        x = tf.constant(np.arange(8.0, dtype=np.float32).reshape(4, 2))
        with tf.variable_scope("dnn",
                               partitioner=tf.min_max_variable_partitioner(max_partitions=0)):
            h = tf.layers.batch_normalization(x, name="bn", training=True)
            loss = tf.reduce_sum(h * h)
            train = tf.train.AdagradOptimizer(0.1).minimize(loss)
        names = [v.op.name for v in tf.global_variables()][:4]
        assert names == ["dnn/bn/gamma/part_0", "dnn/bn/beta/part_0", "dnn/bn/moving_mean",
                         "dnn/bn/moving_variance"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(h)
            sess.run(train)
            tf.train.Saver().save(sess, str(tmp_path / "m"))
    centered = (np.arange(8.0).reshape(4, 2) - [3.0, 4.0]) / np.sqrt(5.0 + 1e-3)
    np.testing.assert_allclose(out, centered, rtol=1e-5)
    assert _checkpoint_keys(str(tmp_path)) == {
        "dnn/bn/beta": [2], "dnn/bn/beta/t_0/Adagrad": [2], "dnn/bn/gamma": [2],
        "dnn/bn/gamma/t_0/Adagrad": [2], "dnn/bn/moving_mean": [2],
        "dnn/bn/moving_variance": [2]}


# -- evaluate: the eval directory's event file ---------------------------------------------
def _eval_values(model_dir, sub="eval"):
    out = []
    for path in sorted(glob.glob(os.path.join(model_dir, sub, "events.out.tfevents.*"))):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                out.append((event.step, value.tag, value.node_name, value.WhichOneof("value"),
                            value))
    return out


def _odd_metrics_model_fn(features, labels, mode):
    pred = tf.layers.dense(features["x"], 1, kernel_initializer=tf.ones_initializer())
    loss = tf.losses.mean_squared_error(labels, pred)
    image = tf.summary.image("img", tf.zeros([1, 2, 2, 1]))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss,
                                                               tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "vec": tf.metrics.mean_tensor(tf.constant([1.0, 3.0])),
        "img": (image, tf.no_op()),
        "cnt": (tf.constant(7, tf.int64), tf.no_op()),
        "half": (tf.constant(0.5, tf.float16), tf.no_op()),
        "dbl": (tf.constant(0.25, tf.float64), tf.no_op()),
        "flag": (tf.constant(True), tf.no_op()),
        "s": (tf.constant("hello"), tf.no_op())})


def _ones_input():
    return tf.data.Dataset.from_tensors(({"x": tf.ones([2, 2])}, tf.ones([2, 1]))).repeat()


def test_eval_summaries_follow_tf_value_rules_and_record_the_checkpoint(tmp_path):
    # Estimator._write_dict_to_summary: floats and ints as simple values, ndarrays as
    # tensors (node_name = key), bytes parsed as a Summary (tags "key/<i>"), float16 and
    # bools skipped; then the "checkpoint_path" string tensor. Nothing else in eval/.
    est = tf.estimator.Estimator(_odd_metrics_model_fn, model_dir=str(tmp_path),
                                 config=_config())
    est.train(_ones_input, steps=1)
    results = est.evaluate(_ones_input, steps=1)
    assert list(results) == ["cnt", "dbl", "flag", "half", "img", "loss", "s", "vec",
                             "global_step"]
    values = _eval_values(str(tmp_path))
    assert [(step, tag, node, kind) for step, tag, node, kind, _ in values] == [
        (1, "cnt", "", "simple_value"), (1, "dbl", "", "simple_value"),
        (1, "img/0", "", "image"), (1, "loss", "", "simple_value"),
        (1, "vec", "vec", "tensor"), (1, "checkpoint_path", "", "tensor")]
    by_tag = {tag: value for _, tag, _, _, value in values}
    assert by_tag["cnt"].simple_value == 7.0 and by_tag["dbl"].simple_value == 0.25
    assert round(by_tag["loss"].simple_value, 5) == 0.16
    assert tf.make_ndarray(by_tag["vec"].tensor).tolist() == [1.0, 3.0]
    assert tf.make_ndarray(by_tag["checkpoint_path"].tensor) == \
        os.path.join(str(tmp_path), "model.ckpt-1").encode()
    assert [os.path.basename(p).split(".")[0] for p in
            os.listdir(os.path.join(str(tmp_path), "eval"))] == ["events"]


def test_named_eval_dir_and_canned_eval_tags(tmp_path):
    x, y = _xy()
    est = tf.estimator.LinearClassifier(_columns(), model_dir=str(tmp_path), config=_config())
    est.train(_numpy_input(x, y), steps=2)
    est.evaluate(_numpy_input(x, y, train=False), name="holdout")
    tags = [tag for _, tag, _, _, _ in _eval_values(str(tmp_path), "eval_holdout")]
    assert tags == ["accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                    "average_loss", "label/mean", "loss", "precision", "prediction/mean",
                    "recall", "checkpoint_path"]


# -- INFO log lines -----------------------------------------------------------------------
def test_log_lines_of_train_resume_evaluate_and_predict(tmp_path, caplog):
    # TF 2.15's INFO lines, in order (Saver.restore logs "Restoring parameters from"
    # during session creation, after "Graph was finalized."); no "Calling input_fn.".
    x, y = _xy()
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path), config=_config())
    est.train(_numpy_input(x, y.astype(np.float32)), steps=2)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est.train(_numpy_input(x, y.astype(np.float32)), steps=2)
        est.train(_numpy_input(x, y.astype(np.float32)), max_steps=1)
        est.evaluate(_numpy_input(x, y.astype(np.float32), train=False), steps=1)
        list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": x[:1]}, shuffle=False)))
    ckpt = os.path.join(str(tmp_path), "model.ckpt")
    lines = [r.getMessage() for r in caplog.records
             if not r.getMessage().startswith(("Using config", "Inference Time",
                                               "Starting evaluation", "Finished evaluation",
                                               "loss = ", "Loss for final step",
                                               "Saving dict", "Evaluation ["))]
    assert lines == [
        "Calling model_fn.", "Done calling model_fn.", "Create CheckpointSaverHook.",
        "Graph was finalized.", f"Restoring parameters from {ckpt}-2",
        "Running local_init_op.", "Done running local_init_op.",
        "Calling checkpoint listeners before saving checkpoint 2...",
        f"Saving checkpoints for 2 into {ckpt}.",
        "Calling checkpoint listeners after saving checkpoint 2...",
        "Calling checkpoint listeners before saving checkpoint 4...",
        f"Saving checkpoints for 4 into {ckpt}.",
        "Calling checkpoint listeners after saving checkpoint 4...",
        "Skipping training since max_steps has already saved.",
        "Calling model_fn.", "Done calling model_fn.",
        "Graph was finalized.", f"Restoring parameters from {ckpt}-4",
        "Running local_init_op.", "Done running local_init_op.",
        f"Saving 'checkpoint_path' summary for global step 4: {ckpt}-4",
        "Calling model_fn.", "Done calling model_fn.",
        "Graph was finalized.", f"Restoring parameters from {ckpt}-4",
        "Running local_init_op.", "Done running local_init_op."]


def test_saving_dict_prints_float32_values_as_numpy_does():
    # TF: '%s = %s' per item, sorted, bytes left out: np.float32 prints float32 digits.
    assert dict_to_str({"loss": np.float32(2.6358647), "global_step": np.int64(12),
                        "average_loss": np.float32(0.16474155), "img": b"x"}) == \
        "average_loss = 0.16474155, global_step = 12, loss = 2.6358647"


@pytest.mark.parametrize("optimizer", ["Adagrad", "Adam"])
def test_dnn_model_dir_of_earlier_flowgraph_keeps_training(tmp_path, optimizer):
    # Until session 15 flowgraph's canned DNN saved slots whole (".../kernel/Adagrad")
    # and Adam's powers as "training/beta1_power"; such a model_dir still restores.
    x, y = _xy()
    new_dir, old_dir = str(tmp_path / "new"), str(tmp_path / "old")
    est = tf.estimator.DNNClassifier([3], _columns(), model_dir=new_dir, optimizer=optimizer,
                                     config=_config())
    est.train(_numpy_input(x, y), steps=2)

    def old_key(name):
        name = name.replace("/t_0/", "/")
        return "training/" + name[len("dnn/head/"):] if name.startswith("dnn/head/") else name

    saved = {name: tf.train.load_variable(new_dir, name)
             for name, _ in tf.train.list_variables(new_dir)}
    with tf.Graph().as_default():
        for name, value in saved.items():
            tf.Variable(value, name=old_key(name))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, os.path.join(old_dir, "model.ckpt"), global_step=2)
    assert "dnn/logits/kernel/" + optimizer in dict(tf.train.list_variables(old_dir))
    old = tf.estimator.DNNClassifier([3], _columns(), model_dir=old_dir, optimizer=optimizer,
                                     config=_config())
    old.train(_numpy_input(x, y), steps=1)
    assert old.get_variable_value("global_step") == 3
    restored = old.get_variable_value(f"dnn/logits/kernel/t_0/{optimizer}")
    assert restored.shape == saved[f"dnn/logits/kernel/t_0/{optimizer}"].shape
    assert not np.array_equal(restored, np.zeros_like(restored))


def test_train_and_evaluate_opens_with_tf_log_lines(tmp_path, caplog):
    # tf.estimator.train_and_evaluate run locally: TF 2.15's first three INFO lines.
    x, y = _xy()
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path),
                                       config=_config(save_checkpoints_steps=2))
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        tf.estimator.train_and_evaluate(
            est, tf.estimator.TrainSpec(_numpy_input(x, y.astype(np.float32)), max_steps=2),
            tf.estimator.EvalSpec(_numpy_input(x, y.astype(np.float32), train=False),
                                  throttle_secs=0, start_delay_secs=0))
    assert [r.getMessage() for r in caplog.records][:3] == [
        "Not using Distribute Coordinator.",
        "Running training and evaluation locally (non-distributed).",
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps 2 or save_checkpoints_secs None."]
