"""`tf.flags` / `tf.app.flags`: absl's flags, as TensorFlow's are, when absl-py is
installed; flowgraph's own implementation (`flowgraph.flags_compat`) otherwise.

With absl-py every name of ``absl.flags`` is here (parsers, serializers, validators,
``DEFINE_multi_enum_class``, ``DEFINE_alias``, ``mark_flag_as_required``, ``--flagfile``,
...), with two TensorFlow 1.x touches: `FLAGS` parses ``sys.argv`` the first time a flag
is read before anything parsed the command line, and the ``DEFINE_string``,
``DEFINE_boolean``/``DEFINE_bool``, ``DEFINE_float`` and ``DEFINE_integer`` functions
also take the old keyword names ``flag_name``, ``default_value`` and ``docstring``.
Without absl-py, `flowgraph.flags_compat` provides the common subset (``DEFINE_string``,
``DEFINE_integer``, ``DEFINE_float``, ``DEFINE_boolean``, ``DEFINE_list``,
``DEFINE_enum``, ``DEFINE_multi_string``, ``DEFINE_multi_integer``); the other names
raise an AttributeError naming the package to install.

Example
-------
>>> from flowgraph import flags
>>> fv = flags.FlagValues()
>>> flags.DEFINE_integer("batch_size", 32, "Examples per step.", flag_values=fv)
... # doctest: +ELLIPSIS
<...>
>>> fv(["train.py", "--batch_size=64", "data.csv"])
['train.py', 'data.csv']
>>> fv.batch_size
64
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import types

try:
    from absl import flags as _absl
except ImportError:  # pragma: no cover - absl-py is optional
    _absl = None

if _absl is None:  # pragma: no cover - exercised only without absl-py
    from flowgraph.flags_compat import *  # noqa: F403
    from flowgraph.flags_compat import __all__

    def __getattr__(name: str):
        raise AttributeError(
            f"tf.app.flags.{name} needs absl-py (TensorFlow's flags library); install it "
            "with: pip install absl-py. flowgraph's built-in flags provide DEFINE_string, "
            "DEFINE_integer, DEFINE_float, DEFINE_boolean, DEFINE_list, DEFINE_enum and "
            "DEFINE_multi_string/integer.")
else:
    from absl.flags import *  # noqa: F403

    # flags defined through the wrappers below belong to their caller's module (for
    # --helpshort and key flags), not to this one
    _absl.disclaim_key_flags()

    _OLD_NAMES = {"flag_name": "name", "default_value": "default", "docstring": "help"}

    def _accept_old_names(define):
        """`define` also taking TensorFlow 1.x's keyword names of its arguments."""

        @functools.wraps(define)
        def wrapper(*args, **kwargs):
            old = [k for k in _OLD_NAMES if k in kwargs]
            for k in old:
                kwargs[_OLD_NAMES[k]] = kwargs.pop(k)
            if old:
                logging.getLogger("tensorflow").warning(
                    "Use of the keyword argument names (flag_name, default_value, docstring) "
                    "is deprecated, please use (name, default, help) instead.")
            return define(*args, **kwargs)

        return wrapper

    DEFINE_string = _accept_old_names(_absl.DEFINE_string)
    DEFINE_boolean = _accept_old_names(_absl.DEFINE_boolean)
    DEFINE_bool = DEFINE_boolean
    DEFINE_float = _accept_old_names(_absl.DEFINE_float)
    DEFINE_integer = _accept_old_names(_absl.DEFINE_integer)

    class _ParseOnReadFlags:
        """absl's `FLAGS`, except that reading a flag before the command line was parsed
        parses ``sys.argv`` first (TensorFlow 1.x's behaviour; absl would raise
        ``UnparsedFlagAccessError``). Everything else goes to the wrapped object."""

        def __init__(self, wrapped) -> None:
            object.__setattr__(self, "_wrapped", wrapped)

        def __getattribute__(self, name):
            if name in ("__class__", "__dict__", "_wrapped"):
                return object.__getattribute__(self, name)
            # the wrapped object's own attributes and methods; a flag's value is not one of
            # them, so reading a flag falls through to __getattr__ below
            wrapped = object.__getattribute__(self, "_wrapped")
            return type(wrapped).__getattribute__(wrapped, name)

        def __getattr__(self, name):
            wrapped = object.__getattribute__(self, "_wrapped")
            if not wrapped.is_parsed():
                wrapped(sys.argv)
            return getattr(wrapped, name)

        def __setattr__(self, name, value):
            setattr(self._wrapped, name, value)

        def __delattr__(self, name):
            delattr(self._wrapped, name)

        def __dir__(self):
            return dir(self._wrapped)

        def __getitem__(self, name):
            return self._wrapped[name]

        def __setitem__(self, name, flag):
            self._wrapped[name] = flag

        def __contains__(self, name):
            return name in self._wrapped

        def __len__(self):
            return len(self._wrapped)

        def __iter__(self):
            return iter(self._wrapped)

        def __str__(self):
            return str(self._wrapped)

        def __call__(self, *args, **kwargs):
            return self._wrapped(*args, **kwargs)

    FLAGS = _ParseOnReadFlags(_absl.FLAGS)

    # TensorFlow's tf.app.flags.tf_decorator: how its wrappers keep the wrapped
    # function's name, docstring and signature.
    class TFDecorator:
        """A decorated callable: `decorated_target` plus the decorator's name and doc."""

        def __init__(self, decorator_name, target, decorator_doc="",
                     decorator_argspec=None):
            self._decorator_name = decorator_name
            self._decorated_target = target
            self._decorator_doc = decorator_doc
            self._decorator_argspec = decorator_argspec
            functools.update_wrapper(self, target)

        @property
        def decorated_target(self):
            return self._decorated_target

        @property
        def decorator_name(self):
            return self._decorator_name

        @property
        def decorator_doc(self):
            return self._decorator_doc

        def __call__(self, *args, **kwargs):
            return self._decorated_target(*args, **kwargs)

    def make_decorator(target, decorator_func, decorator_name=None, decorator_doc="",
                       decorator_argspec=None):
        """`decorator_func` dressed as `target` (name, docstring, ``__wrapped__``) with a
        ``_tf_decorator`` record of the decoration, as TensorFlow's wrappers are."""
        name = decorator_name or inspect.currentframe().f_back.f_code.co_name
        record = TFDecorator(name, target, decorator_doc, decorator_argspec)
        decorator_func._tf_decorator = record
        functools.update_wrapper(decorator_func, target)
        decorator_func.__wrapped__ = target
        decorator_func.__signature__ = inspect.signature(target)
        return decorator_func

    def unwrap(maybe_tf_decorator):
        """``(decorators, target)``: the `TFDecorator` records outermost first, and the
        innermost undecorated callable."""
        decorators = []
        cur = maybe_tf_decorator
        while True:
            record = cur if isinstance(cur, TFDecorator) else getattr(cur, "_tf_decorator",
                                                                      None)
            if not isinstance(record, TFDecorator):
                break
            decorators.append(record)
            cur = record.decorated_target
        return decorators, cur

    def rewrap(decorator_func, previous_target, new_target):
        """Replace `previous_target` by `new_target` inside the decorations of
        `decorator_func`."""
        cur = decorator_func
        while True:
            record = getattr(cur, "_tf_decorator", None)
            if record is None:
                return decorator_func
            if record.decorated_target is previous_target:
                record._decorated_target = new_target
                cur.__wrapped__ = new_target
                return decorator_func
            cur = record.decorated_target

    def fullargspec_to_signature(fullargspec):
        """An `inspect.Signature` equal to an `inspect.FullArgSpec`."""
        P = inspect.Parameter
        params = []
        defaults = list(fullargspec.defaults or ())
        first_default = len(fullargspec.args) - len(defaults)
        for i, arg in enumerate(fullargspec.args):
            default = defaults[i - first_default] if i >= first_default else P.empty
            params.append(P(arg, P.POSITIONAL_OR_KEYWORD, default=default))
        if fullargspec.varargs:
            params.append(P(fullargspec.varargs, P.VAR_POSITIONAL))
        for arg in fullargspec.kwonlyargs:
            default = (fullargspec.kwonlydefaults or {}).get(arg, P.empty)
            params.append(P(arg, P.KEYWORD_ONLY, default=default))
        if fullargspec.varkw:
            params.append(P(fullargspec.varkw, P.VAR_KEYWORD))
        return inspect.Signature(params)

    import typing as _typing

    tf_decorator = types.SimpleNamespace(
        Any=_typing.Any, Dict=_typing.Dict, TFDecorator=TFDecorator,  # noqa: UP006
        fullargspec_to_signature=fullargspec_to_signature, inspect=inspect,
        make_decorator=make_decorator, rewrap=rewrap, unwrap=unwrap)

    __all__ = [n for n in dir(_absl) if not n.startswith("_")] + ["tf_decorator"]
