"""A stand-in for an extension module that records which of its functions are called.

Example
-------
>>> import math
>>> calls = []
>>> ModuleSpy(math, calls).sqrt(4.0), calls
(2.0, ['sqrt'])
"""

from __future__ import annotations


class ModuleSpy:
    """Forwards every function call to `module` and appends the function's name to
    `calls` (monkeypatch it over a kernel module's reference to an extension)."""

    def __init__(self, module, calls: list[str]) -> None:
        self._module, self._calls = module, calls

    def __getattr__(self, name):
        fn = getattr(self._module, name)

        def call(*args):
            self._calls.append(name)
            return fn(*args)

        return call
