"""One task of a distributed Estimator run: ``train_and_evaluate`` with its role from
TF_CONFIG (ps, chief, worker or evaluator), as in the distributed-MNIST tutorial.

Usage: ``estimator_task.py MODEL_DIR [MAX_STEPS]``. The model fits y = x.w + b with a
custom model_fn; the evaluator exports the final model (`FinalExporter`) and prints
its last evaluation as one JSON line.
"""

import json
import sys

import numpy as np

import flowgraph as tf

TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)


def input_fn():
    x = np.random.RandomState(0).randn(64, 3).astype(np.float32)
    return {"x": tf.constant(x)}, tf.constant(x @ TRUE_W + 0.25)


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    predictions = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)


def serving_input_fn():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def main() -> None:
    model_dir, max_steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=50,
                                    log_step_count_steps=None)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=max_steps)
    eval_spec = tf.estimator.EvalSpec(
        input_fn, steps=1, start_delay_secs=0, throttle_secs=0,
        exporters=tf.estimator.FinalExporter("final", serving_input_fn))
    metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    result = {"role": config.task_type, "metrics": None, "exports": None}
    if metrics is not None:
        result["metrics"] = {k: float(v) for k, v in metrics.items()}
        result["exports"] = [e.decode() if isinstance(e, bytes) else e for e in exports]
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
