"""More of TF1's learning-rate schedules: `cosine_decay_restarts` (SGDR),
`linear_cosine_decay`, `noisy_linear_cosine_decay`, and `piecewise_constant_decay` (the
TF 1.15 name of `piecewise_constant`). Like the others they are graph ops on the global
step, computed in `learning_rate`'s dtype::

    cosine_decay_restarts   restart i (lengths T, T*t_mul, T*t_mul^2, ...) at fraction f:
                            lr * ((1 - alpha) * 0.5 * m_mul^i * (1 + cos(pi f)) + alpha)
    linear_cosine_decay     s = min(step, T);  lr * ((alpha + (T - s)/T)
                            * 0.5 * (1 + cos(2 pi num_periods s / T)) + beta)
    noisy_linear_cosine_decay  the same with Gaussian noise of variance
                            initial_variance / (1 + step)^variance_decay added to the
                            linear term

Example
-------
>>> import flowgraph as tf
>>> lr = tf.train.cosine_decay_restarts(1.0, tf.constant(10), 10)
>>> with tf.Session() as sess:
...     print(round(float(sess.run(lr)), 6))   # the first restart
1.0
"""

from __future__ import annotations

import math
import numbers

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import math_ops
from flowgraph.ops.random_ops import random_normal
from flowgraph.train.learning_rate_decay import _schedule, piecewise_constant

__all__ = ["cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay",
           "piecewise_constant_decay"]

piecewise_constant_decay = piecewise_constant


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0,
                          m_mul=1.0, alpha=0.0, name=None):
    """Cosine decay with warm restarts (Loshchilov & Hutter, SGDR): each period decays
    from the (``m_mul``-scaled) rate to ``alpha`` times it, and is ``t_mul`` times longer
    than the one before.

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = tf.train.cosine_decay_restarts(1.0, tf.constant(5), 10)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(lr)), 6))
    0.5
    """
    with _schedule("cosine_decay_restarts", "SGDRDecay", name, learning_rate, global_step,
                   first_decay_steps, alpha, t_mul, m_mul) as values:
        scope, lr, _, step, first, a, tm, mm = values
        fraction = step / first
        if isinstance(t_mul, numbers.Real) and float(t_mul) == 1.0:
            restart = math_ops.floor(fraction)
            fraction = fraction - restart
        else:
            # Periods T, T*t, T*t^2, ...: restart i starts at (1 - t^i) / (1 - t) periods.
            restart = math_ops.floor(math_ops.log(1.0 - fraction * (1.0 - tm))
                                     / math_ops.log(tm))
            done = (1.0 - math_ops.pow(tm, restart)) / (1.0 - tm)
            fraction = (fraction - done) / math_ops.pow(tm, restart)
        cosine = 0.5 * math_ops.pow(mm, restart) * (1.0 + math_ops.cos(math.pi * fraction))
        decayed = (1.0 - a) * cosine + a
        return math_ops.multiply(lr, decayed, name=scope)


def _linear_cosine(fn: str, default_name: str, name, learning_rate, global_step, decay_steps,
                   num_periods, alpha, beta, noise=None):
    # TensorFlow's graph: casts in argument order (the noise's two first), the step
    # clipped to decay_steps before the noise's variance is computed from it, and pi a
    # constant of its own
    noise_args = () if noise is None else noise[:2]
    with _schedule(fn, default_name, name, learning_rate, global_step, decay_steps,
                   *noise_args, num_periods, alpha, beta) as values:
        scope, lr, dtype, step, steps, *rest = values
        periods, a, b = rest[-3:]
        clipped = math_ops.minimum(step, steps)
        linear = (steps - clipped) / steps
        if noise is not None:
            variance = rest[0] / math_ops.pow(1.0 + clipped, rest[1])
            linear = linear + random_normal([], stddev=math_ops.sqrt(variance), dtype=dtype)
        completed = clipped / steps
        fraction = 2.0 * periods * completed
        pi = convert_to_tensor(math.pi, dtype=dtype)
        cosine = 0.5 * (1.0 + math_ops.cos(pi * fraction))
        return math_ops.multiply(lr, (a + linear) * cosine + b, name=scope)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """Linear decay times a cosine with `num_periods` periods over `decay_steps`, plus
    `beta` (Bello et al., Neural Optimizer Search).

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = tf.train.linear_cosine_decay(1.0, tf.constant(0), 100)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(lr)), 6))
    1.001
    """
    return _linear_cosine("linear_cosine_decay", "LinearCosineDecay", name, learning_rate,
                          global_step, decay_steps, num_periods, alpha, beta)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """`linear_cosine_decay` with zero-mean Gaussian noise on its linear term, of variance
    ``initial_variance / (1 + global_step) ** variance_decay`` (a fresh draw per run).

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = tf.train.noisy_linear_cosine_decay(1.0, tf.constant(100), 100)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(lr)), 6))   # the cosine term is 0 at the end
    0.001
    """
    return _linear_cosine("noisy_linear_cosine_decay", "NoisyLinearCosineDecay", name,
                          learning_rate, global_step, decay_steps, num_periods, alpha, beta,
                          (initial_variance, variance_decay))
