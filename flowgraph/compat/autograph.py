"""`tf.autograph`: the entry points TF 1.x code calls.

flowgraph does not rewrite Python control flow: `to_graph(f)` returns a function that
calls `f` as written, so Python ``if``/``while`` on Python values work, and conditions on
tensors need `tf.cond` / `tf.while_loop` (testing a tensor as a Python bool raises
`TypeError`, as TensorFlow's graph mode does without AutoGraph). `do_not_convert` is
therefore the identity, `to_code` returns the function's own source, `set_loop_options`
has nothing to tune, and `trace` prints its arguments.

Example
-------
>>> import flowgraph as tf
>>> def double(x):
...     return 2 * x
>>> g = tf.autograph.to_graph(double)
>>> int(tf.Session().run(g(tf.constant(3))))
6
"""

from __future__ import annotations

import enum
import functools
import inspect
import textwrap
import types

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
    """A function (or class) that builds `entity`'s ops when called; Python control flow
    is not rewritten (see the module docstring)."""
    if not callable(entity):
        raise ValueError(f"Expected a Python function or class, got {entity!r}")
    if inspect.isclass(entity):
        return entity

    @functools.wraps(entity)
    def converted(*args, **kwargs):
        return entity(*args, **kwargs)

    converted.autograph_info__ = {"converted": False}
    return converted


def to_code(entity, recursive: bool = True, experimental_optional_features=None) -> str:
    """The source code `to_graph` runs for `entity`: its own source."""
    return textwrap.dedent(inspect.getsource(entity))


def do_not_convert(func=None):
    """Mark `func` as not to be converted (the identity here); usable with or without
    parentheses."""
    if func is None:
        return do_not_convert
    return func


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None) -> None:
    """Loop options for a converted loop; there is no converted loop, so nothing to do."""


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
