"""`tf.linalg.expm` built as TensorFlow builds it: scaling and squaring around Padé
approximants, all from ordinary ops (so values, op names and gradients are TensorFlow's).

The matrices are flattened to one batch; the largest column sum (the 1-norm) picks the
approximant per matrix with nested ``where``s (degrees 3, 5, 7 for 16/32-bit types, 3 to
9 and 13 for 64-bit ones, the last applied to the matrix scaled by ``2^-s``); ``u`` and
``v`` give ``(v - u)^-1 (u + v)`` by ``MatrixSolve`` under a ``cond`` on the norm being
finite (else NaNs), and a ``while_loop`` squares each matrix ``s`` times. The single
``MatrixExponential`` op stays available in `linalg_expm.py` for imported graphs.

Example
-------
>>> import flowgraph as tf
>>> e = tf.linalg.expm([[0.0, 1.0], [0.0, 0.0]])
>>> e.name, tf.Session().run(e).tolist()
('matrix_exponential/Reshape_1:0', [[1.0, 1.0], [0.0, 1.0]])
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_index_ops import where_v2
from flowgraph.ops.array_join_ops import concat
from flowgraph.ops.array_shape_ops import fill, reshape, shape, size
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.linalg_basic import eye
from flowgraph.ops.linalg_ops import matrix_solve
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, floor, is_finite, less, log, matmul, maximum, pow
from flowgraph.ops.math_reduce import reduce_max, reduce_sum

__all__ = ["expm"]

# Padé numerator coefficients b_0..b_m of each degree m
_PADE = {
    3: (120.0, 60.0, 12.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
         1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
         33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0),
}
# per precision: the norm bound of the largest approximant, and the norms below which
# each smaller degree is exact enough
_SMALL = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7))
_LARGE = (5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001,
                              9.504178996162932e-001, 2.097847961257068e+000),
          (3, 5, 7, 9, 13))


def _pade(matrix, degree: int):
    """``(u, v)``: the odd and even parts of the degree-`degree` Padé numerator."""
    b = [constant(x, matrix.dtype) for x in _PADE[degree]]
    ident = eye(shape(matrix)[-2], batch_shape=shape(matrix)[:-2], dtype=matrix.dtype)
    m2 = matmul(matrix, matrix)
    if degree == 13:
        m4 = matmul(m2, m2)
        m6 = matmul(m4, m2)
        tmp_u = (matmul(m6, m6 + b[11] * m4 + b[9] * m2) + b[7] * m6 + b[5] * m4
                 + b[3] * m2 + b[1] * ident)
        u = matmul(matrix, tmp_u)
        tmp_v = b[12] * m6 + b[10] * m4 + b[8] * m2
        v = matmul(m6, tmp_v) + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
        return u, v
    powers = [m2]
    for _ in range(degree // 2 - 1):
        powers.append(matmul(powers[-1], m2) if len(powers) > 1 else matmul(m2, m2))
    # the highest power has coefficient 1 in u; the sums run from the top power down
    tmp = powers[-1]
    for k in range(len(powers) - 2, -1, -1):
        tmp = tmp + b[2 * k + 3] * powers[k]
    u = matmul(matrix, tmp + b[1] * ident)
    v = b[degree - 1] * powers[-1]
    for k in range(len(powers) - 2, -1, -1):
        v = v + b[2 * k + 2] * powers[k]
    return u, v + b[0] * ident


def expm(input, name=None):
    """The matrix exponential of each square matrix in the last two axes of `input`
    (float16/32/64 or complex), by TensorFlow's scaling-and-squaring Padé graph.

    Example
    -------
    >>> import flowgraph as tf
    >>> import numpy as np
    >>> r = tf.Session().run(tf.linalg.expm([[0.0, np.pi], [-np.pi, 0.0]]))
    >>> np.round(r, 4).tolist()
    [[-1.0, 0.0], [-0.0, -1.0]]
    """
    with name_scope(name, "matrix_exponential", [input]):
        matrix = convert_to_tensor(input, name="input")
        if matrix.shape.ndims is not None and matrix.shape.as_list()[-2:] == [0, 0]:
            return matrix
        dtype = matrix.dtype.base_dtype
        if dtype in (_dtypes.float16, _dtypes.float32, _dtypes.complex64):
            maxnorm, bounds, degrees = _SMALL
        elif dtype in (_dtypes.float64, _dtypes.complex128):
            maxnorm, bounds, degrees = _LARGE
        else:
            raise ValueError(f"tf.linalg.expm does not support matrices of type {dtype}")
        batch_shape = matrix.shape[:-2]
        if not batch_shape.is_fully_defined():
            batch_shape = shape(matrix)[:-2]
        matrix = reshape(matrix, concat(([-1], shape(matrix)[-2:]), axis=0))
        l1_norm = reduce_max(reduce_sum(_abs(matrix), axis=size(shape(matrix)) - 2),
                             axis=-1)[..., None, None]

        def const(x):
            return constant(x, l1_norm.dtype)

        def nest_where(cases, vals):
            picked = cases[-1]
            # built outermost first, as TensorFlow's recursion builds them
            def build(i):
                if i == len(vals) - 1:
                    return where_v2(less(l1_norm, const(vals[i])), cases[i], picked)
                return where_v2(less(l1_norm, const(vals[i])), cases[i], build(i + 1))
            return build(0)

        squarings = maximum(floor(log(l1_norm / const(maxnorm)) / log(const(2.0))), 0)
        parts = []
        for d in degrees:
            if d == degrees[-1]:
                parts.append(_pade(matrix / cast(pow(const(2.0), squarings), dtype), d))
            else:
                parts.append(_pade(matrix, d))
        u = nest_where([p[0] for p in parts], bounds)
        v = nest_where([p[1] for p in parts], bounds)
        finite = is_finite(reduce_max(l1_norm))
        nan = constant(np.nan, dtype)
        result = cond(finite, lambda: matrix_solve(-u + v, u + v),
                      lambda: fill(shape(matrix), nan))
        max_squarings = reduce_max(squarings)

        def loop_cond(i, _):
            return cond(finite, lambda: less(i, max_squarings), lambda: constant(False))

        def body(i, r):
            return i + 1, where_v2(less(i, squarings), matmul(r, r), r)

        _, result = while_loop(loop_cond, body, [const(0.0), result])
        if not matrix.shape.is_fully_defined():
            return reshape(result, concat((batch_shape, shape(result)[-2:]), axis=0))
        return reshape(result, batch_shape.concatenate(result.shape[-2:]))
