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


for _op, _fn in {
    "Acos": np.arccos, "Asin": np.arcsin, "Atan": np.arctan, "Acosh": np.arccosh,
    "Asinh": np.arcsinh, "Atanh": np.arctanh, "Cosh": np.cosh, "Sinh": np.sinh,
    "Rint": np.rint, "Atan2": np.arctan2, "NextAfter": np.nextafter,
    "Lgamma": _lazy("gammaln"), "Digamma": _lazy("digamma"), "Erfc": _lazy("erfc"),
    "Erfinv": _lazy("erfinv"), "Ndtri": _lazy("ndtri"), "BesselI0e": _lazy("i0e"),
    "BesselI1e": _lazy("i1e"), "Igamma": _lazy("gammainc"), "Igammac": _lazy("gammaincc"),
    "Zeta": _lazy("zeta"), "Polygamma": _lazy("polygamma"), "Betainc": _lazy("betainc"),
    "Xlogy": _xlogy, "Xlog1py": _xlog1py, "Xdivy": _xdivy,
}.items():
    cpu_kernel(_op, fresh=True)(_typed(_fn))
