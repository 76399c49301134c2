"""Write the TF-made fixtures of tests/keras/test_keras_h5.py (run with TF 2.15, e.g.
the tf-oracle's environment: /tmp/tf-oracle-venv/bin/python make_fixtures.py).

Each model is saved with ``model.save('<name>.h5')`` under tf.compat.v1 graph mode;
``expected.npz`` holds the inputs and TensorFlow's predictions (``<name>/x0``,
``<name>/y0``, ...), and for ``seq_adam`` the weights after three more
``train_on_batch`` steps on ``seq_adam/train_x`` / ``train_y`` (the optimizer state
restored from the file).
"""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
keras, L = tf.keras, tf.keras.layers
here = os.path.dirname(os.path.abspath(__file__))
rs = np.random.RandomState(0)
expected = {}


def save(name, model, xs, include_optimizer=True):
    model.save(os.path.join(here, f"{name}.h5"), include_optimizer=include_optimizer)
    ys = model.predict(xs if len(xs) > 1 else xs[0])
    for i, a in enumerate(xs):
        expected[f"{name}/x{i}"] = a
    for i, a in enumerate(ys if isinstance(ys, list) else [ys]):
        expected[f"{name}/y{i}"] = a


tf.set_random_seed(0)
x, y = rs.rand(8, 3).astype(np.float32), rs.rand(8, 2).astype(np.float32)
m = keras.Sequential([L.Dense(4, activation="tanh", input_shape=(3,)), L.Dense(2)])
m.compile(keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
save("seq_adam", m, [x])
m.save_weights(os.path.join(here, "seq_adam_weights.h5"))
for _ in range(3):
    m.train_on_batch(x, y)
expected.update({"seq_adam/train_x": x, "seq_adam/train_y": y})
for i, w in enumerate(m.get_weights()):
    expected[f"seq_adam/trained{i}"] = w

inp = keras.Input(shape=(6, 6, 2))
h = L.Conv2D(3, 3, padding="same")(inp)
h = L.BatchNormalization()(h)
h = L.Activation("relu")(h)
h = L.MaxPooling2D()(h)
h = L.Flatten()(h)
h = L.Dropout(0.3)(h)
out = L.Dense(3, activation="softmax")(h)
m = keras.Model(inp, out)
m.compile(keras.optimizers.SGD(0.05, momentum=0.9), loss="sparse_categorical_crossentropy",
          metrics=["accuracy"])
x = rs.rand(4, 6, 6, 2).astype(np.float32)
m.fit(x, np.arange(4) % 3, epochs=3, verbose=0, batch_size=2)
save("func_cnn", m, [x])

m = keras.Sequential([L.Embedding(20, 5, input_length=6), L.LSTM(4, return_sequences=True),
                      L.GRU(3, reset_after=False), L.Dense(1)])
save("seq_rnn", m, [rs.randint(0, 20, (3, 6)).astype(np.int32)])

a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(2,), name="b")
h = L.Dense(6, activation="tanh")(L.Concatenate()([a, b]))
m = keras.Model([a, b], [L.Dense(2, activation="softmax", name="cls")(h),
                         L.Dense(1, name="reg")(h)])
m.compile(keras.optimizers.Adam(0.01),
          loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"})
xa, xb = rs.rand(5, 3).astype(np.float32), rs.rand(5, 2).astype(np.float32)
m.fit([xa, xb], [rs.randint(0, 2, 5), rs.rand(5)], epochs=2, verbose=0)
save("func_multi", m, [xa, xb], include_optimizer=False)

m = keras.Sequential([L.Dense(2, input_shape=(3,)), L.Lambda(lambda t: t * 2.0)])
save("seq_lambda", m, [rs.rand(2, 3).astype(np.float32)])

np.savez(os.path.join(here, "expected.npz"), **expected)
