"""The op library: one module per op family. Every op type is declared (`register_op`,
its shape function and its gradient or `not_differentiable`) in a module of this
package, and importing the package imports them all (`load_all`), so that a graph read
from a file (a SavedModel, a JSON graph def) finds every op type whichever parts of
flowgraph the process imported before. It also installs the Tensor operators.

The list of modules is not written down: `load_all` walks this package, so a new
``flowgraph/ops/<family>.py`` is found without being listed anywhere.

Example
-------
>>> import flowgraph.ops
>>> from flowgraph.framework.registry import has_op_def
>>> flowgraph.ops.load_all() is None, has_op_def("ScalarSummary")
(True, True)
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["load_all", "op_modules"]


def op_modules() -> list[str]:
    """The names of the modules of this package (``flowgraph.ops.math_ops``, ...).

    Example
    -------
    >>> "flowgraph.ops.summary_ops" in op_modules()
    True
    """
    return sorted(f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


_loaded = False


def load_all() -> None:
    """Import every module of the op library, registering every op type (idempotent).

    Code that resolves op types by name (the SavedModel loader, the serving command)
    calls it first; importing this package already has.

    Example
    -------
    >>> from flowgraph.framework.registry import registered_ops
    >>> load_all()
    >>> "RestoreV2" in registered_ops()
    True
    """
    global _loaded
    if _loaded:
        return
    for name in op_modules():
        importlib.import_module(name)
    _loaded = True


load_all()
