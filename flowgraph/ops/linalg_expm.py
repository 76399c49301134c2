"""The raw op ``MatrixExponential`` (the matrix exponential of each square matrix in a
batch; the CPU kernel is SciPy's scaling-and-squaring Padé method) for graphs that name
it, and `expm`, which builds that one op. `tf.linalg.expm` is TensorFlow's graph of
ordinary ops instead (`linalg_expm_pade.py`).

Its gradient is itself a matrix exponential: for ``L = <G, expm(A)>``, ``dL/dA`` is the
upper-right block of ``expm([[A^H, G], [0, A^H]])`` (the Fréchet derivative of the
exponential, read off a block-triangular matrix), so gradients of any order work.

Example
-------
>>> import flowgraph as tf
>>> tf.Session().run(tf.linalg.expm([[0.0, 0.0], [0.0, 0.0]])).tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_join_ops import concat, split
from flowgraph.ops.array_shape_ops import zeros_like
from flowgraph.ops.linalg_basic import adjoint
from flowgraph.ops.op_util import make_tensor

__all__ = ["expm"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.complex64,
           _dtypes.complex128)


@register_op("MatrixExponential", cost="expensive")
def _expm_shape(op, x: TensorShape):
    if x.ndims is not None:
        if x.ndims < 2:
            raise op.shape_error(f"input must be a matrix or a batch of matrices (rank >= 2),"
                                 f" got shape {x}")
        if not x.dims[-1].is_compatible_with(x.dims[-2]):
            raise op.shape_error(f"Dimensions must be equal, but are {x.dims[-1]} and "
                                 f"{x.dims[-2]}: tf.linalg.expm needs square matrices, got "
                                 f"shape {x}")
    return [x]


@register_gradient("MatrixExponential")
def _expm_grad(op, grad):
    a_h = adjoint(op.inputs[0])
    top = concat([a_h, grad], -1)
    bottom = concat([zeros_like(a_h), a_h], -1)
    block = make_tensor("MatrixExponential", [concat([top, bottom], -2)])
    upper = split(block, 2, axis=-2)[0]
    return [split(upper, 2, axis=-1)[1]]


def expm(input, name=None):
    """The matrix exponential ``sum_k input^k / k!`` of each matrix in the last two axes
    of `input` (float16/32/64 or complex; square matrices).

    Parameters
    ----------
    input : Tensor
        Shape ``[..., n, n]``.
    name : str, optional

    Returns
    -------
    Tensor
        The same shape and dtype as `input`.

    Example
    -------
    >>> import flowgraph as tf
    >>> import numpy as np
    >>> from flowgraph.ops.linalg_expm import expm
    >>> r = tf.Session().run(expm([[0.0, np.pi], [-np.pi, 0.0]]))
    >>> np.round(r, 4).tolist()
    [[-1.0, -0.0], [0.0, -1.0]]
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in _FLOATS:
        raise ValueError(f"tf.linalg.expm does not support matrices of type {x.dtype}: "
                         "cast it to a floating or complex type first")
    return make_tensor("MatrixExponential", [x], name=name or "MatrixExponential")
