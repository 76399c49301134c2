"""`tf.contrib.slim` / `tf.contrib.framework` / `tf.contrib.training` / `tf.contrib.losses` /
`tf.contrib.metrics`, checked against TF 2.15 running `tf_slim` (the maintained copy of
TF1's contrib.slim) with the oracle; TF's values are inline."""

import os
import re

import numpy as np
import pytest

import flowgraph as tf

slim = tf.contrib.slim


def _vgg_like(inputs, is_training=True):
    with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=tf.nn.relu,
                        weights_initializer=tf.truncated_normal_initializer(0.0, 0.01),
                        weights_regularizer=slim.l2_regularizer(0.0005)):
        net = slim.repeat(inputs, 2, slim.conv2d, 8, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.conv2d(net, 16, [3, 3], scope="conv2")
        net = slim.max_pool2d(net, [2, 2], scope="pool2")
        net = slim.flatten(net, scope="flatten")
        net = slim.fully_connected(net, 32, scope="fc6")
        net = slim.dropout(net, 0.5, is_training=is_training, scope="dropout6")
        return slim.fully_connected(net, 10, activation_fn=None, scope="fc8")


def test_vgg_style_network_trains_as_tf_slim():
    with tf.Graph().as_default() as g:
        tf.set_random_seed(3)
        x = tf.constant(np.random.RandomState(0).rand(4, 16, 16, 3).astype(np.float32))
        logits = _vgg_like(x, is_training=False)
        assert logits.op.name == "fc8/BiasAdd" and logits.shape == (4, 10)
        assert [(v.op.name, v.shape.as_list()) for v in slim.get_model_variables()] == [
            ("conv1/conv1_1/weights", [3, 3, 3, 8]), ("conv1/conv1_1/biases", [8]),
            ("conv1/conv1_2/weights", [3, 3, 8, 8]), ("conv1/conv1_2/biases", [8]),
            ("conv2/weights", [3, 3, 8, 16]), ("conv2/biases", [16]),
            ("fc6/weights", [256, 32]), ("fc6/biases", [32]),
            ("fc8/weights", [32, 10]), ("fc8/biases", [10])]
        # TF builds these layers on tf.layers: the regularizer is named after "kernel"
        assert [r.op.name for r in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)] == [
            "conv1/conv1_1/kernel/Regularizer/l2_regularizer",
            "conv1/conv1_2/kernel/Regularizer/l2_regularizer",
            "conv2/kernel/Regularizer/l2_regularizer", "fc6/kernel/Regularizer/l2_regularizer",
            "fc8/kernel/Regularizer/l2_regularizer"]
        loss = slim.losses.sparse_softmax_cross_entropy(logits, tf.constant([1, 2, 3, 4]))
        total = slim.losses.get_total_loss()
        assert (loss.op.name, total.op.name) == ("sparse_softmax_cross_entropy_loss/value",
                                                 "total_loss")
        train_op = slim.learning.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
        assert (train_op.op.name, train_op.op.type) == ("train_op/control_dependency",
                                                        "Identity")
        assert [getattr(t, "name", None) for t in tf.get_collection(tf.GraphKeys.TRAIN_OP)] \
            == ["GradientDescent", "train_op/control_dependency:0"]
        fc8 = [op.name for op in g.get_operations() if op.name.startswith("fc8/")]
        assert fc8[-7:] == ["fc8/kernel/Regularizer/l2_regularizer",
                            "fc8/biases/Initializer/zeros", "fc8/biases", "fc8/biases/Assign",
                            "fc8/biases/read", "fc8/MatMul", "fc8/BiasAdd"]
        assert [op.type for op in g.get_operations()
                if op.name.startswith("fc8/kernel/Regularizer/")] == ["Const", "L2Loss", "Mul"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [round(float(sess.run(train_op)), 5) for _ in range(3)]
            assert losses == [2.30279, 2.28785, 2.2732]  # TF 2.15 + tf_slim, seed 3
            assert sess.run(tf.train.get_global_step()) == 3


def test_more_layers_match_tf_slim_values_and_names():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(np.random.RandomState(0).rand(2, 6, 6, 4).astype(np.float32))
        with slim.arg_scope([slim.conv2d, slim.conv2d_transpose, slim.separable_conv2d],
                            padding="SAME", outputs_collections="ep") as sc:
            a = slim.conv2d(x, 5, 3, stride=2, scope="c")
            b = slim.conv2d_transpose(a, 3, [3, 3], stride=2, scope="t")
            c = slim.separable_conv2d(x, 6, [3, 3], depth_multiplier=2, scope="s")
            d = slim.separable_conv2d(x, None, [3, 3], depth_multiplier=1, scope="dw")
        assert len(sc) == 3
        e = slim.layer_norm(c, scope="ln")
        f = slim.bias_add(e, scope="ba")
        g = slim.avg_pool2d(f, [2, 2], scope="ap")
        h = slim.one_hot_encoding(tf.constant([0, 2]), 3)
        i = slim.softmax(tf.reshape(g, [2, 3, -1]))
        j = slim.unit_norm(tf.reshape(g, [2, -1]), 1)
        k = slim.dropout(g, 0.7, is_training=True, scope="do")
        outs = [a, b, c, d, e, f, g, h, i, j, k]
        assert [(t.op.name, t.op.type, t.shape.as_list()) for t in outs] == [
            ("c/Relu", "Relu", [2, 3, 3, 5]), ("t/Relu", "Relu", [2, 6, 6, 3]),
            ("s/Relu", "Relu", [2, 6, 6, 6]), ("dw/Relu", "Relu", [2, 6, 6, 4]),
            ("ln/batchnorm/add_1", "AddV2", [2, 6, 6, 6]), ("ba/BiasAdd", "BiasAdd", [2, 6, 6, 6]),
            ("ap/AvgPool", "AvgPool", [2, 3, 3, 6]), ("OneHotEncoding/one_hot", "OneHot", [2, 3]),
            ("softmax/Reshape_1", "Reshape", [2, 3, 18]), ("UnitNorm/div", "RealDiv", [2, 54]),
            ("do/dropout/SelectV2", "SelectV2", [2, 3, 3, 6])]
        assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("c/weights", [3, 3, 4, 5]), ("c/biases", [5]), ("t/weights", [3, 3, 3, 5]),
            ("t/biases", [3]), ("s/depthwise_weights", [3, 3, 4, 2]),
            ("s/pointwise_weights", [1, 1, 8, 6]), ("s/biases", [6]),
            ("dw/depthwise_weights", [3, 3, 4, 1]), ("dw/biases", [4]), ("ln/beta", [6]),
            ("ln/gamma", [6]), ("ba/biases", [6])]
        assert all(v in tf.model_variables() for v in tf.global_variables())
        end_points = slim.utils.convert_collection_to_dict("ep")
        assert [(k_, t.name) for k_, t in end_points.items()] == [
            ("c", "c/Relu:0"), ("t", "t/Relu:0"), ("s", "s/Relu:0"), ("dw", "dw/Relu:0")]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            firsts = [sess.run(t).ravel()[:4] for t in [a, b, c, d, e, j, k]]
            onehot = sess.run(h)
    np.testing.assert_allclose(firsts, [
        [0.0, 0.0, 0.79807, 0.52162], [0.0, 0.0, 0.29691, 0.0], [0.0, 0.42543, 0.0, 0.23786],
        [0.0, 0.23466, 0.0, 0.2954], [-0.5442, 3.2366, -0.5442, 1.56966],
        [-0.11394, 0.38874, -0.11394, 0.28363], [0.0, 0.0, -0.77743, 0.0]], atol=6e-6)
    np.testing.assert_array_equal(onehot, [[1, 0, 0], [0, 0, 1]])
    assert (slim.utils.last_dimension(a.shape), slim.utils.two_element_tuple(3),
            slim.utils.n_positive_integers(2, 3)) == (5, (3, 3), (3, 3))


def test_arg_scope_semantics_and_errors_as_tf_slim():
    @slim.add_arg_scope
    def f(x, a=1, b=2, *, c=3):
        return (x, a, b, c)

    def g(x, a=1):
        return x

    # TF1's quirk: the last len(defaults) code names among the positional parameters
    assert (slim.has_arg_scope(f), slim.has_arg_scope(g), slim.arg_scoped_arguments(f)) \
        == (True, False, ("b",))
    with slim.arg_scope([f], a=10):
        assert (f(0), f(0, a=5)) == ((0, 10, 2, 3), (0, 5, 2, 3))
        with slim.arg_scope([f], b=20) as sc:
            assert (f(0), f(0, b=1, a=2)) == ((0, 10, 20, 3), (0, 2, 1, 3))
        with slim.arg_scope([f], a=11, c=7):
            assert f(0) == (0, 11, 2, 7)
    with slim.arg_scope(sc):
        assert f(0) == (0, 10, 20, 3)
    assert f(0) == (0, 1, 2, 3) and len(slim.current_arg_scope()) == 0
    with pytest.raises(TypeError, match=r"^list_ops_or_scope must either be a list/tuple "
                                        r"or reused scope \(i.e. dict\)$"):
        slim.arg_scope(f, a=1).__enter__()
    with pytest.raises(ValueError) as err:
        slim.arg_scope([g], a=1).__enter__()
    assert str(err.value) == ("('%s is not decorated with @add_arg_scope', "
                              f"('{__name__}', 'g'))")
    with pytest.raises(ValueError, match="suppling adictionary, kwargs must be empty"):
        slim.arg_scope(sc, a=1).__enter__()
    with tf.Graph().as_default():
        x = tf.zeros([2, 5, 5, 3])
        with slim.arg_scope([slim.conv2d], padding="VALID", activation_fn=None,
                            biases_initializer=None):
            y = slim.conv2d(x, 4, [3, 3])
            z = slim.conv2d(x, 4, [3, 3], padding="SAME")
        assert (y.op.name, y.shape, z.op.name, z.shape) == ("Conv/Conv2D", (2, 3, 3, 4),
                                                          "Conv_1/Conv2D", (2, 5, 5, 4))
        assert [v.op.name for v in tf.global_variables()] == ["Conv/weights", "Conv_1/weights"]
        net = slim.stack(tf.zeros([2, 4]), slim.fully_connected, [8, (6,), [3]], scope="fcs")
        net2 = slim.repeat(tf.zeros([2, 4]), 2, slim.fully_connected, 4)
        net3 = slim.stack(tf.zeros([2, 4]), slim.fully_connected, [5, 6])
        assert (net.op.name, net2.op.name, net3.op.name) == (
            "fcs/fcs_3/Relu", "Repeat/fully_connected_2/Relu", "Stack/fully_connected_2/Relu")
        assert [v.op.name for v in tf.global_variables()][-4:] == [
            "Stack/fully_connected_1/weights", "Stack/fully_connected_1/biases",
            "Stack/fully_connected_2/weights", "Stack/fully_connected_2/biases"]


def test_learning_train_and_fine_tuning_restore_as_tf_slim(tmp_path):
    rs = np.random.RandomState(0)
    xs = rs.rand(32, 8).astype(np.float32)
    ys = (xs.sum(1) > 4).astype(np.int64)

    def net(x):
        with slim.arg_scope([slim.fully_connected],
                            weights_regularizer=slim.l2_regularizer(0.01)):
            h = slim.fully_connected(x, 16, scope="fc1")
            return slim.fully_connected(h, 2, activation_fn=None, scope="logits")

    logdir = str(tmp_path)
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        logits = net(tf.constant(xs))
        slim.losses.softmax_cross_entropy(logits, slim.one_hot_encoding(tf.constant(ys), 2))
        train_op = slim.learning.create_train_op(slim.losses.get_total_loss(),
                                                 tf.train.AdamOptimizer(0.01))
        final = slim.learning.train(train_op, logdir, number_of_steps=5, log_every_n_steps=2,
                                    save_summaries_secs=10000, save_interval_secs=10000)
    assert round(float(final), 5) == 0.70879
    files = sorted(p for p in os.listdir(logdir) if "events" not in p)
    # TF's listing; the Supervisor's checkpoint thread saves once at its start, at
    # whatever step the loop has reached when the thread gets the CPU (step 0 here and in
    # TF when the machine is idle; a loaded machine delays it): that early save optional
    early = re.compile(r"model\.ckpt-[0-4]\.")
    assert [f for f in files if not early.match(f)] == [
        "checkpoint", "graph.pbtxt", "model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index",
        "model.ckpt-5.meta"]
    ckpt = tf.train.latest_checkpoint(logdir)
    with tf.Graph().as_default():
        logits = net(tf.constant(xs))
        restore = slim.get_variables_to_restore(exclude=["logits"])
        assert [v.op.name for v in restore] == ["fc1/weights", "fc1/biases"]
        assert [v.op.name for v in slim.get_variables_by_name("weights")] == [
            "fc1/weights", "logits/weights"]
        assert [v.op.name for v in slim.get_variables_by_suffix("biases")] == [
            "fc1/biases", "logits/biases"]
        assert slim.get_unique_variable("fc1/weights").op.name == "fc1/weights"
        init_fn = slim.assign_from_checkpoint_fn(ckpt, restore)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init_fn(sess)
            biases = sess.run(slim.get_unique_variable("fc1/biases"))
        np.testing.assert_allclose(biases[:3], [-0.00666, 0.04982, 0.0], atol=5e-6)
        op, feed = slim.assign_from_checkpoint(ckpt, restore)
        assert (op.type, len(feed)) == ("NoOp", 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op, feed)
            np.testing.assert_array_equal(sess.run(restore[1]), biases)
        with pytest.raises(ValueError, match=r"^Couldn't find variable nope$"):
            slim.get_unique_variable("nope")
        missing = [tf.Variable(1.0, name="zzz")]
        assert slim.assign_from_checkpoint_fn(ckpt, missing, ignore_missing_vars=True) is None


def test_contrib_losses_take_logits_first_with_tf1_values():
    L = slim.losses
    with tf.Graph().as_default():
        logits = tf.constant([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
        onehot = tf.constant([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        pred = tf.constant([[0.2, 0.7], [0.9, 0.4]])
        tgt = tf.constant([[0.0, 1.0], [1.0, 0.0]])
        outs = [
            L.softmax_cross_entropy(logits, onehot),
            L.softmax_cross_entropy(logits, onehot, weights=2.0, label_smoothing=0.1),
            L.sparse_softmax_cross_entropy(logits, tf.constant([0, 2]),
                                           weights=tf.constant([1.0, 0.0])),
            L.sigmoid_cross_entropy(logits, onehot),
            L.mean_squared_error(pred, tgt),
            L.absolute_difference(pred, tgt, weights=tf.constant([[1.0], [2.0]])),
            L.log_loss(pred, tgt),
            L.hinge_loss(pred, tgt),
            L.cosine_distance(tf.nn.l2_normalize(pred, 1), tf.nn.l2_normalize(tgt, 1), axis=1),
            L.mean_pairwise_squared_error(pred, tgt),
            L.compute_weighted_loss(tf.constant([1.0, 2.0, 3.0]),
                                    weights=tf.constant([1.0, 0.0, 1.0])),
        ]
        assert outs[7].op.name == "hinge_loss/Relu"  # not reduced, not in LOSSES
        assert len(L.get_losses()) == 10
        total = L.get_total_loss()
        with tf.Session() as sess:
            values = sess.run(outs)
            total_value = sess.run(total)
    expected = [1.41854, 2.85375, 0.41703, 1.04865, 0.075, 0.375, 0.299,
                [[1.2, 0.3], [0.1, 1.4]], 0.06233, 0.25, 2.0]
    for got, want in zip(values, expected):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert round(float(total_value), 4) == 8.7993


def test_streaming_metrics_take_predictions_first():
    M = slim.metrics
    with tf.Graph().as_default():
        p, lab = tf.constant([1, 0, 1, 1]), tf.constant([1, 1, 1, 0])
        metrics = {
            "acc": M.streaming_accuracy(p, lab), "prec": M.streaming_precision(p, lab),
            "rec": M.streaming_recall(p, lab), "mean": M.streaming_mean(tf.constant([1.0, 3.0])),
            "mse": M.streaming_mean_squared_error(tf.constant([1.0, 2.0]), tf.zeros([2])),
            "rmse": M.streaming_root_mean_squared_error(tf.constant([1.0, 2.0]), tf.zeros([2])),
            "auc": M.streaming_auc(tf.constant([0.1, 0.8, 0.6, 0.3]), tf.constant([0, 1, 1, 0])),
            "tp": M.streaming_true_positives(p, lab), "fn": M.streaming_false_negatives(p, lab),
            "r@k": M.streaming_recall_at_k(tf.constant([[0.1, 0.9, 0.0], [0.5, 0.2, 0.3]]),
                                           tf.constant([1, 2]), 1),
            "pl": M.streaming_percentage_less(tf.constant([1.0, 2.0, 3.0]), 2.5)}
        values, updates = M.aggregate_metric_map(metrics)
        assert values["r@k"].op.name == "recall_at_1/value"
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(list(updates.values()))
            got = {k: round(float(v), 4) for k, v in sess.run(values).items()}
        v2, _ = M.aggregate_metrics(M.streaming_mean(tf.constant([2.0])),
                                    M.streaming_accuracy(p, lab))
        assert [t.op.name for t in v2] == ["mean_1/value", "accuracy_1/value"]
    assert got == {"acc": 0.5, "auc": 1.0, "fn": 1.0, "mean": 2.0, "mse": 2.5, "pl": 0.6667,
                   "prec": 0.6667, "r@k": 0.5, "rec": 0.6667, "rmse": 1.5811, "tp": 2.0}


def test_framework_variable_helpers():
    fw = tf.contrib.framework
    with tf.Graph().as_default():
        vv = fw.variable("vv", [2], initializer=tf.zeros_initializer())
        mv = fw.model_variable("mv", [1])
        assert vv in tf.global_variables() and vv not in tf.model_variables()
        assert mv in tf.model_variables() and mv in tf.trainable_variables()
        lv, gv = fw.local_variable(1.0, name="lv"), fw.global_variable(2.0, name="gv")
        assert lv in tf.local_variables() and lv not in tf.trainable_variables()
        assert gv in tf.global_variables() and gv not in tf.trainable_variables()
        with fw.arg_scope([fw.variable], device="/cpu:0"):
            dv = fw.variable("dv", [1])
        assert dv.device == "/device:CPU:0"
        assert [v.op.name for v in fw.filter_variables(tf.global_variables(),
                                                       include_patterns=["v:"],
                                                       exclude_patterns=["^g", "^m"])] == [
            "vv", "dv"]
        assert fw.get_or_create_global_step().op.name == "global_step"
        chooser = fw.VariableDeviceChooser(num_tasks=2)
        assert [chooser(None) for _ in range(3)] == [
            "/job:ps/task:0/device:CPU:0", "/job:ps/task:1/device:CPU:0",
            "/job:ps/task:0/device:CPU:0"]
        op, feed = fw.assign_from_values({"mv": np.array([5.0], np.float32)})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op, feed)
            assert sess.run(mv).tolist() == [5.0]


def test_hparams_types_parsing_and_json():
    HParams = tf.contrib.training.HParams
    hp = HParams(learning_rate=0.1, num_layers=2, activation="relu", sizes=[64, 32],
                 use_bn=False)
    hp.parse("learning_rate=0.05,sizes=[128,64,32],use_bn=true,num_layers=3")
    assert (hp.learning_rate, hp.sizes, hp.use_bn, hp.num_layers) == (0.05, [128, 64, 32],
                                                                      True, 3)
    assert str(hp) == ("[('activation', 'relu'), ('learning_rate', 0.05), ('num_layers', 3), "
                       "('sizes', [128, 64, 32]), ('use_bn', True)]")
    assert repr(HParams(a=1)) == "HParams([('a', 1)])"
    hp.set_hparam("learning_rate", 1)  # an int is a fine float
    assert hp.learning_rate == 1.0 and isinstance(hp.learning_rate, float)
    with pytest.raises(ValueError, match="Could not cast hparam 'num_layers'"):
        hp.set_hparam("num_layers", 2.5)
    with pytest.raises(ValueError, match="Could not cast hparam 'use_bn'"):
        hp.set_hparam("use_bn", 1)
    with pytest.raises(ValueError, match="Must pass a list for multi-valued parameter: sizes"):
        hp.set_hparam("sizes", 3)
    with pytest.raises(ValueError, match="Unknown hyperparameter type for dropout"):
        hp.parse("dropout=0.1")
    with pytest.raises(ValueError, match="Could not parse hparam 'num_layers'"):
        hp.parse("num_layers=abc")
    with pytest.raises(ValueError, match="Hyperparameter name is reserved: values"):
        hp.add_hparam("values", 1)
    with pytest.raises(ValueError, match="Multiple assignments to variable 'num_layers'"):
        hp.parse("num_layers=1,num_layers=2")
    assert HParams(**hp.values()).parse_json(hp.to_json()).values() == hp.values()
    assert hp.get("missing", 7) == 7 and "sizes" in hp and hp.get("num_layers") == 3
    hp.del_hparam("activation")
    assert "activation" not in hp


@pytest.mark.parametrize("build, same, kind, value", [
    # TF 2.15: which dropout with nothing to drop takes an op seed (the next random op's
    # value shows it) and what it returns
    (lambda x: tf.nn.dropout(x, rate=0.0), True, "Const", 0.055544),
    (lambda x: tf.nn.dropout(x, keep_prob=1.0), True, "Const", 0.055544),
    (lambda x: tf.layers.dropout(x, rate=0.0, training=True), False, "Identity", 0.812696),
    (lambda x: slim.dropout(x, keep_prob=1.0, is_training=True), True, "Const", 0.055544),
    (lambda x: x, True, "Const", 0.812696),
])
def test_dropout_that_drops_nothing_takes_seeds_as_tf(build, same, kind, value):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.ones([2, 3])
        y = build(x)
        r = tf.random_uniform([1])
        with tf.Session() as sess:
            got = float(sess.run(r)[0])
    assert (y is x, y.op.type) == (same, kind)
    assert round(got, 6) == value
