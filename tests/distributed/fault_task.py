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
from task_util import linear_model, replica_graph, start_task

import flowgraph as tf

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
    task = start_task(on_serve=lambda: say("serving"))
    if task is None:
        return
    config, server, worker = task
    rng = np.random.RandomState(config.task_id + 10 * config.is_chief)
    bx = rng.randn(32, 3).astype(np.float32)
    by = bx @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    with replica_graph(config, worker):
        step, x, y, _, _, loss = linear_model(bias=False)
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
