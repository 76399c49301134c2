"""`tf.distributions.kl_divergence` and `RegisterKL`: KL rules by pair of types.

A rule registered for ``(A, B)`` also serves subclasses of A and B; among several
candidates the one whose classes are nearest in the two method resolution orders
wins (``Exponential`` uses the ``Gamma`` rule).
"""

from __future__ import annotations

from flowgraph.distributions import _ops as o

__all__ = ["RegisterKL", "kl_divergence"]

_DIVERGENCES: dict = {}


def _registered_kl(type_a, type_b):
    best, best_distance = None, None
    for i, parent_a in enumerate(type_a.__mro__):
        for j, parent_b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((parent_a, parent_b))
            if fn is not None and (best_distance is None or i + j < best_distance):
                best, best_distance = fn, i + j
    return best


def kl_divergence(distribution_a, distribution_b, allow_nan_stats: bool = True, name=None):
    """``KL(distribution_a || distribution_b)``, batchwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> kl = tf.distributions.kl_divergence(tf.distributions.Normal(0., 1.),
    ...                                     tf.distributions.Normal(1., 1.))
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(kl)), 4))
    0.5
    """
    fn = _registered_kl(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with o.name_scope("KullbackLeibler"):
        kl = fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl
        kl = o.convert_to_tensor(kl, name="kl")
        with o.control_dependencies([_assert_all(o.logical_not(o.is_nan(kl)), kl)]):
            return o.identity(kl)


def _assert_all(ok, kl):
    return o.Assert(o.reduce_all(ok), ["KL calculation between "
                                     f"{kl.name} contains NaN values."])


class RegisterKL:
    """Decorator: register ``fn(a, b, name=None)`` as KL(a || b) for two classes.

    Example
    -------
    >>> import flowgraph as tf
    >>> class Point(tf.distributions.Normal):
    ...     pass
    >>> @tf.distributions.RegisterKL(Point, Point)
    ... def _kl_point(a, b, name=None):
    ...     return tf.zeros_like(a.loc)
    """

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn!r}")
        if self._key in _DIVERGENCES:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) "
                             f"has already been registered to: {_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn
