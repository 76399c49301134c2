"""The examples in the memory schedule's modules (`flowgraph/runtime/memory_*.py`) run
and hold; their essays' small worked cases (the windows of `memory_gating.py`, the
order of `memory_order.py`) are among them."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["memory_budget", "memory_gating", "memory_loops", "memory_order",
           "memory_schedule", "memory_sizes", "memory_transfers", "memory_values"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name):
    result = doctest.testmod(importlib.import_module(f"flowgraph.runtime.{name}"))
    assert result.attempted > 0 and result.failed == 0


def test_the_pass_logs_under_one_name():
    """Warnings from any of the pass's modules reach the logger users configure."""
    from flowgraph.runtime import memory_gating, memory_loops

    assert memory_gating._log.name == memory_loops._log.name == \
        "flowgraph.runtime.memory_schedule"
