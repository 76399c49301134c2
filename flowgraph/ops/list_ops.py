"""TensorList ops: the ``variant`` values TensorFlow 2 writes into graphs
for a ``tf.TensorArray`` inside a ``tf.function`` (``TensorListReserve``,
``TensorListSetItem``, ``TensorListStack``, ...) and for the accumulators of v2 while
loops' gradients (``TensorListPushBack`` / ``TensorListPopBack``), with TensorFlow's
gradients. Kernels: `flowgraph/backends/cpu/kernels_tensor_list.py`.

A list is a value: an op that changes one returns a new list and leaves its input as it
was, so one list may feed any number of ops. Its *element shape* (the ``element_shape``
input of the op that made it: a vector with -1 for unknown dimensions, or the scalar -1
for an unknown rank) constrains what may be stored; reading a slot never written gives
zeros once the element shape is known. A list's gradient is a list of the same length
(uninitialized slots standing for zeros); gradients of one list add item by item.

=====================================  ================================================
op type                                does
=====================================  ================================================
``EmptyTensorList``                    an empty list (``max_num_elements``, -1: any)
``TensorListReserve``                  ``num_elements`` uninitialized slots
``TensorListFromTensor``               the rows of a tensor
``TensorListSplit``                    a tensor cut into pieces of ``lengths`` rows
``TensorListScatter`` / ``...V2``      rows put at ``indices`` of a new list
``TensorListScatterIntoExistingList``  rows put at ``indices`` of a copy of a list
``TensorListSetItem``                  a copy with one slot replaced
``TensorListPushBack`` / ``...Batch``  a copy with one more item (per list of a batch)
``TensorListPopBack``                  a copy without its last item, and that item
``TensorListResize``                   a copy cut or padded to ``size`` slots
``TensorListConcatLists``              two lists (or batches of lists) joined
``TensorListGetItem``                  one item
``TensorListStack`` / ``...Gather``    all items / the items at ``indices``, stacked
``TensorListConcat`` / ``...V2``       the items concatenated, and their lengths
``TensorListLength``                   the number of slots (int32)
``TensorListElementShape``             the element shape (-1 for unknown)
=====================================  ================================================

The TensorMap ops, values in the same way, are in ``map_ops.py``.

Example
-------
>>> import flowgraph as tf
>>> lst = tf.raw_ops.TensorListReserve(element_shape=[2], num_elements=3,
...                                    element_dtype=tf.float32)
>>> lst = tf.raw_ops.TensorListSetItem(input_handle=lst, index=1, item=[1.0, 2.0])
>>> out = tf.raw_ops.TensorListStack(input_handle=lst, element_shape=[2],
...                                  element_dtype=tf.float32)
>>> tf.Session().run(out).tolist()
[[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant,
    constant_value,
    constant_value_as_shape,
    convert_to_tensor,
)
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import array_gen_ops as _array_gen
from flowgraph.ops import array_ops as _array
from flowgraph.ops import segment_ops as _segments
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor

__all__: list[str] = []  # reached through tf.raw_ops and imported graphs

_VARIANT = _dtypes.variant
_SCALAR = TensorShape([])


# -- shape helpers -----------------------------------------------------------------------
def _element_shape(t) -> TensorShape:
    """The element shape an ``element_shape`` input states, as far as it is constant."""
    if t.shape.ndims == 0:
        value = constant_value(t)
        if value is not None and int(value) != -1:
            return TensorShape([])  # not a valid element shape; the kernel says so
        return TensorShape(None)
    return constant_value_as_shape(t)


# What a list's producers say about its elements, as TensorFlow's "handle data" does:
# op type -> the position of its element_shape input (the shape of the rows it was made
# from does not count, as in TensorFlow). Ops that copy a list (SetItem, PushBack, ...)
# pass input 0's on.
_MAKERS = {"EmptyTensorList": 0, "TensorListReserve": 0, "TensorListFromTensor": 1,
           "TensorListScatter": 2, "TensorListScatterV2": 2, "TensorListSplit": None}
_COPIES = frozenset({"TensorListSetItem", "TensorListPushBack", "TensorListResize",
                     "TensorListScatterIntoExistingList", "TensorListPopBack"})


def list_element_info(t, depth: int = 64):
    """(element dtype or None, element TensorShape) of the list tensor `t`, from the ops
    that made it; unknown where the chain leaves list ops (a loop's Merge, a feed)."""
    for _ in range(depth):
        op = t.op
        if op.type in _COPIES and t.value_index == 0:
            t = op.inputs[0]
            continue
        if op.type not in _MAKERS:
            break
        dtype = op.attrs.get("element_dtype")
        if dtype is None and op.type not in ("EmptyTensorList", "TensorListReserve"):
            dtype = op.inputs[0].dtype.base_dtype
        pos = _MAKERS[op.type]
        shape = _element_shape(op.inputs[pos]) if pos is not None else TensorShape(None)
        return (None if dtype is None else _dtypes.as_dtype(dtype).base_dtype), shape
    return None, TensorShape(None)


def _known_element(op, pos: int, given: TensorShape) -> TensorShape:
    """`given` merged with what the list at input `pos` is known to hold; checks the
    op's ``element_dtype`` against the list's."""
    dtype, shape = list_element_info(op.inputs[pos])
    want = op.attrs.get("element_dtype")
    if dtype is not None and want is not None and _dtypes.as_dtype(want).base_dtype != dtype:
        raise op.shape_error(f"expected a list with element dtype "
                             f"{_dtypes.as_dtype(want).name} (element_dtype), got a list "
                             f"with element dtype {dtype.name}")
    return given.merge_with(shape) if given.is_compatible_with(shape) else given


def _check_item(op, pos: int, item: TensorShape) -> None:
    """An item stored into the list at input `pos` must have its element shape."""
    _, shape = list_element_info(op.inputs[pos])
    if not shape.is_compatible_with(item):
        raise op.shape_error(f"the item's shape {item} is not the list's element shape "
                             f"{shape}")


def _check_variant(op, pos: int, name: str, rank: int | None = 0) -> None:
    t = op.inputs[pos]
    if t.dtype.base_dtype != _VARIANT:
        raise op.shape_error(f"input '{name}' must be a variant (a TensorList), found "
                             f"{t.dtype.base_dtype.name}")
    if rank is not None and t.shape.ndims not in (None, rank):
        raise op.shape_error(f"input '{name}' must be a scalar list, found shape {t.shape}")


def _check_int(op, pos: int, name: str, rank: int | None) -> None:
    t = op.inputs[pos]
    if not t.dtype.base_dtype.is_integer:
        raise op.shape_error(f"input '{name}' must be an integer tensor, found "
                             f"{t.dtype.base_dtype.name}")
    if rank is not None and t.shape.ndims not in (None, rank):
        raise op.shape_error(f"input '{name}' must have rank {rank}, found shape {t.shape}")


def _check_shape_input(op, pos: int) -> None:
    _check_int(op, pos, "element_shape", None)
    if op.inputs[pos].shape.ndims not in (None, 0, 1):
        raise op.shape_error(f"input 'element_shape' must be a vector or the scalar -1, "
                             f"found shape {op.inputs[pos].shape}")


def _element_dtype(op):
    return [_dtypes.as_dtype(op.attrs["element_dtype"])]


def _rows(shape: TensorShape, n=None) -> TensorShape:
    return TensorShape([n]).concatenate(shape) if shape.ndims is not None else TensorShape(None)


# Type attributes TensorFlow infers from an input (``shape_type`` from element_shape, the
# ``element_dtype`` of ops given a tensor of elements) are not declared: a GraphDef export
# then fills them in from the inputs' dtypes, and the kernels read the values themselves.
_LIST_OUT = {"dtype_fn": fixed_dtype(_VARIANT)}
_ELEMENT = {"element_dtype": None}


# -- registrations: making lists --------------------------------------------------------
@register_op("EmptyTensorList", attrs=dict(_ELEMENT), **_LIST_OUT)
def _empty_shape(op, element_shape, max_num_elements):
    _check_shape_input(op, 0)
    _check_int(op, 1, "max_num_elements", 0)
    return [_SCALAR]


@register_op("TensorListReserve", attrs=dict(_ELEMENT), **_LIST_OUT)
def _reserve_shape(op, element_shape, num_elements):
    _check_shape_input(op, 0)
    _check_int(op, 1, "num_elements", 0)
    return [_SCALAR]


@register_op("TensorListFromTensor", **_LIST_OUT)
def _from_tensor_shape(op, tensor, element_shape):
    _check_shape_input(op, 1)
    given = _element_shape(op.inputs[1])  # a scalar tensor fails when the op runs, as in TF
    if tensor.ndims and not given.is_compatible_with(tensor[1:]):
        raise op.shape_error(f"the rows of 'tensor' (shape {tensor[1:]}) do not have the "
                             f"element shape {given}")
    return [_SCALAR]


@register_op("TensorListSplit", **_LIST_OUT)
def _split_shape(op, tensor, element_shape, lengths):
    _check_shape_input(op, 1)
    _check_int(op, 2, "lengths", 1)
    if tensor.ndims == 0:
        raise op.shape_error("input 'tensor' must be at least a vector, found a scalar")
    return [_SCALAR]


@register_op("TensorListScatter", **_LIST_OUT)
def _scatter_shape(op, tensor, indices, element_shape):
    _check_int(op, 1, "indices", 1)
    _check_shape_input(op, 2)
    return [_SCALAR]


@register_op("TensorListScatterV2", **_LIST_OUT)
def _scatter_v2_shape(op, tensor, indices, element_shape, num_elements):
    _check_int(op, 1, "indices", 1)
    _check_shape_input(op, 2)
    _check_int(op, 3, "num_elements", 0)
    return [_SCALAR]


@register_op("TensorListScatterIntoExistingList", **_LIST_OUT)
def _scatter_existing_shape(op, input_handle, tensor, indices):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 2, "indices", 1)
    return [_SCALAR]


@register_op("TensorListSetItem", attrs={"resize_if_index_out_of_bounds": False},
             **_LIST_OUT)
def _set_item_shape(op, input_handle, index, item):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 1, "index", 0)
    _check_item(op, 0, item)
    return [_SCALAR]


@register_op("TensorListPushBack", **_LIST_OUT)
def _push_back_shape(op, input_handle, tensor):
    _check_variant(op, 0, "input_handle")
    _check_item(op, 0, tensor)
    return [_SCALAR]


@register_op("TensorListPushBackBatch", **_LIST_OUT)
def _push_back_batch_shape(op, input_handles, tensor):
    _check_variant(op, 0, "input_handles", 1)
    if tensor.ndims == 0:
        raise op.shape_error("input 'tensor' must have one row per list, found a scalar")
    batch = input_handles.merge_with(tensor[:1]) if tensor.ndims is not None else \
        input_handles.merge_with(TensorShape([None]))
    return [batch]


@register_op("TensorListResize", **_LIST_OUT)
def _resize_shape(op, input_handle, size):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 1, "size", 0)
    return [_SCALAR]


@register_op("TensorListConcatLists", attrs={"element_dtype": None}, **_LIST_OUT)
def _concat_lists_shape(op, input_a, input_b):
    _check_variant(op, 0, "input_a", None)
    _check_variant(op, 1, "input_b", None)
    if not input_a.is_compatible_with(input_b):
        raise op.shape_error(f"input_a and input_b must have the same shape, found "
                             f"{input_a} and {input_b}")
    return [input_a.merge_with(input_b)]


@register_op("TensorListPopBack", attrs={"element_dtype": None}, num_outputs=2,
             dtype_fn=lambda op: [_VARIANT, _dtypes.as_dtype(op.attrs["element_dtype"])])
def _pop_back_shape(op, input_handle, element_shape):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 1, "element_shape", None)
    return [_SCALAR, _known_element(op, 0, _element_shape(op.inputs[1]))]


# -- registrations: reading lists -------------------------------------------------------
@register_op("TensorListLength", dtype_fn=fixed_dtype(_dtypes.int32))
def _length_shape(op, input_handle):
    _check_variant(op, 0, "input_handle")
    return [_SCALAR]


@register_op("TensorListElementShape", attrs={"shape_type": _dtypes.int32},
             dtype_fn=attr_dtype("shape_type"))
def _element_shape_shape(op, input_handle):
    _check_variant(op, 0, "input_handle")
    rank = list_element_info(op.inputs[0])[1].ndims
    # a vector, or the scalar -1 for an unknown rank
    return [TensorShape(None) if rank is None else TensorShape([rank])]


@register_op("TensorListGetItem", attrs={"element_dtype": None}, dtype_fn=_element_dtype)
def _get_item_shape(op, input_handle, index, element_shape):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 1, "index", 0)
    return [_known_element(op, 0, _element_shape(op.inputs[2]))]


@register_op("TensorListStack", attrs={"element_dtype": None, "num_elements": -1},
             dtype_fn=_element_dtype)
def _stack_shape(op, input_handle, element_shape):
    _check_variant(op, 0, "input_handle")
    n = op.attrs.get("num_elements", -1)
    return [_rows(_known_element(op, 0, _element_shape(op.inputs[1])),
                  None if n is None or n < 0 else n)]


@register_op("TensorListGather", attrs={"element_dtype": None}, dtype_fn=_element_dtype)
def _gather_shape(op, input_handle, indices, element_shape):
    _check_variant(op, 0, "input_handle")
    _check_int(op, 1, "indices", 1)
    n = indices[0] if indices.ndims == 1 else None
    return [_rows(_known_element(op, 0, _element_shape(op.inputs[2])), n)]


def _concat_out(op, rest: TensorShape):
    return [_rows(rest), TensorShape([None])]


@register_op("TensorListConcat", attrs={"element_dtype": None, "element_shape": None},
             num_outputs=2,
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["element_dtype"]), _dtypes.int64])
def _concat_shape(op, input_handle):
    _check_variant(op, 0, "input_handle")
    shape = _known_element(op, 0, as_shape(op.attrs.get("element_shape")))
    return _concat_out(op, shape[1:] if shape.ndims else TensorShape(None))


@register_op("TensorListConcatV2", attrs=dict(_ELEMENT), num_outputs=2,
             dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["element_dtype"]), _dtypes.int64])
def _concat_v2_shape(op, input_handle, element_shape, leading_dims):
    _check_variant(op, 0, "input_handle")
    _check_shape_input(op, 1)
    _check_int(op, 2, "leading_dims", 1)
    shape = _known_element(op, 0, _element_shape(op.inputs[1]))
    return _concat_out(op, shape[1:] if shape.ndims else TensorShape(None))


not_differentiable("TensorListConcatLists", "TensorListElementShape", "TensorListLength",
                   "TensorListPushBackBatch", "EmptyTensorList", "TensorListReserve")


# -- wrappers (TensorFlow's gen_list_ops names), used by the gradients ------------------
def _shape_tensor(shape) -> object:
    """An ``element_shape`` input: a tensor as it is, else a constant (-1 for unknown)."""
    if hasattr(shape, "dtype") and hasattr(shape, "op"):
        return shape
    shape = as_shape(shape) if not isinstance(shape, int | np.integer) else None
    if shape is None or shape.ndims is None:
        return constant(np.int32(-1))
    return constant(np.array([-1 if d.value is None else d.value for d in shape.dims],
                             np.int32))


def _dt(dtype):
    return _dtypes.as_dtype(dtype).base_dtype


def tensor_list_reserve(element_shape, num_elements, element_dtype, name=None):
    es = _shape_tensor(element_shape)
    return make_tensor("TensorListReserve", [es, convert_to_tensor(num_elements, _dtypes.int32)],
                       {"element_dtype": _dt(element_dtype), "shape_type": es.dtype},
                       name=name)


def empty_tensor_list(element_shape, element_dtype, max_num_elements=-1, name=None):
    es = _shape_tensor(element_shape)
    return make_tensor("EmptyTensorList",
                       [es, convert_to_tensor(max_num_elements, _dtypes.int32)],
                       {"element_dtype": _dt(element_dtype), "shape_type": es.dtype},
                       name=name)


def tensor_list_from_tensor(tensor, element_shape, name=None):
    tensor = convert_to_tensor(tensor)
    es = _shape_tensor(element_shape)
    return make_tensor("TensorListFromTensor", [tensor, es],
                       {"element_dtype": tensor.dtype.base_dtype, "shape_type": es.dtype},
                       name=name)


def tensor_list_stack(handle, element_dtype, element_shape=-1, num_elements=-1, name=None):
    return make_tensor("TensorListStack", [handle, _shape_tensor(element_shape)],
                       {"element_dtype": _dt(element_dtype),
                        "num_elements": -1 if num_elements is None else int(num_elements)},
                       name=name)


def tensor_list_get_item(handle, index, element_dtype, element_shape=-1, name=None):
    return make_tensor("TensorListGetItem",
                       [handle, convert_to_tensor(index, _dtypes.int32),
                        _shape_tensor(element_shape)],
                       {"element_dtype": _dt(element_dtype)}, name=name)


def tensor_list_set_item(handle, index, item, resize_if_index_out_of_bounds=False, name=None):
    item = convert_to_tensor(item)
    return make_tensor("TensorListSetItem",
                       [handle, convert_to_tensor(index, _dtypes.int32), item],
                       {"element_dtype": item.dtype.base_dtype,
                        "resize_if_index_out_of_bounds": bool(resize_if_index_out_of_bounds)},
                       name=name)


def tensor_list_push_back(handle, tensor, name=None):
    tensor = convert_to_tensor(tensor)
    return make_tensor("TensorListPushBack", [handle, tensor],
                       {"element_dtype": tensor.dtype.base_dtype}, name=name)


def tensor_list_pop_back(handle, element_dtype, element_shape=-1, name=None):
    op = make_op("TensorListPopBack", [handle, _shape_tensor(element_shape)],
                 {"element_dtype": _dt(element_dtype)}, name=name)
    return op.outputs[0], op.outputs[1]


def tensor_list_length(handle, name=None):
    return make_tensor("TensorListLength", [handle], name=name)


def tensor_list_element_shape(handle, shape_type=_dtypes.int32, name=None):
    return make_tensor("TensorListElementShape", [handle], {"shape_type": _dt(shape_type)},
                       name=name)


def tensor_list_gather(handle, indices, element_dtype, element_shape=-1, name=None):
    return make_tensor("TensorListGather",
                       [handle, convert_to_tensor(indices, _dtypes.int32),
                        _shape_tensor(element_shape)],
                       {"element_dtype": _dt(element_dtype)}, name=name)


def tensor_list_scatter(tensor, indices, element_shape=-1, num_elements=None, name=None):
    tensor = convert_to_tensor(tensor)
    es = _shape_tensor(element_shape)
    ins = [tensor, convert_to_tensor(indices, _dtypes.int32), es]
    op_type = "TensorListScatter"
    if num_elements is not None:
        ins.append(convert_to_tensor(num_elements, _dtypes.int32))
        op_type = "TensorListScatterV2"
    return make_tensor(op_type, ins, {"element_dtype": tensor.dtype.base_dtype,
                                      "shape_type": es.dtype}, name=name)


def tensor_list_scatter_into(handle, tensor, indices, name=None):
    tensor = convert_to_tensor(tensor)
    return make_tensor("TensorListScatterIntoExistingList",
                       [handle, tensor, convert_to_tensor(indices, _dtypes.int32)],
                       {"element_dtype": tensor.dtype.base_dtype}, name=name)


def tensor_list_split(tensor, element_shape, lengths, name=None):
    tensor = convert_to_tensor(tensor)
    es = _shape_tensor(element_shape)
    return make_tensor("TensorListSplit",
                       [tensor, es, convert_to_tensor(lengths, _dtypes.int64)],
                       {"element_dtype": tensor.dtype.base_dtype, "shape_type": es.dtype},
                       name=name)


def tensor_list_concat_v2(handle, element_dtype, element_shape, leading_dims, name=None):
    es = _shape_tensor(element_shape)
    op = make_op("TensorListConcatV2",
                 [handle, es, convert_to_tensor(leading_dims, _dtypes.int64)],
                 {"element_dtype": _dt(element_dtype), "shape_type": es.dtype}, name=name)
    return op.outputs[0], op.outputs[1]


def tensor_list_resize(handle, size, name=None):
    return make_tensor("TensorListResize", [handle, convert_to_tensor(size, _dtypes.int32)],
                       name=name)


# -- gradients ---------------------------------------------------------------------------
def _rows_shape(t):
    """The shape of `t` past its first dimension, as an int32 tensor."""
    return _array.slice(_array.shape(t, out_type=_dtypes.int32), [1], [-1])


@register_gradient("TensorListPushBack")
def _push_back_grad(op, dlist):
    item = op.inputs[1]
    dlist_in, ditem = tensor_list_pop_back(dlist, item.dtype,
                                           _array.shape(item, out_type=_dtypes.int32))
    return [dlist_in, ditem]


@register_gradient("TensorListPopBack")
def _pop_back_grad(op, dlist, ditem):
    if dlist is None:
        dlist = empty_tensor_list(tensor_list_element_shape(op.outputs[0]),
                                  op.outputs[1].dtype)
    if ditem is None:
        ditem = _array.zeros_like(op.outputs[1])
    return [tensor_list_push_back(dlist, ditem), None]


@register_gradient("TensorListStack")
def _stack_grad(op, dtensor):
    rows = dtensor.shape[1:] if dtensor.shape.ndims is not None else None
    return [tensor_list_from_tensor(dtensor, rows), None]


@register_gradient("TensorListFromTensor")
def _from_tensor_grad(op, dlist):
    t = op.inputs[0]
    if dlist is None:
        dlist = empty_tensor_list(tensor_list_element_shape(op.outputs[0]), t.dtype)
    n = t.shape[0].value if t.shape.ndims else None
    return [tensor_list_stack(dlist, t.dtype, _rows_shape(t), n), None]


@register_gradient("TensorListGetItem")
def _get_item_grad(op, ditem):
    lst, index = op.inputs[0], op.inputs[1]
    zeros = tensor_list_reserve(tensor_list_element_shape(lst), tensor_list_length(lst),
                                ditem.dtype)
    return [tensor_list_set_item(zeros, index, ditem), None, None]


@register_gradient("TensorListSetItem")
def _set_item_grad(op, dlist):
    lst, index, item = op.inputs
    dlist_in = tensor_list_set_item(dlist, index, _array.zeros_like(item))
    ditem = tensor_list_get_item(dlist, index, item.dtype,
                                 _array.shape(item, out_type=_dtypes.int32))
    if op.attrs.get("resize_if_index_out_of_bounds"):
        dlist_in = tensor_list_resize(dlist_in, tensor_list_length(lst))
    return [dlist_in, None, ditem]


@register_gradient("TensorListResize")
def _resize_grad(op, dlist):
    return [tensor_list_resize(dlist, tensor_list_length(op.inputs[0])), None]


@register_gradient("TensorListGather")
def _gather_grad(op, dtensor):
    # Rows gathered from one index more than once add up there (TensorFlow's gradient
    # scatters them, and the last one wins; the two agree for distinct indices).
    lst, indices = op.inputs[0], op.inputs[1]
    zeros = tensor_list_reserve(tensor_list_element_shape(lst), tensor_list_length(lst),
                                dtensor.dtype)
    unique, position = _array_gen.unique(indices)
    summed = _segments.unsorted_segment_sum(dtensor, position, _array.size(unique))
    return [tensor_list_scatter_into(zeros, summed, unique), None, None]


def _scatter_grad(op, dlist):
    tensor, indices = op.inputs[0], op.inputs[1]
    dtensor = tensor_list_gather(dlist, indices, tensor.dtype, _rows_shape(tensor))
    return [dtensor] + [None] * (len(op.inputs) - 1)


register_gradient("TensorListScatter")(_scatter_grad)
register_gradient("TensorListScatterV2")(_scatter_grad)


@register_gradient("TensorListScatterIntoExistingList")
def _scatter_existing_grad(op, dlist):
    tensor, indices = op.inputs[1], op.inputs[2]
    dtensor = tensor_list_gather(dlist, indices, tensor.dtype, _rows_shape(tensor))
    dlist_in = tensor_list_scatter_into(dlist, _array.zeros_like(tensor), indices)
    return [dlist_in, dtensor, None]


def _concat_grad(op, dtensor, dlengths):
    dlist = tensor_list_split(dtensor, tensor_list_element_shape(op.inputs[0]), op.outputs[1])
    return [dlist] + [None] * (len(op.inputs) - 1)


register_gradient("TensorListConcat")(_concat_grad)
register_gradient("TensorListConcatV2")(_concat_grad)


@register_gradient("TensorListSplit")
def _split_grad(op, dlist):
    tensor, _, lengths = op.inputs
    shape = _array.concat([constant(np.array([-1], np.int32)), _rows_shape(tensor)], 0)
    dtensor, _ = tensor_list_concat_v2(dlist, tensor.dtype, shape, lengths)
    return [dtensor, None, None]
