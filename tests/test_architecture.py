"""ARCHITECTURE.md stays true: the files and names it cites exist, its examples run.

Cited paths are backticked paths with a slash (``flowgraph/runtime/plan.py``,
``backends/<name>/kernels_<family>.py`` is a pattern and is skipped); cited names are
backticked dotted names under ``flowgraph.`` (a module, or an attribute of one).
"""

from __future__ import annotations

import importlib
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "ARCHITECTURE.md"
TEXT = PAGE.read_text()
CODE = re.compile(r"`([^`\n]+)`")
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _cited_paths() -> list[str]:
    paths = set()
    for span in CODE.findall(TEXT):
        for word in span.split():
            word = word.strip("(),;:")
            if "/" in word and not any(c in word for c in "<>*{}") and \
                    not word.startswith(("/", "http", "grpc:")) and ":" not in word:
                paths.add(word)
    return sorted(paths)


def _cited_names() -> list[str]:
    names = set()
    for span in CODE.findall(TEXT):
        m = re.fullmatch(r"(flowgraph(?:\.\w+)+)(?:\(\))?", span.strip())
        if m:
            names.add(m.group(1))
    return sorted(names)


def test_the_readme_links_the_architecture_guide():
    assert "ARCHITECTURE.md" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("path", _cited_paths())
def test_cited_path_exists(path):
    assert (ROOT / path).exists(), f"ARCHITECTURE.md cites {path}, which does not exist"


@pytest.mark.parametrize("name", _cited_names())
def test_cited_name_exists(name):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            assert hasattr(obj, attr), f"ARCHITECTURE.md cites {name}: no {attr} in {obj}"
            obj = getattr(obj, attr)
        return
    pytest.fail(f"ARCHITECTURE.md cites {name}, which does not import")


def test_the_guide_cites_enough_to_be_checked():
    assert len(_cited_paths()) >= 20 and len(_cited_names()) >= 5


def test_the_worked_example_runs(tmp_path):
    # In a fresh interpreter: the example registers an op, which must not leak into the
    # registry-wide checks of this process.
    blocks = BLOCK.findall(TEXT)
    assert blocks
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
