"""CPU kernels for the TensorArray ops of ``flowgraph/ops/tensor_array_ops.py``.

The value of a TensorArray handle is the array itself (a `RunTensorArray`), made anew
each time ``TensorArrayV3`` runs (once per step, once per loop frame instance) and
released with the handle. It keeps one slot per index: the value written there, whether
it was read and cleared, and the element shape seen (kept after clearing, so a gradient
array can make zeros of the right shape). The element shape known so far (the
``element_shape`` attribute merged with every written value's shape) lets a read of an
index never written return zeros, as TensorFlow does once the shape is fully known.
Kernels run under the GIL and each changes the array in a few list operations, so writes
from overlapping loop iterations need no lock.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors

_UNSET = object()


def _shape_tuple(shape):
    """A TensorShape attribute as a tuple with None for unknown dimensions (None: rank
    unknown)."""
    if shape is None or getattr(shape, "ndims", None) is None:
        return None
    return tuple(d.value for d in shape.dims)


def _merge(known, shape: tuple):
    if known is None:
        return tuple(shape)
    if len(known) != len(shape) or any(k is not None and k != s
                                       for k, s in zip(known, shape)):
        return _UNSET
    return tuple(shape)


class RunTensorArray:
    """One TensorArray of one step (see the module docstring)."""

    __slots__ = ("clear_after_read", "dtype", "dynamic_size", "element_shape", "grads",
                 "identical", "is_grad", "name", "shapes", "values")

    def __init__(self, name: str, dtype, size: int, dynamic_size: bool,
                 clear_after_read: bool, element_shape, identical: bool = False,
                 is_grad: bool = False) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape  # tuple with None entries, or None
        self.identical = identical
        self.is_grad = is_grad
        self.values: list = [_UNSET] * size  # _UNSET: not written; None: cleared
        self.shapes: list = [None] * size
        self.grads: dict[str, RunTensorArray] = {}

    def __repr__(self) -> str:
        return f"<TensorArray '{self.name}' size={len(self.values)}>"

    def _error(self, what: str, cls=errors.InvalidArgumentError) -> errors.OpError:
        return cls(None, None, f"TensorArray {self.name}: {what}")

    def _index(self, index, op: str) -> int:
        i = int(index)
        if i < 0:
            raise self._error(f"{op}: index {i} is negative")
        if i >= len(self.values):
            if not self.dynamic_size:
                raise self._error(
                    f"{op}: index {i} is out of bounds for an array of size "
                    f"{len(self.values)}; create it with dynamic_size=True to let it grow")
            grow = i + 1 - len(self.values)
            self.values.extend([_UNSET] * grow)
            self.shapes.extend([None] * grow)
        return i

    def write(self, index, value, op: str = "TensorArrayWriteV3",
              same_shapes: bool = True) -> None:
        i = self._index(index, op)
        value = np.asarray(value)
        if value.dtype != self.dtype:
            raise self._error(f"{op}: could not write a {value.dtype.name} value to an "
                              f"array of {self.dtype.name}")
        merged = self.element_shape
        if self.element_shape is not None:
            merged = _merge(self.element_shape, value.shape)
            if merged is _UNSET:
                raise self._error(
                    f"{op}: could not write to index {i}: the value's shape {value.shape} "
                    f"is incompatible with the array's element shape "
                    f"{_describe(self.element_shape)} (create the array with "
                    "infer_shape=False to hold elements of different shapes)")
        current = self.values[i]
        if current is not _UNSET:
            if not self.is_grad:
                raise self._error(
                    f"{op}: could not write to index {i}: it was already written to "
                    "(a TensorArray element may be written once; write to another index "
                    "or use a new array)")
            if current is not None:
                if current.shape != value.shape:
                    raise self._error(f"{op}: could not add a value of shape "
                                      f"{value.shape} to index {i} holding {current.shape}")
                value = current + value
        self.values[i] = value
        self.shapes[i] = value.shape
        if self.identical and same_shapes:
            self.element_shape = tuple(value.shape) if merged is None else merged

    def read(self, index, op: str = "TensorArrayReadV3"):
        i = int(index)
        if not 0 <= i < len(self.values):
            raise self._error(f"{op}: could not read index {i}: the array has size "
                              f"{len(self.values)}")
        value = self.values[i]
        if value is None:
            raise self._error(
                f"{op}: could not read index {i} twice because it was cleared after a "
                "previous read (create the array with clear_after_read=False to read "
                "elements more than once)")
        if value is _UNSET:
            shape = self.shapes[i] or self.element_shape
            if shape is None or any(d is None for d in shape):
                raise self._error(
                    f"{op}: could not read index {i}: it was never written and the "
                    f"element shape {_describe(self.element_shape)} is not fully known, "
                    "so no zeros can stand in for it")
            return np.zeros(shape, self.dtype)
        if self.clear_after_read and not self.is_grad:
            self.values[i] = None
        return value

    def size(self) -> int:
        return len(self.values)


def _describe(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def _array(handle, op_type: str) -> RunTensorArray:
    if not isinstance(handle, RunTensorArray):
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: input 0 is not a TensorArray handle (got "
            f"{type(handle).__name__}); pass the `handle` of a TensorArrayV3 op")
    return handle


_FLOW = np.float32(0.0)


def _flow():
    return np.array(_FLOW)


@cpu_kernel("TensorArrayV3")
def tensor_array_v3(size, *, dtype, element_shape, dynamic_size, clear_after_read,
                    identical_element_shapes, tensor_array_name):
    n = int(size)
    if n < 0:
        raise errors.InvalidArgumentError(
            None, None, f"TensorArrayV3 {tensor_array_name}: size must be >= 0, got {n}")
    ta = RunTensorArray(tensor_array_name, dtype.as_numpy_dtype, n, bool(dynamic_size),
                        bool(clear_after_read), _shape_tuple(element_shape),
                        bool(identical_element_shapes))
    return ta, _flow()


@cpu_kernel("TensorArrayGradV3")
def tensor_array_grad_v3(handle, flow_in, *, source):
    ta = _array(handle, "TensorArrayGradV3")
    g = ta.grads.get(source)
    if g is None:
        shape = ta.element_shape
        g = RunTensorArray(f"{ta.name}@{source}", ta.dtype, ta.size(), True, False, shape,
                           is_grad=True)
        g.shapes = list(ta.shapes)
        ta.grads[source] = g
    return g, _flow()


@cpu_kernel("TensorArrayWriteV3")
def tensor_array_write_v3(handle, index, value, flow_in):
    _array(handle, "TensorArrayWriteV3").write(index, value)
    return _flow()


@cpu_kernel("TensorArrayReadV3")
def tensor_array_read_v3(handle, index, flow_in):
    return _array(handle, "TensorArrayReadV3").read(index)


def _gather(ta: RunTensorArray, indices, op: str, element_shape=None):
    idx = [int(i) for i in np.asarray(indices).reshape(-1)]
    if not idx:
        shape = ta.element_shape or _shape_tuple(element_shape)
        if shape is None or any(d is None for d in shape):
            raise ta._error(f"{op}: gathering no elements needs a fully known element "
                            f"shape, found {_describe(shape)}",
                            errors.UnimplementedError)  # TF's type: only static shapes
        return np.zeros((0, *shape), ta.dtype)
    values = [ta.read(i, op) for i in idx]
    first = values[0].shape
    for i, v in zip(idx, values):
        if v.shape != first:
            raise ta._error(f"{op}: element {i} has shape {v.shape} but element {idx[0]} "
                            f"has shape {first}; stack/gather need equal element shapes "
                            "(use concat for rows of different lengths)")
    return np.stack(values)


@cpu_kernel("TensorArrayGatherV3")
def tensor_array_gather_v3(handle, indices, flow_in, *, element_shape):
    return _gather(_array(handle, "TensorArrayGatherV3"), indices, "TensorArrayGatherV3",
                   element_shape)


@cpu_kernel("TensorArrayScatterV3")
def tensor_array_scatter_v3(handle, indices, value, flow_in):
    ta = _array(handle, "TensorArrayScatterV3")
    value = np.asarray(value)
    idx = np.asarray(indices).reshape(-1)
    if value.ndim == 0 or value.shape[0] != idx.size:
        raise ta._error(f"TensorArrayScatterV3: {idx.size} indices but the value has shape "
                        f"{value.shape}; its first dimension must equal the number of "
                        "indices")
    for k, i in enumerate(idx):
        ta.write(i, value[k], "TensorArrayScatterV3")
    return _flow()


@cpu_kernel("TensorArrayConcatV3")
def tensor_array_concat_v3(handle, flow_in, *, element_shape_except0):
    ta = _array(handle, "TensorArrayConcatV3")
    values = [ta.read(i, "TensorArrayConcatV3") for i in range(ta.size())]
    lengths = np.array([v.shape[0] if v.ndim else 0 for v in values], np.int64)
    if not values:
        rest = _shape_tuple(element_shape_except0)
        if rest is None or any(d is None for d in rest):
            raise ta._error("TensorArrayConcatV3: concatenating an empty array needs a "
                            "fully known element_shape_except0")
        return np.zeros((0, *rest), ta.dtype), lengths
    for i, v in enumerate(values):
        if v.ndim == 0:
            raise ta._error(f"TensorArrayConcatV3: element {i} is a scalar; concat needs "
                            "elements of rank >= 1")
        if v.shape[1:] != values[0].shape[1:]:
            raise ta._error(f"TensorArrayConcatV3: element {i} has shape {v.shape}, "
                            f"element 0 {values[0].shape}: all but the first dimension "
                            "must agree")
    return np.concatenate(values, axis=0), lengths


@cpu_kernel("TensorArraySplitV3")
def tensor_array_split_v3(handle, value, lengths, flow_in):
    ta = _array(handle, "TensorArraySplitV3")
    value = np.asarray(value)
    lengths = np.asarray(lengths).reshape(-1).astype(np.int64)
    if value.ndim == 0 or int(lengths.sum()) != value.shape[0]:
        raise ta._error(f"TensorArraySplitV3: lengths {lengths.tolist()} must sum to the "
                        f"value's first dimension (shape {value.shape})")
    if ta.element_shape is not None and len(ta.element_shape) == value.ndim:
        ta.element_shape = (None, *ta.element_shape[1:])  # rows differ in length
    start = 0
    for i, n in enumerate(lengths):
        ta.write(i, value[start:start + int(n)], "TensorArraySplitV3", same_shapes=False)
        start += int(n)
    return _flow()


@cpu_kernel("TensorArraySizeV3")
def tensor_array_size_v3(handle, flow_in):
    return np.array(_array(handle, "TensorArraySizeV3").size(), np.int32)


@cpu_kernel("TensorArrayCloseV3")
def tensor_array_close_v3(handle):
    ta = _array(handle, "TensorArrayCloseV3")
    ta.values = [None if v is not _UNSET else v for v in ta.values]
