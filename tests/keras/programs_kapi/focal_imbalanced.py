# ruff: noqa
"""Imbalanced binary classification (fraud-detection style) with focal loss, Nadam and
threshold-based metrics, TF1 graph-mode tf.keras."""
import importlib, os
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
rng = np.random.RandomState(42)
x = rng.randn(200, 6).astype("float32")
y = ((x[:, 0] + 0.5 * x[:, 1] + 0.3 * rng.randn(200)) > 1.4).astype("float32")[:, None]
print("positives", int(y.sum()))
init = tf.keras.initializers.TruncatedNormal(stddev=0.3, seed=7)
model = tf.keras.Sequential([
    tf.keras.layers.Dense(8, activation="mish", kernel_initializer=init, input_shape=(6,)),
    tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer=init)])
model.compile(optimizer=tf.keras.optimizers.Nadam(0.01),
              loss=tf.keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.75, gamma=2.0),
              metrics=[tf.keras.metrics.BinaryIoU(target_class_ids=[1], threshold=0.4),
                       tf.keras.metrics.PrecisionAtRecall(0.8, num_thresholds=50),
                       tf.keras.metrics.SensitivityAtSpecificity(0.9, num_thresholds=50)])
hist = model.fit(x[:150], y[:150], batch_size=50, epochs=6, verbose=0, shuffle=False,
                 validation_data=(x[150:], y[150:]))
for k in sorted(hist.history):
    print(k, np.round(hist.history[k], 4).tolist())
print("eval", np.round(model.evaluate(x[150:], y[150:], verbose=0), 4).tolist())
print("opt", [w.name for w in model.optimizer.weights][:3], model.optimizer.get_config()["decay"])
