"""`tf.distributions.Beta` and `tf.distributions.Dirichlet`, sampled as normalized
Gamma draws."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
    params_dict,
    same_float_dtype,
)
from flowgraph.distributions.kullback_leibler import RegisterKL
from flowgraph.framework import dtypes as _dtypes

__all__ = ["Beta", "Dirichlet"]


def _checked_positive(concentration, validate_args):
    """`concentration`, or a ``control_dependency`` Identity after its positivity check."""
    if not validate_args:
        return concentration
    check = o.assert_positive(concentration, message="Concentration parameter must be positive.")
    return o.with_dependencies([check], concentration)


class Beta(Distribution):
    """The Beta distribution on (0, 1) with `concentration1` (alpha) and
    `concentration0` (beta).

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Beta(concentration1=2., concentration0=6.)
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mean()))
    0.25
    """

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[concentration1, concentration0]) as scope:
            # as TF: the converted tensors themselves, each behind its own check
            self._concentration1 = _checked_positive(
                o.convert_to_tensor(concentration1, name="concentration1"), validate_args)
            self._concentration0 = _checked_positive(
                o.convert_to_tensor(concentration0, name="concentration0"), validate_args)
            dtype = same_float_dtype([self._concentration1, self._concentration0])
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration1, self._concentration0],
                         name=scope)

    @property
    def concentration1(self):
        """Alpha, the pseudo-count of ones."""
        return self._concentration1

    @property
    def concentration0(self):
        """Beta, the pseudo-count of zeros."""
        return self._concentration0

    @property
    def total_concentration(self):
        """``concentration1 + concentration0``."""
        return self._total_concentration

    def _sample_n(self, n, seed=None):
        ones = o.ones_like(self._total_concentration)
        g1 = o.random_gamma([n], self._concentration1 * ones, dtype=self.dtype, seed=seed)
        g0 = o.random_gamma([n], self._concentration0 * ones, dtype=self.dtype,
                            seed=gen_new_seed(seed, "beta"))
        return g1 / (g1 + g0)

    def _log_normalization(self):
        return (o.lgamma(self._concentration1) + o.lgamma(self._concentration0)
                - o.lgamma(self._total_concentration))

    def _valid_sample(self, x):
        if not self.validate_args:
            return x
        checks = [o.assert_positive(x, message="sample must be positive."),
                  o.assert_less(x, o.ones([], self.dtype),
                                message="sample must be less than `1`.")]
        with o.control_dependencies(checks):
            return o.identity(x)

    def _log_prob(self, x):
        x = self._valid_sample(o.convert_to_tensor(x, name="x"))
        unnormalized = (o.xlogy(self._concentration1 - 1.0, x)
                        + (self._concentration0 - 1.0) * o.log1p(-x))
        return unnormalized - self._log_normalization()

    def _cdf(self, x):
        x = self._valid_sample(o.convert_to_tensor(x, name="x"))
        ones = o.ones_like(x) * o.ones_like(self._total_concentration)
        return o.betainc(self._concentration1 * ones, self._concentration0 * ones, x * ones)

    def _entropy(self):
        c1, c0, total = self._concentration1, self._concentration0, self._total_concentration
        return (self._log_normalization() - (c1 - 1.0) * o.digamma(c1)
                - (c0 - 1.0) * o.digamma(c0) + (total - 2.0) * o.digamma(total))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        return self._mean() * (1.0 - self._mean()) / (1.0 + self._total_concentration)

    def _mode(self):
        mode = (self._concentration1 - 1.0) / (self._total_concentration - 2.0)
        bad = o.logical_or(o.logical_not(o.greater(self._concentration1 * o.ones_like(mode), 1.0)),
                           o.logical_not(o.greater(self._concentration0 * o.ones_like(mode), 1.0)))
        return self._nan_where(bad, mode, "Mode undefined for concentration1 <= 1 "
                                          "or concentration0 <= 1.")


class Dirichlet(Distribution):
    """The Dirichlet distribution over the simplex; event shape ``[k]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Dirichlet([1., 2., 5.])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mean()))
    [0.125 0.25  0.625]
    """

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[concentration]) as scope:
            c = o.convert_to_tensor(concentration, name="concentration")
            self._concentration = _checked_positive(c, validate_args)
            dtype = same_float_dtype([self._concentration])
            self._total_concentration = o.reduce_sum(self._concentration, -1)
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._concentration],
                         name=scope)

    @property
    def concentration(self):
        """The concentration per category (last axis)."""
        return self._concentration

    @property
    def total_concentration(self):
        """The sum of the concentrations over the last axis."""
        return self._total_concentration

    def _batch_shape(self):
        return self._concentration.shape.with_rank_at_least(1)[:-1]

    def _batch_shape_tensor(self):
        return o.shape(self._total_concentration)

    def _event_shape(self):
        return self._concentration.shape.with_rank_at_least(1)[-1:]

    def _event_shape_tensor(self):
        return o.shape(self._concentration)[-1:]

    def _k(self):
        return o.cast(o.shape(self._concentration)[-1], self.dtype)

    def _sample_n(self, n, seed=None):
        g = o.random_gamma([n], self._concentration, dtype=self.dtype, seed=seed)
        return g / o.reduce_sum(g, -1, keepdims=True)

    def _log_prob(self, x):
        if self.validate_args:
            x = o.with_dependencies([
                o.assert_positive(x, message="samples must be positive"),
                o.assert_near(o.ones([], dtype=self.dtype), o.reduce_sum(x, -1),
                              message="sample last-dimension must sum to `1`")], x)
        return (o.reduce_sum(o.xlogy(self._concentration - 1.0, x), -1)
                - o.lbeta(self._concentration))

    def _entropy(self):
        c, total = self._concentration, self._total_concentration
        return (o.lbeta(c) + (total - self._k()) * o.digamma(total)
                - o.reduce_sum((c - 1.0) * o.digamma(c), -1))

    def _mean(self):
        return self._concentration / o.expand_dims(self._total_concentration, -1)

    def _covariance(self):
        total = o.expand_dims(self._total_concentration, -1)
        mean = self._concentration / total
        scale = 1.0 / (1.0 + total)
        outer = o.expand_dims(mean, -1) * o.expand_dims(mean, -2)
        diag = o.expand_dims(mean, -1) * o.one_hot(
            o.range(o.shape(mean)[-1]), o.shape(mean)[-1], dtype=self.dtype)
        return o.expand_dims(scale, -1) * (diag - outer)

    def _variance(self):
        scale = o.rsqrt(1.0 + o.expand_dims(self._total_concentration, -1))
        x = scale * self._mean()
        return x * (scale - x)

    def _mode(self):
        mode = ((self._concentration - 1.0)
                / o.expand_dims(self._total_concentration - self._k(), -1))
        bad = o.logical_not(o.reduce_all(o.greater(self._concentration, 1.0), -1,
                                         keepdims=True))
        bad = bad & o.ones_like(mode, dtype=_dtypes.bool)
        return self._nan_where(bad, mode, "Mode undefined when any concentration <= 1")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(a, b, name=None):
    with o.name_scope(name or "kl_beta_beta"):
        # TF's order of terms (each difference taken as b's minus a's), so its op names
        return (b._log_normalization() - a._log_normalization()
                - o.digamma(a.concentration1) * (b.concentration1 - a.concentration1)
                - o.digamma(a.concentration0) * (b.concentration0 - a.concentration0)
                + o.digamma(a.total_concentration)
                * (b.total_concentration - a.total_concentration))


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(a, b, name=None):
    with o.name_scope(name or "kl_dirichlet_dirichlet"):
        ca, cb = a.concentration, b.concentration
        ta = o.expand_dims(a.total_concentration, -1)
        return (o.lgamma(a.total_concentration) - o.lgamma(b.total_concentration)
                - o.reduce_sum(o.lgamma(ca) - o.lgamma(cb), -1)
                + o.reduce_sum((ca - cb) * (o.digamma(ca) - o.digamma(ta)), -1))
