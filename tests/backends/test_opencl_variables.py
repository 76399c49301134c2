"""Variables that live on an OpenCL device: training with device-resident variables and
optimizer slots, checkpoints across devices, sparse updates, reads from other devices."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split
from flowgraph.ops.training_ops import apply_op
from tests.backends.opencl_support import opencl_devices

opencl_devices()
SOFT = tf.ConfigProto(allow_soft_placement=True)
CPU_ONLY = tf.ConfigProto(device_count={"GPU": 0})
TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _placed(md) -> dict[str, set[str]]:
    """Op type -> the devices ('CPU'/'GPU') its nodes ran on in a traced step."""
    out: dict[str, set[str]] = {}
    for d in md.step_stats.dev_stats:
        kind = "GPU" if "GPU:" in d.device else "CPU"
        for n in d.node_stats:
            out.setdefault(n.op_type, set()).add(kind)
    return out


def _digits():
    data, labels = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(data / 16.0, labels, seed=0)
    return (x_train.astype(np.float32), x_test.astype(np.float32), y_train, y_test)


def _mlp(device: str):
    with tf.device(device):
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = tf.layers.dense(x, 64, activation=tf.nn.relu, name="hidden1")
        h = tf.layers.dense(h, 32, activation=tf.nn.relu, name="hidden2")
        logits = tf.layers.dense(h, 10, name="logits")
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return x, y, logits, train_op, accuracy


def test_the_digits_mlp_trains_with_its_variables_on_the_device(tmp_path):
    x_train, x_test, y_train, y_test = _digits()
    gpu_ckpt, cpu_ckpt = str(tmp_path / "gpu.ckpt"), str(tmp_path / "cpu.ckpt")
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, y, logits, train_op, accuracy = _mlp("/gpu:0")
        saver = tf.train.Saver()
        rng = np.random.RandomState(0)
        md = tf.RunMetadata()
        with tf.Session(config=SOFT) as sess:
            sess.run(tf.global_variables_initializer())
            for epoch in range(15):
                order = rng.permutation(len(x_train))
                for i in range(0, len(order), 64):
                    idx = order[i:i + 64]
                    traced = dict(options=TRACE, run_metadata=md) if epoch == 0 and i == 0 \
                        else {}
                    sess.run(train_op, {x: x_train[idx], y: y_train[idx]}, **traced)
            acc, on_gpu = sess.run([accuracy, logits], {x: x_test, y: y_test})
            saver.save(sess, gpu_ckpt)
    assert acc >= 0.95, f"test accuracy {acc:.3f}"
    placed = _placed(md)
    assert placed["ApplyAdam"] == {"GPU"}, placed
    assert placed["VariableV2"] == {"GPU"}, placed  # the weights and Adam's slots
    assert placed["MatMul"] == {"GPU"}, placed

    # The GPU run's checkpoint restores into a CPU-only graph ...
    with tf.Graph().as_default():
        x, _, logits, _, _ = _mlp("/cpu:0")
        saver = tf.train.Saver()
        with tf.Session(config=CPU_ONLY) as sess:
            saver.restore(sess, gpu_ckpt)
            on_cpu = sess.run(logits, {x: x_test})
            saver.save(sess, cpu_ckpt)
    np.testing.assert_allclose(on_cpu, on_gpu, rtol=1e-4, atol=1e-4)

    # ... and the CPU's checkpoint back into variables on the device.
    with tf.Graph().as_default():
        x, _, logits, _, _ = _mlp("/gpu:0")
        saver = tf.train.Saver()
        md = tf.RunMetadata()
        with tf.Session(config=SOFT) as sess:
            saver.restore(sess, cpu_ckpt)
            again = sess.run(logits, {x: x_test}, options=TRACE, run_metadata=md)
    assert _placed(md)["VariableV2"] == {"GPU"}
    np.testing.assert_allclose(again, on_cpu, rtol=1e-4, atol=1e-4)


def _embedding_run(device: str, config):
    rng = np.random.RandomState(3)
    table = rng.uniform(-1, 1, (20, 6)).astype(np.float32)
    batches = [rng.randint(0, 20, size=12) for _ in range(5)]
    with tf.Graph().as_default():
        with tf.device(device):
            emb = tf.Variable(table, name="emb")
            ids = tf.placeholder(tf.int32, [None])
            rows = tf.nn.embedding_lookup(emb, ids)
            loss = tf.reduce_sum(tf.square(rows - 0.5))
            train = tf.train.AdagradOptimizer(0.3).minimize(loss)
        md = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            for k, b in enumerate(batches):  # ids repeat within batches: duplicates add up
                sess.run(train, {ids: b}, **(dict(options=TRACE, run_metadata=md) if k == 0
                                             else {}))
            return sess.run(emb), _placed(md)


def test_a_sparse_adagrad_update_of_an_embedding_on_the_device_matches_the_cpu():
    on_gpu, placed = _embedding_run("/gpu:0", SOFT)
    on_cpu, _ = _embedding_run("/cpu:0", CPU_ONLY)
    assert placed["SparseApplyAdagrad"] == {"GPU"}, placed
    assert placed["VariableV2"] == {"GPU"}, placed
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-5, atol=1e-6)


def test_assignments_fetches_and_reads_from_the_cpu():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
            up = tf.assign_add(v, tf.ones([2, 3]))
            down = tf.assign_sub(v, tf.fill([2, 3], 0.5))
            initialized = tf.is_variable_initialized(v)
        with tf.device("/cpu:0"):
            # A CPU op reading the device variable as a value, after an update.
            with tf.control_dependencies([up]):
                total = tf.add_n([v, v])
        with tf.Session(config=SOFT) as sess:
            assert not sess.run(initialized)
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(v)
            sess.run(tf.global_variables_initializer())
            assert sess.run(initialized)
            base = np.arange(6, dtype=np.float32).reshape(2, 3)
            np.testing.assert_array_equal(sess.run(v), base)
            fetched = sess.run(up)
            assert isinstance(fetched, np.ndarray)
            np.testing.assert_array_equal(fetched, base + 1)
            np.testing.assert_array_equal(sess.run(down), base + 0.5)
            np.testing.assert_array_equal(sess.run(total), 2 * (base + 1.5))
            np.testing.assert_array_equal(sess.run(v), base + 1.5)


def test_update_errors_name_the_op():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            v = tf.Variable(np.zeros((4, 2), np.float32))
            accum = tf.Variable(np.ones((4, 2), np.float32))
            grad = tf.placeholder(tf.float32, [None, 2])
            ids = tf.placeholder(tf.int32, [None])
            step = apply_op("SparseApplyAdagrad", {"var": v, "accum": accum, "lr": 0.1,
                                                   "grad": grad, "indices": ids})
        with tf.Session(config=SOFT) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4"):
                sess.run(step, {grad: np.ones((2, 2), np.float32), ids: [0, 4]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"len\(indices\)"):
                sess.run(step, {grad: np.ones((3, 2), np.float32), ids: [0, 1]})
            np.testing.assert_array_equal(sess.run(v), np.zeros((4, 2), np.float32))
