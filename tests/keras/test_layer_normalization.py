"""tf.keras.layers.LayerNormalization against TensorFlow 2.15's values and layout."""

import numpy as np

import flowgraph as tf
from flowgraph import keras

X = np.random.RandomState(2).randn(2, 3, 4).astype(np.float32)


def test_default_trailing_axis_matches_tensorflow():
    g = tf.Graph()
    with g.as_default():
        layer = keras.layers.LayerNormalization(name="ln")
        xx = tf.constant(X)
        y = layer(xx)
        assert y.name == "ln/add:0"
        assert [v.name for v in layer.weights] == ["ln/gamma:0", "ln/beta:0"]
        types = [op.type for op in g.get_operations() if op.name.startswith("ln/")]
        # TF 2.15: the weights are resource variables, read where they are used
        # (ln/mul/ReadVariableOp, ln/add/ReadVariableOp)
        assert types[-5:] == ["Reshape", "ReadVariableOp", "Mul", "ReadVariableOp", "AddV2"]
        assert "FusedBatchNormV3" in types
        assert g.get_operation_by_name("ln/mul/ReadVariableOp").type == "ReadVariableOp"
        w = np.cos(np.arange(24)).reshape(2, 3, 4).astype(np.float32)
        grads = tf.gradients(tf.reduce_sum(y * w), [xx, *layer.weights])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value, gx, dgamma, dbeta = sess.run([y, *grads])
    # TensorFlow 2.15
    np.testing.assert_allclose(value[0], [[-0.1301, 0.1386, -1.4117, 1.4031],
                                          [-1.1183, 0.0031, 1.5876, -0.4724],
                                          [-0.9444, -0.8342, 0.2457, 1.5329]], atol=1e-4)
    np.testing.assert_allclose(gx[0, 0], [0.6996, 0.3999, -0.5606, -0.5389], atol=1e-4)
    np.testing.assert_allclose(dgamma, [1.0004, -1.0995, -0.0862, -0.9314], atol=1e-4)
    np.testing.assert_allclose(dbeta, [0.4951, -0.0026, -0.498, -0.5355], atol=1e-4)
    mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
    np.testing.assert_allclose(value, (X - mu) / np.sqrt(var + 1e-3), atol=1e-5)


def test_other_axes_and_arguments():
    with tf.Graph().as_default():
        l2 = keras.layers.LayerNormalization(axis=[1, 2], epsilon=0.1, center=False,
                                             gamma_initializer="zeros")
        y2 = l2(tf.constant(X))
        assert [(v.name, v.shape.as_list()) for v in l2.weights] == [
            ("layer_normalization/gamma:0", [3, 4])]
        l3 = keras.layers.LayerNormalization(
            axis=1, beta_initializer=keras.initializers.Constant(0.5))
        y3 = l3(tf.constant(X))
        assert y3.name == "layer_normalization_1/batchnorm/add_1:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            v2, v3 = sess.run([y2, y3])
    np.testing.assert_array_equal(v2, np.zeros_like(X))
    # TensorFlow 2.15
    np.testing.assert_allclose(v3[0], [[1.694, 1.906, -0.9136, 0.9843],
                                       [-0.7498, -0.1164, 1.1875, -0.8926],
                                       [0.5558, -0.2896, 1.2261, 1.4083]], atol=1e-4)


def test_config_and_hdf5_round_trip(tmp_path):
    layer = keras.layers.LayerNormalization(axis=-1, epsilon=1e-2, scale=False)
    cfg = layer.get_config()
    assert (cfg["axis"], cfg["epsilon"], cfg["center"], cfg["scale"]) == ([-1], 1e-2, True,
                                                                           False)
    with tf.Graph().as_default():
        model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,)),
                                  keras.layers.LayerNormalization(
                                      beta_initializer="ones")])
        assert model.layers[1].get_config()["axis"] == [1]
        path = str(tmp_path / "m.h5")
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        expected = model.predict(x)
        model.save(path)
    with tf.Graph().as_default():
        loaded = keras.models.load_model(path)
        assert type(loaded.layers[1]).__name__ == "LayerNormalization"
        np.testing.assert_allclose(loaded.predict(x), expected, atol=1e-6)


def test_bad_axis_is_an_error():
    import pytest

    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="axis"):
            keras.layers.LayerNormalization(axis=3)(tf.constant(X))
