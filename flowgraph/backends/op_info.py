"""What flowgraph knows about an op type, for ``flowgraph ops [NAME]``: where it is
declared (`register_op`), its shape function and gradient, its kernels on every backend
(with their dtypes), its attributes and its cost class.

Places are ``file:line`` relative to the directory holding the ``flowgraph`` package,
found with `inspect`; the declaration's place is the `register_op` call itself
(`OpDef.defined_at`).

Example
-------
>>> print(describe_op("Relu").splitlines()[0])
Relu
>>> "CPU" in describe_op("Relu")
True
>>> describe_op("Rleu")
Traceback (most recent call last):
...
flowgraph.backends.op_info.UnknownOpError: no op type 'Rleu' is registered; close matches: \
Relu, Relu6, Lu. Run `flowgraph ops` to list every op type.
"""

from __future__ import annotations

import difflib
import inspect
import os

from flowgraph.backends import get_backends
from flowgraph.backends.base import KernelDef
from flowgraph.framework.registry import OpDef, registered_ops
from flowgraph.ops import load_all

__all__ = ["UnknownOpError", "describe_op", "list_ops", "op_info"]

# The directory holding the flowgraph package (this file is flowgraph/backends/op_info.py).
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class UnknownOpError(KeyError):
    """An op type that is not registered; `matches` are the close registered names."""

    def __init__(self, name: str, matches: list[str]) -> None:
        super().__init__(name)
        self.name, self.matches = name, matches

    def __str__(self) -> str:
        hint = f"close matches: {', '.join(self.matches)}. " if self.matches else ""
        return (f"no op type '{self.name}' is registered; {hint}Run `flowgraph ops` to list "
                f"every op type.")


def _relative(path: str) -> str:
    path = os.path.abspath(path)
    return os.path.relpath(path, _ROOT) if path.startswith(_ROOT + os.sep) else path


def _place(obj) -> str:
    """``file:line`` of a function or class (unwrapping partials), or a best guess."""
    target = getattr(obj, "func", obj)
    try:
        file = inspect.getsourcefile(target) or inspect.getfile(target)
        line = inspect.getsourcelines(target)[1]
    except (TypeError, OSError):
        module = getattr(target, "__module__", None) or "?"
        return f"{module} (compiled, no source)"
    return f"{_relative(file)}:{line}"


def _name(obj) -> str:
    target = getattr(obj, "func", obj)
    return getattr(target, "__qualname__", None) or type(target).__name__


def _matches(name: str, names) -> list[str]:
    by_lower = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=5, cutoff=0.65)
    return [by_lower[c] for c in close]


def _op_def(name: str) -> OpDef:
    load_all()
    ops = registered_ops()
    if name not in ops:
        raise UnknownOpError(name, _matches(name, ops))
    return ops[name]


def _kernel_place(kdef: KernelDef) -> str:
    """Where the kernel's code is; for a NumPy ufunc or compiled function, where it was
    registered."""
    place = _place(kdef.fn)
    if place.endswith("(compiled, no source)") and kdef.registered_at is not None:
        file, line = kdef.registered_at
        place = f"{_relative(file)}:{line} (registered there)"
    return place


def _kernel_info(kdef: KernelDef) -> dict:
    dtypes = (None if kdef.dtypes is None
              else sorted(d.name for d in kdef.dtypes))
    return {"name": _name(kdef.fn), "place": _kernel_place(kdef), "dtypes": dtypes,
            "fresh": kdef.fresh, "is_async": kdef.is_async, "needs_step": kdef.needs_step}


def op_info(name: str) -> dict:
    """Everything `describe_op` prints, as a dict (raises `UnknownOpError`).

    Example
    -------
    >>> info = op_info("MatMul")
    >>> info["cost"], info["kernels"]["CPU"][0]["fresh"]
    ('blas', True)
    """
    opdef = _op_def(name)
    if opdef.differentiable is False:
        gradient = "not differentiable"
    elif opdef.gradient is None:
        gradient = "not declared (neither a gradient nor not_differentiable)"
    else:
        gradient = f"{_name(opdef.gradient)}  {_place(opdef.gradient)}"
    kernels, in_place = {}, {}
    for device_type, backend in sorted(get_backends().items()):
        found = backend.kernels().get(name, [])
        if found:
            kernels[device_type] = [_kernel_info(k) for k in found]
        variant = backend.in_place_def(name)
        if variant is not None:
            in_place[device_type] = _kernel_info(variant)
    defined = opdef.defined_at
    outputs = opdef.num_outputs
    return {
        "name": opdef.name,
        "defined_at": f"{_relative(defined[0])}:{defined[1]}" if defined else "unknown",
        "shape_fn": f"{_name(opdef.shape_fn)}  {_place(opdef.shape_fn)}",
        "gradient": gradient,
        "attrs": dict(opdef.attrs),
        "num_outputs": "depends on the attrs" if callable(outputs) else outputs,
        "stateful": opdef.stateful,
        "cost": opdef.cost.value,
        "kernels": kernels,
        "in_place": in_place,
    }


def describe_op(name: str) -> str:
    """A few lines describing op type `name` (raises `UnknownOpError`).

    Example
    -------
    >>> print("\\n".join(describe_op("Relu").splitlines()[5:7]))
      attrs:       (none)
      outputs:     1
    """
    info = op_info(name)
    attrs = ", ".join(f"{k}={v!r}" for k, v in info["attrs"].items()) or "(none)"
    lines = [
        info["name"],
        f"  declared:    {info['defined_at']} (register_op)",
        f"  shape fn:    {info['shape_fn']}",
        f"  gradient:    {info['gradient']}",
        f"  cost:        {info['cost']}",
        f"  attrs:       {attrs}",
        f"  outputs:     {info['num_outputs']}",
        f"  stateful:    {'yes' if info['stateful'] else 'no'}",
        "  kernels:" + ("" if info["kernels"] else "     none on any backend"),
    ]
    for device_type, kernels in info["kernels"].items():
        for k in kernels:
            flags = [f for f in ("fresh", "is_async", "needs_step") if k[f]]
            dtypes = ", ".join(k["dtypes"]) if k["dtypes"] is not None else "any"
            lines.append(f"    {device_type:<6} {k['name']}  {k['place']}")
            lines.append(f"           dtypes: {dtypes}"
                         + (f"; {', '.join(flags)}" if flags else ""))
    for device_type, k in info["in_place"].items():
        lines.append(f"    {device_type:<6} in place: {k['name']}  {k['place']}")
    return "\n".join(lines)


def list_ops() -> str:
    """One line per registered op type: name, cost class and backends with a kernel.

    Example
    -------
    >>> [line.split()[0] for line in list_ops().splitlines() if line.startswith("MatMul ")]
    ['MatMul']
    """
    load_all()
    backends = get_backends()
    names = sorted(registered_ops())
    width = max(len(n) for n in names)
    lines = []
    for name in names:
        opdef = registered_ops()[name]
        where = [d for d, b in sorted(backends.items()) if b.kernels().get(name)]
        lines.append(f"{name:<{width}}  {opdef.cost.value:<9}  "
                     f"{', '.join(where) or '(no kernel)'}")
    return "\n".join(lines)
