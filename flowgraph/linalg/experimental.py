"""`tf.linalg.experimental`: `conjugate_gradient`, the conjugate-gradient method for
Hermitian positive-definite operators, as a `tf.while_loop`.

Example
-------
>>> import flowgraph as tf
>>> op = tf.linalg.LinearOperatorFullMatrix([[4., 1.], [1., 3.]], is_self_adjoint=True,
...                                         is_positive_definite=True)
>>> state = tf.linalg.experimental.conjugate_gradient(op, tf.constant([1., 2.]))
>>> tf.Session().run(state.x).astype(float).round(4).tolist()
[0.0909, 0.6364]
"""

from __future__ import annotations

import collections

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_shape_ops import expand_dims, zeros_like
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.linalg_norm import norm
from flowgraph.ops.math_ops import add, conj, logical_and, multiply, subtract, truediv
from flowgraph.ops.math_reduce import reduce_any, reduce_sum

__all__ = ["conjugate_gradient"]

CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def _dot(x, y):
    return reduce_sum(multiply(conj(x), y), -1)


def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol=1e-5, max_iter=20,
                       name="conjugate_gradient"):
    """Solve ``operator @ x = rhs`` for a Hermitian positive-definite `operator` by
    conjugate gradients, stopping after `max_iter` steps or when every residual norm is
    at most ``tol * |r_0|``.

    Parameters
    ----------
    operator : LinearOperator
        Must be flagged self-adjoint and positive definite.
    rhs : Tensor
        ``[..., N]``.
    preconditioner : LinearOperator, optional
        An approximation of ``operator``'s inverse, applied with `matvec`.
    x : Tensor, optional
        The starting point (zeros by default).
    tol : float
    max_iter : int
    name : str

    Returns
    -------
    CGState
        ``(i, x, r, p, gamma)``: the iteration count, the solution, its residual, the
        last search direction and ``<r, preconditioner r>``.
    """
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator: "
                         "conjugate_gradient needs is_self_adjoint=True and "
                         f"is_positive_definite=True on operator '{operator.name}'")
    with name_scope(name, values=[rhs, x]):
        rhs = convert_to_tensor(rhs, name="rhs", dtype=operator.dtype)
        x = zeros_like(rhs) if x is None else convert_to_tensor(x, name="x",
                                                                 dtype=operator.dtype)
        r0 = subtract(rhs, operator.matvec(x))
        q = r0 if preconditioner is None else preconditioner.matvec(r0)
        limit = multiply(convert_to_tensor(tol, dtype=r0.dtype.real_dtype), norm(r0, axis=-1))

        def cond(i, state):
            return logical_and(i < max_iter, reduce_any(norm(state.r, axis=-1) > limit))

        def body(i, state):
            z = operator.matvec(state.p)
            alpha = expand_dims(truediv(state.gamma, _dot(state.p, z)), -1)
            x_new = add(state.x, multiply(alpha, state.p))
            r_new = subtract(state.r, multiply(alpha, z))
            q_new = r_new if preconditioner is None else preconditioner.matvec(r_new)
            gamma = _dot(r_new, q_new)
            beta = expand_dims(truediv(gamma, state.gamma), -1)
            p_new = add(q_new, multiply(beta, state.p))
            return i + 1, CGState(i + 1, x_new, r_new, p_new, gamma)

        start = CGState(0, x, r0, q, _dot(r0, q))
        _, final = while_loop(cond, body, [0, start])
        return final
