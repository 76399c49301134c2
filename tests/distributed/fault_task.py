"""One task of the fault tests, configured by TF_CONFIG (run as a subprocess).

Usage: ``fault_task.py MODEL_DIR STOP_FILE``. A ps serves until it is killed. A chief or
worker trains a linear model with its variables on the ps (``MonitoredTrainingSession``;
the chief checkpoints every 10 steps to MODEL_DIR), pausing 10 ms between steps, until
STOP_FILE exists. It prints one JSON line per event, with the wall time ``t``:
``created`` (a session was created or re-created after a failure; ``step`` is the global
step it starts from), ``step`` (after each step) and ``done``.
"""

import json
import os
import sys
import time

import numpy as np

import flowgraph as tf
from flowgraph.distributed import Server, replica_device_setter

MODEL_DIR, STOP_FILE = sys.argv[1], sys.argv[2]


def say(event: str, **fields) -> None:
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)


class Reporter(tf.train.SessionRunHook):
    """Prints the events; stops the loop once STOP_FILE exists."""

    def __init__(self, step) -> None:
        self._step = step

    def after_create_session(self, session, coord):
        say("created", step=int(session.run(self._step)))

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        say("step", step=int(run_values.results))
        if os.path.exists(STOP_FILE):
            run_context.request_stop()


def main() -> None:
    config = tf.estimator.RunConfig()  # reads TF_CONFIG
    server = Server(config.cluster_spec, job_name=config.task_type,
                    task_index=config.task_id)
    if config.task_type == "ps":
        say("serving")
        server.join()
        return
    worker = f"/job:{config.task_type}/task:{config.task_id}"
    rng = np.random.RandomState(config.task_id + 10 * config.is_chief)
    bx = rng.randn(32, 3).astype(np.float32)
    by = bx @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    with tf.Graph().as_default(), tf.device(
            replica_device_setter(worker_device=worker, cluster=config.cluster_spec)):
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=config.is_chief,
                checkpoint_dir=MODEL_DIR if config.is_chief else None,
                save_checkpoint_steps=10, save_summaries_steps=None,
                log_step_count_steps=None, hooks=[Reporter(step)], max_wait_secs=60,
                config=tf.ConfigProto(operation_timeout_in_ms=10_000)) as sess:
            while not sess.should_stop():
                sess.run(train, {x: bx, y: by})
                time.sleep(0.01)
    say("done")


if __name__ == "__main__":
    main()
