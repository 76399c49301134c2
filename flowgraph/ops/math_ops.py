"""Elementwise math with NumPy broadcasting, casts, matrix products, and Tensor operators.

Unary and binary ops are declared in tables: each row registers the op (its shape function
and allowed dtypes) and builds the user-facing function with TensorFlow 1.x's name.
Reductions, scans and `add_n` live in `math_reduce.py`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.int32, [None, 3])
>>> (x / 2).dtype.name, (x // 2).op.type, (x < 1).dtype.name
('float64', 'FloorDiv', 'bool')
"""

from __future__ import annotations

import warnings

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant_value,
    convert_to_tensor,
    register_constant_evaluator,
)
from flowgraph.framework.graph import name_scope
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Tensor, install_tensor_operator
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape, broadcast_shape
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import attr_dtype, binary_inputs, fixed_dtype, make_tensor, op_scope

__all__ = [
    "abs", "add", "cast", "ceil", "clip_by_value", "conj", "cos", "div", "div_no_nan",
    "divide", "divide_no_nan", "einsum",
    "equal", "erf", "exp", "expm1", "floor", "floor_div", "floordiv", "floormod", "greater",
    "greater_equal", "is_finite", "is_inf", "is_nan", "less", "less_equal", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "maximum", "minimum",
    "mod", "multiply", "negative", "not_equal", "pow", "realdiv", "reciprocal", "round",
    "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "squared_difference", "subtract",
    "tan", "tanh", "to_double", "to_float", "to_int32", "to_int64", "truediv",
    "truncatediv", "truncatemod",
]

_F = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
_C = (_dtypes.complex64, _dtypes.complex128)
_SI = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64)
_UI = (_dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)
_REAL = _F + _SI + _UI
_NUM = _REAL + _C
_BOOL = (_dtypes.bool,)
_ALL = (*_NUM, _dtypes.bool, _dtypes.string)
_ALLOWED: dict[str, tuple] = {}  # op type -> dtypes its inputs may have


def check_dtype(t: Tensor, allowed, op_type: str, param: str = "x") -> None:
    """TypeError naming `op_type` unless tensor `t` has one of the `allowed` dtypes."""
    dt = t.dtype.base_dtype
    if dt not in allowed:
        raise TypeError(
            f"Value passed to parameter '{param}' of op '{op_type}' has DataType {dt.name} "
            f"not in list of allowed values: {', '.join(d.name for d in allowed)}. "
            f"Cast it first, e.g. tf.cast({t.name}, tf.{allowed[0].name})."
        )


def _unary_shape(op, x):
    return [x]


def broadcast_error(op, x, y) -> ValueError:
    """The shape error of a failed broadcast of `x` and `y`, opening with TensorFlow's
    words for the first (leftmost) pair of dimensions that differ."""
    rank = max(x.ndims, y.ndims)
    xs = [1] * (rank - x.ndims) + [d.value for d in x.dims]
    ys = [1] * (rank - y.ndims) + [d.value for d in y.dims]
    a, b = next((a, b) for a, b in zip(xs, ys)
                if a is not None and b is not None and a != b and 1 not in (a, b))
    return op.shape_error(f"Dimensions must be equal, but are {a} and {b}: shapes {x} and "
                          f"{y} cannot be broadcast together")


def _binary_shape(op, x, y):
    try:
        return [broadcast_shape(x, y)]
    except ValueError:
        raise broadcast_error(op, x, y) from None


def _doc(summary: str, call: str, result: str) -> str:
    return (f"{summary}\n\nExample\n-------\n>>> import flowgraph as tf\n"
            f">>> with tf.Session() as sess:\n...     print(sess.run(tf.{call}))\n{result}\n")


_XY = ("x", "y")  # TensorFlow's argument names: constants made for them are `<op>/x`, `<op>/y`


def _unary(op_type, fn_name, allowed, summary, call, result, out_dtype=None):
    register_op(op_type, dtype_fn=fixed_dtype(out_dtype) if out_dtype else None)(_unary_shape)
    _ALLOWED[op_type] = allowed

    def fn(x, name=None):
        if (h := handler_for("unary", x)) is not None:  # a RaggedTensor: its flat values
            return h(fn, x, name=name)
        with op_scope(name, op_type, (x,)) as scope:
            x = convert_to_tensor(x, name="x")
            check_dtype(x, allowed, op_type)
            return make_tensor(op_type, [x], name=scope)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = _doc(summary, call, result) if call else f"Builds op `{op_type}`."
    return fn


def _binary(op_type, fn_name, allowed, summary, call, result, out_dtype=None,
            default_name=None):
    register_op(op_type, dtype_fn=fixed_dtype(out_dtype) if out_dtype else None)(_binary_shape)
    _ALLOWED[op_type] = allowed
    default_name = default_name or op_type

    def fn(x, y, name=None):
        if (h := handler_for("binary", x, y)) is not None:
            return h(fn, x, y, name=name)
        with op_scope(name, default_name, (x, y)) as scope:
            x, y = binary_inputs(x, y, op_type, name, _XY)
            check_dtype(x, allowed, op_type)
            return make_tensor(op_type, [x, y], name=scope)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = _doc(summary, call, result) if call else f"Builds op `{op_type}`."
    return fn


_FC = _F + _C
_B = _dtypes.bool
# -- unary elementwise --------------------------------------------------------------------
negative = _unary("Neg", "negative", _F + _SI + _C, "Elementwise `-x`.",
                  "negative([1, -2])", "[-1  2]")
sign = _unary("Sign", "sign", _F + _SI + _C, "Elementwise sign: -1, 0 or 1 (x/|x| if complex).",
              "sign([-3.0, 0.0, 2.0])", "[-1.  0.  1.]")
reciprocal = _unary("Reciprocal", "reciprocal", _FC + _SI, "Elementwise `1 / x`.",
                    "reciprocal([2.0, 4.0])", "[0.5  0.25]")
square = _unary("Square", "square", _NUM, "Elementwise `x * x`.", "square([2, -3])", "[4 9]")
sqrt = _unary("Sqrt", "sqrt", _FC, "Elementwise square root.", "sqrt([4.0, 9.0])", "[2. 3.]")
rsqrt = _unary("Rsqrt", "rsqrt", _FC, "Elementwise `1 / sqrt(x)`.", "rsqrt([4.0])", "[0.5]")
exp = _unary("Exp", "exp", _FC, "Elementwise `e ** x`.", "exp([0.0])", "[1.]")
expm1 = _unary("Expm1", "expm1", _FC, "Elementwise `exp(x) - 1`, accurate near 0.",
               "expm1([0.0])", "[0.]")
log = _unary("Log", "log", _FC, "Elementwise natural logarithm.", "log([1.0])", "[0.]")
log1p = _unary("Log1p", "log1p", _FC, "Elementwise `log(1 + x)`, accurate near 0.",
               "log1p([0.0])", "[0.]")
tanh = _unary("Tanh", "tanh", _FC, "Elementwise hyperbolic tangent.", "tanh([0.0])", "[0.]")
sigmoid = _unary("Sigmoid", "sigmoid", _FC, "Elementwise `1 / (1 + exp(-x))`.",
                 "sigmoid([0.0])", "[0.5]")
sin = _unary("Sin", "sin", _FC, "Elementwise sine.", "sin([0.0])", "[0.]")
cos = _unary("Cos", "cos", _FC, "Elementwise cosine.", "cos([0.0])", "[1.]")
tan = _unary("Tan", "tan", _FC, "Elementwise tangent.", "tan([0.0])", "[0.]")
erf = _unary("Erf", "erf", _F, "Elementwise Gauss error function.", "erf([0.0])", "[0.]")
floor = _unary("Floor", "floor", _F, "Elementwise floor.", "floor([1.5, -1.5])", "[ 1. -2.]")
ceil = _unary("Ceil", "ceil", _F, "Elementwise ceiling.", "ceil([1.5, -1.5])", "[ 2. -1.]")
is_nan = _unary("IsNan", "is_nan", _F, "Elementwise NaN test.", "is_nan([0.0])", "[False]", _B)
is_inf = _unary("IsInf", "is_inf", _F, "Elementwise infinity test.", "is_inf([0.0])",
                "[False]", _B)
is_finite = _unary("IsFinite", "is_finite", _F, "Elementwise finiteness test.",
                   "is_finite([0.0])", "[ True]", _B)
logical_not = _unary("LogicalNot", "logical_not", _BOOL, "Elementwise boolean NOT.",
                     "logical_not([True, False])", "[False  True]")
_round = _unary("Round", "round", _F + _SI + _C, "", "", "")
_abs = _unary("Abs", "abs", _F + _SI, "", "", "")
_conj = _unary("Conj", "conj", _C, "", "", "")
register_op("ComplexAbs", attrs={"Tout": None}, dtype_fn=attr_dtype("Tout"))(_unary_shape)


def round(x, name=None):
    """Round to the nearest integer, halves to even (banker's rounding); ints unchanged.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.round([0.5, 1.5, 2.5, -1.5])))
    [ 0.  2.  2. -2.]
    """
    if (h := handler_for("unary", x)) is not None:  # a RaggedTensor
        return h(round, x, name=name)
    x = convert_to_tensor(x)
    if x.dtype.is_integer:
        return x
    return _round(x, name=name)


def abs(x, name=None):
    """Elementwise absolute value; a complex input gives its real magnitude.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.abs([-1.5, 2.0])))
    [1.5 2. ]
    """
    if (h := handler_for("unary", x)) is not None:
        return h(abs, x, name=name)
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return make_tensor("ComplexAbs", [x], {"Tout": x.dtype.real_dtype},
                           name=name or "Abs")
    return _abs(x, name=name)


def conj(x, name=None):
    """Complex conjugate; real numbers are returned unchanged.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.conj([1 + 2j])))
    [1.-2.j]
    """
    x = convert_to_tensor(x)
    if x.dtype.is_complex:
        return _conj(x, name=name)
    if x.dtype.is_floating or x.dtype.is_integer:
        return x
    raise TypeError(f"conj: expected a numeric tensor, got {x.name} of dtype {x.dtype.name}")


# -- binary elementwise -------------------------------------------------------------------
_binary("Add", "add", (*_NUM, _dtypes.string), "", "", "")
_binary("AddV2", "add_v2", _NUM, "", "", "")


def add(x, y, name=None):
    """Elementwise `x + y` with broadcasting; strings concatenate.

    Numbers build op `AddV2` and strings op `Add`, the types TensorFlow builds (`Add`
    stays registered, so graphs saved with it still load and run).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.add([1, 2], 10)))
    [11 12]
    """
    if (h := handler_for("binary", x, y)) is not None:
        return h(add, x, y, name=name)
    with op_scope(name, "Add", (x, y)) as scope:
        x, y = binary_inputs(x, y, "AddV2", name, _XY)
        op_type = "Add" if x.dtype.base_dtype == _dtypes.string else "AddV2"
        check_dtype(x, _ALLOWED[op_type], op_type)
        return make_tensor(op_type, [x, y], name=scope)


subtract = _binary("Sub", "subtract", _NUM, "Elementwise `x - y` with broadcasting.",
                   "subtract([1, 2], 10)", "[-9 -8]")
multiply = _binary("Mul", "multiply", _NUM, "Elementwise `x * y` with broadcasting.",
                   "multiply([1, 2], 10)", "[10 20]")
realdiv = _binary("RealDiv", "realdiv", _NUM, "Elementwise `x / y` for floating types.",
                  "realdiv([1.0, 2.0], 4.0)", "[0.25 0.5 ]")
_div_no_nan = _binary("DivNoNan", "div_no_nan", _FC, "", "", "", default_name="div_no_nan")


def div_no_nan(x, y, name=None):
    """Elementwise `x / y`, and 0 wherever `y` is 0 (whatever `x` is). Integers divide as
    floating point first, as in `truediv`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.div_no_nan([1.0, 2.0], [0.0, 4.0])))
    [0.  0.5]
    """
    with name_scope(name, "div_no_nan", [x, y]) as scope:
        x, y = binary_inputs(x, y, "DivNoNan", names=_XY)
        dt = x.dtype.base_dtype
        if dt in _TRUEDIV:
            x, y = cast(x, _TRUEDIV[dt]), cast(y, _TRUEDIV[dt])
        return _div_no_nan(x, y, name=scope)


divide_no_nan = div_no_nan  # the tf.math name
floor_div = _binary("FloorDiv", "floor_div", _NUM, "Elementwise `floor(x / y)`.",
                    "floor_div([7, -7], 2)", "[ 3 -4]")
floormod = _binary("FloorMod", "floormod", _REAL,
                   "Elementwise remainder of floor division: the sign follows `y`.",
                   "floormod([7, -7], 3)", "[1 2]")
mod = floormod
truncatediv = _binary("TruncateDiv", "truncatediv", _NUM,
                      "Elementwise `x / y` rounded toward zero (C semantics).",
                      "truncatediv([7, -7], 2)", "[ 3 -3]")
truncatemod = _binary("TruncateMod", "truncatemod", (*_F, _dtypes.int32, _dtypes.int64),
                      "Elementwise remainder of truncated division: the sign follows `x`.",
                      "truncatemod([7, -7], 3)", "[ 1 -1]")
pow = _binary("Pow", "pow", _F + _SI + _C, "Elementwise `x ** y`.",
              "pow([2, 3], 2)", "[4 9]")
maximum = _binary("Maximum", "maximum", _REAL, "Elementwise max with broadcasting (NaN wins).",
                  "maximum([1, 5], 3)", "[3 5]")
minimum = _binary("Minimum", "minimum", _REAL, "Elementwise min with broadcasting (NaN wins).",
                  "minimum([1, 5], 3)", "[1 3]")
squared_difference = _binary("SquaredDifference", "squared_difference", _F + _SI[2:] + _C,
                             "Elementwise `(x - y) * conj(x - y)`.",
                             "squared_difference([1, 5], 2)", "[1 9]")
equal = _binary("Equal", "equal", _ALL, "Elementwise `x == y` (bool).", "equal([1, 2], 2)",
                "[False  True]", _B)
not_equal = _binary("NotEqual", "not_equal", _ALL, "Elementwise `x != y` (bool).",
                    "not_equal([1, 2], 2)", "[ True False]", _B)
less = _binary("Less", "less", _REAL, "Elementwise `x < y` (bool).", "less([1, 2], 2)",
               "[ True False]", _B)
less_equal = _binary("LessEqual", "less_equal", _REAL, "Elementwise `x <= y` (bool).",
                     "less_equal([1, 3], 2)", "[ True False]", _B)
greater = _binary("Greater", "greater", _REAL, "Elementwise `x > y` (bool).",
                  "greater([1, 3], 2)", "[False  True]", _B)
greater_equal = _binary("GreaterEqual", "greater_equal", _REAL, "Elementwise `x >= y` (bool).",
                        "greater_equal([1, 2], 2)", "[False  True]", _B)
logical_and = _binary("LogicalAnd", "logical_and", _BOOL, "Elementwise boolean AND.",
                      "logical_and([True, False], True)", "[ True False]")
logical_or = _binary("LogicalOr", "logical_or", _BOOL, "Elementwise boolean OR.",
                     "logical_or([True, False], False)", "[ True False]")

not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                   "LogicalAnd", "LogicalOr", "LogicalNot", "IsNan", "IsInf", "IsFinite",
                   "FloorDiv", "TruncateDiv")


def logical_xor(x, y, name="LogicalXor"):
    """Elementwise boolean XOR, built as ``(x | y) & ~(x & y)`` as TensorFlow does.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.logical_xor([True, False], True)))
    [False  True]
    """
    # No scope of its own, as in TensorFlow: the parts are named at the caller's level
    # (the `^` operator opens an ``xor`` scope for them).
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


_TRUEDIV = {_dtypes.int8: _dtypes.float32, _dtypes.uint8: _dtypes.float32,
            _dtypes.int16: _dtypes.float32, _dtypes.uint16: _dtypes.float32,
            _dtypes.int32: _dtypes.float64, _dtypes.uint32: _dtypes.float64,
            _dtypes.int64: _dtypes.float64, _dtypes.uint64: _dtypes.float64}


def truediv(x, y, name=None):
    """Python 3 division: integers are cast to floating point first.

    int8/uint8/int16/uint16 divide as float32, int32/int64 (and unsigned) as float64;
    floating and complex inputs divide in their own type.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.truediv(tf.constant([7, -7]), 2)
    >>> with tf.Session() as sess:
    ...     print(q.dtype.name, sess.run(q))
    float64 [ 3.5 -3.5]
    """
    if (h := handler_for("binary", x, y)) is not None:
        return h(truediv, x, y, name=name)
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = binary_inputs(x, y, "RealDiv", names=_XY)
        dt = x.dtype.base_dtype
        if dt in _TRUEDIV:
            x, y = cast(x, _TRUEDIV[dt]), cast(y, _TRUEDIV[dt])
        elif dt not in _FC:
            raise TypeError(f"Invalid dtype {dt.name} in truediv ('{scope[:-1]}'): expected "
                            f"one of {', '.join(d.name for d in (*_TRUEDIV, *_FC))}")
        return make_tensor("RealDiv", [x, y], name=scope)


def divide(x, y, name=None):
    """Computes Python-style division `x / y` (`truediv`).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.divide([3.0, 1.0], 2.0)))
    [1.5 0.5]
    """
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """TF1's Python-2 style division: floor division for integers, real division otherwise.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.div([7, -7], 2)))
    [ 3 -4]
    """
    if (h := handler_for("binary", x, y)) is not None:
        return h(div, x, y, name=name)
    with name_scope(name, "div", [x, y]) as scope:
        x, y = binary_inputs(x, y, "FloorDiv", names=_XY)
        if x.dtype.is_integer:
            check_dtype(x, _REAL, "FloorDiv")
            return make_tensor("FloorDiv", [x, y], name=scope)
        check_dtype(x, _FC, "RealDiv")
        return make_tensor("RealDiv", [x, y], name=scope)


def floordiv(x, y, name=None):
    """Elementwise `floor(x / y)` (op `FloorDiv`); the `//` operator.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.floordiv([7.0, -7.0], 2.0)))
    [ 3. -4.]
    """
    if (h := handler_for("binary", x, y)) is not None:
        return h(floordiv, x, y, name=name)
    with name_scope(name, "floordiv", [x, y]) as scope:
        return floor_div(x, y, name=scope)


# -- casts and clipping -------------------------------------------------------------------
@register_op("Cast", attrs={"SrcT": None, "DstT": None, "Truncate": False},
             dtype_fn=attr_dtype("DstT"))
def _cast_shape(op, x):
    return [x]


def cast(x, dtype, name=None):
    """Cast `x` to `dtype`; `x` itself when it already has that dtype.

    Floating to integer truncates toward zero; out-of-range and NaN values follow the
    machine's conversion (as in TensorFlow); complex to real keeps the real part.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.cast([1.7, -1.7], tf.int32)))
    [ 1 -1]
    """
    base = _dtypes.as_dtype(dtype).base_dtype
    if (h := handler_for("unary", x)) is not None:
        return h(lambda v, name=None: cast(v, base, name=name), x, name=name)
    if isinstance(x, SparseTensor | IndexedSlices):  # the values cast, as in TensorFlow
        with name_scope(name, "Cast", [x]):
            values = cast(x.values, base)
        if isinstance(x, SparseTensor):
            return SparseTensor(x.indices, values, x.dense_shape)
        return IndexedSlices(values, x.indices, x.dense_shape)
    if hasattr(x, "handle") and getattr(x, "dtype", None) == base:
        return x  # a resource variable of that dtype, unread (as TensorFlow)
    if isinstance(x, Tensor) and x.dtype == base:
        return x  # before any name scope: the scope's name stays free, as in TensorFlow
    with name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        src = x.dtype.base_dtype
        if src == base:
            return x
        return make_tensor("Cast", [x], {"SrcT": src, "DstT": base}, name=scope)


def _deprecated_cast(fn_name: str, dtype, default_name: str):
    def fn(x, name=default_name):
        warnings.warn(f"tf.{fn_name} is deprecated; use tf.cast(x, tf.{dtype.name})",
                      DeprecationWarning, stacklevel=2)
        return cast(x, dtype, name=name)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = _doc(f"Deprecated TF1 helper: `tf.cast(x, tf.{dtype.name})`.",
                      f"{fn_name}([1])", f"[1{'.' if dtype.is_floating else ''}]")
    return fn


to_float = _deprecated_cast("to_float", _dtypes.float32, "ToFloat")
to_double = _deprecated_cast("to_double", _dtypes.float64, "ToDouble")
to_int32 = _deprecated_cast("to_int32", _dtypes.int32, "ToInt32")
to_int64 = _deprecated_cast("to_int64", _dtypes.int64, "ToInt64")


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clip `t` elementwise to ``[clip_value_min, clip_value_max]``.

    The bounds broadcast against `t` but must not change its shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.clip_by_value([1, 5, 9], 2, 6)))
    [2 5 6]
    """
    if (h := handler_for("unary", t)) is not None:  # a RaggedTensor
        return h(lambda v, name=None: clip_by_value(v, clip_value_min, clip_value_max, name),
                 t, name=name)
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t = convert_to_tensor(t, name="t")
        out = maximum(minimum(t, clip_value_max), clip_value_min, name=scope)
        if not t.shape.is_compatible_with(out.shape):
            raise ValueError(f"clip_by_value '{scope[:-1]}': the clip bounds would broadcast "
                             f"t of shape {t.shape} to shape {out.shape}; bounds must be "
                             "scalars or broadcast to t's shape")
        return out


# -- matrix products ----------------------------------------------------------------------
_MATMUL = _F + _C + (_dtypes.int32, _dtypes.int64) + _UI


@register_op("MatMul", attrs={"transpose_a": False, "transpose_b": False}, cost=OpCost.BLAS)
def _matmul_shape(op, a, b):
    if a.ndims not in (None, 2) or b.ndims not in (None, 2):
        raise op.shape_error(f"MatMul needs rank-2 inputs, got ranks {a.ndims} and {b.ndims}")
    a, b = a.with_rank(2), b.with_rank(2)
    m, k1 = (a[1], a[0]) if op.attrs["transpose_a"] else (a[0], a[1])
    k2, n = (b[1], b[0]) if op.attrs["transpose_b"] else (b[0], b[1])
    if not k1.is_compatible_with(k2):
        raise op.shape_error(f"Dimensions must be equal, but are {k1} and {k2} (inner "
                             "dimensions differ)")
    return [TensorShape([m, n])]


def _batch_matmul_shape(op, a, b, broadcast: bool):
    if a.ndims is None or b.ndims is None:
        return [TensorShape(None)]
    if a.ndims < 2 or b.ndims < 2:
        raise op.shape_error(f"inputs must have rank >= 2, got ranks {a.ndims} and {b.ndims}")
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    m, k1 = (a[-1], a[-2]) if adj_x else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_y else (b[-2], b[-1])
    if not k1.is_compatible_with(k2):
        raise op.shape_error(f"Dimensions must be equal, but are {k1} and {k2} (inner "
                             "dimensions differ)")
    try:
        batch = (broadcast_shape(a[:-2], b[:-2]) if broadcast
                 else a[:-2].merge_with(b[:-2]))
    except ValueError:
        raise op.shape_error(f"batch dimensions {a[:-2]} and {b[:-2]} are not "
                             f"{'broadcastable' if broadcast else 'equal'}") from None
    return [batch.concatenate([m, n])]


register_op("BatchMatMul", attrs={"adj_x": False, "adj_y": False}, cost=OpCost.BLAS)(
    lambda op, a, b: _batch_matmul_shape(op, a, b, broadcast=False))
register_op("BatchMatMulV2", attrs={"adj_x": False, "adj_y": False}, cost=OpCost.BLAS)(
    lambda op, a, b: _batch_matmul_shape(op, a, b, broadcast=True))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """Matrix product ``op(a) @ op(b)``; inputs of rank > 2 are batches of matrices.

    `op` transposes (`transpose_*`) or conjugate-transposes (`adjoint_*`). Batch dimensions
    broadcast as in NumPy (op `BatchMatMulV2`); rank-2 inputs use op `MatMul`. As in
    TensorFlow, `output_type` (int8/uint8 inputs into int32) gives op `BatchMatMulV3`, and
    `a_is_sparse`/`b_is_sparse` on float32/bfloat16 matrices op `SparseMatMul`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.matmul(tf.ones([2, 3]), tf.ones([4, 3]), transpose_b=True).shape.as_list()
    [2, 4]
    >>> tf.matmul(tf.ones([5, 1, 2, 3]), tf.ones([7, 3, 4])).shape.as_list()
    [5, 7, 2, 4]
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with name_scope(name, "MatMul", [a, b]) as scope:
        if output_type is not None:
            a = convert_to_tensor(a, name="a")
            b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype.base_dtype)
            return make_tensor("BatchMatMulV3", [a, b], {
                "adj_x": bool(adjoint_a or transpose_a), "adj_y": bool(adjoint_b or transpose_b),
                "Ta": a.dtype.base_dtype, "Tb": b.dtype.base_dtype,
                "Tout": _dtypes.as_dtype(output_type)}, name=scope)
        a, b = binary_inputs(a, b, "MatMul", names=("a", "b"))
        check_dtype(a, _MATMUL, "MatMul", "a")
        ra, rb = a.shape.ndims, b.shape.ndims
        sparse_types = (_dtypes.float32, _dtypes.bfloat16)
        if (a_is_sparse or b_is_sparse) and ra is not None and rb is not None and \
                ra <= 2 and rb <= 2 and a.dtype.base_dtype in sparse_types:
            out = make_tensor("SparseMatMul", [a, b], {
                "transpose_a": bool(transpose_a or adjoint_a),
                "transpose_b": bool(transpose_b or adjoint_b), "a_is_sparse": bool(a_is_sparse),
                "b_is_sparse": bool(b_is_sparse), "Ta": a.dtype.base_dtype,
                "Tb": b.dtype.base_dtype}, name=scope)
            return out if a.dtype.base_dtype == _dtypes.float32 else cast(out, _dtypes.bfloat16)
        if ra is None or rb is None or ra > 2 or rb > 2:
            if transpose_a and a.dtype.is_complex:  # plain transpose = adjoint of the conj
                a, adjoint_a = conj(a), True
            if transpose_b and b.dtype.is_complex:
                b, adjoint_b = conj(b), True
            return make_tensor("BatchMatMulV2", [a, b], {
                "adj_x": bool(adjoint_a or transpose_a),
                "adj_y": bool(adjoint_b or transpose_b)}, name=scope)
        if adjoint_a and a.dtype.is_complex:
            a = conj(a)
        if adjoint_b and b.dtype.is_complex:
            b = conj(b)
        return make_tensor("MatMul", [a, b], {"transpose_a": bool(transpose_a or adjoint_a),
                                              "transpose_b": bool(transpose_b or adjoint_b)},
                           name=scope)


@register_op("Tensordot", attrs={"axes": None}, cost=OpCost.BLAS)
def _tensordot_shape(op, a, b):
    axes = op.attrs["axes"]
    if a.ndims is None or b.ndims is None:
        return [TensorShape(None)]
    try:
        a_axes, b_axes = _tensordot_axes(axes, a.ndims, b.ndims)
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    for i, j in zip(a_axes, b_axes):
        if not a[i].is_compatible_with(b[j]):
            raise op.shape_error(f"contracted dimensions differ: a[{i}]={a[i]} vs "
                                 f"b[{j}]={b[j]}")
    free_a = [a[i] for i in range(a.ndims) if i not in a_axes]
    free_b = [b[j] for j in range(b.ndims) if j not in b_axes]
    return [TensorShape(free_a + free_b)]


def _tensordot_axes(axes, rank_a: int, rank_b: int) -> tuple[list[int], list[int]]:
    """Normalized (a_axes, b_axes) for ranks `rank_a`, `rank_b` (ValueError if invalid)."""
    if isinstance(axes, int):
        if axes < 0 or axes > rank_a or axes > rank_b:
            raise ValueError(f"axes={axes} must be in [0, min(rank(a)={rank_a}, "
                             f"rank(b)={rank_b})]")
        return list(range(rank_a - axes, rank_a)), list(range(axes))
    a_axes, b_axes = axes
    out = []
    for which, ax, rank in (("a", a_axes, rank_a), ("b", b_axes, rank_b)):
        norm = []
        for i in ax:
            if not -rank <= i < rank:
                raise ValueError(f"axis {i} is out of range for {which} of rank {rank}")
            norm.append(i % rank)
        if len(set(norm)) != len(norm):
            raise ValueError(f"repeated axes {list(ax)} for {which}")
        out.append(norm)
    return out[0], out[1]


def fused_tensordot(a, b, axes, name=None):
    """One ``Tensordot`` op (flowgraph's own type): the sum of products over `axes`, an
    int N (last N of `a` with first N of `b`) or a pair of axis lists. ``tf.tensordot``
    builds TensorFlow's Transpose/Reshape/MatMul graph instead
    (`flowgraph.ops.math_tensordot`); this op remains for graphs that hold it and for
    its gradient.

    Example
    -------
    >>> from flowgraph.ops.math_ops import fused_tensordot
    >>> import flowgraph as tf
    >>> x, y = tf.ones([2, 3, 4]), tf.ones([4, 3, 5])
    >>> fused_tensordot(x, y, [[1, 2], [1, 0]]).shape.as_list()
    [2, 5]
    """
    with name_scope(name, "Tensordot", [a, b]) as scope:
        a, b = binary_inputs(a, b, "Tensordot")
        check_dtype(a, _MATMUL, "Tensordot", "a")
        if isinstance(axes, Tensor):
            value = constant_value(axes)
            if value is None:
                raise TypeError("tensordot: `axes` must be known when the graph is built "
                                f"(a Python int/list or a constant tensor), got {axes.name}")
            axes = value.tolist()
        if hasattr(axes, "tolist"):
            axes = axes.tolist()
        if isinstance(axes, int):
            if axes < 0:
                raise ValueError(f"tensordot: 'axes' must be at least 0, got {axes}")
            norm = axes
        elif isinstance(axes, list | tuple) and len(axes) == 2:
            a_axes, b_axes = ([x] if isinstance(x, int) else list(x) for x in axes)
            if len(a_axes) != len(b_axes):
                raise ValueError(f"tensordot: different number of contraction axes for a "
                                 f"and b: {a_axes} vs {b_axes}")
            norm = [[int(i) for i in a_axes], [int(j) for j in b_axes]]
        else:
            raise ValueError(f"tensordot: 'axes' must be an int or a pair of axis lists, "
                             f"got {axes!r}")
        return make_tensor("Tensordot", [a, b], {"axes": norm}, name=scope)


def parse_einsum(equation: str, n_inputs: int):
    """(input label lists, output label list) of an einsum equation; ``"..."`` is one label.

    Without ``->`` the output is the ellipsis (if any input has one) followed by the
    labels that appear exactly once, sorted (NumPy's implicit mode).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_inputs:
        raise ValueError(f"Got {n_inputs} inputs for equation \"{equation}\", expecting "
                         f"{len(terms)}")

    def labels(term: str) -> list[str]:
        out, i = [], 0
        while i < len(term):
            if term.startswith("...", i):
                out.append("...")
                i += 3
            elif term[i].isalpha():
                out.append(term[i])
                i += 1
            else:
                raise ValueError(f"invalid character {term[i]!r} in einsum equation "
                                 f"\"{equation}\"")
        if out.count("...") > 1:
            raise ValueError(f"more than one ellipsis in term {term!r} of \"{equation}\"")
        return out

    ins = [labels(t) for t in terms]
    if arrow:
        out = labels(rhs)
        seen = {lab for spec in ins for lab in spec}
        for lab in out:
            if lab != "..." and lab not in seen:
                raise ValueError(f"output label {lab!r} of \"{equation}\" does not appear "
                                 "in any input")
            if lab != "..." and out.count(lab) > 1:
                raise ValueError(f"output label {lab!r} repeated in \"{equation}\"")
    else:
        flat = [lab for spec in ins for lab in spec if lab != "..."]
        out = (["..."] if any("..." in s for s in ins) else [])
        out += sorted(lab for lab in set(flat) if flat.count(lab) == 1)
    return ins, out


@register_op("Einsum", attrs={"equation": "", "N": 1}, cost=OpCost.BLAS)
def _einsum_shape(op, *shapes):
    try:
        ins, out = parse_einsum(op.attrs["equation"], len(shapes))
    except ValueError as e:
        raise op.shape_error(str(e)) from None
    dims: dict = {}
    ellipsis, ellipsis_unknown = TensorShape([]), False
    for k, (spec, s) in enumerate(zip(ins, shapes)):
        named = [lab for lab in spec if lab != "..."]
        if s.ndims is None:
            ellipsis_unknown |= "..." in spec
            continue
        if ("..." in spec and s.ndims < len(named)) or ("..." not in spec
                                                          and s.ndims != len(named)):
            raise op.shape_error(f"input {k} has rank {s.ndims} but its subscripts "
                                 f"{''.join(spec)!r} need {len(named)}")
        s_dims = s.dims
        if "..." in spec:
            at, n_ell = spec.index("..."), s.ndims - len(named)
            try:
                ellipsis = broadcast_shape(ellipsis, TensorShape(s_dims[at:at + n_ell]))
            except ValueError:
                raise op.shape_error("ellipsis dimensions do not broadcast") from None
            s_dims = s_dims[:at] + s_dims[at + n_ell:]
        for lab, d in zip(named, s_dims):
            if lab in dims and not dims[lab].is_compatible_with(d):
                raise op.shape_error(f"Dimensions must be equal for label {lab!r}, but are "
                                     f"{dims[lab]} and {d}")
            dims[lab] = dims[lab].merge_with(d) if lab in dims else d
    result = TensorShape([])
    for lab in out:
        if lab == "...":
            if ellipsis_unknown:
                return [TensorShape(None)]
            result = result.concatenate(ellipsis)
        else:
            result = result.concatenate([dims.get(lab)])
    return [result]


def einsum(equation, *inputs, **kwargs):
    """Einstein summation (NumPy's `einsum` semantics, with ``...`` and implicit output).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.einsum("bij,bjk->bik", tf.ones([5, 2, 3]), tf.ones([5, 3, 4])).shape.as_list()
    [5, 2, 4]
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum: unexpected keyword arguments {sorted(kwargs)}")
    if len(inputs) == 1 and isinstance(inputs[0], list | tuple):
        inputs = tuple(inputs[0])
    if not inputs:
        raise ValueError(f"einsum \"{equation}\" needs at least one input")
    with name_scope(name, "einsum", list(inputs)):
        first = convert_to_tensor(inputs[0])
        tensors = [first] + [binary_inputs(first, t, "Einsum")[1] for t in inputs[1:]]
        check_dtype(first, _MATMUL + _SI, "Einsum", "inputs")
        parse_einsum(equation, len(tensors))  # argument errors before building the op
        return make_tensor("Einsum", tensors, {"equation": equation.replace(" ", ""),
                                               "N": len(tensors)}, name="Einsum")


# -- static values ------------------------------------------------------------------------
_MAX_FOLDED = 4096  # elements: graph-build-time evaluation stays cheap


def _const_inputs(op):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None or np.size(v) > _MAX_FOLDED for v in values):
        return None
    return values


def _elementwise_evaluator(fn):
    def evaluate(op, index):
        values = _const_inputs(op)
        if values is None:
            return None
        if op.type in ("FloorDiv", "FloorMod") and not np.all(values[1]):
            return None  # division by zero is reported when the graph runs
        if op.type == "Cast" and op.attrs["DstT"].is_complex:
            return np.asarray(values[0], dtype=op.attrs["DstT"].as_numpy_dtype)
        with np.errstate(all="ignore"):
            out = fn(*values)
        return np.asarray(out, dtype=op.outputs[0].dtype.as_numpy_dtype)

    return evaluate


for _op_type, _fn in {"Add": np.add, "AddV2": np.add, "Sub": np.subtract,
                      "Mul": np.multiply, "Maximum": np.maximum, "Minimum": np.minimum,
                      "FloorDiv": np.floor_divide, "FloorMod": np.mod, "Neg": np.negative,
                      "Cast": lambda v: np.asarray(v).real, "Less": np.less,
                      "LessEqual": np.less_equal, "Greater": np.greater,
                      "GreaterEqual": np.greater_equal}.items():
    register_constant_evaluator(_op_type)(_elementwise_evaluator(_fn))


# -- Tensor operators ---------------------------------------------------------------------
_PLAIN = (int, float, complex, str, bytes, list, tuple, np.ndarray, np.generic)


def _is_resource_variable(value) -> bool:
    handle = getattr(value, "handle", None)
    return isinstance(handle, Tensor) and handle.dtype.base_dtype == _dtypes.resource \
        and hasattr(value, "initializer")


def _binary_operator(fn, op_name: str, reflected: bool = False):
    """``Tensor.__<op>__`` calling ``fn(x, y, name=op_name)``. An operand that is neither a
    tensor nor a plain value but implements the mirrored operator gets to handle it.

    ``^`` builds several ops (`logical_xor`), so it opens an ``xor`` scope for them, as
    TensorFlow's operators do (single-op operators get the same names from `op_scope`)."""
    mirrored = f"__{op_name}__" if reflected else f"__r{op_name}__"
    scoped = op_name == "xor"

    def method(self, other):
        # A resource variable is read inside the op's scope (``mul/ReadVariableOp``), as
        # TensorFlow does; other operands with the mirrored operator handle it themselves.
        if not isinstance(other, (Tensor, *_PLAIN)) and hasattr(type(other), mirrored) \
                and not _is_resource_variable(other):
            return NotImplemented
        x, y = (other, self) if reflected else (self, other)
        if scoped:
            with name_scope(None, op_name, [x, y]) as scope:
                return fn(x, y, name=scope)
        return fn(x, y, name=op_name)

    method.__name__ = f"__{'r' if reflected else ''}{op_name}__"
    return method


def _negative_indexed_slices(x: IndexedSlices) -> IndexedSlices:
    return IndexedSlices(negative(x.values), x.indices, x.dense_shape)


def _install_operators() -> None:
    table = [("add", add), ("sub", subtract), ("mul", multiply), ("truediv", truediv),
             ("floordiv", floordiv), ("mod", floormod), ("pow", pow), ("matmul", matmul),
             ("and", logical_and), ("or", logical_or), ("xor", logical_xor)]
    for op_name, fn in table:
        install_tensor_operator(f"__{op_name}__", _binary_operator(fn, op_name))
        install_tensor_operator(f"__r{op_name}__", _binary_operator(fn, op_name, True))
    for dunder, fn in (("__lt__", less), ("__le__", less_equal), ("__gt__", greater),
                       ("__ge__", greater_equal)):
        install_tensor_operator(dunder, lambda x, y, fn=fn: fn(x, y))
    install_tensor_operator("__neg__", lambda x: negative(x))
    install_tensor_operator("__abs__", lambda x: abs(x))
    install_tensor_operator("__invert__", lambda x: logical_not(x))
    IndexedSlices.__neg__ = _negative_indexed_slices


_install_operators()
