"""`tf.contrib.gan` (TFGAN) and `tf.contrib.quantize`, as TF 1.15 documents them.

TensorFlow 2.15 has neither, so the expected numbers are those of the same formulas
written with TF 2.15's core ops under tf.compat.v1 (scripts under /tmp/s23/gan and
/tmp/s23/quantize), printed there and copied here.
"""

import numpy as np
import pytest

import flowgraph as tf

G = tf.contrib.gan
W = G.losses.wargs

REAL = [[1.5], [-0.5], [2.0], [0.25]]
GEN = [[-1.0], [0.3], [0.7], [-2.0]]
WEIGHTS = [[1.0], [0.0], [2.0], [1.0]]
LABELS = [[0., 1., 0.], [1., 0., 0.], [0., 0., 1.], [0., 1., 0.]]
REAL_LOGITS = [[0.1, 2.0, -1.0], [0.5, 0.2, 0.3], [-1.0, 0.0, 1.5], [0.0, 0.0, 0.0]]
GEN_LOGITS = [[1.0, -2.0, 0.5], [0.0, 1.0, 0.0], [0.3, 0.3, 0.3], [2.0, 1.0, 0.0]]


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


# -- losses ------------------------------------------------------------------------------
def test_losses_equal_tf_formulas():
    with tf.Graph().as_default():
        real, gen, w = tf.constant(REAL), tf.constant(GEN), tf.constant(WEIGHTS)
        labels, rl, gl = tf.constant(LABELS), tf.constant(REAL_LOGITS), tf.constant(GEN_LOGITS)
        losses = {
            "wass_g": W.wasserstein_generator_loss(gen, w),
            "wass_d": W.wasserstein_discriminator_loss(real, gen, generated_weights=w),
            "minimax_d": W.minimax_discriminator_loss(real, gen, generated_weights=w),
            "minimax_g": W.minimax_generator_loss(gen, weights=w),
            "modified_g": W.modified_generator_loss(gen, 0.1, w),
            "lsq_g": W.least_squares_generator_loss(gen, weights=w),
            "lsq_d": W.least_squares_discriminator_loss(real, gen, 0.9, 0.1,
                                                        generated_weights=w),
            "acgan_g": W.acgan_generator_loss(gl, labels),
            "acgan_d": W.acgan_discriminator_loss(rl, gl, labels, label_smoothing=0.2),
        }
        got = _run(losses)
    tf_values = {  # TF 2.15 core-op formulas (/tmp/s23/gan/losses.py)
        "acgan_d": 2.6688804626464844, "acgan_g": 1.8905649185180664,
        "lsq_d": 1.5507290363311768, "lsq_g": 2.196666717529297,
        "minimax_d": 1.4533392190933228, "minimax_g": -1.2998695373535156,
        "modified_g": 1.3888540267944336, "wass_d": -1.3458333015441895,
        "wass_g": 0.5333333611488342}
    for name, value in tf_values.items():
        assert got[name] == pytest.approx(value, rel=1e-6), name


def test_loss_names_and_collection():
    with tf.Graph().as_default():
        g = W.wasserstein_generator_loss(tf.constant(GEN))
        d = W.wasserstein_discriminator_loss(tf.constant(REAL), tf.constant(GEN))
        m = W.modified_discriminator_loss(tf.constant(REAL), tf.constant(GEN))
        assert g.name == "generator_wasserstein_loss/value:0"
        assert d.name == "discriminator_wasserstein_loss/sub:0"
        assert m.name == "discriminator_modified_loss/add_1:0"  # TF: the same structure
        assert W.minimax_generator_loss(tf.constant(GEN)).name == "generator_minimax_loss/Neg:0"
        # a two-part loss adds only its total
        assert tf.get_collection(tf.GraphKeys.LOSSES)[:3] == [g, d, m]


def test_gradient_penalty_formula():
    def disc(x, _):
        return tf.reduce_sum(tf.square(x) * tf.constant([1.0, -2.0]) + 3.0 * x, axis=1,
                             keepdims=True)

    with tf.Graph().as_default() as graph:
        x_real = tf.constant([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]])
        x_gen = tf.constant([[0.0, 1.0], [2.0, 2.0], [-1.0, 0.5]])
        with tf.variable_scope("D") as scope:
            pass
        gp = W.wasserstein_gradient_penalty(x_real, x_gen, None, disc, scope, target=2.0)
        gp1 = W.wasserstein_gradient_penalty(x_real, x_gen, None, disc, scope, target=2.0,
                                             one_sided=True)
        alpha = np.array([[0.25], [0.5], [0.9]], np.float32)
        feed = {graph.get_tensor_by_name(f"{s}/random_uniform/RandomUniform:0"): alpha
                for s in ("wasserstein_gradient_penalty", "wasserstein_gradient_penalty_1")}
        got = _run([gp, gp1], feed)
    # TF: the same interpolation, gradient norm and penalty with core ops
    assert got == pytest.approx([2.474677562713623, 2.42134428024292], rel=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unknown rank"):
            W.wasserstein_gradient_penalty(tf.placeholder(tf.float32), tf.zeros([2]), None,
                                           disc, None)


# -- models, gan_loss, train ops ------------------------------------------------------
def _scalar_gan(real=((3.0,), (3.0,)), z=((1.0,), (1.0,))):
    gen_fn = lambda z: z * tf.get_variable("w", initializer=1.0)  # noqa: E731
    dis_fn = lambda x, _: x * tf.get_variable("w", initializer=2.0)  # noqa: E731
    return G.gan_model(gen_fn, dis_fn, real_data=tf.constant(real),
                       generator_inputs=tf.constant(z))


def test_gan_model_fields_scopes_and_variables():
    with tf.Graph().as_default():
        model = _scalar_gan()
        assert isinstance(model, G.GANModel)
        assert G.GANModel._fields == (
            "generator_inputs", "generated_data", "generator_variables", "generator_scope",
            "generator_fn", "real_data", "discriminator_real_outputs",
            "discriminator_gen_outputs", "discriminator_variables", "discriminator_scope",
            "discriminator_fn")
        assert [v.op.name for v in model.generator_variables] == ["Generator/w"]
        assert [v.op.name for v in model.discriminator_variables] == ["Discriminator/w"]
        assert model.generator_scope.name == "Generator"
        assert model.discriminator_real_outputs.op.name.startswith("Discriminator_1/")
        assert _run(model.discriminator_real_outputs).tolist() == [[6.0], [6.0]]
        with pytest.raises(ValueError, match="same shape as real data"):
            G.gan_model(lambda z: z, lambda x, _: x, tf.zeros([2, 3]), tf.zeros([2, 4]),
                        generator_scope="G2", discriminator_scope="D2")


def test_gan_loss_defaults_penalty_and_regularization():
    with tf.Graph().as_default():
        model = _scalar_gan()
        with tf.name_scope("Discriminator/"):  # counted for the discriminator only
            reg = tf.multiply(0.5, model.discriminator_variables[0], name="reg")
        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, reg)
        loss = G.gan_loss(model)
        gp = G.gan_loss(model, gradient_penalty_weight=10.0, add_summaries=False)
        mm = G.gan_loss(model, G.losses.modified_generator_loss,
                        G.losses.modified_discriminator_loss)
        g, d, gpd, mg = _run([loss.generator_loss, loss.discriminator_loss,
                              gp.discriminator_loss, mm.generator_loss])
        # Wasserstein: -D(G(z)) = -2; D(G(z)) - D(x) = 2 - 6, plus 0.5 * w_d
        assert (g, d) == (-2.0, -3.0)
        # D is linear with slope 2: penalty (sqrt(4 + 1e-10) - 1)^2 = 1, weighted by 10
        assert gpd == pytest.approx(7.0)
        assert mg == pytest.approx(np.log1p(np.exp(-2.0)))
        with pytest.raises(ValueError, match="gradient_penalty_weight"):
            G.gan_loss(model, gradient_penalty_weight=-1.0)
        with pytest.raises(ValueError, match="ACGANModel"):
            G.gan_loss(model, aux_cond_generator_weight=1.0)


def test_acgan_model_and_loss():
    def dis_fn(x, _):
        w = tf.get_variable("w", initializer=[[1.0, -1.0]])
        return x * 0.5, tf.matmul(x, w)

    with tf.Graph().as_default():
        model = G.acgan_model(lambda z: z * tf.get_variable("w", initializer=1.0), dis_fn,
                              tf.constant([[1.0], [2.0]]), tf.constant([[0.5], [-1.0]]),
                              one_hot_labels=tf.constant([[1.0, 0.0], [0.0, 1.0]]))
        assert model.discriminator_gen_classification_logits.op.name.startswith(
            "Discriminator/generated/")
        loss = G.gan_loss(model, aux_cond_generator_weight=1.0,
                          aux_cond_discriminator_weight=2.0, add_summaries=False)
        logits_gen = np.array([[0.5, -0.5], [-1.0, 1.0]])
        logits_real = np.array([[1.0, -1.0], [2.0, -2.0]])

        def xent(lg):
            lse = np.log(np.exp(lg).sum(1))
            return float(np.mean(lse - lg[[0, 1], [0, 1]]))
        g, d = _run([loss.generator_loss, loss.discriminator_loss])
        assert g == pytest.approx(-np.mean([0.25, -0.5]) + xent(logits_gen), rel=1e-6)
        assert d == pytest.approx(np.mean([0.25, -0.5]) - 0.75
                                  + 2 * (xent(logits_gen) + xent(logits_real)), rel=1e-6)


def test_gan_train_sequential_updates(tmp_path):
    with tf.Graph().as_default():
        model = _scalar_gan()
        loss = G.gan_loss(model, add_summaries=False)
        ops = G.gan_train_ops(model, loss, tf.train.GradientDescentOptimizer(0.1),
                              tf.train.GradientDescentOptimizer(0.05))
        assert isinstance(ops, G.GANTrainOps) and ops.train_hooks == []
        last = G.gan_train(ops, str(tmp_path),
                           get_hooks_fn=G.get_sequential_train_hooks(G.GANTrainSteps(1, 2)),
                           hooks=[tf.train.StopAtStepHook(num_steps=3)],
                           save_checkpoint_secs=3600, save_summaries_steps=None)
        assert last == 3
        hooks = G.get_joint_train_hooks(G.GANTrainSteps(3, 5))(ops)
        assert [h._train_steps for h in hooks] == [3, 0, 2]
    wg, wd = 1.0, 2.0
    for _ in range(3):  # per global step: one generator update, then two discriminator ones
        wg += 0.1 * wd  # d(-wd * wg * z)/dwg, z = 1
        for _ in range(2):
            wd -= 0.05 * (wg - 3.0)  # d(wd * (wg * z - x))/dwd, x = 3
    ckpt = str(tmp_path)
    assert tf.train.load_variable(ckpt, "global_step") == 3
    assert tf.train.load_variable(ckpt, "Generator/w") == pytest.approx(wg)
    assert tf.train.load_variable(ckpt, "Discriminator/w") == pytest.approx(wd)


def test_gan_train_ops_update_ops_split():
    with tf.Graph().as_default():
        model = _scalar_gan()
        loss = G.gan_loss(model, add_summaries=False)
        with tf.name_scope("Other"):
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.no_op(name="stray"))
        with pytest.raises(ValueError, match="unused update ops"):
            G.gan_train_ops(model, loss, tf.train.GradientDescentOptimizer(0.1),
                            tf.train.GradientDescentOptimizer(0.1))
        ops = G.gan_train_ops(model, loss, tf.train.GradientDescentOptimizer(0.1),
                              tf.train.GradientDescentOptimizer(0.1),
                              check_for_unused_update_ops=False)
        assert ops.generator_train_op.name.startswith("generator_train/")
        assert ops.global_step_inc_op.op.type in ("AssignAdd", "AssignAddVariableOp")


# -- features, eval ---------------------------------------------------------------------
def test_clip_variables_and_tensor_pool():
    with tf.Graph().as_default():
        w = tf.Variable([0.5, -0.5, 0.05])
        opt = G.features.clip_variables(tf.train.GradientDescentOptimizer(1.0), [w], 0.1)
        assert isinstance(opt, tf.contrib.opt.VariableClippingOptimizer)
        assert G.features.clip_variables(opt, [w], None) is opt
        train = opt.minimize(tf.reduce_sum(w * [1.0, -1.0, 0.02]))
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(train)
            assert sess.run(w) == pytest.approx([-0.1, 0.1, 0.03])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        pooled = G.features.tensor_pool(x, pool_size=2, pooling_probability=1.0)
        assert pooled.shape.as_list() == [2]
        with tf.Session() as sess:
            seen = [sess.run(pooled, {x: [i, i]}).tolist() for i in range(4)]
        assert seen[:2] == [[0.0, 0.0], [1.0, 1.0]]  # the pool fills first
        assert all(s[0] < i for i, s in enumerate(seen) if i >= 2)  # then older entries
        assert G.features.tensor_pool(x, pool_size=0) is x


def test_image_grid_and_reshaper():
    images = np.arange(6 * 2 * 3 * 1, dtype=np.float32).reshape(6, 2, 3, 1)
    with tf.Graph().as_default():
        grid = G.eval.image_grid(tf.constant(images), (2, 3), image_shape=(2, 3),
                                 num_channels=1)
        flat = G.eval.image_grid(tf.constant(images.reshape(6, -1)), (2, 3), (2, 3), 1)
        tiled = G.eval.image_reshaper(tf.constant(images[:5]), num_cols=3)
        got, got_flat, got_tiled = _run([grid, flat, tiled])
        with pytest.raises(ValueError, match="incompatible with minibatch size 6"):
            G.eval.image_grid(tf.constant(images), (2, 2), (2, 3), 1)
        with pytest.raises(ValueError, match="1 or 3 channel"):
            G.eval.image_reshaper(tf.zeros([2, 2, 2, 2]))
    rows = [np.concatenate(list(images[r * 3:(r + 1) * 3]), axis=1) for r in range(2)]
    expected = np.concatenate(rows, axis=0)[None]
    assert got.shape == (1, 4, 9, 1) and np.array_equal(got, expected)
    assert np.array_equal(got_flat, expected)
    padded = np.concatenate([images[:5], np.zeros_like(images[:1])])
    rows = [np.concatenate(list(padded[r * 3:(r + 1) * 3]), axis=1) for r in range(2)]
    assert np.array_equal(got_tiled, np.concatenate(rows, axis=0)[None])


# -- quantize ---------------------------------------------------------------------------
XS = [np.array([[0.5, -1.0, 2.0, 0.1], [1.5, 0.3, -0.7, 2.2]], np.float32),
      np.array([[2.5, -3.0, 1.0, 0.0], [0.5, 0.3, 0.7, -2.2]], np.float32),
      np.array([[0.1, 0.2, 0.3, 0.4], [4.0, -1.0, 0.0, 1.0]], np.float32)]
KERNEL = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6], [-0.3, 0.25, 0.05],
                   [0.7, -0.1, 0.2]], np.float32)
BIAS = np.array([0.1, -0.2, 0.05], np.float32)


def _dense_model():
    x = tf.placeholder(tf.float32, [2, 4], name="x")
    y = tf.layers.dense(x, 3, activation=tf.nn.relu6,
                        kernel_initializer=tf.constant_initializer(KERNEL),
                        bias_initializer=tf.constant_initializer(BIAS))
    return x, tf.identity(y, name="out")


def test_training_graph_equals_hand_built_fake_quant():
    with tf.Graph().as_default() as g:
        x, out = _dense_model()
        tf.contrib.quantize.create_training_graph(g)
        matmul = g.get_operation_by_name("dense/MatMul")
        assert matmul.inputs[1].name == "dense/weights_quant/FakeQuantWithMinMaxVars:0"
        assert out.op.inputs[0].name == "dense/act_quant/FakeQuantWithMinMaxVars:0"
        assert matmul.inputs[1].op.get_attr("narrow_range") is True
        # TF 2.15, the same ops built by hand under variable_scope(None, "dense/weights_quant")
        # (flowgraph also reads an Assign's ref output through an extra ``<assign>/read``)
        assert sorted(op.name for op in g.get_operations() if "weights_quant" in op.name
                      and not op.name.endswith("Last/read")) == [
            "dense/weights_quant/" + n for n in (
                "AssignMaxLast", "AssignMinLast", "BatchMax", "BatchMin", "Const", "Const_1",
                "FakeQuantWithMinMaxVars", "Maximum", "Maximum/y", "Minimum", "Minimum/y",
                "max", "max/Assign", "max/Initializer/Const", "max/read", "min",
                "min/Assign", "min/Initializer/Const", "min/read")]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = [sess.run(out, {x: xs}) for xs in XS]
            ranges = {v.op.name: float(sess.run(v)) for v in tf.global_variables()
                      if "quant" in v.op.name}
    # TF 2.15: weights through fake_quant_with_min_max_vars(assign(min, min(batch min, 0)),
    # ...), activations through it with zero-debiased moving averages of the batch range
    expected = [[[0.0, 0.0, 1.017573], [2.337668, 0.0, 1.02674]],
                [[0.247576, 0.0, 2.744864], [0.0, 0.226048, 0.0]],
                [[0.338144, 0.0, 0.076355], [1.908875, 0.0, 2.781503]]]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ranges == pytest.approx({
        "dense/act_quant/dense/act_quant/max/biased": 0.008336113,
        "dense/act_quant/dense/act_quant/max/local_step": 3.0,
        "dense/act_quant/dense/act_quant/min/biased": 0.0,
        "dense/act_quant/dense/act_quant/min/local_step": 3.0,
        "dense/act_quant/max": 2.7815032, "dense/act_quant/min": 0.0,
        "dense/weights_quant/max": 0.7, "dense/weights_quant/min": -0.6}, rel=1e-6)


def test_eval_graph_conv_uses_stored_ranges():
    x = np.linspace(-1.0, 1.0, 100).reshape(2, 5, 5, 2).astype(np.float32)
    f = np.linspace(-0.5, 0.6, 54).reshape(3, 3, 2, 3).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.layers.conv2d(tf.constant(x), 3, 3, padding="same", activation=tf.nn.relu,
                             kernel_initializer=tf.constant_initializer(f),
                             bias_initializer=tf.constant_initializer(0.05))
        out = tf.identity(y)
        tf.contrib.quantize.experimental_create_eval_graph(activation_bits=4)
        assert not [op for op in tf.get_default_graph().get_operations()
                    if op.name.split("/")[-1] in ("BatchMin", "AssignMinLast", "AssignMinEma")]
        got = _run(out)
    # TF 2.15: weights fake-quantized to [-6, 6] (narrow), activations to [0, 6], 4 bits
    tf_sample = [0, 0, 0, 0.8, 0.8, 0.4, 0.8, 0.8, 0.8, 0.8, 0.4, 0.4, 0.8, 0.8, 1.6, 1.2,
                 1.6, 0.8, 1.6, 0.4, 0, 0]
    np.testing.assert_allclose(got.ravel()[::7], tf_sample, atol=1e-6)


def test_symmetric_chained_layers_and_scope():
    with tf.Graph().as_default() as g:
        x = tf.constant(XS[0])
        h = tf.layers.dense(x, 3, activation=tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(KERNEL))
        with tf.variable_scope("head"):
            y = tf.layers.dense(h, 2, kernel_initializer=tf.constant_initializer(0.5))
        tf.contrib.quantize.experimental_create_training_graph(weight_bits=4, symmetric=True,
                                                               scope="head")
        names = sorted(v.op.name for v in tf.global_variables() if v.op.name.endswith(
            ("quant/min", "quant/max")))
        # only the head is rewritten; its bias add, with no activation, is quantized
        assert names == ["head/dense/act_quant/max", "head/dense/act_quant/min",
                         "head/dense/weights_quant/max", "head/dense/weights_quant/min"]
        assert g.get_operation_by_name("head/dense/weights_quant/FakeQuantWithMinMaxVars"
                                       ).get_attr("num_bits") == 4
        got = _run([y, g.get_tensor_by_name("head/dense/weights_quant/AssignMinLast:0")])
        assert got[1] == -0.5  # symmetric: min(batch min, -batch max)


def test_quant_delay_and_training_op_refusal():
    with tf.Graph().as_default() as g:
        x, out = _dense_model()
        tf.contrib.quantize.create_training_graph(quant_delay=2)
        plain = tf.nn.relu6(tf.matmul(x, tf.constant(KERNEL)) + BIAS)
        assert g.get_tensor_by_name("fake_quantization_step/Identity:0").dtype == tf.int64
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first, ref = sess.run([out, plain], {x: XS[0]})
            second = sess.run(out, {x: XS[0]})
            act_max = sess.run(g.get_tensor_by_name("dense/act_quant/max:0"))
        np.testing.assert_allclose(first, ref, rtol=1e-6)  # step 1 < 2: not quantized yet
        assert not np.allclose(second, ref, rtol=1e-4)
        # from step 2 on: on the activation grid [0, act_max] of 255 steps
        assert np.allclose(second * 255 / act_max, np.round(second * 255 / act_max), atol=1e-3)
    with tf.Graph().as_default():
        _, out = _dense_model()
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(out))
        with pytest.raises(ValueError, match="Training op found in graph"):
            tf.contrib.quantize.create_training_graph()


def test_rewrite_is_idempotent_and_new_session_sees_it():
    with tf.Graph().as_default() as g:
        x, out = _dense_model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(out, {x: XS[0]})
        tf.contrib.quantize.create_eval_graph()
        count = len(g.get_operations())
        tf.contrib.quantize.create_eval_graph()
        assert len(g.get_operations()) == count
        after = _run(out, {x: XS[0]})
    assert not np.array_equal(before, after)
    # eval ranges: weights [-6, 6] in 254 steps, activations [0, 6] in 255
    assert np.allclose(after * 255 / 6, np.round(after * 255 / 6), atol=1e-3)
