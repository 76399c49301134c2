"""CPU kernels for the control-flow primitives (Switch, Merge, Enter, Exit, NextIteration,
LoopCond) and the run-time checks (Assert, CheckNumerics).

The executor does the real work of control flow (dead values, frames, iterations); these
kernels only pick or forward values.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework.dead import DEAD
from flowgraph.framework.errors import InvalidArgumentError


@cpu_kernel("Switch")
def switch(data, pred):
    return (DEAD, data) if pred else (data, DEAD)


@cpu_kernel("RefSwitch")
def ref_switch(data, pred):
    return (DEAD, data) if pred else (data, DEAD)


def _index(i: int) -> np.ndarray:
    a = np.asarray(i, dtype=np.int32)
    a.setflags(write=False)
    return a


_INDEX = [_index(i) for i in range(16)]


@cpu_kernel("Merge")
def merge(*inputs):
    # Inputs not produced (a loop merge's other edge) arrive as None.
    i = 0
    for v in inputs:
        if v is not None and v is not DEAD:
            return v, (_INDEX[i] if i < 16 else _index(i))
        i += 1
    return DEAD


def _forward(x):
    return x


for _op in ("Enter", "RefEnter", "Exit", "NextIteration", "LoopCond"):
    cpu_kernel(_op)(_forward)


def summarize_value(value, summarize: int | None) -> str:
    """A tensor's value as Assert prints it: strings as they are, arrays as their first
    `summarize` (default 3) elements, bracketed per dimension."""
    v = np.asarray(value)
    if v.dtype.kind in ("S", "O", "U") and v.ndim == 0:
        x = v.item()
        return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
    n = 3 if summarize is None else int(summarize)
    if n < 0:
        n = v.size
    flat = v.reshape(-1)
    shown = [_scalar_str(x) for x in flat[:n]]
    if v.ndim == 0:
        return shown[0] if shown else ""
    more = v.size > n
    # Bracket by the shape of the leading elements, as TensorFlow's summaries do.
    text = _nest(shown, list(v.shape)) if not more else " ".join(shown) + "..."
    return text if more else text[1:-1] if v.ndim == 1 else text


def _scalar_str(x) -> str:
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    if isinstance(x, np.bool_ | bool):
        return "1" if x else "0"
    if isinstance(x, np.floating):
        # Shortest of the usual precisions that reads back exactly ("4", "-0.5", "1e+10").
        short, full = ("%.6g", "%.9g") if x.dtype.itemsize <= 4 else ("%.15g", "%.17g")
        text = short % x
        return text if type(x)(text) == x or np.isnan(x) else full % x
    return str(x)


def _nest(items: list[str], shape: list[int]) -> str:
    if len(shape) <= 1:
        return "[" + " ".join(items) + "]"
    step = int(np.prod(shape[1:])) if shape[1:] else 1
    parts = [_nest(items[i:i + step], shape[1:]) for i in range(0, len(items), step)]
    return "[" + "".join(parts) + "]"


@cpu_kernel("Assert")
def assert_(condition, *data, summarize, op):
    if np.all(condition):
        return None
    shown = " ".join(f"[{summarize_value(d, summarize)}]" for d in data)
    raise InvalidArgumentError(None, op, f"assertion failed: {shown}")


@cpu_kernel("CheckNumerics")
def check_numerics(tensor, *, message, op):
    t = np.asarray(tensor)
    if t.dtype.kind in "fc":
        if not np.isfinite(t).all():
            has_nan = bool(np.isnan(t).any())
            has_inf = bool(np.isinf(t).any())
            what = "Inf and NaN" if has_nan and has_inf else "NaN" if has_nan else "Inf"
            raise InvalidArgumentError(
                None, op, f"{message} : Tensor had {what} values (op '{op.name}')")
    return tensor
