"""``slim.nets`` against TF 2.15 running `tf_slim.nets` (the copy of TF1's
``contrib.slim.nets``) with the oracle: the same output op and shape, end points and
variables (names and shapes, as a digest of TF's lists) and, with TF's random streams,
the same outputs from the same seed (TF's numbers inline)."""

import hashlib

import numpy as np
import pytest

import flowgraph as tf

slim = tf.contrib.slim
nets = slim.nets


def _digest(items) -> str:
    return hashlib.sha1(repr(items).encode()).hexdigest()[:16]


# network, its arg scope, input size: (output op, shape, end points and their digest,
#   variables and their digest, regularization losses, TF's first five outputs)
CASES = {
    "vgg_16": (nets.vgg.vgg_16, nets.vgg.vgg_arg_scope, 224,
               ("vgg_16/fc8/squeezed", [1, 10], 21, "0fd4a18b5afaaabf", 32,
                "2666a8f88612f9e3", 16, None)),
    "alexnet_v2": (nets.alexnet.alexnet_v2, nets.alexnet.alexnet_v2_arg_scope, 224,
                   ("alexnet_v2/fc8/squeezed", [1, 10], 11, "fc52d4ac3f39d146", 16,
                    "252e583bd072c673", 8, [-0.02901, -0.01464, 0.01004, -0.03964, -0.02407])),
    "resnet_v1_50": (nets.resnet_v1.resnet_v1_50, nets.resnet_v1.resnet_arg_scope, 64,
                     ("resnet_v1_50/logits/BiasAdd", [1, 1, 1, 10], 75, "e96bb1c67136c16b",
                      267, "bcb68ae29244d1cc", 54,
                      [-153.18385, -296.60733, -17.24471, -223.73326, 32.19025])),
    "resnet_v2_50": (nets.resnet_v2.resnet_v2_50, nets.resnet_v2.resnet_arg_scope, 64,
                     ("resnet_v2_50/logits/BiasAdd", [1, 1, 1, 10], 75, "b0cb70b178c193d8",
                      272, "3106f1a5df3a5ca1", 54,
                      [-70.96152, -117.26231, 9.32874, -30.45044, -13.61371])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_network_matches_tf_slim(name):
    net_fn, scope_fn, size, expected = CASES[name]
    out_name, out_shape, n_points, points_digest, n_vars, vars_digest, n_reg, first = expected
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.constant(np.random.RandomState(0).rand(1, size, size, 3).astype(np.float32))
        with slim.arg_scope(scope_fn()):
            out, end_points = net_fn(x, num_classes=10, is_training=False)
        assert (out.op.name, out.shape.as_list()) == (out_name, out_shape)
        points = [(k, v.shape.as_list()) for k, v in end_points.items()]
        variables = [(v.op.name, v.shape.as_list()) for v in tf.global_variables()]
        assert (len(points), _digest(points)) == (n_points, points_digest)
        assert (len(variables), _digest(variables)) == (n_vars, vars_digest)
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == n_reg
        assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        if first is None:  # vgg_16 at 224x224: too slow for the default suite to run
            return
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(out).ravel()[:5]
    # float32 sums in another order over 50 layers (and cancellations): within 1e-4
    np.testing.assert_allclose(got, first, rtol=1e-4, atol=1e-3)


def test_resnet_output_stride_and_training_updates():
    with tf.Graph().as_default():
        x = tf.zeros([2, 64, 64, 3])
        with slim.arg_scope(nets.resnet_v1.resnet_arg_scope()):
            net, end_points = nets.resnet_v1.resnet_v1_50(x, output_stride=16,
                                                          global_pool=False)
        # dense features: 64 / 16 = 4, the last blocks atrous instead of strided
        assert net.shape.as_list() == [2, 4, 4, 2048]
        assert "predictions" not in end_points
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 53 * 2
        with pytest.raises(ValueError, match="The output_stride needs to be a multiple of 4"):
            nets.resnet_v1.resnet_v1_50(x, output_stride=10, scope="other")
