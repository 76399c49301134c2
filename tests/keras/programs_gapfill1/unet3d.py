# ruff: noqa
# A two-level 3-D U-Net for voxel segmentation (functional API, skip connections, Conv3DTranspose)
import importlib, os
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
tf.set_random_seed(21)
L = tf.keras.layers
rng = np.random.RandomState(4)
vols = rng.rand(6, 4, 8, 8, 1).astype(np.float32)
masks = (vols > 0.6).astype(np.float32)
inp = L.Input((4, 8, 8, 1))
c1 = L.Conv3D(4, 3, padding="same", activation="relu")(inp)
p1 = L.MaxPool3D((2, 2, 2))(c1)
c2 = L.Conv3D(8, 3, padding="same", activation="relu")(p1)
u1 = L.Conv3DTranspose(4, 2, strides=2, padding="same")(c2)
u2 = L.UpSampling3D(2)(L.AvgPool3D(2)(c1))
merged = L.Concatenate()([u1, c1, L.Cropping3D(1)(L.ZeroPadding3D(1)(u2))])
out = L.Conv3D(1, 1, activation="sigmoid")(merged)
unet = tf.keras.Model(inp, out)
unet.compile(tf.keras.optimizers.Adam(0.02), "binary_crossentropy")
hist = unet.fit(vols, masks, batch_size=3, epochs=3, shuffle=False, verbose=0)
print("loss", [round(v, 4) for v in hist.history["loss"]])
pred = unet.predict(vols[:2]) > 0.5
inter = (pred * masks[:2]).sum(); dice = 2 * inter / (pred.sum() + masks[:2].sum())
print("dice", round(float(dice), 4), "output", unet.output_shape)
print([l.__class__.__name__ for l in unet.layers])
