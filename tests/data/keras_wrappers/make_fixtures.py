"""Write the TF-made fixtures of tests/compat/test_tf1_known_gaps_s21.py (run with TF 2.15,
e.g. the tf-oracle's environment: /tmp/tf-oracle-venv/bin/python make_fixtures.py).

One functional model of Keras wrappers (`build` below, the same code the test runs under
flowgraph): a `Bidirectional` LSTM, a `TimeDistributed` Dense and BatchNormalization, a
`Bidirectional` GRU merged by sum, a user's `Wrapper` subclass with a weight of its own,
and a nested Sequential. Its weights are set to `weights_for` (no random draws), then
saved with ``save_weights`` as ``wrappers.h5`` and as the TensorFlow checkpoint
``wrappers_ckpt``; ``expected.npz`` holds the input ``x`` and TensorFlow's prediction
``y``.
"""

import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def build(tf):
    """The wrappers model (`tf`: TensorFlow or flowgraph)."""
    K = tf.keras
    L = K.layers

    class Scale(L.Wrapper):
        def build(self, input_shape):
            self.layer.build(input_shape)
            self.scale = self.add_weight("scale", shape=(), initializer="ones")
            super().build(input_shape)

        def call(self, x):
            return self.layer(x) * self.scale

        def compute_output_shape(self, s):
            return self.layer.compute_output_shape(s)

    inp = L.Input((4, 3), name="x")
    h = L.Bidirectional(L.LSTM(2, return_sequences=True, name="lstm"), name="bi")(inp)
    h = L.TimeDistributed(L.Dense(3, name="td_dense"), name="td")(h)
    h = L.TimeDistributed(L.BatchNormalization(name="bn"), name="tdbn")(h)
    h = L.Bidirectional(L.GRU(2, name="gru"), merge_mode="sum", name="bi2")(h)
    h = Scale(L.Dense(3, name="sd"), name="scaled")(h)
    inner = K.Sequential([L.Dense(2, input_shape=(3,), name="i1"), L.Dense(1, name="i2")],
                         name="inner")
    return K.Model(inp, inner(h), name="wm")


def weights_for(model):
    """Deterministic weights for `model` (moving variances kept positive)."""
    out = []
    for k, v in enumerate(model.weights):
        n = int(np.prod(v.shape.as_list()))
        w = np.sin(np.arange(n, dtype=np.float32) * 0.7 + k).reshape(v.shape.as_list()) * 0.5
        out.append(np.abs(w) + 0.5 if "moving_variance" in v.name else w)
    return out


X = np.cos(np.arange(2 * 4 * 3, dtype=np.float32)).reshape(2, 4, 3)

if __name__ == "__main__":
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    m = build(tf)
    m.set_weights(weights_for(m))
    y = m.predict(X)
    m.save_weights(os.path.join(here, "wrappers.h5"))
    m.save_weights(os.path.join(here, "wrappers_ckpt"))
    np.savez(os.path.join(here, "expected.npz"), x=X, y=y)
    os.remove(os.path.join(here, "checkpoint"))
