"""Slot variables: per-variable optimizer state (momentum, Adam's moments, accumulators).

A slot of variable ``v`` made by optimizer ``Adam`` is the variable ``v/Adam`` (then
``v/Adam_1``, ... — names are made unique as TensorFlow's are), created at the root name
scope, colocated with ``v``, not trainable, in ``GLOBAL_VARIABLES`` only, and with the
shape and dtype of ``v`` unless told otherwise. Inside a variable scope the slot's name
starts with that scope, as in TF1 (``foo/v/Adam`` under ``variable_scope("foo")``, also
for `ExponentialMovingAverage`'s averages), so checkpoints key such slots as TF's do.

A slot of a part of a partitioned variable is partitioned like it: it gets the part's
``SaveSliceInfo`` (truncated to the slot's rank) under the full name plus the slot's
name, so a Saver writes the slots of ``emb/part_0`` and ``emb/part_1`` as the two slices
of one entry ``emb/Adam``, exactly TF's keys and slices. TF takes that slot name from the
slot variable's name (variable scope included) minus as many leading characters as the
primary's name has, plus one; under a variable scope this cuts elsewhere, and we keep its
result, so the keys stay TF's (the canned linear model, whose optimizer runs in scope
``linear``, saves ``linear/linear_model/x/weights/part_0/Ftrl``)::

    primary  emb/part_0  (slice of "emb" [4, 1] at [0, 0], [2, 1])
    slot     emb/part_0/Adam  ->  slice of "emb/Adam" [4, 1] at [0, 0], [2, 1]
    in variable_scope("foo"): TF's slot foo/emb/part_0/Adam -> slice of "emb/t_0/Adam"

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.train import slot_creator
>>> v = tf.Variable([1.0, 2.0], name="v")
>>> m = slot_creator.create_zeros_slot(v, "Adam")
>>> s = slot_creator.create_zeros_slot(v, "Adam")
>>> m.op.name, s.op.name, m.trainable
('v/Adam', 'v/Adam_1', False)
>>> emb = tf.get_variable("emb", [4, 1], partitioner=tf.fixed_size_partitioner(2))
>>> slot = slot_creator.create_zeros_slot(list(emb)[1], "Adam")
>>> slot.op.name, slot._save_slice_info.full_name, slot._save_slice_info.var_offset
('emb/part_1/Adam', 'emb/Adam', [2, 0])
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


def _set_slice_info(primary, op, slot) -> None:
    info = getattr(primary, "_save_slice_info", None)
    if info is None:
        return
    from flowgraph.ops.partitioned_variables import SaveSliceInfo

    # TensorFlow's rule, kept for its checkpoint keys (see the module docstring): TF's
    # slot is named "<variable scope>/<slot name>" and loses len(primary name) + 1 chars.
    real_name = slot.op.name[len(op.name) + 1:]
    rank = slot.shape.ndims
    if rank is None or rank > 0:
        n = len(info.full_shape) if rank is None else rank
        slot._save_slice_info = SaveSliceInfo(
            f"{info.full_name}/{real_name}", info.full_shape[:n], info.var_offset[:n],
            info.var_shape[:n])


def _make_slot(primary, initial_value, name: str, colocate_with_primary: bool,
               validate_shape: bool = True, dtype=None, shape=None) -> Variable:
    op = _primary_op(primary)
    graph = op.graph
    from flowgraph.ops.variable_scope import get_variable_scope

    with graph.as_default():
        scope = get_variable_scope().name
    with graph.as_default(), graph.name_scope(None):
        # TF opens variable_scope(None, "<primary>/<name>") here: under an enclosing
        # variable scope the slot's name starts with that scope
        full = f"{scope}/{op.name}/{name}" if scope else f"{op.name}/{name}"
        kwargs = {"trainable": False, "collections": [GraphKeys.GLOBAL_VARIABLES],
                  "name": full, "validate_shape": validate_shape,
                  "dtype": dtype,
                  # A resource variable's slots are resource variables, as in TensorFlow.
                  "use_resource": op.type == "VarHandleOp"}
        if shape is not None:
            kwargs["shape"] = shape
        if colocate_with_primary:
            with graph.colocate_with(op):
                slot = Variable(initial_value, **kwargs)
        else:
            slot = Variable(initial_value, **kwargs)
    _set_slice_info(primary, op, slot)
    return slot


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
