"""tf.distribute's MirroredStrategy (and OneDeviceStrategy, tf.contrib.distribute) in
graph mode and in Estimators, against TensorFlow 2.15 (tf.compat.v1, v2 behaviour
disabled): every expected value below was printed by the tf-oracle running the same
program (/tmp/s16/wild/ms_*.py). Two replicas run on two logical CPUs
(``ConfigProto(device_count={"CPU": 2})``), which TensorFlow supports the same way.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _two():
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


# -- the strategy and its variables ---------------------------------------------------------
def test_devices_defaults_and_errors(caplog):
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        s = tf.distribute.MirroredStrategy()
    assert s.num_replicas_in_sync == 1  # TF on a machine without GPUs: the CPU
    assert s.extended.worker_devices == ("/replica:0/task:0/device:CPU:0",)
    assert "Using MirroredStrategy with devices ('/replica:0/task:0/device:CPU:0',)" in \
        caplog.text
    two = _two()
    assert two.num_replicas_in_sync == 2
    assert two.extended.worker_devices == ("/replica:0/task:0/device:CPU:0",
                                           "/replica:0/task:0/device:CPU:1")
    with pytest.raises(ValueError, match="No duplicates"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    with pytest.raises(NotImplementedError, match="TPUStrategy"):
        tf.distribute.experimental.TPUStrategy()


def test_mirrored_variables_and_contexts():
    s = _two()
    assert not tf.distribute.in_cross_replica_context()
    with s.scope():
        w = tf.Variable(np.ones((3, 1), np.float32), name="w")
        assert type(w).__name__ == "MirroredVariable"
        assert (w.name, w.device) == ("w:0", "/replica:0/task:0/device:CPU:0")
        assert [v.name for v in tf.global_variables()] == ["w:0"]
        assert [v.name for v in s.experimental_local_results(w)] == ["w:0", "w/replica_1:0"]
        assert tf.distribute.in_cross_replica_context() and tf.distribute.has_strategy()
        assert tf.distribute.get_replica_context() is None
        x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
        seen = []

        def fn(xx):
            ctx = tf.distribute.get_replica_context()
            y = tf.matmul(xx, w)
            s_ = ctx.all_reduce(tf.distribute.ReduceOp.SUM, tf.reduce_sum(xx))
            seen.append((ctx.replica_id_in_sync_group.name, y.name, y.device,
                         tf.distribute.in_cross_replica_context(), s_.name))
            return y, s_

        out = s.extended.call_for_each_replica(fn, args=(x,))
        assert seen == [("replica_id_in_sync_group:0", "MatMul:0",
                         "/replica:0/task:0/device:CPU:0", False, "IdentityN:0"),
                        ("replica_1/replica_id_in_sync_group:0", "replica_1/MatMul:0",
                         "/replica:0/task:0/device:CPU:1", False, "replica_1/IdentityN:0")]
        assert type(out[0]).__name__ == "PerReplica"
        total = s.reduce(tf.distribute.ReduceOp.SUM, out[1], axis=None)
        mean = s.reduce(tf.distribute.ReduceOp.MEAN, out[0], axis=0)
        assert mean.shape.as_list() == [1]
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        t, m = sess.run([total, mean])
    assert t == 264.0 and m.tolist() == [16.5]


def test_assign_in_replica_context_needs_aggregation():
    s = _two()
    with s.scope():
        v = tf.Variable(1.0, name="v")
        with pytest.raises(ValueError, match="You must specify an aggregation method"):
            s.run(lambda: v.assign(2.0))
    with s.scope():
        u = tf.Variable(1.0, name="u", aggregation=tf.VariableAggregation.MEAN)
        op = s.run(lambda: u.assign_add(tf.constant(2.0)))
        cross = u.assign(5.0)
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(s.group(op))
        assert [sess.run(c) for c in s.experimental_local_results(u)] == [3.0, 3.0]
        sess.run(cross)
        assert [sess.run(c) for c in s.experimental_local_results(u)] == [5.0, 5.0]


def test_partitioners_are_ignored_in_a_strategy():
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        with tf.variable_scope("dnn", partitioner=tf.fixed_size_partitioner(2)):
            v = tf.get_variable("w", [4, 2])
    assert type(v).__name__ == "MirroredVariable"
    assert [x.name for x in tf.global_variables()] == ["dnn/w:0"]


# -- training in graph mode -------------------------------------------------------------------
_rng = np.random.RandomState(0)
_X = _rng.randn(64, 5).astype(np.float32)
_Y = (_X @ _rng.randn(5, 1) + 0.1).astype(np.float32)
# TF 2.15: the total loss of the first six steps, w2 after them (ms_adam_loop.py).
_TF_LOSSES = [4.21916, 4.79684, 3.40974, 4.05606, 3.72818, 4.27719]
_TF_W2 = [0.3508, 0.2908, -0.0431, 0.0183, -0.0477, 0.1476, -0.3752, -0.1465]
_TF_CKPT = [("beta1_power", []), ("beta2_power", []), ("global_step", []), ("model/b1", [8]),
            ("model/b1/Adam", [8]), ("model/b1/Adam_1", [8]), ("model/w1", [5, 8]),
            ("model/w1/Adam", [5, 8]), ("model/w1/Adam_1", [5, 8]), ("model/w2", [8, 1]),
            ("model/w2/Adam", [8, 1]), ("model/w2/Adam_1", [8, 1])]


def _adam_model(strategy, global_batch=16):
    """ms_adam_loop.py: a two-layer regression trained with Adam on a distributed
    dataset; with `strategy` None the same model on one device."""
    ds = tf.data.Dataset.from_tensor_slices((_X, _Y)).batch(global_batch).repeat()
    with tf.variable_scope("model"):
        w1 = tf.get_variable("w1", [5, 8], initializer=tf.glorot_uniform_initializer(seed=1))
        b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", [8, 1], initializer=tf.glorot_uniform_initializer(seed=2))
    opt = tf.train.AdamOptimizer(0.01)
    step = tf.train.get_or_create_global_step()

    def replica_step(xb, yb):
        h = tf.nn.tanh(tf.matmul(xb, w1) + b1)
        loss = tf.reduce_sum(tf.square(tf.matmul(h, w2) - yb)) * (1.0 / global_batch)
        train = opt.minimize(loss, global_step=step)
        with tf.control_dependencies([train]):
            return tf.identity(loss)

    if strategy is None:
        it = ds.make_initializable_iterator()
        return it, replica_step(*it.get_next()), w2
    it = strategy.experimental_distribute_dataset(ds).make_initializable_iterator()
    x, y = it.get_next()
    losses = strategy.run(replica_step, args=(x, y))
    return it, strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None), w2


def _train(strategy, steps=6):
    if strategy is None:
        it, total, w2 = _adam_model(None)
    else:
        with strategy.scope():
            it, total, w2 = _adam_model(strategy)
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer)
        losses = [float(sess.run(total)) for _ in range(steps)]
        return losses, sess.run(w2).ravel(), sess, w2


def test_two_replicas_adam_match_tensorflow_and_one_device(tmp_path):
    s = _two()
    losses, w2, _, _ = _train(s)
    np.testing.assert_allclose(losses, _TF_LOSSES, atol=1e-4)
    np.testing.assert_allclose(w2, _TF_W2, atol=1e-4)
    with tf.Graph().as_default():
        single_losses, single_w2, _, _ = _train(None)
    np.testing.assert_allclose(losses, single_losses, rtol=1e-5)
    np.testing.assert_allclose(w2, single_w2, rtol=1e-5, atol=1e-6)


def test_one_replica_is_exactly_one_device():
    losses, w2, _, _ = _train(tf.distribute.MirroredStrategy())
    with tf.Graph().as_default():
        single_losses, single_w2, _, _ = _train(None)
    assert losses == single_losses
    assert w2.tolist() == single_w2.tolist()


def test_checkpoint_holds_one_value_per_variable_and_restores_every_copy(tmp_path):
    s = _two()
    with s.scope():
        it, total, w2 = _adam_model(s)
        saver = tf.train.Saver()
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer)
        for _ in range(3):
            sess.run(total)
        trained = sess.run(w2)
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run(tf.global_variables_initializer())
        copies = s.experimental_local_results(w2)
        assert not np.allclose(sess.run(copies[1]), trained)
        saver.restore(sess, path)
        for c in copies:
            np.testing.assert_array_equal(sess.run(c), trained)
    assert sorted(tf.train.list_variables(path)) == _TF_CKPT
    # a fresh process restores it into a plain single-device graph
    script = (
        "import sys, numpy as np, flowgraph as tf\n"
        "with tf.variable_scope('model'):\n"
        "    w2 = tf.get_variable('w2', [8, 1])\n"
        "with tf.Session() as s:\n"
        "    tf.train.Saver([w2]).restore(s, sys.argv[1])\n"
        "    print(' '.join(repr(float(x)) for x in s.run(w2).ravel()))\n")
    out = subprocess.run([sys.executable, "-c", script, path], capture_output=True,
                         text=True, check=True).stdout.split()
    np.testing.assert_array_equal(np.array(out, np.float32), trained.ravel())


# -- input ------------------------------------------------------------------------------------
def test_dataset_split_as_tensorflow_splits_it():
    s = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(4)])
    dd = s.experimental_distribute_dataset(tf.data.Dataset.range(22).batch(10))
    it = dd.make_initializable_iterator()
    nxt = it.get_next()
    assert type(nxt).__name__ == "PerReplica"
    it2 = s.make_dataset_iterator(tf.data.Dataset.range(8).batch(4))
    n2 = it2.get_next()
    contexts = []

    def input_fn(ctx):
        contexts.append((ctx.num_input_pipelines, ctx.input_pipeline_id,
                         ctx.num_replicas_in_sync, ctx.get_per_replica_batch_size(8)))
        return tf.data.Dataset.range(20).batch(2)

    it3 = s.make_input_fn_iterator(input_fn)
    n3 = it3.get_next()
    assert contexts == [(1, 0, 4, 2)]
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 4})) as sess:
        sess.run(it.initializer)
        got = [[a.tolist() for a in sess.run(s.experimental_local_results(nxt))]
               for _ in range(3)]
        assert got == [[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]],
                       [[10, 11, 12], [13, 14, 15], [16, 17, 18], [19]],
                       [[20], [21], [], []]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(s.experimental_local_results(nxt))
        sess.run(it2.initializer)
        assert [a.tolist() for a in sess.run(s.experimental_local_results(n2))] == \
            [[0], [1], [2], [3]]
        sess.run(it3.initializer)
        assert [a.tolist() for a in sess.run(s.experimental_local_results(n3))] == \
            [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert [a.tolist() for a in sess.run(s.experimental_local_results(n3))] == \
            [[8, 9], [10, 11], [12, 13], [14, 15]]


def test_merge_call_and_sync_on_read_metrics():
    s = _two()
    with s.scope():
        ds = tf.data.Dataset.from_tensor_slices(np.arange(16, dtype=np.float32)).batch(4)
        it = s.experimental_distribute_dataset(ds).make_initializable_iterator()
        x = it.get_next()

        def fn(v):
            mean, update = tf.metrics.mean(v)
            acc, acc_update = tf.metrics.accuracy(tf.cast(v > 5, tf.int32),
                                                  tf.ones_like(v, tf.int32))
            ctx = tf.distribute.get_replica_context()
            rows = ctx.merge_call(
                lambda strategy, r: strategy.reduce(tf.distribute.ReduceOp.SUM, r),
                args=(tf.shape(v)[0],))
            return mean, update, acc, acc_update, rows

        mean, update, acc, acc_update, rows = s.run(fn, args=(x,))
        assert [v.name for v in tf.local_variables()] == [
            "mean/total:0", "mean/count:0", "accuracy/total:0", "accuracy/count:0"]
        ups = s.group([update, acc_update])
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run([tf.local_variables_initializer(), it.initializer])
        assert sess.run(rows) == 4
        sess.run(it.initializer)
        for _ in range(4):
            sess.run(ups)
        assert sess.run(s.experimental_local_results(mean)[0]) == 7.5
        assert sess.run(s.experimental_local_results(acc)[0]) == 0.625


# -- Estimators -------------------------------------------------------------------------------
_EX = np.linspace(-1, 1, 64, dtype=np.float32).reshape(32, 2)
_EY = (_EX @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def _estimator(model_dir, replicas, distribute=True):
    def model_fn(features, labels, mode):
        pred = tf.layers.dense(features["x"], 1, kernel_initializer=tf.ones_initializer())
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
        loss = tf.losses.mean_squared_error(labels, pred)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(
                mode, loss=loss,
                eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)})
        opt = tf.train.MomentumOptimizer(0.05, 0.9)
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          train_op=opt.minimize(loss,
                                                                tf.train.get_global_step()))

    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)]) \
        if distribute else None
    cfg = tf.estimator.RunConfig(
        model_dir=str(model_dir), train_distribute=strategy, eval_distribute=strategy,
        session_config=tf.ConfigProto(device_count={"CPU": replicas}), tf_random_seed=1)
    return tf.estimator.Estimator(model_fn, config=cfg)


def _input_fn(replicas):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": _EX}, _EY)).batch(
        8 // replicas).repeat()


def _eval_input():
    return tf.data.Dataset.from_tensor_slices(({"x": _EX}, _EY)).batch(8)


def test_estimator_two_replicas_match_tensorflow(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est = _estimator(tmp_path, 2)
        loss = est.train(_input_fn(2), steps=10)  # returns the Estimator
    assert loss is est
    assert "Initializing RunConfig with distribution strategies." in caplog.text
    assert "Not using Distribute Coordinator." in caplog.text
    assert "Loss for final step: 0.188040" in caplog.text  # TF: 0.18804017
    assert sorted(tf.train.list_variables(str(tmp_path))) == [
        ("dense/bias", [1]), ("dense/bias/Momentum", [1]), ("dense/kernel", [2, 1]),
        ("dense/kernel/Momentum", [2, 1]), ("global_step", [])]
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "dense/kernel").ravel(),
                               [0.22694801, 0.24816927], rtol=1e-6)
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "dense/bias"),
                               [0.6684733], rtol=1e-6)
    ev = est.evaluate(_eval_input, steps=2)  # each step: one batch per replica
    np.testing.assert_allclose([ev["loss"], ev["mae"]], [0.14152151, 0.31027642], rtol=1e-5)
    assert ev["global_step"] == 10
    preds = [p["y"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": _EX[:3]}).batch(3))]
    np.testing.assert_allclose(np.ravel(preds), [0.2012344, 0.23140058, 0.26156676],
                               rtol=1e-5)
    # export builds the single-device graph from the checkpoint, as TF's Estimator does
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 2], name="x")})
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: _EX[:3]})
    np.testing.assert_allclose(out.ravel(), [0.2012344, 0.23140058, 0.26156676], rtol=1e-5)


def test_estimator_one_replica_is_exactly_single_device(tmp_path):
    one = _estimator(tmp_path / "one", 1).train(_input_fn(1), steps=10)
    plain = _estimator(tmp_path / "plain", 1, distribute=False).train(_input_fn(1),
                                                                        steps=10)
    for name in ("dense/kernel", "dense/bias", "dense/kernel/Momentum"):
        np.testing.assert_array_equal(tf.train.load_variable(one.model_dir, name),
                                      tf.train.load_variable(plain.model_dir, name))
    assert one.evaluate(_eval_input, steps=2) == plain.evaluate(_eval_input, steps=2)
    # TF 2.15's values for this single-replica run (ms_est.py)
    np.testing.assert_allclose(tf.train.load_variable(one.model_dir, "dense/kernel").ravel(),
                               [0.22694802, 0.24816932], rtol=1e-6)
    # continue training from the checkpoint (every copy restored)
    one.train(_input_fn(1), steps=2)
    assert tf.train.load_variable(one.model_dir, "global_step") == 12


def test_canned_dnn_on_two_replicas_matches_tensorflow(tmp_path):
    rng = np.random.RandomState(1)
    x = rng.randn(40, 4).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int32)

    def input_fn(input_context=None):
        per_replica = input_context.get_per_replica_batch_size(8) if input_context else 8
        return tf.data.Dataset.from_tensor_slices(({"f": x}, y)).batch(per_replica).repeat()

    cfg = tf.estimator.RunConfig(model_dir=str(tmp_path), train_distribute=_two(),
                                 tf_random_seed=7, session_config=TWO_CPUS)
    est = tf.estimator.DNNClassifier([6], [tf.feature_column.numeric_column("f", shape=[4])],
                                     config=cfg, optimizer=tf.train.AdagradOptimizer(0.3))
    est.train(input_fn, steps=12)
    # TF's slots under the merge's variable scope, as TF 2.15 writes them
    assert sorted(n for n, _ in tf.train.list_variables(str(tmp_path))) == [
        "dnn/dnn/hiddenlayer_0/bias/Adagrad", "dnn/dnn/hiddenlayer_0/kernel/Adagrad",
        "dnn/dnn/logits/bias/Adagrad", "dnn/dnn/logits/kernel/Adagrad",
        "dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/logits/bias",
        "dnn/logits/kernel", "global_step"]
    np.testing.assert_allclose(
        tf.train.load_variable(str(tmp_path), "dnn/logits/kernel").ravel(),
        [-0.0049, 1.2205, 0.0502, 0.0427, -1.4337, -1.037], atol=1e-4)
    ev = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"f": x}, y)).batch(10),
                      steps=4)
    np.testing.assert_allclose([ev["accuracy"], ev["auc"], ev["loss"]],
                               [0.975, 0.9974747, 1.6045837], rtol=1e-4)


def test_one_device_strategy_through_an_estimator(tmp_path):
    x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(16, 3)
    y = (x.sum(1) > 0).astype(np.int32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat()

    cfg = tf.estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=3,
                                 train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"))
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=[3])],
                                        config=cfg,
                                        optimizer=tf.train.GradientDescentOptimizer(0.5))
    est.train(input_fn, steps=8)
    np.testing.assert_allclose(
        tf.train.load_variable(str(tmp_path), "linear/linear_model/x/weights").ravel(),
        [1.63743, 1.64772, 1.65801], atol=1e-5)
    ev = est.evaluate(input_fn, steps=2)
    np.testing.assert_allclose([ev["accuracy"], ev["loss"]], [1.0, 0.78337], atol=1e-5)


# -- the cluster strategies without a cluster --------------------------------------------------
def test_cluster_strategies_run_locally_as_tensorflow_does(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    exp = tf.distribute.experimental
    mw = exp.MultiWorkerMirroredStrategy()
    assert (mw.num_replicas_in_sync, mw.extended.worker_devices) == (
        1, ("/replica:0/task:0/device:CPU:0",))
    with mw.scope():
        assert type(tf.Variable(1.0, name="a")).__name__ == "MirroredVariable"
    for cls in (exp.ParameterServerStrategy, exp.CentralStorageStrategy):
        s = cls()
        assert s.num_replicas_in_sync == 1
        with s.scope():
            v = tf.Variable(1.0, name=cls.__name__)
        assert type(v).__name__ == "Variable"  # stored once (TF: a ResourceVariable)
        assert v.device == "/replica:0/task:0/device:CPU:0"
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"worker": ["a:1", "b:1"], "ps": ["c:1"]},
        "task": {"type": "worker", "index": 0}}))
    with pytest.raises(NotImplementedError, match="between-graph replication"):
        exp.MultiWorkerMirroredStrategy()
    with pytest.raises(NotImplementedError, match="ps tasks"):
        exp.ParameterServerStrategy()


def test_central_storage_two_replicas_match_tensorflow():
    """ms_central.py: the variables stored once, the same losses and weights as TF."""
    s = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    losses, w2, _, _ = _train(s)
    np.testing.assert_allclose(losses, _TF_LOSSES, atol=1e-4)
    np.testing.assert_allclose(w2, _TF_W2, atol=1e-4)
    assert len(s.experimental_local_results(w2)) == 1


# -- tf.contrib.distribute --------------------------------------------------------------------
def test_contrib_distribute_aliases(monkeypatch):
    cd = tf.contrib.distribute
    assert cd.MirroredStrategy(num_gpus=0).extended.worker_devices == (
        "/replica:0/task:0/device:CPU:0",)
    assert cd.MirroredStrategy(["/cpu:0", "/cpu:1"]).num_replicas_in_sync == 2
    with pytest.raises(ValueError, match="only specify one"):
        cd.MirroredStrategy(devices=["/cpu:0"], num_gpus=1)
    ops = cd.AllReduceCrossDeviceOps("hierarchical_copy", num_packs=2)
    assert (ops.all_reduce_alg, ops.num_packs) == ("hierarchical_copy", 2)
    assert cd.OneDeviceStrategy is tf.distribute.OneDeviceStrategy
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert cd.CollectiveAllReduceStrategy(num_gpus_per_worker=0).num_replicas_in_sync == 1
    assert cd.ParameterServerStrategy().extended.parameter_devices == (
        "/replica:0/task:0/device:CPU:0",)


def _has_opencl_gpu() -> bool:
    with tf.Graph().as_default(), tf.Session() as sess:
        return any(":GPU:" in d.name for d in sess.list_devices())


@pytest.mark.skipif(not _has_opencl_gpu(), reason="no OpenCL device (pocl-opencl-icd)")
def test_second_replica_on_an_opencl_device():
    """Replica 1 on the OpenCL device (PoCL here): the same losses and weights as TF's
    two CPU replicas."""
    s = tf.distribute.MirroredStrategy(["/cpu:0", "/gpu:0"])
    with s.scope():
        it, total, w2 = _adam_model(s)
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initializer)
        losses = [float(sess.run(total)) for _ in range(6)]
        copies = [sess.run(c).ravel() for c in s.experimental_local_results(w2)]
    np.testing.assert_allclose(losses, _TF_LOSSES, atol=1e-4)
    for c in copies:
        np.testing.assert_allclose(c, _TF_W2, atol=1e-4)


def test_tf_distribute_is_not_shadowed_by_the_strategies_package():
    """The strategies live in `flowgraph.strategies`: a package named `flowgraph.distribute`
    would replace the lazy `tf.distribute` namespace once imported."""
    code = ("import flowgraph.strategies, flowgraph.estimators.estimator_distribute\n"
            "import flowgraph as tf\n"
            "print(tf.distribute.__name__, tf.distribute.get_strategy().num_replicas_in_sync)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["flowgraph.compat.distribute", "1"]


def test_v1_api_input_fn_iterator_experimental_run_and_unwrap():
    """ms_input_fn.py: TF1's V1 strategy API; TF 2.15's losses and weights."""
    x = np.arange(48, dtype=np.float32).reshape(24, 2) / 24.0
    y = (x[:, :1] * 3.0 - x[:, 1:] + 0.25).astype(np.float32)
    s = _two()

    def input_fn(ctx):
        return tf.data.Dataset.from_tensor_slices((x, y)).shard(
            ctx.num_input_pipelines, ctx.input_pipeline_id).batch(
            ctx.get_per_replica_batch_size(6)).repeat()

    with s.scope():
        it = s.make_input_fn_iterator(input_fn)
        dense = tf.layers.Dense(1, kernel_initializer=tf.zeros_initializer(), name="fc")
        opt = tf.train.MomentumOptimizer(0.1, 0.5)

        def step(inputs):
            loss = tf.losses.mean_squared_error(inputs[1], dense(inputs[0]))
            with tf.control_dependencies([opt.minimize(loss)]):
                return tf.identity(loss)

        per_replica = s.experimental_run(step, it)
        mean_loss = s.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None)
        assert len(s.unwrap(per_replica)) == 2
        assert [v.name for v in tf.global_variables()] == [
            "fc/kernel:0", "fc/bias:0", "fc/kernel/Momentum:0", "fc/bias/Momentum:0"]
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(it.initialize())
        losses = [float(sess.run(mean_loss)) for _ in range(5)]
        kernel, bias = sess.run(dense.kernel).ravel(), sess.run(dense.bias)
    np.testing.assert_allclose(losses, [0.47164, 1.67636, 0.29669, 1.3149, 0.63638],
                               atol=2e-5)
    np.testing.assert_allclose(kernel, [0.06232, 0.09577], atol=1e-5)
    np.testing.assert_allclose(bias, [0.80271], atol=1e-5)
