"""TensorMap ops: a ``variant`` map from scalar keys to tensors, a value as the lists of
``list_ops.py`` are (an insert or erase returns a new map). Keys of different dtypes are
different keys (an int64 2 is not an int32 2), as in TensorFlow. None has a gradient (as
in TensorFlow, where only the map's own value gradients exist in eager mode). Kernels:
`flowgraph/backends/cpu/kernels_tensor_list.py`.

=======================  ===========================================================
op type                  does
=======================  ===========================================================
``EmptyTensorMap``       an empty map
``TensorMapInsert``      a copy with ``key`` set to ``value`` (replacing it)
``TensorMapErase``       a copy without ``key`` (InvalidArgumentError when absent)
``TensorMapLookup``      the value of ``key`` (InvalidArgumentError when absent)
``TensorMapHasKey``      whether ``key`` is there (bool)
``TensorMapSize``        the number of keys (int32)
``TensorMapStackKeys``   the keys as a vector (InvalidArgumentError on an empty map)
=======================  ===========================================================

Example
-------
>>> import flowgraph as tf
>>> m = tf.raw_ops.TensorMapInsert(input_handle=tf.raw_ops.EmptyTensorMap(), key=3,
...                                value=[1.0, 2.0])
>>> tf.Session().run(tf.raw_ops.TensorMapLookup(input_handle=m, key=3,
...                                             value_dtype=tf.float32)).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _array
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_tensor

__all__: list[str] = []  # reached through tf.raw_ops and imported graphs

_VARIANT = _dtypes.variant
_SCALAR = TensorShape([])
_MAP_OUT = {"dtype_fn": fixed_dtype(_VARIANT)}


def _check_variant(op, pos: int = 0) -> None:
    t = op.inputs[pos]
    if t.dtype.base_dtype != _VARIANT or t.shape.ndims not in (None, 0):
        raise op.shape_error(f"input 'input_handle' must be a scalar variant (a TensorMap), "
                             f"found {t.dtype.base_dtype.name} of shape {t.shape}")


register_op("EmptyTensorMap", **_MAP_OUT)(lambda op: [_SCALAR])


@register_op("TensorMapInsert", **_MAP_OUT)  # key_dtype, value_dtype: from the inputs
def _map_insert_shape(op, input_handle, key, value):
    _check_variant(op)
    return [_SCALAR]


@register_op("TensorMapErase", attrs={"value_dtype": None}, **_MAP_OUT)
def _map_erase_shape(op, input_handle, key):
    _check_variant(op)
    return [_SCALAR]


@register_op("TensorMapLookup", attrs={"value_dtype": None},
             dtype_fn=attr_dtype("value_dtype"))
def _map_lookup_shape(op, input_handle, key):
    _check_variant(op)
    return [TensorShape(None)]


@register_op("TensorMapHasKey", dtype_fn=fixed_dtype(_dtypes.bool))
def _map_has_key_shape(op, input_handle, key):
    _check_variant(op)
    return [_SCALAR]


@register_op("TensorMapSize", dtype_fn=fixed_dtype(_dtypes.int32))
def _map_size_shape(op, input_handle):
    _check_variant(op)
    return [_SCALAR]


@register_op("TensorMapStackKeys", attrs={"key_dtype": None}, dtype_fn=attr_dtype("key_dtype"))
def _map_stack_keys_shape(op, input_handle):
    _check_variant(op)
    return [TensorShape([None])]


not_differentiable("EmptyTensorMap", "TensorMapHasKey", "TensorMapSize", "TensorMapStackKeys")


# -- wrappers and gradients ----------------------------------------------------------------
def _key_dtype(key):
    return key.dtype.base_dtype


def empty_tensor_map(name=None):
    return make_tensor("EmptyTensorMap", [], name=name)


def tensor_map_insert(handle, key, value, name=None):
    key, value = convert_to_tensor(key), convert_to_tensor(value)
    return make_tensor("TensorMapInsert", [handle, key, value],
                       {"key_dtype": _key_dtype(key), "value_dtype": value.dtype.base_dtype},
                       name=name)


def tensor_map_lookup(handle, key, value_dtype, name=None):
    key = convert_to_tensor(key)
    return make_tensor("TensorMapLookup", [handle, key],
                       {"key_dtype": _key_dtype(key),
                        "value_dtype": _dtypes.as_dtype(value_dtype).base_dtype}, name=name)


def tensor_map_erase(handle, key, value_dtype, name=None):
    key = convert_to_tensor(key)
    return make_tensor("TensorMapErase", [handle, key],
                       {"key_dtype": _key_dtype(key),
                        "value_dtype": _dtypes.as_dtype(value_dtype).base_dtype}, name=name)


def tensor_map_has_key(handle, key, name=None):
    key = convert_to_tensor(key)
    return make_tensor("TensorMapHasKey", [handle, key], {"key_dtype": _key_dtype(key)},
                       name=name)


@register_gradient("TensorMapLookup")
def _lookup_grad(op, dvalue):
    return [tensor_map_insert(empty_tensor_map(), op.inputs[1], dvalue), None]


@register_gradient("TensorMapInsert")
def _insert_grad(op, dmap):
    key, value = op.inputs[1], op.inputs[2]
    dvalue, dmap_in = cond(
        tensor_map_has_key(dmap, key),
        lambda: (tensor_map_lookup(dmap, key, value.dtype),
                 tensor_map_erase(dmap, key, value.dtype)),
        lambda: (_array.zeros_like(value), _array.identity(dmap)))
    return [dmap_in, None, dvalue]


@register_gradient("TensorMapErase")
def _erase_grad(op, dmap):
    return [dmap, None]
