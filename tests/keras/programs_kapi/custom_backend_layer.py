# ruff: noqa
"""A hand-written conv block as a custom Keras layer built from backend functions
(K.conv2d, K.bias_add, K.pool2d, K.spatial_2d_padding), registered for serialization,
saved to JSON and rebuilt; optimizer and initializers round-tripped by name."""
import importlib, os, json
tf = importlib.import_module(os.environ.get("TF_MODULE", "tensorflow.compat.v1"))
if "TF_MODULE" not in os.environ: tf.disable_v2_behavior()
import numpy as np
K = tf.keras.backend

@tf.keras.utils.register_keras_serializable(package="blocks")
class ConvPool(tf.keras.layers.Layer):
    def __init__(self, filters=4, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (3, 3, int(input_shape[-1]), self.filters),
                                      initializer=tf.keras.initializers.random_normal(0., 0.2, seed=9))
        self.bias = self.add_weight("bias", (self.filters,), initializer="zeros")
        super().build(input_shape)
    def call(self, x):
        x = K.spatial_2d_padding(x, ((1, 1), (1, 1)))
        x = K.conv2d(x, self.kernel, padding="valid")
        x = K.relu(K.bias_add(x, self.bias))
        return K.pool2d(x, (2, 2), strides=(2, 2), pool_mode="max")
    def get_config(self):
        return {**super().get_config(), "filters": self.filters}

x = np.random.RandomState(4).rand(8, 6, 6, 1).astype("float32")
y = x.mean(axis=(1, 2, 3))[:, None]
inp = tf.keras.Input((6, 6, 1))
h = ConvPool(4, name="block")(inp)
out = tf.keras.layers.Dense(1, kernel_initializer="ones")(tf.keras.layers.Flatten()(h))
model = tf.keras.Model(inp, out)
model.compile(tf.keras.optimizers.get("adamax"), "mse")
print("hist", np.round(model.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False).history["loss"], 3).tolist())
cfg = json.loads(model.to_json())
print("classes", [l["class_name"] for l in cfg["config"]["layers"]])
clone = tf.keras.models.model_from_json(model.to_json())
clone.set_weights(model.get_weights())
print("same", np.allclose(clone.predict(x), model.predict(x)), type(clone.get_layer("block")).__name__)
print("ser", tf.keras.optimizers.serialize(model.optimizer)["class_name"],
      tf.keras.initializers.serialize(tf.keras.initializers.truncated_normal(stddev=0.1)))
print("registered", tf.keras.utils.get_registered_name(ConvPool))
