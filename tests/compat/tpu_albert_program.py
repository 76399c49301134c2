"""A TF1 program run unchanged on TensorFlow 2.15 and on flowgraph (TF_MODULE=flowgraph);
test_tpu_estimator.py compares its output with TensorFlow's.
"""

# ALBERT/XLNet-era driver: flags, contrib_tpu alias, optional TPUClusterResolver, PER_HOST_V2,
# keep_checkpoint_max, TPUEstimator with a plain EstimatorSpec-free model_fn, evaluate steps,
# predict with yield_single_examples=False, params from flags.
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

contrib_tpu = tf.contrib.tpu if hasattr(tf, "contrib") else tf.estimator.tpu
contrib_cluster = (
    tf.contrib.cluster_resolver if hasattr(tf, "contrib") else tf.distribute.cluster_resolver
)
flags = tf.flags
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU.")
flags.DEFINE_string("tpu_name", None, "TPU name.")
flags.DEFINE_string("master", None, "master")
flags.DEFINE_integer("iterations_per_loop", 5, "ipl")
flags.DEFINE_integer("num_tpu_cores", 8, "cores")
flags.DEFINE_float("learning_rate", 0.05, "lr")
FLAGS = flags.FLAGS
FLAGS(["prog"])
rng = np.random.RandomState(1)
XS = rng.randn(40, 6).astype(np.float32)
YS = (XS @ rng.randn(6) > 0).astype(np.int64)


def model_fn_builder(lr):
    def model_fn(features, labels, mode, params):
        tf.logging.info("*** Features ***")
        for name in sorted(features.keys()):
            tf.logging.info("  name = %s, shape = %s", name, features[name].shape)
        h = tf.layers.dense(
            features["x"],
            8,
            activation=tf.nn.tanh,
            name="hidden",
            kernel_initializer=tf.truncated_normal_initializer(stddev=0.5, seed=4),
        )
        logits = tf.layers.dense(h, 2, name="logits", kernel_initializer=tf.zeros_initializer())
        if mode == tf.estimator.ModeKeys.PREDICT:
            return contrib_tpu.TPUEstimatorSpec(
                mode, predictions={"logits": logits, "id": features["id"]}
            )
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        if mode == tf.estimator.ModeKeys.TRAIN:
            opt = tf.train.AdamOptimizer(lr)
            if FLAGS.use_tpu:
                opt = contrib_tpu.CrossShardOptimizer(opt)
            return contrib_tpu.TPUEstimatorSpec(
                mode, loss=loss, train_op=opt.minimize(loss, tf.train.get_global_step())
            )

        def metric_fn(per_loss, labels, logits):
            return {
                "eval_accuracy": tf.metrics.accuracy(labels, tf.argmax(logits, -1)),
                "eval_loss": tf.metrics.mean(per_loss),
                "auc": tf.metrics.auc(labels, tf.nn.softmax(logits)[:, 1]),
            }

        per = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return contrib_tpu.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(metric_fn, [per, labels, logits])
        )

    return model_fn


def input_fn_builder(is_training, drop_remainder):
    def input_fn(params):
        d = tf.data.Dataset.from_tensor_slices(({"x": XS, "id": np.arange(40)}, YS))
        if is_training:
            d = d.repeat()
        return d.batch(params["batch_size"], drop_remainder=drop_remainder)

    return input_fn


tpu_cluster_resolver = None
if FLAGS.use_tpu and FLAGS.tpu_name:
    tpu_cluster_resolver = contrib_cluster.TPUClusterResolver(FLAGS.tpu_name)
is_per_host = contrib_tpu.InputPipelineConfig.PER_HOST_V2
md = tempfile.mkdtemp()
run_config = contrib_tpu.RunConfig(
    cluster=tpu_cluster_resolver,
    master=FLAGS.master,
    model_dir=md,
    save_checkpoints_steps=10,
    keep_checkpoint_max=2,
    tf_random_seed=9,
    tpu_config=contrib_tpu.TPUConfig(
        iterations_per_loop=FLAGS.iterations_per_loop,
        num_shards=FLAGS.num_tpu_cores,
        per_host_input_for_training=is_per_host,
    ),
)
print(
    "config",
    run_config.master,
    run_config.evaluation_master,
    run_config.tpu_config.per_host_input_for_training,
    run_config.keep_checkpoint_max,
)
est = contrib_tpu.TPUEstimator(
    use_tpu=FLAGS.use_tpu,
    model_fn=model_fn_builder(FLAGS.learning_rate),
    config=run_config,
    train_batch_size=8,
    eval_batch_size=8,
    predict_batch_size=8,
)
est.train(input_fn_builder(True, True), max_steps=30)
print("ckpts", sorted(f for f in os.listdir(md) if f.endswith(".index")))
eval_steps = 40 // 8
res = est.evaluate(input_fn_builder(False, True), steps=eval_steps)
print("eval", {k: round(float(v), 4) for k, v in sorted(res.items())})
batches = list(est.predict(input_fn_builder(False, False), yield_single_examples=False))
print(
    "pred",
    len(batches),
    [b["id"].tolist() for b in batches][:2],
    np.round(batches[0]["logits"][:2], 4).tolist(),
)
try:
    contrib_cluster.TPUClusterResolver(None)
except ValueError as e:
    print("resolver", e)
