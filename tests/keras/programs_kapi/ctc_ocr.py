# ruff: noqa
"""A toy OCR head in the style of the Keras CTC captcha tutorial (TF1 graph mode):
per-timestep softmax over characters + blank, CTC loss through a Lambda layer,
greedy and beam-search decoding with K.ctc_decode."""
import importlib, os
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
K = tf.keras.backend
L = tf.keras.layers
np.random.seed(0)
T, F, C = 8, 5, 4  # timesteps, features, classes (3 chars + blank)
x = np.random.RandomState(1).rand(6, T, F).astype("float32")
labels = np.array([[1, 2, 0], [2, 2, 1], [0, 1, 0], [1, 0, 2], [2, 1, 1], [0, 0, 1]], "int32")
label_len = np.array([[3], [3], [3], [3], [3], [3]], "int32")
input_len = np.full((6, 1), T, "int32")

feats = L.Input((T, F), name="feats")
lab = L.Input((3,), name="labels", dtype="int32")
ilen = L.Input((1,), name="input_length", dtype="int32")
llen = L.Input((1,), name="label_length", dtype="int32")
h = L.Dense(16, activation="tanh", kernel_initializer=tf.keras.initializers.RandomNormal(0., .5, seed=3))(feats)
probs = L.Dense(C, activation="softmax", kernel_initializer=tf.keras.initializers.RandomNormal(0., .5, seed=4), name="probs")(h)
loss = L.Lambda(lambda a: K.ctc_batch_cost(a[0], a[1], a[2], a[3]), name="ctc")([lab, probs, ilen, llen])
train = tf.keras.Model([feats, lab, ilen, llen], loss)
train.compile(tf.keras.optimizers.Adam(0.05), loss=lambda yt, yp: yp)
hist = train.fit([x, labels, input_len, label_len], np.zeros(6), batch_size=6, epochs=5, verbose=0, shuffle=False)
print("ctc loss", np.round(hist.history["loss"], 4).tolist())
pred = tf.keras.Model(feats, probs).predict(x)
sess = K.get_session()
decoded, logp = K.ctc_decode(pred, np.full(6, T))
print("greedy", sess.run(decoded[0]).tolist(), np.round(sess.run(logp).ravel(), 3).tolist())
decoded, logp = K.ctc_decode(pred, np.full(6, T), greedy=False, beam_width=5, top_paths=2)
print("beam", [sess.run(d).tolist() for d in decoded], np.round(sess.run(logp), 3).tolist())
sp = K.ctc_label_dense_to_sparse(tf.constant(labels), tf.constant([3, 2, 1, 3, 2, 1]))
print("sparse", sess.run(sp).indices.tolist()[:5])
