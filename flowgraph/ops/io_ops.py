"""Checkpoint reading inside a graph: the ``RestoreV2`` op.

``RestoreV2(prefix, tensor_names, shape_and_slices)`` has one output per name, of the
dtypes in its ``dtypes`` attribute, read from the checkpoint file `prefix` (see
`flowgraph.framework.checkpoint_file`) when the op runs. `tf.train.init_from_checkpoint`
builds it. Kernel: `flowgraph/backends/cpu/kernels_io.py`.

Example
-------
>>> import flowgraph as tf
>>> (w,) = restore_v2("/tmp/model.ckpt-1", ["w"], [tf.float32])
>>> w.op.type, w.dtype.name
('RestoreV2', 'float32')
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["restore_v2"]


@register_op("RestoreV2", attrs={"dtypes": ()}, stateful=True,
             num_outputs=lambda op: len(op.attrs["dtypes"]),
             dtype_fn=lambda op: [_dtypes.as_dtype(d) for d in op.attrs["dtypes"]])
def _restore_v2_shape(op, prefix, tensor_names, shape_and_slices):
    return [TensorShape(None)] * len(op.attrs["dtypes"])


not_differentiable("RestoreV2")


def restore_v2(prefix: str, tensor_names, dtypes, name: str = "RestoreV2"):
    """The tensors `tensor_names` of checkpoint `prefix`, read when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> a, b = restore_v2("/tmp/ckpt", ["a", "b"], [tf.float32, tf.int64])
    >>> b.dtype.name
    'int64'
    """
    graph = get_default_graph()
    with graph.name_scope(name) as scope:
        inputs = [constant(prefix, name="prefix"),
                  constant(list(tensor_names), name="tensor_names"),
                  constant([""] * len(tensor_names), name="shape_and_slices")]
        op = graph.create_op("RestoreV2", inputs, {"dtypes": list(dtypes)}, name=scope)
    return op.outputs
