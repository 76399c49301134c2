"""Slot variables: per-variable optimizer state (momentum, Adam's moments, accumulators).

A slot of variable ``v`` made by optimizer ``Adam`` is the variable ``v/Adam`` (then
``v/Adam_1``, ... — names are made unique as TensorFlow's are), created at the root name
scope, colocated with ``v``, not trainable, in ``GLOBAL_VARIABLES`` only, and with the
shape and dtype of ``v`` unless told otherwise. Checkpoints written by TF1 therefore name
slots the same way.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.train import slot_creator
>>> v = tf.Variable([1.0, 2.0], name="v")
>>> m = slot_creator.create_zeros_slot(v, "Adam")
>>> s = slot_creator.create_zeros_slot(v, "Adam")
>>> m.op.name, s.op.name, m.trainable
('v/Adam', 'v/Adam_1', False)
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys
from flowgraph.framework.tensor_shape import as_shape
from flowgraph.ops.variables import Variable

__all__ = ["create_slot", "create_slot_with_initializer", "create_zeros_slot"]


def _primary_op(primary):
    op = getattr(primary, "op", None)
    if op is None:
        raise TypeError(f"slot_creator: the primary must be a Variable or a Tensor, got "
                        f"{primary!r}")
    return op


def _make_slot(primary, initial_value, name: str, colocate_with_primary: bool,
               validate_shape: bool = True, dtype=None, shape=None) -> Variable:
    op = _primary_op(primary)
    graph = op.graph
    with graph.as_default(), graph.name_scope(None):
        kwargs = {"trainable": False, "collections": [GraphKeys.GLOBAL_VARIABLES],
                  "name": f"{op.name}/{name}", "validate_shape": validate_shape,
                  "dtype": dtype}
        if shape is not None:
            kwargs["shape"] = shape
        if colocate_with_primary:
            with graph.colocate_with(op):
                return Variable(initial_value, **kwargs)
        return Variable(initial_value, **kwargs)


def create_slot(primary, val, name: str, colocate_with_primary: bool = True) -> Variable:
    """A slot for `primary` initialized to the tensor or value `val`.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable([1.0, 2.0], name="w")
    >>> create_slot(v, v.initialized_value(), "Momentum").op.name
    'w/Momentum'
    """
    static = convert_to_tensor(val).shape if not callable(val) else None
    validate = static is None or static.is_fully_defined()
    return _make_slot(primary, val, name, colocate_with_primary, validate_shape=validate)


def create_slot_with_initializer(primary, initializer, shape, dtype, name: str,
                                 colocate_with_primary: bool = True) -> Variable:
    """A slot for `primary` of `shape` and `dtype`, initialized by `initializer`
    (a ``tf.*_initializer``, called as ``initializer(shape, dtype=dtype)``).

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable([1.0, 2.0], name="u")
    >>> s = create_slot_with_initializer(v, tf.ones_initializer(), [2], tf.float32, "RMSProp")
    >>> s.op.name, s.shape.as_list()
    ('u/RMSProp', [2])
    """
    shape = as_shape(shape)
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if shape.is_fully_defined():
        dims = shape.as_list()
        return _make_slot(primary, lambda: initializer(dims, dtype=dtype), name,
                          colocate_with_primary, dtype=dtype)
    from flowgraph.ops import array_ops

    def dynamic():
        return initializer(array_ops.shape(primary.initialized_value()), dtype=dtype)

    return _make_slot(primary, dynamic, name, colocate_with_primary, validate_shape=False,
                      dtype=dtype)


def create_zeros_slot(primary, name: str, dtype=None,
                      colocate_with_primary: bool = True) -> Variable:
    """A slot of zeros shaped like `primary` (dtype: `primary`'s unless given).

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable([[1.0, 2.0, 3.0]], name="x")
    >>> create_zeros_slot(v, "Adagrad").shape.as_list()
    [1, 3]
    """
    from flowgraph.ops import init_ops

    dtype = _dtypes.as_dtype(dtype or primary.dtype).base_dtype
    return create_slot_with_initializer(primary, init_ops.zeros_initializer(),
                                        primary.shape, dtype, name, colocate_with_primary)
