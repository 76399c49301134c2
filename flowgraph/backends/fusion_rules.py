"""What every backend's fusion needs to know about an op beyond its arithmetic.

A fused group computes each member over the broadcast shape of the group's inputs, so a
member whose kernel *checks* shapes rather than broadcasting them may only join when the
static shapes prove the check passes. `BiasAdd` is the one such op among the fusible
ones: its kernel requires the bias to match the value's channels (fused, a size-1 bias
would just broadcast). `AddN` is the other: its kernel requires equal shapes.

>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     y = tf.nn.bias_add(tf.placeholder(tf.float32, [None, 3]), tf.zeros([3]))
>>> bias_add_fusible(y.op)
True
"""

from __future__ import annotations


def bias_add_fusible(op) -> bool:
    """Whether `op` (a ``BiasAdd``) is NHWC with a 1-D bias whose length the static shapes
    prove equal to the value's channels."""
    if op.attrs.get("data_format", "NHWC") not in ("NHWC", b"NHWC"):
        return False
    value, bias = (x.shape for x in op._inputs)
    if value.ndims is None or value.ndims < 2 or bias.ndims != 1:
        return False
    c, b = value.as_list()[-1], bias.as_list()[0]
    return c is not None and c == b


def add_n_fusible(op) -> bool:
    """Whether `op` (an ``AddN``) has two or more inputs whose static shapes are known and
    equal, so that broadcasting them in a fused kernel changes nothing.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a, b = tf.zeros([2, 3]), tf.placeholder(tf.float32, [None, 3])
    ...     known, unknown = tf.add_n([a, a]), tf.add_n([a, b])
    >>> add_n_fusible(known.op), add_n_fusible(unknown.op)
    (True, False)
    """
    shapes = [x.shape for x in op._inputs]
    return len(shapes) >= 2 and all(s.is_fully_defined() and s == shapes[0] for s in shapes)
