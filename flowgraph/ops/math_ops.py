"""Elementwise math ops with NumPy broadcasting, and the Tensor operators.

Unary and binary ops are declared in tables; each row registers the op (shape
function) and a user-facing function with TensorFlow's name.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.operation import install_tensor_operator
from flowgraph.framework.registry import register_op
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops.op_util import binary_inputs, make_tensor

__all__ = [
    "add",
    "matmul",
    "multiply",
    "sin",
    "subtract",
]



def _unary_shape(op, x):
    return [x]


def _binary_shape(op, x, y):
    try:
        return [broadcast_shape(x, y)]
    except ValueError as e:
        raise op.shape_error(f"cannot broadcast {x} and {y} ({e})") from None


def _register_unary(op_type: str, fn_name: str):
    register_op(op_type)(_unary_shape)

    def fn(x, name=None):
        return make_tensor(op_type, [convert_to_tensor(x)], name=name or op_type)

    fn.__name__ = fn_name
    fn.__doc__ = f"Elementwise `{fn_name}` (op `{op_type}`)."
    return fn


def _register_binary(op_type: str, fn_name: str, bool_out: bool = False):
    dtype_fn = (lambda op: [_dtypes.bool]) if bool_out else None
    register_op(op_type, dtype_fn=dtype_fn)(_binary_shape)

    def fn(x, y, name=None):
        a, b = binary_inputs(x, y, op_type, name)
        return make_tensor(op_type, [a, b], name=name or op_type)

    fn.__name__ = fn_name
    fn.__doc__ = f"Elementwise `{fn_name}` with broadcasting (op `{op_type}`)."
    return fn


add = _register_binary("Add", "add")
subtract = _register_binary("Sub", "subtract")
multiply = _register_binary("Mul", "multiply")
sin = _register_unary("Sin", "sin")


@register_op("MatMul", attrs={"transpose_a": False, "transpose_b": False}, cost="expensive")
def _matmul_shape(op, a, b):
    if a.ndims is None or b.ndims is None:
        return [TensorShape([None, None])]
    if a.ndims != 2 or b.ndims != 2:
        raise op.shape_error(f"MatMul needs rank-2 inputs, got ranks {a.ndims} and {b.ndims}")
    m, k1 = (a[1], a[0]) if op.attrs["transpose_a"] else (a[0], a[1])
    k2, n = (b[1], b[0]) if op.attrs["transpose_b"] else (b[0], b[1])
    if not k1.is_compatible_with(k2):
        raise op.shape_error(f"inner dimensions differ ({k1} vs {k2})")
    return [TensorShape([m, n])]


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """Matrix product ``a @ b`` (rank-2 here).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.matmul(tf.ones([2, 3]), tf.ones([3, 4])).shape.as_list()
    [2, 4]
    """
    a, b = binary_inputs(a, b, "MatMul", name)
    return make_tensor("MatMul", [a, b], {"transpose_a": bool(transpose_a or adjoint_a),
                                          "transpose_b": bool(transpose_b or adjoint_b)},
                       name=name or "MatMul")


def _install_operators() -> None:
    install_tensor_operator("__add__", lambda x, y: add(x, y))
    install_tensor_operator("__radd__", lambda x, y: add(y, x))
    install_tensor_operator("__sub__", lambda x, y: subtract(x, y))
    install_tensor_operator("__rsub__", lambda x, y: subtract(y, x))
    install_tensor_operator("__mul__", lambda x, y: multiply(x, y))
    install_tensor_operator("__rmul__", lambda x, y: multiply(y, x))
    install_tensor_operator("__matmul__", lambda x, y: matmul(x, y))
    install_tensor_operator("__rmatmul__", lambda x, y: matmul(y, x))


_install_operators()
