"""``CountUpTo``: increment an integer variable until it reaches a limit, then raise
`OutOfRangeError` (the epoch counter of `tf.train.limit_epochs` and the input producers).

Example
-------
>>> import flowgraph as tf
>>> v = tf.Variable(0, name="counter")
>>> step = tf.count_up_to(v, 2)
>>> with tf.Session() as sess:
...     sess.run(v.initializer)
...     print(sess.run(step), sess.run(step))
0 1
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_tensor
from flowgraph.ops.resource_variable_ops import resource_count_up_to

__all__ = ["count_up_to"]


def _count_dtype(op):
    return [op.inputs[0].dtype.base_dtype]


@register_op("CountUpTo", attrs={"limit": 0}, dtype_fn=_count_dtype, ref_inputs=(0,),
             stateful=True)
def _count_up_to_shape(op, ref):
    if not ref.is_compatible_with(TensorShape([])):
        raise op.shape_error(f"the counter must be a scalar variable, got shape {ref}")
    return [TensorShape([])]


not_differentiable("CountUpTo")


def count_up_to(ref, limit, name=None):
    """Add 1 to the int32/int64 scalar variable `ref` and return its value from before;
    once that value has reached `limit`, raise `OutOfRangeError` instead.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(tf.constant(5, tf.int64))
    >>> tf.count_up_to(v, 10).dtype.name
    'int64'
    """
    handle = getattr(ref, "handle", None)
    if handle is not None and handle.dtype.base_dtype == _dtypes.resource:
        # a resource variable: ResourceCountUpTo, as TensorFlow
        return resource_count_up_to(handle, limit, ref.dtype, name=name)
    t = getattr(ref, "_ref", None)
    t = t() if callable(t) else ref
    if not getattr(t, "dtype", None) or not t.dtype.is_ref_dtype:
        raise TypeError(f"count_up_to: '{getattr(ref, 'name', ref)}' is not a variable; "
                        "pass a tf.Variable")
    if t.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"count_up_to: the variable must be int32 or int64, got "
                        f"{t.dtype.base_dtype.name}")
    return make_tensor("CountUpTo", [t], {"limit": int(limit)}, name=name or "CountUpTo")
