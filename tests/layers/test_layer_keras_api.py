"""The Keras `Layer` members of the `tf.layers` classes (flowgraph/layers/layer_api.py).

Expected values were printed by TF 2.15's `tf.compat.v1.layers` in graph mode (the
oracle); in TF 2.15 these legacy layers are never connected, so the node accessors raise.
"""

import re

import numpy as np
import pytest

import flowgraph as tf

ZEROS = {"class_name": "Zeros", "config": {"dtype": "float32"}}
ONES = {"class_name": "Ones", "config": {"dtype": "float32"}}
CONV_CFG = {"name": "c", "trainable": True, "dtype": None, "filters": 2,
            "kernel_size": (3, 1), "strides": (2, 2), "padding": "same",
            "data_format": "channels_last", "dilation_rate": (1, 1), "groups": 1,
            "activation": "relu", "use_bias": True, "kernel_initializer": None,
            "bias_initializer": ZEROS, "kernel_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_count_params_before_and_after_build():
    d = tf.layers.Dense(3, name="p")
    with pytest.raises(ValueError, match=r"You tried to call `count_params` on p, but the "
                                         r"layer isn't built\. You can build it manually "
                                         r"via: `p\.build\(batch_input_shape\)`\."):
        d.count_params()
    d(tf.placeholder(tf.float32, [None, 4]))
    assert d.count_params() == 15
    b = tf.layers.BatchNormalization()
    b(tf.ones([2, 5]))
    assert b.count_params() == 20
    f = tf.layers.Flatten()
    f(tf.ones([2, 3, 4]))
    assert f.count_params() == 0


def test_get_and_set_weights_through_the_default_session():
    d = tf.layers.Dense(3, name="p")
    assert d.get_weights() == []
    x = tf.placeholder(tf.float32, [None, 4])
    y = d(x)
    init = tf.global_variables_initializer()
    n_ops = len(tf.get_default_graph().get_operations())
    with tf.Session() as sess:
        sess.run(init)
        assert [w.shape for w in d.get_weights()] == [(4, 3), (3,)]
        d.set_weights([np.ones((4, 3)), np.arange(3.0)])
        np.testing.assert_array_equal(sess.run(y, {x: np.ones((1, 4))}), [[4.0, 5.0, 6.0]])
        np.testing.assert_array_equal(d.get_weights()[1], [0.0, 1.0, 2.0])
        with pytest.raises(ValueError, match=r'You called `set_weights\(weights\)` on layer '
                                             r'"p" with a weight list of length 1, but the '
                                             r"layer was expecting 2 weights\."):
            d.set_weights([np.ones((4, 3))])
        with pytest.raises(ValueError, match=r"Layer weight shape \(4, 3\) not compatible "
                                             r"with provided weight shape \(4, 2\)"):
            d.set_weights([np.ones((4, 2)), np.ones(3)])
    assert len(tf.get_default_graph().get_operations()) == n_ops  # no ops added
    b = tf.layers.BatchNormalization(name="bn2")
    b(tf.ones([2, 5]), training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [w.tolist() for w in b.get_weights()][2:] == [[0.0] * 5, [1.0] * 5]
    # TF would open a Keras session here; flowgraph asks for a default session
    with pytest.raises(ValueError, match="default session"):
        b.get_weights()


def test_get_config_of_each_class():
    assert tf.layers.Dense(3, name="p").get_config() == {
        "name": "p", "trainable": True, "dtype": None, "units": 3, "activation": "linear",
        "use_bias": True, "kernel_initializer": None, "bias_initializer": ZEROS,
        "kernel_regularizer": None, "bias_regularizer": None,
        "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None}
    cfg = tf.layers.Dense(3, kernel_initializer=tf.ones_initializer(),
                          bias_initializer=tf.constant_initializer(2.0),
                          kernel_regularizer=lambda w: tf.reduce_sum(w), use_bias=False,
                          name="k").get_config()
    assert cfg["kernel_initializer"] == ONES and cfg["use_bias"] is False
    assert cfg["bias_initializer"] == {"class_name": "Constant",
                                       "config": {"value": 2.0, "dtype": "float32"}}
    assert cfg["kernel_regularizer"] == "<lambda>"
    cfg = tf.layers.Dense(3, kernel_initializer=tf.glorot_uniform_initializer(seed=1),
                          name="k2", activation=tf.nn.tanh).get_config()
    assert cfg["activation"] == "tanh"
    assert cfg["kernel_initializer"] == {"class_name": "GlorotUniform",
                                         "config": {"seed": 1, "dtype": "float32"}}
    assert tf.layers.Conv2D(2, (3, 1), strides=2, padding="same", activation="relu",
                            name="c").get_config() == CONV_CFG
    c1 = tf.layers.Conv1D(2, 3, name="c1").get_config()
    assert (c1["kernel_size"], c1["strides"], c1["dilation_rate"]) == ((3,), (1,), (1,))
    assert tf.layers.BatchNormalization(axis=1, name="b").get_config() == {
        "name": "b", "trainable": True, "dtype": None, "axis": 1, "momentum": 0.99,
        "epsilon": 0.001, "center": True, "scale": True, "beta_initializer": ZEROS,
        "gamma_initializer": ONES, "moving_mean_initializer": ZEROS,
        "moving_variance_initializer": ONES, "beta_regularizer": None,
        "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None}
    assert tf.layers.Dropout(0.2, noise_shape=[None, 1], seed=3, name="dr").get_config() \
        == {"name": "dr", "trainable": True, "dtype": None, "rate": 0.2,
            "noise_shape": [None, 1], "seed": 3}
    assert tf.layers.MaxPooling2D(2, 2, name="m").get_config() == {
        "name": "m", "trainable": True, "dtype": None, "pool_size": (2, 2),
        "padding": "valid", "strides": (2, 2), "data_format": "channels_last"}
    assert tf.layers.AveragePooling1D(2, 1, name="a").get_config() == {
        "name": "a", "trainable": True, "dtype": None, "strides": (1,), "pool_size": (2,),
        "padding": "valid", "data_format": "channels_last"}
    assert tf.layers.Flatten(name="f").get_config() == {
        "name": "f", "trainable": True, "dtype": None, "data_format": "channels_last"}
    assert tf.layers.Layer(name="q", trainable=False, dtype="float64").get_config() == {
        "name": "q", "trainable": False, "dtype": "float64"}
    t = tf.layers.Conv2DTranspose(2, 3, strides=2, name="t").get_config()
    assert sorted(t) == sorted([*CONV_CFG, "output_padding"])
    assert t["output_padding"] is None
    t3 = tf.layers.Conv3DTranspose(2, 3, name="b").get_config()
    assert sorted(t3) == sorted([*(k for k in CONV_CFG if k != "dilation_rate"),
                                 "output_padding"])
    assert (t3["output_padding"], t3["kernel_size"]) == (None, (3, 3, 3))
    s = tf.layers.SeparableConv2D(2, 3, depth_multiplier=2, name="s").get_config()
    assert sorted(s) == sorted([*CONV_CFG, "depth_multiplier", "depthwise_initializer",
                                "pointwise_initializer", "depthwise_regularizer",
                                "pointwise_regularizer", "depthwise_constraint",
                                "pointwise_constraint"])
    assert (s["depth_multiplier"], s["depthwise_initializer"], s["kernel_initializer"]) == (
        2, None, {"class_name": "GlorotUniform", "config": {"seed": None, "dtype": "float32"}})
    # dtype is recorded once the layer is called
    d = tf.layers.Dense(3, name="p")
    d(tf.ones([1, 4]))
    assert d.get_config()["dtype"] == "float32"


@pytest.mark.parametrize("make", [
    lambda: tf.layers.Conv2D(4, 3, name="a"),
    lambda: tf.layers.Conv2DTranspose(2, 3, strides=2, name="t"),
    lambda: tf.layers.SeparableConv2D(2, 3, depth_multiplier=2, name="s"),
    lambda: tf.layers.Conv1D(2, 3, name="c1"),
    lambda: tf.layers.MaxPooling2D(2, 2, name="m"),
    lambda: tf.layers.Dense(3, activation=tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(0.5), name="d"),
    lambda: tf.layers.BatchNormalization(axis=1, name="b"),
    lambda: tf.layers.Dropout(0.2, name="dr"),
    lambda: tf.layers.Flatten(name="f"),
    lambda: tf.layers.Conv3D(2, 3, name="a3"),
    lambda: tf.layers.Conv3DTranspose(2, 3, name="b3"),
    lambda: tf.layers.SeparableConv1D(2, 3, name="c3"),
    lambda: tf.layers.MaxPooling3D(2, 2, name="d3"),
    lambda: tf.layers.AveragePooling2D(2, 2, name="g"),
    lambda: tf.layers.Conv2DTranspose(2, 3, output_padding=1, strides=2, name="h"),
])
def test_from_config_round_trips(make):
    layer = make()
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_from_config_builds_a_working_layer():
    d = tf.layers.Dense.from_config({"name": "zz", "units": 2, "activation": "relu",
                                     "kernel_initializer": ONES,
                                     "bias_initializer": ZEROS})
    assert d.activation is tf.nn.relu
    with tf.Session() as sess:
        y = d(tf.constant([[1.0, -3.0]]))
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y), [[0.0, 0.0]])
    with pytest.raises(ValueError, match="groups"):
        tf.layers.Conv2D.from_config({**CONV_CFG, "groups": 2})


def test_compute_output_shape():
    n_ops = len(tf.get_default_graph().get_operations())
    assert tf.layers.Dense(3).compute_output_shape((None, 4)).as_list() == [None, 3]
    assert tf.layers.Dense(3).compute_output_shape(tf.TensorShape([2, 5, 4])).as_list() \
        == [2, 5, 3]
    assert len(tf.get_default_graph().get_operations()) == n_ops
    custom = tf.layers.Conv2D(4, 3, activation=lambda t: t * 2,
                              kernel_regularizer=lambda w: tf.reduce_sum(w))
    assert custom.compute_output_shape((None, 8, 8, 2)).as_list() == [None, 6, 6, 4]
    with pytest.raises(ValueError, match=r"Shape \(4,\) must have rank at least 2"):
        tf.layers.Dense(3).compute_output_shape((4,))
    with pytest.raises(ValueError, match=r"The last dimension of the input shape of a Dense "
                                         r"layer should be defined\. Found None\. Received: "
                                         r"input_shape=\(2, \?\)"):
        tf.layers.Dense(3).compute_output_shape((2, None))
    cases = [
        (tf.layers.Conv2D(4, 3), (None, 8, 8, 2), [None, 6, 6, 4]),
        (tf.layers.MaxPooling2D(2, 2), (None, 8, 8, 2), [None, 4, 4, 2]),
        (tf.layers.Flatten(), (None, 8, 8, 2), [None, 128]),
        (tf.layers.Flatten(), (None, None, 4), [None, None]),
        (tf.layers.Flatten(), (None,), [None, 1]),
        (tf.layers.AveragePooling3D(2, 2, padding="same"), (None, 5, 5, 5, 2),
         [None, 3, 3, 3, 2]),
        (tf.layers.Conv1D(4, 3, data_format="channels_first"), (None, 2, 10), [None, 4, 8]),
        (tf.layers.Conv2DTranspose(4, 3, strides=2), (None, 5, 5, 2), [None, 11, 11, 4]),
        (tf.layers.SeparableConv2D(4, 3), (None, 5, 5, 2), [None, 3, 3, 4]),
        (tf.layers.Conv3D(4, 3), (None, 5, 5, 5, 2), [None, 3, 3, 3, 4]),
        (tf.layers.Conv3DTranspose(4, 3), (None, 5, 5, 5, 2), [None, 7, 7, 7, 4]),
    ]
    for layer, shape, want in cases:
        out = layer.compute_output_shape(shape)
        assert isinstance(out, tf.TensorShape) and out.as_list() == want, (layer, out)
    # Dropout and BatchNormalization hand back what they were given
    assert tf.layers.Dropout().compute_output_shape((None, 8)) == (None, 8)
    assert tf.layers.BatchNormalization().compute_output_shape((None, 8)) == (None, 8)
    with pytest.raises(NotImplementedError):
        tf.layers.Layer().compute_output_shape((None, 3))


def test_layers_are_never_connected_in_graph_mode():
    d = tf.layers.Dense(3, name="p")
    d(tf.placeholder(tf.float32, [None, 4]))
    assert d.inbound_nodes == [] and d.outbound_nodes == []
    for attr, message in [
            ("input", "Layer p is not connected, no input to return."),
            ("input_mask", "Layer p is not connected, no input to return."),
            ("output", "Layer p has no inbound nodes."),
            ("output_mask", "Layer p has no inbound nodes."),
            ("input_shape", 'The layer "p" has never been called and thus has no defined '
                            "input shape. Note that the `input_shape` property is only "
                            "available for Functional and Sequential models."),
            ("output_shape", "The layer has never been called and thus has no defined "
                             "output shape.")]:
        with pytest.raises(AttributeError, match=re.escape(message)):
            getattr(d, attr)
    for method, what in [("get_input_at", "input"), ("get_output_at", "output"),
                         ("get_input_shape_at", "input shape"),
                         ("get_output_shape_at", "output shape"),
                         ("get_input_mask_at", "input")]:
        with pytest.raises(RuntimeError, match=re.escape(
                f"The layer has never been called and thus has no defined {what}.")):
            getattr(d, method)(0)


def test_add_variable_masks_and_dtypes(graph):
    d = tf.layers.Dense(3, name="p")
    assert d.add_variable("extra", [2]).name == "p/extra:0"
    assert (d.compute_dtype, d.variable_dtype, d.graph) == (None, None, None)
    x = tf.ones([2, 4])
    d(x)
    assert [v.name for v in d.weights] == ["p/extra:0", "p/kernel:0", "p/bias:0"]
    assert d.count_params() == 17
    assert d.compute_dtype == "float32" and d.graph is None
    assert (d.variable_dtype, d.dynamic, d.stateful, d.metrics) == ("float32", False, False, [])
    assert tf.layers.Dense(2, dtype="float64").variable_dtype == "float64"
    # after the first call the layer's scope reuses: a new variable is an error
    with pytest.raises(ValueError, match="Variable p/extra2 does not exist"):
        d.add_variable("extra2", [2])
    mask = tf.ones([2], tf.bool)
    assert d.compute_mask(x) is None and d.compute_mask(x, mask) is mask
    assert tf.layers.Dropout().compute_mask(x, mask) is mask
    assert tf.layers.BatchNormalization().compute_mask(x, mask) is mask
    assert tf.layers.Conv2D(2, 3).compute_mask(x) is None
    with pytest.raises(TypeError, match="Layer q does not support masking, but was passed "
                                        "an input_mask"):
        tf.layers.Layer(name="q").compute_mask(x, mask)
