"""Learning-rate schedules of TF1 (``tf.train.exponential_decay``, ...): graph ops on the
global step, so the rate changes as training advances without rebuilding anything.

Each returns a scalar tensor of `learning_rate`'s dtype (float32 for a Python float),
computed from ``global_step`` cast to that dtype:

    exponential_decay     lr * decay_rate ** (step / decay_steps)
    natural_exp_decay     lr * exp(-decay_rate * step / decay_steps)
    inverse_time_decay    lr / (1 + decay_rate * step / decay_steps)
                          (``staircase=True``: the exponent/ratio is floored)
    polynomial_decay      (lr - end) * (1 - min(step, decay_steps) / decay_steps) ** power
                          + end; with ``cycle=True`` decay_steps grows to the next
                          multiple of itself past step
    cosine_decay          lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, T) / T)) + alpha)
    piecewise_constant    values[i] for boundaries[i-1] < x <= boundaries[i]

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.train.learning_rate_decay import exponential_decay
>>> step = tf.Variable(20, dtype=tf.int64, trainable=False)
>>> lr = exponential_decay(0.1, step, decay_steps=10, decay_rate=0.5)
>>> with tf.Session() as sess:
...     sess.run(step.initializer)
...     print(round(float(sess.run(lr)), 6))
0.025
"""

from __future__ import annotations

import contextlib
import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.ops import array_ops, math_ops

__all__ = [
    "cosine_decay",
    "exponential_decay",
    "inverse_time_decay",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
]


def _require_step(global_step, fn: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")


def _setup(learning_rate, global_step, *others):
    # TensorFlow's order: the rate, the other arguments cast to its dtype, then the step
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = lr.dtype.base_dtype
    cast = [math_ops.cast(o, dtype) for o in others]
    step = math_ops.cast(global_step, dtype)
    return (lr, dtype, step, *cast)


@contextlib.contextmanager
def _schedule(fn: str, default_name: str, name, learning_rate, global_step, *others):
    """The name scope of schedule `fn` (`name`, else `default_name`), `global_step`
    checked; yields ``(scope, lr, dtype, step, *others)``: `learning_rate` as a tensor,
    its dtype, and `global_step` and `others` cast to it."""
    _require_step(global_step, fn)
    with get_default_graph().name_scope(name or default_name) as scope:
        yield (scope, *_setup(learning_rate, global_step, *others))


def _ratio(step, steps, staircase: bool):
    """``step / steps``, floored when `staircase`."""
    p = step / steps
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name=None):
    """``learning_rate * decay_rate ** (global_step / decay_steps)`` (the exponent floored
    when `staircase`).

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = exponential_decay(1.0, tf.constant(15), 10, 0.5, staircase=True)
    >>> with tf.Session() as sess:
    ...     print(sess.run(lr))
    0.5
    """
    with _schedule("exponential_decay", "ExponentialDecay", name, learning_rate, global_step,
                   decay_steps, decay_rate) as (scope, lr, _, step, steps, rate):
        p = _ratio(step, steps, staircase)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name=None):
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)`` (the ratio floored
    when `staircase`).

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = natural_exp_decay(1.0, tf.constant(0), 10, 0.5)
    >>> with tf.Session() as sess:
    ...     print(sess.run(lr))
    1.0
    """
    # TF: exponential_decay with the rate exp(-decay_rate), computed outside its scope
    _require_step(global_step, "natural_exp_decay")
    rate = math_ops.exp(math_ops.negative(decay_rate))
    return exponential_decay(learning_rate, global_step, decay_steps, rate,
                             staircase=staircase, name=name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate,
                       staircase: bool = False, name=None):
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)`` (the ratio floored
    when `staircase`).

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = inverse_time_decay(1.0, tf.constant(10), 10, 1.0)
    >>> with tf.Session() as sess:
    ...     print(sess.run(lr))
    0.5
    """
    with _schedule("inverse_time_decay", "InverseTimeDecay", name, learning_rate, global_step,
                   decay_steps, decay_rate) as (scope, lr, _, step, steps, rate):
        p = _ratio(step, steps, staircase)
        one = math_ops.cast(convert_to_tensor(1), lr.dtype.base_dtype)
        return math_ops.truediv(lr, math_ops.add(one, math_ops.multiply(rate, p)), name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle: bool = False, name=None):
    """Decay from `learning_rate` to `end_learning_rate` over `decay_steps` steps as
    ``(1 - step / decay_steps) ** power``; after that, `end_learning_rate`, or with
    `cycle` a new decay over the next multiple of `decay_steps`.

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = polynomial_decay(1.0, tf.constant(5), 10, end_learning_rate=0.0)
    >>> with tf.Session() as sess:
    ...     print(sess.run(lr))
    0.5
    """
    _require_step(global_step, "polynomial_decay")
    # TF's order of casts: end rate, power, step, then decay_steps
    with get_default_graph().name_scope(name or "PolynomialDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype.base_dtype
        end = math_ops.cast(end_learning_rate, dtype)
        pw = math_ops.cast(power, dtype)
        step = math_ops.cast(global_step, dtype)
        steps = math_ops.cast(decay_steps, dtype)
        if cycle:
            # the first multiple of decay_steps past the step (1 at step 0)
            multiplier = array_ops.where_v2(math_ops.equal(step, 0), 1.0,
                                            math_ops.ceil(step / decay_steps))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        return math_ops.add(math_ops.multiply(lr - end, math_ops.pow(1 - p, pw)), end,
                            name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """Cosine decay (Loshchilov & Hutter) from `learning_rate` to
    ``alpha * learning_rate`` over `decay_steps`, then constant.

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = cosine_decay(1.0, tf.constant(10), 10, alpha=0.1)
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(lr)), 6))
    0.1
    """
    # TF's graph: alpha stays a Python number, pi a float32 constant, and the result is
    # a `Mul` inside the scope (CosineDecay/Mul_3), not an op named after the scope
    with _schedule("cosine_decay", "CosineDecay", name, learning_rate, global_step,
                   decay_steps) as (_, lr, dtype, step, steps):
        step = math_ops.minimum(step, steps)
        fraction = step / steps
        pi = convert_to_tensor(math.pi, dtype=dtype)
        cosine = 0.5 * (1.0 + math_ops.cos(pi * fraction))
        decayed = (1 - alpha) * cosine + alpha
        return math_ops.multiply(lr, decayed)


def piecewise_constant(x, boundaries, values, name=None):
    """``values[0]`` for ``x <= boundaries[0]``, ``values[i]`` for
    ``boundaries[i-1] < x <= boundaries[i]``, ``values[-1]`` past the last boundary.

    `boundaries` must have `x`'s dtype (int32 boundaries are cast for an int64 `x`);
    `values` must share one dtype and have one more entry than `boundaries`. Built as an
    exclusive `tf.case`, as TensorFlow builds it.

    Example
    -------
    >>> import flowgraph as tf
    >>> lr = piecewise_constant(tf.constant(150), [100, 200], [1.0, 0.5, 0.1])
    >>> with tf.Session() as sess:
    ...     print(sess.run(lr))
    0.5
    """
    from flowgraph.ops.control_flow_cond import case

    boundaries = [convert_to_tensor(b) for b in _flat(boundaries)]
    values = [convert_to_tensor(v) for v in _flat(values)]
    x = convert_to_tensor(x)
    xdtype = x.dtype.base_dtype
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype != xdtype:
            # only int32 -> int64 is lossless; other conversions could compare wrongly
            if b.dtype.base_dtype != _dtypes.int32 or xdtype != _dtypes.int64:
                raise ValueError(f"Boundaries (<dtype: '{b.dtype.base_dtype.name}'>) must have "
                                 f"the same dtype as x (<dtype: '{xdtype.name}'>).")
            boundaries[i] = math_ops.cast(b, xdtype)
    for v in values[1:]:
        if v.dtype.base_dtype != values[0].dtype.base_dtype:
            raise ValueError(f"Values must have elements all with the same dtype (<dtype: "
                             f"'{values[0].dtype.base_dtype.name}'> vs <dtype: "
                             f"'{v.dtype.base_dtype.name}'>).")
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of "
                         "values")
    # TF's layout: an exclusive tf.case over one predicate per interval
    with get_default_graph().name_scope(name or "PiecewiseConstant"):
        pairs = [(math_ops.less_equal(x, boundaries[0]), lambda: values[0]),
                 (math_ops.greater(x, boundaries[-1]), lambda: values[-1])]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            inside = (x > low) & (x <= high)  # TF: Greater, LessEqual, "and"
            pairs.append((inside, lambda v=v: v))
        return case(pairs, lambda: values[0], exclusive=True)


def _flat(seq) -> list:
    """`seq` as a flat list (a tuple, list or NumPy array of boundaries or values)."""
    if isinstance(seq, list | tuple):
        return [leaf for item in seq for leaf in _flat(item)]
    return [seq]
