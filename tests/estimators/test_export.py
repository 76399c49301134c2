"""Estimator.export_saved_model, tf.estimator.export receivers/outputs, and exporters."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.estimators import export as ex
from flowgraph.estimators import exporter as exporter_lib
from flowgraph.estimators.estimator import Estimator
from flowgraph.estimators.export_impl import get_export_outputs
from flowgraph.estimators.model_fn import EstimatorSpec, ModeKeys

X = np.arange(24, dtype=np.float32).reshape(8, 3) / 10.0
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)
Y = X @ TRUE_W


def _model_fn(features, labels, mode, params):
    x = features["x"] if isinstance(features, dict) else features
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    pred = tf.matmul(x, w)
    if mode == ModeKeys.PREDICT:
        outputs = params.get("export_outputs")
        return EstimatorSpec(mode, predictions={"y": pred},
                             export_outputs=outputs(pred) if outputs else None)
    loss = tf.reduce_mean(tf.square(pred - labels))
    (grad,) = tf.gradients(loss, [w])
    train_op = tf.group(tf.assign_sub(w, 0.2 * grad),
                        tf.assign_add(tf.train.get_global_step(), 1))
    return EstimatorSpec(mode, predictions={"y": pred}, loss=loss, train_op=train_op)


def _input_fn():
    return {"x": tf.constant(X)}, tf.constant(Y)


def _raw_receiver():
    return ex.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3], name="x")})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = Estimator(_model_fn, model_dir=str(tmp_path_factory.mktemp("model")), params={})
    est.train(_input_fn, steps=30)
    return est


def test_export_writes_timestamped_version_and_predicts_like_the_checkpoint(trained,
                                                                             tmp_path):
    before = int(time.time())
    path = trained.export_saved_model(str(tmp_path), _raw_receiver())
    assert isinstance(path, bytes)
    name = os.path.basename(os.fsdecode(path))
    assert name.isdigit() and int(name) >= before
    assert os.listdir(tmp_path) == [name]  # the temp-<ts> directory was renamed
    w = trained.get_variable_value("w")
    with sm.load(path) as model:
        sig = model.signatures["serving_default"]
        assert sig.method_name == sm.PREDICT_METHOD_NAME
        assert sorted(sig.inputs) == ["x"] and sorted(sig.outputs) == ["y"]
        np.testing.assert_allclose(model(x=X)["y"], X @ w, rtol=1e-5)


def test_two_exports_get_distinct_increasing_versions(trained, tmp_path):
    a = trained.export_saved_model(str(tmp_path), _raw_receiver())
    b = trained.export_saved_model(str(tmp_path), _raw_receiver())
    assert int(os.path.basename(b)) > int(os.path.basename(a))


def test_export_without_checkpoint_raises(tmp_path):
    est = Estimator(_model_fn, model_dir=str(tmp_path / "empty"), params={})
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "out"), _raw_receiver())
    assert not os.path.exists(tmp_path / "out") or os.listdir(tmp_path / "out") == []


def test_export_assets_extra_and_explicit_checkpoint(trained, tmp_path):
    extra = tmp_path / "readme.txt"
    extra.write_text("hello")
    path = trained.export_saved_model(
        str(tmp_path / "out"), _raw_receiver(), assets_extra={"docs/readme.txt": str(extra)},
        as_text=True, checkpoint_path=trained.latest_checkpoint())
    assert open(os.path.join(os.fsdecode(path), "assets.extra", "docs",
                             "readme.txt")).read() == "hello"
    with pytest.raises(ValueError, match="relative path"):
        trained.export_saved_model(str(tmp_path / "out2"), _raw_receiver(),
                                   assets_extra={"../escape.txt": str(extra)})
    assert not any(n.startswith("temp-") for n in os.listdir(tmp_path / "out2"))


def test_export_with_regression_and_predict_outputs(tmp_path):
    def outputs(pred):
        return {"serving_default": ex.PredictOutput({"y": pred}),
                "regress": ex.RegressionOutput(tf.reshape(pred, [-1]))}

    est = Estimator(_model_fn, model_dir=str(tmp_path / "m"),
                    params={"export_outputs": outputs})
    est.train(_input_fn, steps=2)

    def receiver():
        examples = tf.placeholder(tf.string, [None], name="examples")
        x = tf.placeholder_with_default(np.zeros((1, 3), np.float32), [None, 3], name="x")
        return ex.ServingInputReceiver({"x": x}, {"examples": examples},
                                       receiver_tensors_alternatives={"raw": {"x": x}})

    path = est.export_saved_model(str(tmp_path / "out"), receiver)
    with sm.load(path) as model:
        keys = sorted(model.signatures)
        # 'regress' needs one string input: valid for the main receiver only; the predict
        # signature exists for both receivers.
        assert keys == ["raw:serving_default", "regress", "serving_default"]
        assert model.signatures["regress"].method_name == sm.REGRESS_METHOD_NAME


def test_get_export_outputs_defaults_and_errors():
    pred = tf.constant([[1.0]])
    outs = get_export_outputs(None, {"y": pred})
    assert list(outs) == ["serving_default"]
    assert isinstance(outs["serving_default"], ex.PredictOutput)
    outs = get_export_outputs({"mine": ex.PredictOutput(pred)}, None)
    assert sorted(outs) == ["mine", "serving_default"]
    with pytest.raises(ValueError, match="none of them is the default"):
        get_export_outputs({"a": ex.PredictOutput(pred), "b": ex.PredictOutput(pred)}, None)
    with pytest.raises(TypeError, match="ExportOutput"):
        get_export_outputs({"a": pred}, None)


def test_serving_input_receivers():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    r = ex.ServingInputReceiver(x, x)
    assert list(r.features) == ["feature"] and list(r.receiver_tensors) == ["input"]
    assert r.receiver_tensors_alternatives is None
    with pytest.raises(ValueError, match="feature keys must be strings"):
        ex.ServingInputReceiver({1: x}, x)
    with pytest.raises(ValueError, match="must be a Tensor"):
        ex.ServingInputReceiver({"x": 3.0}, x)
    with pytest.raises(ValueError, match="receiver_tensors_alternatives must be a dict"):
        ex.ServingInputReceiver(x, x, receiver_tensors_alternatives=[x])
    t = ex.TensorServingInputReceiver(x, {"x": x})
    assert t.features is x
    with pytest.raises(ValueError, match="features must be a Tensor"):
        ex.TensorServingInputReceiver({"x": x}, {"x": x})


def test_build_raw_serving_input_receiver_fn_mirrors_features():
    with tf.Graph().as_default():
        feats = {"a": tf.placeholder(tf.float32, [7, 3], name="a"),
                 "b": tf.placeholder(tf.int64, [7], name="b_ids")}
    fn = ex.build_raw_serving_input_receiver_fn(feats, default_batch_size=5)
    with tf.Graph().as_default():
        r = fn()
        assert r.features["a"].shape.as_list() == [5, 3]
        assert r.features["b"].dtype == tf.int64 and r.features["b"].op.name == "b_ids"
        assert r.features == r.receiver_tensors


def test_export_output_validation():
    ints = tf.zeros([2], tf.int32)
    floats = tf.zeros([2, 3])
    with pytest.raises(ValueError, match="scores must be a float32"):
        ex.ClassificationOutput(scores=ints)
    with pytest.raises(ValueError, match="classes must be a string"):
        ex.ClassificationOutput(classes=ints)
    with pytest.raises(ValueError, match="empty arguments"):
        ex.ClassificationOutput()
    with pytest.raises(ValueError, match="Regression output value must be a float32"):
        ex.RegressionOutput(ints)
    with pytest.raises(ValueError, match="output value must be a Tensor"):
        ex.PredictOutput({"a": 1.0})
    assert list(ex.PredictOutput(floats).outputs) == ["output"]
    assert list(ex.PredictOutput({("a", "b"): floats}).outputs) == ["a/b"]
    c = ex.ClassificationOutput(scores=floats)
    with pytest.raises(ValueError, match=r"single tensor input of type tf\.string"):
        c.as_signature_def({"x": floats})
    examples = tf.placeholder(tf.string, [None])
    sig = c.as_signature_def({"examples": examples})
    assert sig.method_name == sm.CLASSIFY_METHOD_NAME and list(sig.outputs) == ["scores"]


def test_build_parsing_serving_input_receiver_fn():
    parsing = pytest.importorskip("flowgraph.ops.parsing_ops")
    if not hasattr(parsing, "parse_example") or not hasattr(parsing, "FixedLenFeature"):
        pytest.skip("parse_example not available yet")
    fn = ex.build_parsing_serving_input_receiver_fn(
        {"x": parsing.FixedLenFeature([3], tf.float32)}, default_batch_size=None)
    r = fn()
    assert list(r.receiver_tensors) == ["examples"]
    assert r.receiver_tensors["examples"].op.name == "input_example_tensor"
    assert r.features["x"].shape.as_list() == [None, 3]


# -- exporters ----------------------------------------------------------------------------------
class _FakeEstimator:
    """Records exports; creates a timestamp-like directory per export."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.calls = []
        self._next = 1_700_000_000

    def export_saved_model(self, export_dir_base, receiver_fn, assets_extra=None,
                           as_text=False, checkpoint_path=None):
        self._next += 1
        path = os.path.join(export_dir_base, str(self._next))
        os.makedirs(path)
        self.calls.append(checkpoint_path)
        return os.fsencode(path)


def test_latest_exporter_keeps_newest(tmp_path):
    est = _FakeEstimator(str(tmp_path))
    base = str(tmp_path / "export" / "latest")
    os.makedirs(os.path.join(base, "not_a_version"))
    e = exporter_lib.LatestExporter("latest", lambda: None, exports_to_keep=2)
    assert e.name == "latest"
    paths = [e.export(est, base, f"ckpt-{i}", {"loss": 1.0}, False) for i in range(4)]
    assert sorted(os.listdir(base)) == sorted(
        [os.path.basename(os.fsdecode(p)) for p in paths[-2:]] + ["not_a_version"])
    with pytest.raises(ValueError, match="positive"):
        exporter_lib.LatestExporter("latest", lambda: None, exports_to_keep=0)


def test_final_exporter_exports_only_at_the_end(tmp_path):
    est = _FakeEstimator(str(tmp_path))
    e = exporter_lib.FinalExporter("final", lambda: None)
    assert e.export(est, str(tmp_path / "f"), "c1", {}, False) is None
    assert e.export(est, str(tmp_path / "f"), "c2", {}, True) is not None
    assert est.calls == ["c2"]


def test_best_exporter_compares_loss_and_reads_event_files(tmp_path):
    from flowgraph.summary.event_format import Summary
    from flowgraph.summary.writer import FileWriter

    est = _FakeEstimator(str(tmp_path))
    writer = FileWriter(str(tmp_path / "eval"))
    s = Summary()
    s.value.add(tag="loss", simple_value=0.5)
    writer.add_summary(s, 10)
    writer.close()
    e = exporter_lib.BestExporter(serving_input_receiver_fn=lambda: None, exports_to_keep=1)
    base = str(tmp_path / "export" / "best")
    # TF 2.15 always exports on the first call (the event files it just read hold the
    # evaluation that triggered it), even when worse than 0.5 on disk
    assert e.export(est, base, "c1", {"loss": 0.7}, False) is not None
    assert e.export(est, base, "c2", {"loss": 0.4}, False) is not None
    assert e.export(est, base, "c3", {"loss": 0.45}, False) is None
    assert e.export(est, base, "c4", {"loss": 0.1}, False) is not None
    assert est.calls == ["c1", "c2", "c4"] and len(os.listdir(base)) == 1
    with pytest.raises(ValueError, match="best_eval_result"):
        exporter_lib.BestExporter(compare_fn=lambda a, b: True)
    with pytest.raises(ValueError, match="no loss"):
        exporter_lib._loss_smaller({"acc": 1.0}, {"loss": 1.0})
