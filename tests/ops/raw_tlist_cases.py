"""Registry-wide cases for the TensorList and TensorMap ops (`flowgraph/ops/list_ops.py`):
`GRADIENT_CASES` merge into `test_gradient_registry.CASES` (and through it into the op
contract), `CONTRACT_CASES` are contract-only ``(inputs, build, options)`` cases for the
ops without a gradient, in the format of `misc_names_cases`. Every case makes its lists
from its placeholders, so the cases also run with unknown dimensions or rank."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops import list_ops as L
from flowgraph.ops import map_ops as M

R = np.random.RandomState(2027)
RAW = tf.raw_ops


def _u(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def _row_shape(x):
    """The static shape of `x`'s rows (-1 entries where unknown), as the element shape."""
    return x.shape[1:] if x.shape.ndims is not None else None


def _rows(x):
    return L.tensor_list_from_tensor(x, _row_shape(x))


def _stack(lst, dtype, shape=-1):
    return L.tensor_list_stack(lst, dtype, shape)


def _set_items(x, y):
    lst = L.tensor_list_reserve(-1, 3, x.dtype)
    lst = L.tensor_list_set_item(lst, 0, tf.sin(x))
    lst = L.tensor_list_set_item(lst, 2, x * y)
    lst = L.tensor_list_set_item(lst, 0, y)  # overwrites: sin(x) gets no gradient
    return _stack(lst, x.dtype, tf.shape(x))


def _get_items(x):
    lst = _rows(x * x)
    a = L.tensor_list_get_item(lst, 2, x.dtype)
    return a * L.tensor_list_get_item(lst, 0, x.dtype) + tf.exp(a)


def _shape_of(x):
    return x.shape if x.shape.ndims is not None else None


def _push_pop(x, y):
    lst = L.empty_tensor_list(_shape_of(x), x.dtype)
    lst = L.tensor_list_push_back(lst, tf.sin(x))
    lst = L.tensor_list_push_back(lst, x * y)
    rest, last = L.tensor_list_pop_back(lst, x.dtype)
    return [last * 3.0, _stack(rest, x.dtype, tf.shape(x))]


def _pop_only_item(x):
    lst = L.tensor_list_push_back(L.empty_tensor_list(_shape_of(x), x.dtype), x)
    _, last = L.tensor_list_pop_back(lst, x.dtype)
    return tf.tanh(last)


def _resize(x):
    lst = L.tensor_list_resize(_rows(tf.sin(x)), 2)
    lst = L.tensor_list_resize(lst, 4)  # two uninitialized slots at the end
    return _stack(lst, x.dtype, _row_shape(x))


def _gather(x):
    return L.tensor_list_gather(_rows(x * x), [2, 0, 2], x.dtype)


def _scatter(x):
    return _stack(L.tensor_list_scatter(tf.tanh(x), [3, 0, 1]), x.dtype, _row_shape(x))


def _scatter_v2(x):
    lst = L.tensor_list_scatter(tf.tanh(x), [1, 0, 4], num_elements=6)
    return L.tensor_list_gather(lst, [4, 1], x.dtype, _row_shape(x))


def _scatter_existing(x, y):
    lst = L.tensor_list_scatter_into(_rows(x), y * y, [2, 0])
    return _stack(lst, x.dtype)


def _concat_v2(x, y):
    lst = L.tensor_list_push_back(L.tensor_list_push_back(
        L.empty_tensor_list(-1, x.dtype), x), x * y)
    value, _ = L.tensor_list_concat_v2(lst, x.dtype, -1, np.zeros(0, np.int64))
    return value


def _concat_v1(x, y):
    lst = L.tensor_list_push_back(L.tensor_list_push_back(
        L.empty_tensor_list(-1, x.dtype), tf.sin(x)), y)
    return RAW.TensorListConcat(input_handle=lst, element_dtype=x.dtype)[0]


def _split(x):
    lst = L.tensor_list_split(tf.exp(x), -1, [1, 3])
    return L.tensor_list_get_item(lst, 1, x.dtype) * 2.0


def _map_values(x, y):
    """Values through a map: two inserts (one replacing), an erase and lookups."""
    m = M.tensor_map_insert(M.empty_tensor_map(), np.int32(1), x * x)
    m = M.tensor_map_insert(m, np.int32(2), tf.sin(y))
    m = M.tensor_map_insert(m, np.int32(3), y)
    m = M.tensor_map_insert(m, np.int32(3), tf.exp(x))  # replaces y: y gets nothing here
    a = M.tensor_map_lookup(m, np.int32(1), x.dtype)
    b = M.tensor_map_lookup(m, np.int32(2), x.dtype)
    c = M.tensor_map_lookup(M.tensor_map_erase(m, np.int32(2), x.dtype), np.int32(3), x.dtype)
    return a * b + c * 3.0


GRADIENT_CASES = {
    **{name: [([_u(2), _u(2)], _map_values)] for name in (
        "TensorMapInsert", "TensorMapLookup", "TensorMapErase")},
    "TensorListFromTensor": [([_u(3, 2)], lambda x: _stack(_rows(tf.sin(x)), x.dtype))],
    "TensorListStack": [([_u(3, 2)], lambda x: _stack(_rows(x), x.dtype) ** 2)],
    "TensorListGetItem": [([_u(3, 2)], _get_items)],
    "TensorListSetItem": [([_u(2, 3), _u(2, 3)], _set_items)],
    "TensorListPushBack": [([_u(2, 3), _u(2, 3)], _push_pop)],
    "TensorListPopBack": [([_u(2, 3), _u(2, 3)], _push_pop), ([_u(3)], _pop_only_item)],
    "TensorListResize": [([_u(3, 2)], _resize)],
    "TensorListGather": [([_u(3, 2)], _gather)],
    "TensorListScatter": [([_u(3, 2)], _scatter)],
    "TensorListScatterV2": [([_u(3, 2)], _scatter_v2)],
    "TensorListScatterIntoExistingList": [([_u(3, 2), _u(2, 2)], _scatter_existing)],
    "TensorListConcat": [([_u(2, 3), _u(1, 3)], _concat_v1)],
    "TensorListConcatV2": [([_u(2, 3), _u(2, 3)], _concat_v2)],
    "TensorListSplit": [([_u(4, 2)], _split)],
}


def _lengths(x):
    """The list ops without a gradient on a list made from `x`."""
    lst = _rows(x)
    empty = RAW.EmptyTensorList(element_shape=[2], max_num_elements=-1,
                                element_dtype=x.dtype)
    reserved = RAW.TensorListReserve(element_shape=-1, num_elements=4, element_dtype=x.dtype)
    RAW.TensorListLength(input_handle=reserved)
    RAW.TensorListLength(input_handle=empty)
    RAW.TensorListElementShape(input_handle=lst, shape_type=tf.int64)
    joined = RAW.TensorListConcatLists(input_a=lst, input_b=empty, element_dtype=x.dtype)
    RAW.TensorListLength(input_handle=joined)


def _batch(x):
    """TensorListPushBackBatch on a vector of two lists (Pack of the list scalars)."""
    lists = tf.stack([_rows(x), L.empty_tensor_list(-1, x.dtype)])
    lists = RAW.TensorListPushBackBatch(input_handles=lists, tensor=x[:2])
    RAW.TensorListConcatLists(input_a=lists, input_b=lists, element_dtype=x.dtype)


def _map(x):
    m = RAW.EmptyTensorMap()
    m = RAW.TensorMapInsert(input_handle=m, key=np.int32(3), value=x)
    m = RAW.TensorMapInsert(input_handle=m, key=np.int32(1), value=x * 2.0)
    RAW.TensorMapLookup(input_handle=m, key=np.int32(3), value_dtype=x.dtype)
    RAW.TensorMapHasKey(input_handle=m, key=np.int32(5))
    RAW.TensorMapSize(input_handle=RAW.TensorMapErase(input_handle=m, key=np.int32(1),
                                                      value_dtype=x.dtype))
    RAW.TensorMapStackKeys(input_handle=m, key_dtype=tf.int32)


# The first dimension of a stacked or concatenated list is its length (or the sum of its
# items' lengths), known only at run time, as in TensorFlow.
# A map's values have no static shape (TensorFlow's TensorMapLookup has none either).
VALUE_DEPENDENT = {"TensorListStack", "TensorListConcat", "TensorListConcatV2",
                   "TensorMapLookup"}
_VALUES = {"value_dependent": True}  # element shapes known only at run time

CONTRACT_CASES: dict = {
    **{name: [([_u(3, 2)], _lengths, {})] for name in (
        "EmptyTensorList", "TensorListReserve", "TensorListLength",
        "TensorListConcatLists")},
    "TensorListElementShape": [([_u(3, 2)], _lengths, _VALUES)],
    "TensorListPushBackBatch": [([_u(3, 2)], _batch, {})],
    **{name: [([_u(2, 3)], _map, {})] for name in (
        "EmptyTensorMap", "TensorMapHasKey", "TensorMapSize")},
    "TensorMapStackKeys": [([_u(2, 3)], _map, _VALUES)],
}
