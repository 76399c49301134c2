"""``arg_scope``: default keyword arguments for groups of layer functions (TF1's
``tf.contrib.framework.arg_scope``, the mechanism ``tf.contrib.slim`` models are written
with).

A function takes part once it is wrapped with `add_arg_scope` (every ``tf.contrib.layers``
/ ``slim`` layer is). Inside ``with arg_scope([f, g], **defaults)`` a call of ``f`` or
``g`` gets `defaults` for the keywords the caller did not pass; nested scopes add to the
outer ones, the inner value winning for a keyword both set. The ``with`` statement gives the
scope as a dict, which a later ``arg_scope(saved_scope)`` re-enters as it was.

Example
-------
>>> @add_arg_scope
... def layer(x, scale=1, shift=0):
...     return x * scale + shift
>>> with arg_scope([layer], scale=10):
...     with arg_scope([layer], shift=1) as saved:
...         print(layer(2), layer(2, scale=3))
21 7
>>> with arg_scope(saved):
...     print(layer(1))
11
"""

from __future__ import annotations

import contextlib
import functools

__all__ = [
    "add_arg_scope",
    "arg_scope",
    "arg_scope_func_key",
    "arg_scoped_arguments",
    "current_arg_scope",
    "has_arg_scope",
]

# One stack for the process, as TF1's: scopes opened in one thread apply in all of them.
_scopes: list[dict] = [{}]
# function key -> the names of the keyword arguments it takes
_decorated: dict[str, tuple[str, ...]] = {}


def arg_scope_func_key(func) -> str:
    """The key under which `func`'s defaults are kept in a scope dict."""
    return getattr(func, "_key_op", str(func))


def current_arg_scope() -> dict:
    """The innermost open scope: ``{function key: {keyword: default}}``."""
    return _scopes[-1]


def has_arg_scope(func) -> bool:
    """Whether `func` was wrapped with `add_arg_scope`."""
    return arg_scope_func_key(func) in _decorated


def arg_scoped_arguments(func) -> tuple[str, ...]:
    """The keyword arguments an `arg_scope` can set for `func` (those with a default)."""
    return _decorated[arg_scope_func_key(func)]


def _keyword_names(func) -> tuple[str, ...]:
    # TF1 takes the last len(defaults) names among the code's variable names that are
    # positional parameters: the positional parameters with defaults, in the usual case.
    code = getattr(func, "__code__", None)
    if code is None:
        return ()
    n_defaults = len(func.__defaults__) if func.__defaults__ else 0
    return tuple(code.co_varnames[-n_defaults:code.co_argcount]) if n_defaults else ()


def add_arg_scope(func):
    """Wrap `func` so that the open `arg_scope`s supply its keyword arguments; keywords the
    caller passes win.

    >>> @add_arg_scope
    ... def f(x, y=0):
    ...     return x + y
    >>> with arg_scope([f], y=5):
    ...     f(1), f(1, y=2)
    (6, 3)
    """
    key = arg_scope_func_key(func)

    @functools.wraps(func)
    def with_scoped_arguments(*args, **kwargs):
        scoped = current_arg_scope().get(key)
        if scoped:
            kwargs = {**scoped, **kwargs}
        return func(*args, **kwargs)

    _decorated[key] = _keyword_names(func)
    with_scoped_arguments._key_op = key
    return with_scoped_arguments


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Open a scope giving the functions in `list_ops_or_scope` (a list or tuple of
    `add_arg_scope` functions) the keyword defaults `kwargs`, on top of the open scopes;
    or re-enter a scope dict a previous ``with arg_scope(...) as scope`` gave (then no
    `kwargs`). Yields the new scope dict."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a"  # TF's text
                             "dictionary, kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    else:
        if not isinstance(list_ops_or_scope, list | tuple):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope "
                            "(i.e. dict)")
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                name = (getattr(op, "__module__", None), getattr(op, "__name__", repr(op)))
                # TF1 passes the format and its argument separately: its message is the pair
                raise ValueError("%s is not decorated with @add_arg_scope", name)
            key = arg_scope_func_key(op)
            scope[key] = {**scope.get(key, {}), **kwargs}
    _scopes.append(scope)
    try:
        yield scope
    finally:
        _scopes.pop()
