"""``tf.Module``: a named container of variables and sub-modules, found by walking its
attributes (lists, tuples and dicts included), as in TensorFlow.

Example
-------
>>> import flowgraph as tf
>>> class Dense(tf.Module):
...     def __init__(self, n_in, n_out, name=None):
...         super().__init__(name=name)
...         with self.name_scope:
...             self.w = tf.Variable(tf.zeros([n_in, n_out]), name="w")
...             self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)
>>> layer = Dense(3, 2, name="dense")
>>> [v.op.name for v in layer.trainable_variables], layer.name
(['dense/w'], 'dense')
"""

from __future__ import annotations

import re

from flowgraph.framework.graph import name_scope

__all__ = ["Module"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Module:
    """Base class for objects that own variables; `variables`,
    `trainable_variables`, `non_trainable_variables` and `submodules` are collected
    from the attributes, depth first, without repeats."""

    def __init__(self, name=None) -> None:
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not _NAME.match(name):
            raise ValueError(f"{name!r} is not a valid module name: module names must be "
                             "valid Python identifiers (letters, digits, '_', '.', '-')")
        self._name = name
        self._scope_name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self):
        """A name scope context for creating this module's ops and variables."""
        return name_scope(self._scope_name)

    def _walk(self, predicate, seen=None):
        from flowgraph.ops.variables import Variable

        seen = set() if seen is None else seen
        found = []

        def visit(value):
            if id(value) in seen:
                return
            if isinstance(value, Variable | Module):
                seen.add(id(value))
                if predicate(value):
                    found.append(value)
                if isinstance(value, Module):
                    for attr in sorted(vars(value)):
                        visit(vars(value)[attr])
            elif isinstance(value, list | tuple):
                for item in value:
                    visit(item)
            elif isinstance(value, dict):
                for key in sorted(value, key=str):
                    visit(value[key])

        seen.add(id(self))
        for attr in sorted(vars(self)):
            visit(vars(self)[attr])
        return found

    @property
    def variables(self):
        """Every variable of this module and its sub-modules."""
        from flowgraph.ops.variables import Variable

        return tuple(self._walk(lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self):
        """The trainable ones of `variables`."""
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        """The non-trainable ones of `variables`."""
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        """Every module reachable from this one's attributes."""
        return tuple(self._walk(lambda v: isinstance(v, Module)))

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: run `method` inside the module's name scope."""
        import functools

        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self._name!r}>"
