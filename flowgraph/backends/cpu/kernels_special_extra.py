"""CPU kernels of ``tf.math.special`` (`flowgraph/ops/math_special.py`: Bessel
functions, ``Dawsn``, ``Expint``, the Fresnel integrals, ``Spence``) from
`scipy.special`, and of ``SobolSample`` from `scipy.stats.qmc.Sobol` (unscrambled; it
shares TensorFlow's Joe-Kuo direction numbers, so the points are TensorFlow's)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

# TensorFlow's values off the functions' real domains, where scipy gives nan:
# (value for x < 0, value for x == 0 or None to keep scipy's).
_OFF_DOMAIN = {"k0": (np.inf, None), "k0e": (np.inf, None), "k1": (np.inf, None),
               "k1e": (np.inf, None), "y0": (-np.inf, None), "y1": (-np.inf, np.nan),
               "expi": (np.nan, None)}


def _scipy(name: str, index: int | None = None):
    def kernel(x):
        import scipy.special

        with np.errstate(all="ignore"):
            wide = x.astype(np.float64) if x.dtype == np.float16 else x
            out = getattr(scipy.special, name)(wide)
            if index is not None:
                out = out[index]
            if name in _OFF_DOMAIN:
                negative, at_zero = _OFF_DOMAIN[name]
                out = np.where(wide < 0, negative, out)
                if at_zero is not None:
                    out = np.where(wide == 0, at_zero, out)
            return np.asarray(out, dtype=x.dtype)

    kernel.__name__ = name
    return kernel


for _op, _args in {
    "BesselI0": ("i0",), "BesselI1": ("i1",), "BesselJ0": ("j0",), "BesselJ1": ("j1",),
    "BesselK0": ("k0",), "BesselK0e": ("k0e",), "BesselK1": ("k1",), "BesselK1e": ("k1e",),
    "BesselY0": ("y0",), "BesselY1": ("y1",), "Dawsn": ("dawsn",), "Expint": ("expi",),
    # scipy's fresnel(x) is (S, C) with the same pi t^2 / 2 convention as TensorFlow.
    "FresnelSin": ("fresnel", 0), "FresnelCos": ("fresnel", 1), "Spence": ("spence",),
}.items():
    cpu_kernel(_op, fresh=True)(_scipy(*_args))

_MAX_DIM = 21201


@cpu_kernel("SobolSample", fresh=True)
def sobol_sample(dim, num_results, skip, *, dtype, op, **_):
    dim, n, skip = int(dim), int(num_results), int(skip)
    if not 1 <= dim <= _MAX_DIM:
        raise errors.InvalidArgumentError(
            None, None, f"SobolSample '{op.name}': dim must be in [1, {_MAX_DIM}], got {dim}")
    if n < 1 or skip < 0:
        raise errors.InvalidArgumentError(
            None, None, f"SobolSample '{op.name}': num_results must be >= 1 and skip >= 0, "
            f"got num_results={n}, skip={skip}")
    import warnings

    from scipy.stats import qmc

    engine = qmc.Sobol(dim, scramble=False)
    with warnings.catch_warnings():  # scipy warns about non-power-of-two sample counts
        warnings.simplefilter("ignore")
        engine.fast_forward(skip + 1)
        points = engine.random(n)
    return points.astype(np.dtype(getattr(dtype, "as_numpy_dtype", dtype)))
