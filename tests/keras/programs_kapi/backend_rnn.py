# ruff: noqa
"""A custom recurrent cell run with K.rnn (masked, backwards), plus K.foldl / K.map_fn /
K.switch style reductions, as in older Keras custom-layer code."""
import importlib, os
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
K = tf.keras.backend
rng = np.random.RandomState(8)
x = tf.constant(rng.randn(3, 5, 2).astype("float32"))
w = tf.constant(rng.randn(2, 4).astype("float32") * 0.5)
u = tf.constant(rng.randn(4, 4).astype("float32") * 0.5)
mask = tf.constant(np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool))

def step(inputs, states):
    h = K.tanh(K.dot(inputs, w) + K.dot(states[0], u))
    return h, [h]

h0 = K.zeros_like(K.dot(x[:, 0], w))
last, outs, states = K.rnn(step, x, [h0], mask=mask)
blast, bouts, _ = K.rnn(step, x, [h0], mask=mask, go_backwards=True, zero_output_for_mask=True)
total = K.foldl(lambda acc, v: acc + K.sum(v), K.reshape(outs, (3, -1)), initializer=tf.constant(0.0))
norms = K.map_fn(lambda v: K.sqrt(K.sum(K.square(v))), K.reshape(outs, (3, -1)))
rep = K.repeat(last, 2)
sess = tf.Session()
for name, t in [("last", last), ("outs", outs), ("blast", blast), ("bouts", bouts), ("total", total), ("norms", norms), ("rep", rep), ("state", states[0])]:
    v = sess.run(t)
    print(name, v.shape, np.round(v.ravel()[:4], 3).tolist(), round(float(v.sum()), 4))
g = tf.gradients(K.sum(last), [w, u])
print("grads", [round(float(v.sum()), 4) for v in sess.run(g)])
