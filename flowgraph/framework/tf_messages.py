"""TensorFlow's small protobuf messages of the ``tf`` namespace that flowgraph had not
declared: ``NameAttrList`` (a function name with attributes, ``attr_value.proto``) and
``LogMessage`` (``util/event.proto``), with TensorFlow's field numbers.

Example
-------
>>> import flowgraph as tf
>>> msg = tf.NameAttrList(name="f", attr={"T": tf.AttrValue(i=3)})
>>> tf.NameAttrList.FromString(msg.SerializeToString()).attr["T"].i
3
"""

from __future__ import annotations

from flowgraph.framework.event_format import AttrValue, Message

__all__ = ["LogMessage", "NameAttrList"]


class NameAttrList(Message):
    """A function reference: ``name`` and ``attr`` (name -> `AttrValue`)."""

    PROTO_NAME = "tensorflow.NameAttrList"
    FIELDS = ((1, "name", "string", False), (2, "attr", ("map", "string", AttrValue), True))


class LogMessage(Message):
    """A log line in an event file: ``level`` (an enum: 10 DEBUGGING ... 50 FATAL) and
    ``message``."""

    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50
    FIELDS = ((1, "level", "enum", False), (2, "message", "string", False))
