"""Scatter updates: rows of a variable (``tf.scatter_update``/``add``/``sub``/``mul``/
``div``/``min``/``max``), index tuples of a variable (``tf.scatter_nd_update``/``add``/
``sub``) and the functional forms on plain tensors (``tf.tensor_scatter_nd_update``/
``add``/``sub``/``max``/``min``), with TensorFlow 1.x's op types.

The variable forms take the variable's ref, write it in place and output the ref, like
``AssignAdd``; repeated indices accumulate for add/sub/mul/div/min/max and the last write
wins for update. The tensor forms return a new tensor and are differentiable: for
``TensorScatterUpdate`` the gradient to `tensor` is zero at the written positions and the
gradient to `updates` is the gathered output gradient.

Example
-------
>>> import flowgraph as tf
>>> v = tf.Variable([1.0, 2.0, 3.0])
>>> up = tf.scatter_add(v, [0, 2, 0], [10.0, 20.0, 30.0])
>>> with tf.Session() as sess:
...     sess.run(v.initializer)
...     print(sess.run(up))
[41.  2. 23.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import resource_variable_ops
from flowgraph.ops.array_index_ops import gather_nd
from flowgraph.ops.array_shape_ops import ones_like, zeros_like
from flowgraph.ops.math_ops import cast, equal, multiply
from flowgraph.ops.op_util import make_tensor, op_scope
from flowgraph.ops.state_ops import _ref_of

__all__ = [
    "batch_scatter_update", "scatter_add", "scatter_div", "scatter_max", "scatter_min",
    "scatter_mul", "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update", "scatter_sub",
    "scatter_update", "tensor_scatter_add", "tensor_scatter_nd_add",
    "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "tensor_scatter_sub", "tensor_scatter_update",
]

_ROW_OPS = ("ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
            "ScatterMin", "ScatterMax")
_ND_OPS = ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub")
_TENSOR_OPS = ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
               "TensorScatterMax", "TensorScatterMin")


def _row_shape(op, ref, indices, updates):
    if ref.ndims is not None and indices.ndims is not None and updates.ndims is not None:
        want = TensorShape(indices.dims + ref.dims[1:])
        if updates.ndims != 0 and not updates.is_compatible_with(want):
            raise op.shape_error(
                f"updates have shape {updates} but indices {indices} and the variable's "
                f"{ref} need shape {want} (indices.shape + ref.shape[1:]) or a scalar")
    return [ref]


def _nd_check(op, ref, indices, updates, what):
    if ref.ndims is None or indices.ndims is None or updates.ndims is None:
        return
    depth = indices.dims[-1].value if indices.ndims else None
    if depth is None:
        return
    if depth > ref.ndims:
        raise op.shape_error(f"indices.shape[-1] is {depth} but the {what} has only "
                             f"{ref.ndims} dimensions; each index tuple addresses "
                             f"at most rank({what}) dimensions")
    want = TensorShape(indices.dims[:-1] + ref.dims[depth:])
    if not updates.is_compatible_with(want):
        raise op.shape_error(f"updates have shape {updates}; indices {indices} into a "
                             f"{what} of shape {ref} need shape {want} "
                             "(indices.shape[:-1] + shape[indices.shape[-1]:])")


def _nd_shape(op, ref, indices, updates):
    _nd_check(op, ref, indices, updates, "variable")
    return [ref]


def _tensor_shape(op, tensor, indices, updates):
    _nd_check(op, tensor, indices, updates, "tensor")
    return [tensor]


for _t in _ROW_OPS:
    register_op(_t, attrs={"use_locking": _t == "ScatterUpdate"},
                ref_inputs=(0,), ref_outputs=(0,), stateful=True)(_row_shape)
for _t in _ND_OPS:
    register_op(_t, attrs={"use_locking": _t == "ScatterNdUpdate"},
                ref_inputs=(0,), ref_outputs=(0,), stateful=True)(_nd_shape)
for _t in _TENSOR_OPS:
    register_op(_t)(_tensor_shape)
# Left without a gradient, as TensorFlow leaves ScatterUpdate, ScatterMin and ScatterMax:
# tf.gradients raises LookupError when a gradient reaches one.
not_differentiable(*(t for t in _ROW_OPS
                     if t not in ("ScatterUpdate", "ScatterMin", "ScatterMax")), *_ND_OPS)


def _index_tensor(indices):
    indices = convert_to_tensor(indices, name="indices")
    if indices.dtype.base_dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"scatter: indices must be int32 or int64, got "
                        f"{indices.dtype.base_dtype.name}")
    return indices


def _scatter_ref(op_type, ref, indices, updates, use_locking, name):
    handle = getattr(ref, "handle", None)
    if handle is not None and handle.dtype.base_dtype == _dtypes.resource and \
            op_type[len("Scatter"):] in resource_variable_ops.SCATTER_KINDS:
        # A resource variable: ResourceScatter<kind>, read lazily after it (as TF).
        op = resource_variable_ops.resource_scatter(
            op_type[len("Scatter"):], handle, _index_tensor(indices), updates, ref.dtype,
            name=name)
        return ref._lazy_read(op, True)
    if handle is not None and handle.dtype.base_dtype == _dtypes.resource and \
            op_type in _ND_OPS:
        # ResourceScatterNd<kind>, read lazily after it (as TF).
        op = resource_variable_ops.resource_scatter_nd(
            op_type[len("ScatterNd"):], handle, _index_tensor(indices), updates, ref.dtype,
            name=name)
        return ref._lazy_read(op, True)
    ref_t = _ref_of(ref)
    want = ref_t.dtype.base_dtype
    updates = convert_to_tensor(updates, dtype=want, name="updates")
    return make_tensor(op_type, [ref_t, _index_tensor(indices), updates],
                       {"use_locking": bool(use_locking)}, name=name or op_type)


def _row_doc(fn, verb):
    fn.__doc__ = (
        f"{verb} `updates` into the rows `indices` of variable `ref`, in place; returns "
        "the variable's ref after the write.\n\n`updates` has shape ``indices.shape + "
        "ref.shape[1:]`` (or is a scalar). Repeated indices "
        f"{'leave the last write' if verb == 'Write' else 'all apply'}.\n\n"
        "Example\n-------\n>>> import flowgraph as tf\n>>> v = tf.Variable([1.0, 2.0])\n"
        f">>> tf.{fn.__name__}(v, [1], [4.0]).op.type\n'{fn._op_type}'\n")
    return fn


def _make_row(op_type, fn_name, verb, default_locking):
    def fn(ref, indices, updates, use_locking=default_locking, name=None):
        return _scatter_ref(op_type, ref, indices, updates, use_locking, name)

    fn.__name__ = fn.__qualname__ = fn_name
    fn._op_type = op_type
    return _row_doc(fn, verb)


scatter_update = _make_row("ScatterUpdate", "scatter_update", "Write", True)
scatter_add = _make_row("ScatterAdd", "scatter_add", "Add", False)
scatter_sub = _make_row("ScatterSub", "scatter_sub", "Subtract", False)
scatter_mul = _make_row("ScatterMul", "scatter_mul", "Multiply", False)
scatter_div = _make_row("ScatterDiv", "scatter_div", "Divide", False)
scatter_min = _make_row("ScatterMin", "scatter_min", "Take the minimum with", False)
scatter_max = _make_row("ScatterMax", "scatter_max", "Take the maximum with", False)
scatter_nd_update = _make_row("ScatterNdUpdate", "scatter_nd_update", "Write", True)
scatter_nd_add = _make_row("ScatterNdAdd", "scatter_nd_add", "Add", False)
scatter_nd_sub = _make_row("ScatterNdSub", "scatter_nd_sub", "Subtract", False)
for _f in (scatter_nd_update, scatter_nd_add, scatter_nd_sub):
    _f.__doc__ = _f.__doc__.replace("the rows `indices`", "the index tuples `indices`").replace(
        "``indices.shape + ref.shape[1:]``",
        "``indices.shape[:-1] + ref.shape[indices.shape[-1]:]``").replace(
        "tf.scatter_nd_update(v, [1]", "tf.scatter_nd_update(v, [[1]]").replace(
        "tf.scatter_nd_add(v, [1]", "tf.scatter_nd_add(v, [[1]]").replace(
        "tf.scatter_nd_sub(v, [1]", "tf.scatter_nd_sub(v, [[1]]")


def _tensor_scatter(op_type, tensor, indices, updates, name):
    with op_scope(name, op_type, (tensor, indices, updates)) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        index = _index_tensor(indices)
        updates = convert_to_tensor(updates, dtype=tensor.dtype.base_dtype, name="updates")
        return make_tensor(op_type, [tensor, index, updates], name=scope)


def _make_tensor_fn(op_type, fn_name, what):
    def fn(tensor, indices, updates, name=None):
        return _tensor_scatter(op_type, tensor, indices, updates, name)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = (
        f"A copy of `tensor` with `updates` {what} at the index tuples `indices`.\n\n"
        "`updates` has shape ``indices.shape[:-1] + tensor.shape[indices.shape[-1]:]``.\n\n"
        "Example\n-------\n>>> import flowgraph as tf\n>>> with tf.Session() as sess:\n"
        f"...     print(sess.run(tf.{fn_name}([1, 1, 1], [[0], [2]], [5, 0])))\n"
        f"{_EXAMPLES[op_type]}\n")
    return fn


_EXAMPLES = {"TensorScatterUpdate": "[5 1 0]", "TensorScatterAdd": "[6 1 1]",
             "TensorScatterSub": "[-4  1  1]", "TensorScatterMax": "[5 1 1]",
             "TensorScatterMin": "[1 1 0]"}
tensor_scatter_nd_update = _make_tensor_fn("TensorScatterUpdate", "tensor_scatter_nd_update",
                                           "written")
tensor_scatter_nd_add = _make_tensor_fn("TensorScatterAdd", "tensor_scatter_nd_add", "added")
tensor_scatter_nd_sub = _make_tensor_fn("TensorScatterSub", "tensor_scatter_nd_sub",
                                        "subtracted")
tensor_scatter_nd_max = _make_tensor_fn("TensorScatterMax", "tensor_scatter_nd_max",
                                        "combined by maximum")
tensor_scatter_nd_min = _make_tensor_fn("TensorScatterMin", "tensor_scatter_nd_min",
                                        "combined by minimum")
# TensorFlow 1.x's older spellings.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Write ``updates[i..., j]`` into ``ref[i..., indices[i..., j]]`` (a scatter along the
    last index dimension, batched over the leading ones); returns the variable's ref.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    >>> up = tf.batch_scatter_update(v, [[1], [0]], [[9.0], [8.0]])
    >>> with tf.Session() as sess:
    ...     sess.run(v.initializer)
    ...     print(sess.run(up).tolist())
    [[1.0, 9.0], [8.0, 4.0]]
    """
    from flowgraph.ops.array_gen_ops import range as _range
    from flowgraph.ops.array_join_ops import stack
    from flowgraph.ops.array_shape_ops import reshape, shape

    with name_scope(name, "BatchScatterUpdate", [ref, indices, updates]):
        indices = _index_tensor(indices)
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("tf.batch_scatter_update: the rank of indices must be known")
        if rank == 1:
            return scatter_update(ref, indices, updates, use_locking=use_locking)
        dims = shape(indices, out_type=indices.dtype)
        grids = []
        for axis in range(rank - 1):
            along = _range(dims[axis])
            view = [1] * rank
            view[axis] = -1
            grids.append(reshape(along, view) * ones_like(indices))
        full = stack([*grids, indices], axis=-1)
        return scatter_nd_update(ref, full, updates, use_locking=use_locking)


# -- gradients of the tensor forms ------------------------------------------------------

@register_gradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, grad):
    _, indices, _ = op.inputs
    kept = tensor_scatter_nd_update(grad, indices, zeros_like(op.inputs[2]))
    return [kept, None, gather_nd(grad, indices)]


@register_gradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op, grad):
    return [grad, None, gather_nd(grad, op.inputs[1])]


@register_gradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op, grad):
    return [grad, None, -gather_nd(grad, op.inputs[1])]


def _minmax_grad(op, grad):
    tensor, indices, updates = op.inputs
    out = op.outputs[0]
    picked = gather_nd(out, indices)
    from_tensor = cast(equal(tensor, out), grad.dtype)
    from_updates = cast(equal(updates, picked), grad.dtype)
    return [multiply(grad, from_tensor), None,
            multiply(gather_nd(grad, indices), from_updates)]


register_gradient("TensorScatterMax")(_minmax_grad)
register_gradient("TensorScatterMin")(_minmax_grad)
