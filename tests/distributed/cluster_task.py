"""One task of the test cluster, configured by TF_CONFIG (run as a subprocess).

A ps task serves until killed. A chief or worker task trains y = x.w + b by
asynchronous SGD with its variables on the ps (between-graph replication), stops at
global step ``STEPS`` and prints one JSON line with the final loss on all the data.
"""

import json
import sys

import numpy as np
from task_util import linear_model, replica_graph, start_task, wait_for_chief

import flowgraph as tf

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 150
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)


def data(seed: int):
    x = np.random.RandomState(seed).randn(64, 3).astype(np.float32)
    return x, x @ TRUE_W + 0.25


def main() -> None:
    task = start_task()
    if task is None:
        return
    config, server, worker = task
    with replica_graph(config, worker):
        step, x, y, _, _, loss = linear_model()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
        if not config.is_chief:
            wait_for_chief(server)
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
