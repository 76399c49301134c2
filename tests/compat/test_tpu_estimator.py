"""TPUEstimator on the CPU (``use_tpu=False``), `tf.tpu`, `tf.contrib.tpu`, the cluster
resolvers' TPU entry and the rest of `tf.estimator.experimental`.

Every expected value comes from TensorFlow 2.15 (tensorflow-estimator 2.15) running the
same code: ``/work/shared/tools/tf-oracle`` on ``tpu_bert_program.py`` (beside this file)
and on the scripts ``/tmp/s16/wild/tpu_*.py``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import urllib.error

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators.experimental_extras import _stop_at_checkpoint_step_hook

TPU = tf.estimator.tpu
HERE = os.path.dirname(os.path.abspath(__file__))


# -- the BERT-style program, in a fresh process -----------------------------------------------
# TensorFlow's variables of the program, layer_1 left out (it repeats layer_0): each
# trainable variable has AdamWeightDecayOptimizer's `adam_m` and `adam_v` beside it.
BERT_BASES = [
    "bert/embeddings/LayerNorm/beta", "bert/embeddings/LayerNorm/gamma",
    "bert/embeddings/position_embeddings", "bert/embeddings/token_type_embeddings",
    "bert/embeddings/word_embeddings", "bert/encoder/layer_0/attention/output/LayerNorm/beta",
    "bert/encoder/layer_0/attention/output/LayerNorm/gamma",
    "bert/encoder/layer_0/attention/output/dense/bias",
    "bert/encoder/layer_0/attention/output/dense/kernel",
    "bert/encoder/layer_0/attention/self/key/bias",
    "bert/encoder/layer_0/attention/self/key/kernel",
    "bert/encoder/layer_0/attention/self/query/bias",
    "bert/encoder/layer_0/attention/self/query/kernel",
    "bert/encoder/layer_0/attention/self/value/bias",
    "bert/encoder/layer_0/attention/self/value/kernel",
    "bert/encoder/layer_0/intermediate/dense/bias",
    "bert/encoder/layer_0/intermediate/dense/kernel",
    "bert/encoder/layer_0/output/LayerNorm/beta", "bert/encoder/layer_0/output/LayerNorm/gamma",
    "bert/encoder/layer_0/output/dense/bias", "bert/encoder/layer_0/output/dense/kernel",
    "bert/pooler/dense/bias", "bert/pooler/dense/kernel", "global_step", "output_bias",
    "output_weights"]


def _bert_variables():
    names = []
    for base in BERT_BASES:
        names.append(base)
        if base != "global_step":
            names += [base + "/adam_m", base + "/adam_v"]
    return sorted(names)


@pytest.fixture(scope="module")
def bert_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("bert")
    env = dict(os.environ, TF_MODULE="flowgraph")
    out = subprocess.run([sys.executable, os.path.join(HERE, "tpu_bert_program.py"),
                          str(workdir)], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition(" ")
        lines.setdefault(key, []).append(value)
    return lines, out.stderr


def test_bert_program_params_and_init_from_checkpoint(bert_run):
    lines, _ = bert_run
    assert [json.loads(v.split(" ", 1)[1]) for v in lines["PARAMS"]] == [
        {"batch_size": 4, "use_tpu": False}, {"batch_size": 4, "use_tpu": False},
        {"batch_size": 2, "use_tpu": False}, {"use_tpu": False}]
    assert [v.split(" ", 1)[0] for v in lines["PARAMS"]] == ["train", "eval", "infer", "infer"]
    # TensorFlow calls model_fn once more for the 'serve, tpu' meta graph of the export.
    assert lines["INIT_FROM_CKPT"][0] == "train 39 of 41"


def test_bert_program_trains_like_tensorflow(bert_run):
    lines, _ = bert_run
    np.testing.assert_allclose(json.loads(lines["TRAIN_LOSSES"][0]),
                               [0.6959, 0.6913, 0.7007, 0.7556, 0.7042, 0.7277], atol=2e-4)
    assert lines["NUM_VARIABLES"] == ["124"]
    assert json.loads(lines["VARIABLES"][0]) == _bert_variables()
    assert lines["GLOBAL_STEP"] == ["6"]
    np.testing.assert_allclose(json.loads(lines["OUTPUT_BIAS"][0]), [0.002, -0.002], atol=1e-6)


def test_bert_program_evaluates_predicts_and_serves_like_tensorflow(bert_run):
    lines, _ = bert_run
    result = json.loads(lines["EVAL"][0])
    assert result == pytest.approx({"eval_accuracy": 0.75, "eval_loss": 0.6734,
                                    "global_step": 6.0, "loss": 0.6734}, abs=2e-4)
    count, probs = lines["PREDICT"][0].split(" ", 1)
    assert count == "8"
    np.testing.assert_allclose(json.loads(probs), [[0.4734, 0.5266], [0.4785, 0.5215],
                                                   [0.4818, 0.5182]], atol=2e-4)
    assert lines["SIGNATURE"] == ["['input_ids', 'input_mask', 'segment_ids'] ['probabilities']"]
    np.testing.assert_allclose(json.loads(lines["SERVED"][0]),
                               [[0.4756, 0.5244], [0.4823, 0.5177]], atol=2e-4)


# -- two more programs: TensorFlow 2.15's whole stdout, compared line by line ---------------
CONVNET_TF = """\
host_log [(0, 0.6422, 0.1), (1, 0.6746, 0.1), (2, 0.6558, 0.1), (3, 0.6369, 0.1), (4, 0.6188, 0.09)]
vars [('global_step', []), ('head/bias', [2]), ('head/bias/Momentum', [2]), ('head/kernel', [4, 2]), ('head/kernel/Momentum', [4, 2]), ('stem_bn/beta', [4]), ('stem_bn/beta/Momentum', [4]), ('stem_bn/gamma', [4]), ('stem_bn/gamma/Momentum', [4]), ('stem_bn/moving_mean', [4]), ('stem_bn/moving_variance', [4]), ('stem_conv/kernel', [3, 3, 3, 4]), ('stem_conv/kernel/Momentum', [3, 3, 3, 4])]
host_log warm [(0, 0.6235, 0.1), (1, 0.6599, 0.1)]
warm kernel equal True
eval {'global_step': 2.0, 'loss': 0.9711, 'mean_logit': 0.0609, 'top_1_accuracy': 0.375}
pred [(1, [0.23360000550746918, 0.7663999795913696]), (1, [0.24060000479221344, 0.7594000101089478]), (1, [0.23229999840259552, 0.7677000164985657]), (1, [0.2508000135421753, 0.7491999864578247])]
served [[0.23360000550746918, 0.7663999795913696], [0.24060000479221344, 0.7594000101089478]]
"""  # noqa: E501

ALBERT_TF = """\
config   3 2
ckpts ['model.ckpt-20.index', 'model.ckpt-30.index']
eval {'auc': 1.0, 'eval_accuracy': 0.975, 'eval_loss': 0.0533, 'global_step': 30.0, 'loss': 0.0533}
pred 5 [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]] [[3.7964999675750732, -3.7964999675750732], [4.870500087738037, -4.870500087738037]]
resolver Please provide a TPU Name to connect to.
"""  # noqa: E501


@pytest.mark.parametrize("program, expected", [("tpu_convnet_program.py", CONVNET_TF),
                                               ("tpu_albert_program.py", ALBERT_TF)])
def test_trainer_programs_print_what_tensorflow_prints(program, expected):
    """EfficientNet-trainer style (batch norm, momentum with decay, host_call, warm start
    by scaffold_fn, dict eval_metrics, export) and ALBERT-driver style (flags, the
    contrib_tpu alias, PER_HOST_V2, keep_checkpoint_max, batched predict)."""
    env = dict(os.environ, TF_MODULE="flowgraph")
    out = subprocess.run([sys.executable, os.path.join(HERE, program)], capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    got = [line for line in out.stdout.splitlines() if not line.startswith("INFO")]
    assert got == expected.splitlines()


# -- a small TPUEstimator ---------------------------------------------------------------------
X = np.arange(64, dtype=np.float32).reshape(16, 4) / 64.0
Y = (X.sum(1, keepdims=True) > 2).astype(np.float32)


def _input_fn(seen):
    def input_fn(params):
        seen.append(("input_fn", {k: v for k, v in params.items()}))
        ds = tf.data.Dataset.from_tensor_slices((X, Y)).repeat()
        return ds.batch(params["batch_size"], drop_remainder=True)
    return input_fn


def _model_fn(seen, host_values=None):
    def model_fn(features, labels, mode, params):
        seen.append((mode, dict(params), features.shape.as_list()))
        logits = tf.layers.dense(features, 1, kernel_initializer=tf.zeros_initializer())
        if mode == tf.estimator.ModeKeys.PREDICT:
            return TPU.TPUEstimatorSpec(mode, predictions={"p": tf.sigmoid(logits)},
                                        export_outputs={"out": tf.estimator.export.PredictOutput(
                                            {"p": tf.sigmoid(logits)})})
        loss = tf.losses.sigmoid_cross_entropy(labels, logits)
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = tf.train.GradientDescentOptimizer(0.5).minimize(
                loss, global_step=tf.train.get_global_step())
            host_call = None
            if host_values is not None:
                def host_fn(gs, lo):
                    return [tf.py_func(lambda a, b: host_values.append((int(a[0]), float(b[0])))
                                       or np.float32(0), [gs, lo], tf.float32)]
                step = tf.reshape(tf.train.get_global_step(), [1])
                host_call = (host_fn, [step, tf.reshape(loss, [1])])
            return TPU.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=host_call)

        def metric_fn(labels, logits):
            return {"acc": tf.metrics.accuracy(labels, tf.cast(logits > 0, tf.float32))}
        return TPU.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    return model_fn


def _estimator(tmp_path, seen, host_values=None, **config):
    cfg = TPU.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=5,
                        log_step_count_steps=config.pop("log_step_count_steps", 2),
                        tpu_config=TPU.TPUConfig(iterations_per_loop=config.pop("ipl", 3)))
    return TPU.TPUEstimator(model_fn=_model_fn(seen, host_values), config=cfg, use_tpu=False,
                            params={"use_tpu": False}, train_batch_size=8, eval_batch_size=4,
                            predict_batch_size=2)


def test_train_eval_predict_values_and_params(tmp_path):
    seen = []
    est = _estimator(tmp_path, seen)
    assert est.config.log_step_count_steps is None  # TF: the config's is moved to the hook
    est.train(_input_fn(seen), max_steps=7)
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".index")) == [
        "model.ckpt-0.index", "model.ckpt-5.index", "model.ckpt-7.index"]
    result = est.evaluate(_input_fn(seen), steps=2)
    assert {k: round(float(v), 4) for k, v in result.items()} == {
        "acc": 0.625, "loss": 0.6624, "global_step": 7.0}
    preds = [round(float(p["p"][0]), 4) for p in est.predict(
        lambda params: tf.data.Dataset.from_tensor_slices(X[:4]).batch(params["batch_size"]))]
    assert preds == [0.4214, 0.4387, 0.4563, 0.4739]
    assert seen[0] == ("input_fn", {"use_tpu": False, "batch_size": 8})
    assert seen[1] == ("train", {"use_tpu": False, "batch_size": 8}, [8, 4])
    assert seen[2] == ("input_fn", {"use_tpu": False, "batch_size": 4})
    assert seen[3] == ("eval", {"use_tpu": False, "batch_size": 4}, [4, 4])
    assert seen[4] == ("infer", {"use_tpu": False, "batch_size": 2}, [None, 4])


def test_logging_is_examples_per_second_every_ceil_log_over_iterations(tmp_path, caplog):
    seen = []
    est = _estimator(tmp_path, seen, log_step_count_steps=2, ipl=3)  # ceil(2/3) = 1
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est.train(_input_fn(seen), max_steps=7)
    messages = [r.getMessage() for r in caplog.records]
    # TF 2.15 logs global_step/sec and examples/sec 6 times over 7 steps, and no
    # "loss = ..., step = ..." lines.
    assert sum(m.startswith("global_step/sec: ") for m in messages) == 6
    assert sum(m.startswith("examples/sec: ") for m in messages) == 6
    assert not any(m.startswith("loss = ") for m in messages)
    assert "Running train on CPU/GPU" in messages
    assert "training_loop marked as finished" in messages
    rates = [float(m.split(": ")[1]) for m in messages if m.startswith("global_step/sec")]
    examples = [float(m.split(": ")[1]) for m in messages if m.startswith("examples/sec")]
    np.testing.assert_allclose(examples, np.array(rates) * 8, rtol=1e-4)


def test_iterations_per_loop_in_seconds_logs_by_time(tmp_path):
    est = TPU.TPUEstimator(_model_fn([]), config=TPU.RunConfig(
        model_dir=str(tmp_path), tpu_config=TPU.TPUConfig(iterations_per_loop="2m")),
        use_tpu=False, train_batch_size=8)
    assert (est._log_every_n_secs, est._log_every_n_steps) == (120, None)


def test_host_call_runs_every_step_and_scaffold_fn_is_called(tmp_path):
    seen, host_values = [], []
    est = _estimator(tmp_path, seen, host_values)
    est.train(_input_fn(seen), steps=3)
    assert [s for s, _ in host_values] == [0, 1, 2]  # the step before each update
    assert host_values[0][1] == pytest.approx(0.6931, abs=1e-4)  # log 2: zero logits
    calls = []

    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features * w - labels))

        def scaffold_fn():
            calls.append(mode)
            set_w = tf.assign(w, 5.0)
            return tf.train.Scaffold(init_fn=lambda scaffold, session: session.run(set_w))
        op = tf.assign_add(tf.train.get_global_step(), 1)
        return TPU.TPUEstimatorSpec(mode, loss=loss, train_op=op, scaffold_fn=scaffold_fn)

    est = TPU.TPUEstimator(model_fn, config=TPU.RunConfig(model_dir=str(tmp_path / "s")),
                           use_tpu=False, train_batch_size=2)
    est.train(lambda params: (tf.ones([params["batch_size"]]), tf.ones([2])), steps=1)
    assert calls == ["train"]
    assert est.get_variable_value("w") == 5.0


def test_eval_metrics_dict_and_plain_estimator_spec(tmp_path):
    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(features * w - labels))
        if mode == "eval":
            return TPU.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(
                lambda labels, preds: {"mse": tf.metrics.mean_squared_error(labels, preds)},
                {"labels": labels, "preds": features * w}))
        op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)  # TF accepts it

    def input_fn(params):
        return tf.data.Dataset.from_tensors((tf.ones([4]), tf.ones([4]) * 2.0)).repeat()

    est = TPU.TPUEstimator(model_fn, config=TPU.RunConfig(model_dir=str(tmp_path)),
                           use_tpu=False)
    est.train(input_fn, steps=2)
    # TF 2.15: {'global_step': 2, 'loss': 1.6384, 'mse': 1.6384}
    result = est.evaluate(input_fn, steps=2)
    assert {k: round(float(v), 4) for k, v in result.items()} == {
        "global_step": 2.0, "loss": 1.6384, "mse": 1.6384}


def test_export_writes_the_cpu_graph_with_use_tpu_false(tmp_path):
    seen = []
    est = _estimator(tmp_path, seen)
    est.train(_input_fn(seen), steps=1)

    def receiver():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        return tf.estimator.export.TensorServingInputReceiver(x, {"x": x})

    path = est.export_saved_model(str(tmp_path / "export"), receiver)
    path = path.decode() if isinstance(path, bytes) else path
    assert seen[-1] == ("infer", {"use_tpu": False}, [None, 4])  # no batch_size on export
    legacy = est.export_savedmodel(str(tmp_path / "export2"), receiver)
    assert os.path.isdir(legacy.decode() if isinstance(legacy, bytes) else legacy)
    contrib = tf.contrib.tpu.export_estimator_savedmodel(est, str(tmp_path / "e4"), receiver)
    assert os.path.isdir(contrib.decode() if isinstance(contrib, bytes) else contrib)
    printed = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import flowgraph as tf
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, ["serve"], {path!r})
            sig = meta.signature_def["out"]
            out = sess.run(sig.outputs["p"].name, {{sig.inputs["x"].name: [[0.0] * 4, [1.0] * 4]}})
            print(sorted(meta.signature_def), [round(float(v), 4) for v in out.ravel()])
    """)], capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr[-2000:]
    # One step of gradient descent from zero weights: these are TF's values too.
    assert printed.stdout.split("\n")[0].startswith("['out'")
    preds = est.predict(lambda params: tf.data.Dataset.from_tensor_slices(
        np.array([[0.0] * 4, [1.0] * 4], np.float32)).batch(2))
    assert printed.stdout.strip().endswith(str([round(float(p["p"][0]), 4) for p in preds]))
    both_off = TPU.TPUEstimator(_model_fn([]), config=TPU.RunConfig(model_dir=str(tmp_path)),
                                use_tpu=False, export_to_cpu=False, export_to_tpu=False)
    with pytest.raises(ValueError, match="One of export_to_cpu and export_to_tpu must be true"):
        both_off.export_saved_model(str(tmp_path / "e3"), receiver)


def test_params_as_hparams_get_batch_size(tmp_path):
    seen = []

    def model_fn(features, labels, mode, params):
        seen.append((params.batch_size, params.use_tpu, params.lr))
        op = tf.assign_add(tf.train.get_global_step(), 1)
        return TPU.TPUEstimatorSpec(mode, loss=tf.reduce_sum(features), train_op=op)

    hp = tf.contrib.training.HParams(lr=0.1)
    est = TPU.TPUEstimator(model_fn, config=TPU.RunConfig(model_dir=str(tmp_path)),
                           use_tpu=False, params=hp, train_batch_size=3)
    est.train(lambda params: tf.ones([params.batch_size]), steps=1)
    assert seen == [(3, False, 0.1)]


# -- errors (TensorFlow's types and messages) -------------------------------------------------
def _mf(features, labels, mode, params):
    op = tf.assign_add(tf.train.get_global_step(), 1)
    return TPU.TPUEstimatorSpec(mode, loss=tf.reduce_sum(features), train_op=op)


def test_constructor_errors(tmp_path):
    cfg = TPU.RunConfig(model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"`config` must be provided with type "
                                         r"`tpu_config.RunConfig`"):
        TPU.TPUEstimator(_mf, use_tpu=False)
    with pytest.raises(ValueError, match="`config` must be provided"):
        TPU.TPUEstimator(_mf, config=tf.estimator.RunConfig(), use_tpu=False)
    with pytest.raises(ValueError, match=r"\['batch_size', 'context'\] are reserved keys but "
                                         r"existed in params \{'batch_size': 3\}\."):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, params={"batch_size": 3})
    with pytest.raises(ValueError, match="reserved keys"):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, params={"context": 3})
    TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, params={"use_tpu": 3})  # allowed
    with pytest.raises(ValueError, match=r"^`train_batch_size` cannot be `None`$"):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=True)
    with pytest.raises(ValueError, match=r"^train_batch_size must be positive, got -2$"):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=True, train_batch_size=-2)
    with pytest.raises(ValueError, match=r"^eval_batch_size must be positive, got 0$"):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=True, train_batch_size=8, eval_batch_size=0)
    with pytest.raises(TypeError, match="train_batch_size must be int"):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=True, train_batch_size=2.5)
    TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, train_batch_size=2.5)  # CPU: unchecked
    with pytest.raises(ValueError, match=r"export_saved_model_api_version should be 1 or 2; "
                                         r"got 3."):
        TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, export_saved_model_api_version=3)


def test_call_time_errors(tmp_path):
    cfg = TPU.RunConfig(model_dir=str(tmp_path))
    est = TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, train_batch_size=2)
    with pytest.raises(ValueError, match="does not include params argument, required by "
                                         "TPUEstimator to pass batch size as "
                                         r'params\["batch_size"\]'):
        est.train(lambda: tf.ones([2]), steps=1)

    def no_params(features, labels, mode):
        return None
    est = TPU.TPUEstimator(no_params, config=cfg, use_tpu=False, train_batch_size=2)
    with pytest.raises(ValueError, match=r"does not include params argument.*"
                                         r"params\['batch_size'\]"):
        est.train(lambda params: tf.ones([2]), steps=1)
    # No TPU: TF 2.15 raises this RuntimeError when the mode runs.
    est = TPU.TPUEstimator(_mf, config=cfg, use_tpu=True, train_batch_size=2)
    with pytest.raises(RuntimeError, match="Cannot find any TPU cores in the system"):
        est.train(lambda params: tf.ones([2]), steps=1)


def test_eval_on_tpu_false_evaluates_on_the_cpu(tmp_path):
    # TF 2.15: with use_tpu=True and eval_on_tpu=False, evaluate runs on the CPU.
    cfg = TPU.RunConfig(model_dir=str(tmp_path))
    TPU.TPUEstimator(_mf, config=cfg, use_tpu=False, train_batch_size=2).train(
        lambda params: tf.ones([params["batch_size"]]), steps=2)
    est = TPU.TPUEstimator(_mf, config=cfg, use_tpu=True, eval_on_tpu=False,
                           train_batch_size=2, eval_batch_size=2)
    result = est.evaluate(lambda params: tf.ones([params["batch_size"]]), steps=1)
    assert (result["loss"], result["global_step"]) == (2.0, 2)
    with pytest.raises(RuntimeError, match="Cannot find any TPU cores"):
        list(est.predict(lambda params: tf.ones([2])))


def test_tpu_config_validation_and_values():
    ipl_error = "Invalid TPUConfig `iterations_per_loop` value"
    for bad in (0, -1, "10x", "s", "0s"):
        with pytest.raises(ValueError, match=ipl_error):
            TPU.TPUConfig(iterations_per_loop=bad)
    assert TPU.TPUConfig(iterations_per_loop="10s").iterations_per_loop == "10s"
    with pytest.raises(ValueError, match=r"^TPUConfig num_shards must be positive, got 0$"):
        TPU.TPUConfig(num_shards=0)
    with pytest.raises(ValueError, match=r"^num_cores_per_replica must be 1, 2, 4, 8, 16, 32, "
                                         r"64, 128; got 3$"):
        TPU.TPUConfig(num_cores_per_replica=3)
    with pytest.raises(ValueError, match=r"input_partition_dims is only supported in "
                                         r"PER_HOST_V2 mode."):
        TPU.TPUConfig(input_partition_dims=[[1, 2]])
    with pytest.raises(ValueError, match="eval_training_input_configuration must be "
                                         "PER_HOST_V1 or SLICED; got 3"):
        TPU.TPUConfig(eval_training_input_configuration=3)
    with pytest.raises(ValueError, match="initial_infeed_sleep_secs must be positive, got -1"):
        TPU.TPUConfig(initial_infeed_sleep_secs=-1)
    assert TPU.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == 1
    assert repr(TPU.TPUConfig()) == (
        "TPUConfig(iterations_per_loop=2, num_shards=None, num_cores_per_replica=None, "
        "per_host_input_for_training=2, tpu_job_name=None, initial_infeed_sleep_secs=None, "
        "input_partition_dims=None, eval_training_input_configuration=2, "
        "experimental_host_call_every_n_steps=1, "
        "experimental_allow_per_host_v2_parallel_get_next=False, experimental_feed_hook=None)")
    ipc = TPU.InputPipelineConfig
    assert (ipc.PER_SHARD_V1, ipc.PER_HOST_V1, ipc.PER_HOST_V2, ipc.BROADCAST, ipc.SLICED) == (
        1, 2, 3, 4, 5)


def test_run_config_masters_cluster_and_replace(monkeypatch):
    rc = TPU.RunConfig(master="grpc://x:1", tpu_config=TPU.TPUConfig(5))
    assert (rc.master, rc.evaluation_master, rc.tpu_config.iterations_per_loop, rc.cluster,
            rc.log_step_count_steps, rc.save_checkpoints_secs) == (
        "grpc://x:1", "grpc://x:1", 5, None, 100, 600)
    assert rc.replace(tpu_config=TPU.TPUConfig(7)).tpu_config.iterations_per_loop == 7
    replaced = rc.replace(model_dir="/tmp/q")
    assert type(replaced) is TPU.RunConfig and replaced.tpu_config.iterations_per_loop == 5
    with pytest.raises(TypeError):
        TPU.RunConfig(foo=1)
    resolver = tf.contrib.cluster_resolver.TPUClusterResolver(tpu="grpc://10.0.0.1:8470")
    rc = TPU.RunConfig(cluster=resolver)
    assert rc.master == "grpc://10.0.0.1:8470" and rc.cluster is resolver
    assert rc.cluster_spec.as_dict() == {"worker": ["10.0.0.1:8470"]}
    with pytest.raises(ValueError, match=r"Both master and cluster are set."):
        TPU.RunConfig(cluster=resolver, master="")
    monkeypatch.setenv("TF_CONFIG", json.dumps({"service": {"tpu_worker_job_name": "tpu_w"}}))
    assert TPU.TPUConfig().tpu_job_name == "tpu_w"


def test_tpu_estimator_spec_validation():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        cases = [
            (dict(eval_metrics=lambda: 1), ValueError, "^eval_metrics should be tuple or list$"),
            (dict(eval_metrics=(lambda a: 1,)), ValueError,
             "^eval_metrics should have two elements.$"),
            (dict(eval_metrics=(1, [])), TypeError, r"^eval_metrics\[0\] should be callable.$"),
            (dict(eval_metrics=(lambda a: 1, 3)), ValueError,
             r"^eval_metrics\[1\] should be tuple or list, or dict.$"),
            (dict(eval_metrics=(lambda a: 1, [1, 2])), RuntimeError,
             "^In TPUEstimatorSpec.eval_metrics, length of tensors 2 does not match method "
             "args of the function, which takes 1.$"),
            (dict(host_call=(lambda a, b: 1, [1])), RuntimeError,
             "host_call, length of tensors 1 does not match"),
            (dict(training_hooks=[1]), TypeError,
             "All hooks must be SessionRunHook instances, given: 1"),
        ]
        for kwargs, error, message in cases:
            with pytest.raises(error, match=message):
                TPU.TPUEstimatorSpec("eval", loss=loss, **kwargs)
        with pytest.raises(ValueError, match="train_op"):
            TPU.TPUEstimatorSpec("train", loss=loss)
        TPU.TPUEstimatorSpec("eval", loss=loss, eval_metrics=(lambda *t: {}, [1, 2, 3]))
        spec = TPU.TPUEstimatorSpec("train", loss=loss, train_op=tf.no_op())
        assert TPU.TPUEstimatorSpec._fields == (
            "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
            "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
            "prediction_hooks")
        assert (spec.training_hooks, spec.eval_metrics, spec.scaffold_fn, spec.predictions,
                spec.export_outputs) == ((), None, None, {}, None)
        converted = spec.as_estimator_spec()
        assert type(converted) is tf.estimator.EstimatorSpec
        assert (converted.training_hooks, converted.eval_metric_ops) == ((), {})
        assert not isinstance(spec, tf.estimator.EstimatorSpec)


# -- tf.tpu / tf.contrib.tpu ------------------------------------------------------------------
def test_tf_tpu_names_and_contrib_aliases():
    assert sorted(n for n in dir(tf.tpu) if not n.startswith("_")) == [
        "CrossShardOptimizer", "PaddingSpec", "XLAOptions", "batch_parallel", "bfloat16_scope",
        "core", "cross_replica_sum", "experimental", "initialize_system",
        "outside_compilation", "replicate", "rewrite", "shard", "shutdown_system"]
    assert tf.compat.v1.tpu.rewrite is tf.tpu.rewrite
    assert tf.contrib.tpu.CrossShardOptimizer is tf.tpu.CrossShardOptimizer
    assert tf.contrib.tpu.TPUEstimator is tf.estimator.tpu.TPUEstimator
    assert tf.contrib.tpu.Topology is tf.tpu.experimental.Topology
    assert type(tf.contrib.tpu.AsyncCheckpointSaverHook("/tmp/unused", save_steps=3)) is (
        tf.train.CheckpointSaverHook)
    assert tf.compat.v1.estimator.tpu.TPUEstimatorSpec is TPU.TPUEstimatorSpec
    assert tf.tpu.core(3) == "device:TPU_REPLICATED_CORE:3"
    assert list(tf.tpu.PaddingSpec) == [tf.tpu.PaddingSpec.AUTO, tf.tpu.PaddingSpec.POWER_OF_TWO]
    assert repr(tf.tpu.XLAOptions()) == (
        "XLAOptions(use_spmd_for_xla_partitioning=True, enable_xla_dynamic_padder=True)")
    assert TPU.experimental.EmbeddingConfigSpec().partition_strategy == "div"


def test_distribute_cluster_resolver_is_the_same_class():
    assert tf.contrib.cluster_resolver.TPUClusterResolver is (
        tf.distribute.cluster_resolver.TPUClusterResolver)
    assert issubclass(tf.contrib.cluster_resolver.TPUClusterResolver,
                      tf.distribute.cluster_resolver.ClusterResolver)


def test_cross_shard_optimizer_builds_cross_replica_sums_that_do_not_run():
    with tf.Graph().as_default() as g:
        w = tf.Variable(1.0, name="w")
        loss = tf.square(w - 3.0)
        base = tf.train.GradientDescentOptimizer(0.1)
        opt = tf.tpu.CrossShardOptimizer(base)
        assert opt.get_name() == "CrossShardOptimizer"
        gvs = opt.compute_gradients(loss)
        assert [v.name for _, v in gvs] == ["w:0"]
        train_op = opt.apply_gradients(gvs, global_step=tf.train.get_or_create_global_step())
        assert train_op.name == "GradientDescent"
        assert opt.get_slot_names() == [] and opt.variables() == []
        sums = [op for op in g.get_operations() if op.type == "CrossReplicaSum"]
        assert [op.name for op in sums] == ["CrossReplicaSum"]
        assert sums[0].inputs[0] is gvs[0][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="CrossReplicaSum"):
                sess.run(train_op)
    with pytest.raises(ValueError, match=r"Argument `reduction` should be one of "
                                         r"\('weighted_sum', 'weighted_mean'\). Received: foo"):
        tf.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1), reduction="foo")
    with pytest.raises(TypeError, match=r"CrossShardOptimizer only works with "
                                        r"tf.training.Optimizer and not Keras Optimizer"):
        tf.tpu.CrossShardOptimizer(3)


def test_cross_replica_sum_op_shape_and_gradient():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3])
        s = tf.tpu.cross_replica_sum(x)
        assert (s.op.type, s.op.name, s.shape.as_list()) == ("CrossReplicaSum",
                                                             "CrossReplicaSum", [None, 3])
        assert g.get_operation_by_name("CrossReplicaSum/group_assignment").type == "Const"
        (dx,) = tf.gradients(s, [x])
        # d(sum over replicas)/dx is the sum over replicas of the incoming gradient.
        assert dx.op.type == "CrossReplicaSum" and dx.op.inputs[1] is s.op.inputs[1]
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(s, {x: np.ones((2, 3))})


def test_rewrite_shard_replicate_build_and_fail_to_run():
    with tf.Graph().as_default() as g:
        x = tf.constant([1.0, 2.0, 3.0, 4.0])
        (out,) = tf.tpu.rewrite(lambda a: a * 2.0, [x])
        assert out.name == "output_0_shard_0:0" and out.shape.as_list() == [4]
        assert {"TPUReplicateMetadata", "TPUReplicatedInput", "TPUReplicatedOutput",
                "TPUCompilationResult", "Mul"} <= {op.type for op in g.get_operations()}
        (sharded,) = tf.tpu.shard(lambda a: a + 1.0, [x], num_shards=2)
        assert sharded.op.type == "ConcatV2" and sharded.shape.as_list() == [4]
        (bp,) = tf.tpu.batch_parallel(lambda a: a + 1.0, [x], num_shards=2)
        assert bp.shape.as_list() == [4]
        replicas = tf.tpu.replicate(lambda a: [a, a * a], [[x], [x]])
        assert [len(r) for r in replicas] == [2, 2]
        assert replicas[1][0].name.startswith("output_0_shard_1")
        assert tf.tpu.outside_compilation(lambda a: a + 1.0, x).op.type in ("Add", "AddV2")
        init = tf.tpu.initialize_system()
        assert (init.op.type, init.dtype, init.op.device) == (
            "ConfigureDistributedTPU", tf.string, "/device:TPU_SYSTEM:0")
        assert tf.tpu.shutdown_system().type == "ShutdownDistributedTPU"
        with pytest.raises(ValueError, match="num_shards must be a positive integer"):
            tf.tpu.shard(lambda a: a, [x], num_shards=0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="TPUReplicatedInput"):
            sess.run(out)


def test_bfloat16_scope_stores_float32_and_casts():
    with tf.Graph().as_default():
        with tf.tpu.bfloat16_scope() as scope:
            assert scope.name == ""
            v = tf.get_variable("v", [2], dtype=tf.float32)
        with tf.tpu.bfloat16_scope("blk"):
            u = tf.get_variable("v", [2], dtype=tf.float32)
            w = tf.get_variable("w", [2], dtype=tf.bfloat16)
        assert (v.name, u.name) == ("v:0", "blk/v:0")
        assert (w.name, w.dtype) == ("Cast:0", tf.bfloat16)  # TF 2.15's names
        stored = [x for x in tf.global_variables() if x.op.name == "blk/w"]
        assert stored and stored[0].dtype.base_dtype == tf.float32


def test_tpu_experimental_and_cluster_resolver():
    e = tf.tpu.experimental
    assert vars(e.AdagradParameters(0.1)) == {
        "learning_rate": 0.1, "use_gradient_accumulation": True, "clip_weight_min": None,
        "clip_weight_max": None, "weight_decay_factor": None,
        "multiply_weight_decay_factor_by_learning_rate": None, "clip_gradient_min": None,
        "clip_gradient_max": None, "initial_accumulator": 0.1}
    assert e.AdamParameters(0.1).beta2 == 0.999
    assert e.FtrlParameters(0.1).learning_rate_power == -0.5
    assert e.StochasticGradientDescentParameters(0.1).clip_gradient_max is None
    assert [m.value for m in e.DeviceOrderMode] == [0, 1, 2]
    assert repr(e.TPUSystemMetadata(1, 1, 1, None, [])) == (
        "TPUSystemMetadata(num_cores=1, num_hosts=1, num_of_cores_per_host=1, topology=None, "
        "devices=[])")
    with pytest.raises(ValueError, match="topology must be a Topology object, got "
                                         "<class 'NoneType'>"):
        e.DeviceAssignment(None, [[[0, 0, 0, 0]]])
    for fn in (e.initialize_tpu_system, e.shutdown_tpu_system):
        with pytest.raises(ValueError, match=r"^Please provide a TPU Name to connect to.$"):
            fn()
    col = e.embedding_column(tf.feature_column.categorical_column_with_identity("a", 10), 4)
    assert col.dimension == 4
    with pytest.raises(NotImplementedError, match="TPU embedding"):
        e.embedding.TPUEmbedding  # noqa: B018
    resolver = tf.contrib.cluster_resolver.TPUClusterResolver
    with pytest.raises(ValueError, match=r"^Please provide a TPU Name to connect to.$"):
        resolver()
    with pytest.raises(urllib.error.URLError):
        resolver(tpu="my-tpu")
    with pytest.raises(RuntimeError, match="Missing runtime dependency on the Google API"):
        resolver(tpu="my-tpu", zone="us-central1-b", project="p")
    r = resolver(tpu="grpc://10.0.0.1:8470")
    assert (r.master(), r.get_master(), r.cluster_spec().as_dict(), r.task_type, r.task_id,
            r.environment, r.get_job_name()) == (
        "grpc://10.0.0.1:8470", "grpc://10.0.0.1:8470", {"worker": ["10.0.0.1:8470"]},
        "worker", 0, "", "worker")
    local = resolver(tpu="local")
    assert (local.master(), local.cluster_spec().as_dict(), local.num_accelerators()) == (
        "", {}, {"TPU": 0})
    assert resolver(tpu=["grpc://10.0.0.1:8470"]).master() == "grpc://10.0.0.1:8470"


# -- tf.estimator.experimental and tf.estimator.export.EvalOutput -----------------------------
def test_raw_supervised_input_receiver_fn():
    ex = tf.estimator.experimental
    with tf.Graph().as_default():
        feats = {"x": tf.constant([[1.0, 2.0]])}
        lab = tf.constant([[1.0]])
        r = ex.build_raw_supervised_input_receiver_fn(feats, lab, default_batch_size=3)()
        assert type(r).__name__ == "SupervisedInputReceiver"
        assert {k: (v.name, v.shape.as_list(), v.dtype.name) for k, v in r.features.items()} == {
            "x": ("Const_2:0", [3, 2], "float32")}
        assert (r.labels.name, r.labels.shape.as_list()) == ("Const_1_1:0", [3, 1])
        assert sorted(r.receiver_tensors) == ["label", "x"]
        r2 = ex.build_raw_supervised_input_receiver_fn(tf.constant([1, 2]), {"l": lab})()
        assert (r2.features.name, r2.features.shape.as_list()) == ("Const_3_1:0", [None])
        assert sorted(r2.receiver_tensors) == ["input", "l"]
        with pytest.raises(ValueError, match=r"Features and labels must have distinct keys. "
                                             r"Found overlapping keys: {'a'}"):
            ex.build_raw_supervised_input_receiver_fn({"a": lab}, {"a": lab})


def test_logit_fns_and_call_logit_fn():
    ex = tf.estimator.experimental
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        cols = [tf.feature_column.numeric_column("x", shape=[3])]
        dnn = ex.dnn_logit_fn_builder(units=2, hidden_units=[4], feature_columns=cols,
                                      activation_fn=tf.nn.relu, dropout=None,
                                      input_layer_partitioner=None, batch_norm=False)
        logits = ex.call_logit_fn(dnn, {"x": x}, "train", {}, None)
        assert (logits.name, logits.shape.as_list()) == ("logits/BiasAdd:0", [2, 2])
        assert sorted(v.name for v in tf.global_variables()) == [
            "hiddenlayer_0/bias:0", "hiddenlayer_0/kernel:0", "logits/bias:0", "logits/kernel:0"]
        linear = ex.call_logit_fn(ex.linear_logit_fn_builder(units=2, feature_columns=cols),
                                  {"x": x}, "train", {}, None)
        with pytest.raises(ValueError, match=r"logit_fn should return a Tensor or a dictionary "
                                             r"mapping strings to Tensors.  logit_fn returned: 3"):
            ex.call_logit_fn(lambda features: 3, {"x": x}, "train", {}, None)
        assert ex.call_logit_fn(lambda features, mode: {"a": x}, {"x": x}, "train", {},
                                None) == {"a": x}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(logits), [[0.38, -1.0593], [2.2194, -1.611]],
                                       atol=1e-4)
            np.testing.assert_allclose(sess.run(linear), np.zeros((2, 2)))


def test_stop_at_checkpoint_step_hook_and_linear_sdca(tmp_path):
    ex = tf.estimator.experimental
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")],
                                       model_dir=str(tmp_path))
    hook = ex.make_stop_at_checkpoint_step_hook(est, 10)
    assert type(hook).__name__ == "StopAtStepHook"
    with pytest.raises(AttributeError, match="'int' object has no attribute 'config'"):
        ex.make_stop_at_checkpoint_step_hook(3, 10)
    sdca = ex.LinearSDCA(example_id_column="ex", num_loss_partitions=1,
                         symmetric_l2_regularization=1.0)
    assert vars(sdca) == {"_example_id_column": "ex", "_num_loss_partitions": 1,
                          "_num_table_shards": None, "_symmetric_l1_regularization": 0.0,
                          "_symmetric_l2_regularization": 1.0, "_adaptive": False}


def test_stop_at_checkpoint_step_hook_on_a_non_chief_worker(tmp_path):
    est = tf.estimator.Estimator(_plain_model_fn, model_dir=str(tmp_path))
    est.train(lambda: (tf.ones([2]), tf.ones([2])), steps=3)
    # What make_stop_at_checkpoint_step_hook returns when config.is_chief is False.
    hook = _stop_at_checkpoint_step_hook(str(tmp_path), 3, 0)
    with tf.Graph().as_default():
        tf.train.create_global_step()
        counter = tf.Variable(0, name="counter")
        step = tf.assign_add(counter, 1)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                ran = sess.run(step)
    # The checkpoint is at step 3 already: the worker stops after its first step.
    assert ran == 1


def _plain_model_fn(features, labels, mode):
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features * w - labels))
    op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=op)


def test_eval_output():
    E = tf.estimator.export.EvalOutput
    assert (E.LOSS_NAME, E.PREDICTIONS_NAME, E.METRICS_NAME, E.METRIC_VALUE_SUFFIX,
            E.METRIC_UPDATE_SUFFIX) == ("loss", "predictions", "metrics", "value", "update_op")
    with tf.Graph().as_default():
        eo = E(loss=tf.constant(1.0), predictions={"p": tf.constant([1.0])},
               metrics={"m": tf.metrics.mean(tf.constant([1.0]))})
        assert (sorted(eo.loss), sorted(eo.predictions), sorted(eo.metrics)) == (
            ["loss"], ["predictions/p"], ["metrics/m/update_op", "metrics/m/value"])
        sig = eo.as_signature_def({"x": tf.placeholder(tf.float32, name="x")})
        assert sig.method_name == "tensorflow/supervised/eval"
        assert sorted(sig.outputs) == ["loss", "metrics/m/update_op", "metrics/m/value",
                                       "predictions/p"]
        with pytest.raises(ValueError, match=r"loss output value must be a Tensor; got 3."):
            E(loss=3)
