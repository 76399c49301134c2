"""TensorFlow's small protobuf messages of the ``tf`` namespace: ``NameAttrList`` (a
function name with attributes, ``attr_value.proto``), with TensorFlow's field numbers,
and ``LogMessage`` (``util/event.proto``: a log line of an event file), which is
`flowgraph.framework.event_messages.LogMessage` (one class, named
``tensorflow.LogMessage`` under the protobuf engine).

Example
-------
>>> import flowgraph as tf
>>> msg = tf.NameAttrList(name="f", attr={"T": tf.AttrValue(i=3)})
>>> tf.NameAttrList.FromString(msg.SerializeToString()).attr["T"].i
3
"""

from __future__ import annotations

from flowgraph.framework.event_format import AttrValue, LogMessage, Message

__all__ = ["LogMessage", "NameAttrList"]


class NameAttrList(Message):
    """A function reference: ``name`` and ``attr`` (name -> `AttrValue`)."""

    PROTO_NAME = "tensorflow.NameAttrList"
    FIELDS = ((1, "name", "string", False), (2, "attr", ("map", "string", AttrValue), True))

