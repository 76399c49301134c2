"""Generated op cases for the differential sweep (``op_sweep.py``).

``all_cases()`` returns ``[(case_id, fn)]``; ``fn(tf)`` builds the case's outputs with the
module it is given (TensorFlow's ``compat.v1`` or flowgraph) and returns them, or a dict
``{"out": outputs, "xs": inputs to differentiate}``. Ids are ``family/function/variant``.
The elementwise families run over a matrix of dtypes; the rest are hand-picked shapes,
axes and edge values (empty tensors, negative axes, NaN/inf, integer overflow).
"""

from __future__ import annotations

import numpy as np

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool", *INTS, *FLOATS, *COMPLEX, "string"]
NUMERIC = [*INTS, *FLOATS, *COMPLEX]


def sample(dtype, which=0):
    """A small 2x3 array of ``dtype`` with negative, zero and fractional entries."""
    if dtype == "bool":
        return np.array([[True, False, True], [False, False, True]])
    if dtype == "string":
        return np.array([[b"a", b"bc", b""], [b"d", b"e", b"7"]], dtype=object)
    base = [[-1.5, 0.0, 2.25], [0.5, -0.75, 3.0]] if which == 0 else \
        [[2.0, -0.5, 1.5], [0.25, 4.0, -2.0]]
    a = np.array(base)
    if dtype.startswith("uint"):
        return np.abs(np.round(a * 2)).astype(dtype)
    if dtype.startswith("int"):
        return np.round(a * 2).astype(dtype)
    if dtype.startswith("complex"):
        return (a + 1j * a[::-1]).astype(dtype)
    return a.astype(dtype)


def _const(tf, dtype, which=0, value=None):
    v = sample(dtype, which) if value is None else np.array(value)
    if dtype == "string":
        return tf.constant(v, dtype=tf.string)
    return tf.constant(v, dtype=getattr(tf, dtype))


def _diff(tf, dtype, t):
    return [t] if dtype in FLOATS else []


# --- elementwise unary over every dtype ---------------------------------------------------

UNARY = {
    "abs": lambda tf: tf.abs, "negative": lambda tf: tf.negative, "sign": lambda tf: tf.sign,
    "square": lambda tf: tf.square, "sqrt": lambda tf: tf.sqrt, "rsqrt": lambda tf: tf.rsqrt,
    "exp": lambda tf: tf.exp, "expm1": lambda tf: tf.math.expm1, "log": lambda tf: tf.log,
    "log1p": lambda tf: tf.log1p, "sin": lambda tf: tf.sin, "cos": lambda tf: tf.cos,
    "tan": lambda tf: tf.tan, "asin": lambda tf: tf.asin, "acos": lambda tf: tf.acos,
    "atan": lambda tf: tf.atan, "sinh": lambda tf: tf.sinh, "cosh": lambda tf: tf.cosh,
    "tanh": lambda tf: tf.tanh, "asinh": lambda tf: tf.asinh, "acosh": lambda tf: tf.acosh,
    "atanh": lambda tf: tf.atanh, "sigmoid": lambda tf: tf.sigmoid,
    "log_sigmoid": lambda tf: tf.log_sigmoid, "softplus": lambda tf: tf.nn.softplus,
    "softsign": lambda tf: tf.nn.softsign, "relu": lambda tf: tf.nn.relu,
    "relu6": lambda tf: tf.nn.relu6, "elu": lambda tf: tf.nn.elu, "selu": lambda tf: tf.nn.selu,
    "leaky_relu": lambda tf: tf.nn.leaky_relu, "floor": lambda tf: tf.floor,
    "ceil": lambda tf: tf.ceil, "round": lambda tf: tf.round, "rint": lambda tf: tf.rint,
    "reciprocal": lambda tf: tf.reciprocal, "erf": lambda tf: tf.erf,
    "erfc": lambda tf: tf.erfc, "erfinv": lambda tf: tf.math.erfinv,
    "ndtri": lambda tf: tf.math.ndtri, "lgamma": lambda tf: tf.lgamma,
    "digamma": lambda tf: tf.digamma, "is_nan": lambda tf: tf.is_nan,
    "is_inf": lambda tf: tf.is_inf, "is_finite": lambda tf: tf.is_finite,
    "logical_not": lambda tf: tf.logical_not, "invert": lambda tf: tf.bitwise.invert,
    "real": lambda tf: tf.real, "imag": lambda tf: tf.imag, "conj": lambda tf: tf.conj,
    "angle": lambda tf: tf.angle, "zeros_like": lambda tf: tf.zeros_like,
    "ones_like": lambda tf: tf.ones_like, "identity": lambda tf: tf.identity,
    "bessel_i0e": lambda tf: tf.math.bessel_i0e, "bessel_i1e": lambda tf: tf.math.bessel_i1e,
    "bessel_i0": lambda tf: tf.math.bessel_i0, "bessel_i1": lambda tf: tf.math.bessel_i1,
    "l2_loss": lambda tf: tf.nn.l2_loss, "cumsum": lambda tf: tf.cumsum,
    "reduce_sum": lambda tf: tf.reduce_sum, "reduce_mean": lambda tf: tf.reduce_mean,
    "reduce_max": lambda tf: tf.reduce_max, "reduce_prod": lambda tf: tf.reduce_prod,
    "reduce_all": lambda tf: tf.reduce_all, "reduce_any": lambda tf: tf.reduce_any,
    "reduce_logsumexp": lambda tf: tf.reduce_logsumexp, "argmax": lambda tf: tf.argmax,
    "softmax": lambda tf: tf.nn.softmax, "log_softmax": lambda tf: tf.nn.log_softmax,
    "sort": lambda tf: tf.sort, "reverse_v2": lambda tf: (lambda x: tf.reverse(x, [-1])),
    "transpose": lambda tf: tf.transpose, "size": lambda tf: tf.size,
    "unique": lambda tf: (lambda x: tf.unique(tf.reshape(x, [-1]))),
}


def _unary_case(name, dtype):
    def fn(tf):
        x = _const(tf, dtype)
        return {"out": UNARY[name](tf)(x), "xs": _diff(tf, dtype, x)}
    return fn


# --- elementwise binary over every dtype --------------------------------------------------

BINARY = {
    "add": lambda tf: tf.add, "subtract": lambda tf: tf.subtract,
    "multiply": lambda tf: tf.multiply, "divide": lambda tf: tf.divide,
    "truediv": lambda tf: tf.truediv, "div": lambda tf: tf.div,
    "floordiv": lambda tf: tf.floordiv, "floormod": lambda tf: tf.floormod,
    "truncatediv": lambda tf: tf.truncatediv, "truncatemod": lambda tf: tf.truncatemod,
    "pow": lambda tf: tf.pow, "maximum": lambda tf: tf.maximum,
    "minimum": lambda tf: tf.minimum, "squared_difference": lambda tf: tf.squared_difference,
    "equal": lambda tf: tf.equal, "not_equal": lambda tf: tf.not_equal,
    "less": lambda tf: tf.less, "greater_equal": lambda tf: tf.greater_equal,
    "logical_and": lambda tf: tf.logical_and, "logical_xor": lambda tf: tf.logical_xor,
    "bitwise_and": lambda tf: tf.bitwise.bitwise_and,
    "bitwise_xor": lambda tf: tf.bitwise.bitwise_xor,
    "left_shift": lambda tf: tf.bitwise.left_shift,
    "right_shift": lambda tf: tf.bitwise.right_shift, "atan2": lambda tf: tf.atan2,
    "xdivy": lambda tf: tf.math.xdivy, "xlogy": lambda tf: tf.math.xlogy,
    "div_no_nan": lambda tf: tf.div_no_nan, "igamma": lambda tf: tf.igamma,
    "igammac": lambda tf: tf.igammac, "zeta": lambda tf: tf.zeta,
    "polygamma": lambda tf: tf.polygamma, "complex": lambda tf: tf.complex,
    "mod": lambda tf: tf.mod, "realdiv": lambda tf: tf.realdiv,
    "nextafter": lambda tf: tf.math.nextafter,
}


def _binary_case(name, dtype):
    def fn(tf):
        a = _const(tf, dtype, 0)
        b = _const(tf, dtype, 1)
        return {"out": BINARY[name](tf)(a, b), "xs": _diff(tf, dtype, a) + _diff(tf, dtype, b)}
    return fn


def _binary_bcast(name, dtype):
    def fn(tf):
        a = _const(tf, dtype, 0)
        b = tf.constant(sample(dtype, 1)[:1, :1].reshape(1), dtype=getattr(tf, dtype))
        return {"out": BINARY[name](tf)(b, a), "xs": _diff(tf, dtype, a) + _diff(tf, dtype, b)}
    return fn


# --- special values -----------------------------------------------------------------------

SPECIAL_F = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30, 1.0]
INT_EDGE = {"int8": [127, -128, -1, 0, 5], "int16": [32767, -32768, -1, 0, 5],
            "int32": [2**31 - 1, -(2**31), -1, 0, 5], "int64": [2**63 - 1, -(2**63), -1, 0, 5],
            "uint8": [255, 0, 1, 128, 5], "uint16": [65535, 0, 1, 32768, 5]}


def _special(tf, dtype):
    if dtype in INT_EDGE:
        return tf.constant(np.array(INT_EDGE[dtype], dtype=dtype))
    return tf.constant(np.array(SPECIAL_F, dtype=dtype))


def _special_cases():
    cases = []
    ops = {
        "add_self": lambda tf, x: x + x, "mul_self": lambda tf, x: x * x,
        "neg": lambda tf, x: -x, "abs": lambda tf, x: tf.abs(x),
        "sub_one": lambda tf, x: x - tf.ones_like(x),
        "square": lambda tf, x: tf.square(x), "sign": lambda tf, x: tf.sign(x),
        "eq_self": lambda tf, x: tf.equal(x, x), "ne_self": lambda tf, x: tf.not_equal(x, x),
        "less_self": lambda tf, x: tf.less(x, x), "max0": lambda tf, x: tf.maximum(x, 0 * x),
        "min0": lambda tf, x: tf.minimum(x, 0 * x), "reduce_max": lambda tf, x: tf.reduce_max(x),
        "reduce_min": lambda tf, x: tf.reduce_min(x), "argmax": lambda tf, x: tf.argmax(x),
        "argmin": lambda tf, x: tf.argmin(x), "cumsum": lambda tf, x: tf.cumsum(x),
        "reduce_sum": lambda tf, x: tf.reduce_sum(x), "sort": lambda tf, x: tf.sort(x),
        "top_k": lambda tf, x: tf.nn.top_k(x, 3), "relu": lambda tf, x: tf.nn.relu(x),
        "floordiv_3": lambda tf, x: x // tf.constant(3, x.dtype),
        "floormod_3": lambda tf, x: tf.floormod(x, tf.constant(3, x.dtype)),
        "floormod_neg3": lambda tf, x: tf.floormod(x, tf.constant(-3 if x.dtype.is_floating or
                                                                   x.dtype.min < 0 else 3,
                                                                   x.dtype)),
        "shift_1": lambda tf, x: tf.bitwise.left_shift(x, tf.ones_like(x)),
        "shift_9": lambda tf, x: tf.bitwise.right_shift(x, tf.constant(9, x.dtype) *
                                                        tf.ones_like(x)),
        "sigmoid": lambda tf, x: tf.sigmoid(x), "exp": lambda tf, x: tf.exp(x),
        "log": lambda tf, x: tf.log(x), "sqrt": lambda tf, x: tf.sqrt(x),
        "softplus": lambda tf, x: tf.nn.softplus(x), "tanh": lambda tf, x: tf.tanh(x),
        "round": lambda tf, x: tf.round(x), "reciprocal": lambda tf, x: tf.reciprocal(x),
        "is_nan": lambda tf, x: tf.is_nan(x), "clip": lambda tf, x: tf.clip_by_value(x, -2, 2),
        "softmax": lambda tf, x: tf.nn.softmax(x), "div_self": lambda tf, x: x / x,
        "div_no_nan0": lambda tf, x: tf.div_no_nan(x, 0 * x),
        "floordiv0": lambda tf, x: tf.floordiv(x, 0 * x),
        "truncatediv0": lambda tf, x: tf.truncatediv(x, 0 * x),
        "floormod0": lambda tf, x: tf.floormod(x, 0 * x),
        "truncatemod0": lambda tf, x: tf.truncatemod(x, 0 * x),
        "pow2": lambda tf, x: tf.pow(x, tf.constant(2, x.dtype)),
        "pow_neg1": lambda tf, x: tf.pow(x, tf.constant(-1, x.dtype) if x.dtype.min < 0
                                         else tf.constant(1, x.dtype)),
        "unique": lambda tf, x: tf.unique(x), "unsorted_max": lambda tf, x:
            tf.unsorted_segment_max(x, [0, 1, 0, 1, 2], 4),
    }
    for name, op in ops.items():
        for dtype in [*INTS, "float16", "float32", "float64"]:
            cases.append((f"special/{name}/{dtype}", _special_case(op, dtype)))
    return cases


def _special_case(op, dtype):
    return lambda tf: op(tf, _special(tf, dtype))


# --- casts ----------------------------------------------------------------------------------

CAST_SRC = {"float": [300.7, -1.5, -0.5, 0.5, 1.5, 2.5, -129.0, 70000.0],
            "int": [300, -1, 127, -129, 65536, 2**31 - 1, -(2**31), 0]}


def _cast_cases():
    cases = []
    for src in ["bool", *INTS, *FLOATS, *COMPLEX]:
        for dst in ["bool", *INTS, *FLOATS, *COMPLEX, "string"]:
            def fn(tf, src=src, dst=dst):
                if src == "bool":
                    v = np.array([True, False, True])
                elif src in FLOATS or src in COMPLEX:
                    v = np.array(CAST_SRC["float"][:6] if src == "float16" else CAST_SRC["float"],
                                 dtype=src)
                else:
                    v = np.array(CAST_SRC["int"], dtype=np.int64).astype(src)
                x = tf.constant(v, dtype=getattr(tf, src))
                y = tf.cast(x, getattr(tf, dst))
                return {"out": y, "xs": [x] if src in FLOATS and dst in FLOATS else []}
            cases.append((f"cast/{src}/{dst}", fn))
    for dst in ["int32", "uint8", "float32"]:
        cases.append((f"cast/saturate/float32/{dst}", lambda tf, dst=dst: tf.saturate_cast(
            tf.constant([300.7, -5.0, 1e10, -1e10, 3.5]), getattr(tf, dst))))
    cases.append(("cast/to_int32", lambda tf: tf.to_int32(tf.constant([1.7, -1.7]))))
    cases.append(("cast/to_float", lambda tf: tf.to_float(tf.constant([3, -4]))))
    cases.append(("cast/string_error", lambda tf: tf.cast(tf.constant(["1"]), tf.int32)))
    cases.append(("cast/image_u8_f", lambda tf: tf.image.convert_image_dtype(
        tf.constant([[0, 128, 255]], tf.uint8), tf.float32)))
    cases.append(("cast/image_f_u8", lambda tf: tf.image.convert_image_dtype(
        tf.constant([[-0.5, 0.5, 1.0, 1.5]]), tf.uint8, saturate=True)))
    cases.append(("cast/image_f_u8_nosat", lambda tf: tf.image.convert_image_dtype(
        tf.constant([[0.0, 0.5, 1.0, 0.999]]), tf.uint8)))
    cases.append(("cast/image_u8_u16", lambda tf: tf.image.convert_image_dtype(
        tf.constant([[0, 1, 255]], tf.uint8), tf.uint16)))
    cases.append(("cast/image_i32_u8", lambda tf: tf.image.convert_image_dtype(
        tf.constant([[0, 2**24, 2**31 - 1]], tf.int32), tf.uint8)))
    return cases


def all_cases():
    from op_sweep_cases_more import more_cases

    cases = []
    for name in UNARY:
        for dtype in ALL:
            cases.append((f"unary/{name}/{dtype}", _unary_case(name, dtype)))
    for name in BINARY:
        for dtype in ALL:
            cases.append((f"binary/{name}/{dtype}", _binary_case(name, dtype)))
        for dtype in ["int32", "float32"]:
            cases.append((f"bcast/{name}/{dtype}", _binary_bcast(name, dtype)))
    cases += _special_cases()
    cases += _cast_cases()
    cases += more_cases()
    return cases
