"""TF1 Estimator export and serving programs, sweep 15 (area ``export``), run under
TensorFlow 2.15 (``tf.compat.v1`` with tensorflow-estimator 2.15) and flowgraph with the
tf-oracle; TensorFlow's printed values are inline.

The programs (2017-2019 style): a custom model_fn whose PREDICT spec lists
``PredictOutput``/``ClassificationOutput``/``RegressionOutput`` export outputs behind a
``ServingInputReceiver`` with ``receiver_tensors_alternatives``, exported with
``export_savedmodel`` and served through ``tf.saved_model.loader.load`` and the
signature's tensor names (the invalid classify/regress signatures of a float input are
dropped); a CTR tower over ``tf.contrib.estimator.binary_classification_head`` with
``train_op_fn``, evaluated, predicted and exported through
``build_parsing_serving_input_receiver_fn`` then served from tf.Examples; the contrib
multi-class, regression and binary (with a label vocabulary) heads driven through
``head.create_estimator_spec`` in all three modes in plain graphs; a linear regressor
exported with ``build_raw_serving_input_receiver_fn`` (placeholder names, default batch
size), ``assets_extra``, ``as_text`` and an older ``checkpoint_path``, then with a
``TensorServingInputReceiver`` through ``export_saved_model``; a hand-built SavedModel
(``build_tensor_info``, the three ``signature_def_utils`` builders, ``main_op``,
``assets_collection`` with a vocabulary table) loaded in a fresh process;
``train_and_evaluate`` with ``LatestExporter(exports_to_keep=2)``, a ``BestExporter``
with its own ``compare_fn`` and a ``FinalExporter``; a ``tf.estimator.MultiHead`` of
multi-class, multi-label and regression heads exported with per-head signatures;
``tf.contrib.predictor.from_saved_model``/``from_estimator``; and a parsing receiver with
raw alternatives plus ``experimental_export_all_saved_models`` for serve/train/eval.

Left as is: TensorFlow's heads turn class ids into vocabulary strings through an
index-to-string table (``predictions/hash_table_Lookup/LookupTableFindV2``), flowgraph's
through one op (``predictions/str_classes``), same values; TensorFlow's contrib (v1)
heads name the training loss ``head/weighted_loss/value``, flowgraph
``head/losses/weighted_loss/truediv``; TensorFlow 2.15's ``tf.estimator.*Head``
``optimizer=`` refuses a ``tf.train`` optimizer (Keras only), flowgraph takes both;
``numpy_input_fn`` yields ``numpy_input/source:0`` where TensorFlow dequeues
``fifo_queue_DequeueUpTo:1`` (so receivers mirrored from it are named differently); with
both a bad feed key and a bad fetch, TensorFlow reports the feed (TypeError) first,
flowgraph the fetch (ValueError); a canned ``DNNClassifier`` export over a
vocabulary-list column has TensorFlow's ``table_initializer`` (and ``cond_context``)
collections, flowgraph's has neither (its main op still fills the tables).

Classes of discrepancy found and fixed (one focused test each below):

* The heads' ``ClassificationOutput`` reused ``predictions['all_classes']``
  (``<head>/predictions/Tile_1``) as its classes; TensorFlow tiles the class names afresh
  in the head's scope (``<head>/Tile``), in the binary, multi-class and multi-label heads.
* ``tf.contrib.estimator``'s heads behaved as TF2's heads; TF1's are the v1 heads: their
  train op is built in the head's name scope (``head/GradientDescent``, not
  ``training/GradientDescent``) and their PR AUC sums trapezoids (``tf.metrics.auc``'s
  default), not Keras' interpolation (binary and multi-label heads).
* ``SavedModelBuilder`` wrote the assets into both the ``saved_model_assets`` collection and
  ``MetaGraphDef.asset_file_def`` (once per collection entry); TF1's builder leaves
  ``asset_file_def`` empty, and so does the loader's returned message now (both formats).
* Loading a ``saved_model.pb`` dropped the ``metric_variables`` collection (exported
  eval/train graphs): the loader rebuilt only the other variable collections.
* ``tf.contrib.estimator`` lacked TF1's export helpers ``export_saved_model_for_mode``,
  ``export_all_saved_models``, ``build_raw_supervised_input_receiver_fn`` and
  ``build_supervised_input_receiver_fn_from_input_fn``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    SavedModelProto,
)


def _s(path):
    return path.decode() if isinstance(path, bytes) else path


def _dims(info):
    return [d.size for d in info.tensor_shape.dim]


def _example(values):
    return tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=list(values)))})).SerializeToString()


# -- program 1: export outputs of a custom model_fn, receiver alternatives -----------------
def test_custom_model_fn_export_outputs_and_receiver_alternatives(tmp_path):
    def model_fn(features, labels, mode, params):
        with tf.variable_scope("dense"):
            logits = tf.layers.dense(features["x"], 3, name="logits",
                                     kernel_initializer=tf.constant_initializer(0.1))
        probs = tf.nn.softmax(logits, name="probs")
        classes = tf.argmax(logits, axis=1, name="classes")
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"probs": probs}, export_outputs={
                "serving_default": tf.estimator.export.PredictOutput(
                    {"probs": probs, "classes": classes}),
                "classify": tf.estimator.export.ClassificationOutput(scores=probs),
                "reg": tf.estimator.export.RegressionOutput(value=tf.reduce_sum(logits, 1))})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "m"),
                                 config=tf.estimator.RunConfig(tf_random_seed=1))
    X = np.arange(24, dtype=np.float32).reshape(6, 4) / 10.
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, np.array([0, 1, 2, 0, 1, 2], np.int32),
                                                 batch_size=6, num_epochs=None, shuffle=False),
              steps=3)

    def serving_fn():
        x = tf.placeholder(tf.float32, [None, 4], name="x_in")
        s = tf.placeholder(tf.string, [None], name="ser")
        return tf.estimator.export.ServingInputReceiver(
            {"x": x}, {"x": x}, receiver_tensors_alternatives={"ex": {"examples": s}})

    export_dir = _s(est.export_savedmodel(str(tmp_path / "exp"), serving_fn))
    base = os.path.basename(export_dir)
    assert base.isdigit() and len(base) == 10
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    with tf.Graph().as_default() as g, tf.Session() as sess:
        mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        assert sorted(mg.signature_def) == ["serving_default"]
        sd = mg.signature_def["serving_default"]
        assert sd.method_name == "tensorflow/serving/predict"
        assert [(n, t.name, t.dtype, _dims(t)) for n, t in sd.inputs.items()] == [
            ("x", "x_in:0", 1, [-1, 4])]
        assert sorted((n, t.name, t.dtype, _dims(t)) for n, t in sd.outputs.items()) == [
            ("classes", "classes:0", 9, [-1]), ("probs", "probs:0", 1, [-1, 3])]
        out = sess.run({k: v.name for k, v in sd.outputs.items()}, {sd.inputs["x"].name: X[:2]})
        assert out["classes"].tolist() == [2, 2]
        np.testing.assert_allclose(out["probs"], [[0.32895, 0.33346, 0.33759],
                                                  [0.31238, 0.33324, 0.35439]], atol=1e-5)
        assert sorted(g.get_all_collection_keys()) == [
            "global_step", "saved_model_main_op", "trainable_variables", "variables"]
        assert [v.name for v in tf.global_variables()] == [
            "global_step:0", "dense/logits/kernel:0", "dense/logits/bias:0"]


# -- program 2: a CTR tower over the contrib binary head, parsing receiver -----------------
def test_contrib_binary_head_estimator_evaluated_exported_and_served(tmp_path):
    head = tf.contrib.estimator.binary_classification_head(name="ctr")
    assert (head.name, head.logits_dimension) == ("ctr", 1)

    def model_fn(features, labels, mode, config):
        with tf.variable_scope("tower"):
            h = tf.layers.dense(features["x"], 4, activation=tf.nn.relu, name="h",
                                kernel_initializer=tf.glorot_uniform_initializer(seed=3))
            logits = tf.layers.dense(h, 1, name="out", kernel_initializer=tf.ones_initializer())
        opt = tf.train.AdagradOptimizer(0.1)
        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels,
            train_op_fn=lambda loss: opt.minimize(loss, global_step=tf.train.get_global_step()))

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(tf_random_seed=7))
    X = np.random.RandomState(0).randn(16, 3).astype(np.float32)
    y = (X[:, :1] > 0).astype(np.int64)
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, y, batch_size=8, num_epochs=None,
                                                 shuffle=False), steps=5)
    m = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, y, batch_size=16,
                                                        num_epochs=1, shuffle=False))
    want = {"accuracy/ctr": 0.6875, "accuracy_baseline/ctr": 0.6875, "auc/ctr": 0.2364,
            "auc_precision_recall/ctr": 0.5958, "average_loss/ctr": 0.8585,
            "global_step": 5.0, "label/mean/ctr": 0.6875, "loss": 0.8585,
            "precision/ctr": 0.6875, "prediction/mean/ctr": 0.7351, "recall/ctr": 1.0}
    assert sorted(m) == sorted(want)
    for k, v in want.items():
        assert round(float(m[k]), 4) == v, k
    p = next(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X[:2]}, shuffle=False)))
    assert p["classes"].tolist() == [b"1"] and p["all_classes"].tolist() == [b"0", b"1"]
    np.testing.assert_allclose(p["logits"], [1.4462], atol=1e-4)
    np.testing.assert_allclose(p["probabilities"], [0.1906, 0.8094], atol=1e-4)

    sfn = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.FixedLenFeature([3], tf.float32)})
    ed = _s(est.export_savedmodel(str(tmp_path / "export"), sfn))
    with tf.Graph().as_default(), tf.Session() as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], ed)
        sigs = {k: (v.method_name, {n: (t.name, t.dtype) for n, t in v.inputs.items()},
                    {n: (t.name, t.dtype, _dims(t)) for n, t in v.outputs.items()})
                for k, v in mg.signature_def.items()}
        classify = ("tensorflow/serving/classify", {"inputs": ("input_example_tensor:0", 7)},
                    {"classes": ("ctr/Tile:0", 7, [-1, 2]),
                     "scores": ("ctr/predictions/probabilities:0", 1, [-1, 2])})
        assert sigs["classification"] == classify and sigs["serving_default"] == classify
        assert sigs["regression"] == (
            "tensorflow/serving/regress", {"inputs": ("input_example_tensor:0", 7)},
            {"outputs": ("ctr/predictions/logistic:0", 1, [-1, 1])})
        assert sigs["predict"][2] == {
            "all_class_ids": ("ctr/predictions/Tile:0", 3, [-1, 2]),
            "all_classes": ("ctr/predictions/Tile_1:0", 7, [-1, 2]),
            "class_ids": ("ctr/predictions/ExpandDims:0", 9, [-1, 1]),
            "classes": ("ctr/predictions/str_classes:0", 7, [-1, 1]),
            "logistic": ("ctr/predictions/logistic:0", 1, [-1, 1]),
            "logits": ("tower/out/BiasAdd:0", 1, [-1, 1]),
            "probabilities": ("ctr/predictions/probabilities:0", 1, [-1, 2])}
        ex = [_example(X[i]) for i in range(2)]
        sd = mg.signature_def["classification"]
        classes, scores = sess.run([sd.outputs["classes"].name, sd.outputs["scores"].name],
                                   {sd.inputs["inputs"].name: ex})
        assert classes.tolist() == [[b"0", b"1"], [b"0", b"1"]]
        np.testing.assert_allclose(scores, [[0.1906, 0.8094], [0.3269, 0.6731]], atol=1e-4)


# -- program 3: contrib heads through create_estimator_spec in plain graphs ---------------
def _head_spec(head, mode, dim, labels):
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.variable_scope("net"):
            logits = tf.layers.dense(x, dim, name="fc",
                                     kernel_initializer=tf.constant_initializer(0.3))
        spec = head.create_estimator_spec(
            features={"x": x}, mode=mode, logits=logits,
            labels=labels() if labels else None,
            train_op_fn=lambda loss: tf.train.GradientDescentOptimizer(0.5).minimize(
                loss, global_step=gs))
    return g, x, spec


_HEAD_X = np.array([[1., 2., 0.5], [-1., 0.3, 2.], [0.2, -0.4, 1.]], np.float32)


@pytest.mark.parametrize("kind", ["mc", "reg", "bin"])
def test_contrib_heads_in_train_eval_and_predict_modes(kind):
    ce = tf.contrib.estimator
    head, dim, labels, want = {
        "mc": (ce.multi_class_head(3, name="mc"), 3, lambda: tf.constant([[0], [2], [1]]),
               ("mc/GradientDescent", "loss/mc:0", 0.63871,
                {"accuracy/mc": 0.3333, "average_loss/mc": 1.0986})),
        "reg": (ce.regression_head(label_dimension=2), 2,
                lambda: tf.constant([[1., 0.], [0.5, 2.], [3., 1.]]),
                ("head/GradientDescent", "loss:0", 0.54994,
                 {"average_loss": 1.9841, "label/mean": 1.25, "prediction/mean": 0.56})),
        "bin": (ce.binary_classification_head(label_vocabulary=["no", "yes"]), 1,
                lambda: tf.constant([["yes"], ["no"], ["yes"]]),
                ("head/GradientDescent", "loss:0", 0.47992,
                 {"accuracy": 0.6667, "accuracy_baseline": 0.6667, "auc": 0.5,
                  "auc_precision_recall": 0.7917, "average_loss": 0.5958,
                  "label/mean": 0.6667, "precision": 0.6667, "prediction/mean": 0.6323,
                  "recall": 1.0})),
    }[kind]
    train_op_name, summary, loss_value, metrics = want
    g, x, spec = _head_spec(head, "train", dim, labels)
    assert spec.train_op.name == train_op_name and spec.loss.shape.as_list() == []
    assert [s.name for s in g.get_collection(tf.GraphKeys.SUMMARIES)] == [summary]
    with g.as_default(), tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for _ in range(3):
            _, loss = s.run([spec.train_op, spec.loss], {x: _HEAD_X})
    assert round(float(loss), 5) == loss_value
    g, x, spec = _head_spec(head, "eval", dim, labels)
    assert sorted(spec.eval_metric_ops) == sorted(metrics)
    with g.as_default(), tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
               tf.tables_initializer()])
        s.run({k: v[1] for k, v in spec.eval_metric_ops.items()}, {x: _HEAD_X})
        got = s.run({k: v[0] for k, v in spec.eval_metric_ops.items()})
    assert {k: round(float(v), 4) for k, v in got.items()} == metrics
    g, x, spec = _head_spec(head, "infer", dim, None)
    keys = {"mc": ["classification", "predict", "serving_default"],
            "reg": ["predict", "regression", "serving_default"],
            "bin": ["classification", "predict", "regression", "serving_default"]}[kind]
    assert sorted(spec.export_outputs) == keys


# -- program 4: raw receiver, assets_extra, as_text, checkpoint_path; tensor receiver -----
def test_raw_receiver_assets_extra_as_text_and_an_older_checkpoint(tmp_path):
    def model_fn(features, labels, mode):
        x = features["img"] if isinstance(features, dict) else features
        with tf.variable_scope("reg"):
            w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([[0.5], [-1.]]))
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        y = tf.matmul(x, w) + b
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, export_outputs={
                "serving_default": tf.estimator.export.RegressionOutput(y),
                "pred": tf.estimator.export.PredictOutput(y)})
        loss = tf.losses.mean_squared_error(labels, y)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model_dir = tmp_path / "m"
    est = tf.estimator.Estimator(model_fn, model_dir=str(model_dir), config=tf.estimator.RunConfig(
        save_checkpoints_steps=2, keep_checkpoint_max=5))
    X = np.array([[1., 2.], [3., 1.], [0., 1.]], np.float32)
    Y = np.array([[1.], [2.], [0.5]], np.float32)
    est.train(tf.estimator.inputs.numpy_input_fn({"img": X}, Y, batch_size=3, num_epochs=None,
                                                 shuffle=False), steps=4)
    assert sorted(f for f in os.listdir(model_dir) if f.endswith(".index")) == [
        "model.ckpt-0.index", "model.ckpt-2.index", "model.ckpt-4.index"]

    rfn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"img": tf.placeholder(tf.float32, [None, 2], name="whatever")})
    with tf.Graph().as_default():
        r = rfn()
        assert type(r).__name__ == "ServingInputReceiver"
        assert {k: (v.name, v.shape.as_list()) for k, v in r.receiver_tensors.items()} == {
            "img": ("whatever:0", [None, 2])}
    rfn5 = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"img": tf.placeholder(tf.float32, [4, 2])}, default_batch_size=5)
    with tf.Graph().as_default():
        r = rfn5()
        assert {k: (v.name, v.shape.as_list()) for k, v in r.receiver_tensors.items()} == {
            "img": ("Placeholder:0", [5, 2])}

    extra = tmp_path / "vocab.txt"
    extra.write_text("a\nb\n")
    ed = _s(est.export_savedmodel(str(tmp_path / "exp"), rfn,
                                  assets_extra={"vocab/v.txt": str(extra)}, as_text=True,
                                  checkpoint_path=str(model_dir / "model.ckpt-2")))
    layout = [(os.path.relpath(root, ed), sorted(dirs), sorted(files))
              for root, dirs, files in sorted(os.walk(ed))]
    assert layout == [(".", ["assets.extra", "variables"], ["saved_model.pbtxt"]),
                      ("assets.extra", ["vocab"], []), ("assets.extra/vocab", [], ["v.txt"]),
                      ("variables", [], ["variables.data-00000-of-00001", "variables.index"])]
    with tf.Graph().as_default(), tf.Session() as s:
        mg = tf.saved_model.loader.load(s, ["serve"], ed)
        # a RegressionOutput needs one string input: that signature is dropped
        assert sorted(mg.signature_def) == ["pred"]
        sd = mg.signature_def["pred"]
        assert (sd.method_name, sd.outputs["output"].name) == ("tensorflow/serving/predict",
                                                                "add:0")
        np.testing.assert_allclose(s.run("reg/w:0"), [[0.84667], [-0.4]], atol=1e-5)
        np.testing.assert_allclose(s.run(sd.outputs["output"].name, {sd.inputs["img"].name: X}),
                                   [[0.44], [2.53333], [-0.00667]], atol=1e-5)

    def tensor_fn():
        t = tf.placeholder(tf.float32, [None, 2], name="images")
        return tf.estimator.export.TensorServingInputReceiver(t, {"raw": t})

    ed2 = _s(est.export_saved_model(str(tmp_path / "exp2"), tensor_fn))
    with tf.Graph().as_default(), tf.Session() as s:
        mg = tf.saved_model.loader.load(s, ["serve"], ed2)
        assert {k: ({n: t.name for n, t in v.inputs.items()}, v.method_name)
                for k, v in mg.signature_def.items()} == {
            "pred": ({"raw": "images:0"}, "tensorflow/serving/predict")}
    with pytest.raises(ValueError):
        est.export_savedmodel(str(tmp_path / "exp3"), rfn,
                              checkpoint_path=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="must be a Tensor"):
        tf.estimator.export.ServingInputReceiver({"x": 3}, tf.placeholder(tf.float32))


# -- program 5: a hand-built SavedModel, loaded in a fresh process -------------------------
_LOAD_IN_FRESH_PROCESS = r'''
import sys, numpy as np, flowgraph as tf
with tf.Session(graph=tf.Graph()) as s:
    mg = tf.saved_model.loader.load(s, ["serve"], sys.argv[1])
    print(sorted(mg.signature_def), sorted(mg.collection_def), len(mg.asset_file_def))
    sd = mg.signature_def["serving_default"]
    X = np.array([[1, 0, 2, 1], [0.5, -1, 0, 3]], np.float32)
    probs = s.run(sd.outputs["probs"].name, {sd.inputs["x"].name: X})
    print(np.round(probs.astype(np.float64), 5).tolist())
    print([v.name for v in tf.global_variables()])
    print(s.run(mg.signature_def["classify"].outputs["classes"].name, {"input_x:0": X}).tolist())
'''


def test_saved_model_builder_with_signature_utils_assets_and_main_op(tmp_path):
    export_dir = str(tmp_path / "model" / "1")
    vocab = tmp_path / "labels.txt"
    vocab.write_text("cat\ndog\nbird\n")
    with tf.Graph().as_default():
        tf.set_random_seed(42)
        x = tf.placeholder(tf.float32, [None, 4], name="input_x")
        ser = tf.placeholder(tf.string, [None], name="tf_example")
        with tf.variable_scope("mlp"):
            w = tf.get_variable("w", [4, 3], initializer=tf.random_normal_initializer(seed=1))
            b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        logits = tf.nn.xw_plus_b(x, w, b, name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        asset = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            asset, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE), "UNK")
        topv, topi = tf.nn.top_k(probs, 2)
        cls = table.lookup(tf.cast(topi, tf.int64))
        tf.get_variable("serve_counter", [], tf.int64, initializer=tf.zeros_initializer(),
                        trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        ti = tf.saved_model.utils.build_tensor_info(x)
        assert (ti.name, ti.dtype, _dims(ti), ti.tensor_shape.unknown_rank) == (
            "input_x:0", 1, [-1, 4], False)
        sdu = tf.saved_model.signature_def_utils
        pred_sig = sdu.predict_signature_def({"x": x}, {"probs": probs, "logits": logits})
        cls_sig = sdu.classification_signature_def(ser, cls, topv)
        reg_sig = sdu.regression_signature_def(ser, tf.reduce_max(probs, 1, keepdims=True))
        assert [(s.method_name, sorted((k, v.name) for k, v in s.outputs.items()))
                for s in (pred_sig, cls_sig, reg_sig)] == [
            ("tensorflow/serving/predict", [("logits", "logits:0"), ("probs", "probs:0")]),
            ("tensorflow/serving/classify", [
                ("classes", "hash_table_Lookup/LookupTableFindV2:0"), ("scores", "TopKV2:0")]),
            ("tensorflow/serving/regress", [("outputs", "Max:0")])]
        assert sdu.is_valid_signature(pred_sig) and sdu.is_valid_signature(cls_sig)
        with pytest.raises(ValueError, match="Classification input tensors must be of type "
                                             "string"):
            sdu.classification_signature_def(x, cls, topv)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": pred_sig, "classify": cls_sig,
                                   "regress": reg_sig},
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.group(tf.local_variables_initializer(), tf.tables_initializer(),
                                 name="my_main_op"))
            assert os.path.relpath(_s(builder.save()), str(tmp_path)) == "model/1/saved_model.pb"
    assert [(os.path.relpath(root, export_dir), sorted(files))
            for root, _, files in sorted(os.walk(export_dir))] == [
        (".", ["saved_model.pb"]), ("assets", ["labels.txt"]),
        ("variables", ["variables.data-00000-of-00001", "variables.index"])]
    out = subprocess.run([sys.executable, "-c", _LOAD_IN_FRESH_PROCESS, export_dir],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [
        "['classify', 'regress', 'serving_default'] ['asset_filepaths', 'local_variables', "
        "'saved_model_assets', 'saved_model_main_op', 'table_initializer', "
        "'trainable_variables', 'variables'] 0",
        "[[0.02475, 0.00035, 0.9749], [0.06377, 0.00028, 0.93596]]",
        "['mlp/w:0', 'mlp/b:0']",
        "[[b'bird', b'cat'], [b'bird', b'cat']]"]


# -- program 6: train_and_evaluate with Latest/Best/Final exporters ------------------------
def test_train_and_evaluate_with_latest_best_and_final_exporters(tmp_path):
    def model_fn(features, labels, mode):
        with tf.variable_scope("lin"):
            y = tf.layers.dense(features["x"], 1, name="d",
                                kernel_initializer=tf.zeros_initializer())
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
        loss = tf.losses.mean_squared_error(labels, y)
        return tf.estimator.EstimatorSpec(
            mode, loss=loss,
            eval_metric_ops={"rmse": tf.metrics.root_mean_squared_error(labels, y)},
            train_op=tf.train.GradientDescentOptimizer(0.05).minimize(
                loss, tf.train.get_global_step()))

    X = np.linspace(-1, 1, 20).reshape(10, 2).astype(np.float32)
    Y = X.sum(1, keepdims=True) * 2 + 1
    model_dir = tmp_path / "m"
    est = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=str(model_dir), save_checkpoints_steps=3, tf_random_seed=0,
        keep_checkpoint_max=10))
    sfn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2])})
    latest = tf.estimator.LatestExporter("latest", sfn, exports_to_keep=2)
    best = tf.estimator.BestExporter(
        name="best", serving_input_receiver_fn=sfn, exports_to_keep=1,
        compare_fn=lambda best_eval_result, current_eval_result:
            current_eval_result["rmse"] < best_eval_result["rmse"])
    final = tf.estimator.FinalExporter("final", sfn)
    assert (latest.name, best.name, final.name) == ("latest", "best", "final")
    train = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=5, num_epochs=None, shuffle=False), max_steps=9)
    evals = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=10, num_epochs=1, shuffle=False), steps=None,
        exporters=[latest, best, final], throttle_secs=0, start_delay_secs=0)
    metrics, exports = tf.estimator.train_and_evaluate(est, train, evals)
    assert {k: round(float(v), 4) for k, v in metrics.items()} == {
        "global_step": 9.0, "loss": 1.7123, "rmse": 1.3086}
    assert len(exports) == 3
    export_root = model_dir / "export"
    assert sorted(os.listdir(export_root)) == ["best", "final", "latest"]
    assert {n: len(os.listdir(export_root / n)) for n in os.listdir(export_root)} == {
        "best": 1, "final": 1, "latest": 2}
    assert all(d.isdigit() for n in ("best", "final", "latest")
               for d in os.listdir(export_root / n))
    with pytest.raises(ValueError, match="exports_to_keep"):
        tf.estimator.LatestExporter("bad", sfn, exports_to_keep=0)
    with pytest.raises(ValueError, match="must include best_eval_result"):
        tf.estimator.BestExporter(compare_fn=lambda a: True, serving_input_receiver_fn=sfn)
    with pytest.raises(ValueError, match="`exporters` must have unique names"):
        tf.estimator.EvalSpec(evals.input_fn,
                              exporters=[latest, tf.estimator.LatestExporter("latest", sfn)])


# -- program 7: a MultiHead of three heads, per-head signatures ---------------------------
def test_multi_head_estimator_exports_per_head_signatures(tmp_path):
    head = tf.estimator.MultiHead([
        tf.estimator.MultiClassHead(3, name="topic", label_vocabulary=["sport", "tech", "art"]),
        tf.estimator.MultiLabelHead(4, name="tags", thresholds=[0.4]),
        tf.estimator.RegressionHead(name="score")], head_weights=[1., 0.5, 2.])
    assert (head.name, head.logits_dimension) == ("topic_tags_score", 8)

    def model_fn(features, labels, mode):
        init = tf.glorot_uniform_initializer
        with tf.variable_scope("shared"):
            h = tf.layers.dense(features["x"], 6, tf.nn.tanh, name="h",
                                kernel_initializer=init(seed=5))
        logits = {name: tf.layers.dense(h, dim, name=f"{name}_logits",
                                        kernel_initializer=init(seed=seed))
                  for name, dim, seed in (("topic", 3, 6), ("tags", 4, 7), ("score", 1, 8))}
        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels,
            train_op_fn=lambda loss: tf.train.AdamOptimizer(0.05).minimize(
                loss, tf.train.get_global_step()))

    rng = np.random.RandomState(1)
    X = rng.rand(12, 5).astype(np.float32)
    labels = {"topic": np.array([[b"sport"], [b"tech"], [b"art"]] * 4),
              "tags": (rng.rand(12, 4) > 0.5).astype(np.int64),
              "score": rng.rand(12, 1).astype(np.float32)}
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(tf_random_seed=3))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, labels, batch_size=6, num_epochs=None,
                                                 shuffle=False), steps=6)
    m = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, labels, batch_size=12,
                                                        num_epochs=1, shuffle=False))
    assert {k: round(float(v), 4) for k, v in m.items()} == {
        "accuracy/positive_threshold_0.4/tags": 0.5833, "accuracy/topic": 0.6667,
        "auc/tags": 0.7554, "auc_precision_recall/tags": 0.8174, "average_loss/score": 0.2325,
        "average_loss/tags": 0.6101, "average_loss/topic": 0.9386, "global_step": 6.0,
        "label/mean/score": 0.5801, "loss": 1.7087, "loss/score": 0.2325, "loss/tags": 0.6101,
        "loss/topic": 0.9386, "precision/positive_threshold_0.4/tags": 0.5833,
        "prediction/mean/score": 0.7615, "recall/positive_threshold_0.4/tags": 1.0}
    ed = _s(est.export_saved_model(str(tmp_path / "export"),
                                   tf.estimator.export.build_raw_serving_input_receiver_fn(
                                       {"x": tf.placeholder(tf.float32, [None, 5], name="x")})))
    with tf.Graph().as_default(), tf.Session() as s:
        mg = tf.saved_model.loader.load(s, ["serve"], ed)
        sigs = {k: (v.method_name, sorted(v.inputs), sorted(v.outputs))
                for k, v in mg.signature_def.items()}
        # serving_default (topic's ClassificationOutput) needs a string input: dropped
        assert sorted(sigs) == ["predict", "score/predict", "tags/predict", "topic/predict"]
        assert sigs["score/predict"] == ("tensorflow/serving/predict", ["x"], ["predictions"])
        assert sigs["tags/predict"][2] == ["classes", "logits", "probabilities"]
        assert mg.signature_def["tags/predict"].outputs["classes"].name == \
            "topic_tags_score/tags/predictions/Tile:0"
        assert "topic/all_classes" in sigs["predict"][2]


# -- program 8: contrib predictors over an export and over an estimator -------------------
def test_contrib_predictor_from_saved_model_and_from_estimator(tmp_path):
    def model_fn(features, labels, mode):
        with tf.variable_scope("m"):
            w = tf.get_variable("w", [3, 2], initializer=tf.constant_initializer(
                [[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]]))
        logits = tf.matmul(features["x"], w)
        probs = tf.nn.softmax(logits)
        if mode == tf.estimator.ModeKeys.PREDICT:
            ids = tf.argmax(logits, 1)
            out = tf.estimator.export.PredictOutput
            return tf.estimator.EstimatorSpec(
                mode, predictions={"probs": probs, "ids": ids},
                export_outputs={"serving_default": out({"probs": probs}),
                                "ids": out({"ids": ids})})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(
            loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    X = np.array([[1, 2, 3], [0, -1, 1], [2, 0, 0]], np.float32)
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, np.array([0, 1, 1]), batch_size=3,
                                                 num_epochs=None, shuffle=False), steps=2)
    sfn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3])})
    ed = _s(est.export_savedmodel(str(tmp_path / "exp"), sfn))
    want = [[0.8522, 0.1478], [0.2786, 0.7214], [0.45012, 0.54988]]
    pred = tf.contrib.predictor.from_saved_model(ed)
    assert sorted(pred.feed_tensors) == ["x"]
    assert {k: v.name for k, v in pred.fetch_tensors.items()} == {"probs": "Softmax:0"}
    np.testing.assert_allclose(pred({"x": X})["probs"], want, atol=1e-5)
    ids = tf.contrib.predictor.from_saved_model(ed, signature_def_key="ids")({"x": X})
    assert ids["ids"].tolist() == [0, 1, 1]
    np.testing.assert_allclose(tf.contrib.predictor.from_estimator(est, sfn)({"x": X})["probs"],
                               want, atol=1e-5)
    with pytest.raises(ValueError, match="nope"):
        tf.contrib.predictor.from_saved_model(ed, signature_def_key="nope")


# -- program 9: a parsing receiver with raw alternatives; every mode exported -------------
def _clf_model_fn(features, labels, mode):
    with tf.variable_scope("clf"):
        logits = tf.layers.dense(features["x"], 2, name="fc",
                                 kernel_initializer=tf.constant_initializer(0.2))
    probs = tf.nn.softmax(logits, name="p")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=probs, export_outputs={
            "serving_default": tf.estimator.export.ClassificationOutput(scores=probs),
            "reg": tf.estimator.export.RegressionOutput(value=probs[:, 1:]),
            "pr": tf.estimator.export.PredictOutput({"p": probs})})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={"acc": tf.metrics.accuracy(labels, tf.argmax(logits, 1))},
        train_op=tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step()))


def _parsing_receiver_with_alternatives():
    ser = tf.placeholder(tf.string, [None], name="input_example_tensor")
    feats = tf.parse_example(ser, {"x": tf.FixedLenFeature([2], tf.float32)})
    raw = tf.placeholder(tf.float32, [None, 2], name="raw_x")
    return tf.estimator.export.ServingInputReceiver(
        feats, {"examples": ser}, receiver_tensors_alternatives={"raw": {"x": raw}, "raw_t": raw})


_CLF_X = np.array([[1., 2.], [2., -1.]], np.float32)


def _trained_clf(tmp_path):
    est = tf.estimator.Estimator(_clf_model_fn, model_dir=str(tmp_path / "m"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": _CLF_X}, np.array([0, 1]), batch_size=2,
                                                 num_epochs=None, shuffle=False), steps=2)
    return est


def test_receiver_alternatives_and_an_export_of_every_mode(tmp_path):
    est = _trained_clf(tmp_path)
    with tf.Graph().as_default():
        r = _parsing_receiver_with_alternatives()
        assert {k: sorted(v) for k, v in r.receiver_tensors_alternatives.items()} == {
            "raw": ["x"], "raw_t": ["input"]}
    ed = _s(est.export_savedmodel(str(tmp_path / "e"), _parsing_receiver_with_alternatives))
    with tf.Graph().as_default(), tf.Session() as s:
        mg = tf.saved_model.loader.load(s, ["serve"], ed)
        assert {k: (v.method_name, sorted((n, t.name) for n, t in v.inputs.items()),
                    sorted((n, t.name) for n, t in v.outputs.items()))
                for k, v in mg.signature_def.items()} == {
            "pr": ("tensorflow/serving/predict", [("examples", "input_example_tensor:0")],
                   [("p", "p:0")]),
            "reg": ("tensorflow/serving/regress", [("inputs", "input_example_tensor:0")],
                    [("outputs", "strided_slice:0")]),
            "serving_default": ("tensorflow/serving/classify",
                                [("inputs", "input_example_tensor:0")], [("scores", "p:0")])}
        sd = mg.signature_def["serving_default"]
        np.testing.assert_allclose(
            s.run(sd.outputs["scores"].name, {sd.inputs["inputs"].name: [_example([1., 2.])]}),
            [[0.85897, 0.14103]], atol=1e-5)
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2])}, tf.placeholder(tf.int64, [None]))
    ed = _s(est.experimental_export_all_saved_models(str(tmp_path / "all"), {
        tf.estimator.ModeKeys.PREDICT: _parsing_receiver_with_alternatives,
        tf.estimator.ModeKeys.EVAL: supervised, tf.estimator.ModeKeys.TRAIN: supervised}))
    assert sorted(os.listdir(ed)) == ["saved_model.pb", "variables"]
    supervised_keys = ["global_step", "local_variables", "losses", "metric_variables",
                       "saved_model_main_op", "saved_model_train_op", "train_op",
                       "trainable_variables", "variables"]
    for tags, sigs, method, keys in (
            (["serve"], ["pr", "reg", "serving_default"], None,
             ["global_step", "saved_model_main_op", "trainable_variables", "variables"]),
            (["eval"], ["eval"], "tensorflow/supervised/eval", supervised_keys),
            (["train"], ["train"], "tensorflow/supervised/training", supervised_keys)):
        with tf.Graph().as_default() as g, tf.Session() as s:
            mg = tf.saved_model.loader.load(s, tags, ed)
            assert sorted(mg.signature_def) == sigs
            if method:
                sd = mg.signature_def[sigs[0]]
                assert (sd.method_name, sorted(sd.inputs), sorted(sd.outputs)) == (
                    method, ["label", "x"], ["loss", "metrics/acc/update_op",
                                             "metrics/acc/value"])
            assert sorted(v.name for v in tf.global_variables()) == [
                "clf/fc/bias:0", "clf/fc/kernel:0", "global_step:0"]
            assert sorted(g.get_all_collection_keys()) == keys


# -- focused tests, one per fixed class --------------------------------------------------
def test_classification_output_tiles_the_class_names_in_the_head_scope():
    with tf.Graph().as_default():
        logits = tf.placeholder(tf.float32, [None, 3])
        for head, lg in ((tf.estimator.BinaryClassHead(name="b"), logits[:, :1]),
                         (tf.estimator.MultiClassHead(3, name="m",
                                                      label_vocabulary=["a", "b", "c"]), logits),
                         (tf.estimator.MultiLabelHead(3, name="l"), logits)):
            spec = head.create_estimator_spec(features={}, mode="infer", logits=lg)
            out = spec.export_outputs["classification"]
            assert out.classes.name == f"{head.name}/Tile:0"
            assert spec.export_outputs["serving_default"] is out
            with tf.Session() as s:
                s.run(tf.tables_initializer())
                classes = s.run(out.classes, {logits: np.zeros([2, 3], np.float32)})
            want = {"b": [b"0", b"1"], "m": [b"a", b"b", b"c"], "l": [b"0", b"1", b"2"]}
            assert classes.tolist() == [want[head.name]] * 2


def test_contrib_heads_are_tf1_v1_heads_train_op_scope_and_trapezoidal_pr_auc():
    logits = np.array([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3], [-2.0, 0.7, 0.1], [0.3, 0.3, -1.2]],
                      np.float32)
    labels = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 0], [0, 0, 1]], np.int64)
    # TF: tf.metrics.auc(curve="PR") of sigmoid(logits) sums trapezoids (0.86887); the
    # Keras-style interpolation that TF2's heads use gives 0.86919.
    for head, want in ((tf.contrib.estimator.multi_label_head(3), 0.86887),
                       (tf.estimator.MultiLabelHead(3), 0.86919)):
        with tf.Graph().as_default(), tf.Session() as s:
            spec = head.create_estimator_spec(features={}, mode="eval",
                                              logits=tf.constant(logits),
                                              labels=tf.constant(labels))
            s.run(tf.local_variables_initializer())
            s.run(spec.eval_metric_ops["auc_precision_recall"][1])
            assert round(float(s.run(spec.eval_metric_ops["auc_precision_recall"][0])), 5) == want
    for make, train_op in ((tf.contrib.estimator.regression_head, "head/GradientDescent"),
                           (tf.estimator.RegressionHead, "training/GradientDescent")):
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            w = tf.Variable([[1.0]], name="w")
            spec = make().create_estimator_spec(
                features={}, mode="train", logits=tf.matmul(tf.ones([2, 1]), w),
                labels=tf.zeros([2, 1]),
                train_op_fn=lambda loss, step=gs: tf.train.GradientDescentOptimizer(
                    0.1).minimize(loss, step))
            assert spec.train_op.name == train_op


def test_saved_model_builder_keeps_assets_in_the_collection_only(tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("a\n")
    path = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as s:
        asset = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        b = tf.saved_model.builder.SavedModelBuilder(path)
        b.add_meta_graph_and_variables(
            s, ["serve"], assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            signature_def_map={"serving_default": tf.saved_model.predict_signature_def(
                {"p": asset}, {"o": tf.identity(asset, name="o")})})
        b.save()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        (mg,) = SavedModelProto.FromString(f.read()).meta_graphs
    assert list(mg.asset_file_def) == []
    items = mg.collection_def["saved_model_assets"].any_list.value
    assert [(AssetFileDefProto.FromString(i.value).tensor_info.name,
             AssetFileDefProto.FromString(i.value).filename) for i in items] == [
        ("vocab_path:0", "v.txt"), ("vocab_path:0", "v.txt")]
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], path)
        assert list(meta.asset_file_def) == []
        assert s.run("o:0").endswith(b"assets/v.txt")


def test_loader_restores_the_metric_variables_collection(tmp_path):
    path = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as s:
        a = tf.placeholder(tf.int64, [None], name="a")
        tf.metrics.accuracy(a, a)
        tf.Variable(1.0, name="w")
        s.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        b = tf.saved_model.builder.SavedModelBuilder(path)
        b.add_meta_graph_and_variables(s, ["serve"])
        b.save()
    with tf.Graph().as_default() as g, tf.Session() as s:
        tf.saved_model.loader.load(s, ["serve"], path)
        assert sorted(g.get_all_collection_keys()) == [
            "local_variables", "metric_variables", "trainable_variables", "variables"]
        assert [v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == [
            "accuracy/total:0", "accuracy/count:0"]


def test_contrib_estimator_export_helpers_of_tf1(tmp_path):
    est = _trained_clf(tmp_path)
    ce = tf.contrib.estimator
    assert ce.build_raw_supervised_input_receiver_fn is \
        tf.estimator.experimental.build_raw_supervised_input_receiver_fn
    fn = ce.build_supervised_input_receiver_fn_from_input_fn(tf.estimator.inputs.numpy_input_fn(
        {"x": _CLF_X}, np.array([0, 1]), batch_size=2, shuffle=False))
    with tf.Graph().as_default():
        r = fn()
        assert sorted((k, v.dtype, v.shape.as_list()) for k, v in r.receiver_tensors.items()) == [
            ("label", tf.int64, [None]), ("x", tf.float32, [None, 2])]
    ed = _s(ce.export_saved_model_for_mode(est, str(tmp_path / "e"), fn, mode="eval"))
    ed_all = _s(ce.export_all_saved_models(est, str(tmp_path / "a"), {
        "train": fn, "infer": _parsing_receiver_with_alternatives}))
    for path, tags, sigs in ((ed, ["eval"], ["eval"]), (ed_all, ["train"], ["train"]),
                             (ed_all, ["serve"], ["pr", "reg", "serving_default"])):
        with tf.Graph().as_default(), tf.Session() as s:
            assert sorted(tf.saved_model.loader.load(s, tags, path).signature_def) == sigs
    with pytest.raises(TypeError, match="Estimator"):
        ce.export_saved_model_for_mode(object(), str(tmp_path / "x"), fn)
    with pytest.raises(ValueError, match="input_fn must return"):
        ce.build_supervised_input_receiver_fn_from_input_fn(lambda: {"x": tf.zeros([2])})
