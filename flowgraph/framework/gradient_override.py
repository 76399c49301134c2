"""Named gradient functions (`tf.RegisterGradient`) and `Graph.gradient_override_map`.

A gradient registered under a name is not tied to an op type. Inside
``graph.gradient_override_map({"Square": "MyGrad"})`` every op of type ``Square``
created in that graph gets a private copy of its `OpDef` whose gradient looks up
``"MyGrad"`` when `tf.gradients` runs, so the function may be registered after the
graph is built (an unknown name then fails there, naming itself). Ops created outside
the block, or of other types, are untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator

from flowgraph.framework.registry import (
    declared_not_differentiable,
    not_differentiable,
    registered_ops,
)

__all__ = ["NotDifferentiable", "RegisterGradient", "get_registered_gradient",
           "override_gradients", "registered_gradient_for_type"]

_NAMED_GRADIENTS: dict[str, Callable] = {}


class RegisterGradient:
    """Decorator registering a gradient function under `op_type` (any unique name).

    Use the name with `Graph.gradient_override_map` to give some ops that gradient.

    Example
    -------
    >>> import flowgraph as tf
    >>> @tf.RegisterGradient("DocDoubleGrad")
    ... def _double_grad(op, grad):
    ...     return 2.0 * grad
    >>> g = tf.Graph()
    >>> with g.as_default(), g.gradient_override_map({"Identity": "DocDoubleGrad"}):
    ...     x = tf.constant(3.0)
    ...     y = tf.identity(x)
    >>> with g.as_default():
    ...     print(tf.Session().run(tf.gradients(y, x)[0]))
    2.0
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError(f"tf.RegisterGradient: op_type must be a string, got "
                            f"{type(op_type).__name__}")
        self._op_type = op_type

    def __call__(self, f):
        name = self._op_type
        op_def = registered_ops().get(name)
        if name in _NAMED_GRADIENTS or name in _USER_NOT_DIFFERENTIABLE or (
                op_def is not None and op_def.gradient is not None):
            raise KeyError(f"Registering two gradient with name '{name}'; "
                           f"pick another name for tf.RegisterGradient")
        _NAMED_GRADIENTS[name] = f
        return f


_USER_NOT_DIFFERENTIABLE: set[str] = set()


def NotDifferentiable(op_type: str) -> None:
    """Declare that ops of type `op_type` have no gradient: `tf.gradients` gives their
    inputs None. `op_type` may also be a name for `Graph.gradient_override_map`, which
    then cuts the gradient of the ops it maps. A name declared twice, or declared after
    `tf.RegisterGradient` took it, is a KeyError (as in TensorFlow).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.NotDifferentiable("DocCutGradient")
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     x = tf.constant(2.0)
    ...     with g.gradient_override_map({"Identity": "DocCutGradient"}):
    ...         y = tf.identity(x)
    ...     print(tf.gradients(y, x))
    [None]
    """
    if op_type in _NAMED_GRADIENTS or op_type in _USER_NOT_DIFFERENTIABLE:
        raise KeyError(f"Registering two gradient with name '{op_type}'; "
                       f"tf.NotDifferentiable was given a name that already has one")
    not_differentiable(op_type)
    _USER_NOT_DIFFERENTIABLE.add(op_type)


def registered_gradient_for_type(op_type: str) -> Callable | None:
    """The function `tf.RegisterGradient(op_type)` registered for an op type that has
    no gradient of its own (a user's custom op), else None."""
    return _NAMED_GRADIENTS.get(op_type)


def get_registered_gradient(name: str) -> Callable:
    """The function registered with ``tf.RegisterGradient(name)``, else the gradient of
    the op type `name` (TensorFlow registers each op type's gradient under its name, so
    ``gradient_override_map({"Floor": "Identity"})`` is the straight-through trick);
    LookupError if neither exists."""
    try:
        return _NAMED_GRADIENTS[name]
    except KeyError:
        op_def = registered_ops().get(name)
        if op_def is not None and op_def.gradient is not None:
            return op_def.gradient
        if declared_not_differentiable(name):  # tf.NotDifferentiable(name): no gradient
            return _no_gradient
        raise LookupError(
            f"gradient_override_map names the gradient '{name}', but no function is "
            f"registered under that name; register it with "
            f"@tf.RegisterGradient('{name}')") from None


def _no_gradient(op, *grads):
    return [None] * len(op.inputs)


def _overridden_op_def(op_def, name: str):
    def gradient(op, *grads):
        return get_registered_gradient(name)(op, *grads)

    gradient.__name__ = f"gradient_override_{name}"
    return dataclasses.replace(op_def, gradient=gradient, differentiable=True)


@contextlib.contextmanager
def override_gradients(graph, op_type_map: dict) -> Iterator[None]:
    """Give the ops created in `graph` inside the block the gradients named in the map.

    The implementation of `Graph.gradient_override_map`; keys are op types, values
    names registered with `RegisterGradient`.
    """
    if not isinstance(op_type_map, dict):
        raise TypeError(f"gradient_override_map: op_type_map must be a dictionary mapping "
                        f"op type strings to gradient names, got "
                        f"{type(op_type_map).__name__}")
    for key, value in op_type_map.items():
        if not (isinstance(key, str) and isinstance(value, str)):
            raise TypeError(f"gradient_override_map: op_type_map must map strings to "
                            f"strings, got {key!r}: {value!r}")
    start = len(graph.get_operations())
    try:
        yield
    finally:
        for op in graph.get_operations()[start:]:
            name = op_type_map.get(op.type)
            # an inner block already applied its map: the innermost mapping wins
            if name is not None and not hasattr(op, "_gradient_override_name"):
                apply_gradient_override(op, name)


def apply_gradient_override(op, name: str) -> None:
    """Give `op` the gradient registered as `name` (looked up when differentiating), as
    TensorFlow's ``_gradient_op_type`` attribute does; graph export writes it back."""
    op._op_def = _overridden_op_def(op.op_def, name)
    op._gradient_override_name = name
