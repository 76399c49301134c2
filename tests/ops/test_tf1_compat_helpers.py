"""The small TF1 helpers added for API coverage (issue 15): array/check/scope/gradient
compat modules and the build constants. Expected values were recorded from TensorFlow
2.15 (tf.compat.v1) with the tf-oracle, running the same calls."""

from __future__ import annotations

import numpy as np
import pytest
from module_examples import assert_examples_pass

import flowgraph as tf

MODULES = ["flowgraph.ops.tensor_compat", "flowgraph.ops.array_compat_ops",
           "flowgraph.ops.check_compat_ops", "flowgraph.ops.gradient_compat",
           "flowgraph.ops.scope_compat", "flowgraph.framework.build_info",
           "flowgraph.framework.sysconfig", "flowgraph.framework.resource_loader"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    assert_examples_pass(name)


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_array_helpers_match_tensorflow():
    with tf.Graph().as_default():
        img = tf.reshape(tf.range(2 * 5 * 6 * 2, dtype=tf.float32), [2, 5, 6, 2])
        got = _run({
            "hist": tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 4.99, 7.0],
                                             [0.0, 5.0], nbins=5),
            "bins": tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 4.99],
                                                  [0.0, 5.0], nbins=5),
            "sat": tf.saturate_cast([-5.0, 300.0, 3e10, -3e10], tf.int32),
            "cban": tf.clip_by_average_norm([[3.0, 4.0], [1.0, 2.0]], 0.5),
            "same": tf.extract_image_patches(img, [1, 3, 2, 1], [1, 2, 3, 1], [1, 2, 1, 1],
                                             "SAME"),
            "valid": tf.extract_image_patches(img, [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 2, 1],
                                              "VALID"),
            "sw": tf.switch_case(tf.constant(5), {0: lambda: tf.constant(1),
                                                  1: lambda: tf.constant(2)}),
            "sw_def": tf.switch_case(tf.constant(5), [lambda: tf.constant(1),
                                                      lambda: tf.constant(2)],
                                     default=lambda: tf.constant(9)),
        })
    assert got["hist"].tolist() == [2, 1, 1, 0, 3]
    assert got["bins"].tolist() == [0, 0, 1, 2, 4, 4]
    assert got["sat"].tolist() == [-5, 300, 2147483520, -2147483648]
    np.testing.assert_allclose(got["cban"].ravel(), [1.0954452, 1.460593, 0.36514837,
                                                     0.7302968], rtol=1e-6)
    assert got["same"].shape == (2, 3, 2, 12) and got["valid"].shape == (2, 4, 2, 8)
    assert got["same"].ravel()[:16].tolist() == [0, 0, 0, 0, 0, 1, 2, 3, 24, 25, 26, 27,
                                                 0, 0, 0, 0]
    assert got["valid"].ravel()[:16].tolist() == [0, 1, 4, 5, 12, 13, 16, 17, 4, 5, 8, 9,
                                                  16, 17, 20, 21]
    assert (got["sw"], got["sw_def"]) == (2, 9)


def test_extract_image_patches_gradient_scatters_back():
    with tf.Graph().as_default():
        img = tf.constant(np.arange(16.0).reshape(1, 4, 4, 1))
        patches = tf.extract_image_patches(img, [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                           "SAME")
        (grad,) = tf.gradients(tf.reduce_sum(patches), img)
        g = _run(grad)[0, :, :, 0]
    # Each pixel is counted once per 3x3 window (centred on a pixel) that contains it.
    assert g[0, 0] == 4 and g[1, 1] == 9 and g[0, 1] == 6


def test_gradient_helpers_match_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0, 3.0])
        hess = tf.hessians(tf.reduce_sum(x[0] * x * x[2]), x)[0]

        @tf.custom_gradient
        def f(a, b):
            return a * b, lambda dy: (dy * 10.0, dy * 100.0)

        a, b = tf.constant(2.0), tf.constant(3.0)
        got = _run({"hess": hess, "cg": tf.gradients(f(a, b) * 2.0, [a, b])})
    assert got["hess"].ravel().tolist() == [6.0, 3.0, 10.0, 3.0, 0.0, 1.0, 10.0, 1.0, 2.0]
    assert [float(v) for v in got["cg"]] == [20.0, 200.0]


def test_partitioners_and_protos_match_tensorflow():
    shape = tf.TensorShape([1000, 2])
    assert tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]),
                                        dtype=tf.float32) == [3, 1]
    assert tf.variable_axis_size_partitioner(400)(shape=shape, dtype=tf.float32) == [20, 1]
    assert tf.variable_axis_size_partitioner(400, max_shards=7)(shape=shape,
                                                                dtype=tf.string) == [7, 1]
    assert tf.min_max_variable_partitioner(4, min_slice_size=1024)(
        shape=shape, dtype=tf.float32) == [4, 1]
    assert tf.min_max_variable_partitioner(100, min_slice_size=1024)(
        shape=tf.TensorShape([300, 2]), dtype=tf.float32) == [3, 1]
    proto = tf.make_tensor_proto(3, shape=[2, 2])
    assert tf.make_ndarray(proto).tolist() == [[3, 3], [3, 3]] and proto.dtype == 3
    assert tf.assert_same_float_dtype([tf.constant(1.0, tf.float64)]) == tf.float64
    with pytest.raises(ValueError, match="contiguous"):
        tf.switch_case(tf.constant(0), {0: lambda: 1, 3: lambda: 2})


def test_ensure_shape_checks_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        y = tf.ensure_shape(x, [None, 3])
        with tf.Session() as sess:
            assert sess.run(y, {x: np.zeros((2, 3))}).shape == (2, 3)
            with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible"):
                sess.run(y, {x: np.zeros((2, 4))})
        with pytest.raises(ValueError, match="not compatible"):
            tf.ensure_shape(tf.zeros([2, 4]), [2, 3])


def test_assertions():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        near = tf.assert_near(x, 1.0, atol=0.1)
        rank_in = tf.assert_rank_in(x, [0, 2])
        with tf.Session() as sess:
            sess.run([near, rank_in], {x: 1.05})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(near, {x: 1.5})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(rank_in, {x: [1.0]})
        with pytest.raises(ValueError, match="must have rank in"):
            tf.assert_rank_in(tf.zeros([2]), [0, 2])
        with pytest.raises(TypeError):
            tf.assert_proper_iterable(np.zeros(3))
        with pytest.raises(ValueError, match="Expected floating point"):
            tf.assert_same_float_dtype([tf.constant(1)])


def test_build_constants_and_namespaces():
    assert tf.GRAPH_DEF_VERSION == 1645 and tf.VERSION == tf.__version__
    assert tf.version.GIT_VERSION == tf.GIT_VERSION
    assert tf.dtypes.as_dtype("float32") is tf.float32
    assert issubclass(tf.errors.InvalidArgumentError, tf.OpError)
    assert tf.OpError is tf.errors.OpError
    assert tf.get_seed is tf.random.get_seed and tf.random_crop is tf.image.random_crop
    with tf.Graph().as_default():
        with tf.variable_op_scope([], "outer"):
            v = tf.get_variable("v", [1])
        assert v.op.name == "outer/v"
        y = tf.py_function(lambda a: a.numpy() + 1, [tf.constant([1, 2])], tf.int32)
        _, b = tf.identity_n([tf.constant(1.0), tf.constant([2, 3])])
        assert _run(y).tolist() == [2, 3] and _run(b).tolist() == [2, 3]
        (single,) = tf.identity_n([tf.constant([4, 5])])
        assert _run(single).tolist() == [4, 5]  # the array itself, not a list of one
        # any op whose output count follows its attributes, built with one output,
        # folded at plan time or run
        fed = tf.placeholder(tf.int32, [None])
        (shape,) = tf.shape_n([tf.zeros([2, 3])])
        (part,) = tf.dynamic_partition(fed, tf.zeros_like(fed), 1)
        assert _run(shape).tolist() == [2, 3]
        with tf.Session() as sess:
            assert sess.run(part, {fed: [7, 8]}).tolist() == [7, 8]
