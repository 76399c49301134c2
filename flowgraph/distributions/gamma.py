"""`tf.distributions.Gamma` (concentration, rate) and `Exponential` (a Gamma with
concentration 1)."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    params_dict,
    same_float_dtype,
)
from flowgraph.distributions.kullback_leibler import RegisterKL

__all__ = ["Exponential", "Gamma"]


class Gamma(Distribution):
    """The Gamma distribution: density ``rate**c x**(c-1) exp(-rate x) / Gamma(c)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Gamma(concentration=3., rate=2.)
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.stack([d.mean(), d.variance()])))
    [1.5  0.75]
    """

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[concentration, rate]) as scope:
            checks = ([o.assert_positive(concentration), o.assert_positive(rate)]
                      if validate_args else [])
            with o.control_dependencies(checks):
                self._concentration = o.identity(concentration, name="concentration")
                self._rate = o.identity(rate, name="rate")
            dtype = same_float_dtype([self._concentration, self._rate])
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._concentration, self._rate], name=scope)

    @property
    def concentration(self):
        """The shape parameter ``alpha``."""
        return self._concentration

    @property
    def rate(self):
        """The inverse scale ``beta``."""
        return self._rate

    def _sample_n(self, n, seed=None):
        return o.random_gamma([n], self._concentration, beta=self._rate, dtype=self.dtype,
                              seed=seed)

    def _log_prob(self, x):
        c, rate = self._concentration, self._rate
        return o.xlogy(c - 1.0, x) - rate * x - (o.lgamma(c) - c * o.log(rate))

    def _cdf(self, x):
        return o.igamma(self._concentration, self._rate * x)

    def _entropy(self):
        c = self._concentration
        return c - o.log(self._rate) + o.lgamma(c) + (1.0 - c) * o.digamma(c)

    def _mean(self):
        return self._concentration / self._rate

    def _variance(self):
        return self._concentration / o.square(self._rate)

    def _stddev(self):
        return o.sqrt(self._concentration) / self._rate

    def _mode(self):
        mode = (self._concentration - 1.0) / self._rate
        bad = o.logical_not(o.greater(self._concentration * o.ones_like(mode), 1.0))
        return self._nan_where(bad, mode, "mode not defined when any concentration <= 1")


class Exponential(Gamma):
    """The exponential distribution with `rate`: density ``rate exp(-rate x)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Exponential(rate=4.)
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mean()))
    0.25
    """

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[rate]) as scope:
            rate_t = o.convert_to_tensor(rate, name="rate")
            super().__init__(concentration=o.ones([], dtype=rate_t.dtype), rate=rate_t,
                             validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                             name=scope)
        self._parameters = parameters

    def _log_survival_function(self, x):
        return self._log_prob(x) - o.log(self._rate)

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], o.shape(self._rate)], 0)
        tiny = float.fromhex("0x1p-126") if self.dtype.size == 4 else 2.0 ** -1022
        u = o.random_uniform(shape, minval=tiny, maxval=1.0, dtype=self.dtype, seed=seed)
        return -o.log(u) / self._rate

    # log_prob, entropy, ...: Gamma's with concentration 1 (TF's ops and names)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(a, b, name=None):
    with o.name_scope(name or "kl_gamma_gamma",
                      values=[a.concentration, a.rate, b.concentration, b.rate]):
        return ((a.concentration - b.concentration) * o.digamma(a.concentration)
                + o.lgamma(b.concentration) - o.lgamma(a.concentration)
                + b.concentration * o.log(a.rate) - b.concentration * o.log(b.rate)
                + a.concentration * (b.rate / a.rate - 1.0))
