"""CPU kernels for the inverse trigonometric/hyperbolic and special functions
(`flowgraph/ops/math_special.py`): NumPy and `scipy.special`, imported on first use.

Every kernel returns an array of its first input's dtype.
"""

from __future__ import annotations

import functools

import numpy as np

from flowgraph.backends.cpu import cpu_kernel


@functools.cache
def _sp():
    import scipy.special

    return scipy.special


def _typed(fn):
    def kernel(*args):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args), dtype=args[0].dtype)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _lazy(name):
    def fn(*args):
        return getattr(_sp(), name)(*args)

    fn.__name__ = name
    return fn


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, np.zeros_like(x * y), x * np.log(y))


def _xlog1py(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, np.zeros_like(x * y), x * np.log1p(y))


def _xdivy(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, np.zeros_like(x * y), x / y)


def _digamma(x):
    # TensorFlow (Eigen) answers NaN at every pole, zero included; scipy says -inf at 0
    out = _sp().digamma(x)
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


def _zeta(x, q):
    # Eigen's rules for the Hurwitz zeta where scipy disagrees: at a pole q = 0, -1, ...
    # it is inf for an even integer x and NaN otherwise; a negative non-integer q needs an
    # integer x (NaN otherwise)
    out = np.asarray(_sp().zeta(x, q), dtype=np.result_type(x, q))
    int_x = x == np.floor(x)
    q_pole = (q <= 0) & (q == np.floor(q))
    even = int_x & (np.fmod(x, 2) == 0)
    out = np.where(q_pole, np.where(even, np.inf, np.nan), out)
    out = np.where((q < 0) & ~q_pole & ~int_x, np.nan, out)
    return np.where(x == 1, np.inf, np.where(x < 1, np.nan, out))


def _polygamma(n, x):
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x), with psi^(0) = digamma; NaN for a
    # negative or fractional order
    sign = np.where(np.fmod(n, 2) == 0, -1.0, 1.0)
    out = sign * np.exp(_sp().gammaln(n + 1)) * _zeta(n + 1, x)
    out = np.where(n == 0, _digamma(x), out)
    return np.where((n < 0) | (n != np.floor(n)), np.nan, out)


for _op, _fn in {
    "Acos": np.arccos, "Asin": np.arcsin, "Atan": np.arctan, "Acosh": np.arccosh,
    "Asinh": np.arcsinh, "Atanh": np.arctanh, "Cosh": np.cosh, "Sinh": np.sinh,
    "Atan2": np.arctan2, "NextAfter": np.nextafter,
    "Lgamma": _lazy("gammaln"), "Digamma": _digamma, "Erfc": _lazy("erfc"),
    "BesselI0e": _lazy("i0e"), "BesselI1e": _lazy("i1e"), "Zeta": _zeta,
    "Polygamma": _polygamma, "Betainc": _lazy("betainc"),
    "Xlogy": _xlogy, "Xlog1py": _xlog1py, "Xdivy": _xdivy,
}.items():
    cpu_kernel(_op, fresh=True)(_typed(_fn))

# float16 is in these ops' dtypes but TensorFlow's CPU kernels skip it ("no kernel" at run)
for _op, _fn in {"Rint": np.rint, "Erfinv": _lazy("erfinv"), "Ndtri": _lazy("ndtri"),
                 "Igamma": _lazy("gammainc"), "Igammac": _lazy("gammaincc")}.items():
    cpu_kernel(_op, fresh=True, dtypes=(np.float32, np.float64))(_typed(_fn))
