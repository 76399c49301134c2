"""OpenBLAS's kernel set for NumPy, chosen before NumPy loads it (run by ``import flowgraph``).

NumPy's bundled OpenBLAS picks its CPU kernels once, when the library loads. On some
AVX-512 CPUs it picks its Haswell (AVX2) kernels: on 2 vCPUs of an AMD EPYC (issue 17)
the eight GEMMs of the MLP training step took 3.3 ms, and 1.9 ms when the process was
started with ``OPENBLAS_CORETYPE=SkylakeX`` (flowgraph's whole SGD step: 3.80 -> 2.41
ms). So ``import flowgraph`` sets that variable when

* it is unset (a user's choice always wins),
* the CPU reports every AVX-512 subset SkylakeX's kernels use (``/proc/cpuinfo``; on
  other systems nothing happens),
* NumPy is not imported yet (afterwards the choice is made), and
* ``FLOWGRAPH_NO_CORETYPE`` is unset or empty (the opt-out).

If NumPy was imported first and its OpenBLAS runs AVX2 kernels on such a CPU, one
warning says so, with the gain and the fix. Child processes inherit the variable.

`coretype_setting` returns what to add to ``os.environ``; this module imports only the
standard library (NumPy must not load before it runs).

Example
-------
>>> decide({}, modules={}, flags=set(AVX512))
'set'
>>> decide({"OPENBLAS_CORETYPE": "Haswell"}, modules={}, flags=set(AVX512))
''
>>> decide({}, modules={"numpy": None}, flags=set(AVX512))
'check'
"""

from __future__ import annotations

import os
import sys
import warnings

CORETYPE = "SkylakeX"
OPT_OUT = "FLOWGRAPH_NO_CORETYPE"
# The AVX-512 subsets OpenBLAS's SkylakeX kernels need (its own CPU check asks for these)
AVX512 = ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd")
# OpenBLAS kernel sets that leave AVX-512 unused (threadpoolctl's "architecture")
AVX2_KERNELS = frozenset({"haswell", "zen", "sandybridge", "nehalem", "prescott", "core2"})

_warned = False


def cpu_flags(path: str = "/proc/cpuinfo") -> set[str]:
    """The first CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def decide(environ=None, modules=None, flags: set[str] | None = None) -> str:
    """What `coretype_setting` does: ``'set'`` the variable, ``'check'`` the kernels NumPy's BLAS
    already chose (NumPy is loaded), or ``''`` nothing.

    >>> decide({OPT_OUT: "1"}, modules={}, flags=set(AVX512))
    ''
    """
    environ = os.environ if environ is None else environ
    modules = sys.modules if modules is None else modules
    if environ.get(OPT_OUT) or environ.get("OPENBLAS_CORETYPE"):
        return ""
    if not set(AVX512) <= (cpu_flags() if flags is None else flags):
        return ""
    return "check" if "numpy" in modules else "set"


def loaded_kernels() -> list[str]:
    """The kernel sets ("architecture") of the OpenBLAS libraries loaded in this process."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a dependency of flowgraph
        return []
    return [str(i.get("architecture") or "") for i in threadpool_info()
            if i.get("internal_api") == "openblas"]


def warning_text(kernels: list[str]) -> str:
    return (
        f"flowgraph: NumPy was imported before flowgraph, and its OpenBLAS runs its "
        f"{'/'.join(kernels)} (AVX2) kernels on this AVX-512 CPU. On an AMD EPYC that made "
        f"the MLP benchmark's matrix products about 1.7x slower (3.3 ms vs 1.9 ms per "
        f"step). Fix: import flowgraph before numpy, or start Python with "
        f"OPENBLAS_CORETYPE={CORETYPE} in the environment; {OPT_OUT}=1 silences this.")


def coretype_setting() -> dict[str, str]:
    """The environment to add before NumPy loads: ``{"OPENBLAS_CORETYPE": "SkylakeX"}``
    when `decide` says so, else ``{}`` (after warning once when NumPy was imported first
    and runs AVX2 kernels). ``flowgraph/__init__.py`` applies it first thing.
    """
    global _warned
    action = decide()
    if action == "set":
        return {"OPENBLAS_CORETYPE": CORETYPE}
    if action == "check" and not _warned:
        slow = [k for k in loaded_kernels() if k.lower() in AVX2_KERNELS]
        if slow:
            _warned = True
            warnings.warn(warning_text(slow), RuntimeWarning, stacklevel=3)
    return {}
