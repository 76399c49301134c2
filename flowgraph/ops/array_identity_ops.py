"""Identity and stop_gradient, re-exported by `flowgraph.ops.array_ops`.

They live apart from `array_ops` (which re-exports the whole array family) so that op
modules below it, such as `math_reduce`, can use them without an import cycle.

Example
-------
>>> import flowgraph as tf
>>> tf.stop_gradient(tf.identity(tf.constant([1.0]))).op.type
'StopGradient'
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.op_util import make_tensor, op_scope

__all__ = ["identity", "stop_gradient"]


# -- Identity ---------------------------------------------------------------------------
@register_op("Identity")
def _identity_shape(op, x):
    return [x]


def identity(input, name: str | None = None):
    """Return a tensor with the same value as `input`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.identity(tf.constant([1, 2])).shape.as_list()
    [2]
    """
    # A composite keeps its kind, each component passed through its own Identity (named
    # "Identity", `name` unused), as TensorFlow maps identity over the components.
    if isinstance(input, IndexedSlices):
        values, indices = identity(input.values), identity(input.indices)
        shape = None if input.dense_shape is None else identity(input.dense_shape)
        return IndexedSlices(values, indices, shape)
    if isinstance(input, SparseTensor):
        return SparseTensor(identity(input.indices), identity(input.values),
                            identity(input.dense_shape))
    if hasattr(input, "_as_graph_element") and not hasattr(input, "op"):
        input = input._as_graph_element()
    with op_scope(name, "Identity", (input,)) as scope:
        x = convert_to_tensor(input, name="input")
        return make_tensor("Identity", [x], name=scope)


@register_op("StopGradient")
def _stop_gradient_shape(op, x):
    return [x]


not_differentiable("StopGradient")


def stop_gradient(input, name: str | None = None):
    """Identity in the forward pass; blocks gradients from flowing through.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.stop_gradient(tf.constant(1.0)).op.type
    'StopGradient'
    """
    return make_tensor("StopGradient", [convert_to_tensor(input)], name=name or "StopGradient")
