"""`tf.train.Example` and `tf.train.SequenceExample`: the protobuf messages of
TensorFlow's ``example.proto`` and ``feature.proto``, on flowgraph's message base
(`flowgraph.framework.proto_codec.Message`: the protobuf package when installed, else the
hand-written codec; the same bytes).

    message BytesList { repeated bytes value = 1; }
    message FloatList { repeated float value = 1 [packed = true]; }
    message Int64List { repeated int64 value = 1 [packed = true]; }
    message Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                     Int64List int64_list = 3; } }
    message Features  { map<string, Feature> feature = 1; }
    message FeatureList  { repeated Feature feature = 1; }
    message FeatureLists { map<string, FeatureList> feature_list = 1; }
    message Example   { Features features = 1; }
    message SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }

The bytes are TensorFlow's: map entries are written in sorted key order (what protobuf's
``SerializeToString(deterministic=True)`` does; with one key per map, any order is the
same), packed numbers, and a sub-message read for mutation is attached to its parent as
in protobuf (``ex.features.feature["x"].int64_list.value.append(3)`` works). A
sub-message that was only read stays unset (`_present`), which both engines honour.
Malformed bytes raise `DecodeError`, `proto_codec`'s (a ValueError and a DataLossError).

Example
-------
>>> ex = Example(features=Features(feature={
...     "x": Feature(int64_list=Int64List(value=[1, 2]))}))
>>> ex.SerializeToString()
b'\\n\\r\\n\\x0b\\n\\x01x\\x12\\x06\\x1a\\x04\\n\\x02\\x01\\x02'
>>> Example.FromString(ex.SerializeToString()).features.feature["x"].int64_list.value
[1, 2]
"""

from __future__ import annotations

import struct

import numpy as np

from flowgraph.framework.event_format import DecodeError, Message

__all__ = [
    "BytesList",
    "DecodeError",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]


class _MessageMap(dict):
    """A ``map<string, Message>`` field: a missing key reads as a new, attached entry."""

    def __init__(self, cls, items=()):
        super().__init__(items)
        self._cls = cls

    def __missing__(self, key):
        value = self[key] = self._cls()
        return value

    def get_or_create(self, key):
        return self[key]


class _ProtoMessage(Message):
    """A `Message` whose singular sub-messages and map values attach on first access,
    as protobuf's do, and whose maps serialize in sorted key order."""

    _ONEOF: tuple = ()  # names of a oneof's members: setting one clears the others
    _REPEATED: frozenset = frozenset()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._REPEATED = frozenset(f[1] for f in cls.FIELDS if f[3])

    def __init__(self, **fields) -> None:
        for _, name, kind, repeated in self.FIELDS:
            if repeated and isinstance(kind, tuple) and isinstance(kind[2], type):
                self.__dict__[name] = _MessageMap(kind[2])
        super().__init__(**fields)
        for _, name, kind, repeated in self.FIELDS:
            if repeated and isinstance(kind, tuple) and isinstance(kind[2], type):
                if not isinstance(self.__dict__[name], _MessageMap):
                    self.__dict__[name] = _MessageMap(kind[2], self.__dict__[name])

    def __getattr__(self, name):
        spec = type(self)._BY_NAME.get(name)
        if spec is not None and isinstance(spec[2], type) and not spec[3]:
            child = spec[2]()
            child.__dict__["_parent"] = (self, name)
            self.__dict__[name] = child
            self.__dict__.setdefault("_auto", set()).add(name)
            return child
        raise AttributeError(f"{type(self).__name__} has no field named '{name}'")

    def __getattribute__(self, name):
        d = object.__getattribute__(self, "__dict__")
        if "_parent" in d and name in type(self)._REPEATED:
            _mark_present(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        if name in self._ONEOF:
            for other in self._ONEOF:
                if other != name:
                    self.__dict__.pop(other, None)
        spec = type(self)._BY_NAME.get(name)
        if spec is not None and spec[3]:
            raise AttributeError(f"Assignment not allowed to repeated field '{name}' in "
                                 f"{type(self).__name__}; use .extend() or .append()")
        self.__dict__.get("_auto", set()).discard(name)
        if spec is not None and "_parent" in self.__dict__:
            _mark_present(self)
        super().__setattr__(name, value)

    def _present(self, name: str) -> bool:
        if name not in self.__dict__:
            return False
        if name in self.__dict__.get("_auto", ()):
            return bool(self.__dict__[name].SerializeToString())
        return True

    def HasField(self, name: str) -> bool:
        return not self._BY_NAME[name][3] and self._present(name)

    def WhichOneof(self, group: str):
        """The name of the set member of the oneof (``"kind"`` for `Feature`), or None."""
        for name in self._ONEOF:
            if self._present(name):
                return name
        return None

    def ListFields(self):
        out = []
        for _number, name, _kind, repeated in self._ORDERED:
            if (repeated and self.__dict__.get(name)) or (not repeated and self._present(name)):
                out.append((name, self.__dict__[name]))
        return out

    def MergeFromString(self, data) -> int:
        try:
            n = super().MergeFromString(bytes(data))
        except DecodeError as e:
            if type(self).__name__ in str(e):
                raise
            raise DecodeError(f"Error parsing message of type {type(self).__name__}: "
                              f"{e}") from None
        except (ValueError, IndexError, struct.error) as e:
            raise DecodeError(f"Error parsing message of type {type(self).__name__}: "
                              f"{e}") from None
        for _, name, kind, repeated in self.FIELDS:
            if repeated and isinstance(kind, tuple) and isinstance(kind[2], type):
                if not isinstance(self.__dict__[name], _MessageMap):
                    self.__dict__[name] = _MessageMap(kind[2], self.__dict__[name])
        return n

    def ParseFromString(self, data) -> int:
        self.__dict__.clear()
        self.__init__()
        return self.MergeFromString(data)

    def Clear(self) -> None:
        self.__dict__.clear()
        self.__init__()

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def __str__(self) -> str:
        return _text_format(self, "")


def _mark_present(msg) -> None:
    """A sub-message created by reading it was mutated: it is now set in its parents."""
    while "_parent" in msg.__dict__:
        parent, name = msg.__dict__.pop("_parent")
        parent.__dict__.get("_auto", set()).discard(name)
        msg = parent


def _quote(value) -> str:
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    out = []
    for b in data:
        ch = chr(b)
        if ch in "\"\\'":
            out.append("\\" + ch)
        elif 32 <= b < 127:
            out.append(ch)
        else:
            out.append({10: "\\n", 13: "\\r", 9: "\\t"}.get(b, f"\\{b:03o}"))
    return '"' + "".join(out) + '"'


def _scalar_text(kind, value) -> str:
    if kind in ("bytes", "string"):
        return _quote(value)
    if kind == "float":
        return str(np.float32(value))  # the shortest text that reads back as the float32
    return str(value)


def _text_format(msg, indent: str) -> str:
    lines = []
    for name, value in msg.ListFields():
        spec = msg._BY_NAME[name]
        kind = spec[2]
        if isinstance(kind, tuple):
            for key in sorted(value):
                lines.append(f"{indent}{name} {{\n{indent}  key: {_quote(key)}\n"
                             f"{indent}  value {{\n{_text_format(value[key], indent + '    ')}"
                             f"{indent}  }}\n{indent}}}\n")
        elif isinstance(kind, type):
            for v in (value if spec[3] else [value]):
                lines.append(f"{indent}{name} {{\n{_text_format(v, indent + '  ')}{indent}}}\n")
        else:
            for v in (value if spec[3] else [value]):
                lines.append(f"{indent}{name}: {_scalar_text(kind, v)}\n")
    return "".join(lines)


class BytesList(_ProtoMessage):
    """A list of byte strings (``str`` values are stored UTF-8 encoded).

    Example
    -------
    >>> BytesList(value=[b"a", b"bc"]).SerializeToString()
    b'\\n\\x01a\\n\\x02bc'
    """

    PROTO_NAME = "tensorflow.BytesList"
    FIELDS = ((1, "value", "bytes", True),)


class FloatList(_ProtoMessage):
    """A list of float32 values (packed).

    Example
    -------
    >>> FloatList(value=[1.0]).SerializeToString()
    b'\\n\\x04\\x00\\x00\\x80?'
    """

    PROTO_NAME = "tensorflow.FloatList"
    FIELDS = ((1, "value", "float", True),)


class Int64List(_ProtoMessage):
    """A list of int64 values (packed varints).

    Example
    -------
    >>> Int64List(value=[1, -1]).SerializeToString()[:3]
    b'\\n\\x0b\\x01'
    """

    PROTO_NAME = "tensorflow.Int64List"
    FIELDS = ((1, "value", "int64", True),)


class Feature(_ProtoMessage):
    """One feature: exactly one of ``bytes_list``, ``float_list``, ``int64_list``.

    Example
    -------
    >>> Feature(float_list=FloatList(value=[0.5])).WhichOneof("kind")
    'float_list'
    """

    PROTO_NAME = "tensorflow.Feature"
    _ONEOF = ("bytes_list", "float_list", "int64_list")
    FIELDS = ((1, "bytes_list", BytesList, False), (2, "float_list", FloatList, False),
              (3, "int64_list", Int64List, False))


class Features(_ProtoMessage):
    """A map from feature name to `Feature`.

    Example
    -------
    >>> f = Features()
    >>> f.feature["a"].int64_list.value.append(7)
    >>> Features.FromString(f.SerializeToString()).feature["a"].int64_list.value
    [7]
    """

    PROTO_NAME = "tensorflow.Features"
    FIELDS = ((1, "feature", ("map", "string", Feature), True),)


class FeatureList(_ProtoMessage):
    """A sequence of `Feature`s (one per time step of a `SequenceExample`).

    Example
    -------
    >>> fl = FeatureList(feature=[Feature(int64_list=Int64List(value=[i])) for i in (1, 2)])
    >>> len(FeatureList.FromString(fl.SerializeToString()).feature)
    2
    """

    PROTO_NAME = "tensorflow.FeatureList"
    FIELDS = ((1, "feature", Feature, True),)


class FeatureLists(_ProtoMessage):
    """A map from feature name to `FeatureList`.

    Example
    -------
    >>> fls = FeatureLists()
    >>> fls.feature_list["t"].feature.add().float_list.value.append(1.5)
    >>> fls.feature_list["t"].feature[0].float_list.value
    [1.5]
    """

    PROTO_NAME = "tensorflow.FeatureLists"
    FIELDS = ((1, "feature_list", ("map", "string", FeatureList), True),)


class Example(_ProtoMessage):
    """One training example: `Features` by name (``tf.train.Example``).

    Example
    -------
    >>> ex = Example()
    >>> ex.features.feature["y"].float_list.value.extend([1.0, 2.0])
    >>> len(ex.SerializeToString())
    21
    """

    PROTO_NAME = "tensorflow.Example"
    FIELDS = ((1, "features", Features, False),)


class SequenceExample(_ProtoMessage):
    """Context `Features` plus `FeatureLists` of per-step features.

    Example
    -------
    >>> se = SequenceExample()
    >>> se.context.feature["len"].int64_list.value.append(2)
    >>> se.feature_lists.feature_list["w"].feature.add().bytes_list.value.append(b"hi")
    >>> SequenceExample.FromString(se.SerializeToString()) == se
    True
    """

    PROTO_NAME = "tensorflow.SequenceExample"
    FIELDS = ((1, "context", Features, False), (2, "feature_lists", FeatureLists, False))
