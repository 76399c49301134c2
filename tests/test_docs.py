"""Every ```python block in docs/*.md runs, in order, one namespace per page.

A block whose first line is ``# doctest: skip`` is shown but not run. Each block's source
is registered with `linecache`, as IPython does for a notebook cell, so that code which
reads a function's source (AutoGraph) finds it.
"""

from __future__ import annotations

import linecache
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
        filename = f"<docs/{page.name} block {i}>"
        linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
        code = compile(block, filename, "exec")
        exec(code, namespace)
