"""tf.keras.constraints: values, configs and lookups as TF 2.15's tf.compat.v1.keras, and
constraints applied after each optimizer step in `fit` (expected values recorded with
the tf-oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

K = tf.keras
W = np.array([[3.0, -4.0, 0.5], [4.0, 3.0, -0.5]], np.float32)


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("make, expected", [
    (lambda: K.constraints.MaxNorm(2.0), [[1.2, -1.6, 0.5], [1.6, 1.2, -0.5]]),
    (lambda: K.constraints.max_norm(1.0, axis=1),
     [[0.597, -0.796, 0.0995], [0.796, 0.597, -0.0995]]),
    (lambda: K.constraints.NonNeg(), [[3.0, 0.0, 0.5], [4.0, 3.0, 0.0]]),
    (lambda: K.constraints.UnitNorm(), [[0.6, -0.8, 0.7071], [0.8, 0.6, -0.7071]]),
    (lambda: K.constraints.unit_norm(axis=1), [[0.597, -0.796, 0.0995], [0.796, 0.597, -0.0995]]),
    (lambda: K.constraints.MinMaxNorm(1.0, 2.0, rate=0.5),
     [[2.1, -2.8, 0.6036], [2.8, 2.1, -0.6036]]),
    (lambda: K.constraints.MinMaxNorm(), [[0.6, -0.8, 0.5], [0.8, 0.6, -0.5]]),
])
def test_constraint_values_match_tf(make, expected):
    with tf.Graph().as_default():
        out = _run(make()(tf.constant(W)))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-4)


def test_non_neg_gives_negative_zero_as_tf():
    with tf.Graph().as_default():
        out = _run(K.constraints.NonNeg()(tf.constant(W)))
    assert np.signbit(out[0, 1]) and out[0, 1] == 0


def test_radial_constraint_matches_tf_rings():
    k4 = np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2) - 8
    with tf.Graph().as_default():
        out = _run(K.constraints.RadialConstraint()(tf.constant(k4)))
    outer = [[8.0, 9.0], [10.0, 11.0]]
    expected = np.array([[outer] * 3, [outer, [[-8.0, -7.0], [-6.0, -5.0]], outer], [outer] * 3])
    np.testing.assert_array_equal(out, expected)


def test_radial_constraint_even_size_and_rank_error():
    k = np.arange(16, dtype=np.float32).reshape(4, 4, 1, 1)
    with tf.Graph().as_default():
        out = _run(K.constraints.RadialConstraint()(tf.constant(k)))[:, :, 0, 0]
        # Keras' rule for size 4: the centre 2x2 takes k[1, 1] = 5, the outer ring k[3, 3]
        # = 15 (TF 2.15's graph mode fails on even sizes: it makes a variable in map_fn).
        assert out[1:3, 1:3].tolist() == [[5.0, 5.0], [5.0, 5.0]]
        assert out[0].tolist() == [15.0] * 4
        with pytest.raises(ValueError, match="rank 4"):
            K.constraints.RadialConstraint()(tf.constant(W))


def test_configs_serialize_and_get():
    c = K.constraints.MinMaxNorm(1.0, 2.0, rate=0.5)
    assert c.get_config() == {"min_value": 1.0, "max_value": 2.0, "rate": 0.5, "axis": 0}
    assert K.constraints.serialize(K.constraints.MaxNorm(2.0)) == {
        "class_name": "MaxNorm", "config": {"max_value": 2.0, "axis": 0}}
    assert K.constraints.serialize(K.constraints.NonNeg()) == {"class_name": "NonNeg",
                                                               "config": {}}
    assert K.constraints.MinMaxNorm().get_config() == {"min_value": 0.0, "max_value": 1.0,
                                                       "rate": 1.0, "axis": 0}
    for name, cls in [("max_norm", "MaxNorm"), ("nonneg", "NonNeg"), ("unit_norm", "UnitNorm")]:
        assert type(K.constraints.get(name)).__name__ == cls
    got = K.constraints.get({"class_name": "MaxNorm", "config": {"max_value": 3}})
    assert type(got).__name__ == "MaxNorm" and got.max_value == 3
    assert K.constraints.deserialize({"class_name": "MinMaxNorm",
                                      "config": {"min_value": 0.5}}).get_config() == {
        "min_value": 0.5, "max_value": 1.0, "rate": 1.0, "axis": 0}
    assert K.constraints.get(None) is None
    with pytest.raises(ValueError, match="Unknown constraint: 'nope'"):
        K.constraints.get("nope")
    with pytest.raises(ValueError, match="Could not interpret constraint function identifier"):
        K.constraints.get(3)


def test_fit_applies_constraints_after_each_update_as_tf():
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(
            3, input_shape=(4,), kernel_constraint="max_norm",
            bias_constraint=K.constraints.NonNeg(),
            kernel_initializer=K.initializers.Constant(2.0), bias_initializer="zeros")])
        assert type(model.layers[0].kernel_constraint).__name__ == "MaxNorm"
        model.compile(K.optimizers.SGD(0.1), "mse")
        model.fit(np.ones((8, 4), np.float32), -5 * np.ones((8, 3), np.float32), epochs=1,
                  batch_size=8, verbose=0)
        kernel, bias = model.get_weights()
    # TF: the update takes the kernel to 4.4 per entry; MaxNorm(2) scales columns to norm 2.
    np.testing.assert_allclose(kernel, np.ones((4, 3)), rtol=1e-5)
    np.testing.assert_array_equal(bias, np.zeros(3))


def test_conv_and_depthwise_layers_take_constraints_by_name():
    with tf.Graph().as_default():
        conv = K.layers.Conv2D(2, 3, kernel_constraint="unit_norm")
        dw = K.layers.DepthwiseConv2D(3, depthwise_constraint="non_neg")
        x = K.Input((5, 5, 2))
        dw(conv(x))
        assert type(conv.kernel.constraint).__name__ == "UnitNorm"
        assert type(dw.depthwise_kernel.constraint).__name__ == "NonNeg"


def test_constraints_survive_hdf5_save_and_load(tmp_path):
    path = str(tmp_path / "m.h5")
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(3, input_shape=(4,),
                                             kernel_constraint=K.constraints.MaxNorm(2.0),
                                             bias_constraint="non_neg")])
        model.compile("sgd", "mse")
        model.save(path)
    with tf.Graph().as_default():
        layer = K.models.load_model(path).layers[0]
        assert layer.kernel_constraint.get_config() == {"max_value": 2.0, "axis": 0}
        assert type(layer.bias_constraint).__name__ == "NonNeg"
        assert layer.kernel.constraint is layer.kernel_constraint
