"""Barriers: ``Barrier``, ``BarrierInsertMany``, ``BarrierTakeMany``, ``BarrierClose``,
``BarrierReadySize``, ``BarrierIncompleteSize``.

A barrier is a map from string keys to elements of several components, each inserted
on its own (``BarrierInsertMany`` sets one component for a batch of keys). An element
whose components are all set is *ready*; ``BarrierTakeMany`` takes ready elements,
oldest insertion batch first, blocking until there are enough, and returns for each
its insertion index, its key and its components. Closing refuses new keys while
existing ones may still complete (unless ``cancel_pending_enqueues``). The handle is a
v1 ref to a 2-vector of strings; the kernels are in
`flowgraph/backends/cpu/kernels_barrier.py`. TensorFlow 2.15 builds these op types
only through ``tf.raw_ops``.

Example
-------
>>> import flowgraph as tf
>>> b = tf.raw_ops.Barrier(component_types=[tf.float32, tf.int32], shapes=[[], []])
>>> put_x = tf.raw_ops.BarrierInsertMany(handle=b, keys=["a", "b"], values=[1.0, 2.0],
...                                      component_index=0)
>>> put_y = tf.raw_ops.BarrierInsertMany(handle=b, keys=["b"], values=[7], component_index=1)
>>> out = tf.raw_ops.BarrierTakeMany(handle=b, num_elements=1,
...                                  component_types=[tf.float32, tf.int32])
>>> with tf.Session() as sess:
...     _ = sess.run([put_x, put_y])
...     print(sess.run(out[1:]))
(array([b'b'], dtype=object), array([2.], dtype=float32), array([7], dtype=int32))
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype
from flowgraph.ops.state_v1_ops import check_handle

__all__: list[str] = []


@register_op("Barrier", attrs={"component_types": None, "shapes": [], "capacity": -1,
                               "container": "", "shared_name": ""},
             dtype_fn=fixed_dtype(_dtypes.string), stateful=True, ref_outputs=(0,))
def _barrier_shape(op):
    return [TensorShape([2])]


@register_op("BarrierInsertMany", attrs={"component_index": None}, num_outputs=0,
             dtype_fn=lambda op: [], stateful=True, ref_inputs=(0,))
def _insert_shape(op, handle, keys, values):
    check_handle(op, handle, 0)
    if keys.ndims not in (None, 1):
        raise op.shape_error(f"keys must be a vector, got shape {keys}")
    if values.ndims == 0:
        raise op.shape_error("values must have rank >= 1 (one row per key), got a scalar")
    if keys.ndims == 1 and values.ndims is not None and \
            not keys[0].is_compatible_with(values[0]):
        raise op.shape_error(f"keys and values must have the same first dimension, got "
                             f"{keys} and {values}")
    return []


def _take_count(op) -> int:
    return 2 + len(op.attrs["component_types"])


@register_op("BarrierTakeMany", attrs={"component_types": None, "allow_small_batch": False,
                                       "wait_for_incomplete": False, "timeout_ms": -1},
             num_outputs=_take_count, stateful=True, ref_inputs=(0,),
             dtype_fn=lambda op: [_dtypes.int64, _dtypes.string,
                                  *[_dtypes.as_dtype(d) for d in op.attrs["component_types"]]])
def _take_shape(op, handle, num_elements):
    check_handle(op, handle, 0)
    if num_elements.ndims not in (None, 0):
        raise op.shape_error(f"num_elements must be a scalar, got shape {num_elements}")
    return [TensorShape(None)] * _take_count(op)


register_op("BarrierClose", attrs={"cancel_pending_enqueues": False}, num_outputs=0,
            dtype_fn=lambda op: [], stateful=True, ref_inputs=(0,))(
    lambda op, handle: check_handle(op, handle, 0) or [])
for _name in ("BarrierReadySize", "BarrierIncompleteSize"):
    register_op(_name, dtype_fn=fixed_dtype(_dtypes.int32), stateful=True, ref_inputs=(0,))(
        lambda op, handle: check_handle(op, handle, 0) or [TensorShape([])])

not_differentiable("Barrier", "BarrierInsertMany", "BarrierTakeMany", "BarrierClose",
                   "BarrierReadySize", "BarrierIncompleteSize")
