"""TF1's manual SyncReplicasOptimizer set-up (the ``mnist_replica.py`` example): no hook,
a `Supervisor` with the optimizer's ``local_step_init_op`` / ``ready_for_local_init_op``,
the chief running ``get_init_tokens_op()`` and starting ``get_chief_queue_runner()``."""

import threading

import numpy as np
import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import replica_device_setter


def _worker(cluster, servers, index, logdir, out, started):
    with tf.Graph().as_default(), tf.device(replica_device_setter(
            worker_device=f"/job:worker/task:{index}", cluster=cluster)):
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        loss = tf.reduce_sum(tf.square(w - tf.constant([1.0, 2.0]) * (index + 1)))
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=2, total_num_replicas=2)
        train = opt.minimize(loss, global_step=gs)
        is_chief = index == 0
        if is_chief:
            runner = opt.get_chief_queue_runner()
            init_tokens = opt.get_init_tokens_op()
            assert type(opt.chief_init_op).__name__ == "Operation"
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=logdir if is_chief else None,
                                 init_op=tf.global_variables_initializer(),
                                 local_init_op=opt.local_step_init_op,
                                 ready_for_local_init_op=opt.ready_for_local_init_op,
                                 recovery_wait_secs=0.1, global_step=gs,
                                 save_model_secs=0, save_summaries_secs=0)
        sess = sv.prepare_or_wait_for_session(servers[index].target)
        if is_chief:
            sess.run(init_tokens)
            sv.start_queue_runners(sess, [runner])
        started.wait(30)  # (both start together: the race below becomes rare)
        step = 0
        while step < 6:
            try:
                _, step = sess.run([train, gs], options=tf.RunOptions(timeout_in_ms=5_000))
            except tf.errors.DeadlineExceededError:
                # A worker that lags (here: descheduled on a loaded host) can find the
                # other one done: while it waited, the other took both tokens of every
                # aggregation and pushed both gradients, which TF's token queue allows
                # too, and no aggregation will issue this worker's token. TF waits
                # forever there; the deadline ends it. Only that case is accepted.
                if sess.run(gs) < 6:
                    raise
                break
        out[index] = sess.run(w)
        sv.stop()


def test_the_manual_set_up_of_tf1_trains_synchronously(servers, tmp_path):
    cluster = {"ps": [f"localhost:{free_port()}"],
               "worker": [f"localhost:{free_port()}", f"localhost:{free_port()}"]}
    servers(cluster, "ps", 0)
    workers = [servers(cluster, "worker", i) for i in range(2)]
    out = {}
    started = threading.Barrier(2)
    threads = [threading.Thread(target=_worker,
                                args=(cluster, workers, i, str(tmp_path), out, started))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(out) == [0, 1]
    # Every aggregation averages two gradients toward the targets [1, 2] and [2, 4]:
    # w moves from 0 toward their mean [1.5, 3] (which worker's gradients an early
    # aggregation takes depends on timing, as in TF), keeping w[1] = 2 w[0].
    for w in out.values():
        assert 0.5 < w[0] < 1.5 and np.isclose(w[1], 2 * w[0], rtol=1e-5), w


def test_the_chief_queue_runner_needs_apply_gradients_first():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        with pytest.raises(ValueError, match="after apply_gradients"):  # TF's words
            opt.get_chief_queue_runner()


def test_accumulators_are_no_global_variables_and_checkpoints_hold_the_model(tmp_path):
    """As TF 2.15 (tf-oracle): global variables ['global_step', 'w', 'w/Momentum'], so a
    checkpoint of a plain training graph restores into a synchronous one."""
    path = str(tmp_path / "model")
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, 2.0], name="w")
        tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w * w),
                                                       global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign([3.0, 4.0]))
            tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([0.0, 0.0], name="w")
        opt = tf.train.SyncReplicasOptimizer(tf.train.MomentumOptimizer(0.1, 0.9), 1)
        train = opt.minimize(tf.reduce_sum(w * w), global_step=step)
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "global_step", "w", "w/Momentum"]
        hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        scaffold = tf.train.Scaffold(saver=tf.train.Saver())
        with tf.train.MonitoredSession(
                session_creator=tf.train.ChiefSessionCreator(
                    scaffold=scaffold, checkpoint_filename_with_path=path),
                hooks=[hook]) as sess:
            assert sess.run(w).tolist() == [3.0, 4.0]
            sess.run(train)  # one aggregation of one replica: plain momentum
            np.testing.assert_allclose(sess.run(w), [2.4, 3.2], rtol=1e-6)
