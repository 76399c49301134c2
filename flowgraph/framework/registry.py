"""The op registry: each op type is declared once, here, by its module in `flowgraph/ops/`.

An `OpDef` says how many inputs and outputs an op has, its attributes and their
defaults, how to infer output shapes and dtypes (never touching data), whether it is
stateful, a cost hint for the executor, and how to differentiate it. Kernels are
registered separately, per backend (see `flowgraph/backends/`).

Example
-------
>>> @register_op("Square2", attrs={})          # doctest: +SKIP
... def _square2_shape(op, x):
...     return [x]
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class OpCost(enum.Enum):
    """How much work one run of an op is, for the scheduler.

    The plan turns it into a per-node decision (`NodeInfo.hand_off`, the executor's
    ``FLAG_HAND_OFF``): whether a ready node may run on another executor thread.

    >>> OpCost("blas") is OpCost.BLAS
    True
    """

    CHEAP = "cheap"  # less than a thread hand-over costs: run where it became ready
    EXPENSIVE = "expensive"  # worth running on another thread
    BLAS = "blas"  # expensive, and already parallel inside: runs on BLAS's own threads
    ASYNC = "async"  # completes later through a callback, holding no thread


@dataclass
class OpDef:
    """Everything the graph and the runtime know about one op type."""

    name: str
    shape_fn: Callable[..., list]
    attrs: dict[str, Any] = field(default_factory=dict)
    num_outputs: int | Callable[[Any], int] = 1
    dtype_fn: Callable[[Any], list] | None = None
    stateful: bool = False
    cost: OpCost = OpCost.CHEAP
    ref_inputs: tuple[int, ...] | str = ()  # input positions taking refs, or "all"
    ref_outputs: tuple[int, ...] = ()
    control_flow: str | None = None  # "switch", "merge", ... for the executor
    gradient: Callable | None = None
    differentiable: bool | None = None  # None: not declared yet
    defined_at: tuple[str, int] | None = None  # (file, line) of the register_op call

    def is_ref_input(self, index: int) -> bool:
        return self.ref_inputs == "all" or index in self.ref_inputs

    def output_count(self, op) -> int:
        n = self.num_outputs
        return n(op) if callable(n) else n


_OPS: dict[str, OpDef] = {}


def register_op(
    name: str,
    *,
    attrs: dict[str, Any] | None = None,
    num_outputs: int | Callable[[Any], int] = 1,
    dtype_fn: Callable[[Any], list] | None = None,
    stateful: bool = False,
    cost: OpCost | str = OpCost.CHEAP,
    ref_inputs: tuple[int, ...] | str = (),
    ref_outputs: tuple[int, ...] = (),
    control_flow: str | None = None,
):
    """Decorator registering op type `name` with the decorated shape function.

    The shape function is called as ``shape_fn(op, *input_shapes)`` and returns a list of
    `TensorShape`, one per output. `dtype_fn(op)` returns the output dtypes; by default
    every output has the dtype of input 0 (or of the ``dtype`` attribute when the op has
    no inputs).
    """
    caller = sys._getframe(1)
    defined_at = (caller.f_code.co_filename, caller.f_lineno)

    def decorate(shape_fn):
        if name in _OPS:
            raise KeyError(f"op type '{name}' is registered twice")
        _OPS[name] = OpDef(
            name=name,
            shape_fn=shape_fn,
            attrs=dict(attrs or {}),
            num_outputs=num_outputs,
            dtype_fn=dtype_fn,
            stateful=stateful,
            cost=OpCost(cost),
            ref_inputs=ref_inputs if ref_inputs == "all" else tuple(ref_inputs),
            ref_outputs=tuple(ref_outputs),
            control_flow=control_flow,
            defined_at=defined_at,
        )
        if name in _NOT_DIFFERENTIABLE:
            _OPS[name].differentiable = False
        return shape_fn

    return decorate


def register_gradient(name: str):
    """Decorator registering ``grad_fn(op, *output_grads) -> list of input grads``."""

    def decorate(fn):
        opdef = get_op_def(name)
        opdef.gradient = fn
        opdef.differentiable = True
        return fn

    return decorate


_NOT_DIFFERENTIABLE: set[str] = set()  # names declared without an op type (yet)


def not_differentiable(*names: str) -> None:
    """Declare that the ops `names` have no gradient (their inputs get `None`).

    A name no op type has (yet) is remembered, as TensorFlow's ``tf.NotDifferentiable``
    does: an op type registered later under it has no gradient, and
    ``gradient_override_map`` may name it to cut the gradient of other ops."""
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"tf.NotDifferentiable: op_type must be a string, got "
                            f"{type(name).__name__}")
        opdef = _OPS.get(name)
        if opdef is None:
            _NOT_DIFFERENTIABLE.add(name)
            continue
        opdef.gradient = None
        opdef.differentiable = False


def declared_not_differentiable(name: str) -> bool:
    """Whether `name` was declared to have no gradient (an op type or a bare name)."""
    opdef = _OPS.get(name)
    return name in _NOT_DIFFERENTIABLE or (opdef is not None and opdef.differentiable is False)


def get_op_def(name: str) -> OpDef:
    try:
        return _OPS[name]
    except KeyError:
        raise KeyError(
            f"no op type '{name}' is registered; known types include "
            f"{', '.join(sorted(_OPS)[:20])}, ... Every op type is declared in a module of "
            f"flowgraph/ops/: import flowgraph.ops (or call flowgraph.ops.load_all()) first, "
            f"or run `flowgraph ops` to list them."
        ) from None


def has_op_def(name: str) -> bool:
    return name in _OPS


def registered_ops() -> dict[str, OpDef]:
    """A copy of the registry, op type -> OpDef."""
    return dict(_OPS)
