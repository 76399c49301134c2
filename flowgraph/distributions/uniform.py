"""`tf.distributions.Uniform` on ``[low, high)`` and `tf.distributions.StudentT`."""

from __future__ import annotations

import math

import numpy as np

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
    params_dict,
    same_float_dtype,
)

__all__ = ["StudentT", "Uniform"]


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Uniform(low=1., high=3.)
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.stack([d.prob(2.), d.cdf(2.5)])))
    [0.5  0.75]
    """

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[low, high]) as scope:
            checks = ([o.assert_less(low, high, message="uniform not defined when "
                                     "low >= high.")] if validate_args else [])
            with o.control_dependencies(checks):
                self._low = o.identity(low, name="low")
                self._high = o.identity(high, name="high")
            dtype = same_float_dtype([self._low, self._high])
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._low, self._high],
                         name=scope)

    @property
    def low(self):
        """The lower bound (included)."""
        return self._low

    @property
    def high(self):
        """The upper bound (excluded)."""
        return self._high

    def range(self, name: str = "range"):
        """``high - low``."""
        with self._name_scope(name):
            return self._high - self._low

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], self.batch_shape_tensor()], 0)
        u = o.random_uniform(shape, dtype=self.dtype, seed=seed)
        return self._low + (self._high - self._low) * u

    def _prob(self, x):
        ones = o.ones_like(x) * o.ones_like(self._low) * o.ones_like(self._high)
        inside = 1.0 / (self._high - self._low) * ones
        outside = o.logical_or(o.less(x * ones, self._low * ones),
                               o.logical_not(o.less(x * ones, self._high * ones)))
        return o.where(o.is_nan(x * ones), x * ones,
                       o.where(outside, o.zeros_like(inside), inside))

    def _cdf(self, x):
        # TF's selects (0 below low, 1 from high on) over the broadcast shape
        shape = o.broadcast_dynamic_shape(o.shape(x), self.batch_shape_tensor())
        zeros = o.zeros(shape, dtype=self.dtype)
        ones = o.ones(shape, dtype=self.dtype)
        inside = o.where(x < self._low, zeros, (x * ones - self._low) / self.range())
        return o.where(x >= self._high, ones, inside)

    def _entropy(self):
        return o.log(self._high - self._low)

    def _mean(self):
        return (self._low + self._high) / 2.0

    def _variance(self):
        return o.square(self._high - self._low) / 12.0

    def _stddev(self):
        return (self._high - self._low) / math.sqrt(12.0)


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.StudentT(df=3., loc=0., scale=1.)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(d.variance())), 4))
    3.0
    """

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[df, loc, scale]) as scope:
            checks = [o.assert_positive(df)] if validate_args else []
            with o.control_dependencies(checks):
                self._df = o.identity(df, name="df")
                self._loc = o.identity(loc, name="loc")
                self._scale = o.identity(scale, name="scale")
            dtype = same_float_dtype([self._df, self._loc, self._scale])
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._df, self._loc, self._scale], name=scope)

    @property
    def df(self):
        """Degrees of freedom."""
        return self._df

    @property
    def loc(self):
        """The location (the mean where ``df > 1``)."""
        return self._loc

    @property
    def scale(self):
        """The scale."""
        return self._scale

    def _ones(self):
        return o.ones_like(self._df) * o.ones_like(self._loc) * o.ones_like(self._scale)

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], self.batch_shape_tensor()], 0)
        normal = o.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self._df * self._ones()
        gamma = o.random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                               seed=gen_new_seed(seed, "student_t"))
        return self._loc + self._scale * normal * o.sqrt(df / gamma)

    def _log_prob(self, x):
        y = (x - self._loc) / self._scale
        half_df = 0.5 * self._df
        log_norm = (o.log(o.abs(self._scale)) + 0.5 * o.log(self._df)
                    + 0.5 * math.log(math.pi) + o.lgamma(half_df) - o.lgamma(half_df + 0.5))
        return -(half_df + 0.5) * o.log1p(o.square(y) / self._df) - log_norm

    def _cdf(self, x):
        ones = o.ones_like(x) * self._ones()
        y = (x - self._loc) / self._scale * ones
        df = self._df * ones
        x_t = df / (o.square(y) + df)
        lower = 0.5 * o.betainc(0.5 * df, 0.5 * ones, x_t)
        return o.where(o.less(y, 0.0), lower, 1.0 - lower)

    def _entropy(self):
        ones = self._ones()
        df = self._df * ones
        half = 0.5 * ones
        return (0.5 * (df + 1.0) * (o.digamma(0.5 * (df + 1.0)) - o.digamma(0.5 * df))
                + 0.5 * o.log(df) + o.lbeta(o.stack([0.5 * df, half], -1))
                + o.log(o.abs(self._scale)))

    def _mean(self):
        mean = self._loc * self._ones()
        bad = o.logical_not(o.greater(self._df * self._ones(), 1.0))
        return self._nan_where(bad, mean, "mean not defined for components of df <= 1")

    def _variance(self):
        # TF's layout: the denominator is 1 where df <= 2, so no gradient is ever NaN
        df, batch = self._df, self.batch_shape_tensor()
        np_dtype = self.dtype.as_numpy_dtype
        denom = o.where(o.greater(df, 2.0), df - 2.0, o.ones_like(df))
        var = o.ones(batch, dtype=self.dtype) * o.square(self._scale) * df / denom
        var = o.where(o.greater(df, o.fill(batch, np_dtype(2.0))), var,
                      o.fill(batch, np_dtype(np.inf), name="inf"))
        if not self.allow_nan_stats:
            bad = o.logical_not(o.greater(df * self._ones(), 1.0))
            return self._nan_where(bad, var, "variance not defined for components of df <= 1")
        return o.where(o.greater(df, o.ones(batch, dtype=self.dtype)), var,
                       o.fill(batch, np_dtype(np.nan), name="nan"))

    def _mode(self):
        return o.identity(self._loc)  # as TF: the location itself, not broadcast
