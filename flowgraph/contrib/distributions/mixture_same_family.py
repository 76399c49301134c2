"""`tf.contrib.distributions.MixtureSameFamily`: a Categorical mixture over the last
batch axis of one component distribution (a mixture density network's output)."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions.distribution import NOT_REPARAMETERIZED, Distribution, gen_new_seed

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """``p(x) = sum_k pi_k p_k(x)``: `mixture_distribution` a Categorical over ``k``,
    `components_distribution` a distribution whose last batch axis is ``k``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tfd = tf.contrib.distributions
    >>> gm = tfd.MixtureSameFamily(tfd.Categorical(probs=[0.3, 0.7]),
    ...                            tfd.Normal(loc=[-1., 1.], scale=[0.1, 0.5]))
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(gm.mean())), 4))
    0.4
    """

    def __init__(self, mixture_distribution, components_distribution, validate_args=False,
                 allow_nan_stats=True, name="MixtureSameFamily"):
        parameters = {"mixture_distribution": mixture_distribution,
                      "components_distribution": components_distribution,
                      "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                      "name": name}
        with o.name_scope(name) as scope:
            self._mixture_distribution = mixture_distribution
            self._components_distribution = components_distribution
            if not mixture_distribution.dtype.is_integer:
                raise ValueError(f"`mixture_distribution.dtype` "
                                 f"({mixture_distribution.dtype.name}) is not over integers")
            if mixture_distribution.event_shape.ndims not in (None, 0):
                raise ValueError("`mixture_distribution` must have scalar `event_dim`s")
            self._event_ndims = components_distribution.event_shape.ndims
            if self._event_ndims is None:
                raise NotImplementedError("MixtureSameFamily: the components' event rank "
                                          "must be known when the graph is built")
            km = mixture_distribution.logits.shape.with_rank_at_least(1)[-1]
            kc = components_distribution.batch_shape.with_rank_at_least(1)[-1]
            km = km if isinstance(km, int) or km is None else getattr(km, "value", km)
            kc = kc if isinstance(kc, int) or kc is None else getattr(kc, "value", kc)
            if km is not None and kc is not None and km != kc:
                raise ValueError(f"`mixture_distribution components` ({km}) does not equal "
                                 f"`components_distribution.batch_shape[-1]` ({kc})")
            self._num_components = km or kc or o.shape(mixture_distribution.logits)[-1]
        super().__init__(components_distribution.dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters,
                         [*getattr(mixture_distribution, "_graph_parents", []),
                          *getattr(components_distribution, "_graph_parents", [])], scope)

    @property
    def mixture_distribution(self):
        """The Categorical over the components."""
        return self._mixture_distribution

    @property
    def components_distribution(self):
        """The components (their last batch axis indexes the component)."""
        return self._components_distribution

    def _batch_shape(self):
        return self._components_distribution.batch_shape.with_rank_at_least(1)[:-1]

    def _batch_shape_tensor(self):
        return self._components_distribution.batch_shape_tensor()[:-1]

    def _event_shape(self):
        return self._components_distribution.event_shape

    def _event_shape_tensor(self):
        return self._components_distribution.event_shape_tensor()

    def _pad_mixture(self, t):
        """``[..., k]`` to ``[..., k, 1, ..., 1]``: one axis per event axis."""
        for _ in range(self._event_ndims):
            t = o.expand_dims(t, -1)
        return t

    def _pad_sample_dims(self, x):
        with o.name_scope("pad_sample_dims", values=[x]):
            shape = o.shape(x)
            d = (x.shape.ndims if x.shape.ndims is not None else o.rank(x)) - self._event_ndims
            return o.reshape(x, o.concat([shape[:d], [1], shape[d:]], 0))

    def _sample_n(self, n, seed=None):
        x = self._components_distribution.sample(n, seed=seed)  # [n, B, k, E]
        picks = self._mixture_distribution.sample(
            n, seed=gen_new_seed(seed, "mixture_same_family"))  # [n, B]
        mask = o.one_hot(picks, self._num_components, dtype=x.dtype)
        return o.reduce_sum(x * self._pad_mixture(mask), axis=-1 - self._event_ndims)

    def _mixed(self, log_stat):
        log_mix = o.log_softmax(self._mixture_distribution.logits, axis=-1)
        return o.reduce_logsumexp(log_stat + log_mix, axis=-1)

    def _log_prob(self, x):
        return self._mixed(self._components_distribution.log_prob(self._pad_sample_dims(x)))

    def _prob(self, x):
        return o.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return self._mixed(self._components_distribution.log_cdf(self._pad_sample_dims(x)))

    def _cdf(self, x):
        return o.exp(self._log_cdf(x))

    def _mixture_probs(self):
        return self._pad_mixture(self._mixture_distribution.probs)

    def _mean(self):
        return o.reduce_sum(self._mixture_probs() * self._components_distribution.mean(),
                            axis=-1 - self._event_ndims)

    def _variance(self):
        # law of total variance: E[Var(X | k)] + Var(E[X | k])
        probs = self._mixture_probs()
        axis = -1 - self._event_ndims
        mean_cond_var = o.reduce_sum(probs * self._components_distribution.variance(), axis=axis)
        centred = o.squared_difference(self._components_distribution.mean(),
                                       o.expand_dims(self._mean(), axis))
        return mean_cond_var + o.reduce_sum(probs * centred, axis=axis)
