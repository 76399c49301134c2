"""`tf.contrib.training.HParams`: named hyperparameters with types fixed when added, set
from a ``"name=value,..."`` string (command lines) or JSON, as research code of the TF1
era configures its models.

A value keeps the type it was added with: an ``int`` takes ints (a float refuses), a
``float`` takes ints and floats, a ``bool`` only bools (``true``/``false`` when parsed), a
``str`` only strings; a list keeps its element type and takes ``[a, b]`` when parsed.

Example
-------
>>> hp = HParams(learning_rate=0.1, num_layers=2, activation="relu", sizes=[64, 32])
>>> hp.parse("learning_rate=0.05,sizes=[128,64,32]").learning_rate, hp.sizes
(0.05, [128, 64, 32])
>>> hp.num_layers = 3
>>> hp.values()["num_layers"], "activation" in hp
(3, True)
"""

from __future__ import annotations

import json
import numbers
import re

__all__ = ["HParams", "parse_values"]

# name, optional [index], then a value or a bracketed list
_ASSIGNMENT = re.compile(
    r"(?P<name>[a-zA-Z][\w\.]*)(\[\s*(?P<index>\d+)\s*\])?\s*=\s*"
    r"((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)")


def _cast(name: str, param_type: type, value):
    """`value` as `param_type`, refusing lossy or surprising conversions (float to int,
    number to bool or str, str to number)."""
    fail = f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    if type(value) is param_type or issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, str | bytes) and not isinstance(value, str | bytes):
        raise ValueError(fail)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail)
    return param_type(value)


def _parse_one(name: str, param_type: type, text: str, values: str):
    text = text.strip()
    try:
        if param_type is bool:
            lowered = text.lower()
            if lowered in ("true", "1"):
                return True
            if lowered in ("false", "0"):
                return False
            raise ValueError(text)
        if issubclass(param_type, str | bytes) or param_type is type(None):
            return text
        return param_type(text)
    except ValueError:
        raise ValueError(f"Could not parse hparam '{name}' of type '{param_type.__name__}' "
                         f"with value '{text}' in {values}") from None


def parse_values(values: str, type_map: dict, ignore_unknown: bool = False) -> dict:
    """``{name: value}`` from ``"a=1,b=[1,2],c=x"``, each value parsed as its name's type
    in `type_map` (unknown names: ValueError unless `ignore_unknown`)."""
    results: dict = {}
    pos = 0
    while pos < len(values):
        m = _ASSIGNMENT.match(values, pos)
        if not m:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
        pos = m.end()
        name = m.group("name")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        param_type = type_map[name]
        if name in results:
            raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
        if m.group("vals") is not None:
            items = [v for v in m.group("vals").split(",") if v.strip()] \
                if m.group("vals").strip() else []
            results[name] = [_parse_one(name, param_type, v, values) for v in items]
        elif m.group("index") is not None:
            raise ValueError(f"Assignment to an index of '{name}' is not supported in "
                             f"{values}")
        else:
            results[name] = _parse_one(name, param_type, m.group("val"), values)
    return results


class HParams:
    """Hyperparameters as attributes; see the module docstring."""

    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, hparam_def=None, model_structure=None, **kwargs) -> None:
        self._hparam_types: dict = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("hparam_def (an HParamDef protocol buffer) is not supported: "
                             "pass the values as keyword arguments.")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value) -> None:
        """Add `name` with `value`, whose type (or element type for a list) it keeps."""
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, list | tuple):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name: str, value) -> None:
        """Set an existing hyperparameter, converting `value` to its type."""
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, param_type, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, param_type, value))

    def del_hparam(self, name: str) -> None:
        """Remove `name` (nothing if absent)."""
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> HParams:
        """Override from a ``"name=value,..."`` string; returns self."""
        type_map = {name: t for name, (t, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict: dict) -> HParams:
        """Set each hyperparameter of `values_dict`; returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_from_map(self, values_map: dict) -> HParams:
        """The older name of `override_from_dict`."""
        return self.override_from_dict(values_map)

    def set_model_structure(self, model_structure) -> None:
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys: bool = False) -> str:
        """The values as a JSON object."""
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def parse_json(self, values_json: str) -> HParams:
        """Override from a JSON object; returns self."""
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> dict:
        """``{name: value}`` of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default=None):
        """The value of `key`, or `default` when absent (a default of another type than the
        hyperparameter's is refused)."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            type_str = f"list<{param_type}>" if is_list else str(param_type)
            fail = (f"Hparam '{key}' of type '{type_str}' is incompatible with default="
                    f"{default!r}")
            is_default_list = isinstance(default, list)
            if is_list != is_default_list:
                raise ValueError(fail)
            try:
                for item in default if is_default_list else [default]:
                    _cast(key, param_type, item)
            except ValueError:
                raise ValueError(fail) from None
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"
