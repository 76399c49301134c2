"""TF1 probability and Bayesian programs, sweep 13 (area ``prob``), run under TensorFlow 2.15
and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2019 style): Bayes-by-backprop linear regression (a ``Normal``
posterior with a ``softplus`` scale inside a variable scope, reparameterized ``sample``,
``kl_divergence`` to a standard-normal prior, Adam, every ``Normal`` statistic and
method name); a mixture density network (``log_softmax`` mixing weights, ``Normal``
component log-probs under ``reduce_logsumexp``, seeded ``Categorical`` draws gathered into
a seeded ``Normal`` draw, ``tf.multinomial``/``tf.random.categorical``); a Thompson
sampling bandit with ``Beta`` posteriors in non-trainable variables and the ``Gamma``,
``Dirichlet``, ``StudentT``, ``Exponential``, ``Laplace`` and ``Uniform`` families (seeded
samples, densities, cdfs, entropies, moments, modes); ``validate_args`` and
``allow_nan_stats`` failures of every family; Gaussian-process regression with
``cholesky``/``cholesky_solve``/``matrix_triangular_solve``, the negative log marginal
likelihood, its gradient and Hessian, and Adam on the hyperparameters; variational
logistic regression (a seeded ``[S, D, 1]`` weight sample, an ``einsum``, a ``Bernoulli``
likelihood, MC dropout through ``placeholder_with_default``, a user ``RegisterKL`` for a
subclass, ``random_gamma``/``random_poisson``); a REINFORCE policy (a seeded
``Categorical`` action, the log-prob gradient) with sample shapes fed at run time, bool
and int64 sample dtypes, ``copy``, ``cross_entropy`` and the KLs between each family;
the tails of every family (``survival_function``, ``log_survival_function``,
``log_cdf`` far out); and contrib programs (``Independent`` diagonal Gaussians, a
``MixtureSameFamily`` and a list ``Mixture`` of Gaussians, the Gumbel-softmax
``RelaxedOneHotCategorical``, the multivariate normals, a ``Poisson`` regression and
``OneHotCategorical``, ``bayesflow.monte_carlo``'s score-function and importance-sampled
estimates), whose values TensorFlow 2.15 (without
``tf.contrib``) gives through the same formulas in core ops.

Classes of discrepancy found and fixed (one focused test each below):

* ``Softplus``'s gradient was the fused ``SoftplusGrad`` kernel; TF 2.x builds
  ``grad * sigmoid(x)``, so Bayes-by-backprop gradients are ``Softplus_grad/mul``.
* Parameter tensors: ``Beta`` and ``Dirichlet`` keep the converted tensors themselves (a
  variable's ``read``, a constant named after the parameter) and, under
  ``validate_args``, a ``control_dependency`` Identity per checked parameter; ``Uniform``
  converts ``low``/``high`` inside their Identities (``Const, Identity, Const, Identity``);
  ``Exponential``'s concentration is one scalar constant (no ``Fill`` of the rate's shape);
  ``Multinomial``'s mean is ``total_count[..., newaxis] * probs`` (a ``StridedSlice``); the
  checked probabilities of ``Bernoulli``/``Categorical`` are ``validate_probs/
  control_dependency``.
* ``validate_args`` checks that were missing: ``Multinomial``/``DirichletMultinomial``
  check ``total_count`` (non-negative, whole: ``embed_check_nonnegative_integer_form``) and
  the counts given to ``log_prob`` (whole, summing to ``total_count``); ``Dirichlet`` checks
  that a sample is positive and sums to 1; ``Categorical``/``Multinomial`` parameters with a
  known class count below 2 are a ``ValueError`` when built.
* ``tf.assert_near`` passed with equal values and zero tolerances; TensorFlow's test is
  strictly ``|x - y| < tol``. ``assert_positive`` and the other sign checks put the
  message (``""`` when none) at the head of their default data, and use a caller's
  ``data`` as given, as TensorFlow does.
* ``TransformedDistribution`` given a ``name`` took it as is, so each method opened a new
  uniquified scope (``RelaxedOneHotCategorical_1/log_prob``); it is now the instance's
  scope, as for the other distributions.
  The multivariate normals had the same fault (``MultivariateNormalDiag_2/log_prob``).
* A sample shape fed at run time: a scalar count gave an unknown static shape (TF:
  ``(?, 3)``) and a vector of unknown length raised a ``TypeError``.
* Tails: ``Laplace`` had no ``log_cdf``/``log_survival_function`` (``log(cdf)`` is
  ``-inf`` past about -88 in float32; TF's ``log_cdf_laplace`` is exact); the fallbacks
  ``survival_function = 1 - cdf`` and ``log_survival_function = log1p(-cdf)`` call the
  public ``cdf`` (its own scope) as TF does; ``Exponential`` has TF's closed-form
  ``log_survival_function``; ``Uniform.cdf`` is TF's pair of selects.
* Missing contrib API: ``tf.contrib.distributions.Independent`` (with its KL),
  ``Mixture``, ``MixtureSameFamily``, ``RelaxedOneHotCategorical``/
  ``ExpRelaxedOneHotCategorical``, ``Poisson``, ``OneHotCategorical`` (with its KL), and
  ``tf.contrib.bayesflow.monte_carlo``.

Left as is: the op layout inside ``DirichletMultinomial`` (flowgraph computes its mean when
built and broadcasts ``total_count`` into the batch; TensorFlow's batch shape is that of
the concentration), ``Dirichlet``'s extra event-size checks under ``validate_args``, the
first line of some assertion messages (``Mode undefined for concentration1 <= 1.`` is one
message in flowgraph where TensorFlow has one assert per parameter), the seeded draws of
``MixtureSameFamily`` and ``Mixture`` (TF 1.x contrib's streams are not available to the
oracle; flowgraph seeds the components with ``seed`` and the mixture with
``gen_new_seed(seed, "mixture_same_family")``, and ``Mixture`` chains
``gen_new_seed(seed, "mixture")`` per component), a batched ``Multinomial`` draw
(TensorFlow's own values change from run to run: its ``map_fn`` rows share one stream),
and the other contrib distributions (``RelaxedBernoulli``, ``Logistic``, ``Deterministic``,
``Binomial``, ``Wishart``, ...), still missing.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

tfd = tf.distributions


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _close(actual, expected, tol=2e-4):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=tol, atol=tol)


def _raises_at_run(fn, error, match=None):
    """`fn()`'s graph fails when built or run with `error` (TF checks constants early)."""
    with pytest.raises(error, match=match):
        t = fn()
        with tf.Session() as sess:
            sess.run(t)


# -- 1. Bayes-by-backprop regression ------------------------------------------------------
def test_bayes_by_backprop_program():
    tf.set_random_seed(1234)
    rng = np.random.RandomState(0)
    xv = rng.randn(32, 3).astype(np.float32)
    yv = (xv @ np.array([[1.], [-2.], [0.5]], np.float32)
          + 0.1 * rng.randn(32, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("bayes_dense"):
        w_mu = tf.get_variable("w_mu", [3, 1],
                               initializer=tf.random_normal_initializer(stddev=0.1, seed=1))
        w_rho = tf.get_variable("w_rho", [3, 1], initializer=tf.constant_initializer(-3.))
        q_w = tfd.Normal(loc=w_mu, scale=tf.nn.softplus(w_rho), name="q_w")
        p_w = tfd.Normal(loc=tf.zeros_like(w_mu), scale=tf.ones_like(w_mu), name="p_w")
        w = q_w.sample(seed=7)
        kl = tf.reduce_sum(tfd.kl_divergence(q_w, p_w))
    lik = tfd.Normal(loc=tf.matmul(x, w), scale=0.1)
    loss = -tf.reduce_mean(lik.log_prob(y)) + kl / 32.
    assert (w.name, w.shape.as_list(), kl.name) == ("bayes_dense/q_w/sample/Reshape:0", [3, 1],
                                                    "bayes_dense/Sum:0")
    assert lik.log_prob(y).name == "Normal/log_prob_1/sub:0"
    assert (q_w.name, p_w.name, lik.name) == ("bayes_dense/q_w/", "bayes_dense/p_w/", "Normal/")
    assert lik.batch_shape.as_list() == [None, 1]
    assert sorted(q_w.parameters) == ["allow_nan_stats", "loc", "name", "scale", "validate_args"]
    grads = tf.gradients(loss, [w_mu, w_rho])
    assert [g.name for g in grads] == ["gradients/AddN_1:0",
                                       "gradients/bayes_dense/Softplus_grad/mul:0"]
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    s5 = q_w.sample(5, seed=3)
    assert (s5.name, s5.shape.as_list()) == ("bayes_dense/q_w/sample_1/Reshape:0", [5, 3, 1])
    assert [t.name for t in (q_w.entropy(), q_w.mean(), q_w.stddev(), q_w.mode())] == [
        "bayes_dense/q_w/entropy/add:0", "bayes_dense/q_w/mean/mul:0",
        "bayes_dense/q_w/stddev/mul:0", "bayes_dense/q_w/mode/mul:0"]
    assert [t.name for t in (q_w.cdf(0.), q_w.prob(0.), q_w.log_cdf(0.))] == [
        "bayes_dense/q_w/cdf/ndtr/mul_1:0", "bayes_dense/q_w/prob/Exp:0",
        "bayes_dense/q_w/log_cdf/log_ndtr/SelectV2_5:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fd = {x: xv, y: yv}
        g0 = sess.run(grads, fd)
        _close(np.ravel(g0[0]), [-110.2772, 193.8855, -41.372], 1e-3)
        _close(np.ravel(g0[1]), [-1.3266, 5.7288, 2.3542], 1e-3)
        _close(sess.run(s5).ravel()[:6], [-0.0391, 0.1737, 0.0288, 0.0121, 0.243, -0.0628])
        losses = [sess.run([loss, train], fd)[0] for _ in range(20)]
        _close([losses[0], losses[5], losses[15]], [267.9198, 205.1078, 94.1745], 2e-3)
        _close(sess.run(w_mu).ravel(), [0.8284, -0.7822, 0.5016])
        _close(sess.run(q_w.entropy()).ravel(), [-1.2184, -1.6777, -1.37])
        _close(sess.run(q_w.quantile(0.3)).ravel(), [0.7909, -0.8059, 0.4694])


# -- 2. mixture density network ---------------------------------------------------------
def test_mixture_density_network_program():
    tf.set_random_seed(42)
    rng = np.random.RandomState(1)
    xs = rng.uniform(-1, 1, (64, 1)).astype(np.float32)
    ys = (np.sin(3 * xs) + 0.1 * rng.randn(64, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    with tf.variable_scope("mdn"):
        h = tf.layers.dense(x, 16, activation=tf.nn.tanh,
                            kernel_initializer=tf.glorot_uniform_initializer(seed=3))
        out = tf.layers.dense(h, 9, kernel_initializer=tf.glorot_uniform_initializer(seed=4))
        logits, mu, log_sigma = tf.split(out, 3, axis=1)
        sigma = tf.exp(log_sigma)
    comp = tfd.Normal(loc=mu, scale=sigma)
    lp = comp.log_prob(y)
    ll = tf.reduce_logsumexp(tf.nn.log_softmax(logits) + lp, axis=1)
    loss = -tf.reduce_mean(ll)
    assert (lp.name, ll.name, ll.shape.as_list()) == ("Normal/log_prob/sub:0",
                                                      "ReduceLogSumExp:0", [None])
    cat = tfd.Categorical(logits=logits)
    assert (cat.batch_shape.as_list(), cat.dtype, cat.event_size.name) == (
        [None], tf.int32, "Categorical/event_size:0")
    k = cat.sample(seed=11)
    assert (k.name, k.dtype) == ("Categorical/sample/Reshape_1:0", tf.int32)
    idx = tf.stack([tf.range(tf.shape(k)[0]), k], axis=1)
    ysamp = tfd.Normal(tf.gather_nd(mu, idx), tf.gather_nd(sigma, idx)).sample(seed=12)
    assert ysamp.name == "Normal_1/sample/Reshape:0"
    ent = cat.entropy()
    assert (ent.name, cat.probs.name, cat.logits.name) == (
        "Categorical/entropy/Neg:0", "Categorical/probs:0", "mdn/split:0")
    m = tf.multinomial(logits, 4, seed=5, output_dtype=tf.int32)
    rc = tf.random.categorical(logits, 2, seed=6)
    assert (m.name, rc.name, rc.dtype) == ("multinomial/Multinomial:0",
                                           "categorical_1/Multinomial:0", tf.int64)
    train = tf.train.RMSPropOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fd = {x: xs, y: ys}
        losses = [sess.run([loss, train], fd)[0] for _ in range(30)]
        _close([losses[0], losses[10], losses[20]], [1.1792, 1.1298, 1.0512])
        kv, yv, mv, rv, ev = sess.run([k, ysamp, m, rc, ent], fd)
        assert kv[:12].tolist() == [2, 1, 0, 0, 1, 2, 1, 2, 1, 2, 0, 2]
        _close(yv[:6], [0.1835, -0.0202, -1.0709, -1.1503, 1.6762, -0.3496])
        assert mv[:3].tolist() == [[0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 2, 2]]
        assert rv[:4].tolist() == [[2, 2], [1, 0], [0, 0], [1, 1]]
        _close(ev[:4], [1.0933, 1.0861, 1.0347, 1.082])
        assert sess.run(cat.mode(), fd)[:8].tolist() == [0, 1, 2, 0, 0, 0, 0, 0]
        _close(sess.run(cat.cdf([0, 1, 2, 1] * 16), fd)[:4], [0.0, 0.318, 0.5864, 0.3848])


# -- 3. Thompson sampling with Beta posteriors, and the other families ---------------------
def test_thompson_sampling_and_families_program():
    tf.set_random_seed(7)
    true_p = np.array([0.2, 0.5, 0.7], np.float32)
    with tf.variable_scope("bandit"):
        alpha = tf.get_variable("alpha", initializer=tf.ones([3]), trainable=False)
        beta = tf.get_variable("beta", initializer=tf.ones([3]), trainable=False)
        post = tfd.Beta(alpha, beta, name="posterior")
        theta = post.sample(seed=21)
        arm = tf.argmax(theta, output_type=tf.int32)
        reward = tf.placeholder(tf.float32, [], name="reward")
        chosen = tf.placeholder(tf.int32, [], name="chosen")
        onehot = tf.one_hot(chosen, 3)
        upd = tf.group(tf.assign_add(alpha, onehot * reward),
                       tf.assign_add(beta, onehot * (1. - reward)))
    assert (theta.name, post.concentration1.name, post.total_concentration.name) == (
        "bandit/posterior/sample/Reshape:0", "bandit/alpha/read:0", "bandit/posterior/add:0")
    assert [t.name for t in (post.mean(), post.variance(), post.mode(), post.entropy(),
                             post.log_prob(0.5), post.cdf(0.5))] == [
        "bandit/posterior/mean/truediv:0", "bandit/posterior/variance/truediv_2:0",
        "bandit/posterior/mode/SelectV2:0", "bandit/posterior/entropy/add_1:0",
        "bandit/posterior/log_prob/sub_3:0", "bandit/posterior/cdf/Betainc:0"]
    rs = np.random.RandomState(3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        picks = []
        for _ in range(15):
            a = sess.run(arm)
            sess.run(upd, {reward: float(rs.rand() < true_p[a]), chosen: a})
            picks.append(int(a))
        assert picks == [2, 2, 1, 0, 1, 2, 1, 1, 1, 1, 1, 0, 1, 2, 0]
        _close(sess.run(post.entropy()), [-0.6363, -0.5977, -0.2679])
        _close(sess.run(post.cdf([0.1, 0.5, 0.9])), [0.3439, 0.0898, 0.9914])
        g = tfd.Gamma(concentration=[2., 3.], rate=[1., 0.5])
        gs = g.sample([2, 2], seed=9)
        assert gs.name == "Gamma/sample/Reshape:0"
        _close(sess.run(gs).ravel()[:4], [1.2224, 2.463, 4.0823, 10.8036])
        _close(sess.run([g.entropy(), g.log_prob(1.5), g.cdf(1.5)]),
               [[1.5772, 2.5407], [-1.0945, -2.7117], [0.4422, 0.0405]])
        d = tfd.Dirichlet([1., 2., 3.], name="dir")
        ds = d.sample(4, seed=10)
        assert (ds.name, d.event_shape.as_list()) == ("dir/sample/Reshape:0", [3])
        _close(sess.run(ds)[0], [0.3932, 0.0329, 0.5739])
        _close(sess.run([d.entropy(), d.log_prob([0.2, 0.3, 0.5])]), [-1.2443, 1.5041])
        st = tfd.StudentT(df=3., loc=[0., 1.], scale=2.)
        _close(sess.run(st.sample(3, seed=13))[0], [1.3369, -0.0559])
        _close(sess.run([st.log_prob(0.3), st.cdf(0.3)]), [[-1.709, -1.7741], [0.5549, 0.3747]])
        ex = tfd.Exponential(rate=[0.5, 2.])
        _close(sess.run([ex.sample(seed=2), ex.log_prob(1.), ex.entropy()]),
               [[2.5459, 0.1878], [-1.1931, -1.3069], [1.6931, 0.3069]])
        lap = tfd.Laplace(loc=0., scale=[1., 2.])
        _close(sess.run([lap.sample(seed=3), lap.cdf(1.)]), [[-0.2204, -0.5656], [0.8161, 0.6967]])
        un = tfd.Uniform(low=[0., 1.], high=[2., 5.])
        _close(sess.run([un.sample(seed=4), un.cdf(1.5)]), [[0.3906, 3.1558], [0.75, 0.125]])


# -- 4. validate_args / allow_nan_stats failures -------------------------------------------
@pytest.mark.parametrize("build, error", [
    (lambda: tfd.Normal(0., -1., validate_args=True).log_prob(0.), tf.errors.InvalidArgumentError),
    (lambda: tfd.Beta(-1., 2., validate_args=True).mean(), tf.errors.InvalidArgumentError),
    (lambda: tfd.Beta(1., 2., validate_args=True).log_prob(1.5), tf.errors.InvalidArgumentError),
    (lambda: tfd.Gamma([0.5, 2.], 2., allow_nan_stats=False).mode(),
     tf.errors.InvalidArgumentError),
    (lambda: tfd.StudentT(df=[0.5, 3.], loc=0., scale=1., allow_nan_stats=False).mean(),
     tf.errors.InvalidArgumentError),
    (lambda: tfd.Uniform(2., 1., validate_args=True).sample(seed=1),
     tf.errors.InvalidArgumentError),
    (lambda: tfd.Bernoulli(probs=1.5, validate_args=True).mean(), tf.errors.InvalidArgumentError),
    (lambda: tfd.Categorical(probs=[0.5, 0.6], validate_args=True).sample(seed=1),
     tf.errors.InvalidArgumentError),
    (lambda: tfd.Exponential(-1., validate_args=True).mean(), tf.errors.InvalidArgumentError),
    (lambda: tfd.Bernoulli(probs=0.5, logits=0.).mean(), ValueError),
    (lambda: tfd.Normal(np.float64(0.), np.float32(1.)).mean(), ValueError),
    (lambda: tfd.kl_divergence(tfd.Normal(0., 1.), tfd.Gamma(1., 1.)), NotImplementedError),
    (lambda: tfd.Normal(0., 1.).sample([[2, 3]], seed=1), ValueError),
    (lambda: tfd.Normal(0., 1.).covariance(), NotImplementedError),
])
def test_validate_args_errors_program(build, error):
    _raises_at_run(build, error)


def test_allow_nan_stats_values():
    with tf.Session() as sess:
        _close(sess.run(tfd.Gamma([0.5, 2.], 2.).mode()), [np.nan, 0.5])
        _close(sess.run(tfd.StudentT(df=[0.5, 1.5, 3.], loc=0., scale=1.).variance()),
               [np.nan, np.inf, 3.0])
        _close(sess.run(tfd.kl_divergence(tfd.Normal(0., 1.), tfd.Normal(0., 2.),
                                          allow_nan_stats=False)), 0.3181)


# -- 5. Gaussian-process regression --------------------------------------------------------
def test_gaussian_process_regression_program():
    rng = np.random.RandomState(2)
    xtr = np.sort(rng.uniform(-3, 3, (20, 1)), 0)
    ytr = np.sin(xtr) + 0.1 * rng.randn(20, 1)
    xte = np.linspace(-3, 3, 5)[:, None]
    X = tf.placeholder(tf.float64, [None, 1], name="X")
    Y = tf.placeholder(tf.float64, [None, 1], name="Y")
    Xs = tf.placeholder(tf.float64, [None, 1], name="Xs")
    with tf.variable_scope("gp"):
        log_ls = tf.get_variable("log_lengthscale", [], tf.float64, tf.constant_initializer(0.))
        log_sf = tf.get_variable("log_signal", [], tf.float64, tf.constant_initializer(0.))
        log_sn = tf.get_variable("log_noise", [], tf.float64, tf.constant_initializer(-1.))

    def rbf(a, b):
        d = (tf.reduce_sum(tf.square(a), 1, keepdims=True)
             - 2 * tf.matmul(a, b, transpose_b=True)
             + tf.transpose(tf.reduce_sum(tf.square(b), 1, keepdims=True)))
        return tf.exp(2 * log_sf) * tf.exp(-0.5 * d / tf.exp(2 * log_ls))

    n = tf.shape(X)[0]
    K = rbf(X, X) + tf.exp(2 * log_sn) * tf.eye(n, dtype=tf.float64)
    L = tf.cholesky(K)
    alpha = tf.cholesky_solve(L, Y)
    nlml = (0.5 * tf.reduce_sum(Y * alpha) + tf.reduce_sum(tf.log(tf.matrix_diag_part(L)))
            + 0.5 * tf.cast(n, tf.float64) * np.log(2 * np.pi))
    Ks = rbf(X, Xs)
    mu = tf.matmul(Ks, alpha, transpose_a=True)
    v = tf.matrix_triangular_solve(L, Ks, lower=True)
    var = tf.exp(2 * log_sf) - tf.reduce_sum(tf.square(v), 0)
    assert (L.name, alpha.name, v.name, mu.name) == (
        "Cholesky:0", "cholesky_solve/MatrixTriangularSolve_1:0",
        "triangular_solve/MatrixTriangularSolve:0", "MatMul_2:0")
    grads = tf.gradients(nlml, [log_ls, log_sf, log_sn])
    assert [g.name for g in grads] == ["gradients/mul_3_grad/Mul_1:0",
                                       "gradients/mul_1_grad/Mul_1:0",
                                       "gradients/mul_5_grad/Mul_1:0"]
    assert tf.linalg.logdet(K).name == "logdet/mul:0"
    train = tf.train.AdamOptimizer(0.1).minimize(nlml)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fd = {X: xtr, Y: ytr, Xs: xte}
        _close(sess.run(nlml, fd), 8.15053, 1e-5)
        _close(sess.run(grads, fd), [-4.25144, 3.30795, 13.32848], 1e-5)
        for _ in range(25):
            sess.run(train, fd)
        _close(sess.run(nlml, fd), -5.34124, 1e-5)
        _close(sess.run([log_ls, log_sf, log_sn]), [0.524, -0.07737, -2.37225], 1e-5)
        _close(sess.run(mu, fd).ravel(), [-0.2732, -1.03377, -0.0425, 1.03853, 0.25967], 1e-5)
        _close(sess.run(var, fd), [0.01002, 0.00176, 0.00122, 0.00396, 0.08436], 1e-5)
        _close(sess.run(tf.hessians(nlml, log_ls), fd), [35.3423], 1e-4)


# -- 6. variational logistic regression with MC dropout ------------------------------------
def test_variational_logistic_regression_program():
    tf.set_random_seed(5)
    rng = np.random.RandomState(4)
    xd = rng.randn(40, 2).astype(np.float32)
    yd = (xd[:, :1] - xd[:, 1:] > 0).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    keep = tf.placeholder_with_default(1.0, [], name="keep_prob")
    with tf.variable_scope("vi"):
        qm = tf.get_variable("qm", [2, 1], initializer=tf.zeros_initializer())
        qs = tf.get_variable("qs", [2, 1], initializer=tf.constant_initializer(-2.))
        q = tfd.Normal(qm, tf.nn.softplus(qs))
        ws = q.sample(4, seed=17)
        logits = tf.einsum("nd,sdk->snk", tf.nn.dropout(x, keep_prob=keep, seed=3), ws)
        lik = tfd.Bernoulli(logits=logits)
        ell = tf.reduce_mean(tf.reduce_sum(lik.log_prob(tf.tile(y[None], [4, 1, 1])), [1, 2]))
        elbo = ell - tf.reduce_sum(tfd.kl_divergence(q, tfd.Normal(0., 1.)))
    assert (ws.name, elbo.name) == ("vi/Normal/sample/Reshape:0", "vi/sub_1:0")
    assert (lik.batch_shape.as_list(), lik.dtype) == ([4, None, 1], tf.int32)
    assert lik.log_prob(y).name == "vi/Bernoulli/log_prob_1/Neg:0"

    class Lap2(tfd.Laplace):
        pass

    @tfd.RegisterKL(tfd.Laplace, tfd.Normal)
    def _kl_lap_norm(a, b, name=None):
        with tf.name_scope(name, "kl_lap_norm", [a.loc, b.loc]):
            return tf.square(a.loc - b.loc) + a.scale

    klc = tfd.kl_divergence(Lap2(1., 2.), tfd.Normal(0., 1.))
    assert klc.name == "KullbackLeibler/kl_lap_norm/add:0"
    with pytest.raises(ValueError, match=r"KL\(Laplace \|\| Normal\) has already been"):
        tfd.RegisterKL(tfd.Laplace, tfd.Normal)(_kl_lap_norm)
    train = tf.train.AdamOptimizer(0.1).minimize(-elbo)
    rg = tf.random_gamma([3], alpha=[1., 2.], beta=[1., 0.5], seed=8)
    rp = tf.random_poisson([2.0, 5.0], [3, 2], seed=9)
    assert (rg.name, rg.shape.as_list(), rp.name, rp.shape.as_list()) == (
        "random_gamma/Maximum:0", [3, 2], "random_poisson/RandomPoissonV2:0", [3, 2, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fd = {x: xd, y: yd}
        elbos = [sess.run([elbo, train], fd)[0] for _ in range(30)]
        _close([elbos[0], elbos[10], elbos[20]], [-31.0265, -12.5986, -8.4916], 1e-3)
        _close(sess.run(qm).ravel(), [2.1002, -1.8333])
        mc = [sess.run(tf.reduce_mean(tf.sigmoid(logits), 0), {x: xd[:3], keep: 0.5})
              for _ in range(3)]
        _close(np.ravel(mc), [0.5436, 0.007, 0.5, 0.5532, 0.0035, 0.1606, 0.2162, 0.0206, 0.9853])
        _close(sess.run(klc), 3.0)
        _close(sess.run(rg)[2], [0.9424, 11.6524])
        assert sess.run(rp)[2].tolist() == [[2.0, 6.0], [0.0, 4.0]]


# -- 7. contrib: Independent, MixtureSameFamily, Gumbel-softmax ----------------------------
def test_contrib_mixture_and_relaxed_program():
    tfcd = tf.contrib.distributions
    tf.set_random_seed(3)
    loc = tf.constant([[0., 1., -1.], [2., 0.5, 0.]])
    scale = tf.constant([[1., 0.5, 2.], [0.3, 1., 1.5]])
    logits = tf.constant([[0.1, 0.5, -0.2], [1., 0., 0.3]])
    y = tf.constant([0.4, 1.2])
    n = tfd.Normal(loc, scale)
    ind = tfcd.Independent(n)
    assert (ind.name, ind.batch_shape.as_list(), ind.event_shape.as_list()) == (
        "IndependentNormal/", [2], [3])
    assert ind.log_prob(tf.zeros([2, 3])).name == "IndependentNormal/log_prob/Sum:0"
    ind_kl = tfd.kl_divergence(ind, tfcd.Independent(tfd.Normal(tf.zeros([2, 3]), 1.)))
    gm = tfcd.MixtureSameFamily(tfd.Categorical(logits=logits), n)
    assert (gm.name, gm.batch_shape.as_list(), gm.event_shape.as_list()) == (
        "MixtureSameFamily/", [2], [])
    assert gm.sample(3, seed=4).shape.as_list() == [3, 2]
    r = tfcd.RelaxedOneHotCategorical(0.5, logits=logits)
    assert (r.name, r.batch_shape.as_list(), r.event_shape.as_list()) == (
        "RelaxedOneHotCategorical/", [2], [3])
    assert r.log_prob(tf.ones([2, 3]) / 3.).name == "RelaxedOneHotCategorical/log_prob/add:0"
    rs = r.sample(2, seed=7)
    with tf.Session() as sess:
        _close(sess.run(ind.log_prob(tf.zeros([2, 3]))), [-4.8818, -24.3055])
        _close(sess.run(ind.entropy()), [4.2568, 3.4583])
        _close(sess.run(ind_kl), [2.125, 3.0935])
        _close(sess.run(ind.sample(4, seed=5))[0].ravel(),
               [-1.1347, 1.373, -4.9363, 1.2105, -0.1412, 0.2521])
        _close(sess.run([gm.log_prob(y), gm.mean(), gm.variance(), gm.cdf(y)]),
               [[-1.1119, -2.0142], [0.2323, 1.1713], [1.9781, 1.6675], [0.4296, 0.3615]])
        _close(sess.run(rs)[0].ravel(), [0.5315, 0.4378, 0.0306, 0.0578, 0.8225, 0.1197])
        _close(sess.run(r.log_prob([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])), [-0.5539, -0.1535])


# -- focused tests, one per class of discrepancy -------------------------------------------
def test_softplus_gradient_is_grad_times_sigmoid():
    x = tf.constant([-1., 0., 2.])
    g = tf.gradients(tf.nn.softplus(x), x)[0]
    assert g.name == "gradients/Softplus_grad/mul:0"
    assert g.op.inputs[1].op.type == "Sigmoid"
    gg = tf.gradients(g, x)[0]
    with tf.Session() as sess:
        _close(sess.run(g), [0.268941, 0.5, 0.880797], 1e-6)
        _close(sess.run(gg), [0.196612, 0.25, 0.104994], 1e-6)


@pytest.mark.parametrize("build, attrs, names, types", [
    (lambda: tfd.Beta(concentration1=[1., 2.], concentration0=3.),
     ["concentration1", "concentration0", "total_concentration"],
     ["Beta/concentration1:0", "Beta/concentration0:0", "Beta/add:0"], ["Const", "Const", "AddV2"]),
    (lambda: tfd.Dirichlet(concentration=[1., 2.]), ["concentration", "total_concentration"],
     ["Dirichlet/concentration:0", "Dirichlet/Sum:0"], ["Const", "Const", "Sum"]),
    (lambda: tfd.Exponential(rate=[1., 2.]), ["rate", "concentration"],
     ["Exponential/rate_1:0", "Exponential/concentration:0"],
     ["Const", "Const", "Identity", "Identity"]),
    (lambda: tfd.Uniform(low=[1., 2.], high=3.), ["low", "high"],
     ["Uniform/low:0", "Uniform/high:0"], ["Const", "Identity", "Const", "Identity"]),
    (lambda: tfd.Multinomial(total_count=3., probs=[0.1, 0.9]), ["total_count", "probs"],
     ["Multinomial/total_count:0", "Multinomial/probs:0"],
     ["Const", "Const", "Log", "Const", "Const", "Const", "StridedSlice", "Mul"]),
])
def test_parameter_tensors_as_tensorflow_builds_them(build, attrs, names, types, _fresh_graph):
    d = build()
    assert [getattr(d, a).name for a in attrs] == names
    assert [op.type for op in _fresh_graph.get_operations()] == types


def test_validated_parameters_are_control_dependencies():
    v = tf.Variable([1., 2.], name="v")
    assert tfd.Beta(v, 2.).concentration1.name == "v/read:0"
    b = tfd.Beta([1., 2.], 3., validate_args=True)
    assert (b.concentration1.name, b.concentration0.name) == ("Beta_1/control_dependency:0",
                                                              "Beta_1/control_dependency_1:0")
    assert tfd.Dirichlet([1., 2.], validate_args=True).concentration.name == \
        "Dirichlet/control_dependency:0"
    assert tfd.Bernoulli(probs=[0.1, 0.2], validate_args=True).probs.name == \
        "Bernoulli/validate_probs/control_dependency:0"
    m = tfd.Multinomial(total_count=3., probs=[0.1, 0.9], validate_args=True)
    assert (m.total_count.name, m.probs.name) == (
        "Multinomial/embed_check_nonnegative_integer_form/control_dependency:0",
        "Multinomial/validate_probs/control_dependency:0")
    assert tfd.Exponential(rate=[1., 2.]).concentration.shape.as_list() == []


@pytest.mark.parametrize("build, message", [
    (lambda: tfd.Multinomial(total_count=-2., probs=[0.5, 0.5], validate_args=True).mean(),
     "must be non-negative"),
    (lambda: tfd.Multinomial(total_count=2.5, probs=[0.5, 0.5], validate_args=True).mean(),
     "cannot contain fractional components"),
    (lambda: tfd.Multinomial(total_count=3., probs=[0.5, 0.5],
                             validate_args=True).log_prob([1., 1.]),
     "counts must sum to `self.total_count`"),
    (lambda: tfd.DirichletMultinomial(total_count=3., concentration=[0.5, 0.5],
                                      validate_args=True).log_prob([1.5, 1.5]),
     "cannot contain fractional components"),
    (lambda: tfd.Dirichlet([1., 2.], validate_args=True).log_prob([0.3, 0.3]),
     "sample last-dimension must sum to `1`"),
])
def test_count_and_sample_checks_under_validate_args(build, message):
    _raises_at_run(build, tf.errors.InvalidArgumentError, message)


def test_count_checks_pass_valid_values():
    with tf.Session() as sess:
        m = tfd.Multinomial(total_count=3., probs=[0.5, 0.5], validate_args=True)
        _close(sess.run(m.log_prob([1., 2.])), -0.9808)
        _close(sess.run(tfd.Dirichlet([1., 2.], validate_args=True).log_prob([0.4, 0.6])),
               np.log(2 * 0.6))


@pytest.mark.parametrize("kwargs", [{"probs": [1.]}, {"logits": [[0.]]}])
def test_categorical_needs_two_classes_when_validated(kwargs):
    with pytest.raises(ValueError, match="must have at least 2 events"):
        tfd.Categorical(validate_args=True, **kwargs)
    tfd.Categorical(**kwargs)  # unchecked without validate_args, as in TF


def test_assert_near_is_strict_and_sign_checks_lead_with_message():
    ok = tf.assert_near(tf.constant([1., 2.]), [1., 2.], rtol=0., atol=0.)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(ok)
    tf.assert_positive(tf.placeholder(tf.float32, name="p"))
    tf.assert_positive(tf.placeholder(tf.float32, name="q"), data=["only this"])
    tf.assert_positive(tf.placeholder(tf.float32, name="r"), message="msg")
    asserts = [(op.name, len(op.inputs)) for op in tf.get_default_graph().get_operations()
               if op.type == "Assert" and op.name.startswith("assert_positive")]
    # the condition, then "" or "msg.  ", the condition's text, "x (p:0) = " and x; a
    # caller's data as given (a constant string: no guard)
    assert asserts == [("assert_positive/assert_less/Assert/AssertGuard/Assert", 5),
                       ("assert_positive_1/assert_less/Assert/Assert", 2),
                       ("assert_positive_2/assert_less/Assert/AssertGuard/Assert", 5)]


def test_transformed_distribution_name_is_its_scope():
    tfcd = tf.contrib.distributions
    r = tfcd.RelaxedOneHotCategorical(0.5, logits=[1., 2.])
    assert r.name == "RelaxedOneHotCategorical/"
    assert r.log_prob([.5, .5]).name == "RelaxedOneHotCategorical/log_prob/add:0"
    assert r.sample().name == "RelaxedOneHotCategorical/sample/Reshape:0"
    r2 = tfcd.RelaxedOneHotCategorical(0.5, logits=[1., 2.])
    assert r2.name == "RelaxedOneHotCategorical_1/"
    t = tfcd.TransformedDistribution(tfd.Normal(0., 1.), tfcd.bijectors.Exp(), name="LogNormal")
    assert (t.name, t.log_prob(1.).name) == ("LogNormal/", "LogNormal/log_prob/add:0")


def test_contrib_independent_defaults_and_errors():
    tfcd = tf.contrib.distributions
    d = tfcd.Independent(tfd.Normal(tf.zeros([2, 3, 4]), 1.), reinterpreted_batch_ndims=2)
    assert (d.batch_shape.as_list(), d.event_shape.as_list()) == ([2], [3, 4])
    assert tfcd.Independent(tfd.Normal(0., 1.)).event_shape.as_list() == []
    with pytest.raises(ValueError, match="cannot exceed"):
        tfcd.Independent(tfd.Normal([0.], 1.), reinterpreted_batch_ndims=2)
    with tf.Session() as sess:
        _close(sess.run(d.log_prob(tf.zeros([2, 3, 4]))), [-11.0270] * 2)
        assert sess.run(d.event_shape_tensor()).tolist() == [3, 4]
        assert sess.run(d.batch_shape_tensor()).tolist() == [2]


def test_contrib_mixture_same_family_errors():
    tfcd = tf.contrib.distributions
    with pytest.raises(ValueError, match="does not equal"):
        tfcd.MixtureSameFamily(tfd.Categorical(logits=[0., 0.]), tfd.Normal([0., 1., 2.], 1.))
    with pytest.raises(ValueError, match="is not over integers"):
        tfcd.MixtureSameFamily(tfd.Normal(0., 1.), tfd.Normal([0., 1.], 1.))


# -- 8. contrib multivariate normals: names, seeded draws and densities --------------------
def test_contrib_multivariate_normal_program():
    tfcd = tf.contrib.distributions
    tf.set_random_seed(11)
    loc = tf.constant([[1., -1.], [0., 2.]])
    diag = tf.constant([[0.5, 2.], [1., 1.5]])
    tril = tf.constant([[1., 0.], [0.6, 0.8]])
    cov = tf.matmul(tril, tril, transpose_b=True)
    x = tf.constant([[0.5, 0.5], [1., 1.]])
    d = tfcd.MultivariateNormalDiag(loc=loc, scale_diag=diag)
    t = tfcd.MultivariateNormalTriL(loc=loc[0], scale_tril=tril)
    f = tfcd.MultivariateNormalFullCovariance(loc=loc[0], covariance_matrix=cov)
    assert (d.name, t.name, f.name) == ("MultivariateNormalDiag/", "MultivariateNormalTriL/",
                                        "MultivariateNormalFullCovariance/")
    assert d.sample(seed=1).name == "MultivariateNormalDiag/sample/Reshape_2:0"
    assert d.log_prob(x).name == "MultivariateNormalDiag/log_prob/sub_2:0"
    assert (d.batch_shape.as_list(), t.batch_shape.as_list(), t.event_shape.as_list()) == (
        [2], [], [2])
    ds, ts, fs = d.sample(3, seed=5), t.sample(3, seed=6), f.sample(2, seed=7)
    kl_t = tfd.kl_divergence(t, tfcd.MultivariateNormalTriL(loc=tf.zeros(2),
                                                            scale_tril=tf.eye(2)))
    kl_d = tfd.kl_divergence(d, tfcd.MultivariateNormalDiag(loc=tf.zeros([2, 2])))
    with tf.Session() as sess:
        _close(sess.run(ds).ravel()[:8],
               [1.9322, -5.8857, 0.0276, 4.6136, 1.3835, -4.1749, 0.8098, 0.5062])
        _close(sess.run(ts).ravel(), [1.0429, -0.6908, 1.2598, -0.2651, 1.707, -1.2771])
        _close(sess.run(fs).ravel(), [1.0804, -0.6374, 1.3281, -0.8229])
        _close(sess.run([d.log_prob(x), t.log_prob(x), f.log_prob(x)]),
               [[-2.6191, -2.9656], [-4.271, -4.7397], [-4.271, -4.7397]])
        _close(sess.run(d.entropy()), [2.8379, 3.2433])
        _close(sess.run(t.entropy()), 2.6147)
        _close(sess.run(t.covariance()), [[1., 0.6], [0.6, 1.]])
        _close(sess.run([kl_t, kl_d[0], kl_d[1]]), [1.2231, 2.125, 2.2195])


# -- 9. contrib Mixture of a list of components --------------------------------------------
def test_contrib_mixture_program():
    tfcd = tf.contrib.distributions
    tf.set_random_seed(2)
    logits = tf.constant([[0.2, -0.3], [1.0, 0.5], [0., 0.]])
    comps = [tfd.Normal([-1., 0., 2.], [0.5, 1., 2.]), tfd.Normal([1., 3., -2.], [1.5, 0.3, 1.])]
    x = tf.constant([0.3, 1.1, -0.4])
    mix = tfcd.Mixture(cat=tfd.Categorical(logits=logits), components=comps)
    assert (mix.name, mix.batch_shape.as_list(), mix.event_shape.as_list()) == (
        "Mixture/", [3], [])
    assert (mix.log_prob(x).name, mix.mean().name) == ("Mixture/log_prob/ReduceLogSumExp:0",
                                                       "Mixture/mean/AddN:0")
    s = mix.sample(4, seed=3)
    s_static = tfcd.Mixture(cat=tfd.Categorical(logits=logits), components=comps,
                            use_static_graph=True).sample(4, seed=3)
    assert s.shape.as_list() == s_static.shape.as_list() == [4, 3]
    with tf.Session() as sess:
        _close(sess.run(mix.log_prob(x)), [-2.2353, -1.998, -2.2633])
        _close(sess.run(mix.prob(x)), [0.107, 0.1356, 0.104])
        _close(sess.run(mix.mean()), [-0.2449, 1.1326, 0.0])
        _close(sess.run(mix.stddev()), [1.3947, 1.6648, 2.5495])
        _close(sess.run(mix.entropy_lower_bound()), [1.1406, 0.9644, 1.7655])
        assert sess.run(s).shape == sess.run(s_static).shape == (4, 3)


@pytest.mark.parametrize("build, error, match", [
    (lambda: (tfd.Normal(0., 1.), [tfd.Normal(0., 1.)]), TypeError,
     "cat must be a Categorical"),
    (lambda: (tfd.Categorical(logits=[0., 0.]), []), ValueError, "non-empty"),
    (lambda: (tfd.Categorical(logits=[0., 0.]), [tfd.Normal(0., 1.)]), ValueError,
     r"cat.num_classes != len\(components\): 2 vs. 1"),
    (lambda: (tfd.Categorical(logits=[0., 0.]), [tfd.Normal(0., 1.), tfd.Bernoulli(0.)]),
     TypeError, "same dtype"),
])
def test_contrib_mixture_errors(build, error, match):
    cat, components = build()
    with pytest.raises(error, match=match):
        tf.contrib.distributions.Mixture(cat=cat, components=components)


# -- 10. REINFORCE policy, dynamic sample shapes, KLs between families ---------------------
def test_policy_gradient_dynamic_shapes_and_kl_program():
    tf.set_random_seed(99)
    n_ph = tf.placeholder(tf.int32, [], name="n")
    shape_ph = tf.placeholder(tf.int32, [None], name="shape")
    nd = tfd.Normal(loc=[0., 1., 2.], scale=1.)
    s1, s2 = nd.sample(n_ph, seed=1), nd.sample(shape_ph, seed=2)
    assert (s1.shape.as_list(), s2.shape.ndims) == ([None, 3], None)
    assert (s1.name, s2.name) == ("Normal/sample/Reshape_1:0", "Normal/sample_1/Reshape:0")
    b = tfd.Bernoulli(logits=[0.3, -1.], dtype=tf.bool)
    bs = b.sample(3, seed=4)
    c = tfd.Categorical(logits=[[1., 0., -1.], [0., 0., 2.]], dtype=tf.int64)
    cs = c.sample([2], seed=5)
    assert (bs.dtype, cs.dtype, cs.name) == (tf.bool, tf.int64, "Categorical/sample/Reshape_1:0")
    pairs = [(tfd.Categorical(logits=[1., 0., -1.]), tfd.Categorical(probs=[0.2, 0.3, 0.5])),
             (tfd.Bernoulli(probs=[0.2, 0.9]), tfd.Bernoulli(logits=[0., 1.])),
             (tfd.Beta(2., 3.), tfd.Beta([1., 4.], 2.)),
             (tfd.Gamma(2., 3.), tfd.Gamma([1., 4.], 2.)),
             (tfd.Dirichlet([1., 2., 3.]), tfd.Dirichlet([2., 2., 2.])),
             (tfd.Normal(0., 1.), tfd.Normal([1., 2.], 3.))]
    kls = [tfd.kl_divergence(p, q) for p, q in pairs]
    assert [k.name for k in kls] == [
        "KullbackLeibler/kl_categorical_categorical/Sum:0",
        "KullbackLeibler_1/kl_bernoulli_bernoulli/add:0",
        "KullbackLeibler_2/kl_beta_beta/add_2:0", "KullbackLeibler_3/kl_gamma_gamma/add_2:0",
        "KullbackLeibler_4/kl_dirichlet_dirichlet/add:0",
        "KullbackLeibler_5/kl_normal_normal/add:0"]
    ce = pairs[5][0].cross_entropy(pairs[5][1])
    assert ce.name == "Normal_1/cross_entropy/cross_entropy/add:0"
    cp = nd.copy(scale=2.)
    assert cp.name == "Normal_3/"
    m = tfd.Multinomial(total_count=[3., 5.], probs=[[0.2, 0.8], [0.5, 0.5]])
    ms = m.sample(2, seed=6)
    assert (ms.shape.as_list(), ms.name) == ([2, 2, 2], "Multinomial/sample/Reshape_3:0")
    with tf.variable_scope("policy"):
        w = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(0.1))
        obs = tf.placeholder(tf.float32, [None, 2])
        pi = tfd.Categorical(logits=tf.matmul(obs, w))
        a = pi.sample(seed=8)
        adv = tf.placeholder(tf.float32, [None])
        pg_loss = -tf.reduce_mean(pi.log_prob(a) * adv)
    g = tf.gradients(pg_loss, w)[0]
    assert (a.name, pg_loss.name, g.name) == ("policy/Categorical/sample/Reshape_1:0",
                                              "policy/Neg:0",
                                              "gradients/policy/MatMul_grad/MatMul_1:0")
    with tf.Session() as sess:
        r1, r2 = sess.run([s1, s2], {n_ph: 2, shape_ph: [2, 2]})
        _close(r1.ravel(), [-1.0807, 2.3943, 1.1936, -0.0057, 0.9859, 2.7453])
        _close(r2.ravel()[:6], [1.64, 0.6509, 1.1442, 0.6892, 2.3994, 3.3229])
        assert sess.run(bs).tolist() == [[True, False], [False, True], [True, True]]
        assert sess.run(cs).tolist() == [[0, 2], [2, 2]]
        kv = sess.run(kls)
        _close(np.concatenate([np.ravel(k) for k in kv]),
               [0.5953, 0.1927, 0.0882, 0.1251, 1.0725, 0.1616, 1.9014, 0.8069, 0.7097, 0.8764])
        _close(sess.run(ce), [2.1287, 2.2953])
        # TF's draw order across batch members varies run to run (map_fn rows share one
        # stream), so only the totals are fixed
        assert sess.run(ms).sum(-1).tolist() == [[3.0, 5.0], [3.0, 5.0]]
        _close(sess.run(m.covariance()).ravel(),
               [0.48, -0.48, -0.48, 0.48, 1.25, -1.25, -1.25, 1.25])
        sess.run(tf.global_variables_initializer())
        o = np.array([[1., 0.], [0., 1.], [1., 1.]], np.float32)
        av, gv = sess.run([a, g], {obs: o, adv: [1., -1., 0.5]})
        assert av.tolist() == [1, 0, 0]
        _close(gv.ravel(), [0.0, -0.1667, 0.1667, 0.1111, -0.0556, -0.0556])


def test_sample_static_shape_from_partly_known_shape():
    n = tf.placeholder(tf.int32, [], name="n")
    d = tfd.Normal(tf.zeros([2, 3]), 1.)
    assert d.sample(tf.stack([n, 4]), seed=1).shape.as_list() == [None, 4, 2, 3]
    assert d.sample(tf.placeholder(tf.int32, [2]), seed=1).shape.as_list() == [None, None, 2, 3]


# -- 11. tails: survival functions and log-cdfs of every family ----------------------------
def test_survival_and_log_cdf_program():
    dists = [tfd.Laplace(0., [1., 2.]), tfd.Gamma(2., [1., 3.]), tfd.Beta(2., [1., 3.]),
             tfd.StudentT(3., 0., [1., 2.]), tfd.Uniform(0., [1., 3.]),
             tfd.Exponential([1., 3.]), tfd.Normal(0., [1., 2.])]
    xs = [[-150., 300.], 0.7, 0.3, 0.5, 0.7, 0.4, 0.5]
    ts = [[d.survival_function(x), d.log_survival_function(x), d.log_cdf(x), d.cdf(x)]
          for d, x in zip(dists, xs)]
    assert [[t.name for t in row] for row in ts] == [
        ["Laplace/survival_function/sub:0",
         "Laplace/log_survival_function/log_cdf_laplace/SelectV2:0",
         "Laplace/log_cdf/log_cdf_laplace/SelectV2:0", "Laplace/cdf_1/add:0"],
        ["Gamma/survival_function/sub:0", "Gamma/log_survival_function/Log1p:0",
         "Gamma/log_cdf/Log:0", "Gamma/cdf_2/Igamma:0"],
        ["Beta/survival_function/sub:0", "Beta/log_survival_function/Log1p:0",
         "Beta/log_cdf/Log:0", "Beta/cdf_2/Betainc:0"],
        ["StudentT/survival_function/sub:0", "StudentT/log_survival_function/Log1p:0",
         "StudentT/log_cdf/Log:0", "StudentT/cdf_2/SelectV2:0"],
        ["Uniform/survival_function/sub:0", "Uniform/log_survival_function/Log1p:0",
         "Uniform/log_cdf/Log:0", "Uniform/cdf_2/SelectV2_1:0"],
        ["Exponential/survival_function/sub:0", "Exponential/log_survival_function/sub_4:0",
         "Exponential/log_cdf/Log:0", "Exponential/cdf_1/Igamma:0"],
        ["Normal/survival_function/ndtr/mul_1:0",
         "Normal/log_survival_function/log_ndtr/SelectV2_5:0",
         "Normal/log_cdf/log_ndtr/SelectV2_5:0", "Normal/cdf/ndtr/mul_1:0"]]
    expected = [
        [[1.0, 0.0], [-0.0, -150.6932], [-150.6932, -0.0], [0.0, 1.0]],
        [[0.8442, 0.3796], [-0.1694, -0.9686], [-1.8592, -0.4774], [0.1558, 0.6204]],
        [[0.91, 0.6517], [-0.0943, -0.4282], [-2.4079, -1.0547], [0.09, 0.3483]],
        [[0.3257, 0.4094], [-1.1217, -0.8931], [-0.3941, -0.5266], [0.6743, 0.5906]],
        [[0.3, 0.7667], [-1.204, -0.2657], [-0.3567, -1.4553], [0.7, 0.2333]],
        [[0.6703, 0.3012], [-0.4, -1.2], [-1.1096, -0.3584], [0.3297, 0.6988]],
        [[0.3085, 0.4013], [-1.1759, -0.9131], [-0.3689, -0.513], [0.6915, 0.5987]]]
    with tf.Session() as sess:
        for row, want in zip(ts, expected):
            _close(sess.run(row), want)


# -- 12. contrib.bayesflow.monte_carlo: score-function and importance-sampled estimates ---
def test_bayesflow_monte_carlo_program():
    mc = tf.contrib.bayesflow.monte_carlo
    tf.set_random_seed(21)
    with tf.variable_scope("vi"):
        mu = tf.get_variable("mu", [], initializer=tf.constant_initializer(0.5))
        q = tfd.Normal(mu, 1.)
    z = q.sample(200, seed=4)
    p = tfd.Normal(1., 2.)

    def f(v):
        return tf.square(v - 2.)

    e_rep = mc.expectation(f, z)
    e_sf = mc.expectation(f, z, log_prob=q.log_prob, use_reparametrization=False)
    e_is = mc.expectation_importance_sampler(lambda v: v - 1.5, p.log_prob, q, z=z)
    e_lis = mc.expectation_importance_sampler_logspace(lambda v: -tf.square(v), p.log_prob,
                                                       q, z=z)
    e_n = mc.expectation_importance_sampler(lambda v: v, p.log_prob, q, n=100, seed=5)
    assert (e_rep.name, e_sf.name) == ("expectation/Mean:0", "expectation_1/Mean:0")
    g = tf.gradients([e_rep, e_sf], mu)
    with pytest.raises(ValueError, match='exactly one of arguments "n" and "z"'):
        mc.expectation_importance_sampler(f, p.log_prob, q)
    with pytest.raises(ValueError, match="`log_prob` must be a callable"):
        mc.expectation(f, z, use_reparametrization=False)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _close(sess.run([e_rep, e_sf, e_is, e_lis, e_n]),
               [3.0469, 3.0469, -0.6515, -1.2166, -1.3346])
        _close(sess.run(g), [-6.4343])
        _close(sess.run(tf.gradients(e_sf, mu)), [-4.3736])
        _close(sess.run(tf.gradients(e_is, mu)), [0.1792])


# -- 13. contrib count models: Poisson regression, OneHotCategorical -----------------------
def test_contrib_poisson_regression_and_onehot_program():
    tfcd = tf.contrib.distributions
    tf.set_random_seed(8)
    rng = np.random.RandomState(5)
    xv = rng.randn(30, 2).astype(np.float32)
    yv = rng.poisson(np.exp(xv @ np.array([0.5, -0.3]) + 0.2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None])
    w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
    pois = tfcd.Poisson(log_rate=tf.tensordot(x, w, 1))
    nll = -tf.reduce_mean(pois.log_prob(y))
    p2 = tfcd.Poisson(rate=[1., 4.])
    ps = p2.sample(3, seed=3)
    oh = tfcd.OneHotCategorical(logits=[[0.5, -0.5, 1.0], [0., 0., 0.]])
    ohs = oh.sample(4, seed=2)
    assert (pois.name, ps.name, ps.dtype, ohs.dtype) == ("Poisson/",
                                                         "Poisson_1/sample/Reshape:0",
                                                         tf.float32, tf.int32)
    assert (oh.batch_shape.as_list(), oh.event_shape.as_list()) == ([2], [3])
    with pytest.raises(ValueError, match="exactly one of `rate` and `log_rate`"):
        tfcd.Poisson()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(nll)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            loss, _ = sess.run([nll, train], {x: xv, y: yv})
        _close(loss, 1.4799)
        _close(sess.run(w), [0.3472, -0.1672])
        _close(sess.run([p2.log_prob([0., 3.]), p2.cdf([1.5, 3.]), p2.mode()]),
               [[-1.0, -1.6329], [0.7358, 0.4335], [1.0, 4.0]])
        assert sess.run(ps).tolist() == [[0.0, 5.0], [0.0, 5.0], [3.0, 5.0]]
        assert sess.run(ohs).argmax(-1).tolist() == [[0, 1], [2, 0], [2, 0], [0, 1]]
        _close(sess.run([oh.log_prob([[0, 0, 1], [1, 0, 0]]), oh.entropy()]),
               [[-0.6041, -1.0986], [0.9528, 1.0986]])
        assert sess.run(oh.mode()).tolist() == [[0, 0, 1], [1, 0, 0]]
        kl = tfd.kl_divergence(oh, tfcd.OneHotCategorical(probs=[0.2, 0.3, 0.5]))
        _close(sess.run(kl), [0.1064, 0.0702])
