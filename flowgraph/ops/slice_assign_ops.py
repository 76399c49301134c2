"""``v[spec].assign(x)``: write a strided slice of a variable in place.

Indexing a variable (``v[1:3]``, ``v[0]``, ``v[:, 1]``) gives the ``StridedSlice`` of its
value, as indexing a tensor does, with an ``assign`` method attached (`sliced`). It
writes `x` into those positions of the variable, with the slice's own ``begin``/``end``/
``strides`` tensors and masks, as TensorFlow does::

    reference variable:  strided_slice/_assign = StridedSliceAssign(v, begin, end,
                                                 strides, x)     -> the variable's ref
    resource variable:   strided_slice/_assign = ResourceStridedSliceAssign(v (handle),
                                                 begin, end, strides, x)  (no outputs;
                         the method returns the variable read after it, lazily)

`x` has the slice's shape or broadcasts to it (a scalar fills the slice); anything else
is an InvalidArgumentError at run time naming both shapes. Neither op has a gradient (a
resource variable's lazy read differentiates as any read).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v", use_resource=True)
...     up = v[0].assign([9.0, 8.0])
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         print(up.op.type, sess.run(up).tolist())
ResourceStridedSliceAssign [[9.0, 8.0], [3.0, 4.0]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["sliced", "strided_slice_assign"]

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _check_spec(op, begin, end, strides) -> None:
    ranks = {s.ndims for s in (begin, end, strides)} - {None}
    if ranks - {1}:
        raise op.shape_error(f"begin, end and strides must be 1-D, got shapes {begin}, "
                             f"{end} and {strides}")


@register_op("StridedSliceAssign", attrs=dict.fromkeys(_MASKS, 0), ref_inputs=(0,),
             ref_outputs=(0,), stateful=True)
def _strided_slice_assign_shape(op, ref, begin, end, strides, value):
    _check_spec(op, begin, end, strides)
    return [ref]


@register_op("ResourceStridedSliceAssign",
             attrs={"T": None, "Index": None, **dict.fromkeys(_MASKS, 0)}, num_outputs=0,
             dtype_fn=lambda op: [], stateful=True)
def _resource_strided_slice_assign_shape(op, handle, begin, end, strides, value):
    if op.inputs[0].dtype.base_dtype != _dtypes.resource:
        raise op.shape_error(f"input 0 must be a resource handle (a VarHandleOp's output), "
                             f"got {op.inputs[0].dtype.name} tensor '{op.inputs[0].name}'")
    _check_spec(op, begin, end, strides)
    return []


# As TensorFlow: ResourceStridedSliceAssign has no outputs; StridedSliceAssign registers no
# gradient at all, so tf.gradients through its ref output raises LookupError.
not_differentiable("ResourceStridedSliceAssign")


def strided_slice_assign(var, begin, end, strides, value, name=None, **masks):
    """Write `value` into ``var[begin:end:strides]`` (with TensorFlow's `masks`); returns
    the variable after the write: its ref tensor for a reference variable, the lazily
    read variable for a resource one."""
    unknown = set(masks) - set(_MASKS)
    if unknown:
        raise TypeError(f"strided_slice_assign: unknown mask(s) {sorted(unknown)}; the "
                        f"masks are {list(_MASKS)}")
    attrs = {m: int(masks.get(m, 0)) for m in _MASKS}
    dtype = var.dtype.base_dtype
    value = convert_to_tensor(value, dtype=dtype, name="value")
    spec = [begin, end, strides]
    handle = getattr(var, "handle", None)
    if handle is not None and handle.dtype.base_dtype == _dtypes.resource:
        attrs.update(T=dtype, Index=spec[0].dtype.base_dtype)
        with var.graph.as_default():
            op = make_op("ResourceStridedSliceAssign", [handle, *spec, value], attrs,
                         name=name or "ResourceStridedSliceAssign")
        return var._lazy_read(op, True)
    with var.graph.as_default():
        return make_tensor("StridedSliceAssign", [var._ref(), *spec, value], attrs,
                           name=name or "StridedSliceAssign")


def sliced(var, key):
    """``var[key]``: the ``StridedSlice`` of `var`'s value, with an ``assign(value,
    name=None)`` method writing that slice of `var` (see the module docstring)."""
    out = var.value()[key]
    op = out.op
    if op.type != "StridedSlice":  # (every key the indexing accepts makes one)
        return out
    begin, end, strides = op.inputs[1:]
    masks = {m: op.attrs[m] for m in _MASKS}

    def assign(value, name=None):
        return strided_slice_assign(var, begin, end, strides, value,
                                    name=name or f"{op.name}/_assign", **masks)

    out.assign = assign
    return out

