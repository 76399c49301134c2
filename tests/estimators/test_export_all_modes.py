"""`Estimator.experimental_export_all_saved_models` and `export_saved_model(experimental_mode=)`:
one SavedModel holding the model_fn's TRAIN, EVAL and PREDICT graphs.

TensorFlow 2.15 (tf-oracle, the same model_fn and export) writes three meta graphs tagged
``train``, ``eval`` and ``serve`` with signatures ``train``
(``tensorflow/supervised/training``), ``eval`` (``tensorflow/supervised/eval``) and
``serving_default``; the supervised ones take ``x`` and ``label`` and give ``loss``,
``predictions/y``, ``metrics/mae/value`` and ``metrics/mae/update_op``; the train op sits
in ``saved_model_train_op``. Loaded back in TF, both TF's export and flowgraph's print
the same values: loss 12.96 before and 25.4016 after one step of the train op on
x = 2, label = 0 (global step 1 -> 2), eval MAE 3.6, served y 3.6.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import SavedModelProto

ModeKeys = tf.estimator.ModeKeys


def read_saved_model(path: str) -> SavedModelProto:
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        return SavedModelProto.FromString(f.read())


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.ones_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, predictions={"y": pred}, loss=loss, train_op=train_op,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)})


def _receivers():
    features = {"x": tf.placeholder(tf.float32, [None, 3], name="x_in")}
    labels = tf.placeholder(tf.float32, [None, 1], name="y_in")
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        features, labels)
    serving = tf.estimator.export.build_raw_serving_input_receiver_fn(features)
    return supervised, serving


@pytest.fixture
def trained(tmp_path):
    est = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn(
        {"x": np.ones((4, 3), np.float32)}, np.ones((4, 1), np.float32), batch_size=4,
        num_epochs=1, shuffle=False))
    return est


def _export_all(est, base, export_format=None):
    supervised, serving = _receivers()
    return est.experimental_export_all_saved_models(
        str(base), {ModeKeys.TRAIN: supervised, ModeKeys.EVAL: supervised,
                    ModeKeys.PREDICT: serving}, format=export_format)


def test_three_meta_graphs_with_tf_tags_signatures_and_collections(trained, tmp_path):
    path = _export_all(trained, tmp_path / "exports")
    assert isinstance(path, bytes) and os.path.basename(path).isdigit()
    assert sorted(os.listdir(os.fsdecode(path))) == ["saved_model.pb", "variables"]
    graphs = read_saved_model(os.fsdecode(path)).meta_graphs
    assert [list(mg.meta_info_def.tags) for mg in graphs] == [["train"], ["eval"], ["serve"]]
    supervised_outputs = [("loss", "mean_squared_error/value:0"),
                          ("metrics/mae/update_op", "mean_absolute_error/update_op:0"),
                          ("metrics/mae/value", "mean_absolute_error/value:0"),
                          ("predictions/y", "MatMul:0")]
    for mg, key, method in ((graphs[0], "train", "tensorflow/supervised/training"),
                            (graphs[1], "eval", "tensorflow/supervised/eval")):
        sig = mg.signature_def[key]
        assert list(mg.signature_def) == [key]
        assert sig.method_name == method
        assert sorted((k, v.name) for k, v in sig.inputs.items()) == [
            ("label", "y_in:0"), ("x", "x_in:0")]
        assert sorted((k, v.name) for k, v in sig.outputs.items()) == supervised_outputs
        assert sorted(mg.collection_def) == [
            "global_step", "local_variables", "losses", "metric_variables",
            "saved_model_main_op", "saved_model_train_op", "train_op",
            "trainable_variables", "variables"]
    serve = graphs[2]
    assert serve.signature_def["serving_default"].method_name == "tensorflow/serving/predict"
    assert sorted(serve.collection_def) == [
        "global_step", "saved_model_main_op", "trainable_variables", "variables"]


@pytest.mark.parametrize("export_format", ["tensorflow", "flowgraph"])
def test_a_fresh_process_trains_evaluates_and_serves_the_export(trained, tmp_path,
                                                                export_format):
    path = os.fsdecode(_export_all(trained, tmp_path / "exports", export_format))
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import flowgraph as tf
        path = sys.argv[1]
        x, label = np.full((2, 3), 2.0, np.float32), np.zeros((2, 1), np.float32)
        for tag, key in (("train", "train"), ("eval", "eval"), ("serve", "serving_default")):
            with tf.Graph().as_default(), tf.Session() as s:
                sig = tf.saved_model.loader.load(s, [tag], path).signature_def[key]
                feed = {sig.inputs["x"].name: x}
                if "label" in sig.inputs:
                    feed[sig.inputs["label"].name] = label
                out = {k: v.name for k, v in sig.outputs.items()}
                if tag == "train":
                    before = s.run(out["loss"], feed)
                    s.run(tf.get_collection("saved_model_train_op")[0], feed)
                    print(tag, before, s.run(out["loss"], feed),
                          s.run(tf.train.get_global_step()))
                elif tag == "eval":
                    s.run(out["metrics/mae/update_op"], feed)
                    print(tag, s.run(out["metrics/mae/value"]))
                else:
                    print(tag, s.run(out["y"], feed).ravel().tolist())
    """)
    done = subprocess.run([sys.executable, "-c", script, path], capture_output=True,
                          text=True, timeout=120, check=True)
    lines = [line.split() for line in done.stdout.splitlines()]
    # TF 2.15 loading the same export (and its own) printed these values
    train, evaluation, serve = lines
    assert train[0] == "train" and int(train[3]) == 2
    np.testing.assert_allclose([float(train[1]), float(train[2])], [12.96, 25.4016],
                               rtol=1e-6)
    np.testing.assert_allclose(float(evaluation[1]), 3.6, rtol=1e-6)
    assert serve[0] == "serve"
    np.testing.assert_allclose(eval("".join(serve[1:])), [3.6, 3.6], rtol=1e-6)


@pytest.mark.parametrize("mode, tag, key", [(ModeKeys.TRAIN, "train", "train"),
                                            (ModeKeys.EVAL, "eval", "eval")])
def test_export_saved_model_in_one_experimental_mode(trained, tmp_path, mode, tag, key):
    supervised, _ = _receivers()
    path = trained.export_saved_model(str(tmp_path / "one"), supervised,
                                      experimental_mode=mode)
    (mg,) = read_saved_model(os.fsdecode(path)).meta_graphs
    assert list(mg.meta_info_def.tags) == [tag] and list(mg.signature_def) == [key]


def test_supervised_modes_need_labels_and_modes_must_be_mode_keys(trained, tmp_path):
    _, serving = _receivers()
    base = tmp_path / "bad"
    with pytest.raises(ValueError, match="Exporting mode `train` needs labels"):
        trained.experimental_export_all_saved_models(str(base), {ModeKeys.TRAIN: serving})
    with pytest.raises(ValueError, match="ModeKeys values"):
        trained.experimental_export_all_saved_models(str(base), {"serve": serving})
    with pytest.raises(ValueError, match="experimental_mode must be"):
        trained.export_saved_model(str(base), serving, experimental_mode="fit")
    # nothing half-written is left behind
    assert not base.exists() or not os.listdir(base)
