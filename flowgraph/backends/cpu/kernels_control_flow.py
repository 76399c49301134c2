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
    """A tensor's value as Assert prints it inside its brackets: the first `summarize`
    (default 3) elements, nested per dimension, "..." closing each level cut short;
    the same rendering as tf.Print (both are TensorFlow's SummarizeValue)."""
    from flowgraph.ops.logging_ops import summarize_v1

    return summarize_v1(value, 3 if summarize is None else int(summarize))


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
