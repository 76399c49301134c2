"""Gradient graphs with TensorFlow's op names and structure (TF 2.15 ``tf.compat.v1``).

The expected names below were printed by TensorFlow itself for the same graphs; the
values are checked against NumPy so that a renaming never changes a result.
"""

import numpy as np
import pytest

import flowgraph as tf


def _grad_ops(graph=None):
    graph = graph or tf.get_default_graph()
    return {op.name: op.type for op in graph.get_operations()
            if op.name.startswith("gradients/")}


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_default_grad_ys_is_fill_of_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        tf.gradients(tf.reduce_sum(x), x)
        ops = _grad_ops()
        # TensorFlow's is a Const; ours a Shape of y, folded at plan time, which keeps the
        # gradients (and the updates) after y: run([train, loss]) sees the old loss.
        assert ops["gradients/Shape"] == "Shape"
        assert ops["gradients/grad_ys_0"] == "Fill"
        assert ops["gradients/grad_ys_0/Const"] == "Const"


def test_matmul_and_reduce_all_sum():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
        (gw,) = tf.gradients(tf.reduce_sum(tf.matmul(x, w)), [w])
        assert gw.name == "gradients/MatMul_grad/MatMul_1:0"
        ops = _grad_ops()
        assert ops["gradients/Sum_grad/Tile"] == "Tile"
        assert ops["gradients/Sum_grad/Shape"] == "Shape"
        assert ops["gradients/Sum_grad/Reshape/shape"] == "Const"
        xv = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_allclose(_run(gw, {x: xv}), np.repeat(xv.sum(0)[:, None], 2, 1))


def test_add_bias_passes_gradient_through_for_the_unreduced_input():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        b = tf.Variable(tf.ones([3]))
        gx, gb = tf.gradients(tf.reduce_sum(x + b), [x, b])
        assert gx.name == "gradients/Sum_grad/Tile:0"
        assert gb.name == "gradients/add_grad/Reshape:0"
        ops = _grad_ops()
        assert "gradients/add_grad/BroadcastGradientArgs" not in ops
        assert ops["gradients/add_grad/Shape_1"] == "Const"
        assert ops["gradients/add_grad/Sum/reduction_indices"] == "Const"
        np.testing.assert_allclose(_run(gb, {x: np.ones((4, 3), np.float32)}), [4, 4, 4])


def test_sub_of_equal_static_shapes_needs_no_reduction():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 3])
        y = tf.placeholder(tf.float32, [4, 3])
        gx, gy = tf.gradients(tf.reduce_sum(x - y), [x, y])
        assert gx.name == "gradients/Sum_grad/Tile:0"
        assert gy.name == "gradients/sub_grad/Neg:0"


def test_mul_gradients_are_named_Mul():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        y = tf.placeholder(tf.float32, [2, 3])
        gx, gy = tf.gradients(tf.reduce_sum(x * y), [x, y])
        assert (gx.name, gy.name) == ("gradients/mul_grad/Mul:0", "gradients/mul_grad/Mul_1:0")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        b = tf.Variable([1.0, 2.0, 3.0])
        gx, gb = tf.gradients(tf.reduce_sum(x * b), [x, b])
        assert (gx.name, gb.name) == ("gradients/mul_grad/Mul:0", "gradients/mul_grad/Reshape:0")
        xv = np.arange(6, dtype=np.float32).reshape(2, 3)
        vx, vb = _run([gx, gb], {x: xv})
        np.testing.assert_allclose(vx, np.tile([1.0, 2.0, 3.0], (2, 1)))
        np.testing.assert_allclose(vb, xv.sum(0))


def test_realdiv_keeps_quotient_for_the_unreduced_input():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        b = tf.Variable([1.0, 2.0, 4.0])
        gx, gb = tf.gradients(tf.reduce_sum(x / b), [x, b])
        assert gx.name == "gradients/truediv_grad/RealDiv:0"
        assert gb.name == "gradients/truediv_grad/Reshape:0"
        vb = _run(gb, {x: np.ones((2, 3), np.float32)})
        np.testing.assert_allclose(vb, -2 / np.array([1.0, 4.0, 16.0]))


def test_mean_of_partly_known_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        (g,) = tf.gradients(tf.reduce_mean(x), x)
        assert g.name == "gradients/Mean_grad/truediv:0"
        ops = _grad_ops()
        for name, kind in [("Mean_grad/Tile", "Tile"), ("Mean_grad/Size", "Const"),
                           ("Mean_grad/add", "AddV2"), ("Mean_grad/mod", "FloorMod"),
                           ("Mean_grad/GatherV2", "GatherV2"), ("Mean_grad/Prod", "Prod"),
                           ("Mean_grad/Cast", "Cast")]:
            assert ops["gradients/" + name] == kind
        np.testing.assert_allclose(_run(g, {x: np.ones((4, 3), np.float32)}),
                                   np.full((4, 3), 1 / 12))


def test_mean_of_static_shape_over_one_axis():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        (g,) = tf.gradients(tf.reduce_mean(x, 1), x)
        assert g.name == "gradients/Mean_grad/truediv:0"
        ops = _grad_ops()
        assert ops["gradients/Mean_grad/Tile/multiples"] == "Const"
        assert ops["gradients/Mean_grad/Const"] == "Const"
        assert ops["gradients/Mean_grad/floordiv"] == "FloorDiv"  # TF's unused shape math
        np.testing.assert_allclose(_run(g, {x: np.ones((2, 3), np.float32)}),
                                   np.full((2, 3), 1 / 3))


def test_contributions_reach_addn_in_tensorflow_order():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = (tf.reduce_sum(tf.nn.relu(x)) + tf.reduce_sum(tf.sigmoid(x))
             + tf.reduce_sum(tf.tanh(x)) + tf.reduce_sum(tf.nn.softmax(x)))
        (g,) = tf.gradients(y, x)
        assert g.name == "gradients/AddN:0"
        scopes = [t.op.name.split("/")[1] for t in g.op.inputs]
        assert scopes == ["Softmax_grad", "Tanh_grad", "Relu_grad", "Sigmoid_grad"]


def test_unary_and_squared_difference_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 3])
        tf.gradients(tf.reduce_sum(tf.square(x)) + tf.reduce_sum(tf.log1p(x))
                     + tf.reduce_sum(tf.squared_difference(x, y)), x)
        ops = _grad_ops()
        assert ops["gradients/Square_grad/Mul_1"] == "Mul"
        assert ops["gradients/Log1p_grad/add"] == "AddV2"
        assert ops["gradients/Log1p_grad/add/x"] == "Const"
        assert ops["gradients/SquaredDifference_grad/scalar"] == "Const"
        assert ops["gradients/SquaredDifference_grad/Mul"] == "Mul"


def test_softmax_xent_skips_second_order_work():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        lab = tf.placeholder(tf.float32, [None, 3])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=lab,
                                                                           logits=x))
        (g,) = tf.gradients(loss, x)
        assert g.name == "gradients/softmax_cross_entropy_with_logits/Reshape_grad/Reshape:0"
        ops = _grad_ops()
        assert ops["gradients/zeros_like"] == "ZerosLike"
        assert ops["gradients/softmax_cross_entropy_with_logits_grad/LogSoftmax"] == "LogSoftmax"
        assert not any("ReduceLogSumExp" in n for n in ops)
        xv = np.array([[1.0, 2.0, 0.5]], np.float32)
        lv = np.array([[0.0, 1.0, 0.0]], np.float32)
        sm = np.exp(xv) / np.exp(xv).sum()
        np.testing.assert_allclose(_run(g, {x: xv, lab: lv}), sm - lv, rtol=1e-5)


def test_gather_gradient_is_tensorflow_indexed_slices():
    with tf.Graph().as_default():
        e = tf.Variable(tf.ones([5, 3]))
        i = tf.placeholder(tf.int32, [None])
        (g,) = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(e, i)), [e])
        assert isinstance(g, tf.IndexedSlices)
        assert g.values.name == "gradients/embedding_lookup_grad/Reshape:0"
        assert g.indices.name == "gradients/embedding_lookup_grad/Reshape_1:0"
        assert g.dense_shape.name == "gradients/embedding_lookup_grad/Cast:0"
        assert _grad_ops()["gradients/embedding_lookup_grad/ExpandDims"] == "ExpandDims"
        dense = _run(tf.convert_to_tensor(g), {i: [0, 2, 2]})
        np.testing.assert_allclose(dense[:, 0], [1, 0, 2, 0, 0])


def test_conv2d_gradient_uses_shape_n():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6, 6, 1])
        w = tf.Variable(tf.ones([3, 3, 1, 2]))
        (g,) = tf.gradients(tf.reduce_sum(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")), [w])
        assert g.name == "gradients/Conv2D_grad/Conv2DBackpropFilter:0"
        assert g.op.inputs[1].name == "gradients/Conv2D_grad/ShapeN:1"


def test_compute_gradients_are_gated_with_tuple_names():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.int32, [None])
        h = tf.layers.dense(x, 4, activation=tf.nn.relu)
        loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(h, 2))
        gv = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
        # TensorFlow names the first kernel's "tuple/control_dependency_1" too; with one
        # gradient to gate flowgraph adds no Identity (it would run on every step).
        assert [g.name for g, _ in gv] == [
            "gradients/dense/MatMul_grad/MatMul_1:0",
            "gradients/dense/BiasAdd_grad/tuple/control_dependency_1:0",
            "gradients/dense_1/MatMul_grad/tuple/control_dependency_1:0",
            "gradients/dense_1/BiasAdd_grad/tuple/control_dependency_1:0"]
        ops = _grad_ops()
        assert "gradients/dense/MatMul_grad/tuple/group_deps" not in ops
        assert ops["gradients/dense_1/MatMul_grad/tuple/group_deps"] == "NoOp"
        ungated = tf.gradients(loss, [v for _, v in gv], name="plain")
        feed = {x: np.random.RandomState(0).rand(5, 3).astype(np.float32), y: [0, 1, 1, 0, 1]}
        for a, b in zip(_run([g for g, _ in gv], feed), _run(ungated, feed)):
            np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("lr", [0.0, -0.1])
def test_sparse_ftrl_refuses_a_non_positive_learning_rate(lr):
    with tf.Graph().as_default():
        e = tf.Variable(tf.ones([4, 2]))
        op = tf.train.FtrlOptimizer(lr).minimize(tf.reduce_sum(tf.gather(e, [0, 2])))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="lr is not a positive"):
                sess.run(op)
            np.testing.assert_array_equal(sess.run(e), np.ones((4, 2)))  # nothing applied


def test_loss_fetched_with_the_train_op_is_the_loss_before_the_update():
    with tf.Graph().as_default():
        w = tf.Variable([3.0, -2.0])
        loss = tf.reduce_sum(tf.square(w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        _, first = _run([train, loss])
        assert first == pytest.approx(13.0)


def test_sparse_ftrl_positive_learning_rate_still_updates():
    with tf.Graph().as_default():
        e = tf.Variable(tf.ones([4, 2]))
        op = tf.train.FtrlOptimizer(0.1).minimize(tf.reduce_sum(tf.gather(e, [0, 2])))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            np.testing.assert_allclose(sess.run(e)[:, 0], [0.6031, 1, 0.6031, 1], atol=1e-4)


def test_indicator_of_crossed_column_keeps_constant_batch_size():
    fc = tf.feature_column
    crossed = fc.indicator_column(fc.crossed_column(["a", "b"], 10))
    with tf.Graph().as_default():
        feats = {"a": tf.constant(["x", "y", "x", "y"]), "b": tf.constant(["u", "v", "v", "u"])}
        out = fc.input_layer(feats, [crossed])
        assert out.shape.as_list() == [4, 10]
        assert _run(out).sum() == 4
    with tf.Graph().as_default():  # fed features: TensorFlow cannot evaluate it either
        feats = {"a": tf.placeholder(tf.string, [4, 1]), "b": tf.placeholder(tf.string, [4, 1])}
        assert fc.input_layer(feats, [crossed]).shape.as_list() == [None, 10]
