"""Every ```python block in docs/*.md runs, in order, one namespace per page.

A block whose first line is ``# doctest: skip`` is shown but not run.
"""

from __future__ import annotations

import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _pages():
    return sorted(p for p in DOCS.glob("*.md") if BLOCK.search(p.read_text()))


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_doc_page_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(BLOCK.findall(page.read_text())):
        if block.lstrip().startswith("# doctest: skip"):
            continue
        code = compile(block, f"{page.name}[block {i}]", "exec")
        exec(code, namespace)
