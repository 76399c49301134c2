"""Inverse trigonometric and hyperbolic functions, special functions (gamma family,
incomplete gamma and beta, zeta, inverse error functions, Bessel), `rint` and the
``x * log(y)``-style binary ops, each with TensorFlow 1.x's op type and gradient.

The ops are declared in tables like `math_ops`; their CPU kernels (NumPy and
`scipy.special`) live in ``backends/cpu/kernels_special.py``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.lgamma([1.0, 3.0])))
[0.        0.6931472]
"""

from __future__ import annotations

import functools
import inspect
import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import broadcast_shape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.math_grad import broadcast_gradient_args, unbroadcast
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import binary_inputs, make_tensor, op_scope

__all__ = [
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bessel_i0e", "bessel_i1e",
    "betainc", "cosh", "digamma", "erfc", "erfinv", "igamma", "igammac", "lgamma", "ndtri",
    "nextafter", "polygamma", "rint", "sinh", "xdivy", "xlog1py", "xlogy", "zeta",
]

_F = (_dtypes.float16, _dtypes.float32, _dtypes.float64)
_FD = (_dtypes.float32, _dtypes.float64)
_FC = (*_F, _dtypes.complex64, _dtypes.complex128)


def _unary(op_type, fn_name, allowed, summary, call, result):
    fn = _m._unary(op_type, fn_name, allowed, summary, call, result)
    fn.__module__ = __name__  # so that doctest and the API docs find it here
    return fn


def _scoped(fn):
    """`fn` built inside a ``<fn name>/`` scope, as TensorFlow's Python wrappers of these
    ops are: ``bessel_i0e/BesselI0e``, and ``<name>/BesselI0e`` for a given name."""
    @functools.wraps(fn)
    def wrapped(*args, name=None, **kwargs):
        with name_scope(name, fn.__name__, [*args, *kwargs.values()]):
            return fn(*args, **kwargs)

    return wrapped


def _nary_shape(op, *shapes):
    out = shapes[0]
    try:
        for s in shapes[1:]:
            out = broadcast_shape(out, s)
    except ValueError:
        raise op.shape_error(f"shapes {', '.join(str(s) for s in shapes)} cannot be "
                             "broadcast together") from None
    return [out]


def _nary(op_type, fn_name, params, allowed, summary, call, result):
    register_op(op_type)(_nary_shape)

    def fn(*args, name=None):
        if len(args) != len(params):
            raise TypeError(f"{fn_name}() takes {len(params)} tensor arguments "
                            f"({', '.join(params)}), got {len(args)}")
        with op_scope(name, op_type, args) as scope:  # `<op>/<param>` for Python values
            if len(args) == 2:
                ts = list(binary_inputs(args[0], args[1], op_type, name, tuple(params)))
            else:  # every argument takes the dtype of the first tensor among them
                like = next((a for a in args if isinstance(a, Tensor)), None)
                dtype = (like if like is not None else convert_to_tensor(args[0])).dtype
                ts = []
                for p, a in zip(params, args):
                    if isinstance(a, Tensor) and a.dtype.base_dtype != dtype.base_dtype:
                        raise TypeError(f"Input '{p}' of '{op_type}' Op has type "
                                        f"{a.dtype.base_dtype.name} that does not match type "
                                        f"{dtype.base_dtype.name} of the other inputs; cast "
                                        "it with tf.cast first")
                    ts.append(convert_to_tensor(a, dtype=dtype.base_dtype, name=p))
            _m.check_dtype(ts[0], allowed, op_type, params[0])
            return make_tensor(op_type, ts, name=scope)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = _m._doc(summary, call, result)
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
        + [inspect.Parameter("name", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)])
    return fn


# -- unary --------------------------------------------------------------------------------
acos = _unary("Acos", "acos", _FC, "Elementwise arc cosine.", "acos([1.0])", "[0.]")
asin = _unary("Asin", "asin", _FC, "Elementwise arc sine.", "asin([0.0])", "[0.]")
atan = _unary("Atan", "atan", _FC, "Elementwise arc tangent.", "atan([0.0])", "[0.]")
acosh = _unary("Acosh", "acosh", _FC, "Elementwise inverse hyperbolic cosine.",
               "acosh([1.0])", "[0.]")
asinh = _unary("Asinh", "asinh", _FC, "Elementwise inverse hyperbolic sine.",
               "asinh([0.0])", "[0.]")
atanh = _unary("Atanh", "atanh", _FC, "Elementwise inverse hyperbolic tangent.",
               "atanh([0.0])", "[0.]")
cosh = _unary("Cosh", "cosh", _FC, "Elementwise hyperbolic cosine.", "cosh([0.0])", "[1.]")
sinh = _unary("Sinh", "sinh", _FC, "Elementwise hyperbolic sine.", "sinh([0.0])", "[0.]")
lgamma = _unary("Lgamma", "lgamma", _F, "Elementwise ``log|Gamma(x)|``.", "lgamma([1.0])",
                "[0.]")
digamma = _unary("Digamma", "digamma", _F, "Elementwise digamma, the derivative of lgamma.",
                 "digamma([1.0])", "[-0.5772157]")
erfc = _unary("Erfc", "erfc", _F, "Elementwise complementary error function ``1 - erf(x)``.",
              "erfc([0.0])", "[1.]")
erfinv = _unary("Erfinv", "erfinv", _F, "Elementwise inverse of `erf`.", "math.erfinv([0.0])",
                "[0.]")
ndtri = _unary("Ndtri", "ndtri", _F, "Elementwise inverse of the standard normal CDF.",
               "math.ndtri([0.5])", "[0.]")
rint = _unary("Rint", "rint", _F, "Elementwise round to the nearest integer, halves to even.",
              "rint([0.5, 1.5, -1.7])", "[ 0.  2. -2.]")
bessel_i0e = _unary("BesselI0e", "bessel_i0e", _F, "Elementwise ``exp(-|x|) * I0(x)``.",
                    "math.bessel_i0e([0.0])", "[1.]")
bessel_i1e = _unary("BesselI1e", "bessel_i1e", _F, "Elementwise ``exp(-|x|) * I1(x)``.",
                    "math.bessel_i1e([0.0])", "[0.]")

# -- binary and ternary ------------------------------------------------------------------
atan2 = _nary("Atan2", "atan2", ("y", "x"), _F, "Elementwise arc tangent of ``y / x`` in "
              "the quadrant of ``(x, y)``.", "atan2([1.0], [1.0])", "[0.7853981]")
igamma = _nary("Igamma", "igamma", ("a", "x"), _F, "Regularized lower incomplete gamma "
               "function ``P(a, x)``.", "igamma([1.0], [1.0])", "[0.63212055]")
igammac = _nary("Igammac", "igammac", ("a", "x"), _F, "Regularized upper incomplete gamma "
                "function ``Q(a, x) = 1 - P(a, x)``.", "igammac([1.0], [1.0])", "[0.36787945]")
zeta = _nary("Zeta", "zeta", ("x", "q"), _FD, "Hurwitz zeta function "
             "``sum over n >= 0 of (n + q) ** -x``.", "zeta([2.0], [1.0])", "[1.644934]")
polygamma = _nary("Polygamma", "polygamma", ("a", "x"), _FD, "Polygamma function: the "
                  "a-th derivative of digamma at x (a a non-negative integer value).",
                  "polygamma([1.0], [1.0])", "[1.644934]")
xlogy = _nary("Xlogy", "xlogy", ("x", "y"), _FC, "``x * log(y)``, 0 where ``x == 0``.",
              "math.xlogy([0.0, 2.0], [0.0, 1.0])", "[0. 0.]")
xdivy = _nary("Xdivy", "xdivy", ("x", "y"), _FC, "``x / y``, 0 where ``x == 0``.",
              "math.xdivy([0.0, 2.0], [0.0, 4.0])", "[0.  0.5]")
xlog1py = _nary("Xlog1py", "xlog1py", ("x", "y"), _FC, "``x * log1p(y)``, 0 where "
                "``x == 0``.", "math.xlog1py([0.0, 1.0], [-1.0, 0.0])", "[0. 0.]")
# TensorFlow's Python wrappers build these ops inside a scope named after the function
erfinv, ndtri, bessel_i0e, bessel_i1e, xdivy, xlog1py = map(
    _scoped, (erfinv, ndtri, bessel_i0e, bessel_i1e, xdivy, xlog1py))
nextafter = _nary("NextAfter", "nextafter", ("x1", "x2"), _FD, "The next representable "
                  "value after `x1` in the direction of `x2`.",
                  "math.nextafter([1.0], [2.0])", "[1.0000001]")
betainc = _nary("Betainc", "betainc", ("a", "b", "x"), _FD, "Regularized incomplete beta "
                "function ``I_x(a, b)``.", "betainc([1.0], [1.0], [0.25])", "[0.25]")


# -- gradients -----------------------------------------------------------------------
def _k(value, like):
    return constant(value, dtype=like.dtype.base_dtype)


def _c(t):
    return _m.conj(t) if t.dtype.is_complex else t


def _grad(op_type):
    def decorate(fn):
        register_gradient(op_type)(lambda op, grad: [grad * _c(fn(op.inputs[0], op))])
        return fn

    return decorate


@_grad("Acos")
def _acos(x, op):
    return _m.negative(_m.rsqrt(_k(1, x) - x * x))


@_grad("Asin")
def _asin(x, op):
    return _m.rsqrt(_k(1, x) - x * x)


@_grad("Atan")
def _atan(x, op):
    return _m.reciprocal(_k(1, x) + x * x)


@_grad("Acosh")
def _acosh(x, op):
    return _m.reciprocal(sinh(op.outputs[0]))


@_grad("Asinh")
def _asinh(x, op):
    return _m.reciprocal(cosh(op.outputs[0]))


@_grad("Atanh")
def _atanh(x, op):
    return _m.reciprocal(_k(1, x) - x * x)


@_grad("Cosh")
def _cosh(x, op):
    return sinh(x)


@_grad("Sinh")
def _sinh(x, op):
    return cosh(x)


@_grad("Lgamma")
def _lgamma(x, op):
    return digamma(x)


@_grad("Digamma")
def _digamma(x, op):
    return polygamma(_a.ones_like(x), x)


@_grad("Erfc")
def _erfc(x, op):
    return _k(-2 / math.sqrt(math.pi), x) * _m.exp(_m.negative(x * x))


@_grad("Erfinv")
def _erfinv(x, op):
    y = op.outputs[0]
    return _k(math.sqrt(math.pi) / 2, x) * _m.exp(y * y)


@_grad("Ndtri")
def _ndtri(x, op):
    y = op.outputs[0]
    return _k(math.sqrt(2 * math.pi), x) * _m.exp(y * y * _k(0.5, x))


@_grad("BesselI0e")
def _i0e(x, op):
    return bessel_i1e(x) - _m.sign(x) * op.outputs[0]


@_grad("BesselI1e")
def _i1e(x, op):
    # d/dx [e^-|x| I1(x)] = i0e(x) - i1e(x) * (sign(x) + 1/x); at 0 the limit is 1/2.
    y = op.outputs[0]
    zero = _m.equal(x, _a.zeros_like(x))
    safe = _a.where(zero, _a.ones_like(x), x)
    value = bessel_i0e(x) - y * (_m.sign(x) + _m.reciprocal(safe))
    return _a.where(zero, _a.fill(_a.shape(x), _k(0.5, x)), value)


not_differentiable("Rint")


@register_gradient("NextAfter")
def _nextafter_grad(op, grad):
    x1, x2 = op.inputs  # TensorFlow's rule: slope 1 with respect to x1, 0 with respect to x2
    return list(unbroadcast(op, grad * _a.ones_like(x1), grad * _a.zeros_like(x2)))


@register_gradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    inv = _m.reciprocal(x * x + y * y)
    return list(unbroadcast(op, grad * x * inv, _m.negative(grad) * y * inv))


def _igamma_dx(a, x):
    """d P(a, x) / dx = exp(-x + (a - 1) log x - lgamma(a))."""
    return _m.exp(_m.negative(x) + (a - _k(1, a)) * _m.log(x) - lgamma(a))


def _igamma_da(a, x):
    """d P(a, x) / da: op ``IgammaGradA`` (flowgraph/ops/math_raw.py), as TensorFlow 2.x."""
    return make_tensor("IgammaGradA", [a, x])


@register_gradient("Igamma")
def _igamma_grad(op, grad):
    a, x = op.inputs
    return list(unbroadcast(op, grad * _igamma_da(a, x), grad * _igamma_dx(a, x)))


@register_gradient("Igammac")
def _igammac_grad(op, grad):
    a, x = op.inputs
    return list(unbroadcast(op, _m.negative(grad) * _igamma_da(a, x),
                            _m.negative(grad) * _igamma_dx(a, x)))


@register_gradient("Zeta")
def _zeta_grad(op, grad):
    x, q = op.inputs  # TensorFlow has no gradient with respect to x either
    dq = _m.negative(x) * zeta(x + _k(1, x), q)
    return [None, unbroadcast(op, None, grad * dq)[1]]


@register_gradient("Polygamma")
def _polygamma_grad(op, grad):
    a, x = op.inputs
    return [None, unbroadcast(op, None, grad * polygamma(a + _k(1, a), x))[1]]


@register_gradient("Betainc")
def _betainc_grad(op, grad):
    a, b, x = op.inputs  # the gradient flows to x only, as in TensorFlow
    one = _k(1, x)
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    dx = _m.exp((b - one) * _m.log1p(_m.negative(x)) + (a - one) * _m.log(x) - log_beta)
    gx = grad * dx
    _, rx = broadcast_gradient_args(_a.shape(gx), _a.shape(x))
    return [None, None, _a.reshape(reduce_sum(gx, rx), _a.shape(x))]


def _where_x_zero(x, y, value):
    """`value` broadcast to the shape of ``x * y``, 0 where ``x == 0``."""
    zeros = _a.zeros_like(x) + _a.zeros_like(y)
    return _a.where(_m.equal(x + zeros, zeros), zeros, value + zeros)


@register_gradient("Xlogy")
def _xlogy_grad(op, grad):
    x, y = op.inputs
    gx = _where_x_zero(x, y, _m.log(y))
    gy = _where_x_zero(x, y, x / y)
    return list(unbroadcast(op, grad * _c(gx), grad * _c(gy)))


@register_gradient("Xlog1py")
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    gx = _where_x_zero(x, y, _m.log1p(y))
    gy = _where_x_zero(x, y, x / (y + _k(1, y)))
    return list(unbroadcast(op, grad * _c(gx), grad * _c(gy)))


@register_gradient("Xdivy")
def _xdivy_grad(op, grad):
    x, y = op.inputs
    gx = _where_x_zero(x, y, _m.reciprocal(y))
    gy = _where_x_zero(x, y, _m.negative(x) / (y * y))
    return list(unbroadcast(op, grad * _c(gx), grad * _c(gy)))


# -- tf.math.special: Bessel functions, Dawson, exponential integral, Fresnel, Spence --
def _special(op_type, fn_name, summary, call, result):
    return _scoped(_unary(op_type, fn_name, _F, summary, call, f"{result}"))


bessel_i0 = _special("BesselI0", "bessel_i0", "Modified Bessel function of the first kind "
                     "of order 0, ``I0(x)``.", "math.special.bessel_i0([0.0])", "[1.]")
bessel_i1 = _special("BesselI1", "bessel_i1", "Modified Bessel function of the first kind "
                     "of order 1, ``I1(x)``.", "math.special.bessel_i1([0.0])", "[0.]")
bessel_j0 = _special("BesselJ0", "bessel_j0", "Bessel function of the first kind of "
                     "order 0.", "math.special.bessel_j0([0.0])", "[1.]")
bessel_j1 = _special("BesselJ1", "bessel_j1", "Bessel function of the first kind of "
                     "order 1.", "math.special.bessel_j1([0.0])", "[0.]")
bessel_k0 = _special("BesselK0", "bessel_k0", "Modified Bessel function of the second kind "
                     "of order 0 (``inf`` for ``x <= 0``).", "math.special.bessel_k0([1.0])",
                     "[0.42102444]")
bessel_k0e = _special("BesselK0e", "bessel_k0e", "``exp(x) * K0(x)``.",
                      "math.special.bessel_k0e([1.0])", "[1.1444631]")
bessel_k1 = _special("BesselK1", "bessel_k1", "Modified Bessel function of the second kind "
                     "of order 1.", "math.special.bessel_k1([1.0])", "[0.60190725]")
bessel_k1e = _special("BesselK1e", "bessel_k1e", "``exp(x) * K1(x)``.",
                      "math.special.bessel_k1e([1.0])", "[1.6361535]")
bessel_y0 = _special("BesselY0", "bessel_y0", "Bessel function of the second kind of "
                     "order 0 (``-inf`` for ``x <= 0``).", "math.special.bessel_y0([1.0])",
                     "[0.08825696]")
bessel_y1 = _special("BesselY1", "bessel_y1", "Bessel function of the second kind of "
                     "order 1.", "math.special.bessel_y1([1.0])", "[-0.7812128]")
dawsn = _special("Dawsn", "dawsn", "Dawson's integral ``exp(-x^2) * int_0^x exp(t^2) dt``.",
                 "math.special.dawsn([0.0])", "[0.]")
expint = _special("Expint", "expint", "Exponential integral ``Ei(x)`` (``nan`` for "
                  "``x < 0``).", "math.special.expint([1.0])", "[1.8951178]")
fresnel_cos = _special("FresnelCos", "fresnel_cos", "Fresnel cosine integral "
                       "``int_0^x cos(pi t^2 / 2) dt``.", "math.special.fresnel_cos([0.0])",
                       "[0.]")
fresnel_sin = _special("FresnelSin", "fresnel_sin", "Fresnel sine integral "
                       "``int_0^x sin(pi t^2 / 2) dt``.", "math.special.fresnel_sin([0.0])",
                       "[0.]")
spence = _special("Spence", "spence", "Spence's function (dilogarithm) "
                  "``int_1^x log(t) / (1 - t) dt``.", "math.special.spence([1.0])", "[0.]")

# tf.math has only the I0/I1 pair among these; the rest are in tf.math.special
# (`flowgraph/math/special.py`), so they stay out of `import *`.
__all__ += ["bessel_i0", "bessel_i1"]
SPECIAL_NAMES = ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0",
                 "bessel_j1", "bessel_k0", "bessel_k0e", "bessel_k1", "bessel_k1e",
                 "bessel_y0", "bessel_y1", "dawsn", "expint", "fresnel_cos", "fresnel_sin",
                 "spence")


def _over_x(x, y, at_zero):
    """``y / x``, with `at_zero` where ``x == 0`` (the derivatives' finite limits)."""
    zero = _m.equal(x, _a.zeros_like(x))
    safe = _a.where(zero, _a.ones_like(x), x)
    return _a.where(zero, _a.fill(_a.shape(x), _k(at_zero, x)), y / safe)


@_grad("BesselI0")
def _i0(x, op):
    return bessel_i1(x)


@_grad("BesselI1")
def _i1(x, op):
    # TensorFlow takes 1 at x == 0 (the true limit is 1/2); matched for parity.
    return _a.where(_m.equal(x, _a.zeros_like(x)), _a.ones_like(x),
                    bessel_i0(x) - _over_x(x, op.outputs[0], 0.0))


@_grad("BesselJ0")
def _j0(x, op):
    return _m.negative(bessel_j1(x))


@_grad("BesselJ1")
def _j1(x, op):
    return bessel_j0(x) - _over_x(x, op.outputs[0], 0.5)


@_grad("BesselK0")
def _k0(x, op):
    return _m.negative(bessel_k1(x))


@_grad("BesselK0e")
def _k0e(x, op):
    return op.outputs[0] - bessel_k1e(x)


@_grad("BesselK1")
def _k1(x, op):
    return _m.negative(bessel_k0(x)) - op.outputs[0] / x


@_grad("BesselK1e")
def _k1e(x, op):
    y = op.outputs[0]
    return y * (_k(1, x) - _m.reciprocal(x)) - bessel_k0e(x)


@_grad("BesselY0")
def _y0(x, op):
    return _m.negative(bessel_y1(x))


@_grad("BesselY1")
def _y1(x, op):
    return bessel_y0(x) - op.outputs[0] / x


@_grad("Dawsn")
def _dawsn(x, op):
    return _k(1, x) - _k(2, x) * x * op.outputs[0]


@_grad("Expint")
def _expint(x, op):
    return _m.exp(x) / x


@_grad("FresnelCos")
def _fresnel_cos(x, op):
    return _m.cos(_k(math.pi / 2, x) * x * x)


@_grad("FresnelSin")
def _fresnel_sin(x, op):
    return _m.sin(_k(math.pi / 2, x) * x * x)


@_grad("Spence")
def _spence(x, op):
    # log(x) / (1 - x), whose limit at x = 1 is -1.
    one = _m.equal(x, _a.ones_like(x))
    safe = _a.where(one, _a.fill(_a.shape(x), _k(2, x)), x)
    value = _m.log(safe) / (_k(1, x) - safe)
    return _a.where(one, _a.fill(_a.shape(x), _k(-1, x)), value)


# -- tf.math.sobol_sample ----------------------------------------------------------
@register_op("SobolSample", attrs={"dtype": _dtypes.float32},
             dtype_fn=lambda op: [op.attrs["dtype"]])
def _sobol_shape(op, dim, num_results, skip):
    from flowgraph.framework.constant_op import constant_value
    from flowgraph.framework.tensor_shape import TensorShape

    d, n = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    return [TensorShape([None if n is None else int(n), None if d is None else int(d)])]


not_differentiable("SobolSample")


def sobol_sample(dim, num_results, skip=0, dtype=_dtypes.float32, name=None):
    """`num_results` points of the `dim`-dimensional Sobol sequence (Joe and Kuo's
    direction numbers, up to 21201 dimensions), after skipping the all-zero first point
    and `skip` more: a ``[num_results, dim]`` tensor of `dtype` (float32 or float64).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.math.sobol_sample(2, 3)).tolist()
    [[0.5, 0.5], [0.75, 0.25], [0.25, 0.75]]
    """
    from flowgraph.framework.graph import name_scope

    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype not in _FD:
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in "
                        "list of allowed values: float32, float64")
    with name_scope(name, "sobol", [dim, num_results, skip]):
        args = [convert_to_tensor(v, dtype=_dtypes.int32, name=n) for v, n in
                ((dim, "dim"), (num_results, "num_results"), (skip, "skip"))]
        return make_tensor("SobolSample", args, {"dtype": dtype}, name="SobolSample")

