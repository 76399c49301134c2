"""`tf.contrib.distributions.Poisson`: counts with mean `rate` (or ``exp(log_rate)``)."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from flowgraph.ops.math_ops import floor
from flowgraph.ops.math_special import igammac
from flowgraph.ops.misc_compat_ops import random_poisson

__all__ = ["Poisson"]


class Poisson(Distribution):
    """``P(k) = rate^k exp(-rate) / k!``; exactly one of `rate`, `log_rate`.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.contrib.distributions.Poisson(rate=[1., 4.])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.log_prob(2.)).round(4))
    [-1.6931 -1.9206]
    """

    def __init__(self, rate=None, log_rate=None, validate_args=False, allow_nan_stats=True,
                 name="Poisson"):
        parameters = {"rate": rate, "log_rate": log_rate, "validate_args": validate_args,
                      "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[rate, log_rate]) as scope:
            if (rate is None) == (log_rate is None):
                raise ValueError("Must specify exactly one of `rate` and `log_rate`.")
            if log_rate is None:
                rate = o.convert_to_tensor(rate, name="rate")
                if not rate.dtype.is_floating:
                    raise TypeError(f"rate.dtype ({rate.dtype.name}) is a not a float-type.")
                if validate_args:
                    rate = o.with_dependencies([o.assert_positive(rate)], rate)
                self._rate, self._log_rate = rate, o.log(rate, name="log_rate")
            else:
                log_rate = o.convert_to_tensor(log_rate, name="log_rate")
                if not log_rate.dtype.is_floating:
                    raise TypeError(f"log_rate.dtype ({log_rate.dtype.name}) is a not a "
                                    f"float-type.")
                self._rate, self._log_rate = o.exp(log_rate, name="rate"), log_rate
        super().__init__(self._rate.dtype.base_dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._rate], scope)

    @property
    def rate(self):
        """The mean count."""
        return self._rate

    @property
    def log_rate(self):
        """The log of the mean count."""
        return self._log_rate

    def _batch_shape(self):
        return self._rate.shape

    def _batch_shape_tensor(self):
        return o.shape(self._rate)

    def _log_prob(self, x):
        return self._log_unnormalized_prob(x) - self._rate

    def _log_unnormalized_prob(self, x):
        return x * self._log_rate - o.lgamma(1.0 + x)

    def _cdf(self, x):
        return igammac(1.0 + floor(x), self._rate)

    def _mean(self):
        return o.identity(self._rate)

    def _variance(self):
        return o.identity(self._rate)

    def _mode(self):
        return floor(self._rate)

    def _sample_n(self, n, seed=None):
        return random_poisson(self._rate, [n], dtype=self.dtype, seed=seed)
