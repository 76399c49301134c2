"""The standard normal CDF and its logarithm as TF's distributions compute them:
`ndtr` through ``erf`` near zero and ``erfc`` in the tails, `log_ndtr` switching to an
asymptotic series below a dtype's lower segment (-10 for float32, -20 for float64), so
``Normal(0, 1).log_cdf(-40.)`` is about -804.6 rather than ``log(0) = -inf``."""

from __future__ import annotations

import numpy as np

from flowgraph.distributions import _ops as o
from flowgraph.framework import dtypes as _dtypes

__all__ = ["log_ndtr", "ndtr"]

# Where the direct log(ndtr(x)) loses precision (below) or ndtr(x) rounds to 1 (above).
_SEGMENTS = {_dtypes.float32: (-10.0, 5.0), _dtypes.float64: (-20.0, 8.0)}


def _ndtr(x):
    half_sqrt_2 = o.constant(0.5 * np.sqrt(2.0), dtype=x.dtype, name="half_sqrt_2")
    w = x * half_sqrt_2
    z = o.abs(w)
    y = o.where(o.less(z, half_sqrt_2), 1.0 + o.erf(w),
                o.where(o.greater(w, 0.0), 2.0 - o.erfc(z), o.erfc(z)))
    return 0.5 * y


def _float_input(x, name, op_name):
    x = o.convert_to_tensor(x, name="x")
    if x.dtype.base_dtype not in _SEGMENTS:
        raise TypeError(f"{op_name}: x.dtype={x.dtype} is not supported; expected float32 "
                        f"or float64 (op '{name}')")
    return x


def ndtr(x, name: str = "ndtr"):
    """The standard normal CDF, ``0.5 * (1 + erf(x / sqrt(2)))``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.distributions._special_math import ndtr
    >>> with tf.Session() as sess:
    ...     print(sess.run(ndtr(0.0)))
    0.5
    """
    with o.name_scope(name, values=[x]):
        return _ndtr(_float_input(x, name, "ndtr"))


def _double_factorial(n: int) -> int:
    return int(np.prod(np.arange(n, 1, -2))) if n > 1 else 1


def _asymptotic_series(x, order: int):
    # 1 - 1/x^2 + 3/x^4 - 15/x^6 ...: the odd terms subtract, the even ones add
    x_2 = o.square(x)
    even_sum = o.zeros_like(x)
    odd_sum = o.zeros_like(x)
    x_2n = x_2
    for n in range(1, order + 1):
        term = np.array(_double_factorial(2 * n - 1), x.dtype.as_numpy_dtype) / x_2n
        if n % 2:
            odd_sum += term
        else:
            even_sum += term
        x_2n *= x_2
    return 1.0 + even_sum - odd_sum


def _log_ndtr_lower(x, order: int):
    x_2 = o.square(x)
    log_scale = -0.5 * x_2 - o.log(-x) - 0.5 * np.log(2.0 * np.pi)
    return log_scale + o.log(_asymptotic_series(x, order))


def log_ndtr(x, series_order: int = 3, name: str = "log_ndtr"):
    """``log(ndtr(x))``, accurate far into both tails.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.distributions._special_math import log_ndtr
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(log_ndtr(-40.0))), 1))
    -804.6
    """
    if not isinstance(series_order, int) or series_order < 0:
        raise ValueError(f"log_ndtr: series_order must be a non-negative int, got "
                         f"{series_order!r}")
    if series_order > 30:
        raise ValueError(f"log_ndtr: series_order must be <= 30, got {series_order}")
    with o.name_scope(name, values=[x]):
        x = _float_input(x, name, "log_ndtr")
        lower, upper = (np.array(v, x.dtype.as_numpy_dtype)
                        for v in _SEGMENTS[x.dtype.base_dtype])
        return o.where(o.greater(x, upper), -_ndtr(-x),
                       o.where(o.greater(x, lower), o.log(_ndtr(o.maximum(x, lower))),
                               _log_ndtr_lower(o.minimum(x, lower), series_order)))


def log_cdf_laplace(x, name: str = "log_cdf_laplace"):
    """``log`` of the standard Laplace cdf, exact in both tails: ``x - log 2`` below 0,
    ``log1p(-exp(-|x|) / 2)`` above.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.distributions._special_math import log_cdf_laplace
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(log_cdf_laplace(-200.0))), 3))
    -200.693
    """
    with o.name_scope(name, values=[x]):
        x = o.convert_to_tensor(x, name="x")
        lower = -np.log(2.0) + x
        # exp(-|x|) stays at most 1: no log(0) at x = log(1/2), no overflow for x << 0
        upper = o.log1p(-0.5 * o.exp(-o.abs(x)))
        return o.where(x < 0.0, lower, upper)
