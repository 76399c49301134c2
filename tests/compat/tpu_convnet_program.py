"""A TF1 program run unchanged on TensorFlow 2.15 and on flowgraph (TF_MODULE=flowgraph);
test_tpu_estimator.py compares its output with TensorFlow's.
"""

# EfficientNet/MnasNet-trainer style: conv net + batch norm (UPDATE_OPS), momentum with
# exponential decay, eval_metrics as a dict, host_call collecting per-step values,
# warm start through scaffold_fn + init_from_checkpoint, export; TPUEstimator(use_tpu=False).
import importlib
import os

tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ:
    tf.disable_v2_behavior()
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

rng = np.random.RandomState(0)
IMGS = rng.rand(32, 8, 8, 3).astype(np.float32)
LABS = (IMGS.mean(axis=(1, 2, 3)) > 0.5).astype(np.int32)
host_log = []


def build(images, training):
    net = tf.layers.conv2d(
        images,
        4,
        3,
        padding="same",
        use_bias=False,
        name="stem_conv",
        kernel_initializer=tf.glorot_uniform_initializer(seed=1),
    )
    net = tf.layers.batch_normalization(net, training=training, momentum=0.9, name="stem_bn")
    net = tf.nn.relu6(net)
    net = tf.reduce_mean(net, axis=[1, 2])
    return tf.layers.dense(
        net, 2, name="head", kernel_initializer=tf.glorot_uniform_initializer(seed=2)
    )


def model_fn(features, labels, mode, params):
    training = mode == tf.estimator.ModeKeys.TRAIN
    logits = build(features["image"], training)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.tpu.TPUEstimatorSpec(
            mode,
            predictions={"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)},
            export_outputs={
                "classify": tf.estimator.export.PredictOutput(
                    {"probabilities": tf.nn.softmax(logits)}
                )
            },
        )
    one_hot = tf.one_hot(labels, 2)
    loss = tf.losses.softmax_cross_entropy(one_hot, logits, label_smoothing=0.1)
    loss += 1e-4 * tf.add_n(
        [tf.nn.l2_loss(v) for v in tf.trainable_variables() if "bn" not in v.name]
    )
    scaffold_fn = None
    if params.get("warm_start"):

        def scaffold_fn():
            tf.train.init_from_checkpoint(params["warm_start"], {"stem_conv/": "stem_conv/"})
            return tf.train.Scaffold()

    if training:
        gs = tf.train.get_global_step()
        lr = tf.train.exponential_decay(0.1, gs, 4, 0.9, staircase=True)
        opt = tf.train.MomentumOptimizer(lr, 0.9)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = opt.minimize(loss, gs)

        def host_fn(gs, loss, lr):
            return [
                tf.py_func(
                    lambda a, b, c: (
                        host_log.append((int(a[0]), round(float(b[0]), 4), round(float(c[0]), 5)))
                        or np.float32(0)
                    ),
                    [gs, loss, lr],
                    tf.float32,
                )
            ]

        host_call = (host_fn, [tf.reshape(gs, [1]), tf.reshape(loss, [1]), tf.reshape(lr, [1])])
        return tf.estimator.tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, host_call=host_call, scaffold_fn=scaffold_fn
        )

    def metric_fn(labels, logits):
        pred = tf.argmax(logits, 1, output_type=tf.int32)
        return {
            "top_1_accuracy": tf.metrics.accuracy(labels, pred),
            "mean_logit": tf.metrics.mean(logits),
        }

    return tf.estimator.tpu.TPUEstimatorSpec(
        mode,
        loss=loss,
        scaffold_fn=scaffold_fn,
        eval_metrics=(metric_fn, {"labels": labels, "logits": logits}),
    )


def input_fn(params):
    ds = tf.data.Dataset.from_tensor_slices(({"image": IMGS}, LABS))
    if params.get("is_training", True):
        ds = ds.repeat()
    return ds.batch(params["batch_size"], drop_remainder=True)


base = tempfile.mkdtemp()


def make(md, params):
    cfg = tf.estimator.tpu.RunConfig(
        model_dir=md,
        save_checkpoints_steps=4,
        tf_random_seed=3,
        tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=4),
    )
    return tf.estimator.tpu.TPUEstimator(
        model_fn,
        config=cfg,
        params=params,
        use_tpu=False,
        train_batch_size=8,
        eval_batch_size=8,
        predict_batch_size=4,
    )


first = make(os.path.join(base, "a"), {})
first.train(input_fn, max_steps=5)
print("host_log", host_log)
print("vars", [(n, s) for n, s in tf.train.list_variables(os.path.join(base, "a"))])
host_log.clear()
second = make(os.path.join(base, "b"), {"warm_start": os.path.join(base, "a")})
second.train(input_fn, steps=2)
print("host_log warm", host_log)
print(
    "warm kernel equal",
    np.allclose(
        second.get_variable_value("stem_conv/kernel"),
        first.get_variable_value("stem_conv/kernel"),
        atol=0.5,
    ),
)
r = second.evaluate(lambda params: input_fn(dict(params, is_training=False)))
print("eval", {k: round(float(v), 4) for k, v in sorted(r.items())})
p = list(
    second.predict(
        lambda params: tf.data.Dataset.from_tensor_slices({"image": IMGS[:4]}).batch(
            params["batch_size"]
        )
    )
)
print("pred", [(int(x["classes"]), np.round(x["probabilities"], 4).tolist()) for x in p])


def srf():
    img = tf.placeholder(tf.float32, [None, 8, 8, 3], name="image")
    return tf.estimator.export.ServingInputReceiver({"image": img}, {"image": img})


d = second.export_saved_model(os.path.join(base, "export"), srf)
d = d.decode() if isinstance(d, bytes) else d
with tf.Graph().as_default(), tf.Session() as s:
    m = tf.saved_model.loader.load(s, ["serve"], d)
    sig = m.signature_def["classify"]
    print(
        "served",
        np.round(
            s.run(sig.outputs["probabilities"].name, {sig.inputs["image"].name: IMGS[:2]}), 4
        ).tolist(),
    )
