"""The tf.train names added for TF1 API coverage (issue 15): proximal optimizers and
AdagradDA, more learning-rate schedules, maybe_batch*, checkpoint polling, the cluster
messages. Expected numbers were recorded from TensorFlow 2.15 (tf.compat.v1) with the
tf-oracle, running the same programs."""

from __future__ import annotations

import doctest
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.distributed import cluster_protos
from flowgraph.train import (
    checkpoint_iteration,
    input_maybe,
    learning_rate_decay_extra,
    proximal,
)


@pytest.mark.parametrize("module", [proximal, learning_rate_decay_extra, input_maybe,
                                    checkpoint_iteration, cluster_protos])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


_WEIGHTS = [[1.0, 2.0], [3.0, 1.0], [0.5, 0.5]]


def _three_steps(make, sparse):
    with tf.Graph().as_default():
        w = tf.Variable([[1.0, -2.0], [0.5, 0.3], [-0.7, 0.2]], dtype=tf.float32)
        gs = tf.train.get_or_create_global_step()
        rows = tf.gather(w, [0, 2, 0]) if sparse else w
        loss = tf.reduce_sum(tf.square(rows) * _WEIGHTS)
        step = make(gs).minimize(loss, global_step=gs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            return sess.run(w).ravel()


# name -> (optimizer, TF's weights after 3 dense steps, after 3 sparse steps)
_TF_RESULTS = {
    "pgd": (lambda gs: tf.train.ProximalGradientDescentOptimizer(0.1, 0.05, 0.1),
            [0.48496, -0.40966, 0.02337, 0.13711, -0.482, 0.12822],
            [0.32215, -0.23403, 0.5, 0.3, -0.03579, 0.08741]),
    "pada": (lambda gs: tf.train.ProximalAdagradOptimizer(0.3, 0.1, 0.05, 0.1),
             [0.3809, -1.3396, 0.03156, 0.0, -0.1315, 0.0],
             [0.38899, -1.3429, 0.5, 0.3, -0.15238, 0.0]),
    "ada_da": (lambda gs: tf.train.AdagradDAOptimizer(0.3, gs, 0.1, 0.05, 0.1),
               [-0.12288, 0.20652, -0.04301, 0.0, 0.06046, 0.0],
               [-0.12873, 0.20784, 0.5, 0.3, 0.08717, 0.0]),
    "ada_da0": (lambda gs: tf.train.AdagradDAOptimizer(0.3, gs),
                [-0.1407, 0.21302, -0.04961, -0.0073, 0.09742, -0.00767],
                [-0.14073, 0.21306, 0.5, 0.3, 0.09366, 0.00412]),
}


@pytest.mark.parametrize("name", sorted(_TF_RESULTS))
def test_optimizers_match_tensorflow(name):
    make, dense, sparse = _TF_RESULTS[name]
    np.testing.assert_allclose(_three_steps(make, False), dense, atol=2e-5)
    np.testing.assert_allclose(_three_steps(make, True), sparse, atol=2e-5)


def test_optimizer_slots_and_arguments():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step())
        opt.minimize(tf.reduce_sum(w))
        assert sorted(opt.get_slot_names()) == ["gradient_accumulator",
                                                "gradient_squared_accumulator"]
        with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
            tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
        with pytest.raises(ValueError, match="needs global_step"):
            tf.train.AdagradDAOptimizer(0.1, None).minimize(tf.reduce_sum(w))


def test_schedules_match_tensorflow():
    # TF 2.15 values at steps 0, 3, 10, 15, 25, 40, 70 for three schedules each.
    want = [0.5, 0.5, 0.555, 0.40725, 0.39695, 0.45453, 0.41, 0.4, 0.04797, 0.35728, 0.2,
            0.0432, 0.10272, 0.16, 0.305, 0.29582, 0.2048, 0.01932, 0.2804, 0.10486, 0.055]
    with tf.Graph().as_default():
        outs = []
        for step in [0, 3, 10, 15, 25, 40, 70]:
            st = tf.constant(step)
            outs.append(tf.train.cosine_decay_restarts(0.5, st, 10, t_mul=2.0, m_mul=0.8,
                                                       alpha=0.1))
            outs.append(tf.train.cosine_decay_restarts(0.5, st, 10, t_mul=1.0, m_mul=0.8))
            outs.append(tf.train.linear_cosine_decay(0.5, st, 50, num_periods=2.0,
                                                     alpha=0.1, beta=0.01))
        noisy = tf.train.noisy_linear_cosine_decay(1.0, tf.constant(10), 100)
        with tf.Session() as sess:
            got = sess.run(outs)
            draws = [sess.run(noisy) for _ in range(20)]
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert np.std(draws) > 0.01  # a fresh noise draw per run
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.linear_cosine_decay(0.1, None, 10)


def _drain(batch, runs):
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        out = [sess.run(batch) for _ in range(runs)]
        coord.request_stop()
        coord.join(threads)
    return out


def test_maybe_batch_keeps_only_selected_elements():
    with tf.Graph().as_default():
        counter = tf.Variable(0)
        x = tf.assign_add(counter, 1)
        b = tf.train.maybe_batch({"x": x}, tf.equal(x % 3, 0), batch_size=2)
        with tf.Session() as sess:
            sess.run(counter.initializer)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = sess.run(b)["x"]
            coord.request_stop()
            coord.join(threads)
    assert all(v % 3 == 0 for v in got)
    with tf.Graph().as_default():
        x = tf.constant([[1, 1], [2, 2], [3, 3]])
        keep = tf.constant([True, False, True])
        (b,) = _drain(tf.train.maybe_shuffle_batch([x], 2, 10, 1, keep, enqueue_many=True),
                      1)[0:1]
        assert set(b[:, 0].tolist()) <= {1, 3}
        joined = tf.train.maybe_batch_join([[x], [x]], keep, 4, enqueue_many=True)
        assert set(_drain(joined, 1)[0][:, 0].tolist()) <= {1, 3}
        with pytest.raises(ValueError, match="scalar bool, or a vector"):
            tf.train.maybe_batch([x], keep, 2)


def test_checkpoints_iterator_and_timeout_fn(tmp_path):
    calls = []

    def timeout_fn():
        calls.append(1)
        return len(calls) >= 2

    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.05,
                                              timeout_fn=timeout_fn)) == []
    assert len(calls) == 2
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            saver.save(sess, os.path.join(tmp_path, "m.ckpt"), global_step=1)
    it = tf.train.checkpoints_iterator(str(tmp_path), timeout=0.05)
    assert os.path.basename(next(it)) == "m.ckpt-1"
    assert list(it) == []


def test_cluster_messages_round_trip():
    spec = tf.train.ClusterSpec({"ps": ["h:1"], "worker": ["h:2", "h:3"]})
    cluster = cluster_protos.cluster_def_from_spec(spec)
    server = tf.train.ServerDef(cluster=cluster, job_name="worker", task_index=1,
                                protocol="grpc")
    back = tf.train.ServerDef.FromString(server.SerializeToString())
    assert back.job_name == "worker" and back.task_index == 1
    assert [(j.name, dict(j.tasks)) for j in back.cluster.job] == [
        ("ps", {0: "h:1"}), ("worker", {0: "h:2", 1: "h:3"})]
    # protobuf's encoding: field 1 (name) then the map entry (key 0, value "a:1").
    assert tf.train.JobDef(name="w", tasks={0: "a:1"}).SerializeToString() == (
        b"\n\x01w\x12\x07\x08\x00\x12\x03a:1")
