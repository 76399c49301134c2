"""`tf.autograph`: the entry points TF 1.x code calls.

`to_graph(f)` returns `f` with its Python ``if`` / ``while`` / ``for`` statements
converted (`autograph_convert`): on Python values they run as written, on tensors they
build `tf.cond` / `tf.while_loop`, as `tf.function` does. `do_not_convert` marks a
function to be left as written, `to_code` returns the function's own source (not the
converted one), `set_loop_options` is accepted and has no effect, and `trace` prints its
arguments.

Example
-------
>>> import flowgraph as tf
>>> def relu_or_double(x):
...     if x > 0:
...         x = 2 * x
...     return x
>>> g = tf.autograph.to_graph(relu_or_double)
>>> int(tf.Session().run(g(tf.constant(3))))
6
"""

from __future__ import annotations

import enum
import functools
import inspect
import textwrap
import types

from flowgraph.compat import autograph_convert

__all__ = ["experimental", "set_verbosity", "to_code", "to_graph", "trace"]

_verbosity = {"level": 0}


class Feature(enum.Enum):
    """AutoGraph's optional conversions (accepted; flowgraph converts nothing)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def to_graph(entity, recursive: bool = True, experimental_optional_features=None):
    """`entity` with its control flow converted (see the module docstring); a class is
    returned as it is."""
    if not callable(entity):
        raise ValueError(f"Expected a Python function or class, got {entity!r}")
    if inspect.isclass(entity) or getattr(entity, "__ag_do_not_convert__", False):
        return entity
    converted = autograph_convert.convert(entity)

    @functools.wraps(entity)
    def wrapper(*args, **kwargs):
        return converted(*args, **kwargs)

    wrapper.autograph_info__ = {"converted": converted is not entity}
    return wrapper


def to_code(entity, recursive: bool = True, experimental_optional_features=None) -> str:
    """The source code `to_graph` runs for `entity`: its own source."""
    return textwrap.dedent(inspect.getsource(entity))


def do_not_convert(func=None):
    """Mark `func` as not to be converted (`to_graph` and `tf.function` leave it as
    written); usable with or without parentheses."""
    if func is None:
        return do_not_convert
    try:
        func.__ag_do_not_convert__ = True
    except AttributeError:  # a builtin or a bound method: nothing would convert it anyway
        pass
    return func


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None) -> None:
    """Loop options for a converted loop (accepted; flowgraph's loops take none)."""


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """AutoGraph's log verbosity (kept; nothing is logged)."""
    _verbosity["level"] = int(level)


def trace(*args) -> None:
    """Print the arguments (tensors print as their graph description)."""
    print(*args)


experimental = types.SimpleNamespace(Feature=Feature, do_not_convert=do_not_convert,
                                     set_loop_options=set_loop_options)


def __dir__():
    return list(__all__)
