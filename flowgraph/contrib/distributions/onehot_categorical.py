"""`tf.contrib.distributions.OneHotCategorical`: a Categorical whose draws are one-hot
vectors (event shape ``[k]``)."""

from __future__ import annotations

from flowgraph.contrib.distributions._one_hot_shapes import OneHotEventShapes
from flowgraph.distributions import _ops as o
from flowgraph.distributions.categorical import logits_and_probs
from flowgraph.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from flowgraph.distributions.kullback_leibler import RegisterKL
from flowgraph.framework import dtypes as _dtypes
from flowgraph.ops.nn_loss_ops import softmax_cross_entropy_with_logits_v2

__all__ = ["OneHotCategorical"]


class OneHotCategorical(OneHotEventShapes, Distribution):
    """One of `k` classes as a one-hot vector; exactly one of `logits`, `probs`.

    Example
    -------
    >>> import flowgraph as tf
    >>> d = tf.contrib.distributions.OneHotCategorical(probs=[0.25, 0.75])
    >>> with tf.Session() as sess:
    ...     print(sess.run(d.prob([0, 1])))
    0.75
    """

    def __init__(self, logits=None, probs=None, dtype=_dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="OneHotCategorical"):
        parameters = {"logits": logits, "probs": probs, "dtype": dtype,
                      "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                      "name": name}
        with o.name_scope(name, values=[logits, probs]) as scope:
            self._logits, self._probs = logits_and_probs(logits, probs, True, validate_args)
            self._event_size = o.shape(self._logits)[-1]
        super().__init__(_dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._logits, self._probs], scope)

    def _sample_n(self, n, seed=None):
        # the Categorical draws, one-hot: [n * batch] ids from one Multinomial op
        sample_shape = o.concat([[n], o.shape(self._logits)], 0)
        logits_2d = self._logits if self._logits.shape.ndims == 2 else \
            o.reshape(self._logits, o.stack([-1, self._event_size]))
        draws = o.transpose(o.multinomial(logits_2d, n, seed=seed))
        return o.reshape(o.one_hot(draws, self._event_size, dtype=self.dtype), sample_shape)

    def _log_prob(self, x):
        x = o.cast(x, self._logits.dtype)
        logits = self._logits * o.ones_like(x)
        return -softmax_cross_entropy_with_logits_v2(labels=x * o.ones_like(logits),
                                                     logits=logits)

    def _entropy(self):
        return -o.reduce_sum(o.log_softmax(self._logits) * self._probs, -1)

    def _mean(self):
        return o.identity(self._probs)

    def _mode(self):
        return o.one_hot(o.argmax(self._logits, -1), self._event_size, dtype=self.dtype)


@RegisterKL(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(a, b, name=None):
    """``sum p_a (log p_a - log p_b)`` over the classes."""
    with o.name_scope(name or "kl_categorical_categorical"):
        return o.reduce_sum(o.softmax(a.logits) * (o.log_softmax(a.logits)
                                                   - o.log_softmax(b.logits)), -1)
