"""The quickstart job: train a softmax classifier on the bundled digits data set.

It is written in TensorFlow 1.x graph style (placeholders, variables, a session loop)
with the gradient spelled out by hand, and prints the test accuracy. When the Estimator
harness lands, this job becomes an Estimator run that also writes checkpoints and
TensorBoard logs to ``--model_dir``.

Run: ``python -m flowgraph.examples.quickstart --steps 300``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split


def build_and_train(steps: int = 300, batch_size: int = 128, learning_rate: float = 0.5,
                    seed: int = 0) -> dict:
    """Train and evaluate; returns a dict of metrics."""
    x_all, y_all = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(x_all / 16.0, y_all, seed=seed)
    n_features, n_classes = x_train.shape[1], 10
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [None, n_features], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        w = tf.Variable(np.zeros((n_features, n_classes), np.float32), name="weights")
        b = tf.Variable(np.zeros(n_classes, np.float32), name="bias")
        logits = tf.matmul(x, w) + b
        probs = tf.nn.softmax(logits)
        onehot = tf.one_hot(labels, n_classes, dtype=tf.float32)
        loss = -tf.reduce_mean(tf.reduce_sum(onehot * tf.log(probs + 1e-8), axis=1))
        # d loss / d logits for softmax cross-entropy, averaged over the batch.
        n = tf.cast(tf.shape(x)[0], tf.float32)
        dlogits = (probs - onehot) / n
        train = tf.group(
            tf.assign_sub(w, learning_rate * tf.matmul(x, dlogits, transpose_a=True)),
            tf.assign_sub(b, learning_rate * tf.reduce_sum(dlogits, axis=0)),
        )
        correct = tf.equal(tf.argmax(logits, axis=1), labels)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        init = tf.global_variables_initializer()

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(1, steps + 1):
            idx = rng.integers(0, len(x_train), batch_size)
            _, batch_loss = sess.run([train, loss], {x: x_train[idx], labels: y_train[idx]})
            if step % 100 == 0 or step == steps:
                print(f"step {step}: loss = {batch_loss:.4f}")
        elapsed = time.perf_counter() - start
        test_accuracy, test_loss = sess.run([accuracy, loss], {x: x_test, labels: y_test})
    return {"accuracy": float(test_accuracy), "loss": float(test_loss),
            "steps": steps, "steps_per_sec": steps / elapsed}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--model_dir", default=None,
                        help="where checkpoints and logs will go (Estimator version)")
    args = parser.parse_args(argv)
    metrics = build_and_train(steps=args.steps)
    print("test metrics: " + ", ".join(f"{k} = {v:.4g}" for k, v in metrics.items()))
    if args.model_dir:
        os.makedirs(args.model_dir, exist_ok=True)
        print(f"model_dir: {os.path.abspath(args.model_dir)} (checkpoints and TensorBoard "
              "logs arrive with the Estimator harness)")
    return metrics


if __name__ == "__main__":
    main()
