"""Python functions inside Keras configurations (a `Lambda` layer's function) and the
`safe_mode` that keeps loading from running code taken from a file.

A `Lambda`'s function is written as TF 2.15's tf.keras writes it, so that TensorFlow
reads flowgraph's files and the other way round::

    a lambda:        "function": [base64(marshal(code)), defaults, closure],
                     "function_type": "lambda", "module": "__main__"
    a named function "function": "my_fn", "function_type": "function",
                     "module": "my_module"

A lambda's marshalled code is a program: rebuilding it runs whatever the file's author
put there. Loading therefore refuses it unless the caller gives the function itself
(``custom_objects={'<layer name>': fn}``; for a named function, its name) or says the file
is trusted (``safe_mode=False``), as Keras 3's `safe_mode` does. A named function is
only looked up (in `custom_objects`, then in a module the program has already
imported), never imported or built from the file.

Example
-------
>>> ctx = LoadContext(custom_objects={"double": lambda x: x * 2})
>>> fn = function_from_config({"function": ["AAAA", None, None],
...                            "function_type": "lambda"}, ctx, "double")
>>> fn(21)
42
"""

from __future__ import annotations

import base64
import marshal
import sys
import types

__all__ = ["LoadContext", "function_config", "function_from_config", "is_lambda"]


class LoadContext:
    """What a configuration is loaded with: `custom_objects`, `safe_mode` and the file
    it came from (for error messages)."""

    def __init__(self, custom_objects: dict | None = None, safe_mode: bool = True,
                 source: str | None = None) -> None:
        from flowgraph.keras.utils import get_custom_objects

        self.custom_objects = {**get_custom_objects(), **(custom_objects or {})}
        self.safe_mode = bool(safe_mode)
        self.source = source

    def where(self) -> str:
        return f"the file {self.source}" if self.source else "the model configuration"


def is_lambda(fn) -> bool:
    return isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>"


def function_config(fn) -> dict:
    """The ``function`` / ``function_type`` / ``module`` fields of a `Lambda`'s config."""
    if is_lambda(fn):
        code = base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii")
        closure = None if fn.__closure__ is None else \
            [c.cell_contents for c in fn.__closure__]
        return {"function": [code, fn.__defaults__, closure], "function_type": "lambda",
                "module": fn.__module__}
    return {"function": getattr(fn, "__name__", str(fn)), "function_type": "function",
            "module": getattr(fn, "__module__", None)}


def function_from_config(config: dict, ctx: LoadContext, layer_name: str, key: str =
                         "function"):
    """The function the `function_config` fields of layer `layer_name` describe (see the
    module docstring for what is refused)."""
    value = config.get(key)
    kind = config.get(f"{key}_type" if key != "function" else "function_type")
    if layer_name in ctx.custom_objects and callable(ctx.custom_objects[layer_name]) \
            and (kind == "lambda" or isinstance(value, dict)):
        return ctx.custom_objects[layer_name]
    if isinstance(value, dict) and "__lambda__" in value:  # flowgraph's older files
        return _rebuild(value["__lambda__"], None, None, ctx, layer_name)
    if kind == "lambda":
        if not isinstance(value, list | tuple) or not value:
            raise ValueError(f"Layer {layer_name!r} in {ctx.where()}: its {key} should be "
                             f"[code, defaults, closure]; found {value!r}.")
        parts = [*value, None, None]
        return _rebuild(parts[0], parts[1], parts[2], ctx, layer_name)
    if isinstance(value, str):
        return _named_function(value, config.get("module"), ctx, layer_name)
    return value


def _named_function(name: str, module: str | None, ctx: LoadContext, layer_name: str):
    if name in ctx.custom_objects:
        return ctx.custom_objects[name]
    from flowgraph.keras import activations, backend

    for namespace in (sys.modules.get(module or ""), activations, backend):
        fn = getattr(namespace, name, None) if namespace is not None else None
        if callable(fn):
            return fn
    raise ValueError(f"Unknown function {name!r} (module {module!r}) in layer "
                     f"{layer_name!r} of {ctx.where()}: pass it in custom_objects, e.g. "
                     f"custom_objects={{{name!r}: {name}}}.")


def _rebuild(code: str, defaults, closure, ctx: LoadContext, layer_name: str):
    if ctx.safe_mode:
        raise ValueError(
            f"Layer {layer_name!r} in {ctx.where()} holds a Python lambda as marshalled "
            f"code; loading it would run code from the file, which is refused by default. "
            f"Pass the function instead (custom_objects={{{layer_name!r}: your_function}}), "
            f"or, if you trust the file, pass safe_mode=False to load_model / "
            f"model_from_json / model_from_config.")
    try:
        raw = base64.b64decode(code.encode("ascii") if isinstance(code, str) else code)
        compiled = marshal.loads(raw)
    except (ValueError, TypeError, EOFError) as e:
        raise ValueError(f"Layer {layer_name!r} in {ctx.where()}: its lambda cannot be "
                         f"decoded ({e}); it was probably written by another Python "
                         f"version ({sys.version.split()[0]} here). Pass the function in "
                         f"custom_objects={{{layer_name!r}: fn}}.") from e
    if not isinstance(compiled, types.CodeType):
        raise ValueError(f"Layer {layer_name!r} in {ctx.where()}: its lambda is not code.")
    cells = None
    if closure:
        cells = tuple(types.CellType(v) for v in closure)
    return types.FunctionType(compiled, _lambda_globals(), None,
                              tuple(defaults) if defaults else None, cells)


def _lambda_globals() -> dict:
    import numpy as np

    from flowgraph.keras import backend

    # the `tf` a lambda body usually names: the already imported top-level package
    return {"tf": sys.modules.get("flowgraph"), "K": backend, "np": np,
            "__builtins__": __builtins__}
