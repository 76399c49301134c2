"""Write the TF-made fixtures of tests/compat/test_tf1_known_gaps_s20.py (run with TF 2.15,
e.g. the tf-oracle's environment: /tmp/tf-oracle-venv/bin/python make_fixtures.py).

Four nested Keras models (`build` below, the same code the test runs under flowgraph),
trained two epochs with Adam under tf.compat.v1 graph mode, each saved with
``save_weights`` twice: ``<name>.h5`` (HDF5) and ``<name>_ckpt`` (a TensorFlow
checkpoint, optimizer slots included). ``expected.npz`` holds the input ``x`` and
TensorFlow's predictions ``<name>/y`` after training.
"""

import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def build(tf, name):
    """One of the four nested models of the fixtures (`tf`: TensorFlow or flowgraph; the
    test imports this function, so this module imports TensorFlow only when run)."""
    K = tf.keras

    class Sub(K.Model):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.d1 = K.layers.Dense(4, activation="relu")
            self.bn = K.layers.BatchNormalization()
            self.d2 = K.layers.Dense(2)

        def call(self, x, training=None):
            return self.d2(self.bn(self.d1(x), training=training))

    x = K.Input((3,), name="x")
    if name == "seq_in_fn":
        inner = K.Sequential([K.layers.Dense(4, activation="relu", input_shape=(3,)),
                              K.layers.Dense(2)], name="inner_seq")
        return K.Model(x, K.layers.Dense(1, name="head")(inner(x)), name="outer_fn")
    if name == "fn_in_seq":
        i = K.Input((3,))
        f = K.Model(i, K.layers.Dense(2, name="fo")(K.layers.Dense(5, name="fd")(i)),
                    name="inner_fn")
        m = K.Sequential([f, K.layers.Dense(1, name="top")], name="outer_seq")
        m.build((None, 3))
        return m
    if name == "sub_in_fn":
        return K.Model(x, K.layers.Dense(1, name="h3")(Sub(name="sub")(x)), name="outer3")
    a = K.Sequential([K.layers.Dense(3, input_shape=(3,), name="a1"),
                      K.layers.BatchNormalization(name="abn")], name="lvl2")
    b = K.Sequential([a, K.layers.Dense(2, name="b1")], name="lvl1")
    return K.Model(x, K.layers.Dense(1, name="h4")(b(x)), name="outer4")


NAMES = ("seq_in_fn", "fn_in_seq", "sub_in_fn", "two_levels")

if __name__ == "__main__":
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    rs = np.random.RandomState(0)
    x, y = rs.rand(8, 3).astype(np.float32), rs.rand(8, 1).astype(np.float32)
    expected = {"x": x}
    for name in NAMES:
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            m = build(tf, name)
            m.compile(tf.keras.optimizers.Adam(0.05), "mse")
            m.fit(x, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
            m.save_weights(os.path.join(here, f"{name}.h5"))
            m.save_weights(os.path.join(here, f"{name}_ckpt"))
            expected[f"{name}/y"] = m.predict(x)
    os.remove(os.path.join(here, "checkpoint"))
    np.savez(os.path.join(here, "expected.npz"), **expected)
