"""`tf.contrib.distributions.Mixture`: a Categorical mixture of a Python list of
component distributions (each with the same dtype, batch and event shape).

Draws follow TF 1.x's layout: one Categorical draw picks each sample's component, the
sample indices are partitioned by component, component ``c`` draws as many samples as
it was picked (seeded with ``gen_new_seed`` chained from `seed`, salt ``"mixture"``) and
``dynamic_stitch`` puts them back in order.
"""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions.categorical import Categorical
from flowgraph.distributions.distribution import NOT_REPARAMETERIZED, Distribution, gen_new_seed
from flowgraph.ops.array_index_ops import gather
from flowgraph.ops.array_join_ops import unstack
from flowgraph.ops.array_shape_ops import size
from flowgraph.ops.math_reduce import add_n
from flowgraph.ops.segment_ops import dynamic_partition, dynamic_stitch

__all__ = ["Mixture"]


class Mixture(Distribution):
    """``p(x) = sum_i cat.probs[i] * components[i].prob(x)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tfd = tf.contrib.distributions
    >>> mix = tfd.Mixture(cat=tfd.Categorical(probs=[0.25, 0.75]),
    ...                   components=[tfd.Normal(-1., 1.), tfd.Normal(1., 0.5)])
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(mix.mean())), 4))
    0.5
    """

    def __init__(self, cat, components, validate_args=False, allow_nan_stats=True,
                 use_static_graph=False, name="Mixture"):
        parameters = {"cat": cat, "components": components, "validate_args": validate_args,
                      "allow_nan_stats": allow_nan_stats,
                      "use_static_graph": use_static_graph, "name": name}
        if not isinstance(cat, Categorical):
            raise TypeError(f"cat must be a Categorical distribution, but saw: {cat}")
        if not components:
            raise ValueError("components must be a non-empty list or tuple")
        if not isinstance(components, (list, tuple)):
            raise TypeError(f"components must be a list or tuple, but saw: {components}")
        if not all(isinstance(c, Distribution) for c in components):
            raise TypeError(f"all entries in components must be Distribution instances but "
                            f"saw: {components}")
        dtype = components[0].dtype
        if not all(c.dtype == dtype for c in components):
            raise TypeError(f"All components must have the same dtype, but saw dtypes: "
                            f"{[(c.name, c.dtype) for c in components]}")
        event_shape = components[0].event_shape
        batch_shape = cat.batch_shape
        for c in components:
            if not event_shape.is_compatible_with(c.event_shape):
                raise ValueError(f"Incompatible event shapes: {event_shape} vs. "
                                 f"{c.event_shape}")
            batch_shape = batch_shape.merge_with(c.batch_shape)
            event_shape = event_shape.merge_with(c.event_shape)
        num_classes = cat.logits.shape.with_rank_at_least(1)[-1]
        num_classes = getattr(num_classes, "value", num_classes)
        if num_classes is None:
            raise ValueError("Could not infer number of classes from cat and unable to "
                             "compare this value to the number of components passed in.")
        if num_classes != len(components):
            raise ValueError(f"cat.num_classes != len(components): {num_classes} vs. "
                             f"{len(components)}")
        if event_shape.ndims is None:
            raise NotImplementedError("Mixture: the components' event rank must be known "
                                      "when the graph is built")
        with o.name_scope(name, values=list(getattr(cat, "_graph_parents", []))) as scope:
            pass
        self._cat, self._components = cat, list(components)
        self._num_components = len(components)
        self._static_batch_shape, self._static_event_shape = batch_shape, event_shape
        self._use_static_graph = bool(use_static_graph)
        parents = [*getattr(cat, "_graph_parents", [])]
        for c in components:
            parents += getattr(c, "_graph_parents", [])
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, parents, scope)

    @property
    def cat(self):
        """The Categorical choosing the component."""
        return self._cat

    @property
    def components(self):
        """The component distributions."""
        return list(self._components)

    @property
    def num_components(self) -> int:
        """The number of components."""
        return self._num_components

    def _batch_shape(self):
        return self._static_batch_shape

    def _batch_shape_tensor(self):
        return self._cat.batch_shape_tensor()

    def _event_shape(self):
        return self._static_event_shape

    def _event_shape_tensor(self):
        return self._components[0].event_shape_tensor()

    def _cat_probs(self, log_probs: bool):
        probs = (o.log_softmax if log_probs else o.softmax)(self._cat.logits)
        return unstack(probs, num=self._num_components, axis=-1)

    def _expand_to_event(self, t):
        for _ in range(self._static_event_shape.ndims):
            t = o.expand_dims(t, -1)
        return t

    def _log_prob(self, x):
        log_probs = [d.log_prob(x) for d in self._components]
        weighted = [lw + lp for lw, lp in zip(self._cat_probs(True), log_probs)]
        return o.reduce_logsumexp(o.stack(weighted, 0), [0])

    def _prob(self, x):
        return o.exp(self._log_prob(x))

    def _mean(self):
        means = [d.mean() for d in self._components]
        return add_n([self._expand_to_event(w) * m
                      for w, m in zip(self._cat_probs(False), means)])

    def _variance(self):
        # law of total variance over the components
        mean = self._mean()
        weights = [self._expand_to_event(w) for w in self._cat_probs(False)]
        return add_n([w * (d.variance() + o.square(d.mean() - mean))
                      for w, d in zip(weights, self._components)])

    def _stddev(self):
        return o.sqrt(self._variance())

    def entropy_lower_bound(self, name="entropy_lower_bound"):
        """``sum_i cat.probs[i] * components[i].entropy()``, a lower bound of the
        mixture's entropy."""
        with self._name_scope(name):
            return add_n([w * d.entropy()
                          for w, d in zip(self._cat_probs(False), self._components)])

    def _sample_n(self, n, seed=None):
        if self._use_static_graph:
            return self._sample_n_static(n, seed)
        cat_samples = self._cat.sample(n, seed=seed)
        samples_shape = o.shape(cat_samples)
        samples_size = size(cat_samples)
        batch_size = o.reduce_prod(self.batch_shape_tensor())
        sample_ids = o.reshape(o.range(0, samples_size), samples_shape)
        ids_by_class = dynamic_partition(sample_ids, cat_samples, self._num_components)
        batch_ids = o.reshape(o.tile(o.range(0, batch_size), [n]), samples_shape)
        batch_by_class = dynamic_partition(batch_ids, cat_samples, self._num_components)
        event_shape = self.event_shape_tensor()
        per_class = []
        for c, component in enumerate(self._components):
            n_class = size(ids_by_class[c])
            seed = gen_new_seed(seed, "mixture")
            draws = component.sample(n_class, seed=seed)
            rows = batch_size * o.range(n_class) + batch_by_class[c]
            draws = o.reshape(draws, o.concat([[n_class * batch_size], event_shape], 0))
            per_class.append(gather(draws, rows, name="samples_class_c_gather"))
        stitched = dynamic_stitch(ids_by_class, per_class)
        return o.reshape(stitched, o.concat([samples_shape, event_shape], 0))

    def _sample_n_static(self, n, seed):
        picks = self._cat.sample(n, seed=seed)
        draws = []
        for component in self._components:
            seed = gen_new_seed(seed, "mixture")
            draws.append(component.sample(n, seed=seed))
        axis = -1 - self._static_event_shape.ndims
        x = o.stack(draws, axis)
        mask = self._expand_to_event(o.one_hot(picks, self._num_components, dtype=x.dtype))
        return o.reduce_sum(x * mask, axis=axis)
