"""One task of a synchronous-replicas cluster, configured by TF_CONFIG (a subprocess).

A ps task serves until killed. The chief and the worker train y = x.w + b with
`tf.train.SyncReplicasOptimizer` (both gradients averaged per global step), each on
its own batch, stop at global step the step given as argument and print one JSON line: the final
variables, the global step and how many train steps this task ran.
"""

import json
import sys
import time

import numpy as np

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter

LEARNING_RATE = 0.1
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)


def batch(seed: int):
    x = np.random.RandomState(seed).randn(16, 3).astype(np.float32)
    return x, x @ TRUE_W + 0.25


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    config = tf.estimator.RunConfig()
    server = Server(config.cluster_spec, job_name=config.task_type,
                    task_index=config.task_id)
    if config.task_type == "ps":
        server.join()
        return
    replicas = config.num_worker_replicas
    worker = f"/job:{config.task_type}/task:{config.task_id}"
    with tf.Graph().as_default(), tf.device(
            replica_device_setter(worker_device=worker, cluster=config.cluster_spec)):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(LEARNING_RATE),
            replicas_to_aggregate=replicas, total_num_replicas=replicas)
        train = opt.minimize(loss, global_step=step)
        if not config.is_chief:  # wait for the chief's initialization of the ps variables
            ready = tf.report_uninitialized_variables(tf.global_variables())
            with tf.Session(server.target) as probe:
                while len(probe.run(ready)):
                    time.sleep(0.05)
        bx, by = batch(0 if config.is_chief else 100 + config.task_id)
        hooks = [opt.make_session_run_hook(config.is_chief, num_tokens=0),
                 tf.train.StopAtStepHook(last_step=steps)]
        mine = 0
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=config.is_chief, hooks=hooks,
                log_step_count_steps=None, save_summaries_steps=None,
                save_checkpoint_secs=None) as sess:
            while not sess.should_stop():
                sess.run(train, {x: bx, y: by})
                mine += 1
        with tf.Session(server.target) as check:
            final_w, final_b, global_step = check.run([w, b, step])
    print(json.dumps({"task": worker, "w": final_w.ravel().tolist(),
                      "b": final_b.tolist(), "global_step": int(global_step),
                      "my_steps": mine}), flush=True)


if __name__ == "__main__":
    main()
