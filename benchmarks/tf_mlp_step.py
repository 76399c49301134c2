"""The MLP step of `bench_mlp.py`, written once, timed under TensorFlow or flowgraph.

TensorFlow is not a dependency: run this script with the oracle environment's Python for
TensorFlow 2.15's figure, and with flowgraph's for flowgraph's, in the same hour::

    /tmp/tf-oracle-venv/bin/python benchmarks/tf_mlp_step.py          # TensorFlow
    TF_MODULE=flowgraph python benchmarks/tf_mlp_step.py              # flowgraph

Prints one JSON line per optimizer: the best mean step time (ms) over 7 repeats of 50
steps, default session settings, feeding NumPy batches (784-512-512-10, batch 256).
"""

from __future__ import annotations

import importlib
import json
import os
import time

MODULE = os.environ.get("TF_MODULE", "tensorflow.compat.v1")
tf = importlib.import_module(MODULE)
if MODULE != "flowgraph":
    tf.disable_v2_behavior()

import numpy as np  # noqa: E402  (after the framework: flowgraph picks OpenBLAS's kernels)


def step_ms(optimizer: str) -> float:
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((256, 784)).astype(np.float32) for _ in range(4)]
    ys = [rng.integers(0, 10, 256).astype(np.int64) for _ in range(4)]
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.dense(x, 512, activation=tf.nn.relu)
        h = tf.layers.dense(h, 512, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        opt = (tf.train.AdamOptimizer(1e-3) if optimizer == "adam"
               else tf.train.GradientDescentOptimizer(0.05))
        train = opt.minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        feeds = [{x: a, y: b} for a, b in zip(xs, ys)]
        for i in range(30):
            sess.run([train, loss], feeds[i % 4])
        best = float("inf")
        for _ in range(7):
            t0 = time.perf_counter()
            for i in range(50):
                sess.run([train, loss], feeds[i % 4])
            best = min(best, (time.perf_counter() - t0) / 50)
    return best * 1e3


if __name__ == "__main__":
    for name in ("sgd", "adam"):
        print(json.dumps({"bench": "tf_mlp_step", "framework": MODULE, "optimizer": name,
                          "ms_per_step": round(step_ms(name), 3)}))
