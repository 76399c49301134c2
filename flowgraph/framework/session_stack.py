"""The default-session stack (per thread): the sessions entered with
``with sess.as_default():``, innermost last.

It lives below `operation` and `graph` so that ``Tensor.eval()`` and ``Operation.run()``
find the default session without importing `graph` (which imports `operation`);
`flowgraph.framework.graph` re-exports these names.

Example
-------
>>> import flowgraph as tf
>>> tf.get_default_session() is None
True
"""

from __future__ import annotations

import threading

_stacks = threading.local()


def _default_session_stack() -> list:
    if not hasattr(_stacks, "sessions"):
        _stacks.sessions = []
    return _stacks.sessions


def get_default_session():
    """The innermost session entered with ``with sess.as_default()`` (or None)."""
    stack = _default_session_stack()
    return stack[-1] if stack else None


def get_default_session_or_raise(what: str):
    sess = get_default_session()
    if sess is None:
        raise ValueError(
            f"Cannot evaluate '{what}' using eval()/run(): no default session is registered. "
            "Use `with sess.as_default():` or pass session=sess."
        )
    return sess
