"""Write gapfill2_layers.h5 for tests/keras/test_layers_gapfill2.py (run under TF 2.15:
/tmp/tf-oracle-venv/bin/python make_gapfill2_fixture.py): recurrent cells, attention,
EinsumDense, ConvLSTM2D and preprocessing layers in one functional model."""

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
L = tf.keras.layers
x = tf.keras.Input((5, 3))
h = L.RNN([L.LSTMCell(4), L.GRUCell(3, reset_after=True)], return_sequences=True)(x)
h = L.Bidirectional(L.SimpleRNN(2, return_sequences=True))(h)
a = L.Attention(use_scale=True)([h, h])
e = L.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")(a)
e = L.Normalization(mean=[0.0] * 6, variance=[4.0] * 6)(e)
e = L.Rescaling(2.0, offset=0.5)(e)
y = L.LSTM(2)(e)
img = tf.keras.Input((2, 6, 6, 1))
c = L.Flatten()(L.Resizing(3, 3)(L.CenterCrop(2, 2)(L.ConvLSTM2D(2, 3)(img))))
ids = tf.keras.Input((2,), dtype="int32")
hashed = L.Hashing(4, output_mode="multi_hot")(ids)
out = L.Concatenate()([y, c, L.CategoryEncoding(5)(ids), hashed])
m = tf.keras.Model([x, img, ids], out)
rng = np.random.RandomState(0)
data = [rng.randn(2, 5, 3).astype("f"), rng.randn(2, 2, 6, 6, 1).astype("f"),
        np.array([[1, 2], [4, 4]], "int32")]
print(np.round(m.predict(data), 4).tolist())
m.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gapfill2_layers.h5"))

# gapfill2_mha.h5: MultiHeadAttention nodes, whose `value` TF writes as a keyword argument
q = tf.keras.Input((3, 4))
v = tf.keras.Input((5, 4))
a = L.MultiHeadAttention(num_heads=2, key_dim=3)(q, v)
b = L.MultiHeadAttention(num_heads=1, key_dim=2, name="self")(a, a, use_causal_mask=True)
m = tf.keras.Model([q, v], b)
data = [rng.randn(2, 3, 4).astype("f"), rng.randn(2, 5, 4).astype("f")]
print(np.round(m.predict(data), 4).tolist())
m.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gapfill2_mha.h5"))
