"""`tf.contrib.bayesflow.monte_carlo`: sample means of ``f(Z)`` as TF 1.x builds them.

`expectation` averages ``f`` over given samples, either differentiating through them
(reparameterized) or with the score-function trick (gradients through `log_prob`);
the importance samplers average ``f(z) p(z) / q(z)`` over draws of a proposal ``q`` in
log space, centred on the largest term so the exponentials stay small.
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_identity_ops import stop_gradient
from flowgraph.ops.math_ops import exp, log, log1p
from flowgraph.ops.math_reduce import reduce_max, reduce_mean
from flowgraph.ops.nn_ops import relu

__all__ = ["expectation", "expectation_importance_sampler",
           "expectation_importance_sampler_logspace"]


def expectation(f, samples, log_prob=None, use_reparametrization=True, axis=0,
                keep_dims=False, name=None):
    """The sample mean of ``f(samples)`` over `axis`.

    With ``use_reparametrization=False`` the samples are treated as constants and the
    gradient is the score-function estimate ``f(x) * grad log_prob(x)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> mc = tf.contrib.bayesflow.monte_carlo
    >>> x = tf.constant([1., 2., 3.])
    >>> with tf.Session() as sess:
    ...     print(sess.run(mc.expectation(lambda v: 2. * v, x)).round(4))
    4.0
    """
    with name_scope(name, "expectation", [samples]):
        if not callable(f):
            raise ValueError("`f` must be a callable function.")
        if use_reparametrization:
            return reduce_mean(f(samples), axis=axis, keepdims=keep_dims)
        if not callable(log_prob):
            raise ValueError("`log_prob` must be a callable function.")
        x = stop_gradient(samples)
        logpx = log_prob(x)
        fx = f(x)  # once: `f` may have side effects
        # adds zeros whose gradient is f(x) * grad(log p(x))
        fx += stop_gradient(fx) * (logpx - stop_gradient(logpx))
        return reduce_mean(fx, axis=axis, keepdims=keep_dims)


def _get_samples(dist, z, n, seed):
    with name_scope("get_samples", values=[z, n]):
        if (n is None) == (z is None):
            raise ValueError(f'Must specify exactly one of arguments "n" and "z".  Found: '
                             f"n = {n}, z = {z}")
        if n is not None:
            return dist.sample(n, seed=seed)
        return convert_to_tensor(z, name="z")


def _logspace_mean(log_values):
    """``log(mean(exp(log_values)))`` over axis 0, centred on the (constant) maximum."""
    center = stop_gradient(reduce_max(log_values, axis=[0]))
    return log(reduce_mean(exp(log_values - center), axis=[0])) + center


def expectation_importance_sampler(f, log_p, sampling_dist_q, z=None, n=None, seed=None,
                                   name="expectation_importance_sampler"):
    """``E_p[f(Z)]`` from draws of `sampling_dist_q` (exactly one of `z`, `n`): the
    positive and negative parts of ``f`` are averaged separately in log space.

    Example
    -------
    >>> import flowgraph as tf
    >>> mc = tf.contrib.bayesflow.monte_carlo
    >>> q = tf.distributions.Normal(0., 1.)
    >>> est = mc.expectation_importance_sampler(lambda z: z, q.log_prob, q,
    ...                                         z=tf.constant([-1., 1., 2.]))
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(est)), 4))
    0.6667
    """
    q = sampling_dist_q
    with name_scope(name, values=[z, n]):
        z = _get_samples(q, z, n, seed)
        log_p_z = log_p(z)
        q_log_prob_z = q.log_prob(z)

        def _positive_part_mean(log_f_z):
            return _logspace_mean(log_f_z + log_p_z - q_log_prob_z)

        # E[f] = E[max(f, 0) + 1] - E[max(-f, 0) + 1]; the 1s keep log away from 0
        f_z = f(z)
        log_f_plus = _positive_part_mean(log1p(relu(f_z)))
        log_f_minus = _positive_part_mean(log1p(relu(-1.0 * f_z)))
    return exp(log_f_plus) - exp(log_f_minus)


def expectation_importance_sampler_logspace(log_f, log_p, sampling_dist_q, z=None, n=None,
                                            seed=None,
                                            name="expectation_importance_sampler_logspace"):
    """``log E_p[exp(log_f(Z))]`` from draws of `sampling_dist_q` (one of `z`, `n`).

    Example
    -------
    >>> import flowgraph as tf
    >>> mc = tf.contrib.bayesflow.monte_carlo
    >>> q = tf.distributions.Normal(0., 1.)
    >>> est = mc.expectation_importance_sampler_logspace(
    ...     lambda z: 0. * z, q.log_prob, q, z=tf.constant([0.5, -0.5]))
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(est)), 4))
    0.0
    """
    q = sampling_dist_q
    with name_scope(name, values=[z, n]):
        z = _get_samples(q, z, n, seed)
        return _logspace_mean(log_f(z) + log_p(z) - q.log_prob(z))
