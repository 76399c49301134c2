"""CPU kernels for the TensorList and TensorMap ops of ``flowgraph/ops/list_ops.py``.

A list travels between kernels as a 0-d object array holding a `TensorList` (a batch of
lists, as ``TensorListPushBackBatch`` takes, as a 1-D object array of them). A
`TensorList` is a value, never changed after the kernel that made it returns: every op
that "modifies" a list (``SetItem``, ``PushBack``, ``Resize``, ...) builds a new one
from a copy of the item slots, so a list read by two consumers (a loop body and the
gradient accumulator beside it, say) is the same for both. The items themselves are
NumPy arrays that are shared, not copied; kernels never write into their inputs.

A slot holds an array or None, *uninitialized* (``TensorListReserve``, ``Resize`` and
``Scatter`` make them): reading one gives zeros of the element shape when that shape is
known, from the list's ``element_shape``, the shape the reading op passes, or any item
set in the list, merged; otherwise the read fails, as in TensorFlow.

A TensorMap is the same kind of value over a dict keyed by the keys' Python scalars.

Example
-------
>>> import numpy as np
>>> lst = tensor_list_from_tensor(np.arange(6.0).reshape(3, 2), np.int32(-1))
>>> int(tensor_list_length(lst)), tensor_list_get_item(lst, 1, -1,
...                                                    element_dtype=np.float64).tolist()
(3, [2.0, 3.0])
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_UNKNOWN = None  # an element shape of unknown rank


def _error(op: str, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{op}: {message}")


def _describe(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _parse_shape(value):
    """An ``element_shape`` input (-1 scalar: unknown rank; -1 entries: unknown dims) as
    a tuple with None for unknown dimensions, or None."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        if int(arr) != -1:
            raise errors.InvalidArgumentError(
                None, None, f"element_shape must be a vector or the scalar -1 (unknown "
                f"rank), got the scalar {int(arr)}")
        return None
    return tuple(None if int(d) < 0 else int(d) for d in arr.reshape(-1))


def _merge(a, b, op: str):
    """The most specific shape compatible with both, or an InvalidArgumentError."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        raise _error(op, f"incompatible element shapes {_describe(a)} and {_describe(b)}")
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _defined(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _frozen(value, dtype) -> np.ndarray:
    """`value` as a read-only array of `dtype` (a view: nothing is copied)."""
    arr = np.asarray(value)
    if arr.dtype != dtype:
        arr = arr.astype(dtype)
    arr = arr.view()
    arr.flags.writeable = False
    return arr


class TensorList:
    """One immutable list of tensors (see the module docstring)."""

    __slots__ = ("dtype", "element_shape", "items", "max_num_elements")

    def __init__(self, dtype, element_shape, items, max_num_elements: int = -1) -> None:
        self.dtype = np.dtype(dtype)
        self.element_shape = element_shape
        self.items = items  # list of arrays and None (uninitialized)
        self.max_num_elements = max_num_elements

    def __repr__(self) -> str:
        return (f"<TensorList of {len(self.items)} {self.dtype.name} items, element shape "
                f"{_describe(self.element_shape)}>")

    def __len__(self) -> int:
        return len(self.items)

    def derive(self, items) -> TensorList:
        return TensorList(self.dtype, self.element_shape, items, self.max_num_elements)

    # Gradients of lists are summed with AddN and made with ZerosLike: both run on the
    # object arrays that hold lists, through these two methods.
    def __add__(self, other: TensorList) -> TensorList:
        if not isinstance(other, TensorList):
            return NotImplemented
        if len(self) != len(other):
            raise _error("AddN", f"cannot add a list of {len(self)} items to one of "
                                 f"{len(other)}")
        items = [b if a is None else a if b is None else _frozen(a + b, self.dtype)
                 for a, b in zip(self.items, other.items)]
        return self.derive(items)

    def zeros_like(self) -> TensorList:
        return self.derive([None if a is None else _frozen(np.zeros_like(a), self.dtype)
                            for a in self.items])

    def check(self, op: str, dtype) -> TensorList:
        if dtype is not None and np.dtype(dtype) != self.dtype:
            raise _error(op, f"the op expects a list of {np.dtype(dtype).name} elements, "
                             f"the list holds {self.dtype.name} elements")
        return self

    def known_shape(self, op: str, given=None):
        """The element shape from the list, `given` and every item set, merged."""
        shape = _merge(self.element_shape, given, op)
        for item in self.items:
            if _defined(shape):
                break
            if item is not None:
                shape = _merge(shape, item.shape, op)
        return shape

    def read(self, i: int, op: str, shape) -> np.ndarray:
        item = self.items[i]
        if item is not None:
            return item
        if not _defined(shape):
            raise _error(op, f"trying to read uninitialized element {i}, but the element "
                             f"shape is not fully defined ({_describe(shape)}) and no list "
                             "element is set")
        return np.zeros(shape, self.dtype)

    def stacked(self, indices, op: str, given) -> np.ndarray:
        if not len(indices):  # the list's and the op's element shapes alone, as in TF
            shape = _merge(self.element_shape, given, op)
            if not _defined(shape):
                raise _error(op, "cannot stack zero elements: the element shape is not "
                                 f"fully defined ({_describe(shape)})")
            return np.zeros((0, *shape), self.dtype)
        shape = self.known_shape(op, given)
        rows = [self.read(int(i), op, shape) for i in indices]
        first = rows[0].shape
        for k, r in enumerate(rows):
            if r.shape != first:
                raise _error(op, f"elements have different shapes ({first} and {r.shape} "
                                 f"at position {k}); a list of ragged elements cannot be "
                                 "stacked")
        if shape is not None:
            _merge(shape, first, op)
        return np.stack(rows)


def _box(value) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _unbox(handle, op: str, dtype=None, kind=TensorList):
    value = handle.item() if isinstance(handle, np.ndarray) and handle.ndim == 0 else handle
    if not isinstance(value, kind):
        what = "a TensorList" if kind is TensorList else "a TensorMap"
        raise _error(op, f"input must be {what} (a variant made by the {kind.__name__} "
                         f"ops), got {type(value).__name__}")
    return value.check(op, dtype) if kind is TensorList else value


def _np_dtype(dtype):
    return None if dtype is None else getattr(dtype, "as_numpy_dtype", dtype)


def _item(list_: TensorList, value, op: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype != list_.dtype:
        raise _error(op, f"cannot put a {arr.dtype.name} tensor into a list of "
                         f"{list_.dtype.name} elements")
    if list_.element_shape is not None:
        try:
            _merge(list_.element_shape, arr.shape, op)
        except errors.InvalidArgumentError:
            raise _error(op, f"the tensor's shape {list(arr.shape)} is incompatible with the "
                             f"list's element shape {_describe(list_.element_shape)}") from None
    return _frozen(arr, list_.dtype)


def _index(i, size: int, op: str, verb: str) -> int:
    i = int(i)
    if not 0 <= i < size:
        raise _error(op, f"trying to {verb} element {i} in a list with {size} elements")
    return i


# -- making lists ------------------------------------------------------------------------
@cpu_kernel("EmptyTensorList")
def empty_tensor_list(element_shape, max_num_elements, *, element_dtype):
    return _box(TensorList(_np_dtype(element_dtype), _parse_shape(element_shape), [],
                           int(max_num_elements)))


@cpu_kernel("TensorListReserve")
def tensor_list_reserve(element_shape, num_elements, *, element_dtype):
    n = int(num_elements)
    if n < 0:
        raise _error("TensorListReserve", f"the num_elements to reserve must be a "
                                          f"non-negative number, got {n}")
    return _box(TensorList(_np_dtype(element_dtype), _parse_shape(element_shape), [None] * n))


@cpu_kernel("TensorListFromTensor")
def tensor_list_from_tensor(tensor, element_shape):
    op = "TensorListFromTensor"
    tensor = np.asarray(tensor)
    if tensor.ndim == 0:
        raise _error(op, "the tensor must be at least a vector (one element per row), got a "
                         "scalar")
    shape = _parse_shape(element_shape)
    _merge(shape, tensor.shape[1:], op)
    rows = [_frozen(r, tensor.dtype) for r in tensor]
    return _box(TensorList(tensor.dtype, shape, rows))


@cpu_kernel("TensorListSplit")
def tensor_list_split(tensor, element_shape, lengths):
    op = "TensorListSplit"
    tensor = np.asarray(tensor)
    if tensor.ndim == 0:
        raise _error(op, "the tensor must be at least a vector, got a scalar")
    shape = _parse_shape(element_shape)
    lengths = np.asarray(lengths, np.int64).reshape(-1)
    if (lengths < 0).any():
        raise _error(op, f"lengths must be non-negative, got {lengths.tolist()}")
    if int(lengths.sum()) != tensor.shape[0]:
        raise _error(op, f"the lengths {lengths.tolist()} add up to {int(lengths.sum())}, "
                         f"but the tensor has {tensor.shape[0]} rows")
    if shape is not None:
        _merge(shape[1:], tensor.shape[1:], op)
    cuts = np.cumsum(lengths)[:-1]
    rows = [_frozen(p, tensor.dtype) for p in np.split(tensor, cuts)] if len(lengths) else []
    return _box(TensorList(tensor.dtype, shape, rows))


def _scatter(tensor, indices, size, op: str, base: TensorList) -> np.ndarray:
    tensor = np.asarray(tensor)
    indices = np.asarray(indices).reshape(-1)
    if tensor.ndim == 0 or tensor.shape[0] != len(indices):
        rows = "a scalar" if tensor.ndim == 0 else f"{tensor.shape[0]} rows"
        raise _error(op, f"the tensor must have one row per index ({len(indices)}), got "
                         f"{rows}")
    if (indices < 0).any():
        raise _error(op, f"indices must all be non-negative, got {indices.tolist()}")
    top = int(indices.max()) + 1 if len(indices) else 0
    if size is None:
        size = max(top, len(base))
    elif top > size:
        raise _error(op, f"trying to scatter at index {top - 1} in a list of size {size}")
    items = list(base.items) + [None] * (size - len(base))
    for i, row in zip(indices.tolist(), tensor):  # later rows win, as in TensorFlow
        items[i] = _item(base, row, op)
    return _box(base.derive(items))


@cpu_kernel("TensorListScatter")
def tensor_list_scatter(tensor, indices, element_shape):
    tensor = np.asarray(tensor)
    return _scatter(tensor, indices, None, "TensorListScatter",
                    TensorList(tensor.dtype, _parse_shape(element_shape), []))


@cpu_kernel("TensorListScatterV2")
def tensor_list_scatter_v2(tensor, indices, element_shape, num_elements):
    tensor = np.asarray(tensor)
    n = int(num_elements)
    return _scatter(tensor, indices, None if n == -1 else n, "TensorListScatterV2",
                    TensorList(tensor.dtype, _parse_shape(element_shape), []))


@cpu_kernel("TensorListScatterIntoExistingList")
def tensor_list_scatter_into_existing_list(input_handle, tensor, indices, *,
                                           element_dtype=None):
    op = "TensorListScatterIntoExistingList"
    return _scatter(tensor, indices, None, op, _unbox(input_handle, op, _np_dtype(element_dtype)))


# -- reading -----------------------------------------------------------------------------
@cpu_kernel("TensorListLength")
def tensor_list_length(input_handle):
    return np.int32(len(_unbox(input_handle, "TensorListLength")))


@cpu_kernel("TensorListElementShape")
def tensor_list_element_shape(input_handle, *, shape_type=None):
    shape = _unbox(input_handle, "TensorListElementShape").element_shape
    dtype = _np_dtype(shape_type) or np.int32
    if shape is None:
        return np.array(-1, dtype)
    return np.array([-1 if d is None else d for d in shape], dtype)


@cpu_kernel("TensorListGetItem")
def tensor_list_get_item(input_handle, index, element_shape, *, element_dtype):
    op = "TensorListGetItem"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    i = _index(index, len(lst), op, "access")
    if lst.items[i] is not None:
        return lst.items[i]
    return lst.read(i, op, lst.known_shape(op, _parse_shape(element_shape)))


@cpu_kernel("TensorListStack")
def tensor_list_stack(input_handle, element_shape, *, element_dtype, num_elements=-1):
    op = "TensorListStack"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    if num_elements != -1 and num_elements != len(lst):
        raise _error(op, f"the op expects a list of {num_elements} elements, the list has "
                         f"{len(lst)}")
    return lst.stacked(range(len(lst)), op, _parse_shape(element_shape))


@cpu_kernel("TensorListGather")
def tensor_list_gather(input_handle, indices, element_shape, *, element_dtype):
    op = "TensorListGather"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    indices = np.asarray(indices).reshape(-1)
    for i in indices.tolist():
        _index(i, len(lst), op, "gather")
    return lst.stacked(indices, op, _parse_shape(element_shape))


def _concat(lst: TensorList, op: str, given, leading_dims):
    shape = lst.known_shape(op, given) if given is not None or lst.element_shape \
        is not None else lst.known_shape(op)
    if shape is not None and len(shape) == 0:
        raise _error(op, "elements are scalars; concatenation needs at least vectors")
    rest = None if shape is None else shape[1:]
    parts = []
    for k, item in enumerate(lst.items):
        if item is None:
            if leading_dims is None or k >= len(leading_dims) or not _defined(rest):
                raise _error(op, f"element {k} is uninitialized and its shape is not known "
                                 f"(element shape {_describe(shape)})")
            item = np.zeros((int(leading_dims[k]), *rest), lst.dtype)
        elif item.ndim == 0:
            raise _error(op, f"element {k} is a scalar; concatenation needs at least vectors")
        parts.append(item)
    if not parts:
        if not _defined(rest):
            raise _error(op, "cannot concatenate an empty list whose element shape (past "
                             f"the first dimension) is not fully defined: {_describe(shape)}")
        return np.zeros((0, *rest), lst.dtype), np.zeros(0, np.int64)
    for k, p in enumerate(parts):
        if p.shape[1:] != parts[0].shape[1:]:
            raise _error(op, f"elements 0 and {k} differ past the first dimension: "
                             f"{list(parts[0].shape)} vs {list(p.shape)}")
    lengths = np.array([p.shape[0] for p in parts], np.int64)
    return np.concatenate(parts), lengths


@cpu_kernel("TensorListConcat")
def tensor_list_concat(input_handle, *, element_dtype, element_shape=None):
    op = "TensorListConcat"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    given = None
    if element_shape is not None and getattr(element_shape, "ndims", None) is not None:
        given = tuple(d.value for d in element_shape.dims)
    return _concat(lst, op, given, None)


@cpu_kernel("TensorListConcatV2")
def tensor_list_concat_v2(input_handle, element_shape, leading_dims, *, element_dtype):
    op = "TensorListConcatV2"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    return _concat(lst, op, _parse_shape(element_shape),
                   np.asarray(leading_dims, np.int64).reshape(-1))


# -- new lists from old ------------------------------------------------------------------
@cpu_kernel("TensorListSetItem")
def tensor_list_set_item(input_handle, index, item, *, element_dtype=None,
                         resize_if_index_out_of_bounds=False):
    op = "TensorListSetItem"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    i = int(index)
    items = list(lst.items)
    if resize_if_index_out_of_bounds and i >= len(items):
        items.extend([None] * (i + 1 - len(items)))
    i = _index(i, len(items), op, "modify")
    items[i] = _item(lst, item, op)
    return _box(lst.derive(items))


@cpu_kernel("TensorListPushBack")
def tensor_list_push_back(input_handle, tensor, *, element_dtype=None):
    op = "TensorListPushBack"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    if 0 <= lst.max_num_elements <= len(lst):
        raise _error(op, f"tried to push an item into a full list (size {len(lst)}, "
                         f"max_num_elements {lst.max_num_elements})")
    return _box(lst.derive([*lst.items, _item(lst, tensor, op)]))


@cpu_kernel("TensorListPushBackBatch")
def tensor_list_push_back_batch(input_handles, tensor, *, element_dtype=None):
    op = "TensorListPushBackBatch"
    handles = np.asarray(input_handles, dtype=object)
    tensor = np.asarray(tensor)
    if handles.ndim != 1 or tensor.ndim == 0 or tensor.shape[0] != handles.shape[0]:
        raise _error(op, f"expects a vector of lists and a tensor with one row per list, "
                         f"got {handles.shape[0] if handles.ndim else 'a scalar of'} lists "
                         f"and a tensor of shape {list(tensor.shape)}")
    out = np.empty(handles.shape, dtype=object)
    for b, (h, row) in enumerate(zip(handles, tensor)):
        lst = _unbox(h, op, _np_dtype(element_dtype))
        out[b] = lst.derive([*lst.items, _item(lst, row, op)])
    return out


@cpu_kernel("TensorListPopBack")
def tensor_list_pop_back(input_handle, element_shape, *, element_dtype):
    op = "TensorListPopBack"
    lst = _unbox(input_handle, op, _np_dtype(element_dtype))
    if not len(lst):
        raise _error(op, "trying to pop from an empty list")
    last = lst.read(len(lst) - 1, op, lst.known_shape(op, _parse_shape(element_shape))) \
        if lst.items[-1] is None else lst.items[-1]
    return _box(lst.derive(lst.items[:-1])), last


@cpu_kernel("TensorListResize")
def tensor_list_resize(input_handle, size):
    op = "TensorListResize"
    lst = _unbox(input_handle, op)
    n = int(size)
    if n < 0:
        raise _error(op, f"size must be non-negative, got {n}")
    items = lst.items[:n] + [None] * max(0, n - len(lst))
    return _box(lst.derive(items))


@cpu_kernel("TensorListConcatLists")
def tensor_list_concat_lists(input_a, input_b, *, element_dtype):
    op = "TensorListConcatLists"
    a, b = np.asarray(input_a, dtype=object), np.asarray(input_b, dtype=object)
    if a.shape != b.shape:
        raise _error(op, f"input_a and input_b must have the same shape, got {list(a.shape)} "
                         f"and {list(b.shape)}")
    out = np.empty(a.shape, dtype=object)
    for pos in np.ndindex(a.shape):
        la = _unbox(a[pos], op, _np_dtype(element_dtype))
        lb = _unbox(b[pos], op, _np_dtype(element_dtype))
        shape = _merge(la.element_shape, lb.element_shape, op)
        out[pos] = TensorList(la.dtype, shape, [*la.items, *lb.items], la.max_num_elements)
    return out


# -- maps --------------------------------------------------------------------------------
class TensorMap:
    """One immutable map from scalar keys to tensors."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict) -> None:
        self.entries = entries

    def __repr__(self) -> str:
        return f"<TensorMap of {len(self.entries)} entries>"

    # Gradients of maps add key by key (AddN) and start from zeros (ZerosLike).
    def __add__(self, other: TensorMap) -> TensorMap:
        if not isinstance(other, TensorMap):
            return NotImplemented
        entries = dict(self.entries)
        for key, value in other.entries.items():
            mine = entries.get(key)
            entries[key] = value if mine is None else _frozen(mine + value, mine.dtype)
        return TensorMap(entries)

    def zeros_like(self) -> TensorMap:
        return TensorMap({k: _frozen(np.zeros_like(v), v.dtype)
                          for k, v in self.entries.items()})


def _key(key, op: str):
    """A dict key for a scalar key tensor: its dtype and value (an int64 2 is not an int32
    2, as in TensorFlow)."""
    arr = np.asarray(key)
    if arr.ndim != 0:
        raise _error(op, f"the key must be a scalar, got shape {list(arr.shape)}")
    kind = "string" if arr.dtype.kind in "OSU" else arr.dtype.str
    value = arr.item()
    return kind, value.encode() if isinstance(value, str) else value


def _shown(key) -> str:
    value = key[1]
    return repr(value.decode(errors="replace") if isinstance(value, bytes) else value)


@cpu_kernel("EmptyTensorMap")
def empty_tensor_map():
    return _box(TensorMap({}))


@cpu_kernel("TensorMapSize")
def tensor_map_size(input_handle):
    return np.int32(len(_unbox(input_handle, "TensorMapSize", kind=TensorMap).entries))


@cpu_kernel("TensorMapInsert")
def tensor_map_insert(input_handle, key, value):
    m = _unbox(input_handle, "TensorMapInsert", kind=TensorMap)
    entries = dict(m.entries)
    value = np.asarray(value)
    entries[_key(key, "TensorMapInsert")] = _frozen(value, value.dtype)
    return _box(TensorMap(entries))


@cpu_kernel("TensorMapLookup")
def tensor_map_lookup(input_handle, key, *, value_dtype):
    m = _unbox(input_handle, "TensorMapLookup", kind=TensorMap)
    k = _key(key, "TensorMapLookup")
    if k not in m.entries:
        raise _error("TensorMapLookup", f"trying to look up the non-existent key {_shown(k)}")
    value = m.entries[k]
    want = np.dtype(_np_dtype(value_dtype))
    if value.dtype != want:
        raise errors.InternalError(None, None, f"TensorMapLookup: the value of key "
                                   f"{_shown(k)} is {value.dtype.name}, the op expects "
                                   f"{want.name} (value_dtype)")
    return value


@cpu_kernel("TensorMapErase")
def tensor_map_erase(input_handle, key):
    m = _unbox(input_handle, "TensorMapErase", kind=TensorMap)
    k = _key(key, "TensorMapErase")
    if k not in m.entries:
        raise _error("TensorMapErase", f"trying to erase the non-existent key {_shown(k)}")
    entries = dict(m.entries)
    del entries[k]
    return _box(TensorMap(entries))


@cpu_kernel("TensorMapHasKey")
def tensor_map_has_key(input_handle, key):
    m = _unbox(input_handle, "TensorMapHasKey", kind=TensorMap)
    return np.bool_(_key(key, "TensorMapHasKey") in m.entries)


@cpu_kernel("TensorMapStackKeys")
def tensor_map_stack_keys(input_handle, *, key_dtype):
    m = _unbox(input_handle, "TensorMapStackKeys", kind=TensorMap)
    if not m.entries:
        raise _error("TensorMapStackKeys", "cannot stack the keys of an empty map")
    dtype = np.dtype(_np_dtype(key_dtype))
    keys = [value for _, value in m.entries]
    return np.array(keys, dtype=object if dtype.kind in "OSU" else dtype)
