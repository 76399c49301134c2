"""SciPy's submodules for the CPU kernels, imported on first use.

The CPU backend imports every ``kernels_*`` module when a process first runs a graph;
importing ``scipy.linalg`` and ``scipy.special`` there would add ~0.2-0.3 s to every
process's first ``Session.run`` (the Estimator's start, each distributed task), although
most graphs never run a kernel that needs them.

>>> from flowgraph.backends.cpu.scipy_lazy import scipy_special
>>> float(scipy_special().gammaln(1.0))
0.0
"""

from __future__ import annotations

__all__ = ["scipy_linalg", "scipy_special"]


def scipy_linalg():
    """The ``scipy.linalg`` module (imported by the first call)."""
    import scipy.linalg

    return scipy.linalg


def scipy_special():
    """The ``scipy.special`` module (imported by the first call)."""
    import scipy.special

    return scipy.special
