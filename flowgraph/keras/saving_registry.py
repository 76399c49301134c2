"""Registering and (de)serializing Keras objects by name: `register_keras_serializable`,
`get_registered_name` / `get_registered_object`, `serialize_keras_object` /
`deserialize_keras_object` (``tf.keras.utils`` and ``tf.keras.saving``), and the
`serialize` / `deserialize` of ``tf.keras.losses`` and ``metrics``.

A registered class is saved as ``'<package>>Name'`` (``model.to_json()``, `save`) and
found again under that name when loading, with no `custom_objects` argument. An object
serializes to ``{'class_name': ..., 'config': obj.get_config()}``; a function to its
(registered) name.

Example
-------
>>> import flowgraph as tf
>>> @tf.keras.utils.register_keras_serializable(package="demo")
... def twice(x):
...     return 2 * x
>>> tf.keras.utils.get_registered_name(twice)
'demo>twice'
>>> tf.keras.utils.deserialize_keras_object("demo>twice") is twice
True
"""

from __future__ import annotations

import inspect

from flowgraph.keras.utils import get_custom_objects

__all__ = ["deserialize_keras_object", "get_registered_name", "get_registered_object",
           "register_keras_serializable", "serialize_keras_object"]

_REGISTERED_NAMES: dict = {}  # object -> "package>name"
_HELP = ("Please ensure you are using a `keras.utils.custom_object_scope` and that this "
         "object is included in the scope. See https://www.tensorflow.org/guide/keras/"
         "save_and_serialize#registering_the_custom_object for details.")


def register_keras_serializable(package: str = "Custom", name: str | None = None):
    """A decorator registering a class (which must have ``get_config``) or a function
    under ``'<package>><name or __name__>'``; a later registration of the name wins."""

    def decorator(arg):
        registered = f"{package}>{name or arg.__name__}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() "
                             "method.")
        get_custom_objects()[registered] = arg
        _REGISTERED_NAMES[arg] = registered
        return arg

    return decorator


def get_registered_name(obj) -> str:
    """The name `obj` is saved under: its registered name, else its ``__name__``."""
    try:
        return _REGISTERED_NAMES[obj]
    except (KeyError, TypeError):
        return obj.__name__


def get_registered_object(name: str, custom_objects=None, module_objects=None):
    """The object registered (or in scope) as `name`, else the one `custom_objects` or
    `module_objects` give it, else None."""
    for table in (get_custom_objects(), custom_objects or {}, module_objects or {}):
        if name in table:
            return table[name]
    return None


def serialize_keras_object(instance):
    """``{'class_name', 'config'}`` of an object with ``get_config``; the registered
    name of a function or class; None for None."""
    if instance is None:
        return None
    if hasattr(instance, "get_config") and not inspect.isclass(instance):
        return {"class_name": get_registered_name(type(instance)),
                "config": instance.get_config()}
    if hasattr(instance, "__name__") and callable(instance):
        return get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance} because it doesn't implement "
                     f"`get_config()`.")


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None,
                             printable_module_name: str = "object"):
    """The object `serialize_keras_object` described: a config dict is rebuilt with the
    class's ``from_config`` (or constructor); a name gives the object itself."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        if "class_name" not in identifier or "config" not in identifier:
            raise ValueError(f"Improper config format for {identifier}. Expecting python "
                             f"dict contains `class_name` and `config` as keys")
        name = identifier["class_name"]
        cls = get_registered_object(name, custom_objects, module_objects)
        if cls is None:
            raise ValueError(f"Unknown {printable_module_name}: '{name}'. {_HELP}")
        config = identifier["config"]
        if hasattr(cls, "from_config"):
            return cls.from_config(config)
        return cls(**config)
    if isinstance(identifier, str):
        obj = get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise ValueError(f"Unknown {printable_module_name}: '{identifier}'. {_HELP}")
        return obj
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret serialized {printable_module_name}: "
                     f"{identifier!r}")


def _module_objects(module, names=None) -> dict:
    return {n: getattr(module, n) for n in (names or dir(module)) if not n.startswith("_")}


def _serialize_named(obj, kind: str):
    if hasattr(obj, "get_config") and not inspect.isclass(obj):
        return serialize_keras_object(obj)
    if callable(obj) and hasattr(obj, "__name__"):
        return get_registered_name(obj)
    raise ValueError(f"Cannot serialize {obj!r} as a {kind}.")


# -- tf.keras.losses / metrics / initializers serialize and deserialize ---------------------
def serialize_loss(loss):
    """A loss object's ``{'class_name', 'config'}``, or a loss function's name."""
    return _serialize_named(loss, "loss")


def deserialize_loss(name, custom_objects=None, use_legacy_format=False):
    """The loss function called `name`, or the loss object a config describes."""
    from flowgraph.keras import losses

    return deserialize_keras_object(name, _module_objects(losses), custom_objects,
                                    "loss function")


def serialize_metric(metric, use_legacy_format=False):
    """A metric object's ``{'class_name', 'config'}``, or a metric function's name."""
    return _serialize_named(metric, "metric")


def deserialize_metric(config, custom_objects=None, use_legacy_format=False):
    """The metric function called `config`, or the metric object a config describes."""
    from flowgraph.keras import losses_focal, metrics

    table = _module_objects(metrics)
    for name in losses_focal.__all__:  # TF's metrics.deserialize does not know these two
        table.pop(name, None)
    return deserialize_keras_object(config, table, custom_objects, "metric function")
