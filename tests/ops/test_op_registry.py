"""Where ops and kernels live, and that every process sees the whole op library.

Rules checked here:

- every op type is declared (`register_op`) in a module of `flowgraph/ops/`; the one
  exception is ``Const``, which `convert_to_tensor` in `flowgraph/framework` needs;
- every kernel is registered in ``flowgraph/backends/<backend>/kernels_<family>.py``, and
  those modules never import the layers above the backends;
- ``import flowgraph.ops`` alone registers the same op types as a process that imported
  everything (`flowgraph.ops.load_all` walks the package with `pkgutil`, so a new module
  needs no list);
- `Backend.fresh_outputs` comes from the ``fresh=True`` kernel registrations.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import pathlib
import subprocess
import sys

import pytest

import flowgraph.ops
from flowgraph.backends import get_backends
from flowgraph.backends.base import Backend
from flowgraph.framework.registry import registered_ops

ROOT = pathlib.Path(flowgraph.ops.__file__).resolve().parent.parent.parent
OPS_DIR = ROOT / "flowgraph" / "ops"
BACKENDS_DIR = ROOT / "flowgraph" / "backends"
OUTSIDE_OPS = {"Const": "flowgraph/framework/constant_op.py"}
# Layers above the backends (see .importlinter): a kernel importing one would make the
# backend depend on the library built on it.
UPWARD = ("flowgraph.runtime", "flowgraph.train", "flowgraph.summary", "flowgraph.data",
          "flowgraph.estimators", "flowgraph.keras", "flowgraph.saved_model",
          "flowgraph.feature_column", "flowgraph.serving", "flowgraph.cli")


def _library_ops() -> list[str]:
    return sorted(n for n in registered_ops() if "Test" not in n)  # tests add Test* ops


def _relative(path: str) -> str:
    return pathlib.Path(path).resolve().relative_to(ROOT).as_posix()


@pytest.mark.parametrize("op_type", _library_ops())
def test_op_is_declared_in_flowgraph_ops(op_type):
    opdef = registered_ops()[op_type]
    assert opdef.defined_at is not None
    where = _relative(opdef.defined_at[0])
    expected = OUTSIDE_OPS.get(op_type)
    if expected is not None:
        assert where == expected
        return
    assert where.startswith("flowgraph/ops/"), (
        f"op {op_type} is registered in {where}: declare it (register_op, shape function, "
        f"gradient or not_differentiable) in a module of flowgraph/ops/ so that every "
        f"process that loads a graph finds it")


def _kernel_defs():
    for device_type, backend in sorted(get_backends().items()):
        for op_type, kdefs in sorted(backend.kernels().items()):
            if "Test" in op_type:
                continue
            for kdef in kdefs:
                yield device_type, op_type, kdef
        for op_type in sorted(backend.kernels()):
            variant = backend.in_place_def(op_type)
            if variant is not None:
                yield device_type, op_type, variant


def test_every_kernel_lives_in_a_kernels_module():
    wrong = []
    for device_type, op_type, kdef in _kernel_defs():
        assert kdef.registered_at is not None, f"{device_type} kernel of {op_type}"
        where = _relative(kdef.registered_at[0])
        parts = where.split("/")
        if not (len(parts) == 4 and parts[:2] == ["flowgraph", "backends"]
                and parts[3].startswith("kernels_")):
            wrong.append(f"{device_type} kernel of {op_type} in {where}")
    assert not wrong, ("kernels must be registered in flowgraph/backends/<backend>/"
                       "kernels_<family>.py:\n" + "\n".join(wrong))


def _imports(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno


def test_kernel_modules_do_not_import_upward():
    found = []
    for path in sorted(BACKENDS_DIR.glob("*/kernels_*.py")):
        for module, line in _imports(path):
            if module.startswith(UPWARD):
                found.append(f"{_relative(str(path))}:{line} imports {module}")
    assert not found, ("backend kernels may import flowgraph.framework, flowgraph.ops and "
                       "their backend only; move the logic they need down:\n"
                       + "\n".join(found))


def test_a_fresh_process_registers_every_op():
    for package in ("flowgraph.data", "flowgraph.estimators", "flowgraph.summary",
                    "flowgraph.train", "flowgraph.keras", "flowgraph.saved_model"):
        importlib.import_module(package)
    script = ("import json, flowgraph.ops\n"
              "from flowgraph.framework.registry import registered_ops\n"
              "print(json.dumps(sorted(registered_ops())))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    alone = set(json.loads(out))
    here = set(_library_ops())
    assert here == alone, (f"registered only after importing the library: "
                           f"{sorted(here - alone)}; only in the fresh process: "
                           f"{sorted(alone - here)}")


def test_load_all_imports_every_module_of_the_package():
    flowgraph.ops.load_all()
    names = {p.stem for p in OPS_DIR.glob("*.py") if not p.stem.startswith("_")}
    assert {m.rsplit(".", 1)[1] for m in flowgraph.ops.op_modules()} == names
    assert all(m in sys.modules for m in flowgraph.ops.op_modules())


def test_unknown_op_type_error_points_at_the_op_library():
    from flowgraph.framework.registry import get_op_def

    with pytest.raises(KeyError, match=r"flowgraph/ops/.*load_all\(\)"):
        get_op_def("NoSuchOp")


def test_fresh_outputs_come_from_kernel_registrations():
    cpu = get_backends()["CPU"]
    assert {"MatMul", "BiasAdd", "Relu", "ReluGrad"} <= cpu.fresh_outputs
    assert cpu.fresh_outputs == {op for op, kdefs in cpu.kernels().items()
                                 if kdefs and all(k.fresh for k in kdefs)}
    with pytest.raises(AttributeError):
        cpu.fresh_outputs = frozenset()
    b = Backend()
    b.register_kernel("A", lambda x: x + 1, dtypes=["float32"], fresh=True)
    b.register_kernel("B", lambda x: x)
    assert b.fresh_outputs == {"A"}
    b.register_kernel("A", lambda x: x, dtypes=["float64"])  # one kernel that is not
    assert b.fresh_outputs == frozenset()


@pytest.mark.parametrize("module", [
    "flowgraph.ops", "flowgraph.ops.summary_ops", "flowgraph.ops.iterator_ops",
    "flowgraph.ops.input_ops", "flowgraph.ops.head_ops", "flowgraph.ops.io_ops",
    "flowgraph.framework.checkpoint_file", "flowgraph.backends.base"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
