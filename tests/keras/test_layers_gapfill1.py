"""tf.keras.layers gap-fill, part 1: the 1-D/3-D convolutions and poolings, reshaping
over 1 and 3 axes, locally connected, noise / activation / masking layers, Dot,
InputSpec, Wrapper, serialize / deserialize, the v2 dtype switch and `experimental`.

TensorFlow 2.15's values (tf.compat.v1 with v2 behaviour disabled) are inline; they come
from the tf-oracle scripts /tmp/s16/wild/kl1_*.py. Each layer is also checked against a
NumPy reference, its gradients against finite differences, its config round trip, and
a model of them saved to HDF5 and loaded in a fresh process.
"""

import itertools
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import keras

L = keras.layers
_R = np.random.RandomState(0)  # the oracle's inputs, drawn in this order
X1 = _R.randn(2, 6, 3).astype(np.float32)
X2 = _R.randn(2, 5, 4, 3).astype(np.float32)
X3 = _R.randn(2, 4, 5, 4, 3).astype(np.float32)
RNG = np.random.default_rng(5)

NAMES = """AveragePooling3D AvgPool1D AvgPool2D AvgPool3D MaxPool1D MaxPool2D MaxPool3D
MaxPooling3D GlobalAveragePooling3D GlobalAvgPool3D GlobalMaxPool1D GlobalMaxPool2D
GlobalMaxPool3D GlobalMaxPooling3D Conv1DTranspose Convolution1DTranspose Conv3D
Convolution3D Conv3DTranspose Convolution3DTranspose Convolution2D SeparableConv1D
SeparableConvolution1D DepthwiseConv1D LocallyConnected1D LocallyConnected2D Cropping1D
Cropping3D ZeroPadding1D ZeroPadding3D UpSampling1D UpSampling3D SpatialDropout1D
SpatialDropout2D SpatialDropout3D GaussianDropout GaussianNoise AlphaDropout
ActivityRegularization PReLU ThresholdedReLU Masking Identity InputSpec Wrapper Dot dot
serialize deserialize disable_v2_dtype_behavior enable_v2_dtype_behavior
experimental""".split()


def _run(tensors, feed=None):
    sess = keras.backend.get_session()
    sess.run(tf.global_variables_initializer())
    return sess.run(tensors, feed)


def test_every_name_and_alias():
    assert all(hasattr(L, n) for n in NAMES)
    for alias, name in [("AvgPool1D", "AveragePooling1D"), ("AvgPool2D", "AveragePooling2D"),
                        ("AvgPool3D", "AveragePooling3D"), ("MaxPool1D", "MaxPooling1D"),
                        ("MaxPool2D", "MaxPooling2D"), ("MaxPool3D", "MaxPooling3D"),
                        ("GlobalAvgPool3D", "GlobalAveragePooling3D"),
                        ("GlobalMaxPool1D", "GlobalMaxPooling1D"),
                        ("GlobalMaxPool2D", "GlobalMaxPooling2D"),
                        ("GlobalMaxPool3D", "GlobalMaxPooling3D"),
                        ("Convolution1DTranspose", "Conv1DTranspose"),
                        ("Convolution2D", "Conv2D"), ("Convolution3D", "Conv3D"),
                        ("Convolution3DTranspose", "Conv3DTranspose"),
                        ("SeparableConvolution1D", "SeparableConv1D")]:
        assert getattr(L, alias) is getattr(L, name), alias
    assert L.AvgPool1D().name == "average_pooling1d"  # TF: the class's own name


# -- TensorFlow's outputs ---------------------------------------------------------------------
# name: (layer, input, TF's output shape, TF's sum, TF's sum of value * (index % 7))
TF_OUTPUTS = {
    "Conv3D": (lambda: L.Conv3D(2, (2, 3, 2), strides=(1, 2, 1), padding="same",
                                kernel_initializer="ones", bias_initializer="ones"),
               X3, (2, 4, 3, 4, 2), -311.811, 649.116),
    "Conv3Ddil": (lambda: L.Conv3D(2, 2, dilation_rate=2, padding="same",
                                   kernel_initializer="ones"), X3, (2, 4, 5, 4, 2), -376.734,
                  1151.728),
    "Conv3DT": (lambda: L.Conv3DTranspose(2, 2, strides=2, kernel_initializer="ones",
                                          padding="same"), X3, (2, 8, 10, 8, 2), -939.137,
                8908.793),
    "Conv3DTop": (lambda: L.Conv3DTranspose(2, 3, strides=2, output_padding=1,
                                            kernel_initializer="ones"), X3, (2, 10, 12, 10, 2),
                  -3169.587, 12599.18),
    "Conv1DT": (lambda: L.Conv1DTranspose(2, 3, strides=2, kernel_initializer="ones"), X1,
                (2, 13, 2), 64.552, 165.145),
    "Conv1DTsame": (lambda: L.Conv1DTranspose(2, 3, strides=2, padding="same",
                                              output_padding=1, kernel_initializer="ones"),
                    X1, (2, 12, 2), 65.651, 156.385),
    "Sep1D": (lambda: L.SeparableConv1D(2, 3, depth_multiplier=2, padding="same",
                                        depthwise_initializer="ones",
                                        pointwise_initializer="ones"), X1, (2, 6, 2), 131.107,
              75.913),
    "Dw1D": (lambda: L.DepthwiseConv1D(3, strides=2, depth_multiplier=2,
                                       depthwise_initializer="ones"), X1, (2, 2, 6), 25.73,
             80.383),
    "MaxP3": (lambda: L.MaxPool3D(2, padding="same"), X3, (2, 2, 3, 2, 3), 79.493, 280.615),
    "AvgP3": (lambda: L.AvgPool3D((2, 3, 2), strides=1), X3, (2, 3, 3, 3, 3), -19.988,
              577.397),
    "AvgP3same": (lambda: L.AveragePooling3D(3, strides=2, padding="same"), X3,
                  (2, 2, 3, 2, 3), -8.14, 248.996),
    "AvgP1": (lambda: L.AvgPool1D(3, strides=2, padding="same"), X1, (2, 3, 3), 4.499,
              37.966),
    "MaxP1cf": (lambda: L.MaxPool1D(2, data_format="channels_first"), X1, (2, 6, 1), 12.631,
                34.725),
    "GAP3": (lambda: L.GlobalAvgPool3D(), X3, (2, 3), -0.734, 26.064),
    "GMP3": (lambda: L.GlobalMaxPool3D(keepdims=True), X3, (2, 1, 1, 1, 3), 13.449, 19.621),
    "LC1": (lambda: L.LocallyConnected1D(2, 3, strides=2, kernel_initializer="ones"), X1,
            (2, 2, 2), 25.73, 29.19),
    "LC2": (lambda: L.LocallyConnected2D(2, (2, 3), strides=(2, 1), kernel_initializer="ones"),
            X2, (2, 2, 2, 2), -16.537, 52.478),
    "LC2cf": (lambda: L.LocallyConnected2D(2, 2, data_format="channels_first",
                                           kernel_initializer="ones"), X2, (2, 2, 3, 2),
              28.305, 93.369),
    "Crop1": (lambda: L.Cropping1D((1, 2)), X1, (2, 3, 3), 10.288, 64.778),
    "Crop3": (lambda: L.Cropping3D(((1, 0), (1, 2), (0, 1))), X3, (2, 3, 2, 3, 3), -19.992,
              389.417),
    "Pad1": (lambda: L.ZeroPadding1D((1, 2)), X1, (2, 9, 3), 10.759, 126.758),
    "Pad3": (lambda: L.ZeroPadding3D((1, 2, 0)), X3, (2, 6, 9, 4, 3), -58.696, 1668.711),
    "Up1": (lambda: L.UpSampling1D(3), X1, (2, 18, 3), 32.276, 384.935),
    "Up3": (lambda: L.UpSampling3D((1, 2, 3)), X3, (2, 4, 10, 12, 3), -352.176, 9998.166),
    "PReLU": (lambda: L.PReLU(alpha_initializer=keras.initializers.Constant(0.25),
                              shared_axes=[1, 2]), X2, (2, 5, 4, 3), 41.584, 435.723),
    "TReLU": (lambda: L.ThresholdedReLU(0.3), X1, (2, 6, 3), 20.58, 66.306),
    "Masking": (lambda: L.Masking(float(X1[0, 1, 0])), X1, (2, 6, 3), 10.759, 133.004),
    "Identity": (lambda: L.Identity(), X1, (2, 6, 3), 10.759, 133.004),
}


@pytest.mark.parametrize("key", sorted(TF_OUTPUTS))
def test_outputs_equal_tensorflow(key):
    make, x, shape, total, weighted = TF_OUTPUTS[key]
    y = make()(tf.constant(x))
    assert tuple(y.shape.as_list()) == shape
    value = _run(y)
    assert value.shape == shape
    assert round(float(value.sum()), 3) == pytest.approx(total, abs=2e-3)
    check = (value * np.arange(value.size).reshape(shape) % 7).sum()
    assert float(check) == pytest.approx(weighted, rel=1e-5, abs=2e-3)


def test_seeded_weights_and_noise_equal_tensorflow():
    tf.set_random_seed(3)
    conv = L.Conv3D(2, 2)
    conv.build((None, 3, 3, 3, 2))
    local = L.LocallyConnected1D(2, 2)
    local.build((None, 4, 3))
    noise = [L.SpatialDropout2D(0.5, seed=1)(tf.ones([2, 3, 3, 4]), training=True),
             L.GaussianDropout(0.3, seed=2)(tf.ones([2, 3]), training=True),
             L.GaussianNoise(0.5, seed=2)(tf.ones([2, 3]), training=True),
             L.AlphaDropout(0.4, seed=5)(tf.ones([2, 4]), training=True),
             L.AlphaDropout(0.4, seed=5)(tf.ones([2, 4]), training=False)]
    with tf.Session() as sess:  # one run of the initializers, as the oracle's script
        sess.run(tf.global_variables_initializer())
        got = [v.ravel()[:6] for v in sess.run([conv.kernel, local.kernel, *noise])]
    want = [[-0.3227, 0.2725, 0.3445, 0.2582, -0.1466, -0.0996],
            [0.2781, 0.0053, 0.125, -0.3482, -0.4072, 0.1178],
            [2.0, 2.0, 2.0, 0.0, 2.0, 2.0],
            [1.2946, 1.227, 0.0996, 1.8646, 0.8297, 0.201],
            [1.225, 1.1734, 0.3123, 1.6603, 0.8699, 0.3897],
            [-0.9106, 1.4704, -0.9106, 1.4704, 1.4704, 1.4704],
            [1.0] * 6]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-4)


# -- weights, op types, configs: TensorFlow's ----------------------------------------------------
WEIGHTS_AND_OPS = [
    (lambda: L.Conv3D(3, 2), (None, 4, 4, 4, 2),
     [("conv3d/kernel:0", (2, 2, 2, 2, 3)), ("conv3d/bias:0", (3,))], {"Conv3D", "BiasAdd"}),
    (lambda: L.Conv3D(3, 2, dilation_rate=2, padding="same"), (None, 4, 4, 4, 2),
     [("conv3d/kernel:0", (2, 2, 2, 2, 3)), ("conv3d/bias:0", (3,))],
     {"Conv3D", "SpaceToBatchND", "BatchToSpaceND"}),
    (lambda: L.Conv3DTranspose(3, 2, strides=2), (None, 3, 3, 3, 2),
     [("conv3d_transpose/kernel:0", (2, 2, 2, 3, 2)), ("conv3d_transpose/bias:0", (3,))],
     {"Conv3DBackpropInputV2"}),
    (lambda: L.Conv1DTranspose(3, 2, strides=2), (None, 5, 2),
     [("conv1d_transpose/kernel:0", (2, 3, 2)), ("conv1d_transpose/bias:0", (3,))],
     {"Conv2DBackpropInput", "ExpandDims", "Squeeze"}),
    (lambda: L.SeparableConv1D(3, 2, depth_multiplier=2), (None, 5, 2),
     [("separable_conv1d/depthwise_kernel:0", (2, 2, 2)),
      ("separable_conv1d/pointwise_kernel:0", (1, 4, 3)), ("separable_conv1d/bias:0", (3,))],
     {"DepthwiseConv2dNative", "Conv2D", "ExpandDims", "Squeeze"}),
    (lambda: L.DepthwiseConv1D(2, depth_multiplier=2), (None, 5, 2),
     [("depthwise_conv1d/depthwise_kernel:0", (2, 2, 2)), ("depthwise_conv1d/bias:0", (4,))],
     {"DepthwiseConv2dNative", "ExpandDims", "Squeeze"}),
    (lambda: L.LocallyConnected1D(3, 2), (None, 5, 2),
     [("locally_connected1d/kernel:0", (4, 4, 3)), ("locally_connected1d/bias:0", (4, 3))],
     {"BatchMatMulV2", "ConcatV2", "Reshape", "StridedSlice", "Transpose"}),
    (lambda: L.LocallyConnected2D(3, 2), (None, 4, 4, 2),
     [("locally_connected2d/kernel:0", (9, 8, 3)), ("locally_connected2d/bias:0", (3, 3, 3))],
     {"BatchMatMulV2", "ConcatV2", "Reshape", "StridedSlice", "Transpose"}),
    (lambda: L.PReLU(), (None, 4, 3), [("p_re_lu/alpha:0", (4, 3))], {"Relu", "Neg", "Mul"}),
    (lambda: L.PReLU(shared_axes=[1]), (None, 4, 3), [("p_re_lu/alpha:0", (1, 3))],
     {"Relu", "Neg"}),
    (lambda: L.AveragePooling3D(), (None, 4, 4, 4, 2), [], {"AvgPool3D"}),
    (lambda: L.MaxPool3D(padding="same"), (None, 5, 4, 4, 2), [], {"MaxPool3D"}),
    (lambda: L.MaxPool1D(), (None, 6, 2), [], {"MaxPool", "ExpandDims", "Squeeze"}),
    (lambda: L.GlobalMaxPool3D(), (None, 3, 4, 4, 2), [], {"Max"}),
    (lambda: L.Cropping3D(1), (None, 4, 4, 4, 2), [], {"StridedSlice"}),
    (lambda: L.ZeroPadding1D(2), (None, 6, 2), [], {"Pad"}),
    (lambda: L.UpSampling3D(2), (None, 2, 2, 2, 2), [], {"Split", "ConcatV2"}),
    (lambda: L.GaussianNoise(0.5), (None, 6), [],
     {"RandomStandardNormal", "Switch", "Merge", "AddV2"}),
    (lambda: L.GaussianDropout(0.5), (None, 6), [], {"RandomStandardNormal", "Mul"}),
    (lambda: L.AlphaDropout(0.5), (None, 6), [], {"RandomUniform", "GreaterEqual", "Cast"}),
    (lambda: L.SpatialDropout3D(0.5), (None, 4, 4, 4, 2), [],
     {"RandomUniform", "GreaterEqual", "Pack", "Shape"}),
    (lambda: L.ThresholdedReLU(0.5), (None, 6), [], {"Greater", "Cast", "Mul"}),
    (lambda: L.Masking(0.0), (None, 5, 3), [], {"NotEqual", "Any", "Cast", "Mul"}),
    (lambda: L.ActivityRegularization(0.1, 0.2), (None, 6), [], {"Abs", "Sum", "RealDiv"}),
]


@pytest.mark.parametrize("case", range(len(WEIGHTS_AND_OPS)))
def test_weights_and_op_types_as_tensorflow(case):
    make, shape, weights, ops = WEIGHTS_AND_OPS[case]
    graph = tf.get_default_graph()
    x = keras.Input(batch_shape=shape)
    before = {op.name for op in graph.get_operations()}
    layer = make()
    layer(x)
    assert [(w.name, tuple(w.shape.as_list())) for w in layer.weights] == weights
    types = {op.type for op in graph.get_operations() if op.name not in before}
    assert ops <= types, (ops - types)


TF_CONFIGS = [  # TF's get_config, less name / trainable / dtype and the initializer dicts
    (lambda: L.AveragePooling3D(), {"pool_size": (2, 2, 2), "padding": "valid",
                                    "strides": (2, 2, 2), "data_format": "channels_last"}),
    (lambda: L.AvgPool1D(), {"strides": (2,), "pool_size": (2,), "padding": "valid",
                             "data_format": "channels_last"}),
    (lambda: L.GlobalMaxPool3D(), {"data_format": "channels_last", "keepdims": False}),
    (lambda: L.Conv1DTranspose(3, 2, strides=2),
     {"filters": 3, "kernel_size": (2,), "strides": (2,), "padding": "valid",
      "data_format": "channels_last", "dilation_rate": (1,), "use_bias": True,
      "output_padding": None}),
    (lambda: L.Conv3D(3, 2), {"filters": 3, "kernel_size": (2, 2, 2), "strides": (1, 1, 1),
                              "padding": "valid", "data_format": "channels_last",
                              "dilation_rate": (1, 1, 1)}),
    (lambda: L.Conv3DTranspose(3, 2, strides=2),
     {"filters": 3, "kernel_size": (2, 2, 2), "strides": (2, 2, 2), "output_padding": None}),
    (lambda: L.SeparableConv1D(3, 2, depth_multiplier=2),
     {"filters": 3, "kernel_size": (2,), "strides": (1,), "dilation_rate": (1,),
      "depth_multiplier": 2}),
    (lambda: L.DepthwiseConv1D(2, depth_multiplier=2),
     {"kernel_size": (2,), "strides": (1,), "depth_multiplier": 2, "padding": "valid"}),
    (lambda: L.LocallyConnected1D(3, 2),
     {"filters": 3, "kernel_size": (2,), "strides": (1,), "padding": "valid",
      "data_format": "channels_last", "implementation": 1}),
    (lambda: L.Cropping1D((1, 2)), {"cropping": (1, 2)}),
    (lambda: L.Cropping3D(1), {"cropping": ((1, 1), (1, 1), (1, 1)),
                               "data_format": "channels_last"}),
    (lambda: L.ZeroPadding1D(2), {"padding": (2, 2)}),
    (lambda: L.ZeroPadding3D(1), {"padding": ((1, 1), (1, 1), (1, 1)),
                                  "data_format": "channels_last"}),
    (lambda: L.UpSampling1D(2), {"size": 2}),
    (lambda: L.UpSampling3D(2), {"size": (2, 2, 2), "data_format": "channels_last"}),
    (lambda: L.SpatialDropout2D(0.5), {"rate": 0.5, "noise_shape": None, "seed": None}),
    (lambda: L.GaussianDropout(0.5), {"rate": 0.5, "seed": None}),
    (lambda: L.GaussianNoise(0.5), {"stddev": 0.5, "seed": None}),
    (lambda: L.AlphaDropout(0.5), {"rate": 0.5, "seed": None}),
    (lambda: L.ActivityRegularization(0.1, 0.2), {"l1": 0.1, "l2": 0.2}),
    (lambda: L.PReLU(shared_axes=[1]), {"alpha_regularizer": None, "alpha_constraint": None,
                                        "shared_axes": [1]}),
    (lambda: L.ThresholdedReLU(0.5), {"theta": 0.5}),
    (lambda: L.Masking(0.0), {"mask_value": 0.0}),
    (lambda: L.Identity(), {}),
    (lambda: L.Dot(axes=(1, 2), normalize=True), {"axes": (1, 2), "normalize": True}),
]


@pytest.mark.parametrize("case", range(len(TF_CONFIGS)))
def test_configs_as_tensorflow_and_round_trip(case):
    make, want = TF_CONFIGS[case]
    layer = make()
    config = layer.get_config()
    assert {k: config[k] for k in want} == want
    again = type(layer).from_config(config)
    assert again.get_config() == config
    # the model-file path: JSON through serialize / deserialize
    entry = json.loads(json.dumps(L.serialize(layer)))
    assert entry["class_name"] == type(layer).__name__
    rebuilt = L.deserialize(entry)
    assert type(rebuilt) is type(layer)
    assert {k: rebuilt.get_config()[k] for k in want} == {k: config[k] for k in want}


# -- NumPy references ------------------------------------------------------------------------------
def _conv3d_ref(x, k, s):
    kd, kh, kw = k.shape[:3]
    dims = [(n - kk) // ss + 1 for n, kk, ss in zip(x.shape[1:4], (kd, kh, kw), s)]
    out = np.zeros((x.shape[0], *dims, k.shape[4]))
    for a, b, c in itertools.product(*map(range, dims)):
        patch = x[:, a * s[0]:a * s[0] + kd, b * s[1]:b * s[1] + kh, c * s[2]:c * s[2] + kw]
        out[:, a, b, c] = np.tensordot(patch, k, axes=[[1, 2, 3, 4], [0, 1, 2, 3]])
    return out


def test_conv_layers_match_numpy():
    x3, x1 = RNG.standard_normal((2, 5, 4, 6, 3)), RNG.standard_normal((2, 7, 3))
    conv = L.Conv3D(4, (2, 3, 2), strides=(2, 1, 2), activation="relu")
    trans = L.Conv3DTranspose(2, 2, strides=2)
    c1t = L.Conv1DTranspose(2, 3, strides=2)
    sep = L.SeparableConv1D(4, 3, depth_multiplier=2)
    dw = L.DepthwiseConv1D(2, strides=2, depth_multiplier=3)
    outs = [conv(x3), trans(x3), c1t(x1), sep(x1), dw(x1)]
    got = _run([*outs, conv.kernel, conv.bias, trans.kernel, c1t.kernel,
                sep.depthwise_kernel, sep.pointwise_kernel, dw.depthwise_kernel])
    y, yt, y1t, ys, yd, k, b, kt, k1t, kdw, kpw, kd = got
    np.testing.assert_allclose(y, np.maximum(_conv3d_ref(x3, k, (2, 1, 2)) + b, 0), rtol=1e-5,
                               atol=1e-5)
    # a stride-2 size-2 transposed convolution: each input voxel paints a 2x2x2 block
    ref = np.einsum("ndhwc,ijkoc->ndihjwko", x3, kt).reshape(2, 10, 8, 12, 2)
    np.testing.assert_allclose(yt, ref, rtol=1e-5, atol=1e-5)
    ref1 = np.zeros((2, 15, 2))
    for t, i in itertools.product(range(7), range(3)):
        ref1[:, 2 * t + i] += x1[:, t] @ k1t[i].T
    np.testing.assert_allclose(y1t, ref1, rtol=1e-5, atol=1e-5)
    depth = np.stack([sum(x1[:, t + i, :, None] * kdw[i] for i in range(3))
                      for t in range(5)], 1).reshape(2, 5, 6)
    np.testing.assert_allclose(ys, depth @ kpw[0], rtol=1e-5, atol=1e-5)
    ref_d = np.stack([sum(x1[:, 2 * t + i, :, None] * kd[i] for i in range(2))
                      for t in range(3)], 1).reshape(2, 3, 9)
    np.testing.assert_allclose(yd, ref_d, rtol=1e-5, atol=1e-5)


def test_locally_connected_and_reshaping_match_numpy():
    x1, x2, x3 = (RNG.standard_normal(s) for s in ((2, 7, 3), (2, 5, 4, 3), (2, 3, 4, 2, 2)))
    lc1 = L.LocallyConnected1D(2, 3, strides=2, bias_initializer="ones")
    lc2 = L.LocallyConnected2D(2, (2, 3))
    outs = [lc1(x1), lc2(x2), L.Cropping3D(((1, 0), (0, 2), (1, 0)))(x3),
            L.ZeroPadding3D((1, (0, 2), 0))(x3), L.UpSampling3D((2, 1, 3))(x3),
            L.UpSampling1D(2)(x1), L.Cropping1D(2)(x1), L.ZeroPadding1D((0, 3))(x1),
            L.GlobalAveragePooling3D()(x3), L.GlobalMaxPooling3D()(x3)]
    got = _run([*outs, lc1.kernel, lc2.kernel])
    k1, k2 = got[-2:]
    ref1 = np.stack([x1[:, 2 * p:2 * p + 3].reshape(2, -1) @ k1[p] for p in range(3)], 1) + 1
    np.testing.assert_allclose(got[0], ref1, rtol=1e-5, atol=1e-5)
    ref2 = np.stack([x2[:, i:i + 2, j:j + 3].reshape(2, -1) @ k2[i * 2 + j]
                     for i in range(4) for j in range(2)], 1).reshape(2, 4, 2, 2)
    np.testing.assert_allclose(got[1], ref2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[2], x3[:, 1:, :2, 1:])
    np.testing.assert_array_equal(got[3], np.pad(x3, [(0, 0), (1, 1), (0, 2), (0, 0),
                                                      (0, 0)]))
    np.testing.assert_array_equal(got[4], x3.repeat(2, 1).repeat(3, 3))
    np.testing.assert_array_equal(got[5], x1.repeat(2, 1))
    np.testing.assert_array_equal(got[6], x1[:, 2:-2])
    np.testing.assert_array_equal(got[7], np.pad(x1, [(0, 0), (0, 3), (0, 0)]))
    np.testing.assert_allclose(got[8], x3.mean((1, 2, 3)))
    np.testing.assert_array_equal(got[9], x3.max((1, 2, 3)))


def test_activation_noise_and_merge_layers_match_numpy():
    x = RNG.standard_normal((3, 4, 5))
    prelu = L.PReLU(alpha_initializer=keras.initializers.Constant(0.3))
    dot_in = [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))]
    training = {"training": True}
    outs = [prelu(x), L.ThresholdedReLU(0.2)(x), L.Identity()(x),
            L.Dot(axes=1)(dot_in), L.dot(dot_in, axes=-1, normalize=True),
            L.Dot(axes=(2, 1))([x, np.ones((3, 5, 2))]),
            L.GaussianNoise(1.0)(x), L.GaussianDropout(0.4)(x), L.AlphaDropout(0.3)(x),
            L.SpatialDropout1D(0.5)(x), L.GaussianNoise(1.0)(x, **training),
            L.SpatialDropout1D(0.5)(x, **training), L.GaussianDropout(0.4)(x, **training)]
    keras.backend.set_learning_phase(0)
    got = _run(outs)
    np.testing.assert_allclose(got[0], np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(got[1], np.where(x > 0.2, x, 0))
    np.testing.assert_array_equal(got[2], x)
    a, b = dot_in
    np.testing.assert_allclose(got[3], (a * b).sum(1, keepdims=True))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(got[4], cos[:, None], rtol=1e-6)
    np.testing.assert_allclose(got[5], x @ np.ones((5, 2)))
    for inference in got[6:10]:  # learning phase 0: the identity
        np.testing.assert_array_equal(inference, x)
    assert not np.allclose(got[10], x)
    dropped = got[11] == 0  # whole channels dropped: the same for every step
    assert (dropped == dropped[:, :1]).all() and 0 < dropped.mean() < 1
    kept = ~dropped
    np.testing.assert_allclose(got[11][kept], (2 * x)[kept])
    assert abs((got[12] / x).mean() - 1) < 0.5


def test_alpha_dropout_keeps_selu_statistics():
    x = np.random.default_rng(0).standard_normal((400, 500))
    y = _run(L.AlphaDropout(0.2, seed=1)(x, training=True))
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.2)
    assert abs(dropped.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(_run(L.AlphaDropout(1.5)(x, training=True)), x)


def test_activity_regularization_loss():
    x = RNG.standard_normal((4, 3))
    layer = L.ActivityRegularization(l1=0.1, l2=0.2)
    y = layer(x)
    loss = tf.add_n(layer.losses)
    got_y, got_loss = _run([y, loss])
    np.testing.assert_array_equal(got_y, x)
    assert got_loss == pytest.approx((0.1 * np.abs(x).sum() + 0.2 * (x ** 2).sum()) / 4)


# -- gradients -----------------------------------------------------------------------------------
def _check_gradients(layer, x, training=None):
    """d(sum(w * layer(x))) against central differences, along random directions, for the
    input and each weight (float64)."""
    rng = np.random.default_rng(1)
    xt = tf.placeholder(tf.float64, x.shape)
    y = layer(xt) if training is None else layer(xt, training=training)
    w = rng.standard_normal(y.shape.as_list())
    loss = tf.reduce_sum(y * w)
    grads = tf.gradients(loss, [xt, *layer.trainable_weights])
    sess = keras.backend.get_session()
    sess.run(tf.global_variables_initializer())
    got = sess.run(grads, {xt: x})
    values = layer.get_weights()
    trainable = len(layer.trainable_weights)
    eps = 1e-6
    for which, g in enumerate(got):
        base = x if which == 0 else values[which - 1]
        for _ in range(2):
            v = rng.standard_normal(base.shape)

            def at(delta, which=which, base=base, v=v):
                if which == 0:
                    return sess.run(loss, {xt: base + delta * v})
                weights = list(values)
                weights[which - 1] = base + delta * v
                layer.set_weights(weights)
                out = sess.run(loss, {xt: x})
                layer.set_weights(values)
                return out

            numeric = (at(eps) - at(-eps)) / (2 * eps)
            assert np.sum(g * v) == pytest.approx(numeric, rel=1e-5, abs=1e-6), which
    assert len(got) == 1 + trainable


@pytest.mark.parametrize("make,shape", [
    (lambda: L.Conv3D(2, (2, 3, 2), strides=(1, 2, 1), padding="same"), (2, 3, 5, 4, 2)),
    (lambda: L.Conv3D(2, 2, dilation_rate=(2, 1, 2), padding="same"), (1, 4, 3, 4, 2)),
    (lambda: L.Conv3DTranspose(2, 2, strides=(2, 1, 2)), (1, 2, 3, 2, 3)),
    (lambda: L.Conv1DTranspose(2, 3, strides=2, padding="same"), (2, 4, 3)),
    (lambda: L.SeparableConv1D(2, 3, depth_multiplier=2), (2, 6, 3)),
    (lambda: L.DepthwiseConv1D(2, depth_multiplier=2, bias_initializer="ones"), (2, 5, 3)),
    (lambda: L.LocallyConnected1D(2, 2, strides=2), (2, 5, 3)),
    (lambda: L.LocallyConnected2D(2, 2, data_format="channels_first"), (2, 3, 4, 3)),
    (lambda: L.MaxPool3D((2, 2, 1), padding="same"), (2, 3, 4, 3, 2)),
    (lambda: L.AvgPool3D(2, strides=1), (2, 3, 4, 3, 2)),
    (lambda: L.GlobalMaxPool3D(), (2, 2, 3, 2, 2)),
    (lambda: L.UpSampling3D((2, 1, 2)), (1, 2, 3, 2, 2)),
    (lambda: L.Cropping3D(1), (1, 3, 4, 3, 2)),
    (lambda: L.ZeroPadding3D(1), (1, 2, 2, 2, 2)),
    (lambda: L.PReLU(alpha_initializer=keras.initializers.Constant(0.2)), (2, 3, 4)),
    (lambda: L.ThresholdedReLU(0.1), (2, 6)),
])
def test_gradients_by_finite_differences(make, shape):
    _check_gradients(make(), RNG.standard_normal(shape))


# -- masks -----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_masking_propagates_and_is_consumed_as_tensorflow():
    x = keras.Input((4, 3))
    m = L.Masking(0.0)(x)
    assert m._keras_mask.dtype == tf.bool and m._keras_mask.shape.as_list() == [None, 4]
    # TF: which outputs carry a mask on
    carries = {"Dense": L.Dense(2), "Dropout": L.Dropout(0.5), "Activation": L.Activation(
        "relu"), "TimeDistributed": L.TimeDistributed(L.Dense(2)), "Flatten": L.Flatten(),
        "GlobalAveragePooling1D": L.GlobalAveragePooling1D(), "Conv1D": L.Conv1D(2, 1),
        "Identity": L.Identity(), "GaussianNoise": L.GaussianNoise(0.1), "PReLU": L.PReLU(),
        "Cropping1D": L.Cropping1D(1), "SpatialDropout1D": L.SpatialDropout1D(0.5)}
    want = {"Dense", "Dropout", "Activation", "TimeDistributed", "GaussianNoise", "PReLU",
            "SpatialDropout1D"}
    got = {name for name, layer in carries.items()
           if getattr(layer(m), "_keras_mask", None) is not None}
    assert got == want
    gap = L.GlobalAveragePooling1D()(m)
    seq = L.SimpleRNN(2, kernel_initializer="ones", recurrent_initializer="ones",
                      return_sequences=True)(m)
    last = L.SimpleRNN(2, kernel_initializer="ones", recurrent_initializer="ones")(m)
    xs = np.array([[[1, 2, 3], [0, 0, 0], [4, 5, 6], [0, 0, 0]],
                   [[0, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0]]], np.float32)
    mask, g, s, h = _run([m._keras_mask, gap, seq, last], {x: xs})
    np.testing.assert_array_equal(mask, [[1, 0, 1, 0], [0, 1, 0, 0]])
    np.testing.assert_allclose(g, [[2.5, 3.5, 4.5], [1.0, 1.0, 1.0]])  # TF's values
    np.testing.assert_allclose(s.round(4), [[[1, 1]] * 4, [[0, 0]] + [[0.9951, 0.9951]] * 3])
    np.testing.assert_allclose(h.round(4), [[1, 1], [0.9951, 0.9951]])


def test_embedding_and_merge_masks_as_tensorflow():
    ids = keras.Input((4,), dtype="int32")
    embedding = L.Embedding(10, 3, mask_zero=True, embeddings_initializer="ones")
    emb = embedding(ids)
    assert embedding.get_config()["mask_zero"] is True
    x = keras.Input((4, 3))
    m = L.Masking()(x)
    masks = {"emb": emb, "add": L.Add()([emb, m]), "mul": L.Multiply()([emb, m]),
             "avg": L.Average()([emb, m]), "sub": L.Subtract()([emb, m]),
             "concat": L.Concatenate()([emb, m]), "concat1": L.Concatenate(axis=1)([emb, m]),
             "concat_nomask": L.Concatenate()([emb, x]), "add_nomask": L.Add()([emb, x])}
    fetch = {k: v._keras_mask for k, v in masks.items()}
    fetch["g"] = L.GlobalAveragePooling1D()(emb)
    fetch["seq"] = L.LSTM(2, kernel_initializer="ones", recurrent_initializer="zeros")(emb)
    feed = {ids: [[1, 2, 0, 0], [0, 3, 0, 4]],
            x: np.array([[[1, 1, 1], [0, 0, 0], [2, 2, 2], [0, 0, 0]]] * 2, np.float32)}
    got = {k: np.asarray(v, np.float64).round(4).tolist() for k, v in _run(fetch, feed).items()}
    both = [[1, 0, 0, 0], [0, 0, 0, 0]]
    ids_mask = [[1, 1, 0, 0], [0, 1, 0, 1]]
    assert got == {  # TensorFlow 2.15's values
        "emb": ids_mask, "add": both, "mul": both, "avg": both, "sub": both, "concat": both,
        "concat1": [[1, 1, 0, 0, 1, 0, 1, 0], [0, 1, 0, 1, 1, 0, 1, 0]],
        "concat_nomask": ids_mask, "add_nomask": ids_mask,
        "g": [[1, 1, 1], [1, 1, 1]], "seq": [[0.9633, 0.9633], [0.9633, 0.9633]]}


def test_masks_follow_a_model_applied_to_new_inputs():
    x = keras.Input((3, 2))
    y = L.GlobalAveragePooling1D()(L.Dense(2, kernel_initializer="ones")(L.Masking()(x)))
    model = keras.Model(x, y)
    z = model(tf.constant([[[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]]]))
    np.testing.assert_allclose(_run(z), [[4.0, 4.0]])


# -- InputSpec, Wrapper, serialization, dtype behaviour, experimental -------------------------------
def test_input_spec_as_tensorflow():
    spec = L.InputSpec(ndim=3, axes={-1: 4})
    assert repr(spec) == "InputSpec(ndim=3, axes={-1: 4})"
    assert spec.get_config() == {"dtype": None, "shape": None, "ndim": 3, "max_ndim": None,
                                 "min_ndim": None, "axes": {-1: 4}}
    assert L.InputSpec(shape=(None, 3)).get_config() == {
        "dtype": None, "shape": (None, 3), "ndim": 2, "max_ndim": None, "min_ndim": None,
        "axes": {}}
    assert L.InputSpec.from_config(spec.get_config()).axes == {-1: 4}
    assert L.InputSpec is tf.layers.InputSpec  # one class, as in TF
    with pytest.raises(ValueError, match="Axis 3 is greater than the maximum allowed value: 1"):
        L.InputSpec(ndim=2, axes={3: 1})


def test_a_layer_checks_its_input_spec_as_tensorflow():
    class Scale(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = L.InputSpec(ndim=3, axes={-1: 4})

        def call(self, x):
            return x * 2.0

    class Pair(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = [L.InputSpec(min_ndim=2), L.InputSpec(max_ndim=2, dtype="float32")]

        def call(self, xs):
            return xs[0]

    assert Scale()(tf.ones([2, 3, 4])).shape.as_list() == [2, 3, 4]
    cases = [  # TensorFlow 2.15's messages
        (Scale, tf.ones([2, 4]), 'Input 0 of layer "scale_1" is incompatible with the layer: '
         "expected ndim=3, found ndim=2"),
        (Scale, tf.ones([2, 3, 5]), "expected axis -1 of input shape to have value 4, but "
         r"received input with shape \(2, 3, 5\)"),
        (Pair, [tf.ones([2]), tf.ones([2, 2])], 'Input 0 of layer "pair" is incompatible with '
         "the layer: expected min_ndim=2, found ndim=1"),
        (Pair, [tf.ones([2, 2]), tf.ones([2, 2, 2])], 'Input 1 of layer "pair_1" is '
         "incompatible with the layer: expected max_ndim=2, found ndim=3"),
        (Pair, [tf.ones([2, 2]), tf.ones([2, 2], tf.float64)],
         "expected dtype=float32, found dtype=<dtype: 'float64'>"),
        (Pair, [tf.ones([2, 2])], r'Layer "pair_3" expects 2 input\(s\), but it received 1 '
         "input tensors")]
    for make, x, message in cases:
        with pytest.raises(ValueError, match=message):
            make()(x)
    assert L.Dense(2).input_spec is None


def test_wrapper_is_the_base_of_time_distributed():
    td = L.TimeDistributed(L.Dense(2), name="td")
    assert isinstance(td, L.Wrapper)
    assert td.get_config()["layer"]["class_name"] == "Dense"
    again = L.deserialize(json.loads(json.dumps(L.serialize(td))))
    assert isinstance(again.layer, L.Dense) and again.layer.units == 2
    with pytest.raises(ValueError, match=r"with a `tf\.keras\.layers\.Layer` instance"):
        L.Wrapper("dense")


def test_serialize_and_deserialize():
    entry = L.serialize(L.Dense(2, name="d"))
    assert entry["class_name"] == "Dense"
    assert entry["config"]["kernel_initializer"] == {
        "class_name": "GlorotUniform", "config": {"seed": None, "dtype": "float32"}}
    layer = L.deserialize({"class_name": "Dropout", "config": {"rate": 0.3, "name": "dd"}})
    assert layer.get_config() == {"name": "dd", "trainable": True, "dtype": None,
                                  "rate": 0.3, "noise_shape": None, "seed": None}
    with pytest.raises(ValueError, match="Unknown layer: 'Nope'"):
        L.deserialize({"class_name": "Nope", "config": {}})


def test_v2_dtype_behavior_switch():
    x = tf.constant([[1.0, 2.0]], tf.float64)
    v1 = L.Dense(1)
    assert v1(x).dtype == tf.float64 and v1.dtype == tf.float64
    try:
        L.enable_v2_dtype_behavior()
        v2 = L.Dense(1)
        assert v2(x).dtype == tf.float32 and v2.dtype == tf.float32
        assert L.Dense(1)(tf.constant([[1, 2]])).dtype == tf.float32
    finally:
        L.disable_v2_dtype_behavior()
    assert L.Dense(1)(x).dtype == tf.float64


def test_random_fourier_features():
    exp = L.experimental
    assert sorted(n for n in dir(exp) if not n.startswith("_"))[-2:] == [
        "RandomFourierFeatures", "preprocessing"]
    layer = exp.RandomFourierFeatures(4, name="rff")
    y = layer(tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 5))
    assert [(w.name, w.shape.as_list(), w.trainable) for w in layer.weights] == [
        ("rff/kernel_scale:0", [1], True), ("rff/unscaled_kernel:0", [3, 4], False),
        ("rff/bias:0", [4], False)]
    assert layer.trainable_weights == []  # trainable=False by default, as TF
    assert layer.get_config() == {"name": "rff", "trainable": False, "dtype": "float32",
                                  "output_dim": 4, "kernel_initializer": "gaussian",
                                  "scale": pytest.approx(1.224744871391589)}
    value, kernel, bias, scale = _run([y, layer.unscaled_kernel, layer.bias,
                                       layer.kernel_scale])
    x = np.arange(6).reshape(2, 3) / 5
    np.testing.assert_allclose(value, np.cos(x @ kernel / scale + bias), rtol=1e-5, atol=1e-6)
    assert ((0 <= bias) & (bias < 2 * np.pi)).all()
    cauchy = exp.RandomFourierFeatures(3, kernel_initializer="laplacian", scale=2.0,
                                       trainable=True)
    cauchy(tf.ones([1, 2]))
    assert [w.name for w in cauchy.trainable_weights] == [
        "random_fourier_features/kernel_scale:0"]
    for bad, message in [(lambda: exp.RandomFourierFeatures(0), "positive integer"),
                         (lambda: exp.RandomFourierFeatures(2, kernel_initializer="foo"),
                          "Unsupported `kernel_initializer`: foo"),
                         (lambda: exp.RandomFourierFeatures(2, scale=-1.0),
                          "`scale` should be a positive float"),
                         (lambda: exp.RandomFourierFeatures(2)(tf.ones([2, 3, 4])),
                          "The rank of the input tensor should be 2")]:
        with pytest.raises(ValueError, match=message):
            bad()


def test_errors_as_tensorflow():
    cases = [(lambda: L.ThresholdedReLU(-1.0),
              "The theta value of a Thresholded ReLU layer should be >=0. Received: -1.0"),
             (lambda: L.ThresholdedReLU(None),
              "Theta of a Thresholded ReLU layer cannot be None, expecting a float"),
             (lambda: L.Cropping1D((1, 2, 3)),
              r"The `cropping` argument must be a tuple of 2 integers. Received: \(1, 2, 3\)"),
             (lambda: L.LocallyConnected1D(2, 2, padding="same"),
              'Invalid border mode for LocallyConnected1D \\(only "valid" is supported'),
             (lambda: L.Dot(axes=1)([tf.ones([2, 3]), tf.ones([2, 4])]),
              "Incompatible input shapes for Dot"),
             (lambda: L.Conv3D(2, 2)(tf.ones([1, 4, 4, 2])),
              "expected ndim=5, found ndim=4"),
             (lambda: L.PReLU(shared_axes=5)(tf.ones([2, 3])), "shared axis 5")]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()
    assert L.GaussianDropout(1.5).rate == 1.5  # TF accepts it (and passes inputs on)


# -- saving ----------------------------------------------------------------------------------------
_BUILD = """
import numpy as np
import flowgraph as tf
from flowgraph import keras
L = keras.layers
x3, x1, x2 = keras.Input((4, 6, 6, 2)), keras.Input((8, 3)), keras.Input((5, 5, 2))
h = L.Conv3D(3, 2, padding="same", activation="relu")(x3)
h = L.MaxPool3D()(L.SpatialDropout3D(0.2)(h))
h = L.Conv3DTranspose(2, 2, strides=2)(h)
h = L.AvgPool3D((1, 1, 2))(L.UpSampling3D((1, 1, 2))(L.Cropping3D(1)(L.ZeroPadding3D(1)(h))))
m = L.Dense(4)(L.GaussianNoise(0.1)(L.Masking()(x1)))
p = L.GlobalAveragePooling1D()(m)
c = L.SeparableConv1D(3, 3, padding="same")(L.Conv1DTranspose(2, 3, strides=2)(x1))
c = L.LocallyConnected1D(2, 3)(L.DepthwiseConv1D(2)(c))
c = L.AlphaDropout(0.1)(L.ThresholdedReLU(0.1)(L.PReLU()(c)))
c = L.GlobalMaxPool1D()(L.Cropping1D(1)(L.ZeroPadding1D(2)(L.UpSampling1D(2)(c))))
d = L.Dot(axes=1, normalize=True)([L.Dense(5)(p), L.Dense(5)(c)])
l2 = L.GlobalMaxPool2D()(L.LocallyConnected2D(2, 2)(L.GaussianDropout(0.1)(x2)))
out = L.Concatenate()([L.GlobalAvgPool3D()(h), d, L.ActivityRegularization(0.01)(p),
                       L.Identity()(c), l2])
out = L.Concatenate()([out, L.experimental.RandomFourierFeatures(3)(out)])
model = keras.Model([x3, x1, x2], out)
rng = np.random.RandomState(0)
data = [rng.randn(3, 4, 6, 6, 2).astype("f"), rng.randn(3, 8, 3).astype("f"),
        rng.randn(3, 5, 5, 2).astype("f")]
data[1][:, -2:] = 0
"""


@pytest.mark.slow
def test_model_saved_to_hdf5_loads_in_a_fresh_process(tmp_path):
    path = tmp_path / "model.h5"
    save = _BUILD + textwrap.dedent(f"""
        model.compile("adam", "mse")
        model.fit(data, rng.randn(3, 14).astype("f"), epochs=2, verbose=0)
        np.save({str(tmp_path / "want.npy")!r}, model.predict(data))
        model.save({str(path)!r})
        """)
    load = _BUILD.split("x3, x1, x2")[0] + textwrap.dedent(f"""
        rng = np.random.RandomState(0)
        data = [rng.randn(3, 4, 6, 6, 2).astype("f"), rng.randn(3, 8, 3).astype("f"),
                rng.randn(3, 5, 5, 2).astype("f")]
        data[1][:, -2:] = 0
        model = keras.models.load_model({str(path)!r})
        np.testing.assert_allclose(model.predict(data), np.load({str(tmp_path / "want.npy")!r}),
                                   rtol=1e-5, atol=1e-6)
        print(sorted({{type(layer).__name__ for layer in model.layers}}))
        """)
    for code in (save, load):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=pathlib.Path(__file__).parents[2])
        assert out.returncode == 0, out.stderr[-3000:]
    names = eval(out.stdout.strip().splitlines()[-1])  # our own print of a list
    assert {"Conv3D", "Conv3DTranspose", "LocallyConnected2D", "RandomFourierFeatures",
            "Masking", "PReLU", "Dot"} <= set(names)

# -- TF1-era programs (tests/keras/programs_gapfill1/*.py; TF's output, from the oracle) ------
# ruff: noqa: E501  (TF's printed lines, verbatim)
PROGRAM_OUTPUTS = {
    'video3d': [
        'loss [0.7305, 0.6932, 0.682]',
        "weights ['conv3d/kernel:0', 'conv3d/bias:0', 'conv3d_1/kernel:0', 'conv3d_1/bias:0', 'dense/kernel:0', 'dense/bias:0']",
        'pred [[0.48260000348091125, 0.5174000263214111], [0.48190000653266907, 0.5181000232696533], [0.48089998960494995, 0.51910001039505]]',
        'summary params 1002',
    ],
    'masked_sentiment': [
        'loss [0.635, 0.6324, 0.6395, 0.6244]',
        'acc [0.6875, 0.6875, 0.75, 0.8125]',
        'mask [[1, 1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0]]',
        'pred [0.4977000057697296, 0.4544000029563904, 0.4474000036716461, 0.5024999976158142]',
    ],
    'denoise1d': [
        'loss [0.44157, 0.38622, 0.32129, 0.24929, 0.18417]',
        'shapes [(None, 34, 1), (None, 32, 8), (None, 16, 8), (None, 16, 8), (None, 8, 8), (None, 16, 8), (None, 32, 4), (None, 32, 4), (None, 32, 1), (None, 32, 1)]',
        'out [0.31349998712539673, 0.3865000009536743, 0.46799999475479126, 0.3865000009536743, 0.5245000123977661, 0.4968000054359436]',
    ],
    'selu_session': [
        '0 20.073',
        '10 2.696',
        '20 2.399',
        'eval 0.1657',
        'alpha [0.09690000116825104, 0.09989999979734421, 0.09830000251531601, 0.10000000149011612]',
    ],
    'siamese': [
        'loss [0.7792, 0.7656, 0.7523]',
        'same after reload True',
        'cos [0.996399998664856, 0.9764999747276306, 0.9901000261306763]',
        "config {'name': 'cosine', 'trainable': True, 'dtype': 'float32', 'axes': 1, 'normalize': True}",
    ],
    'nn3d_lowlevel': [
        "['AvgPool3D', 'AvgPool3DGrad', 'Conv3D', 'Conv3DBackpropFilterV2', 'Conv3DBackpropInputV2', 'MaxPool3D', 'MaxPool3DGrad']",
        '0 0.31091',
        '5 0.12147',
        '10 0.10912',
        'restored loss equal True 0.09222',
    ],
    'unet3d': [
        'loss [0.6888, 0.6766, 0.6709]',
        'dice 0.1013 output (None, 4, 8, 8, 1)',
        "['InputLayer', 'Conv3D', 'AveragePooling3D', 'MaxPooling3D', 'UpSampling3D', 'Conv3D', 'ZeroPadding3D', 'Conv3DTranspose', 'Cropping3D', 'Concatenate', 'Conv3D']",
    ],
    'estimator_lc': [
        "['acc', 'global_step', 'loss'] 0.6477 12",
        "['global_step', 'local/bias', 'local/kernel', 'out/bias']",
    ],
}


@pytest.mark.parametrize("name", sorted(PROGRAM_OUTPUTS))
def test_programs_print_what_tensorflow_prints(name):
    program = pathlib.Path(__file__).parent / "programs_gapfill1" / f"{name}.py"
    env = {**os.environ, "TF_MODULE": "flowgraph"}
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                         env=env, cwd=pathlib.Path(__file__).parents[2])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines() == PROGRAM_OUTPUTS[name]
