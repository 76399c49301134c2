"""TF1 programs "from the wild", round 10, area ``gen_rl``: generative models and deep
reinforcement learning in the style of carpedm20's DCGAN, hwalsuklee's and igul222's
WGANs, Géron's autoencoders, openai/baselines (A2C, PPO2, deepq, DDPG, TRPO) and
spinningup (DDPG, SAC), rewritten small on synthetic data.

The programs: a conditional DCGAN (``conv_cond_concat``, ``conv2d_transpose`` with an
``output_shape``, batch norm in training mode with per-scope ``UPDATE_OPS``, Adam with
``beta1=0.5`` on ``var_list``s picked by name); WGAN with weight clipping (RMSProp, a
``tf.group`` of clip assigns) and WGAN-GP (``tf.gradients`` at a random interpolate, the
penalty by ``reduce_sum``/``sqrt`` and by ``tf.norm``); a VAE on ``tf.distributions``
(``Normal`` samples, ``Bernoulli(logits=).log_prob``, ``kl_divergence``) next to the
hand-written KL; a denoising sparse autoencoder with tied weights; REINFORCE with
``tf.multinomial``/``tf.random.categorical`` and gradients fed back through placeholders;
A2C with an orthogonal initializer given as a function, the Gumbel-max action,
``cat_entropy``, ``clip_by_global_norm`` and ``RMSProp(decay, epsilon)``; PPO2's clipped
surrogate and value losses, ``approxkl`` and ``clipfrac``; DDPG's action gradients fed as
``-grad_ys`` and Polyak target updates; double DQN with a centered RMSProp with momentum,
``gather_nd`` and epsilon-greedy ``tf.where``; BEGAN's ``k_t``, CycleGAN's instance norm
and reflect padding, spectral norm, ProGAN's pixel norm and minibatch stddev, pix2pix's
EMA of losses; TRPO's Fisher-vector products and flat parameter assignment, SAC's
squashed Gaussian with ``clip_but_pass_gradient`` and a learned temperature.

Each program was first run under TensorFlow 2.15's ``tf.compat.v1`` with the tf-oracle;
the values asserted here are the ones TensorFlow printed. All of the programs above
matched from the start and stay as regression checks. The class of discrepancy found
is in ``tf.distributions`` (the last tests):

* a distribution drawing twice derived its second op seed as ``seed + 1``; TensorFlow
  derives it from an MD5 of the seed and a salt (``gen_new_seed``), so seeded samples of
  ``Beta``, ``StudentT`` and ``DirichletMultinomial`` were other numbers than TF's;
* ``Multinomial.sample`` with one count per batch member drew all members in one op;
  TensorFlow draws member by member in a ``map_fn``, one op whose stream advances;
* the statistics' graphs: ``SelectV2`` (TF's ``where_v2``) for undefined modes and
  moments, Laplace's ``loc + zeros_like(scale)``, StudentT's mode as ``Identity``,
  Exponential's log-density as Gamma's, Beta's normalization by ``lgamma``, Dirichlet's
  variance and Multinomial's log-density and variance as TF writes them;
* ``Normal.log_cdf`` / ``log_survival_function`` were ``log(cdf)`` (``-inf`` and a NaN
  gradient in the far tail); TF uses ``log_ndtr``'s asymptotic series there, and its
  layouts for ``survival_function`` (``ndtr``), ``quantile`` (``reconstruct``),
  ``cross_entropy`` and the normal-normal KL;
* ``Categorical.cdf`` was not implemented;
* ``validate_args``: ``Bernoulli``/``Categorical`` did not check ``probs`` as TF does (at
  most 1, summing to 1), Beta/Dirichlet concentrations and Beta samples and Bernoulli
  events lacked TF's checks and messages; the sign checks (``assert_positive`` & co.) and
  ``assert_rank``/``assert_near`` format a given message as TF (``"m.  "``), and
  ``assert_near`` no longer fails while the graph is built (TF fails when it runs);

and in ``tf.layers.batch_normalization``: ``renorm=True`` (batch renormalization, with
``renorm_clipping`` and ``renorm_momentum``) and ``virtual_batch_size`` (ghost batches)
raised NotImplementedError; both are TF's graphs now.

Not matched: the ``tuple/control_dependency`` TF puts on a gradient with respect to a
layer's input data when ``gate_gradients`` is on (flowgraph returns it ungated on
purpose: see ``flowgraph/ops/gradients.py``); ``DirichletMultinomial``'s op names.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _close(actual, expected, tol=2e-5):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=tol, atol=tol)


# -- a conditional DCGAN (carpedm20) -----------------------------------------------------
def _conv_cond_concat(x, y):
    xs, ys = x.get_shape(), y.get_shape()
    return tf.concat([x, y * tf.ones([xs[0], xs[1], xs[2], ys[3]])], 3)


def _conv2d(x, out, name):
    with tf.variable_scope(name):
        w = tf.get_variable("w", [5, 5, x.get_shape()[-1], out],
                            initializer=tf.truncated_normal_initializer(stddev=0.02))
        conv = tf.nn.conv2d(x, w, strides=[1, 2, 2, 1], padding="SAME")
        b = tf.get_variable("biases", [out], initializer=tf.constant_initializer(0.0))
        return tf.reshape(tf.nn.bias_add(conv, b), conv.get_shape())


def _deconv2d(x, output_shape, name):
    with tf.variable_scope(name):
        w = tf.get_variable("w", [5, 5, output_shape[-1], x.get_shape()[-1]],
                            initializer=tf.random_normal_initializer(stddev=0.02))
        deconv = tf.nn.conv2d_transpose(x, w, output_shape=output_shape, strides=[1, 2, 2, 1])
        b = tf.get_variable("biases", [output_shape[-1]], initializer=tf.constant_initializer(0.0))
        return tf.reshape(tf.nn.bias_add(deconv, b), deconv.get_shape())


def _linear(x, size, scope):
    shape = x.get_shape().as_list()
    with tf.variable_scope(scope):
        m = tf.get_variable("Matrix", [shape[1], size], tf.float32,
                            tf.random_normal_initializer(stddev=0.02))
        b = tf.get_variable("bias", [size], initializer=tf.constant_initializer(0.0))
        return tf.matmul(x, m) + b


def _bn(x, name, train=True):
    return tf.layers.batch_normalization(x, momentum=0.9, epsilon=1e-5, scale=True,
                                         training=train, name=name)


def test_conditional_dcgan_with_batch_norm_updates_per_scope():
    b_, z_dim, y_dim, h_ = 4, 8, 3, 8
    tf.set_random_seed(1)

    def lrelu(x):
        return tf.maximum(x, 0.2 * x)

    def discriminator(image, y, reuse=False):
        with tf.variable_scope("discriminator") as scope:
            if reuse:
                scope.reuse_variables()
            yb = tf.reshape(y, [b_, 1, 1, y_dim])
            h0 = _conv_cond_concat(lrelu(_conv2d(_conv_cond_concat(image, yb), 1 + y_dim,
                                                 "d_h0_conv")), yb)
            h1 = lrelu(_bn(_conv2d(h0, 6 + y_dim, "d_h1_conv"), "d_bn1"))
            h1 = tf.concat([tf.reshape(h1, [b_, -1]), y], 1)
            h2 = tf.concat([lrelu(_bn(_linear(h1, 16, "d_h2_lin"), "d_bn2")), y], 1)
            h3 = _linear(h2, 1, "d_h3_lin")
            return tf.nn.sigmoid(h3), h3

    def generator(z, y, train=True, reuse=False):
        with tf.variable_scope("generator") as scope:
            if reuse:
                scope.reuse_variables()
            yb = tf.reshape(y, [b_, 1, 1, y_dim])
            z = tf.concat([z, y], 1)
            h0 = tf.concat([tf.nn.relu(_bn(_linear(z, 32, "g_h0_lin"), "g_bn0", train)), y], 1)
            h1 = tf.nn.relu(_bn(_linear(h0, 8 * 2 * 2, "g_h1_lin"), "g_bn1", train))
            h1 = _conv_cond_concat(tf.reshape(h1, [b_, 2, 2, 8]), yb)
            h2 = tf.nn.relu(_bn(_deconv2d(h1, [b_, 4, 4, 8], "g_h2"), "g_bn2", train))
            return tf.nn.sigmoid(_deconv2d(_conv_cond_concat(h2, yb), [b_, h_, h_, 1], "g_h3"))

    y = tf.placeholder(tf.float32, [b_, y_dim], name="y")
    inputs = tf.placeholder(tf.float32, [b_, h_, h_, 1], name="real_images")
    z = tf.placeholder(tf.float32, [None, z_dim], name="z")
    z_sum = tf.summary.histogram("z", z)
    g = generator(z, y)
    d, d_logits = discriminator(inputs, y)
    sampler = generator(z, y, train=False, reuse=True)
    d_, d_logits_ = discriminator(g, y, reuse=True)
    g_sum = tf.summary.image("G", g)

    def sce(x, labels):
        return tf.nn.sigmoid_cross_entropy_with_logits(logits=x, labels=labels)

    d_loss_real = tf.reduce_mean(sce(d_logits, tf.ones_like(d)))
    d_loss = d_loss_real + tf.reduce_mean(sce(d_logits_, tf.zeros_like(d_)))
    g_loss = tf.reduce_mean(sce(d_logits_, tf.ones_like(d_)))
    t_vars = tf.trainable_variables()
    d_vars = [v for v in t_vars if "d_" in v.name]
    g_vars = [v for v in t_vars if "g_" in v.name]
    assert (g.name, sampler.name, d.name, d_logits.name) == (
        "generator/Sigmoid:0", "generator_1/Sigmoid:0", "discriminator/Sigmoid:0",
        "discriminator/d_h3_lin/add:0")
    assert (g_sum.name, d_loss.name, d_loss_real.name) == ("G:0", "add:0", "Mean:0")
    assert [o.name for o in tf.get_collection(tf.GraphKeys.UPDATE_OPS)][-4:] == [
        "discriminator_1/d_bn1/AssignMovingAvg", "discriminator_1/d_bn1/AssignMovingAvg_1",
        "discriminator_1/d_bn2/AssignMovingAvg", "discriminator_1/d_bn2/AssignMovingAvg_1"]
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 14
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS, "discriminator")):
        d_optim = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(d_loss, var_list=d_vars)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS, "generator/")):
        g_optim = tf.train.AdamOptimizer(0.0002, beta1=0.5).minimize(g_loss, var_list=g_vars)
    assert (d_optim.name, g_optim.name, len(d_optim.control_inputs)) == ("Adam", "Adam_1", 22)
    assert len(tf.global_variables()) == 92
    summ = tf.summary.merge([z_sum, g_sum, tf.summary.scalar("g_loss", g_loss)])
    rng = np.random.RandomState(0)
    bz = rng.uniform(-1, 1, [b_, z_dim]).astype(np.float32)
    by = np.eye(y_dim, dtype=np.float32)[[0, 1, 2, 0]]
    bx = rng.rand(b_, h_, h_, 1).astype(np.float32)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            _, dl = sess.run([d_optim, d_loss], {inputs: bx, z: bz, y: by})
            sess.run([g_optim, summ], {z: bz, y: by})
            _, gl = sess.run([g_optim, g_loss], {z: bz, y: by})
            losses.append((dl, gl))
        sample = sess.run(sampler, {z: bz, y: by})[0, :2, :2, 0]
        moving = sess.run(tf.global_variables("generator/g_bn2/moving_mean")[0])
    _close(losses, [[1.38804, 0.68992], [1.38691, 0.68881], [1.38668, 0.68872]])
    _close(sample, [[0.50742, 0.4957], [0.49417, 0.49989]])
    _close(moving, [-0.01195, 0.00345, 0.00228, 0.00338, -0.00164, 0.0167, -0.00439, 0.00159])


# -- WGAN with weight clipping, then WGAN-GP ---------------------------------------------
def test_wgan_weight_clipping_and_wgan_gp_gradient_penalty():
    b_, z_dim, x_dim = 6, 4, 5
    tf.set_random_seed(3)

    def dense(x, n, name, act=None):
        return tf.layers.dense(x, n, activation=act, name=name,
                               kernel_initializer=tf.glorot_uniform_initializer())

    def gen(z):
        with tf.variable_scope("G"):
            return dense(dense(z, 8, "h0", tf.nn.leaky_relu), x_dim, "out", tf.nn.tanh)

    def critic(x, reuse=False):
        with tf.variable_scope("D", reuse=reuse):
            return dense(dense(x, 8, "h0", lambda t: tf.nn.leaky_relu(t, alpha=0.2)), 1, "out")

    x = tf.placeholder(tf.float32, [None, x_dim])
    z = tf.placeholder(tf.float32, [None, z_dim])
    fake = gen(z)
    d_real, d_fake = critic(x), critic(fake, reuse=True)
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="D")
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "G")
    assert [v.name for v in d_vars] == ["D/h0/kernel:0", "D/h0/bias:0", "D/out/kernel:0",
                                        "D/out/bias:0"]
    d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
    g_loss = -tf.reduce_mean(d_fake)
    d_opt = tf.train.RMSPropOptimizer(5e-3).minimize(d_loss, var_list=d_vars)
    g_opt = tf.train.RMSPropOptimizer(5e-3).minimize(g_loss, var_list=g_vars)
    clip_d = [p.assign(tf.clip_by_value(p, -0.01, 0.01)) for p in d_vars]
    clip_op = tf.group(*clip_d)
    assert (clip_op.name, clip_op.type, clip_d[1].name) == ("group_deps", "NoOp", "Assign_1:0")
    with tf.name_scope("gp"):
        alpha = tf.random_uniform(shape=[tf.shape(x)[0], 1], minval=0., maxval=1., seed=7)
        interpolates = x + alpha * (fake - x)
        gradients = tf.gradients(critic(interpolates, reuse=True), [interpolates])[0]
        slopes = tf.sqrt(tf.reduce_sum(tf.square(gradients), reduction_indices=[1]))
        gradient_penalty = tf.reduce_mean((slopes - 1.) ** 2)
        slopes2 = tf.norm(gradients, axis=1)
    assert (alpha.name, gradients.name, slopes.name, gradient_penalty.name, slopes2.name) == (
        "gp/random_uniform:0", "gp/gradients/gp/D/h0/MatMul_grad/MatMul:0", "gp/Sqrt:0",
        "gp/Mean:0", "gp/norm/Squeeze:0")
    gp_d_loss = d_loss + 10 * gradient_penalty
    gp_d_opt = tf.train.AdamOptimizer(1e-4, beta1=0.5, beta2=0.9).minimize(
        gp_d_loss, var_list=d_vars)
    gp_g_opt = tf.train.AdamOptimizer(learning_rate=1e-4, beta1=0.5, beta2=0.9).minimize(
        g_loss, var_list=g_vars, colocate_gradients_with_ops=True)
    rng = np.random.RandomState(0)
    bx, bz = rng.randn(b_, x_dim).astype(np.float32), rng.randn(b_, z_dim).astype(np.float32)
    wgan, gp = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            for _ in range(2):
                _, dl = sess.run([d_opt, d_loss], {x: bx, z: bz})
                sess.run(clip_op)
            _, gl = sess.run([g_opt, g_loss], {z: bz})
            wgan.append((dl, gl))
        clipped = sess.run(d_vars[0])[0, :4]
        for _ in range(3):
            _, dl, pen, sl = sess.run([gp_d_opt, gp_d_loss, gradient_penalty, slopes],
                                      {x: bx, z: bz})
            _, gl = sess.run([gp_g_opt, g_loss], {z: bz})
            gp.append((dl, pen, sl[0], gl))
    _close(wgan, [[0.000091, -0.000049], [0.000072, -0.000046], [0.000052, -0.000043]], 2e-6)
    _close(clipped, [0.01, -0.01, -0.01, 0.00998])
    _close(gp, [[9.993091, 0.999305, 0.00036, -0.000043], [9.993086, 0.999304, 0.00037, -0.000045],
                [9.993033, 0.999298, 0.00038, -0.000044]], 6e-6)


# -- a VAE on tf.distributions -----------------------------------------------------------
def test_vae_with_normal_samples_bernoulli_log_prob_and_analytic_kl():
    tfd = tf.distributions
    b_, x_dim, latent = 4, 6, 2
    tf.set_random_seed(5)
    x = tf.placeholder(tf.float32, [None, x_dim], name="x")
    with tf.variable_scope("enc"):
        h = tf.layers.dense(x, 8, tf.nn.softplus)
        mu = tf.layers.dense(h, latent)
        sigma = tf.layers.dense(h, latent, tf.nn.softplus) + 1e-6
    q = tfd.Normal(loc=mu, scale=sigma, name="q_z")
    prior = tfd.Normal(loc=tf.zeros([latent]), scale=tf.ones([latent]))
    zs = q.sample(seed=11)
    eps = tf.random_normal(tf.shape(mu), 0, 1, dtype=tf.float32, seed=12)
    with tf.variable_scope("dec"):
        logits = tf.layers.dense(tf.layers.dense(mu + sigma * eps, 8, tf.nn.relu), x_dim)
    px = tfd.Bernoulli(logits=logits)
    ll = tf.reduce_sum(px.log_prob(x), 1)
    kl = tf.reduce_sum(tfd.kl_divergence(q, prior), 1)
    kl_manual = -0.5 * tf.reduce_sum(
        1 + tf.log(tf.square(sigma)) - tf.square(mu) - tf.square(sigma), 1)
    elbo = tf.reduce_mean(ll - kl)
    assert (zs.name, zs.shape.as_list(), ll.name, kl.name, elbo.name) == (
        "q_z/sample/Reshape:0", [None, 2], "Sum:0", "Sum_1:0", "Mean:0")
    assert (q.entropy().name, px.mean().name, px.probs.name) == (
        "q_z/entropy/add:0", "Bernoulli/mean/Identity:0", "Bernoulli/probs:0")
    train = tf.train.AdamOptimizer(1e-2).minimize(-elbo)
    bx = (np.random.RandomState(0).rand(b_, x_dim) > 0.5).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        steps = [sess.run([train, elbo, kl, kl_manual], {x: bx})[1:] for _ in range(4)]
        z_draw = sess.run(zs, {x: bx})
    _close([s[0] for s in steps], [-4.94901, -4.72805, -4.34167, -4.38625])
    _close(steps[0][1], [1.13729, 1.1531, 1.85353, 1.13729])
    _close(steps[3][2], [0.59879, 0.61584, 1.15753, 0.59879])
    _close(z_draw[:2], [[-0.28339, 0.71829], [-0.66411, 0.64095]])


# -- a denoising sparse autoencoder with tied weights (Géron) -----------------------------
def test_tied_weights_denoising_sparse_autoencoder():
    tf.set_random_seed(9)
    x = tf.placeholder(tf.float32, [None, 6])
    x_noisy = x + tf.random_normal(tf.shape(x), stddev=0.1, seed=3)
    dropped = tf.nn.dropout(x, keep_prob=0.8, seed=4)
    w1 = tf.Variable(tf.variance_scaling_initializer()([6, 3]), dtype=tf.float32, name="weights1")
    w2 = tf.transpose(w1, name="weights2")
    b1, b2 = tf.Variable(tf.zeros(3), name="biases1"), tf.Variable(tf.zeros(6), name="biases2")
    hidden = tf.nn.sigmoid(tf.matmul(x_noisy, w1) + b1)
    out = tf.matmul(hidden, w2) + b2
    hidden_mean = tf.reduce_mean(hidden, axis=0)
    sparsity = tf.reduce_sum(0.1 * tf.log(0.1 / hidden_mean)
                             + 0.9 * tf.log(0.9 / (1 - hidden_mean)))
    recon = tf.reduce_mean(tf.square(out - x))
    loss = recon + 0.2 * sparsity + 0.01 * tf.nn.l2_loss(w1)
    assert (w2.name, w2.op.type, dropped.name) == ("weights2:0", "Transpose", "dropout/SelectV2:0")
    opt = tf.train.AdamOptimizer(0.01)
    gv = opt.compute_gradients(loss)
    assert [(g.name, v.name) for g, v in gv] == [
        ("gradients/AddN_2:0", "weights1:0"),
        ("gradients/add_1_grad/tuple/control_dependency_1:0", "biases1:0"),
        ("gradients/add_2_grad/tuple/control_dependency_1:0", "biases2:0")]
    train = opt.apply_gradients(gv)
    gs = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, gs, 2, 0.5, staircase=True)
    train2 = tf.train.MomentumOptimizer(lr, 0.9, use_nesterov=True).minimize(recon, global_step=gs)
    bx = np.random.RandomState(1).rand(5, 6).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = [sess.run([train, loss, sparsity], {x: bx})[1:] for _ in range(3)]
        second = [sess.run([train2, recon, lr], {x: bx})[1:] for _ in range(3)]
        w, mask = sess.run(w1), sess.run(dropped, {x: bx})[0]
    _close(first, [[0.631139, 0.718541], [0.601535, 0.734281], [0.581401, 0.744741]])
    _close(second, [[0.399439, 0.1], [0.340070, 0.1], [0.270249, 0.05]])
    _close(w[0], [-0.08727, -0.52386, 0.18092])
    _close(mask, [0., 0.90041, 0., 0.37792, 0.18344, 0.11542])


# -- REINFORCE: tf.multinomial / tf.random.categorical, gradients fed back ----------------
@pytest.mark.filterwarnings("ignore:tf.to_float is deprecated")
def test_policy_gradient_with_multinomial_and_gradients_fed_through_placeholders():
    tf.set_random_seed(42)
    x = tf.placeholder(tf.float32, shape=[None, 4])
    hidden = tf.layers.dense(x, 4, activation=tf.nn.elu,
                             kernel_initializer=tf.variance_scaling_initializer())
    logits = tf.layers.dense(hidden, 1)
    p_left_right = tf.concat(axis=1, values=[tf.nn.sigmoid(logits), 1 - tf.nn.sigmoid(logits)])
    action = tf.multinomial(tf.log(p_left_right), num_samples=1, seed=1)
    action2 = tf.random.categorical(tf.log(p_left_right), 3, seed=2, dtype=tf.int32)
    action3 = tf.squeeze(tf.multinomial(logits=tf.concat([logits, -logits], 1), num_samples=1,
                                        output_dtype=tf.int32), axis=1)
    assert (action.name, action.dtype, action.shape.as_list()) == (
        "multinomial/Multinomial:0", tf.int64, [None, 1])
    assert (action2.name, action2.dtype, action3.name, action3.shape.as_list()) == (
        "categorical/Multinomial:0", tf.int32, "Squeeze:0", [None])
    y = 1. - tf.to_float(action)
    xent = tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits)
    optimizer = tf.train.AdamOptimizer(0.01)
    grads_and_vars = optimizer.compute_gradients(xent)
    gradients = [g for g, _ in grads_and_vars]
    placeholders = [tf.placeholder(tf.float32, shape=g.get_shape()) for g in gradients]
    training_op = optimizer.apply_gradients(
        [(p, v) for p, (_, v) in zip(placeholders, grads_and_vars)])
    obs = tf.placeholder(tf.float32, [None, 4])
    acts, adv = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.float32, [None])
    with tf.variable_scope("pi"):
        lg = tf.layers.dense(tf.layers.dense(obs, 8, tf.tanh), 3)
    logp_all = tf.nn.log_softmax(lg)
    logp = tf.reduce_sum(tf.one_hot(acts, depth=3) * logp_all, axis=1)
    pi_sample = tf.squeeze(tf.multinomial(lg, 1), axis=1)
    neglogp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=acts, logits=lg)
    pi_loss = -tf.reduce_mean(logp * adv)
    ent = -tf.reduce_sum(tf.nn.softmax(lg) * logp_all, 1)
    train_pi = tf.train.GradientDescentOptimizer(0.1).minimize(pi_loss - 0.01 * tf.reduce_mean(ent))
    assert (pi_sample.name, pi_sample.dtype, logp.name) == ("Squeeze_1:0", tf.int64, "Sum:0")
    rng = np.random.RandomState(0)
    draws, all_g = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            o = rng.randn(3, 4).astype(np.float32)
            a, g = sess.run([action, gradients], {x: o})
            all_g.append(g)
            draws.append([a.ravel().tolist(), sess.run(action2, {x: o}).tolist(),
                          sess.run(action3, {x: o}).tolist()])
        rewards, running = np.empty(4), 0.0
        for s, r in reversed(list(enumerate([1., 0., 1., 1.]))):
            running = r + 0.95 * running
            rewards[s] = running
        sess.run(training_op, {ph: np.mean([r * all_g[k][i] for k, r in enumerate(rewards)], 0)
                               for i, ph in enumerate(placeholders)})
        kernel_row = sess.run(tf.trainable_variables()[0])[0]
        o = rng.randn(5, 4).astype(np.float32)
        pg = []
        for _ in range(3):
            a = sess.run(pi_sample, {obs: o})
            _, lv, ev, nl = sess.run([train_pi, pi_loss, ent, neglogp],
                                     {obs: o, acts: a, adv: np.arange(5, dtype=np.float32)})
            pg.append((a.tolist(), lv, ev[:2], nl[:2]))
    assert draws == [
        [[0, 0, 1], [[1, 1, 0], [0, 1, 1], [0, 1, 0]], [1, 1, 1]],
        [[0, 0, 1], [[1, 1, 0], [0, 0, 1], [1, 0, 0]], [1, 0, 1]],
        [[0, 1, 1], [[0, 1, 1], [1, 0, 0], [0, 0, 0]], [0, 1, 1]],
        [[0, 0, 1], [[0, 0, 0], [0, 1, 0], [1, 0, 0]], [0, 0, 0]]]
    _close(kernel_row, [-0.1811, 0.30478, -0.07921, -0.67852])
    assert [p[0] for p in pg] == [[1, 0, 0, 1, 1], [2, 0, 2, 2, 2], [2, 1, 2, 1, 1]]
    _close([p[1] for p in pg], [2.156641, 2.624203, 2.024104])
    _close(pg[2][2], [0.97666, 1.02049])
    _close(pg[1][3], [1.3046, 1.64527])


# -- A2C as openai/baselines writes it ---------------------------------------------------
def _ortho_init(scale=1.0):
    def _init(shape, dtype, partition_info=None):
        shape = tuple(shape)
        flat = shape if len(shape) == 2 else (int(np.prod(shape[:-1])), shape[-1])
        u, _, v = np.linalg.svd(np.random.RandomState(0).normal(0.0, 1.0, flat),
                                full_matrices=False)
        q = (u if u.shape == flat else v).reshape(shape)
        return (scale * q[:shape[0], :shape[1]]).astype(np.float32)
    return _init


def test_a2c_with_orthogonal_init_gumbel_actions_entropy_and_clipped_rmsprop():
    tf.set_random_seed(0)

    def conv(x, scope, nf, rf, stride, init_scale):
        with tf.variable_scope(scope):
            w = tf.get_variable("w", [rf, rf, x.get_shape()[3].value, nf],
                                initializer=_ortho_init(init_scale))
            b = tf.get_variable("b", [1, 1, 1, nf], initializer=tf.constant_initializer(0.0))
            return b + tf.nn.conv2d(x, w, strides=[1, stride, stride, 1], padding="VALID")

    def fc(x, scope, nh, init_scale=1.0):
        with tf.variable_scope(scope):
            w = tf.get_variable("w", [x.get_shape()[1].value, nh],
                                initializer=_ortho_init(init_scale))
            b = tf.get_variable("b", [nh], initializer=tf.constant_initializer(0.0))
            return tf.matmul(x, w) + b

    def cat_entropy(logits):
        a0 = logits - tf.reduce_max(logits, 1, keepdims=True)
        ea0 = tf.exp(a0)
        z0 = tf.reduce_sum(ea0, 1, keepdims=True)
        return tf.reduce_sum(ea0 / z0 * (tf.log(z0) - a0), 1)

    nbatch, nact = 6, 4
    obs_ph = tf.placeholder(tf.uint8, [None, 8, 8, 2], name="Ob")

    def policy(reuse):
        with tf.variable_scope("model", reuse=reuse):
            h = tf.nn.relu(conv(tf.cast(obs_ph, tf.float32) / 255., "c1", 4, 3, 2, np.sqrt(2)))
            h = tf.reshape(h, [-1, int(np.prod([v.value for v in h.get_shape()[1:]]))])
            h = tf.nn.relu(fc(h, "fc1", 16, np.sqrt(2)))
            pi, vf = fc(h, "pi", nact, 0.01), fc(h, "v", 1)[:, 0]
        u = tf.random_uniform(tf.shape(pi), seed=5)
        return pi, vf, tf.argmax(pi - tf.log(-tf.log(u)), axis=-1)

    _, v_step, a_step = policy(False)
    pi, vf, _ = policy(True)
    assert (a_step.name, a_step.dtype, vf.name) == ("ArgMax:0", tf.int64, "model_1/strided_slice:0")
    a_ph, adv_ph = tf.placeholder(tf.int32, [nbatch]), tf.placeholder(tf.float32, [nbatch])
    r_ph, lr_ph = tf.placeholder(tf.float32, [nbatch]), tf.placeholder(tf.float32, [])
    neglogpac = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=pi, labels=a_ph)
    pg_loss = tf.reduce_mean(adv_ph * neglogpac)
    vf_loss = tf.losses.mean_squared_error(tf.squeeze(vf), r_ph)
    entropy = tf.reduce_mean(cat_entropy(pi))
    params = tf.trainable_variables("model")
    grads, grad_norm = tf.clip_by_global_norm(
        tf.gradients(pg_loss - entropy * 0.01 + vf_loss * 0.5, params), 0.5)
    assert (grad_norm.name, grads[1].name, vf_loss.name) == (
        "global_norm/global_norm:0", "clip_by_global_norm/clip_by_global_norm/_1:0",
        "mean_squared_error/value:0")
    trainer = tf.train.RMSPropOptimizer(learning_rate=lr_ph, decay=0.99, epsilon=1e-5)
    train = trainer.apply_gradients(list(zip(grads, params)))
    assert [v.name for v in trainer.variables()][:3] == [
        "model/c1/b/RMSProp:0", "model/c1/b/RMSProp_1:0", "model/c1/w/RMSProp:0"]
    rng = np.random.RandomState(0)
    obs = rng.randint(0, 255, [nbatch, 8, 8, 2]).astype(np.uint8)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for upd in range(3):
            a, v = sess.run([a_step, v_step], {obs_ph: obs})
            r = rng.rand(nbatch).astype(np.float32)
            vals = sess.run([pg_loss, vf_loss, entropy, grad_norm, train],
                            {obs_ph: obs, a_ph: a.astype(np.int32), adv_ph: r - v, r_ph: r,
                             lr_ph: 7e-4 * (1 - upd / 3.)})
            out.append((a.tolist(), vals[:4]))
        v_kernel = sess.run(params[-2])[:2, 0]
    assert [o[0] for o in out] == [[0, 2, 2, 0, 2, 3], [3, 3, 3, 0, 1, 2], [0, 2, 1, 3, 3, 3]]
    _close([o[1] for o in out], [[0.457253, 0.324340, 1.386283, 1.185762],
                                 [0.539677, 0.248689, 1.386284, 1.112226],
                                 [0.575131, 0.296161, 1.386284, 1.309553]])
    _close(v_kernel, [0.41769, 0.09475])


# -- PPO2's clipped objective ------------------------------------------------------------
def test_ppo2_clipped_surrogate_value_clipping_approxkl_and_clipfrac():
    tf.set_random_seed(1)
    ob_ph = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("ppo2_model", reuse=tf.AUTO_REUSE):
        h = tf.layers.dense(ob_ph, 16, tf.tanh, name="pi_fc0",
                            kernel_initializer=tf.orthogonal_initializer(np.sqrt(2)))
        mean = tf.layers.dense(h, 2, kernel_initializer=tf.orthogonal_initializer(0.01), name="pi")
        logstd = tf.get_variable(name="pi/logstd", shape=[1, 2], initializer=tf.zeros_initializer())
        vh = tf.layers.dense(ob_ph, 16, tf.tanh, name="vf_fc0",
                             kernel_initializer=tf.orthogonal_initializer(np.sqrt(2)))
        vpred = tf.layers.dense(vh, 1, name="vf")[:, 0]
    std = tf.exp(logstd)

    def neglogp(x):
        return (0.5 * tf.reduce_sum(tf.square((x - mean) / std), axis=-1)
                + 0.5 * np.log(2.0 * np.pi) * tf.cast(tf.shape(x)[-1], tf.float32)
                + tf.reduce_sum(logstd, axis=-1))

    sample = mean + std * tf.random_normal(tf.shape(mean), seed=3)
    a_ph, adv_ph, r_ph = (tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None]),
                          tf.placeholder(tf.float32, [None]))
    old_nlp, old_v = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None])
    lr, cliprange = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    neglogpac = neglogp(a_ph)
    entropy = tf.reduce_mean(tf.reduce_sum(logstd + .5 * np.log(2.0 * np.pi * np.e), axis=-1))
    vclipped = old_v + tf.clip_by_value(vpred - old_v, -cliprange, cliprange)
    vf_loss = .5 * tf.reduce_mean(tf.maximum(tf.square(vpred - r_ph), tf.square(vclipped - r_ph)))
    ratio = tf.exp(old_nlp - neglogpac)
    pg_loss = tf.reduce_mean(tf.maximum(-adv_ph * ratio, -adv_ph * tf.clip_by_value(
        ratio, 1.0 - cliprange, 1.0 + cliprange)))
    approxkl = .5 * tf.reduce_mean(tf.square(neglogpac - old_nlp))
    clipfrac = tf.reduce_mean(tf.cast(tf.greater(tf.abs(ratio - 1.0), cliprange), tf.float32))
    params = tf.trainable_variables("ppo2_model")
    trainer = tf.train.AdamOptimizer(learning_rate=lr, epsilon=1e-5)
    grads, var = zip(*trainer.compute_gradients(pg_loss + vf_loss * 0.5, params))
    grads, grad_norm = tf.clip_by_global_norm(grads, 0.5)
    train = trainer.apply_gradients(list(zip(grads, var)))
    assert (clipfrac.name, approxkl.name, ratio.name, grads[-1].name) == (
        "Mean_4:0", "mul_6:0", "Exp_1:0", "clip_by_global_norm/clip_by_global_norm/_8:0")
    rng = np.random.RandomState(2)
    ob = rng.randn(6, 3).astype(np.float32)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, v = sess.run([sample, vpred], {ob_ph: ob})
        nl = sess.run(neglogpac, {ob_ph: ob, a_ph: a})
        ret = rng.randn(6).astype(np.float32)
        adv = (ret - v - (ret - v).mean()) / ((ret - v).std() + 1e-8)
        for _ in range(4):
            for mb in (np.arange(0, 3), np.arange(3, 6)):
                out.append(sess.run(
                    [pg_loss, vf_loss, entropy, approxkl, clipfrac, grad_norm, train],
                    {ob_ph: ob[mb], a_ph: a[mb], adv_ph: adv[mb], r_ph: ret[mb],
                     old_nlp: nl[mb], old_v: v[mb], lr: 3e-2, cliprange: 0.2})[:6])
        final_logstd = sess.run(logstd)
    _close(out[:2], [[-0.625437, 0.122430, 2.837877, 0.0, 0.0, 1.200038],
                     [0.618850, 0.966412, 2.777999, 0.000720, 0.0, 3.923238]], 1e-5)
    _close(out[-1], [0.441366, 0.525347, 2.539520, 0.377695, 0.666667, 0.489386], 1e-5)
    _close([o[4] for o in out], [0, 0, 0.666667, 0.666667, 0.666667, 0.666667, 1, 0.666667])
    _close(final_logstd, [[-0.18436, -0.14346]])


# -- double DQN (baselines deepq) --------------------------------------------------------
def test_double_dqn_with_centered_rmsprop_momentum_and_epsilon_greedy_actions():
    tf.set_random_seed(11)
    n_act = 3

    def q_net(x, scope, reuse=False):
        with tf.variable_scope(scope, reuse=reuse):
            return tf.layers.dense(tf.layers.dense(x, 8, tf.nn.relu, name="fc"), n_act, name="q")

    obs_t = tf.placeholder(tf.float32, [None, 4], name="obs_t")
    act_t = tf.placeholder(tf.int32, [None], name="action")
    rew_t = tf.placeholder(tf.float32, [None], name="reward")
    obs_tp1 = tf.placeholder(tf.float32, [None, 4], name="obs_tp1")
    done = tf.placeholder(tf.float32, [None], name="done")
    q_t = q_net(obs_t, "q_func")
    q_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                               scope=tf.get_variable_scope().name + "q_func")
    q_tp1 = q_net(obs_tp1, "target_q_func")
    target_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="target_q_func")
    q_sel = tf.reduce_sum(q_t * tf.one_hot(act_t, n_act), 1)
    best = tf.argmax(q_net(obs_tp1, "q_func", reuse=True), 1)
    target = rew_t + 0.99 * (1.0 - done) * tf.reduce_sum(q_tp1 * tf.one_hot(best, n_act), 1)
    td_error = q_sel - tf.stop_gradient(target)
    errors = tf.where(tf.abs(td_error) < 1.0, tf.square(td_error) * 0.5, tf.abs(td_error) - 0.5)
    loss = tf.reduce_mean(errors)
    idx = tf.stack([tf.range(tf.shape(act_t)[0]), act_t], axis=1)
    loss2 = tf.losses.huber_loss(target, tf.gather_nd(q_t, idx),
                                 reduction=tf.losses.Reduction.MEAN)
    assert (q_sel.name, best.dtype, errors.name, idx.name, loss2.name) == (
        "Sum:0", tf.int64, "Select:0", "stack:0", "huber_loss/value:0")
    optimizer = tf.train.RMSPropOptimizer(learning_rate=0.01, decay=0.95, momentum=0.5,
                                          epsilon=0.01, centered=True)
    gradients = [(tf.clip_by_norm(g, 10.0), v)
                 for g, v in optimizer.compute_gradients(loss, var_list=q_vars)]
    optimize = optimizer.apply_gradients(gradients)
    assert [v.name for v in optimizer.variables()][:3] == [
        "q_func/fc/bias/RMSProp:0", "q_func/fc/bias/RMSProp_1:0", "q_func/fc/bias/RMSProp_2:0"]
    update_target = tf.group(*[t.assign(v) for v, t in zip(
        sorted(q_vars, key=lambda v: v.name), sorted(target_vars, key=lambda v: v.name))])
    train2 = tf.train.RMSPropOptimizer(0.005, 0.9, 0.9, 1e-6).minimize(
        loss2, var_list=tf.trainable_variables("q_func"))
    eps = tf.placeholder(tf.float32, ())
    size = tf.shape(obs_t)[0]
    random_actions = tf.random_uniform(tf.stack([size]), minval=0, maxval=n_act, dtype=tf.int64,
                                       seed=9)
    chose_random = tf.random_uniform(tf.stack([size]), minval=0, maxval=1, seed=10) < eps
    actions = tf.where(chose_random, random_actions, tf.argmax(q_t, axis=1))
    assert (actions.name, actions.dtype) == ("Select_1:0", tf.int64)
    rng = np.random.RandomState(5)
    buf = dict(o=rng.randn(20, 4).astype(np.float32), a=rng.randint(0, n_act, 20),
               r=rng.randn(20).astype(np.float32), o2=rng.randn(20, 4).astype(np.float32),
               d=(rng.rand(20) > 0.8).astype(np.float32))
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update_target)
        for t in range(4):
            ix = rng.randint(0, 20, 5)
            feed = {obs_t: buf["o"][ix], act_t: buf["a"][ix], rew_t: buf["r"][ix],
                    obs_tp1: buf["o2"][ix], done: buf["d"][ix]}
            td, lv, _ = sess.run([td_error, loss, optimize], feed)
            lv2, _ = sess.run([loss2, train2], feed)
            out.append((td[:3], lv, lv2))
            if t == 1:
                sess.run(update_target)
        acts = sess.run(actions, {obs_t: buf["o"][:6], eps: 0.5})
    _close(out[0][0], [0.82392, 0.02128, -1.50342])
    _close(out[3][0], [-1.72337, 0.87756, 1.3165])
    _close([(o[1], o[2]) for o in out], [[0.371049, 0.364577], [0.219737, 0.212540],
                                         [0.687469, 0.666952], [0.812844, 0.784625]])
    assert acts.tolist() == [0, 0, 2, 1, 2, 0]


# -- tf.distributions: seeds, batched Multinomial draws, the statistics' graphs ------------
def _dists():
    tfd = tf.distributions
    return dict(
        beta=tfd.Beta([2., 3.], [1.5, 0.5]),
        st=tfd.StudentT([3., 5.], [0., 1.], [1., 2.]),
        mn=tfd.Multinomial(total_count=[3., 5.], logits=[[0., 1., 2.], [1., 1., -1.]]),
        dm=tfd.DirichletMultinomial(total_count=4., concentration=[[1., 2., 3.], [2., 2., 2.]]))


def test_distributions_derive_their_second_seed_as_tensorflow():
    # Beta draws two Gammas, StudentT a Normal and a Gamma, DirichletMultinomial a Gamma
    # and a categorical: the second op seed is TF's gen_new_seed(seed, salt), not seed + 1.
    from flowgraph.distributions.distribution import gen_new_seed

    assert gen_new_seed(None, "beta") is None
    assert gen_new_seed(5, "beta") == 1539300293  # TF 2.15 printed this
    tf.set_random_seed(2)
    ds = _dists()
    samples = {k: d.sample(3, seed=5) for k, d in ds.items()}
    with tf.Session() as sess:
        got = sess.run(samples)
    _close(got["beta"], [[0.5757, 0.8296], [0.7551, 0.8527], [0.0732, 0.9886]], 1e-4)
    _close(got["st"], [[-0.3648, -3.4209], [1.1277, -0.5766], [0.0978, 3.2973]], 1e-4)
    assert got["dm"].tolist() == [[[0, 1, 3], [4, 0, 0]], [[0, 0, 4], [1, 0, 3]],
                                  [[1, 1, 2], [3, 1, 0]]]
    # one count per batch member: TF draws member by member (a map_fn over one op)
    assert got["mn"].tolist() == [[[0, 1, 2], [3, 2, 0]], [[0, 1, 2], [0, 4, 1]],
                                  [[1, 0, 2], [2, 3, 0]]]
    assert samples["mn"].name == "Multinomial/sample/Reshape_3:0"
    assert samples["mn"].shape.as_list() == [3, 2, 3]


def test_distribution_statistics_are_built_as_tensorflow_builds_them():
    tfd = tf.distributions
    ds = dict(_dists(), gamma=tfd.Gamma([2., 0.5], [1., 3.]), expo=tfd.Exponential([0.5, 2.]),
              unif=tfd.Uniform([0., -1.], [1., 3.]), lap=tfd.Laplace([0., 1.], [1., 0.5]),
              dir=tfd.Dirichlet([[1., 2., 3.], [0.5, 0.5, 4.]]))
    x = dict(beta=[0.3, 0.9], st=[0.1, 2.], mn=[[1., 1., 1.], [2., 2., 1.]], gamma=[1.5, 0.2],
             expo=[1., 0.3], unif=[0.5, 0.], lap=[0.2, 1.5], dir=[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    names = {}
    for k, d in ds.items():
        if k in x:
            names[k + ".log_prob"] = d.log_prob(x[k])
    names.update({
        "beta.entropy": ds["beta"].entropy(), "beta.variance": ds["beta"].variance(),
        "beta.mode": ds["beta"].mode(), "gamma.mode": ds["gamma"].mode(),
        "expo.mode": ds["expo"].mode(), "unif.prob": ds["unif"].prob(x["unif"]),
        "lap.entropy": ds["lap"].entropy(), "lap.mean": ds["lap"].mean(),
        "lap.stddev": ds["lap"].stddev(), "lap.mode": ds["lap"].mode(),
        "st.mean": ds["st"].mean(), "st.variance": ds["st"].variance(),
        "st.mode": ds["st"].mode(), "dir.variance": ds["dir"].variance(),
        "mn.variance": ds["mn"].variance()})
    assert {k: t.name for k, t in names.items()} == {
        "beta.log_prob": "Beta/log_prob/sub_3:0", "st.log_prob": "StudentT/log_prob/sub_2:0",
        "mn.log_prob": "Multinomial/log_prob/sub:0", "gamma.log_prob": "Gamma/log_prob/sub_3:0",
        "expo.log_prob": "Exponential/log_prob/sub_3:0", "unif.log_prob": "Uniform/log_prob/Log:0",
        "lap.log_prob": "Laplace/log_prob/sub_1:0", "dir.log_prob": "Dirichlet/log_prob/sub_1:0",
        "beta.entropy": "Beta/entropy/add_1:0", "beta.variance": "Beta/variance/truediv_2:0",
        "beta.mode": "Beta/mode/SelectV2:0", "gamma.mode": "Gamma/mode/SelectV2:0",
        "expo.mode": "Exponential/mode/SelectV2:0", "unif.prob": "Uniform/prob/SelectV2_1:0",
        "lap.entropy": "Laplace/entropy/add_1:0", "lap.mean": "Laplace/mean/add:0",
        "lap.stddev": "Laplace/stddev/add:0", "lap.mode": "Laplace/mode/add:0",
        "st.mean": "StudentT/mean/SelectV2:0", "st.variance": "StudentT/variance/SelectV2_2:0",
        "st.mode": "StudentT/mode/Identity:0", "dir.variance": "Dirichlet/variance/mul_1:0",
        "mn.variance": "Multinomial/variance/sub:0"}
    with tf.Session() as sess:
        got = sess.run(names)
    expected = {
        "beta.log_prob": [-0.0606, 0.876], "beta.entropy": [-0.1081, -1.1081],
        "beta.variance": [0.0544, 0.0272], "beta.mode": [0.6667, np.nan],
        "gamma.log_prob": [-1.0945, 0.1817], "gamma.mode": [1.0, np.nan],
        "expo.log_prob": [-1.1931, 0.0931], "expo.mode": [np.nan, np.nan],
        "unif.log_prob": [0.0, -1.3863], "unif.prob": [1.0, 0.25],
        "lap.log_prob": [-0.8931, -1.0], "lap.entropy": [1.6931, 1.0], "lap.mean": [0.0, 1.0],
        "lap.stddev": [1.4142, 0.7071], "lap.mode": [0.0, 1.0],
        "st.log_prob": [-1.0075, -1.8081], "st.mean": [0.0, 1.0], "st.variance": [3.0, 6.6667],
        "st.mode": [0.0, 1.0], "dir.log_prob": [1.5041, 1.8747],
        "dir.variance": [[0.0198, 0.0317, 0.0357], [0.015, 0.015, 0.0267]],
        "mn.log_prob": [-2.4311, -2.3919],
        "mn.variance": [[0.2458, 0.5545, 0.6681], [1.245, 1.245, 0.2968]]}
    for k, v in expected.items():
        _close(got[k], v, 2e-4)
    # StudentT's variance: infinite for 1 < df <= 2, NaN for df <= 1, and a finite gradient
    df = tf.constant([0.5, 1.5, 4.0])
    t = tf.distributions.StudentT(df, 0., 1.)
    (grad,) = tf.gradients(tf.reduce_sum(t.variance() * [0., 0., 1.]), [df])
    with tf.Session() as sess:
        var, g = sess.run([t.variance(), grad])
    assert np.isnan(var[0]) and np.isinf(var[1]) and var[2] == 2.0
    _close(g, [0.0, 0.0, -0.5])


def test_normal_tail_log_cdf_survival_quantile_and_cross_entropy_as_tensorflow():
    # log_cdf / log_survival_function go through TF's log_ndtr: an asymptotic series far
    # in the lower tail (log(cdf) was -inf there, and its gradient NaN)
    tfd = tf.distributions
    x32 = tf.constant([-40., -12., -5., 0., 6.])
    x64 = tf.constant([-40., -25., 12.], tf.float64)
    n01 = tfd.Normal(0., 1.)
    n64 = tfd.Normal(tf.constant(0., tf.float64), tf.constant(1., tf.float64))
    lcdf32, lcdf64, lsf64 = n01.log_cdf(x32), n64.log_cdf(x64), n64.log_survival_function(x64)
    (grad,) = tf.gradients(tf.reduce_sum(lcdf32), [x32])
    n = tfd.Normal(loc=[[0., 1.], [2., 3.]], scale=0.5)
    ts = dict(lcdf=n.log_cdf(1.), sf=n.survival_function(1.),
              q=n.quantile([[0.1, 0.5], [0.9, 0.99]]),
              ce=n.cross_entropy(tfd.Normal(0., 1.)), kl=n.kl_divergence(tfd.Normal(0., 1.)))
    assert {k: t.name for k, t in ts.items()} == {
        "lcdf": "Normal_2/log_cdf/log_ndtr/SelectV2_5:0",
        "sf": "Normal_2/survival_function/ndtr/mul_1:0",
        "q": "Normal_2/quantile/reconstruct/add:0",
        "ce": "Normal_2/cross_entropy/cross_entropy/add:0",
        "kl": "Normal_2/kl_divergence/KullbackLeibler/kl_normal_normal/add:0"}
    with tf.Session() as sess:
        got = sess.run(dict(ts, lcdf32=lcdf32, lcdf64=lcdf64, lsf64=lsf64, grad=grad))
    _close(got["lcdf32"], [-804.60846, -75.410675, -15.064999, -0.6931472, -9.865893e-10], 1e-6)
    np.testing.assert_allclose(got["lcdf64"], [-804.6084420137697, -316.63940800869966,
                                               -1.776482112077648e-33], rtol=1e-12)
    np.testing.assert_allclose(got["lsf64"], [-0.0, -3.05669670638249e-138, -75.41067300156882],
                               rtol=1e-12)
    _close(got["grad"], [40.024967, 12.082214, 5.186504, 0.7978845, 6.075895e-09], 1e-6)
    _close(got["lcdf"], [[-0.023, -0.6931], [-3.7832, -10.3601]], 1e-4)
    _close(got["sf"], [[0.0228, 0.5], [0.9772, 1.0]], 1e-4)
    _close(got["q"], [[-0.6408, 1.0], [2.6408, 4.1632]], 1e-4)
    _close(got["ce"], [[1.0439, 1.5439], [3.0439, 5.5439]], 1e-4)
    _close(got["kl"], [[0.3181, 0.8181], [2.3181, 4.8181]], 1e-4)


def test_categorical_cdf_is_the_probability_of_a_smaller_class():
    cat = tf.distributions.Categorical(logits=tf.zeros([2, 3]), dtype=tf.int64)
    cdf = cat.cdf([1, 2])
    assert cdf.name == "Categorical/cdf/Reshape_2:0"
    draws = cat.sample(2, seed=3)
    b = tf.distributions.Bernoulli(probs=[0.3, 0.6], dtype=tf.bool)
    with tf.Session() as sess:
        got_cdf, got_bcast = sess.run([cdf, cat.cdf(2)])
        assert sess.run(draws).dtype == np.int64
        assert sess.run(b.sample(seed=2)).dtype == np.bool_
    _close(got_cdf, [0.33333, 0.66667], 1e-5)
    _close(got_bcast, [0.66667, 0.66667], 1e-5)


# -- batch renormalization and ghost batches (were NotImplementedError) -------------------
def test_batch_renormalization_trains_its_averages_as_tensorflow():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, training=True, renorm=True, renorm_momentum=0.9,
                                      momentum=0.8,
                                      renorm_clipping={"rmax": 1.5, "rmin": 0.5, "dmax": 0.3})
    tr = tf.placeholder(tf.bool, [])
    x4 = tf.placeholder(tf.float32, [None, 2, 2, 2])
    y4 = tf.layers.batch_normalization(x4, training=tr, renorm=True, name="bn4")
    assert (y.name, y4.name) == ("batch_normalization/batchnorm/add_1:0", "bn4/batchnorm/add_1:0")
    assert [v.name for v in tf.global_variables()][:7] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0",
        "batch_normalization/moving_stddev:0", "batch_normalization/renorm_mean:0",
        "batch_normalization/renorm_stddev:0"]
    assert [o.name for o in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
        "batch_normalization/AssignMovingAvg_2", "batch_normalization/AssignNewValue",
        "bn4/cond_6/Merge", "bn4/cond_7/Merge"]
    loss = tf.reduce_sum(y * tf.constant([1., 2., 3.])) + tf.reduce_sum(tf.square(y4))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.group(train)
    rng = np.random.RandomState(0)
    outs = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            bx = (rng.randn(4, 3) * 2 + 1).astype(np.float32)
            b4 = rng.randn(3, 2, 2, 2).astype(np.float32)
            outs.append(sess.run([y, train], {x: bx, x4: b4, tr: True})[0][0])
        got = {v.op.name: sess.run(v) for v in tf.global_variables()}
        inference, training = (sess.run(y4, {x4: b4, tr: t})[0, 0] for t in (False, True))
    _close(outs, [[1.14529, -0.0184, 1.3154], [1.56445, 0.23888, -1.16609],
                  [0.79668, -2.36385, -1.44405]], 1e-4)
    expected = {
        "batch_normalization/gamma": [0.75096, 0.60221, 0.93101],
        "batch_normalization/beta": [-1.2, -2.4, -3.6],
        "batch_normalization/moving_mean": [0.83848, 0.54243, 0.16361],
        "batch_normalization/moving_variance": [1.78606, 2.04406, 1.68138],
        "batch_normalization/moving_stddev": [1.33681, 1.43006, 1.29707],
        "batch_normalization/renorm_mean": [0.48577, 0.32169, 0.1126],
        "batch_normalization/renorm_stddev": [1.18633, 1.24227, 1.16933],
        "bn4/gamma": [-1.19959, 1.15541], "bn4/beta": [3.38873, 1.04887],
        "bn4/moving_variance": [0.99637, 0.99003], "bn4/renorm_stddev": [0.99869, 0.99551]}
    for name, value in expected.items():
        _close(got[name], value, 1e-4)
    # unclipped, with equal momenta: the corrected batch statistics are the averages
    _close(inference, [[1.59935, 3.24546], [1.97108, 0.83622]], 1e-4)
    _close(training, [[1.59935, 3.24546], [1.97108, 0.83622]], 1e-4)


def test_ghost_batch_normalization_with_virtual_batch_size():
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, training=True, virtual_batch_size=2, momentum=0.5)
    x4 = tf.placeholder(tf.float32, [6, 2, 2, 2])
    tr = tf.placeholder(tf.bool, [])
    y4 = tf.layers.batch_normalization(x4, training=tr, virtual_batch_size=3, axis=3, name="bn4")
    y5 = tf.layers.batch_normalization(x4, training=False, virtual_batch_size=3, name="bn5")
    assert (y.name, y.shape.as_list(), y4.name, y4.shape.as_list(), y5.shape.as_list()) == (
        "batch_normalization/Reshape_1:0", [None, 3], "bn4/Reshape_1:0", [6, 2, 2, 2],
        [6, 2, 2, 2])
    assert [v.shape.as_list() for v in tf.global_variables()][::4] == [
        [1, 1, 3], [1, 1, 1, 1, 2], [1, 1, 1, 1, 2]]
    assert [o.name for o in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
        "batch_normalization/AssignMovingAvg", "batch_normalization/AssignMovingAvg_1",
        "bn4/cond_2/Merge", "bn4/cond_3/Merge"]
    loss = tf.reduce_sum(y * tf.constant([1., 2., 3.])) + tf.reduce_sum(tf.square(y4))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.group(train)
    rng = np.random.RandomState(0)
    outs = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            bx = (rng.randn(4, 3) * 2 + 1).astype(np.float32)
            b4 = rng.randn(6, 2, 2, 2).astype(np.float32)
            outs.append(sess.run([y, train], {x: bx, x4: b4, tr: True})[0][:2])
        got = {v.op.name: sess.run(v).ravel() for v in tf.global_variables()}
        inference, legacy = sess.run(y4, {x4: b4, tr: False})[0, 0], sess.run(y5, {x4: b4})[0, 0]
    _close(outs, [[[0.99925, 0.99836, 0.99957], [0.99985, 0.99983, -0.99992]],
                  [[0.59946, -1.79926, -0.25204], [-1.39984, -1.79836, -2.19823]]], 1e-4)
    _close(got["batch_normalization/moving_mean"], [0.42646, 1.28499, 0.42075], 1e-4)
    _close(got["batch_normalization/moving_variance"], [1.7714, 0.90448, 1.20803], 1e-4)
    _close(got["bn4/gamma"], [14.40629, 14.40074], 1e-4)
    _close(got["bn4/moving_variance"], [1.00238, 0.99943], 1e-4)
    _close(inference, [[16.37706, -17.84042], [5.77667, -9.92147]], 1e-4)
    _close(legacy, [[1.13883, -1.23421], [0.40214, -0.68447]], 1e-4)


def test_validate_args_checks_and_messages_are_tensorflows():
    tfd = tf.distributions
    cases = {
        "probs has components greater than 1.":
            lambda: tfd.Bernoulli(probs=1.5, validate_args=True).probs,
        "Condition x >= 0 did not hold element-wise:":
            lambda: tfd.Categorical(probs=[-0.5, 1.5], validate_args=True).probs,
        "probs does not sum to 1.":
            lambda: tfd.Categorical(probs=[0.5, 0.6], validate_args=True).probs,
        # the sign checks end a given message with ".  ", as TF's do
        "Concentration parameter must be positive..  \nCondition x > 0":
            lambda: tfd.Beta(-1., 1., validate_args=True).mean(),
        "Elements cannot exceed 1.":
            lambda: tfd.Bernoulli(probs=0.5, validate_args=True).log_prob(2),
        "sample must be less than `1`.":
            lambda: tfd.Beta(2., 2., validate_args=True).log_prob(1.5),
        "[hello.  ] [Condition x >= 0 did not hold":
            lambda: tf.assert_non_negative(tf.placeholder_with_default([-1.], [1]),
                                           message="hello"),
    }
    for message, build in cases.items():
        # (checks of constants fail while the graph is built, as in TF)
        with tf.Graph().as_default(), pytest.raises(tf.errors.InvalidArgumentError) as info:
            t = build()
            with tf.Session() as sess:
                sess.run(t)
        assert message in str(info.value), (message, str(info.value))
    with tf.Session() as sess:
        assert sess.run(tfd.Bernoulli(probs=0.5, validate_args=True).log_prob(1)) == \
            pytest.approx(np.log(0.5))


def test_check_messages_and_when_they_fail_are_tensorflows():
    x = tf.constant([1., 2.], name="Const")
    with pytest.raises(ValueError) as info:
        tf.assert_rank(x, 2, message="m")
    assert str(info.value) == "m.  Tensor Const:0 must have rank 2.  Received rank 1, shape (2,)"
    # assert_near checks nothing while the graph is built, even for constants
    near = tf.assert_near(tf.constant(1.0), 1.1, message="m")
    ranked = tf.assert_rank(tf.placeholder_with_default([[1.]], None), 1, message="m")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(near)
        # Assert C-escapes its strings, as TensorFlow's does
        assert ('[m.  ] [x and y not equal to tolerance rtol = Tensor(\\"assert_near/rtol:0\\", '
                'shape=(), dtype=float32), atol = Tensor(\\"assert_near/atol:0\\", shape=(), '
                'dtype=float32)]') in str(info.value)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(ranked)
        assert ("[m.  ] [Tensor PlaceholderWithDefault:0 must have rank] [1] "
                "[Received shape: ] [1 1]") in str(info.value)
