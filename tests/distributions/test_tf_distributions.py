"""`tf.distributions`: values against TensorFlow 2.15 (the oracle's printed values,
recorded inline) and scipy.stats, gradients against finite differences, sample shapes,
dtypes and moments (TF's random streams cannot be matched)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import flowgraph as tf

tfd = tf.distributions


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _close(got, want, atol=1e-4):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-4, atol=atol)


# -- the API surface, as TF 2.15 prints it ---------------------------------------------------
def test_normal_names_shapes_and_reprs_match_tf():
    n = tfd.Normal(loc=[0., 1.], scale=[1., 2.])
    assert n.name == "Normal/"
    assert repr(n.reparameterization_type) == "<Reparameterization Type: FULLY_REPARAMETERIZED>"
    assert n.reparameterization_type == tfd.FULLY_REPARAMETERIZED
    assert (n.batch_shape.as_list(), n.event_shape.as_list()) == ([2], [])
    assert n.dtype == tf.float32
    assert sorted(n.parameters) == ["allow_nan_stats", "loc", "name", "scale", "validate_args"]
    s = n.sample(3, seed=1)
    assert s.shape.as_list() == [3, 2] and s.name == "Normal/sample/Reshape:0"
    assert n.sample([4, 5]).shape.as_list() == [4, 5, 2]
    assert n.log_prob([[0.5, 0.5]]).name == "Normal/log_prob/sub:0"
    assert n.mean().name == "Normal/mean/mul:0"
    assert str(n) == ('tfp.distributions.Normal("Normal/", batch_shape=(2,), event_shape=(), '
                      'dtype=float32)')
    assert tfd.Bernoulli(probs=0.5).name == "Bernoulli/"
    assert sorted(k for k in dir(tfd) if not k.startswith("_")) == [
        "Bernoulli", "Beta", "Categorical", "Dirichlet", "DirichletMultinomial",
        "Distribution", "Exponential", "FULLY_REPARAMETERIZED", "Gamma", "Laplace",
        "Multinomial", "NOT_REPARAMETERIZED", "Normal", "RegisterKL",
        "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]


def test_constructor_errors_match_tf():
    with pytest.raises(ValueError, match=r"Expected floating point type, got <dtype: 'int32'>"):
        tfd.Normal(0, 1)
    with pytest.raises(ValueError, match="must be of the same type"):
        tfd.Normal(tf.constant(0., tf.float64), 1.)
    with pytest.raises(ValueError, match=r"Must pass probs or logits, but not both\."):
        tfd.Bernoulli(logits=0., probs=0.5)
    with pytest.raises(ValueError, match=r"Must pass probs or logits, but not both\."):
        tfd.Categorical()
    with pytest.raises(NotImplementedError, match="mean is not implemented: Categorical"):
        tfd.Categorical(logits=[1., 2.]).mean()
    with pytest.raises(NotImplementedError, match=r"No KL\(distribution_a \|\| distribution_b\) "
                       "registered for distribution_a type Normal and distribution_b type "
                       "Bernoulli"):
        tfd.kl_divergence(tfd.Normal(0., 1.), tfd.Bernoulli(probs=0.5))
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(tfd.Normal(0., -1., validate_args=True).mean())
    with pytest.raises(tf.errors.InvalidArgumentError, match="df <= 1"):
        _run(tfd.StudentT(df=0.5, loc=0., scale=1., allow_nan_stats=False).mean())
    with pytest.raises(tf.errors.InvalidArgumentError, match="concentration <= 1"):
        _run(tfd.Gamma([0.5, 2.], 1., allow_nan_stats=False).mode())


# -- values: TF 2.15's printed results ---------------------------------------------------------
def test_normal_values_match_tf():
    n = tfd.Normal(loc=[0., 1.], scale=[1., 2.])
    x = tf.placeholder(tf.float32, [None, 2])
    feed = {x: [[0.3, -0.2], [1.0, 3.0]]}
    prob, cdf, log_cdf, surv = _run([n.prob(x), n.cdf(x), n.log_cdf(x),
                                     n.survival_function(x)], feed)
    _close(prob, [[0.3814, 0.1666], [0.242, 0.121]])
    _close(cdf, [[0.6179, 0.2743], [0.8413, 0.8413]])
    _close(log_cdf, [[-0.4814, -1.2937], [-0.1728, -0.1728]])
    _close(surv, [[0.3821, 0.7257], [0.1587, 0.1587]])
    _close(_run(n.log_prob([[0.5, 0.5]])), [[-1.0439, -1.6433]])
    _close(_run(n.quantile([0.1, 0.9])), [-1.2816, 3.5631])
    _close(_run(n.entropy()), [1.4189, 2.1121])
    _close(_run([n.stddev(), n.variance(), n.mode()]), [[1., 2.], [1., 4.], [0., 1.]])
    _close(_run(n.cross_entropy(tfd.Normal(0., 1.))), [1.4189, 3.4189])
    _close(_run(n.copy(loc=[5., 5.]).mean()), [5., 5.])


def test_discrete_values_match_tf():
    b = tfd.Bernoulli(probs=[0.2, 0.7])
    got = _run([b.log_prob([1, 0]), b.entropy(), b.variance(), b.mode(), b.logits])
    _close(got[0], [-1.6094, -1.204])
    _close(got[1], [0.5004, 0.6109])
    _close(got[2], [0.16, 0.21])
    assert got[3].dtype == np.int32 and got[3].tolist() == [0, 1]
    _close(got[4], [-1.3863, 0.8473])
    assert b.sample(6).shape.as_list() == [6, 2] and b.sample(6).dtype == tf.int32
    c = tfd.Categorical(logits=[[1., 2., 3.], [0., 0., 1.]])
    got = _run([c.log_prob([2, 0]), c.prob([[0], [1]]), c.entropy(), c.mode(), c.event_size])
    _close(got[0], [-0.4076, -1.5514])
    _close(got[1], [[0.09, 0.2119], [0.2447, 0.2119]])
    _close(got[2], [0.8324, 0.9753])
    assert got[3].tolist() == [2, 2] and int(got[4]) == 3
    assert c.sample(5).shape.as_list() == [5, 2] and c.sample(5).dtype == tf.int32
    mn = tfd.Multinomial(total_count=[3., 5.], probs=[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    _close(_run(mn.log_prob([[1., 1., 1.], [0., 1., 4.]])), [-1.7148, -1.5857])
    _close(_run(mn.covariance())[0], [[0.48, -0.18, -0.3], [-0.18, 0.63, -0.45],
                                      [-0.3, -0.45, 0.75]])
    dm = tfd.DirichletMultinomial(total_count=5., concentration=[[1., 2., 3.], [.5, .5, 4.]])
    _close(_run(dm.log_prob([[1., 1., 3.], [0., 1., 4.]]))[1], -1.9741)
    _close(_run(dm.covariance())[0], [[1.0913, -0.4365, -0.6548], [-0.4365, 1.746, -1.3095],
                                      [-0.6548, -1.3095, 1.9643]])


def test_continuous_values_match_tf():
    cases = {  # distribution, x, TF's log_prob, cdf (None: TF has none), entropy, mean
        "laplace": (tfd.Laplace([0., 1.], [1., 0.5]), [[-0.5], [2.]],
                    [[-1.1931, -3.0], [-2.6931, -2.0]], [[0.3033, 0.0249], [0.9323, 0.9323]],
                    [1.6931, 1.0], [0., 1.]),
        "uniform": (tfd.Uniform([0., -1.], [1., 3.]), [[0.5], [-0.5], [3.5]],
                    [[0.0, -1.3863], [-np.inf, -1.3863], [-np.inf, -np.inf]],
                    [[0.5, 0.375], [0.0, 0.125], [1.0, 1.0]], [0.0, 1.3863], [0.5, 1.0]),
        "exponential": (tfd.Exponential([0.5, 2.]), [[0.3], [1.7]],
                        [[-0.8431, 0.0931], [-1.5431, -2.7069]],
                        [[0.1393, 0.4512], [0.5726, 0.9666]], [1.6931, 0.3069], [2., 0.5]),
        "gamma": (tfd.Gamma([0.5, 2., 3.], [1., 2., 0.5]), [[0.3], [1.7]],
                  [[-0.2704, -0.4177, -5.3305], [-2.5377, -1.4831, -2.5613]],
                  [[0.5614, 0.1219, 0.0005], [0.9348, 0.8532, 0.0549]],
                  [0.0906, 0.8841, 2.5407], [0.5, 1.0, 6.0]),
        "beta": (tfd.Beta([0.5, 2., 3.], [2., 2., 0.7]), [[0.3], [0.9]],
                 [[-0.0424, 0.2311, -1.8269], [-2.5376, -0.6162, 0.9541]], None,
                 [-0.7653, -0.1251, -0.7015], [0.2, 0.5, 0.8108]),
        "student_t": (tfd.StudentT([0.8, 2., 5.], [0., 1., -1.], [1., 2., 0.5]),
                      [[0.3], [-1.7]], [[-1.287, -1.822, -2.8413], [-2.567, -2.7045, -1.2677]],
                      None, [2.8169, 2.6534, 0.9344], [np.nan, 1.0, -1.0]),
        "dirichlet": (tfd.Dirichlet([[1., 2., 3.], [0.5, 0.5, 4.]]),
                      [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], [1.5041, 1.8747], None,
                      [-1.2443, -2.9612], [[1 / 6, 1 / 3, 0.5], [0.1, 0.1, 0.8]]),
    }
    for name, (d, x, log_prob, cdf, entropy, mean) in cases.items():
        got = _run([d.log_prob(x), d.entropy(), d.mean()])
        for g, w in zip(got, [log_prob, entropy, mean]):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=name)
        if cdf is not None:
            np.testing.assert_allclose(_run(d.cdf(x)), cdf, rtol=1e-4, atol=1e-4, err_msg=name)
    _close(_run(tfd.StudentT([0.5, 1.5, 3.], 0., 1.).variance()), [np.nan, np.inf, 3.0])
    _close(_run(tfd.Gamma([0.5, 2., 3.], [1., 2., .5]).mode()), [np.nan, 0.5, 4.0])
    _close(_run(tfd.Exponential([0.5, 2.]).mode()), [np.nan, np.nan])  # TF: Gamma's rule


def test_kl_divergences_match_tf():
    pairs = [
        (tfd.Normal([0., 1.], [1., 2.]), tfd.Normal(0.5, 1.5), [0.1832, 0.1568]),
        (tfd.Bernoulli(probs=[0.2, 0.7]), tfd.Bernoulli(probs=0.5), [0.1927, 0.0823]),
        (tfd.Categorical(logits=[[1., 2., 3.], [0., 0., 1.]]),
         tfd.Categorical(logits=[0., 1., 0.]), [0.4743, 0.3642]),
        (tfd.Gamma([1., 2.], [2., 1.]), tfd.Gamma(3., 1.), [3.427, 0.2704]),
        (tfd.Exponential([1., 2.]), tfd.Exponential(3.), [0.9014, 0.0945]),
        (tfd.Exponential([1., 2.]), tfd.Gamma(3., 1.), [1.8476, 3.427]),
        (tfd.Beta([1., 2.], [2., 3.]), tfd.Beta(3., 1.), [2.0945, 1.303]),
        (tfd.Dirichlet([[1., 2., 3.]]), tfd.Dirichlet([2., 2., 2.]), [0.8069]),
        (tfd.Bernoulli(probs=[0.1, 0.9]), tfd.Bernoulli(logits=0.2), [0.4531, 0.2931]),
    ]
    for a, b, want in pairs:
        _close(_run(tfd.kl_divergence(a, b)), want)
    _close(_run(tfd.Normal([0., 1.], [1., 2.]).kl_divergence(tfd.Normal(0., 1.))),
           [0.0, 1.3069])
    for a, b in [(tfd.Uniform(0., 1.), tfd.Uniform(0., 2.)),
                 (tfd.Laplace(0., 1.), tfd.Laplace(1., 1.))]:
        with pytest.raises(NotImplementedError):
            tfd.kl_divergence(a, b)


def test_register_kl_nearest_rule_and_duplicates():
    class Sharp(tfd.Normal):
        pass

    @tfd.RegisterKL(Sharp, tfd.Normal)
    def _kl(a, b, name=None):
        return tf.constant(7.0)

    assert _run(tfd.kl_divergence(Sharp(0., 1.), tfd.Normal(0., 1.))) == 7.0
    _close(_run(tfd.kl_divergence(tfd.Normal(0., 1.), Sharp(1., 1.))), 0.5)  # Normal's rule
    with pytest.raises(ValueError, match="already been registered"):
        tfd.RegisterKL(Sharp, tfd.Normal)(_kl)


# -- scipy.stats on other points -----------------------------------------------------------------
def test_values_against_scipy():
    x = np.array([0.15, 0.4, 0.85], np.float64)
    checks = [
        (tfd.Beta(np.float64(2.5), np.float64(1.5)), stats.beta(2.5, 1.5)),
        (tfd.Gamma(np.float64(2.5), np.float64(3.0)), stats.gamma(2.5, scale=1 / 3.0)),
        (tfd.StudentT(np.float64(4.0), np.float64(0.2), np.float64(1.5)),
         stats.t(4.0, loc=0.2, scale=1.5)),
        (tfd.Laplace(np.float64(0.2), np.float64(0.7)), stats.laplace(0.2, 0.7)),
        (tfd.Normal(np.float64(0.2), np.float64(0.7)), stats.norm(0.2, 0.7)),
    ]
    for d, ref in checks:
        lp, cdf, ent = _run([d.log_prob(x), d.cdf(x), d.entropy()])
        np.testing.assert_allclose(lp, ref.logpdf(x), rtol=1e-8)
        np.testing.assert_allclose(cdf, ref.cdf(x), rtol=1e-6)
        np.testing.assert_allclose(ent, ref.entropy(), rtol=1e-8)
    alpha = np.array([0.6, 2.0, 3.0])
    dirichlet = tfd.Dirichlet(alpha)
    point = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(_run(dirichlet.log_prob(point)),
                               stats.dirichlet(alpha).logpdf(point), rtol=1e-8)
    np.testing.assert_allclose(_run(dirichlet.entropy()), stats.dirichlet(alpha).entropy(),
                               rtol=1e-8)


# -- gradients -----------------------------------------------------------------------------------
def _fd_check(build, params, eps=1e-6):
    """d build(*params) / d params against central differences, in float64."""
    ts = [tf.constant(p, tf.float64) for p in params]
    out = tf.reduce_sum(build(*ts))
    grads = tf.gradients(out, ts)
    with tf.Session() as sess:
        got = sess.run(grads)
        for i, p in enumerate(params):
            p = np.asarray(p, np.float64)
            num = np.zeros_like(p)
            for j in np.ndindex(p.shape):
                hi, lo = p.copy(), p.copy()
                hi[j] += eps
                lo[j] -= eps
                f = [sess.run(out, {ts[i]: hi}), sess.run(out, {ts[i]: lo})]
                num[j] = (f[0] - f[1]) / (2 * eps)
            np.testing.assert_allclose(got[i], num, rtol=1e-5, atol=1e-7)


def test_log_prob_entropy_and_kl_gradients_match_finite_differences():
    x = np.array([0.3, 0.8])
    _fd_check(lambda m, s: tfd.Normal(m, s).log_prob(x), [[0.1, 0.4], [1.2, 0.7]])
    _fd_check(lambda a, b: tfd.Beta(a, b).log_prob(x) + tfd.Beta(a, b).entropy(),
              [[1.5, 2.5], [2.0, 0.8]])
    _fd_check(lambda c, r: tfd.Gamma(c, r).log_prob(x) + tfd.Gamma(c, r).entropy(),
              [[1.5, 2.5], [2.0, 0.8]])
    f64 = np.float64
    _fd_check(lambda df, s: tfd.StudentT(df, f64(0.1), s).log_prob(x), [[3.0, 5.0], [1.2, 0.7]])
    _fd_check(lambda m, s: tfd.kl_divergence(tfd.Normal(m, s), tfd.Normal(f64(0.3), f64(1.4))),
              [[0.1, 0.4], [1.2, 0.7]])
    _fd_check(lambda lg: tfd.Categorical(logits=lg).entropy()
              + tfd.Categorical(logits=lg).log_prob([2, 0]), [[[1.0, 2.0, 0.5], [0.1, 0.3, 0.2]]])


def test_reparameterized_samples_carry_gradients():
    loc, scale = tf.constant([0.5, -1.0]), tf.constant([2.0, 0.5])
    n = tfd.Normal(loc, scale)
    s = n.sample(4000, seed=7)
    g_loc, g_scale = tf.gradients(tf.reduce_mean(s, 0), [loc, scale])
    eps = (s - loc) / scale
    got = _run([g_loc, g_scale, tf.reduce_mean(eps, 0)])
    _close(got[0], [1.0, 1.0])
    _close(got[1], got[2], atol=1e-5)  # d mean(loc + scale*eps) / d scale = mean(eps)
    alpha = tf.constant([0.7, 2.0, 6.0])
    g = tf.gradients(tf.reduce_mean(tf.square(tfd.Gamma(alpha, 1.).sample(20000, seed=2)), 0),
                     alpha)[0]
    # E[x^2] = a(a+1), so d/da = 2a + 1 (sampling error a few percent)
    np.testing.assert_allclose(_run(g), [2.4, 5.0, 13.0], rtol=0.08)
    beta_grad = tf.gradients(tf.reduce_mean(tfd.Beta(alpha, 2.).sample(20000, seed=3)), alpha)
    assert beta_grad[0] is not None
    assert tf.gradients(tfd.Bernoulli(probs=0.3).sample(5), []) == []


# -- samples: shapes, dtypes, moments ---------------------------------------------------------
def test_sample_shapes_dtypes_and_moments():
    cases = [
        (tfd.Normal([0., 3.], [1., 0.5]), [0., 3.], [1., 0.25]),
        (tfd.Laplace([0., 3.], [1., 0.5]), [0., 3.], [2., 0.5]),
        (tfd.Uniform([0., -1.], [1., 3.]), [0.5, 1.0], [1 / 12, 16 / 12]),
        (tfd.Exponential([0.5, 2.]), [2., 0.5], [4., 0.25]),
        (tfd.Gamma([2., 5.], [1., 2.]), [2., 2.5], [2., 1.25]),
        (tfd.Beta([2., 5.], [3., 1.]), [0.4, 5 / 6], [0.04, 5 / 252]),
        (tfd.StudentT([5., 8.], [1., 0.], [1., 2.]), [1., 0.], [5 / 3, 4 * 8 / 6]),
        (tfd.Bernoulli(probs=[0.2, 0.9], dtype=tf.float32), [0.2, 0.9], [0.16, 0.09]),
        (tfd.Dirichlet([1., 2., 5.]), [0.125, 0.25, 0.625], None),
        (tfd.Multinomial(4., probs=[0.25, 0.75]), [1., 3.], [0.75, 0.75]),
        (tfd.DirichletMultinomial(4., [1., 3.]), [1., 3.], None),
    ]
    for d, mean, var in cases:
        s = d.sample([200, 100], seed=11)
        want_shape = [200, 100, *d.batch_shape.as_list(), *d.event_shape.as_list()]
        assert s.shape.as_list() == want_shape, type(d).__name__
        assert s.dtype == d.dtype
        v = _run(s).reshape([20000, *want_shape[2:]]).astype(np.float64)
        np.testing.assert_allclose(v.mean(0), mean, rtol=0.05, atol=0.03,
                                   err_msg=type(d).__name__)
        if var is not None:
            np.testing.assert_allclose(v.var(0), var, rtol=0.1, atol=0.01,
                                       err_msg=type(d).__name__)
    counts = _run(tfd.Multinomial([2., 6.], logits=[0., 1.]).sample(50, seed=1))
    assert counts.shape == (50, 2, 2)
    np.testing.assert_array_equal(counts.sum(-1), np.broadcast_to([2., 6.], (50, 2)))
    draws = _run(tfd.Categorical(probs=[0.1, 0.6, 0.3]).sample(20000, seed=4))
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 20000, [0.1, 0.6, 0.3],
                               atol=0.015)


def test_sample_shape_forms_and_unknown_batch():
    n = tfd.Normal(0., 1.)
    assert n.sample().shape.as_list() == []
    assert n.sample(tf.constant([2, 3])).shape.as_list() == [2, 3]
    ph = tf.placeholder(tf.int32, [2])
    assert n.sample(ph).shape.as_list() == [None, None]
    loc = tf.placeholder(tf.float32, [None, 4])
    d = tfd.Normal(loc, 1.)
    assert d.batch_shape.as_list() == [None, 4]
    s = d.sample(5)
    assert s.shape.as_list() == [5, None, 4]
    got = _run([s, d.batch_shape_tensor()], {loc: np.zeros([3, 4])})
    assert got[0].shape == (5, 3, 4) and got[1].tolist() == [3, 4]
    assert _run(d.event_shape_tensor()).tolist() == []
    assert _run([d.is_scalar_batch(), d.is_scalar_event()]) == [False, True]


def test_random_gamma_grad_kernel_matches_inverse_cdf_derivative():
    """d sample / d alpha at fixed u = F(sample; alpha): the derivative of scipy's
    inverse regularized incomplete gamma, by central differences."""
    from scipy import special

    from flowgraph.ops.op_util import make_tensor
    alpha = np.array([0.3, 1.0, 2.5, 9.0])
    sample = np.array([[0.05, 0.7, 2.0, 8.0], [0.9, 2.5, 0.4, 12.0]])
    got = _run(make_tensor("RandomGammaGrad", [tf.constant(alpha), tf.constant(sample)]))
    u = special.gammainc(alpha, sample)
    h = 1e-6
    want = (special.gammaincinv(alpha + h, u) - special.gammaincinv(alpha - h, u)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-5)
