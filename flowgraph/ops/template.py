"""`tf.make_template`: wrap a function so that every call shares one set of variables.

The first call (or the constructor, with ``create_scope_now_=True``) opens a fresh,
uniquely named variable scope and records it; every later call re-enters that scope
with ``reuse=True``, so ``tf.get_variable`` returns the variables the first call made.
A later call that would create a new trainable variable (``tf.Variable`` instead of
``tf.get_variable``) raises ValueError, as sharing would silently break otherwise.
"""

from __future__ import annotations

import functools

from flowgraph.framework.graph import GraphKeys, get_collection
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["Template", "make_template"]


class Template:
    """A function whose variables are created on the first call and reused afterwards.

    Build one with `make_template`.
    """

    def __init__(self, name, func, create_scope_now=False, unique_name=None,
                 custom_getter=None):
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        self._variables_created = False
        if create_scope_now:
            # only the variable scope: the name scope opens at the first call, so the
            # ops of that call are named "<scope>/..." as in TensorFlow
            with variable_scope(unique_name, name, custom_getter=custom_getter,
                                auxiliary_name_scope=False) as vs:
                self._variable_scope = vs

    name = property(lambda self: self._name)
    func = property(lambda self: self._func)
    variable_scope = property(lambda self: self._variable_scope)

    @property
    def variable_scope_name(self) -> str | None:
        """The variable scope's name with a trailing slash (a collection filter)."""
        return None if self._variable_scope is None else self._variable_scope.name + "/"

    def _collection(self, key):
        if self._variable_scope is None:
            return []
        return get_collection(key, self.variable_scope_name)

    @property
    def variables(self) -> list:
        return self.global_variables + self.local_variables

    trainable_variables = property(
        lambda self: self._collection(GraphKeys.TRAINABLE_VARIABLES))
    global_variables = property(lambda self: self._collection(GraphKeys.GLOBAL_VARIABLES))
    local_variables = property(lambda self: self._collection(GraphKeys.LOCAL_VARIABLES))

    def __call__(self, *args, **kwargs):
        if self._variable_scope is None:
            with variable_scope(self._unique_name, self._name,
                                custom_getter=self._custom_getter) as vs:
                self._variable_scope = vs
                return self._first_call(args, kwargs)
        if not self._variables_created:
            with variable_scope(self._variable_scope):
                return self._first_call(args, kwargs)
        with variable_scope(self._variable_scope, reuse=True):
            before = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
            result = self._func(*args, **kwargs)
            new = get_collection(GraphKeys.TRAINABLE_VARIABLES)[before:]
            if new:  # TensorFlow's words, then which template
                raise ValueError(
                    f"Trainable variable created when calling a template after the first "
                    f"time, perhaps you used tf.Variable when you meant tf.get_variable: "
                    f"{new} (tf.make_template('{self._name}'))")
            return result

    def _first_call(self, args, kwargs):
        result = self._func(*args, **kwargs)
        self._variables_created = True
        return result


def make_template(name_, func_, create_scope_now_=False, unique_name_=None,
                  custom_getter_=None, **kwargs):
    """Wrap `func_` so that all its calls share the variables its first call creates.

    `kwargs` are bound to `func_` (as `functools.partial` would). The variables live in
    a variable scope named `name_` (made unique, e.g. ``scale_1``) or `unique_name_`;
    `create_scope_now_` opens that scope now instead of at the first call.

    Example
    -------
    >>> import flowgraph as tf
    >>> def scale(x):
    ...     w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
    ...     return x * w
    >>> scale_t = tf.make_template("scale", scale)
    >>> a, b = scale_t(1.0), scale_t(3.0)
    >>> [v.name for v in scale_t.variables]
    ['scale/w:0']
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_,
                    unique_name=unique_name_, custom_getter=custom_getter_)
