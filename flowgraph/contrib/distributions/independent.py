"""`tf.contrib.distributions.Independent`: batch dimensions read as event dimensions.

TF 1.x's contrib class: the rightmost `reinterpreted_batch_ndims` batch axes of the
wrapped distribution become event axes, so ``log_prob`` sums over them (a diagonal
Gaussian over a vector from a batch of scalar Normals).
"""

from __future__ import annotations

import numpy as np

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import Distribution
from flowgraph.distributions.kullback_leibler import RegisterKL, kl_divergence

__all__ = ["Independent"]


class Independent(Distribution):
    """The wrapped distribution with its last batch axes moved into the event.

    `reinterpreted_batch_ndims` defaults to all batch axes but the first (as
    ``tf.layers.flatten`` keeps axis 0); the name defaults to ``"Independent"`` plus the
    wrapped distribution's name.

    Example
    -------
    >>> import flowgraph as tf
    >>> tfd = tf.contrib.distributions
    >>> d = tfd.Independent(tfd.Normal(loc=[[0., 1.]], scale=1.))
    >>> d.batch_shape.as_list(), d.event_shape.as_list()
    ([1], [2])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.log_prob([[0., 1.]])).round(4))
    [-1.8379]
    """

    def __init__(self, distribution, reinterpreted_batch_ndims=None, validate_args=False,
                 name=None):
        parameters = {"distribution": distribution,
                      "reinterpreted_batch_ndims": reinterpreted_batch_ndims,
                      "validate_args": validate_args, "name": name}
        name = name or "Independent" + distribution.name
        self._distribution = distribution
        batch_ndims = distribution.batch_shape.ndims
        with o.name_scope(name) as scope:
            if reinterpreted_batch_ndims is None:
                if batch_ndims is None:
                    raise NotImplementedError(
                        "Independent: the wrapped distribution's batch rank must be known "
                        "to default reinterpreted_batch_ndims")
                reinterpreted_batch_ndims = max(0, batch_ndims - 1)
            self._reinterpreted_batch_ndims = o.convert_to_tensor(
                reinterpreted_batch_ndims, dtype="int32", name="reinterpreted_batch_ndims")
            static = o.constant_value(self._reinterpreted_batch_ndims)
            if static is None:
                raise NotImplementedError("Independent: reinterpreted_batch_ndims must be "
                                          "known when the graph is built")
            self._static_ndims = int(static)
            if self._static_ndims < 0:
                raise ValueError("Independent: reinterpreted_batch_ndims must be "
                                 f"non-negative, got {self._static_ndims}")
            if batch_ndims is not None and self._static_ndims > batch_ndims:
                raise ValueError(f"Independent: reinterpreted_batch_ndims "
                                 f"({self._static_ndims}) cannot exceed the wrapped "
                                 f"distribution's batch rank ({batch_ndims})")
        super().__init__(distribution.dtype, distribution.reparameterization_type,
                         validate_args, distribution.allow_nan_stats, parameters,
                         [self._reinterpreted_batch_ndims,
                          *getattr(distribution, "_graph_parents", [])], scope)

    @property
    def distribution(self):
        """The wrapped distribution."""
        return self._distribution

    @property
    def reinterpreted_batch_ndims(self):
        """The number of batch axes read as event axes (an int32 scalar)."""
        return self._reinterpreted_batch_ndims

    def _split(self, shape):
        cut = shape.ndims - self._static_ndims
        return shape[:cut], shape[cut:]

    def _batch_shape(self):
        shape = self._distribution.batch_shape
        return shape if shape.ndims is None else self._split(shape)[0]

    def _batch_shape_tensor(self):
        shape = self._distribution.batch_shape_tensor()
        return shape[:o.shape(shape)[0] - self._static_ndims]

    def _event_shape(self):
        shape = self._distribution.batch_shape
        if shape.ndims is None:
            return shape
        return self._split(shape)[1].concatenate(self._distribution.event_shape)

    def _event_shape_tensor(self):
        shape = self._distribution.batch_shape_tensor()
        return o.concat([shape[o.shape(shape)[0] - self._static_ndims:],
                         self._distribution.event_shape_tensor()], 0)

    def _reduce(self, reducer, stat):
        if self._static_ndims == 0:
            return stat
        return reducer(stat, axis=(-1 - np.arange(self._static_ndims)).tolist())

    def _sample_n(self, n, seed=None):
        return self._distribution.sample(n, seed=seed)

    def _log_prob(self, x):
        return self._reduce(o.reduce_sum, self._distribution.log_prob(x))

    def _prob(self, x):
        return self._reduce(o.reduce_prod, self._distribution.prob(x))

    def _log_cdf(self, x):
        return self._reduce(o.reduce_sum, self._distribution.log_cdf(x))

    def _entropy(self):
        return self._reduce(o.reduce_sum, self._distribution.entropy())

    def _mean(self):
        return self._distribution.mean()

    def _variance(self):
        return self._distribution.variance()

    def _stddev(self):
        return self._distribution.stddev()

    def _mode(self):
        return self._distribution.mode()


@RegisterKL(Independent, Independent)
def _kl_independent(a, b, name=None):
    """The wrapped KL summed over the reinterpreted axes (equal event shapes)."""
    if (a.event_shape.is_fully_defined() and b.event_shape.is_fully_defined()
            and a.event_shape.as_list() != b.event_shape.as_list()):
        raise ValueError(f"Event shapes do not match: {a.event_shape} vs {b.event_shape}.")
    if a.event_shape.ndims is None or a.distribution.event_shape.ndims is None:
        raise NotImplementedError("KL(Independent || Independent): the event ranks must be "
                                  "known when the graph is built")
    with o.name_scope(name or "kl_independent"):
        kl = kl_divergence(a.distribution, b.distribution)
        extra = a.event_shape.ndims - a.distribution.event_shape.ndims
        if extra == 0:
            return kl
        return o.reduce_sum(kl, axis=list(range(-extra, 0)))
