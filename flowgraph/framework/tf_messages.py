"""TensorFlow's small protobuf messages of the ``tf`` namespace: ``NameAttrList`` (a
function name with attributes, ``attr_value.proto``, an `AttrValue`'s ``func``) and
``LogMessage`` (``util/event.proto``: a log line of an event file), both the classes of
`flowgraph.framework.event_messages` (one class each under the protobuf engine).

Example
-------
>>> import flowgraph as tf
>>> msg = tf.NameAttrList(name="f", attr={"T": tf.AttrValue(i=3)})
>>> tf.NameAttrList.FromString(msg.SerializeToString()).attr["T"].i
3
"""

from __future__ import annotations

from flowgraph.framework.event_format import LogMessage, NameAttrList

__all__ = ["LogMessage", "NameAttrList"]
