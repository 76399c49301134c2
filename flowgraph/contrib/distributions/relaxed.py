"""`tf.contrib.distributions.RelaxedOneHotCategorical` (Gumbel-softmax / Concrete) and
its log-space form `ExpRelaxedOneHotCategorical`, as TF 1.x's contrib builds them: a
draw is ``softmax((logits + Gumbel noise) / temperature)`` with the noise from one
``random_uniform`` on ``(tiny, 1)`` of shape ``[n * batch, k]``."""

from __future__ import annotations

import numpy as np

from flowgraph.contrib.distributions._one_hot_shapes import OneHotEventShapes
from flowgraph.contrib.distributions.bijectors import Exp
from flowgraph.contrib.distributions.mvn import TransformedDistribution
from flowgraph.distributions import _ops as o
from flowgraph.distributions.categorical import logits_and_probs
from flowgraph.distributions.distribution import FULLY_REPARAMETERIZED, Distribution

__all__ = ["ExpRelaxedOneHotCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedOneHotCategorical(OneHotEventShapes, Distribution):
    """The logarithm of a RelaxedOneHotCategorical draw (a log-probability vector).

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.contrib.distributions.ExpRelaxedOneHotCategorical(0.5, logits=[0., 1.])
    >>> d.batch_shape.as_list(), d.event_shape.as_list()
    ([], [2])
    """

    def __init__(self, temperature, logits=None, probs=None, dtype=None, validate_args=False,
                 allow_nan_stats=True, name="ExpRelaxedOneHotCategorical"):
        parameters = {"temperature": temperature, "logits": logits, "probs": probs,
                      "dtype": dtype, "validate_args": validate_args,
                      "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[logits, probs, temperature]) as scope:
            self._logits, self._probs = logits_and_probs(logits, probs, True, validate_args)
            dtype = dtype or self._logits.dtype.base_dtype
            self._temperature = o.convert_to_tensor(temperature, name="temperature",
                                                    dtype=dtype)
            if validate_args:
                self._temperature = o.with_dependencies(
                    [o.assert_positive(self._temperature)], self._temperature)
            self._event_size = o.shape(self._logits)[-1]
        super().__init__(dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._logits, self._probs, self._temperature], scope)

    @property
    def temperature(self):
        """The softmax temperature (a batch of scalars)."""
        return self._temperature

    def _sample_n(self, n, seed=None):
        sample_shape = o.concat([[n], o.shape(self._logits)], 0)
        logits_2d = o.reshape(self._logits * o.ones(sample_shape, dtype=self.dtype),
                              o.stack([-1, self._event_size]))
        # the open interval (0, 1): the smallest normal number keeps log(log(u)) finite
        uniform = o.random_uniform(o.shape(logits_2d),
                                   minval=np.finfo(self.dtype.as_numpy_dtype).tiny,
                                   maxval=1.0, dtype=self.dtype, seed=seed)
        gumbel = -o.log(-o.log(uniform))
        temperature_2d = o.reshape(self._temperature, [-1, 1])
        samples = o.log_softmax((gumbel + logits_2d) / temperature_2d)
        return o.reshape(samples, sample_shape)

    def _log_prob(self, x):
        k = o.cast(self._event_size, x.dtype)
        temperature = o.expand_dims(self._temperature, -1)
        log_norm_const = o.lgamma(k) + (k - 1.0) * o.log(self._temperature)
        return log_norm_const + o.reduce_sum(o.log_softmax(self._logits - x * temperature),
                                             -1)


class RelaxedOneHotCategorical(TransformedDistribution):
    """A continuous relaxation of a one-hot Categorical on the simplex (Gumbel-softmax):
    ``exp`` of an `ExpRelaxedOneHotCategorical` draw.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.contrib.distributions.RelaxedOneHotCategorical(0.5, probs=[0.1, 0.5, 0.4])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.sample(seed=1)).sum().round(4))
    1.0
    """

    def __init__(self, temperature, logits=None, probs=None, dtype=None, validate_args=False,
                 allow_nan_stats=True, name="RelaxedOneHotCategorical"):
        base = ExpRelaxedOneHotCategorical(temperature, logits=logits, probs=probs,
                                           dtype=dtype, validate_args=validate_args,
                                           allow_nan_stats=allow_nan_stats)
        super().__init__(base, Exp(validate_args=validate_args), validate_args=validate_args,
                         name=name)

    @property
    def temperature(self):
        """The softmax temperature."""
        return self.distribution.temperature

    @property
    def logits(self):
        """The class logits."""
        return self.distribution.logits

    @property
    def probs(self):
        """The class probabilities."""
        return self.distribution.probs
