"""Checks that kernels of every backend share, so that their errors read the same.

>>> reduction_axes((2, 3), [-1, 0])
(0, 1)
"""

from __future__ import annotations

import contextlib

import numpy as np

from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.framework.resources import VariableState


def reduction_axes(shape: tuple[int, ...], axes) -> tuple[int, ...]:
    """`axes` (any nesting of ints, negatives allowed) as sorted distinct non-negative
    dimensions of an input of `shape`; an out-of-range axis is InvalidArgumentError."""
    rank = len(shape)
    out = set()
    for a in np.reshape(axes, -1).tolist():
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                None, None, f"Invalid reduction dimension {a} for input with {rank} "
                f"dimensions (shape {list(shape)})")
        if a % rank in out:  # TensorFlow's reductions refuse [1, -2] on a rank-3 input
            raise InvalidArgumentError(
                None, None, f"Invalid reduction arguments: Axes contains duplicate dimension: "
                f"{a % rank} (axes {np.reshape(axes, -1).tolist()}, shape {list(shape)})")
        out.add(a % rank)
    return tuple(sorted(out))


def bias_channels(value_shape: tuple[int, ...], bias_shape: tuple[int, ...],
                  data_format: str) -> int:
    """The channel count of a `BiasAdd` (the channel axis is 1 for NCHW, else the last),
    after checking that `bias` is a vector of that length.

    >>> bias_channels((2, 5), (5,), "NHWC")
    5
    """
    nchw = data_format == "NCHW"
    if len(value_shape) < (3 if nchw else 2) or len(bias_shape) != 1:
        raise InvalidArgumentError(
            None, None, f"BiasAdd needs value of rank >= {3 if nchw else 2} and a 1-D bias; "
            f"got value shape {tuple(value_shape)}, bias shape {tuple(bias_shape)}")
    channels = value_shape[1] if nchw else value_shape[-1]
    if channels != bias_shape[0]:
        raise InvalidArgumentError(
            None, None, "Must provide as many biases as the channel dimension of the input "
            f"tensor: bias shape {tuple(bias_shape)} vs. value shape {tuple(value_shape)} "
            f"({data_format})")
    return channels


def bias_grad_axes(shape: tuple[int, ...], data_format: str) -> tuple[int, ...]:
    """The axes `BiasAddGrad` sums over: all but the channel axis.

    >>> bias_grad_axes((2, 3, 4, 5), "NCHW")
    (0, 2, 3)
    """
    if data_format == "NCHW":
        if len(shape) < 3:
            raise InvalidArgumentError(
                None, None, f"BiasAddGrad: NCHW needs rank >= 3, got shape {tuple(shape)}")
        return (0, *range(2, len(shape)))
    if len(shape) < 2:
        raise InvalidArgumentError(
            None, None, f"BiasAddGrad: needs rank >= 2, got shape {tuple(shape)}")
    return tuple(range(len(shape) - 1))


def broadcast_gradient_args(s0, s1) -> tuple[np.ndarray, np.ndarray]:
    """The axes to sum a broadcast product's gradient over, for each of two input shapes
    `s0` and `s1` (host int arrays), in their dtype; incompatible shapes raise.

    >>> [r.tolist() for r in broadcast_gradient_args(np.array([2, 1]), np.array([3]))]
    [[1], [0]]
    """
    a, b = np.ravel(s0).tolist(), np.ravel(s1).tolist()
    n = max(len(a), len(b))
    pa, pb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    r0, r1 = [], []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise InvalidArgumentError(
                None, None, f"Incompatible shapes for broadcasting: {a} and {b} "
                f"(dimension {i}: {x} vs {y})")
        if x == 1 and (y != 1 or i < n - len(a)):
            r0.append(i)
        if y == 1 and (x != 1 or i < n - len(b)):
            r1.append(i)
    dt = np.asarray(s0).dtype
    return np.asarray(r0, dtype=dt), np.asarray(r1, dtype=dt)


class VariableKernel:
    """The ``VariableV2`` kernel of every backend: outputs the variable's storage handle
    (`VariableState`, from the session's resource container); readers dereference it and
    the backend's own kernels decide where its value lives."""

    def __init__(self, ctx, *, container, shared_name):
        name = shared_name or ctx.op.name
        self.state = ctx.resources.lookup_or_create(container, name, VariableState)

    def __call__(self):
        return self.state


def locked(states, use_locking: bool):
    """A context holding the locks of variables `states` (in one order, so two updates
    never deadlock) when `use_locking`, else nothing."""
    if not use_locking:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    for s in sorted(set(states), key=id):
        stack.enter_context(s.lock)
    return stack
