"""`tf.distributions.Normal` and `tf.distributions.Laplace`: location-scale families."""

from __future__ import annotations

import math

from flowgraph.distributions import _ops as o
from flowgraph.distributions import _special_math as special_math
from flowgraph.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    params_dict,
    same_float_dtype,
)
from flowgraph.distributions.kullback_leibler import RegisterKL

__all__ = ["Laplace", "Normal"]


class _LocScale(Distribution):
    """Shared constructor: ``loc`` and a positive ``scale`` of one float dtype."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, parameters):
        with o.name_scope(name, values=[loc, scale]) as scope:
            checks = [o.assert_positive(scale)] if validate_args else []
            with o.control_dependencies(checks):
                self._loc = o.identity(loc, name="loc")
                self._scale = o.identity(scale, name="scale")
            dtype = same_float_dtype([self._loc, self._scale])
        super().__init__(dtype=dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._loc, self._scale],
                         name=scope)

    @property
    def loc(self):
        """The location parameter."""
        return self._loc

    @property
    def scale(self):
        """The scale parameter."""
        return self._scale

    def _z(self, x):
        with o.name_scope("standardize", values=[x]):
            return (x - self._loc) / self._scale

    def _mean(self):
        return self._loc * o.ones_like(self._scale)

    def _mode(self):
        return self._mean()


class Normal(_LocScale):
    """The normal distribution ``N(loc, scale**2)``; samples are ``loc + scale * eps``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Normal(loc=0., scale=2.)
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.stack([d.cdf(0.), d.stddev()])))
    [0.5 2. ]
    """

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name,
                         params_dict(locals()))

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], self.batch_shape_tensor()], 0)
        eps = o.random_normal(shape, mean=0.0, stddev=1.0, dtype=self._loc.dtype, seed=seed)
        return eps * self._scale + self._loc

    def _log_prob(self, x):
        z = self._z(x)
        return -0.5 * o.square(z) - (0.5 * math.log(2.0 * math.pi) + o.log(self._scale))

    def _cdf(self, x):
        return special_math.ndtr(self._z(x))

    def _log_cdf(self, x):
        return special_math.log_ndtr(self._z(x))

    def _survival_function(self, x):
        return special_math.ndtr(-self._z(x))

    def _log_survival_function(self, x):
        return special_math.log_ndtr(-self._z(x))

    def _quantile(self, p):
        return self._inv_z(o.ndtri(p))

    def _inv_z(self, z):
        with o.name_scope("reconstruct", values=[z]):
            return z * self._scale + self._loc

    def _entropy(self):
        scale = self._scale * o.ones_like(self._loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + o.log(scale)

    def _stddev(self):
        return self._scale * o.ones_like(self._loc)


class Laplace(_LocScale):
    """The Laplace distribution: density ``exp(-|x - loc| / scale) / (2 scale)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Laplace(loc=1., scale=0.5)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(d.prob(1.))), 4))
    1.0
    """

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name,
                         params_dict(locals()))

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], self.batch_shape_tensor()], 0)
        tiny = float.fromhex("0x1p-23") if self.dtype.size == 4 else 2.0 ** -52
        u = o.random_uniform(shape, minval=-1.0 + tiny, maxval=1.0, dtype=self.dtype, seed=seed)
        return self._loc - self._scale * o.sign(u) * o.log1p(-o.abs(u))

    def _log_prob(self, x):
        return -math.log(2.0) - o.log(self._scale) - o.abs(self._z(x))

    def _log_cdf(self, x):
        return special_math.log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return special_math.log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 + 0.5 * o.sign(z) * (1.0 - o.exp(-o.abs(z)))

    def _entropy(self):
        scale = self._scale + o.zeros_like(self._loc)
        return math.log(2.0) + 1.0 + o.log(scale)

    def _mean(self):
        return self._loc + o.zeros_like(self._scale)

    def _stddev(self):
        return math.sqrt(2.0) * self._scale + o.zeros_like(self._loc)


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a, b, name=None):
    with o.name_scope(name or "kl_normal_normal", values=[a.loc, b.loc, a.scale, b.scale]):
        dtype = a.loc.dtype
        one = o.constant(1, dtype=dtype)
        two = o.constant(2, dtype=dtype)
        half = o.constant(0.5, dtype=dtype)
        s_a_squared, s_b_squared = o.square(a.scale), o.square(b.scale)
        ratio = s_a_squared / s_b_squared
        return (o.squared_difference(a.loc, b.loc) / (two * s_b_squared)
                + half * (ratio - one - o.log(ratio)))
