"""`grad_pass_through`, `recompute_grad` and `vectorized_map` (TF's names), built on
`custom_gradient` and `map_fn`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant(2.7)
>>> y = tf.grad_pass_through(tf.round)(x)     # round forward, identity backward
>>> [float(v) for v in tf.Session().run([y, tf.gradients(y, x)[0]])]
[3.0, 1.0]
"""

from __future__ import annotations

from flowgraph.ops.gradient_compat import custom_gradient

__all__ = ["grad_pass_through", "recompute_grad", "vectorized_map"]


def grad_pass_through(f):
    """`f` in the forward pass, the identity in the backward pass (a straight-through
    estimator): ``f(x)``'s gradient with respect to `x` is the output gradient."""

    @custom_gradient
    def wrapped(x):
        return f(x), lambda dy: dy

    return wrapped


def recompute_grad(f):
    """`f` whose gradient is computed from a second, recomputed forward pass of `f` on the
    same inputs (the values are the same; TensorFlow uses this to save memory).

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant(3.0)
    >>> y = tf.recompute_grad(lambda v: v * v)(x)
    >>> float(tf.Session().run(tf.gradients(y, x)[0]))
    6.0
    """
    from flowgraph.ops.gradients import gradients

    def wrapped(*args):
        @custom_gradient
        def inner(*xs):
            result = f(*xs)

            def grad(*dys):
                again = f(*xs)
                outs = list(again) if isinstance(again, list | tuple) else [again]
                grads = gradients(outs, list(xs), grad_ys=list(dys))
                return grads if len(grads) > 1 else grads[0]

            return result, grad

        return inner(*args)

    return wrapped


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """`fn` applied to each element of `elems` along axis 0 (flowgraph runs it as
    `tf.map_fn`; the results are those of a vectorized run).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.vectorized_map(lambda r: r * 2, tf.constant([[1, 2], [3, 4]])))
    array([[2, 4],
           [6, 8]], dtype=int32)
    """
    del fallback_to_while_loop, warn
    from flowgraph.ops.functional_ops import map_fn

    return map_fn(fn, elems)
