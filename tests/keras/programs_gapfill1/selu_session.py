# ruff: noqa
# TF1-style training loop: Keras layers on placeholders, tf.train optimizer, learning phase fed by hand
import importlib, os
import numpy as np
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
tf.set_random_seed(11)
K = tf.keras.backend
x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.float32, [None, 1])
h = tf.keras.layers.Dense(16, activation="selu", kernel_initializer="lecun_normal")(x)
h = tf.keras.layers.AlphaDropout(0.1, seed=3)(h)
h = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.1))(h)
h = tf.keras.layers.GaussianDropout(0.2, seed=4)(h)
h = tf.keras.layers.ThresholdedReLU(theta=0.05)(h)
reg = tf.keras.layers.ActivityRegularization(l2=1e-3)
h = reg(h)
pred = tf.keras.layers.Dense(1)(h)
loss = tf.reduce_mean(tf.square(pred - y)) + tf.add_n(reg.losses)
train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
rng = np.random.RandomState(2)
xs = rng.randn(64, 5).astype(np.float32)
ys = xs @ rng.randn(5, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        _, l = sess.run([train, loss], {x: xs, y: ys, K.learning_phase(): 1})
        if step % 10 == 0:
            print(step, round(float(l), 4))
    print("eval", round(float(sess.run(loss, {x: xs, y: ys, K.learning_phase(): 0})), 4))
    print("alpha", np.round(sess.run([v for v in tf.trainable_variables() if "alpha" in v.name][0])[:4], 4).tolist())
