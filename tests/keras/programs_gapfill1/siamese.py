# ruff: noqa
# Siamese similarity model: one shared encoder, cosine similarity with Dot(normalize=True); saved to HDF5 and reloaded
import importlib, os, tempfile
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
tf.set_random_seed(5)
L = tf.keras.layers
a_in, b_in = L.Input((8,), name="left"), L.Input((8,), name="right")
encoder = tf.keras.Sequential([L.Dense(6, activation="tanh", input_shape=(8,)), L.Dense(4)], name="encoder")
sim = L.Dot(axes=1, normalize=True, name="cosine")([encoder(a_in), encoder(b_in)])
raw = L.dot([encoder(a_in), encoder(b_in)], axes=-1)
model = tf.keras.Model([a_in, b_in], [sim, raw])
model.compile("adam", ["mse", None] if False else "mse", loss_weights=[1.0, 0.0])
rng = np.random.RandomState(8)
a = rng.randn(32, 8).astype(np.float32)
b = (a + 0.3 * rng.randn(32, 8)).astype(np.float32)
b[16:] = rng.randn(16, 8)
target = np.r_[np.ones(16), -np.ones(16)].astype(np.float32)[:, None]
hist = model.fit([a, b], [target, target], epochs=3, batch_size=8, shuffle=False, verbose=0)
print("loss", [round(v, 4) for v in hist.history["loss"]])
path = os.path.join(tempfile.mkdtemp(), "siamese.h5")
model.save(path)
before = model.predict([a[:3], b[:3]])
restored = tf.keras.models.load_model(path)
after = restored.predict([a[:3], b[:3]])
print("same after reload", all(np.allclose(p, q, atol=1e-6) for p, q in zip(before, after)))
print("cos", np.round(before[0].ravel(), 4).tolist())
print("config", tf.keras.layers.serialize(restored.get_layer("cosine"))["config"])
