"""``tf.user_ops``: the example op TensorFlow ships for its "adding an op" guide.

``Fact`` takes no input and outputs the string ``b"0! == 1"`` (a scalar whose shape the
op does not declare), as TensorFlow's ``core/user_ops`` example kernel does.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.user_ops.my_fact()))
b'0! == 1'
"""

from __future__ import annotations

import types

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_tensor

__all__ = ["my_fact", "user_ops"]


@register_op("Fact", dtype_fn=fixed_dtype(_dtypes.string))
def _fact_shape(op):
    return [TensorShape(None)]  # TensorFlow's op registers no shape function


not_differentiable("Fact")


def my_fact(name: str | None = None):
    """The example user op: a string tensor holding ``b"0! == 1"``."""
    return make_tensor("Fact", [], name=name or "Fact")


user_ops = types.SimpleNamespace(my_fact=my_fact)
