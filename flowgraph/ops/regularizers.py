"""Weight regularizers: callables ``reg(weights) -> scalar loss tensor (or None)``.

These are TF1's ``tf.contrib.layers`` regularizers (also exposed there by
`flowgraph.contrib.layers`). Pass one as `regularizer=` to `tf.get_variable` /
`tf.variable_scope`, or as `kernel_regularizer=` to a `tf.layers` function: the loss is
added to ``GraphKeys.REGULARIZATION_LOSSES``, from which a model sums its penalty.

Example
-------
>>> import flowgraph as tf
>>> reg = l2_regularizer(0.5)
>>> loss = reg(tf.constant([1.0, 2.0]))
>>> float(tf.Session().run(loss))  # 0.5 * (1 + 4) / 2
1.25
"""

from __future__ import annotations

import numbers

from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, add_to_collection, get_collection, name_scope
from flowgraph.ops import math_ops, math_reduce, nn_loss_ops

__all__ = [
    "apply_regularization",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "sum_regularizer",
]


def _check_scale(scale, what: str = "scale") -> bool:
    """Validate `scale`; True when it disables the regularizer (a zero)."""
    if isinstance(scale, numbers.Integral) and not isinstance(scale, bool):
        raise ValueError(f"{what} cannot be an integer: {scale} (pass a float, e.g. "
                         f"{float(scale)})")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}.")
        return scale == 0.0
    return False


def _l1(weights):
    return math_reduce.reduce_sum(math_ops.abs(weights))


def _l2(weights):
    return nn_loss_ops.l2_loss(weights)  # sum(w ** 2) / 2, one L2Loss op as in TF


def _scaled(penalty, scale, scope, default_name: str):
    def regularizer(weights):
        with name_scope(scope, default_name, [weights]) as name:
            w = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=w.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, penalty(w), name=name)

    regularizer.__name__ = default_name
    return regularizer


def l1_regularizer(scale, scope=None):
    """A regularizer ``scale * sum(|w|)``; a scale of 0.0 gives one returning None.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(l1_regularizer(0.1)(tf.constant([1.0, -3.0])))), 6)
    0.4
    """
    if _check_scale(scale):
        return lambda _: None
    return _scaled(_l1, scale, scope, "l1_regularizer")


def l2_regularizer(scale, scope=None):
    """A regularizer ``scale * sum(w ** 2) / 2`` (TF's ``l2_loss``); 0.0 disables it.

    Example
    -------
    >>> import flowgraph as tf
    >>> round(float(tf.Session().run(l2_regularizer(0.1)(tf.constant([1.0, -3.0])))), 6)
    0.5
    """
    if _check_scale(scale):
        return lambda _: None
    return _scaled(_l2, scale, scope, "l2_regularizer")


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer adding the losses of `regularizer_list` (None entries are skipped;
    returns None for an empty list).

    Example
    -------
    >>> import flowgraph as tf
    >>> reg = sum_regularizer([l1_regularizer(1.0), l2_regularizer(1.0)])
    >>> float(tf.Session().run(reg(tf.constant([2.0]))))
    4.0
    """
    regs = [r for r in regularizer_list if r is not None]
    if not regs:
        return None

    def sum_reg(weights):
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            losses = [t for t in (r(weights) for r in regs) if t is not None]
            return math_reduce.add_n(losses, name=name) if losses else None

    return sum_reg


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """A regularizer ``scale_l1 * sum(|w|) + scale_l2 * sum(w ** 2) / 2``.

    Example
    -------
    >>> import flowgraph as tf
    >>> reg = l1_l2_regularizer(0.5, 1.0)
    >>> float(tf.Session().run(reg(tf.constant([2.0, -2.0]))))
    6.0
    """
    off_l1 = _check_scale(scale_l1, "scale_l1")
    off_l2 = _check_scale(scale_l2, "scale_l2")
    scope = scope or "l1_l2_regularizer"
    if off_l1:
        return l2_regularizer(scale_l2, scope)
    if off_l2:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer, weights_list=None):
    """Sum of `regularizer` over `weights_list` (default: the ``WEIGHTS`` collection),
    added to ``REGULARIZATION_LOSSES`` and returned.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.constant([3.0])
    >>> float(tf.Session().run(apply_regularization(l1_regularizer(1.0), [w, w])))
    6.0
    """
    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize: pass weights_list or add the weights "
                         "to the tf.GraphKeys.WEIGHTS collection.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [constant(0.0) if p is None else p for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a "
                                 f"Tensor with rank {p.shape.ndims} ({p.name}).")
        total = math_reduce.add_n(penalties, name=scope)
    add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
    return total
