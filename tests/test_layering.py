"""Layering (issue 11): the import contracts of ``.importlinter`` hold, and no module of
flowgraph is part of an import cycle.

The intended order, lowest first, is framework -> ops -> backends -> runtime ->
(train, data, summary) -> (estimators, keras) -> (serving, cli), with every other
package placed into it by ``.importlinter``. Imports inside functions count: a lazy
import of a higher layer is still an upward import. This test is the CI check (``.ci/run``
runs the suite); ``lint-imports`` from the repository root prints the same report.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")
grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"

# The intended order, lowest first; a tuple is one level (its members in any order).
MAIN_ORDER = ["framework", "ops", "backends", "runtime", ("train", "data", "summary"),
              ("estimators", "keras"), ("serving", "cli")]


def _lint_imports() -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    code = "import sys; from importlinter.cli import lint_imports_command; " \
           "sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, "--no-cache", "--no-logo", str(CONFIG)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    result = _lint_imports()
    if result.returncode != 0:
        pytest.fail("import contracts broken (.importlinter; `lint-imports` prints this "
                    "report):\n" + result.stdout + result.stderr, pytrace=False)


def _layers_contract() -> dict:
    from importlinter.api import read_configuration

    contracts = read_configuration(str(CONFIG))["contracts_options"]
    layers = [c for c in contracts if c["type"] == "layers"]
    assert len(layers) == 1, "expected one layers contract in .importlinter"
    return layers[0]


def test_layers_contract_keeps_the_intended_order():
    """The contract cannot be weakened silently: it keeps the intended order, places
    every package (exhaustive) and ignores no import."""
    contract = _layers_contract()
    assert contract.get("containers") == "flowgraph"
    assert contract.get("exhaustive") == "true"
    assert not contract.get("ignore_imports"), "the layers contract must ignore no import"
    level = {}
    for i, line in enumerate(reversed(contract["layers"])):  # lowest first
        for name in line.replace(":", "|").split("|"):
            level[name.strip().strip("()")] = i
    for lower, higher in itertools.pairwise(MAIN_ORDER):
        lower = lower if isinstance(lower, tuple) else (lower,)
        higher = higher if isinstance(higher, tuple) else (higher,)
        for a in lower:
            for b in higher:
                assert level[a] < level[b], f"layer {a} must sit below layer {b}"


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    adjacency = {m: sorted(graph.find_modules_directly_imported_by(m))
                 for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in adjacency:
        if root in index:
            continue
        work = [(root, iter(adjacency[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(adjacency[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _describe_cycle(graph, component: list[str]) -> str:
    """One cycle through the component's first module, with the import lines."""
    first = component[0]
    members = set(component)
    for imported in sorted(graph.find_modules_directly_imported_by(first)):
        if imported in members:
            back = graph.find_shortest_chain(importer=imported, imported=first)
            if back:
                chain = (first, *back)
                break
    else:  # pragma: no cover - a component always has a cycle through each member
        return " <-> ".join(component)
    steps = []
    for importer, imported in itertools.pairwise(chain):
        lines = sorted({d["line_number"] for d in graph.get_import_details(
            importer=importer, imported=imported)})
        steps.append(f"{importer} -> {imported} (l.{', l.'.join(map(str, lines))})")
    return "\n    ".join(steps)


def test_no_import_cycles_between_modules():
    graph = grimp.build_graph("flowgraph", cache_dir=None)
    components = _cycles(graph)
    report = "\n".join(
        f"- cycle among {len(c)} modules ({', '.join(c)}):\n    {_describe_cycle(graph, c)}"
        for c in components)
    assert not components, f"import cycles between flowgraph modules:\n{report}"


def test_cycle_report_names_the_chain():
    """The cycle check finds a cycle and prints its chain (on a two-module package)."""
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=3, line_contents="")
    graph.add_import(importer="pkg.b", imported="pkg.a", line_number=7, line_contents="")
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=1, line_contents="")
    assert _cycles(graph) == [["pkg.a", "pkg.b"]]
    assert _describe_cycle(graph, ["pkg.a", "pkg.b"]) == \
        "pkg.a -> pkg.b (l.3)\n    pkg.b -> pkg.a (l.7)"
