"""The 3-D convolution and pooling op types (flowgraph/ops/nn_ops3d.py) and their CPU
kernels (flowgraph/backends/cpu/kernels_conv3d.py): op types as TensorFlow 2.15 builds
them, TF's values where its CPU kernels have a particular rule (max-pool ties), NumPy
loop references, NCDHW against NDHWC, finite-difference gradients (first and second
order), shapes and errors. TF's values come from the tf-oracle
(/tmp/s16/wild/kl1_pool3d_ties.py)."""

import itertools

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.ops.op_util import make_tensor

RNG = np.random.default_rng(7)
ARANGE = np.arange(27, dtype=np.float32).reshape(1, 3, 3, 3, 1)


def _windows_ref(x, k, s, padding, reduce, fill):
    """Window reduction over NDHWC `x` with plain loops (TF's SAME padding)."""
    dims = x.shape[1:4]
    out_dims, pads = [], []
    for n, kk, ss in zip(dims, k, s):
        if padding == "SAME":
            o = -(-n // ss)
            total = max((o - 1) * ss + kk - n, 0)
            pads.append((total // 2, total - total // 2))
        else:
            o = (n - kk) // ss + 1
            pads.append((0, 0))
        out_dims.append(o)
    xp = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=np.nan)
    out = np.zeros((x.shape[0], *out_dims, x.shape[4]))
    for a, b, c in itertools.product(*(range(o) for o in out_dims)):
        box = xp[:, a * s[0]:a * s[0] + k[0], b * s[1]:b * s[1] + k[1],
                 c * s[2]:c * s[2] + k[2]].reshape(x.shape[0], -1, x.shape[4])
        out[:, a, b, c] = reduce(box) if fill is None else reduce(np.where(np.isnan(box),
                                                                           fill, box))
    return out


def test_op_types_as_tensorflow():
    x = tf.constant(ARANGE % 5)
    y = tf.nn.max_pool3d(x, 2, 1, "SAME")
    g = tf.gradients(tf.reduce_sum(y * ARANGE), x)[0]
    tf.gradients(tf.reduce_sum(g * x), x)
    c = tf.nn.conv3d(x, tf.ones([2, 2, 2, 1, 2]), [1, 1, 1, 1, 1], "SAME",
                     dilations=[1, 1, 2, 1, 1])
    tf.gradients(tf.reduce_sum(c * c), x)
    a = tf.nn.avg_pool3d(x, 2, 2, "VALID")
    tf.gradients(a, x)
    t = tf.nn.conv3d_transpose(x, tf.ones([2, 2, 2, 3, 1]), [1, 6, 6, 6, 3], 2)
    types = [op.type for op in tf.get_default_graph().get_operations()
             if "3D" in op.type or "Grad" in op.type]
    # TensorFlow 2.15's list for the same program
    assert types == ["MaxPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad", "MaxPool3DGrad",
                     "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
                     "AvgPool3D", "AvgPool3DGrad", "Conv3DBackpropInputV2"]
    names = [op.name for op in tf.get_default_graph().get_operations()
             if op.type.startswith("MaxPool3DGrad")]
    assert names == ["gradients/MaxPool3D_grad/MaxPool3DGrad",
                     "gradients_1/gradients/MaxPool3D_grad/MaxPool3DGrad_grad/"
                     "MaxPool3DGradGrad", "gradients_1/MaxPool3D_grad/MaxPool3DGrad"]
    assert t.shape.as_list() == [1, 6, 6, 6, 3]


def test_tensorflow_values_of_max_pool_routing(sess):
    ones = tf.constant(np.ones((1, 2, 2, 2, 1), np.float32))
    x = tf.constant(ARANGE % 5)
    y = tf.nn.max_pool3d(x, 2, 1, "SAME")
    g = tf.gradients(tf.reduce_sum(y * ARANGE), x)[0]
    attrs = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 1, 1], "padding": "SAME",
             "data_format": "NDHWC"}
    gg = make_tensor("MaxPool3DGradGrad", [x, y, tf.constant(ARANGE + 1)], attrs)
    gg1 = make_tensor("MaxPool3DGradGrad",
                      [ones, tf.ones([1, 1, 1, 1, 1]), tf.constant((ARANGE + 1)[:, :2, :2, :2])],
                      dict(attrs, padding="VALID"))
    ap = make_tensor("AvgPool3DGrad", [tf.constant([1, 3, 3, 3, 1]), tf.ones([1, 2, 2, 2, 1])],
                     dict(attrs, strides=[1, 2, 2, 2, 1]))
    got = sess.run({"ties": tf.gradients(tf.nn.max_pool3d(ones, 2, 2, "VALID"), ones)[0],
                    "g": g, "y": y, "gg": gg, "gg1": gg1, "ap": ap})
    # MaxPool3DGrad: every element equal to its window's max gets the gradient (TF's CPU)
    np.testing.assert_array_equal(got["ties"].ravel(), np.ones(8))
    np.testing.assert_array_equal(got["y"].ravel(), [
        4, 4, 4, 4, 4, 4, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 2, 2, 4, 4, 3, 4, 3, 3, 4, 1, 1])
    np.testing.assert_array_equal(got["g"].ravel(), [
        0, 0, 0, 0, 8, 0, 0, 6, 15, 9, 0, 0, 0, 0, 60, 0, 0, 33, 0, 56, 0, 0, 0, 65, 72, 0,
        51])
    # MaxPool3DGradGrad: the first maximum of each window
    np.testing.assert_array_equal(got["gg"].ravel(), [
        5, 5, 15, 5, 5, 15, 8, 9, 9, 10, 15, 15, 25, 15, 15, 25, 18, 18, 20, 20, 24, 25, 24,
        24, 25, 27, 27])
    np.testing.assert_array_equal(got["gg1"].ravel(), [1.0])
    np.testing.assert_array_equal(got["ap"].ravel(), [
        0.125, 0.125, 0.25, 0.125, 0.125, 0.25, 0.25, 0.25, 0.5, 0.125, 0.125, 0.25, 0.125,
        0.125, 0.25, 0.25, 0.25, 0.5, 0.25, 0.25, 0.5, 0.25, 0.25, 0.5, 0.5, 0.5, 1.0])


def test_tensorflow_values_of_dilated_conv_gradient(sess):
    x = tf.constant(ARANGE % 5)
    c = tf.nn.conv3d(x, tf.ones([2, 2, 2, 1, 2]), [1, 1, 1, 1, 1], "SAME",
                     dilations=[1, 1, 2, 1, 1])
    out, grad = sess.run([c, tf.gradients(tf.reduce_sum(c * c), x)[0]])
    assert out.sum() == 410.0
    np.testing.assert_array_equal(grad.ravel()[:10],
                                  [36, 84, 80, 96, 184, 120, 36, 84, 80, 100])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pools_match_loop_reference_and_ncdhw(sess, padding):
    x = RNG.standard_normal((2, 5, 4, 6, 3))
    k, s = (2, 3, 2), (2, 1, 3)
    mp = tf.nn.max_pool3d(x, k, s, padding)
    ap = tf.nn.avg_pool3d(x, k, s, padding)
    x_cf = x.transpose(0, 4, 1, 2, 3)
    mp_cf = tf.nn.max_pool3d(x_cf, [1, 1, *k], [1, 1, *s], padding, data_format="NCDHW")
    ap_cf = tf.nn.avg_pool3d(x_cf, [1, 1, *k], [1, 1, *s], padding, data_format="NCDHW")
    got = sess.run([mp, ap, mp_cf, ap_cf])
    ref_max = _windows_ref(x, k, s, padding, lambda b: b.max(axis=1), -np.inf)
    ref_avg = _windows_ref(x, k, s, padding, lambda b: np.nanmean(b, axis=1), None)
    np.testing.assert_allclose(got[0], ref_max)
    np.testing.assert_allclose(got[1], ref_avg)
    np.testing.assert_allclose(got[2].transpose(0, 2, 3, 4, 1), ref_max)
    np.testing.assert_allclose(got[3].transpose(0, 2, 3, 4, 1), ref_avg)


def test_backprop_ops_ncdhw_equal_ndhwc(sess):
    x = RNG.standard_normal((2, 4, 5, 3, 2))
    f = RNG.standard_normal((2, 3, 2, 2, 3))
    y = tf.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME")
    dy = RNG.standard_normal(y.shape.as_list())
    dx, df = tf.gradients(y, [tf.convert_to_tensor(x), tf.convert_to_tensor(f)], grad_ys=dy)
    xc = tf.constant(x.transpose(0, 4, 1, 2, 3))
    fc = tf.constant(f)
    yc = tf.nn.conv3d(xc, fc, [1, 1, 2, 1, 1], "SAME", data_format="NCDHW")
    dxc, dfc = tf.gradients(yc, [xc, fc], grad_ys=dy.transpose(0, 4, 1, 2, 3))
    a = sess.run([y, yc, dxc, dfc])
    x_t, f_t = tf.constant(x), tf.constant(f)
    dx, df = tf.gradients(tf.nn.conv3d(x_t, f_t, [1, 2, 1, 1, 1], "SAME"), [x_t, f_t],
                          grad_ys=dy)
    b = sess.run([dx, df])
    np.testing.assert_allclose(a[1].transpose(0, 2, 3, 4, 1), a[0], rtol=1e-12)
    np.testing.assert_allclose(a[2].transpose(0, 2, 3, 4, 1), b[0], rtol=1e-12)
    np.testing.assert_allclose(a[3], b[1], rtol=1e-12)


@pytest.mark.parametrize("padding,strides,dilations", [
    ("SAME", [1, 2, 1, 2, 1], [1, 1, 1, 1, 1]),
    ("VALID", [1, 1, 2, 1, 1], [1, 1, 1, 1, 1]),
    ("SAME", [1, 1, 1, 1, 1], [1, 2, 1, 2, 1])])
def test_conv_gradients_by_finite_differences(padding, strides, dilations):
    x = RNG.standard_normal((2, 4, 5, 4, 2))
    f = RNG.standard_normal((2, 3, 2, 2, 3))
    check_gradient(lambda a, b: tf.nn.conv3d(a, b, strides, padding, dilations=dilations),
                   [x, f], directions=3)


def test_backprop_ops_gradients_by_finite_differences():
    attrs = {"strides": [1, 2, 1, 1, 1], "padding": "SAME", "data_format": "NDHWC",
             "dilations": [1, 1, 1, 1, 1]}
    x = RNG.standard_normal((1, 4, 3, 3, 2))
    f = RNG.standard_normal((2, 2, 2, 2, 3))
    dy = RNG.standard_normal((1, 2, 3, 3, 3))
    check_gradient(lambda b, g: make_tensor("Conv3DBackpropInputV2",
                                            [tf.constant([1, 4, 3, 3, 2]), b, g], attrs),
                   [f, dy])
    check_gradient(lambda a, g: make_tensor("Conv3DBackpropFilterV2",
                                            [a, tf.constant([2, 2, 2, 2, 3]), g], attrs),
                   [x, dy])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool_gradients_first_and_second_order(padding):
    x = RNG.standard_normal((1, 4, 3, 5, 2))  # distinct values: no ties
    check_gradient(lambda a: tf.nn.max_pool3d(a, [2, 2, 3], [1, 2, 2], padding), [x])
    check_gradient(lambda a: tf.nn.avg_pool3d(a, [2, 2, 3], [1, 2, 2], padding), [x])

    def grad_of(pool):
        def build(a):
            y = pool(a, [2, 2, 2], 1, padding)
            return tf.gradients(tf.reduce_sum(y * y), a)[0]
        return build

    check_gradient(grad_of(tf.nn.max_pool3d), [x])
    check_gradient(grad_of(tf.nn.avg_pool3d), [x])


def test_unknown_dimensions_and_dtypes(sess):
    x = tf.placeholder(tf.float16, [None, None, 5, None, 2])
    y = tf.nn.conv3d(x, tf.ones([2, 2, 2, 2, 4], tf.float16), [1, 1, 2, 1, 1], "SAME")
    p = tf.nn.max_pool3d(y, 2, 2, "VALID")
    assert y.shape.as_list() == [None, None, 3, None, 4]
    assert p.shape.as_list() == [None, None, 1, None, 4]
    value = sess.run(p, {x: np.ones((1, 4, 5, 4, 2), np.float16)})
    assert value.dtype == np.float16 and value.shape == (1, 2, 1, 2, 4)
    np.testing.assert_array_equal(value, 16.0)


def test_shape_and_kernel_errors(sess):
    with pytest.raises(ValueError, match="does not match the filter's in_channels"):
        tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([2, 2, 2, 3, 1]), 1, "VALID")
    with pytest.raises(ValueError, match="must be 5-D"):
        tf.nn.max_pool3d(tf.ones([1, 3, 3, 2]), 2, 2, "VALID")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.conv3d(tf.ones([1, 1, 3, 3, 1]), tf.ones([2, 2, 2, 1, 1]), 1, "VALID")
    x = tf.placeholder(tf.float32, [1, None, 3, 3, 1])
    y = tf.nn.conv3d(x, tf.ones([2, 2, 2, 1, 1]), 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="larger than the input size 1"):
        sess.run(y, {x: np.ones((1, 1, 3, 3, 1))})
    bad = make_tensor("Conv3DBackpropInputV2",
                      [tf.constant([1, 4, 4, 4, 1]), tf.ones([2, 2, 2, 1, 1]),
                       tf.ones([1, 2, 2, 2, 1])],
                      {"strides": [1, 1, 1, 1, 1], "padding": "VALID", "data_format": "NDHWC",
                       "dilations": [1, 1, 1, 1, 1]})
    with pytest.raises(errors.InvalidArgumentError, match="expected \\[1, 3, 3, 3, 1\\]"):
        sess.run(bad)
