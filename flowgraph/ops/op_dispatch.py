"""Dispatch of public ops to composite tensor types (TensorFlow's ``dispatch``).

An op function asks `handler_for` whether any of its arguments is of a type that
registered a handler for the op's kind (``"unary"``, ``"binary"``, ``"reduce"``,
``"concat"``, ``"stack"``, ``"cast"``); the handler then builds the op for that type (a
`RaggedTensor` applies an elementwise op to its flat values). The check is one
``isinstance`` per call of the op function, at graph construction only.

Example
-------
>>> from flowgraph.ops import op_dispatch
>>> op_dispatch.handler_for("unary", 1.0) is None
True
"""

from __future__ import annotations

_types: tuple = ()
_handlers: dict = {}


def register(cls: type, kind: str, handler) -> None:
    """Call ``handler`` for ops of `kind` when an argument is an instance of `cls`."""
    global _types
    if cls not in _types:
        _types = (*_types, cls)
    _handlers[(cls, kind)] = handler


def handler_for(kind: str, *args):
    """The handler registered for `kind` and the first dispatching argument, else None.
    A list or tuple argument (``tf.concat``'s values) is searched one level deep."""
    if not _types:
        return None
    for a in args:
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, _types):
                    return _handlers.get((type(b), kind))
        elif isinstance(a, _types):
            return _handlers.get((type(a), kind))
    return None
