"""A check shared by the op tests: the examples in a module's docstrings run and pass."""

from __future__ import annotations

import doctest
import importlib


def assert_examples_pass(module_name: str) -> None:
    """Run the docstring examples of `module_name`; fail if one fails or none ran."""
    result = doctest.testmod(importlib.import_module(module_name),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module_name}: {result}"
