# ruff: noqa
# A tiny 3-D CNN "action recognition" model on synthetic clips (Keras Sequential, TF1 graph mode)
import importlib, os
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
tf.set_random_seed(42)
rng = np.random.RandomState(0)
clips = rng.rand(24, 6, 10, 10, 1).astype(np.float32)
labels = (clips[:, :3].mean(axis=(1, 2, 3, 4)) > clips[:, 3:].mean(axis=(1, 2, 3, 4))).astype(np.int64)
model = tf.keras.Sequential([
    tf.keras.layers.Conv3D(4, (3, 3, 3), padding="same", activation="relu", input_shape=(6, 10, 10, 1)),
    tf.keras.layers.MaxPooling3D((1, 2, 2)),
    tf.keras.layers.Conv3D(8, 3, activation="relu"),
    tf.keras.layers.SpatialDropout3D(0.1, seed=1),
    tf.keras.layers.GlobalAveragePooling3D(),
    tf.keras.layers.Dense(2, activation="softmax"),
])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
hist = model.fit(clips, labels, batch_size=8, epochs=3, shuffle=False, verbose=0)
print("loss", [round(v, 4) for v in hist.history["loss"]])
print("weights", [w.name for w in model.weights])
print("pred", np.round(model.predict(clips[:3]), 4).tolist())
print("summary params", model.count_params())
