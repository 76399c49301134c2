"""One task of a synchronous-replicas cluster, configured by TF_CONFIG (a subprocess).

A ps task serves until killed. The chief and the worker train y = x.w + b with
`tf.train.SyncReplicasOptimizer` (both gradients averaged per global step), each on
its own batch, stop at global step the step given as argument and print one JSON line: the final
variables, the global step and how many train steps this task ran.
"""

import json
import sys

import numpy as np
from task_util import linear_model, replica_graph, start_task, wait_for_chief

import flowgraph as tf

LEARNING_RATE = 0.1
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)


def batch(seed: int):
    x = np.random.RandomState(seed).randn(16, 3).astype(np.float32)
    return x, x @ TRUE_W + 0.25


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    task = start_task()
    if task is None:
        return
    config, server, worker = task
    replicas = config.num_worker_replicas
    with replica_graph(config, worker):
        step, x, y, w, b, loss = linear_model()
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(LEARNING_RATE),
            replicas_to_aggregate=replicas, total_num_replicas=replicas)
        train = opt.minimize(loss, global_step=step)
        if not config.is_chief:
            wait_for_chief(server, tf.global_variables())
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
