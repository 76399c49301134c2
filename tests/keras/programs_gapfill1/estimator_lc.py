# ruff: noqa
# Keras model with LocallyConnected2D turned into an Estimator (model_to_estimator), trained from an input_fn
import importlib, os, tempfile
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
L = tf.keras.layers
tf.set_random_seed(13)
rng = np.random.RandomState(9)
images = rng.rand(32, 6, 6, 1).astype(np.float32)
labels = (images[:, :3].mean(axis=(1, 2, 3)) > images[:, 3:].mean(axis=(1, 2, 3))).astype(np.float32)[:, None]
model = tf.keras.Sequential([
    L.LocallyConnected2D(2, 3, input_shape=(6, 6, 1), name="local"),
    L.ThresholdedReLU(0.0),
    L.Flatten(),
    L.Dense(1, activation="sigmoid", name="out"),
])
model.compile(tf.keras.optimizers.SGD(0.5), "binary_crossentropy", metrics=["accuracy"])
config = tf.estimator.RunConfig(tf_random_seed=13, model_dir=tempfile.mkdtemp())
est = tf.keras.estimator.model_to_estimator(keras_model=model, config=config)
def input_fn():
    ds = tf.data.Dataset.from_tensor_slices(({"local_input": images}, labels))
    return ds.batch(8).repeat(3)
est.train(input_fn, steps=12)
metrics = est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"local_input": images}, labels)).batch(32), steps=1)
print(sorted(metrics), round(float(metrics["loss"]), 4), metrics["global_step"])
print(sorted(est.get_variable_names())[:4])
