# ruff: noqa
"""Sentiment-style text classifier fed by a keras.utils.Sequence of padded batches
(pad_sequences), with an ExponentialDecay schedule and a validation Sequence."""
import importlib, os, math
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
rng = np.random.RandomState(0)
docs = [list(rng.randint(1, 20, rng.randint(2, 9))) for _ in range(40)]
labels = np.array([1.0 if sum(d) % 2 else 0.0 for d in docs], "float32")

class TextBatches(tf.keras.utils.Sequence):
    def __init__(self, docs, labels, batch_size):
        self.docs, self.labels, self.batch_size = docs, labels, batch_size
        self.epochs = 0
    def __len__(self):
        return math.ceil(len(self.docs) / self.batch_size)
    def __getitem__(self, i):
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        x = tf.keras.utils.pad_sequences(self.docs[s], maxlen=6, padding="post", truncating="post")
        return x, self.labels[s][:, None]
    def on_epoch_end(self):
        self.epochs += 1

train, val = TextBatches(docs[:32], labels[:32], 8), TextBatches(docs[32:], labels[32:], 4)
print("batch0", train[0][0].tolist()[:2])
model = tf.keras.Sequential([
    tf.keras.layers.Embedding(20, 4, input_length=6, embeddings_initializer=tf.keras.initializers.RandomUniform(-.5, .5, seed=5)),
    tf.keras.layers.GlobalAveragePooling1D(),
    tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")])
sched = tf.keras.optimizers.schedules.ExponentialDecay(0.5, decay_steps=4, decay_rate=0.5, staircase=True)
model.compile(tf.keras.optimizers.SGD(learning_rate=sched), "binary_crossentropy", metrics=["acc"])
hist = model.fit(train, epochs=3, validation_data=val, verbose=0, shuffle=False)
for k in sorted(hist.history):
    print(k, np.round(hist.history[k], 4).tolist())
print("pred", np.round(model.predict(val, verbose=0).ravel(), 4).tolist())
print("eval", round(float(model.evaluate(val, verbose=0)[0]), 4))
print("ordinal", tf.keras.utils.to_ordinal([0, 2, 1], 3).tolist())
