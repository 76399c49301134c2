"""The quickstart job: train and evaluate an Estimator on the bundled digits data set.

A custom ``model_fn`` (two ``tf.layers.dense`` hidden layers, softmax cross-entropy,
Adam) trained with ``tf.estimator.train_and_evaluate``. It prints the evaluation
metrics and leaves checkpoints and TensorBoard event files in the printed model_dir
(``tensorboard --logdir MODEL_DIR`` shows the loss curves and the graph).

Run: ``python -m flowgraph.examples.quickstart --model_dir /tmp/digits --steps 1000``
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split


def model_fn(features, labels, mode, params):
    """A 64 -> 128 -> 64 -> 10 classifier in tf.layers."""
    net = features["pixels"]
    for units in params["hidden_units"]:
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 10)
    predicted = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={
            "class_ids": predicted, "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    metrics = {"accuracy": tf.metrics.accuracy(labels=labels, predictions=predicted)}
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.train.AdamOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def run(model_dir: str, steps: int = 1000, batch_size: int = 64, seed: int = 0) -> dict:
    """Train and evaluate; returns the final evaluation metrics."""
    x, y = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(x / 16.0, y, seed=seed)
    train_input = tf.estimator.inputs.numpy_input_fn(
        {"pixels": x_train}, y_train, batch_size=batch_size, num_epochs=None, shuffle=True)
    eval_input = tf.estimator.inputs.numpy_input_fn(
        {"pixels": x_test}, y_test, batch_size=len(x_test), num_epochs=1, shuffle=False)
    config = tf.estimator.RunConfig(tf_random_seed=seed, save_summary_steps=100,
                                    log_step_count_steps=max(steps // 5, 1))
    estimator = tf.estimator.Estimator(
        model_fn, model_dir=model_dir, config=config,
        params={"hidden_units": [128, 64], "learning_rate": 0.003})
    start = time.perf_counter()
    metrics, _ = tf.estimator.train_and_evaluate(
        estimator,
        tf.estimator.TrainSpec(train_input, max_steps=steps),
        tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0),
    )
    metrics = dict(metrics or {})
    metrics["seconds"] = time.perf_counter() - start
    return metrics


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", default=None,
                        help="where checkpoints and TensorBoard logs go (default: a new "
                             "temporary directory)")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(message)s")
    tf.logging.use_root_handlers()  # one line per record, in this format
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="flowgraph_digits_")
    metrics = run(model_dir, steps=args.steps)
    print("evaluation: " + ", ".join(f"{k} = {float(v):.4g}" for k, v in
                                     sorted(metrics.items())))
    print(f"model_dir: {os.path.abspath(model_dir)}")
    print(f"checkpoints: {tf.train.latest_checkpoint(model_dir)}")
    print(f"TensorBoard: tensorboard --logdir {os.path.abspath(model_dir)}")
    return metrics


if __name__ == "__main__":
    main()
