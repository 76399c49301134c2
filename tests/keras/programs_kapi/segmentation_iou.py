# ruff: noqa
"""Per-pixel classification (a toy segmentation net) with categorical focal loss,
Adamax and IoU metrics; images resized with K.resize_images inside a Lambda."""
import importlib, os
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
K = tf.keras.backend
rng = np.random.RandomState(3)
imgs = rng.rand(12, 4, 4, 2).astype("float32")
cls = (imgs[..., 0] * 3).astype("int64").clip(0, 2)
masks = np.repeat(np.repeat(np.eye(3, dtype="float32")[cls], 2, axis=1), 2, axis=2)  # 8x8
inp = tf.keras.Input((4, 4, 2))
h = tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu",
                           kernel_initializer=tf.keras.initializers.RandomNormal(0, .3, seed=1))(inp)
h = tf.keras.layers.Lambda(lambda t: K.resize_images(t, 2, 2, "channels_last"))(h)
out = tf.keras.layers.Conv2D(3, 1, activation="softmax",
                             kernel_initializer=tf.keras.initializers.RandomNormal(0, .3, seed=2))(h)
model = tf.keras.Model(inp, out)
model.compile(tf.keras.optimizers.Adamax(0.05), tf.keras.losses.CategoricalFocalCrossentropy(gamma=2.0),
              metrics=[tf.keras.metrics.OneHotMeanIoU(num_classes=3),
                       tf.keras.metrics.OneHotIoU(num_classes=3, target_class_ids=[0, 2])])
hist = model.fit(imgs, masks, batch_size=4, epochs=4, verbose=0, shuffle=False)
for k in sorted(hist.history):
    print(k, np.round(hist.history[k], 4).tolist())
pred = model.predict(imgs[:2]).argmax(-1)
m = tf.keras.metrics.MeanIoU(num_classes=3)
sess = K.get_session()
sess.run(m.update_state(masks[:2].argmax(-1), pred))
print("meaniou", round(float(sess.run(m.result())), 4), pred.shape)
print([w.name for w in model.optimizer.weights][:2])
