"""`tf.distributions.Multinomial` and `DirichletMultinomial`: counts of `total_count`
categorical draws."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions._checks import counts_summing_to, embed_check_nonnegative_integer_form
from flowgraph.distributions.categorical import logits_and_probs
from flowgraph.distributions.distribution import (
    NOT_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
    params_dict,
)
from flowgraph.framework import dtypes as _dtypes

__all__ = ["DirichletMultinomial", "Multinomial"]


class Multinomial(Distribution):
    """Counts over ``K`` classes after `total_count` draws; event shape ``[K]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Multinomial(total_count=4., probs=[0.25, 0.75])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mean()))
    [1. 3.]
    """

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[total_count, logits, probs]) as scope:
            self._total_count = o.convert_to_tensor(total_count, name="total_count")
            if validate_args:
                self._total_count = embed_check_nonnegative_integer_form(self._total_count)
            self._logits, self._probs = logits_and_probs(logits, probs, True, validate_args)
            if self._total_count.dtype.base_dtype != self._probs.dtype.base_dtype:
                self._total_count = o.cast(self._total_count, self._probs.dtype)
            self._mean_val = self._total_count[..., None] * self._probs  # StridedSlice, as TF
        super().__init__(dtype=self._probs.dtype.base_dtype,
                         reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._logits, self._probs],
                         name=scope)

    @property
    def total_count(self):
        """The number of draws."""
        return self._total_count

    @property
    def logits(self):
        """Unnormalized log-probabilities per class."""
        return self._logits

    @property
    def probs(self):
        """Probabilities per class."""
        return self._probs

    def _batch_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[:-1]

    def _batch_shape_tensor(self):
        return o.shape(self._mean_val)[:-1]

    def _event_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[-1:]

    def _event_shape_tensor(self):
        return o.shape(self._mean_val)[-1:]

    def _sample_n(self, n, seed=None):
        # TF's layout: one categorical draw of ``n * count`` per batch member inside a
        # map_fn, so one Multinomial op whose stream advances member by member (and
        # each member may have its own count).
        k = o.shape(self._logits)[-1]
        n_draws = o.cast(self._total_count, _dtypes.int32)
        n_draws = o.ones_like(self._logits[..., 0], dtype=n_draws.dtype) * n_draws
        logits = o.ones_like(o.expand_dims(n_draws, -1), dtype=self._logits.dtype) * self._logits
        flat_logits = o.reshape(logits, [-1, k])
        flat_ndraws = n * o.reshape(n_draws, [-1])

        def _sample_single(args):
            row, count = args
            x = o.multinomial(o.expand_dims(row, 0), count, seed)
            x = o.reshape(x, o.stack([n, -1]))
            return o.reduce_sum(o.one_hot(x, k, dtype=self.dtype), -2)

        x = o.map_fn(_sample_single, [flat_logits, flat_ndraws], dtype=self.dtype)
        x = o.transpose(x, [1, 0, 2])
        return o.reshape(x, o.concat([[n], self.batch_shape_tensor(), [k]], 0))

    def _log_prob(self, counts):
        counts = o.cast(counts, self.dtype)
        if self.validate_args:
            counts = counts_summing_to(counts, self._total_count,
                                       "counts must sum to `self.total_count`")
        unnormalized = o.reduce_sum(counts * o.log_softmax(self._logits), -1)
        with o.name_scope("log_combinations"):
            combinations = (o.lgamma(self._total_count + 1.0)
                            - o.reduce_sum(o.lgamma(counts + 1.0), [-1]))
        log_normalization = -combinations
        return unnormalized - log_normalization

    def _mean(self):
        return o.identity(self._mean_val)

    def _variance(self):
        p = self._probs * o.expand_dims(o.ones_like(self._total_count), -1)
        return self._mean_val - self._mean_val * p

    def _covariance(self):
        p = self._probs * o.ones_like(self._mean_val)
        n = o.expand_dims(o.expand_dims(self._total_count, -1), -1)
        outer = o.expand_dims(p, -1) * o.expand_dims(p, -2)
        k = o.shape(p)[-1]
        eye = o.one_hot(o.range(k), k, dtype=self.dtype)
        return n * (o.expand_dims(p, -1) * eye - outer)


class DirichletMultinomial(Distribution):
    """Counts of `total_count` draws with class probabilities drawn from
    ``Dirichlet(concentration)``; event shape ``[K]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.DirichletMultinomial(total_count=4., concentration=[1., 3.])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mean()))
    [1. 3.]
    """

    def __init__(self, total_count, concentration, validate_args=False, allow_nan_stats=True,
                 name="DirichletMultinomial"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[total_count, concentration]) as scope:
            self._concentration = o.convert_to_tensor(concentration, name="concentration")
            self._total_count = o.cast(o.convert_to_tensor(total_count, name="total_count"),
                                       self._concentration.dtype)
            if validate_args:
                self._total_count = embed_check_nonnegative_integer_form(self._total_count)
            if validate_args:
                with o.control_dependencies([o.assert_positive(self._concentration)]):
                    self._concentration = o.identity(self._concentration)
            self._total_concentration = o.reduce_sum(self._concentration, -1)
            self._mean_val = (o.expand_dims(self._total_count, -1) * self._concentration
                              / o.expand_dims(self._total_concentration, -1))
        super().__init__(dtype=self._concentration.dtype.base_dtype,
                         reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters,
                         graph_parents=[self._total_count, self._concentration], name=scope)

    @property
    def total_count(self):
        """The number of draws."""
        return self._total_count

    @property
    def concentration(self):
        """The Dirichlet concentration per class."""
        return self._concentration

    @property
    def total_concentration(self):
        """The sum of the concentrations over the last axis."""
        return self._total_concentration

    _batch_shape = Multinomial._batch_shape
    _batch_shape_tensor = Multinomial._batch_shape_tensor
    _event_shape = Multinomial._event_shape
    _event_shape_tensor = Multinomial._event_shape_tensor

    def _sample_n(self, n, seed=None):
        c = self._concentration * o.ones_like(self._mean_val)
        g = o.random_gamma([n], c, dtype=self.dtype, seed=seed)
        k = o.shape(c)[-1]
        logits = o.reshape(o.log(g), o.stack([-1, k]))
        counts_b = o.cast(o.reshape(self._total_count * o.ones_like(self._mean_val[..., 0]),
                                    [-1]), _dtypes.int32)
        max_draws = o.reduce_max(counts_b)
        draws = o.multinomial(logits, max_draws, seed=gen_new_seed(seed, "dirichlet_multinomial"))
        hot = o.one_hot(draws, k, dtype=self.dtype)
        keep = o.cast(o.less(o.range(max_draws),
                             o.reshape(o.tile(o.expand_dims(counts_b, 0), o.stack([n, 1])),
                                       [-1, 1])), self.dtype)
        counts = o.reduce_sum(hot * o.expand_dims(keep, -1), 1)
        return o.reshape(counts, o.concat([[n], o.shape(self._mean_val)], 0))

    def _log_prob(self, counts):
        counts = o.cast(counts, self.dtype)
        if self.validate_args:
            counts = counts_summing_to(counts, self._total_count,
                                       "counts last-dimension must sum to `self.total_count`")
        c = self._concentration
        return (o.lgamma(self._total_count + 1.0) - o.reduce_sum(o.lgamma(counts + 1.0), -1)
                + o.lbeta(c + counts) - o.lbeta(c * o.ones_like(counts)))

    def _mean(self):
        return o.identity(self._mean_val)

    def _variance(self):
        total = o.expand_dims(self._total_concentration, -1)
        n = o.expand_dims(self._total_count, -1)
        p = self._concentration / total
        return n * p * (1.0 - p) * (n + total) / (1.0 + total)

    def _covariance(self):
        total = o.expand_dims(self._total_concentration, -1)
        n = o.expand_dims(self._total_count, -1)
        p = self._concentration / total * o.ones_like(self._mean_val)
        k = o.shape(p)[-1]
        eye = o.one_hot(o.range(k), k, dtype=self.dtype)
        spread = o.expand_dims(n * (n + total) / (1.0 + total), -1)
        return spread * (o.expand_dims(p, -1) * eye - o.expand_dims(p, -1) * o.expand_dims(p, -2))
