"""``slim.nets`` Inception v1/v2/v3 and OverFeat against TF 2.15 running `tf_slim.nets`
(the copy of TF1's ``contrib.slim.nets``) with the oracle: output op and shape, end
points and variables (names and shapes, as a digest of TF's lists), the regularization
losses, update ops and ``moving_vars`` collection, and, with TF's random streams, the
same first outputs from the same seed (TF's numbers inline). The networks run at small
inputs (the final poolings shrink to fit) to keep the default suite fast."""

import hashlib

import numpy as np
import pytest

import flowgraph as tf

slim = tf.contrib.slim
nets = slim.nets
inception = nets.inception


def _digest(items) -> str:
    return hashlib.sha1(repr(items).encode()).hexdigest()[:16]


def _build(net_fn, scope_fn, size, kwargs):
    tf.set_random_seed(0)
    x = tf.constant(np.random.RandomState(0).rand(1, size, size, 3).astype(np.float32))
    with slim.arg_scope(scope_fn()):
        return net_fn(x, **kwargs)


_CLASSIFY = {"num_classes": 10, "is_training": False}

# name: (network, arg scope, input size, keyword arguments,
#   (output op, shape, end points and their digest, variables and their digest,
#    regularization losses, update ops, moving_vars; TF's first five outputs))
CASES = {
    "inception_v3": (
        inception.inception_v3, inception.inception_v3_arg_scope, 139, _CLASSIFY,
        ("InceptionV3/Logits/SpatialSqueeze", [1, 10], 22, "bb4f93a1e1e01217", 388,
         "017f1d03a86b657b", 98, 0, 192),
        [-0.8415839, -1.763745, 0.292024, 0.7114576, -0.1555745]),
    "inception_v2": (
        inception.inception_v2, inception.inception_v2_arg_scope, 64, _CLASSIFY,
        ("InceptionV2/Logits/SpatialSqueeze", [1, 10], 17, "eee0716c6e553c28", 277,
         "025b15e86802709b", 69, 0, 136),
        [-53.74453, -2.20097, 13.19238, 57.41785, -32.20813]),
    "inception_v1": (
        inception.inception_v1, inception.inception_v1_arg_scope, 224, _CLASSIFY,
        ("InceptionV1/Logits/SpatialSqueeze", [1, 10], 18, "8585555a40851aac", 230,
         "26e844cf0e4068cf", 58, 0, 114),
        # tiny logits: 0.01-stddev weights and inference-mode batch norm shrink them
        [-1.47381e-13, -6.760409e-13, 3.826681e-13, 6.246562e-13, 1.865671e-14]),
    # the body alone, batch norm in training mode (batch statistics, update ops)
    "inception_v1_base": (
        inception.inception_v1_base, inception.inception_v1_arg_scope, 64, {},
        ("InceptionV1/Mixed_5c/concat", [1, 2, 2, 1024], 16, "d1496a935baa3078", 228,
         "8ab94c1810ac9258", 57, 114, 114),
        [0.0, 0.9860725, 0.6694532, 0.0, 1.330731]),
    # 231x231 is OverFeat's smallest input; its 113M-weight fc6 is too slow to
    # initialize here, so the structure only
    "overfeat": (
        nets.overfeat.overfeat, nets.overfeat.overfeat_arg_scope, 231, _CLASSIFY,
        ("overfeat/fc8/squeezed", [1, 10], 11, "32976c91b821c59b", 16, "4d50509a6194d4ad",
         8, 0, 0),
        None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_network_matches_tf_slim(name):
    net_fn, scope_fn, size, kwargs, expected, first = CASES[name]
    (out_name, out_shape, n_points, points_digest, n_vars, vars_digest, n_reg, n_updates,
     n_moving) = expected
    with tf.Graph().as_default():
        out, end_points = _build(net_fn, scope_fn, size, kwargs)
        assert (out.op.name, out.shape.as_list()) == (out_name, out_shape)
        points = [(k, v.shape.as_list()) for k, v in end_points.items()]
        variables = [(v.op.name, v.shape.as_list()) for v in tf.global_variables()]
        assert (len(points), _digest(points)) == (n_points, points_digest)
        assert (len(variables), _digest(variables)) == (n_vars, vars_digest)
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == n_reg
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == n_updates
        assert len(tf.get_collection("moving_vars")) == n_moving
        if first is None:
            return
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(out).ravel()[:5]
    # float32 sums in another order; the training-mode body normalizes over 2x2 maps,
    # which magnifies them
    rtol = 1e-3 if name == "inception_v1_base" else 1e-4
    np.testing.assert_allclose(got, first, rtol=rtol, atol=1e-5 * np.abs(first).max())


def test_end_point_op_names_match_slim():
    # slim re-enters the network's scope for the body: its ops sit one level deeper
    with tf.Graph().as_default():
        with slim.arg_scope(inception.inception_v2_arg_scope()):
            logits, end_points = inception.inception_v2(tf.zeros([1, 64, 64, 3]),
                                                        num_classes=5)
        assert end_points["Mixed_3b"].op.name == "InceptionV2/InceptionV2/Mixed_3b/concat"
        assert end_points["Conv2d_1a_7x7"].op.name == \
            "InceptionV2/InceptionV2/Conv2d_1a_7x7/Relu"
        assert end_points["Predictions"].op.name == "InceptionV2/Predictions/Reshape_1"
        assert logits.op.name == "InceptionV2/Logits/SpatialSqueeze"
        assert logits.shape.as_list() == [1, 5]
    with tf.Graph().as_default():
        with slim.arg_scope(inception.inception_v1_arg_scope(use_batch_norm=False)):
            logits, end_points = inception.inception_v1(tf.zeros([1, 224, 224, 3]),
                                                        num_classes=5)
        names = [v.op.name for v in tf.global_variables()]
        assert end_points["Predictions"].op.name == "InceptionV1/Logits/Predictions/Reshape_1"
        assert (len(names), names[:2]) == (116, ["InceptionV1/Conv2d_1a_7x7/weights",
                                                 "InceptionV1/Conv2d_1a_7x7/biases"])
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 58


def test_namespace_and_defaults():
    assert sorted(n for n in dir(inception) if n.startswith("inception")) == [
        "inception_v1", "inception_v1_arg_scope", "inception_v1_base", "inception_v2",
        "inception_v2_arg_scope", "inception_v2_base", "inception_v3",
        "inception_v3_arg_scope", "inception_v3_base"]
    assert [f.default_image_size for f in (inception.inception_v1, inception.inception_v2,
                                           inception.inception_v3)] == [224, 224, 299]
    assert not hasattr(nets.overfeat.overfeat, "default_image_size")  # as in slim
    assert nets.inception_v3.inception_v3 is inception.inception_v3


@pytest.mark.parametrize("fn", [inception.inception_v2, inception.inception_v2_base,
                                inception.inception_v3, inception.inception_v3_base])
def test_depth_multiplier_must_be_positive(fn):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"depth_multiplier is not greater than zero\."):
            fn(tf.zeros([1, 224, 224, 3]), depth_multiplier=0.0)
        assert not tf.global_variables()


@pytest.mark.parametrize("fn, n_vars", [(inception.inception_v1_base, 114),
                                        (inception.inception_v2_base, 139),
                                        (inception.inception_v3_base, 188)])
def test_unknown_final_endpoint(fn, n_vars):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unknown final endpoint Nope"):
            fn(tf.zeros([1, 224, 224, 3]), final_endpoint="Nope")
        # slim builds the whole body before it finds out
        assert len(tf.global_variables()) == n_vars


def test_final_endpoint_and_depth_multiplier():
    with tf.Graph().as_default():
        net, end_points = inception.inception_v3_base(tf.zeros([2, 299, 299, 3]),
                                                      final_endpoint="Mixed_6a",
                                                      depth_multiplier=0.5)
        assert (net.op.name, net.shape.as_list()) == ("InceptionV3/Mixed_6a/concat",
                                                      [2, 17, 17, 384])
        assert list(end_points)[-2:] == ["Mixed_5d", "Mixed_6a"]
        assert len(tf.global_variables()) == 60
    with tf.Graph().as_default():
        net, _ = inception.inception_v2_base(tf.zeros([2, 224, 224, 3]),
                                             final_endpoint="Mixed_4a", depth_multiplier=0.1)
        assert (net.op.name, net.shape.as_list()) == ("InceptionV2/Mixed_4a/concat",
                                                      [2, 14, 14, 96])
        # min_depth 16 floors the channels; the depthwise stem keeps int(16 / 3) filters
        assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()][:4] == [
            ("InceptionV2/Conv2d_1a_7x7/depthwise_weights", [7, 7, 3, 5]),
            ("InceptionV2/Conv2d_1a_7x7/pointwise_weights", [1, 1, 15, 16]),
            ("InceptionV2/Conv2d_1a_7x7/biases", [16]),
            ("InceptionV2/Conv2d_2b_1x1/weights", [1, 1, 16, 16])]


def test_inception_v3_unknown_size_no_aux_and_reuse():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None, 3])
        with slim.arg_scope(inception.inception_v3_arg_scope()):
            logits, end_points = inception.inception_v3(x, num_classes=7,
                                                        create_aux_logits=False,
                                                        spatial_squeeze=False)
        assert logits.op.name == "InceptionV3/Logits/Conv2d_1c_1x1/BiasAdd"
        assert logits.shape.as_list() == [None, None, None, 7]
        assert "AuxLogits" not in end_points
        assert end_points["Predictions"].op.name == "InceptionV3/Predictions/Reshape_1"
        # unknown height and width: the 8x8 pooling is kept
        assert nets.inception_v3._reduced_kernel_size_for_small_input(x, [8, 8]) == [8, 8]
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 188
        assert len(tf.get_collection("moving_vars")) == 188
        with slim.arg_scope(inception.inception_v3_arg_scope()):
            again, _ = inception.inception_v3(tf.zeros([1, 299, 299, 3]), num_classes=7,
                                              create_aux_logits=False,
                                              spatial_squeeze=False, reuse=True)
        assert again.op.name == "InceptionV3_1/Logits/Conv2d_1c_1x1/BiasAdd"
        assert len(tf.global_variables()) == 378


def test_inception_v3_small_input_shrinks_aux_head():
    with tf.Graph().as_default():
        scope = inception.inception_v3_arg_scope(use_fused_batchnorm=False,
                                                 updates_collections=None)
        with slim.arg_scope(scope):
            logits, end_points = inception.inception_v3(tf.zeros([1, 107, 107, 3]),
                                                        num_classes=5)
        assert logits.shape.as_list() == [1, 5]
        assert end_points["AuxLogits"].op.name == "InceptionV3/AuxLogits/SpatialSqueeze"
        assert "InceptionV3/AuxLogits/Conv2d_2a_1x1/weights" in [
            v.op.name for v in tf.global_variables()]
        assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)  # run with the outputs
    with tf.Graph().as_default():
        # Mixed_6e is 4x4 here: too small for the auxiliary head's 5x5 pooling
        with pytest.raises(ValueError, match="Negative dimension size caused by "
                                             "subtracting 5"):
            inception.inception_v3(tf.zeros([1, 96, 96, 3]), num_classes=5)


def test_overfeat_fully_convolutional():
    with tf.Graph().as_default():
        with slim.arg_scope(nets.overfeat.overfeat_arg_scope()):
            logits, end_points = nets.overfeat.overfeat(tf.zeros([1, 263, 263, 3]),
                                                        num_classes=5,
                                                        spatial_squeeze=False)
        assert (logits.op.name, logits.shape.as_list()) == ("overfeat/fc8/BiasAdd",
                                                            [1, 2, 2, 5])
        assert end_points["overfeat/fc8"] is logits


def test_inception_v2_gradients_match_tf():
    # backprop through the separable stem, the branches, concats and poolings: the total
    # loss (with weight decay) and its gradients' norms as TF computes them
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(np.random.RandomState(0).rand(2, 64, 64, 3).astype(np.float32))
        with slim.arg_scope(inception.inception_v2_arg_scope()):
            logits, _ = inception.inception_v2(x, num_classes=5, is_training=False)
        tf.losses.sparse_softmax_cross_entropy(tf.constant([1, 3]), logits)
        total = tf.losses.get_total_loss()
        variables = tf.trainable_variables()
        grads = tf.gradients(total, variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            loss, grads = sess.run([total, grads])
    norms = [float(np.linalg.norm(g)) for g in grads]
    assert len(norms) == 141
    np.testing.assert_allclose(loss, 32.8177, rtol=1e-5)
    np.testing.assert_allclose(norms[:4] + norms[-4:],
                               [20.083, 16.036, 1.1215, 193.73, 326.41, 0.43314, 879.06,
                                1.2247], rtol=2e-4)
    np.testing.assert_allclose(sum(norms), 13991.9, rtol=1e-5)
    assert variables[0].op.name == "InceptionV2/Conv2d_1a_7x7/depthwise_weights"
    np.testing.assert_allclose(grads[0].ravel()[:3], [-0.16351, -0.29981, -0.58672],
                               rtol=2e-4)
