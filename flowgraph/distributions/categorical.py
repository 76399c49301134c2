"""`tf.distributions.Bernoulli` and `tf.distributions.Categorical`, parameterized by
`logits` or `probs` (exactly one)."""

from __future__ import annotations

from flowgraph.distributions import _ops as o
from flowgraph.distributions._checks import embed_check_categorical_event_shape
from flowgraph.distributions._class_params import ClassParameters
from flowgraph.distributions.distribution import NOT_REPARAMETERIZED, Distribution, params_dict
from flowgraph.distributions.kullback_leibler import RegisterKL
from flowgraph.framework import dtypes as _dtypes

__all__ = ["Bernoulli", "Categorical", "logits_and_probs"]


def logits_and_probs(logits, probs, multidimensional: bool, validate_args: bool):
    """``(logits, probs)`` tensors from exactly one of them (inside the caller's scope).

    As in TensorFlow, the given one is converted, not copied (a tensor stays itself, a
    Python value becomes a ``logits``/``probs`` constant), and the other is derived from
    it under its name: ``probs`` is the sigmoid/softmax op itself, ``logits`` a scope.
    """
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = o.convert_to_tensor(logits, name="logits")
        if not logits.dtype.is_floating:
            raise TypeError(f"logits must have a floating dtype, got {logits.dtype}.")
        if multidimensional:
            if validate_args:
                logits = embed_check_categorical_event_shape(logits)
            return logits, o.softmax(logits, name="probs")
        return logits, o.sigmoid(logits, name="probs")
    probs = o.convert_to_tensor(probs, name="probs")
    if not probs.dtype.is_floating:
        raise TypeError(f"probs must have a floating dtype, got {probs.dtype}.")
    if validate_args:
        # TF's checks and messages: no negative probability, and probabilities that sum
        # to 1 (multidimensional) or are at most 1
        with o.name_scope("validate_probs"):
            one = o.constant(1.0, dtype=probs.dtype)
            checks = [o.assert_non_negative(probs)]
            if multidimensional:
                probs = embed_check_categorical_event_shape(probs)
                checks.append(o.assert_near(o.reduce_sum(probs, -1), one,
                                            message="probs does not sum to 1."))
            else:
                checks.append(o.assert_less_equal(
                    probs, one, message="probs has components greater than 1."))
            probs = o.with_dependencies(checks, probs)
    with o.name_scope("logits"):
        logits = o.log(probs) if multidimensional else o.log(probs) - o.log1p(-1.0 * probs)
    return logits, probs


class Bernoulli(Distribution):
    """One coin per batch member: 1 with probability `probs` (= ``sigmoid(logits)``).

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Bernoulli(probs=[0.2, 0.7])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.prob([1, 1])).round(4))
    [0.2 0.7]
    """

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = logits_and_probs(logits, probs, False, validate_args)
        super().__init__(dtype=_dtypes.as_dtype(dtype),
                         reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=scope)

    @property
    def logits(self):
        """Log-odds of drawing a 1."""
        return self._logits

    @property
    def probs(self):
        """Probability of drawing a 1."""
        return self._probs

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return o.shape(self._logits)

    def _sample_n(self, n, seed=None):
        shape = o.concat([[n], o.shape(self._probs)], 0)
        u = o.random_uniform(shape, seed=seed, dtype=self._probs.dtype)
        return o.cast(o.less(u, self._probs), self.dtype)

    def _log_prob(self, event):
        event = o.convert_to_tensor(event, name="event")
        if self.validate_args:
            event = _check_binary_event(event)
        event = o.cast(event, self._logits.dtype)
        logits = self._logits * o.ones_like(event)
        event = event * o.ones_like(self._logits)
        return -o.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self._logits * (o.sigmoid(self._logits) - 1.0) + o.softplus(-self._logits)

    def _mean(self):
        return o.identity(self._probs)

    def _variance(self):
        return self._probs * (1.0 - self._probs)

    def _mode(self):
        return o.cast(o.greater(self._probs, 0.5), self.dtype)


class Categorical(ClassParameters, Distribution):
    """One of ``K`` classes per batch member; `logits`/`probs` have shape ``batch + [K]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.distributions.Categorical(probs=[0.1, 0.6, 0.3])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.mode()))
    1
    """

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        parameters = params_dict(locals())
        with o.name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = logits_and_probs(logits, probs, True, validate_args)
            static = self._logits.shape
            if static.ndims is not None and static.ndims < 1:
                raise ValueError("Categorical: logits/probs must have rank >= 1, got "
                                 f"shape {static}.")
            # TensorFlow's tensors, in its order: batch_rank, logits_shape, event_size and
            # batch_shape (constants where the static shape knows them)
            if static.ndims is not None:
                self._batch_rank = o.constant(static.ndims - 1, dtype=_dtypes.int32,
                                              name="batch_rank")
            else:
                with o.name_scope("batch_rank"):
                    self._batch_rank = o.rank(self._logits) - 1
            logits_shape = o.shape(self._logits, name="logits_shape")
            if static.ndims and static[-1].value is not None:
                self._event_size = o.constant(static[-1].value, dtype=_dtypes.int32,
                                              name="event_size")
            else:
                with o.name_scope("event_size"):
                    self._event_size = logits_shape[self._batch_rank]
            if static.ndims is not None and static[:-1].is_fully_defined():
                self._batch_shape_val = o.constant(static[:-1].as_list(), dtype=_dtypes.int32,
                                                   name="batch_shape")
            else:
                with o.name_scope("batch_shape"):
                    self._batch_shape_val = logits_shape[:-1]
        super().__init__(dtype=_dtypes.as_dtype(dtype),
                         reparameterization_type=NOT_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=[self._logits, self._probs],
                         name=scope)

    def _batch_shape_tensor(self):
        return o.identity(self._batch_shape_val)

    def _sample_n(self, n, seed=None):
        # TF's layout: no reshape of 2-D logits, int32 draws for 32-bit sample dtypes
        logits_2d = self._logits
        if logits_2d.shape.ndims != 2:
            logits_2d = o.reshape(self._logits, [-1, self._event_size])
        draw_dtype = _dtypes.int64 if self.dtype.size > 4 else _dtypes.int32
        draws = o.multinomial(logits_2d, n, seed=seed, output_dtype=draw_dtype)
        draws = o.reshape(o.transpose(draws), o.concat([[n], self.batch_shape_tensor()], 0))
        return o.cast(draws, self.dtype)

    def _log_prob(self, k):
        if not k.dtype.is_integer:
            k = o.cast(k, _dtypes.int32)
        logits = self._logits * o.ones_like(o.expand_dims(k, -1), dtype=self._logits.dtype)
        k = k * o.ones(o.shape(logits)[:-1], dtype=k.dtype)
        return -o.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _cdf(self, k):
        # P(X < k), as TF defines it: the probabilities of the first k classes
        k = o.convert_to_tensor(k, name="k")
        k, probs = _broadcast_event_and_params(k, self._probs)
        flat_probs = o.reshape(probs, o.stack([-1, self._event_size]))
        flat_k = o.reshape(k, [-1])
        kept = o.where(o.sequence_mask(flat_k, self._event_size), flat_probs,
                       o.zeros_like(flat_probs))
        return o.reshape(o.reduce_sum(kept, -1), o.shape(k))

    def _entropy(self):
        return -o.reduce_sum(o.log_softmax(self._logits) * self._probs, -1)

    def _mode(self):
        return o.cast(o.argmax(self._logits, axis=-1), self.dtype)


def _check_binary_event(event):
    """TF's checks of a Bernoulli event under `validate_args` (its messages)."""
    checks = [o.assert_non_negative(event, message="Elements must be non-negative.")]
    if event.dtype.is_floating:
        whole = o.cast(o.cast(event, _dtypes.int64), event.dtype)
        checks.append(o.Assert(o.reduce_all(o.equal(event, whole)),
                               ["Elements must be bool-equivalent."]))
    checks.append(o.assert_less_equal(event, o.constant(1, dtype=event.dtype),
                                      message="Elements cannot exceed 1."))
    with o.control_dependencies(checks):
        return o.identity(event)


def _broadcast_event_and_params(k, params):
    """TF's rule for a Categorical's argument: float classes become int32; `k` and the
    parameters are broadcast against each other unless `k`'s static shape is already
    the batch shape."""
    if k.dtype.is_floating:
        k = o.cast(k, _dtypes.int32)
    elif not k.dtype.is_integer:
        raise TypeError(f"`value` should have integer `dtype` or `self.dtype` "
                        f"({params.dtype.base_dtype})")
    static = (params.shape.ndims is not None and params.shape[:-1].is_fully_defined()
              and k.shape.is_fully_defined())
    if not static or params.shape[:-1] != k.shape:
        params = params * o.ones_like(o.expand_dims(k, -1), dtype=params.dtype)
        k = k * o.ones(o.shape(params)[:-1], dtype=k.dtype)
        if params.shape.ndims is not None:
            k.set_shape(params.shape[:-1])
    return k, params


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    with o.name_scope(name or "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta0 = o.softplus(-b.logits) - o.softplus(-a.logits)
        delta1 = o.softplus(b.logits) - o.softplus(a.logits)
        return o.sigmoid(a.logits) * delta0 + o.sigmoid(-a.logits) * delta1


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    with o.name_scope(name or "kl_categorical_categorical", values=[a.logits, b.logits]):
        return o.reduce_sum(o.softmax(a.logits)
                            * (o.log_softmax(a.logits) - o.log_softmax(b.logits)), -1)
