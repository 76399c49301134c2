# ruff: noqa
"""Wide & deep recommender (tf.keras.experimental.WideDeepModel, TF 2.x docs example
style): a LinearModel on crossed one-hot features + a DNN on dense features, FTRL for
the wide part and Adagrad for the deep part."""
import importlib, os
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
rng = np.random.RandomState(11)
wide_x = np.eye(5, dtype="float32")[rng.randint(0, 5, 64)]
deep_x = rng.randn(64, 3).astype("float32")
y = ((wide_x.argmax(1) % 2) + (deep_x[:, 0] > 0) > 1).astype("float32")[:, None]
linear = tf.keras.experimental.LinearModel(units=1)
dnn = tf.keras.Sequential([
    tf.keras.layers.Dense(4, activation="relu", input_shape=(3,), kernel_initializer=tf.keras.initializers.RandomNormal(0, .5, seed=1)),
    tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.RandomNormal(0, .5, seed=2))])
model = tf.keras.experimental.WideDeepModel(linear, dnn, activation="sigmoid")
model.compile(optimizer=[tf.keras.optimizers.Ftrl(0.1), tf.keras.optimizers.Adagrad(0.1)],
              loss="binary_crossentropy", metrics=["acc"])
hist = model.fit([wide_x, deep_x], y, batch_size=16, epochs=4, verbose=0, shuffle=False)
print("loss", np.round(hist.history["loss"], 4).tolist())
print("acc", np.round(hist.history["acc"], 4).tolist())
print("weights", [w.name for w in model.weights])
print("pred", np.round(model.predict([wide_x[:4], deep_x[:4]]).ravel(), 4).tolist())
print("linear kernel", np.round(linear.get_weights()[0].ravel(), 4).tolist())
