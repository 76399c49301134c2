"""The distributed-MNIST Estimator tutorial's program, on the bundled digits data set.

The same program runs in one process or as one task of a cluster: with ``TF_CONFIG``
set (by ``flowgraph launch``, ``flowgraph launch --ray`` or a Kubernetes TFJob),
``tf.estimator.train_and_evaluate`` plays this task's role: chief, worker, ps or
evaluator. As in the tutorial, the model is a small convolutional network, either a
custom ``model_fn`` (``--model custom``) or a Keras model turned into an Estimator
(``--model keras``, the tutorial's favourite), fed from NumPy arrays with
``numpy_input_fn`` as in the tutorial (each trainer reads its own copy of the arrays: its
input ops run on its own task, beside the ps tasks' variables). ``--input tensors``
holds the arrays as graph constants instead and samples a random batch of rows per
step. MNIST is not bundled (no download here), so the images
are the 8x8 digits (1,797 of them, a fixed 75/25 split). The tutorial's network reaches
0.99 after 600 steps; ``--filters 8,16 --kernel_size 3 --dense_units 64`` is one ten
times cheaper per step that reaches 0.94-0.95 after 400 (the tests use it).

Every task prints one JSON line ``{"role": ..., "metrics": ...}`` at the end; the
evaluator's (or the single process's) metrics are those of the final checkpoint.

Run::

    python -m flowgraph.examples.distributed_mnist --model_dir /tmp/mnist --steps 600
    flowgraph launch --ps 1 --workers 2 --evaluator -- \\
        python -m flowgraph.examples.distributed_mnist --model_dir /tmp/mnist
    flowgraph launch --ray --ps 1 --workers 2 --evaluator -- \\
        python -m flowgraph.examples.distributed_mnist --model_dir /tmp/mnist
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile

import numpy as np

import flowgraph as tf
from flowgraph.datasets import load_digits, train_test_split

SIDE = 8          # the digits are 8x8 (MNIST's would be 28)
CLASSES = 10


def load_data(seed: int = 0):
    """Train and test images scaled to [0, 1] as (n, 8, 8, 1) float32, int64 labels."""
    x, y = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(x / 16.0, y, seed=seed)
    shape = (-1, SIDE, SIDE, 1)
    return (x_train.reshape(shape).astype(np.float32), y_train.astype(np.int64),
            x_test.reshape(shape).astype(np.float32), y_test.astype(np.int64))


def cnn_model_fn(features, labels, mode, params):
    """The tutorial's custom model_fn: conv-pool-conv-pool-dense-dropout-logits."""
    net = features["input"]
    for filters in params["filters"]:
        net = tf.layers.conv2d(net, filters, params["kernel_size"], padding="same",
                               activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, params["dense_units"], activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, CLASSES)
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={
            "classes": classes, "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels=labels, predictions=classes)})
    optimizer = tf.train.AdamOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def keras_estimator(config, params: dict):
    """The tutorial's Keras route: the same network, compiled, as an Estimator (and the
    feature key its input layer expects)."""
    layers = tf.keras.layers
    f1, f2 = params["filters"]
    k = params["kernel_size"]
    model = tf.keras.Sequential([
        layers.Conv2D(f1, k, padding="same", activation="relu",
                      input_shape=(SIDE, SIDE, 1), name="input"),
        layers.MaxPooling2D(2, 2),
        layers.Conv2D(f2, k, padding="same", activation="relu"),
        layers.MaxPooling2D(2, 2),
        layers.Flatten(),
        layers.Dense(params["dense_units"], activation="relu"),
        layers.Dropout(0.4),
        layers.Dense(CLASSES, activation="softmax"),
    ])
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=tf.train.AdamOptimizer(params["learning_rate"]),
                  metrics=["accuracy"])
    return tf.keras.estimator.model_to_estimator(model, config=config), model.input_names[0]


def _tensor_input_fn(key, x, y, batch_size, seed, train):
    """The arrays as graph constants; a training batch is a random sample of rows."""
    def input_fn():
        images, labels = tf.constant(x), tf.constant(y)
        if not train:
            return {key: images}, labels
        rows = tf.random_uniform([batch_size], 0, len(x), dtype=tf.int64, seed=seed)
        return {key: tf.gather(images, rows)}, tf.gather(labels, rows)
    return input_fn


def run(model_dir: str, steps: int = 600, model: str = "custom", batch_size: int = 64,
        filters: tuple = (32, 64), kernel_size: int = 5, dense_units: int = 1024,
        learning_rate: float = 1e-3, throttle_secs: int = 5, input_pipeline: str = "numpy",
        seed: int = 0) -> dict:
    """Build the Estimator and call ``train_and_evaluate``; returns this task's result.

    Example
    -------
    >>> run("/tmp/mnist", steps=300)["metrics"]["accuracy"] > 0.9   # doctest: +SKIP
    True
    """
    x_train, y_train, x_test, y_test = load_data(seed)
    config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=seed,
                                    save_checkpoints_steps=100, keep_checkpoint_max=2,
                                    log_step_count_steps=100)
    params = {"filters": tuple(filters), "kernel_size": kernel_size,
              "dense_units": dense_units, "learning_rate": learning_rate}
    if model == "keras":
        estimator, key = keras_estimator(config, params)
    else:
        estimator = tf.estimator.Estimator(cnn_model_fn, config=config, params=params)
        key = "input"
    if input_pipeline == "numpy":  # the tutorial's
        train_input = tf.estimator.inputs.numpy_input_fn(
            {key: x_train}, y_train, batch_size=batch_size, num_epochs=None, shuffle=True)
        eval_input = tf.estimator.inputs.numpy_input_fn(
            {key: x_test}, y_test, batch_size=len(x_test), num_epochs=1, shuffle=False)
    else:
        train_input = _tensor_input_fn(key, x_train, y_train, batch_size, seed, True)
        eval_input = _tensor_input_fn(key, x_test, y_test, len(x_test), seed, False)
    train_spec = tf.estimator.TrainSpec(train_input, max_steps=steps)
    eval_spec = tf.estimator.EvalSpec(eval_input, steps=None if input_pipeline == "numpy"
                                      else 1, start_delay_secs=0,
                                      throttle_secs=throttle_secs)
    metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return {"role": config.task_type or "chief",
            "metrics": None if metrics is None else
            {k: float(v) for k, v in metrics.items()}}


def main(argv: list[str] | None = None) -> dict:
    """The command line (see the module docstring); prints and returns `run`'s result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir", default=None,
                        help="checkpoints (shared by every task of a cluster; default: a "
                             "new temporary directory, for one process only)")
    parser.add_argument("--steps", type=int, default=600, help="global steps to train")
    parser.add_argument("--model", choices=["custom", "keras"], default="custom")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--input", choices=["numpy", "tensors"], default="numpy",
                        help="the tutorial's numpy_input_fn (default), or the arrays as "
                             "graph constants sampled per step")
    parser.add_argument("--filters", default="32,64",
                        help="filters of the two conv layers (the tutorial's 32,64)")
    parser.add_argument("--kernel_size", type=int, default=5)
    parser.add_argument("--dense_units", type=int, default=1024)
    parser.add_argument("--throttle_secs", type=int, default=5,
                        help="the evaluator's minimum seconds between evaluations")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(message)s")
    tf.logging.use_root_handlers()  # one line per record, in this format
    if args.model_dir is None and "TF_CONFIG" in os.environ:
        parser.error("a cluster's tasks share the model: pass --model_dir")
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="flowgraph_mnist_")
    result = run(model_dir, steps=args.steps, model=args.model,
                 batch_size=args.batch_size,
                 filters=tuple(int(f) for f in args.filters.split(",")),
                 kernel_size=args.kernel_size, dense_units=args.dense_units,
                 throttle_secs=args.throttle_secs, input_pipeline=args.input)
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
