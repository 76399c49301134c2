"""One task of the test cluster, configured by TF_CONFIG (run as a subprocess).

A ps task serves until killed. A chief or worker task trains y = x.w + b by
asynchronous SGD with its variables on the ps (between-graph replication), stops at
global step ``STEPS`` and prints one JSON line with the final loss on all the data.
"""

import json
import sys
import time

import numpy as np

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 150
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)


def data(seed: int):
    x = np.random.RandomState(seed).randn(64, 3).astype(np.float32)
    return x, x @ TRUE_W + 0.25


def main() -> None:
    config = tf.estimator.RunConfig()  # reads TF_CONFIG
    server = Server(config.cluster_spec, job_name=config.task_type,
                    task_index=config.task_id)
    if config.task_type == "ps":
        server.join()
        return
    worker = f"/job:{config.task_type}/task:{config.task_id}"
    with tf.Graph().as_default(), tf.device(
            replica_device_setter(worker_device=worker, cluster=config.cluster_spec)):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
        if not config.is_chief:  # wait for the chief's initialization (0.05 s polls)
            ready = tf.report_uninitialized_variables()
            with tf.Session(server.target) as probe:
                while len(probe.run(ready)):
                    time.sleep(0.05)
        bx, by = data(config.task_id + (0 if config.is_chief else 100))
        hooks = [tf.train.StopAtStepHook(last_step=STEPS)]
        mine = 0
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=config.is_chief, hooks=hooks,
                log_step_count_steps=None, save_summaries_steps=None,
                save_checkpoint_secs=None) as sess:
            while not sess.should_stop():
                sess.run(train, {x: bx, y: by})
                mine += 1
        ax, ay = data(7)
        with tf.Session(server.target) as check:
            final = check.run(loss, {x: ax, y: ay})
            global_step = check.run(step)
    print(json.dumps({"task": worker, "loss": float(final), "my_steps": mine,
                      "global_step": int(global_step)}), flush=True)


if __name__ == "__main__":
    main()
