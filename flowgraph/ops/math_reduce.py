"""Reductions (`reduce_sum`, ...), arg-reductions, scans (`cumsum`), `add_n`, `bincount`.

Reductions take TF1's arguments: `axis` (int, list, tensor, negative, or None for all
axes) or its deprecated alias `reduction_indices`, and `keepdims` or its alias
`keep_dims`. Integer means stay integer (truncated), as in TensorFlow.

Example
-------
>>> import flowgraph as tf
>>> x = tf.placeholder(tf.float32, [None, 3, 5])
>>> tf.reduce_sum(x, [0, -1], keepdims=True).shape.as_list()
[1, 3, 1]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant,
    constant_value,
    convert_to_tensor,
    register_constant_evaluator,
)
from flowgraph.framework.graph import graph_for, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import math_ops as _m
from flowgraph.ops.array_identity_ops import identity, stop_gradient
from flowgraph.ops.array_shape_ops import rank as _rank
from flowgraph.ops.array_shape_ops import reshape as _reshape
from flowgraph.ops.array_shape_ops import shape as _shape
from flowgraph.ops.op_dispatch import handler_for
from flowgraph.ops.op_util import attr_dtype, make_tensor

__all__ = [
    "accumulate_n", "add_n", "argmax", "argmin", "bincount", "cumprod", "cumsum",
    "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_sum",
]

_INDEX = (_dtypes.int32, _dtypes.int64)


def _axis_tensor(axis, op_type: str, param: str) -> Tensor:
    t = convert_to_tensor(axis, dtype_hint=_dtypes.int32, name=param)
    _m.check_dtype(t, _INDEX, op_type, param)
    if t.shape.ndims is not None and t.shape.ndims > 1:
        raise ValueError(f"'{param}' of {op_type} must be a scalar or a vector, got shape "
                         f"{t.shape}")
    return t


def _static_axes(op, rank: int, axes) -> list[int]:
    """Axes normalized to [0, rank); a shape error for out-of-range ones."""
    out = []
    for a in np.reshape(axes, -1).tolist():
        if not -rank <= a < rank:
            raise op.shape_error(f"Invalid reduction dimension {a} for input with {rank} "
                                 f"dimensions")
        out.append(a % rank)
    return out


# -- reductions ---------------------------------------------------------------------------
def _reduce_shape(op, x, axes_shape):
    keep = op.attrs["keep_dims"]
    if x.ndims is None:
        return [TensorShape(None)]
    axes = constant_value(op.inputs[1])
    if axes is None:
        return [TensorShape([None] * x.ndims) if keep else TensorShape(None)]
    reduced = set(_static_axes(op, x.ndims, axes))
    dims = x.dims
    if keep:
        return [TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in reduced])]


_REDUCTIONS = {  # op type -> dtypes allowed
    "Sum": _m._NUM, "Mean": _m._NUM, "Prod": _m._NUM, "Max": _m._REAL, "Min": _m._REAL,
    "Any": _m._BOOL, "All": _m._BOOL,
}
for _op_type in _REDUCTIONS:
    register_op(_op_type, attrs={"keep_dims": False, "Tidx": _dtypes.int32})(_reduce_shape)


def _evaluate_reduction(fn, identity):
    def evaluate(op, index):
        values = _m._const_inputs(op)
        if values is None:
            return None
        x, axes = np.asarray(values[0]), np.reshape(values[1], -1)
        if any(not -x.ndim <= a < x.ndim for a in axes.tolist()):
            return None
        ax = tuple(sorted({a % x.ndim for a in axes.tolist()}))
        kwargs = {} if identity is None else {"initial": identity(x.dtype)}
        out = fn(x, axis=ax, keepdims=op.attrs["keep_dims"], **kwargs)
        return np.asarray(out, dtype=x.dtype)

    return evaluate


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


register_constant_evaluator("Max")(_evaluate_reduction(np.max, _lowest))
register_constant_evaluator("Min")(_evaluate_reduction(np.min, _highest))
register_constant_evaluator("Sum")(_evaluate_reduction(np.sum, None))
register_constant_evaluator("Prod")(_evaluate_reduction(np.prod, None))
not_differentiable("Any", "All")


def _resolve(axis, reduction_indices, keepdims, keep_dims):
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'.")
        keepdims = keep_dims
    return axis, bool(keepdims)


def _all_axes(x: Tensor) -> Tensor:
    """The axes `range(rank(x))`: a constant when the rank is known."""
    if x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32), name="reduction_indices")
    ones = _m.add(_m.multiply(_shape(x), 0), 1)  # [1] * rank(x), from ops of any vintage
    return cumsum(ones, exclusive=True, name="reduction_indices")


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
            default_name=None):
    axis, keepdims = _resolve(axis, reduction_indices, keepdims, keep_dims)
    if (h := handler_for("reduce", input_tensor)) is not None:  # a RaggedTensor
        return h(op_type, input_tensor, axis, keepdims, name)
    if axis is None and isinstance(input_tensor, Tensor) and input_tensor.shape.ndims is not None:
        # TensorFlow makes the all-axes constant before the op's scope (a plain `Const`);
        # for a scalar (rank 0, which its fast path takes for unknown) `range(rank(x))`.
        with graph_for([input_tensor]).as_default():
            if input_tensor.shape.ndims == 0:
                limit = _rank(input_tensor)
                with name_scope(None, "range") as range_scope:  # tf.range(0, rank(x))
                    axis = make_tensor("Range", [constant(0, name="start"), limit,
                                                 constant(1, name="delta")],
                                       name=range_scope)
            else:
                axis = constant(np.arange(input_tensor.shape.ndims, dtype=np.int32))
        all_axes = True
    else:
        all_axes = axis is None
    with name_scope(name, default_name or op_type, [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        _m.check_dtype(x, _REDUCTIONS[op_type], op_type, "input")
        axes = _all_axes(x) if axis is None else _axis_tensor(axis, op_type,
                                                               "reduction_indices")
        out = make_tensor(op_type, [x, axes], {"keep_dims": keepdims,
                                               "Tidx": axes.dtype.base_dtype}, name=scope)
        if all_axes and not keepdims:
            out.set_shape([])  # all axes reduced, even when the rank is unknown
        return out


def _reduction(op_type: str, fn_name: str, what: str, call: str, result: str):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        return _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices,
                       keep_dims)

    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = (
        f"{what} of elements across `axis` (all axes if None).\n\n"
        "`keepdims` keeps reduced axes with length 1; `reduction_indices` and `keep_dims`\n"
        "are TF1's deprecated aliases of `axis` and `keepdims`.\n\n"
        "Example\n-------\n>>> import flowgraph as tf\n>>> with tf.Session() as sess:\n"
        f"...     print(sess.run(tf.{call}))\n{result}\n")
    return fn


reduce_sum = _reduction("Sum", "reduce_sum", "Sum", "reduce_sum([[1, 2], [3, 4]], 0)",
                        "[4 6]")
reduce_mean = _reduction("Mean", "reduce_mean", "Mean (truncated toward zero for integers)",
                         "reduce_mean([[1., 2.], [3., 4.]], axis=1)", "[1.5 3.5]")
reduce_prod = _reduction("Prod", "reduce_prod", "Product", "reduce_prod([[1, 2], [3, 4]], 1)",
                         "[ 2 12]")
reduce_max = _reduction("Max", "reduce_max", "Maximum (the dtype's lowest value if empty)",
                        "reduce_max([[1, 5], [3, 4]], -1)", "[5 4]")
reduce_min = _reduction("Min", "reduce_min", "Minimum (the dtype's highest value if empty)",
                        "reduce_min([[1, 5], [3, 4]])", "1")
reduce_any = _reduction("Any", "reduce_any", "Logical OR",
                        "reduce_any([[True, False], [False, False]], 1)", "[ True False]")
reduce_all = _reduction("All", "reduce_all", "Logical AND",
                        "reduce_all([[True, False], [True, True]], 1)", "[False  True]")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """``log(sum(exp(x)))`` across `axis`, computed stably (the maximum is factored out).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.reduce_logsumexp(tf.constant([1000.0, 1000.0], tf.float64))))
    1000.6931471805599
    """
    axis, keepdims = _resolve(axis, reduction_indices, keepdims, keep_dims)
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        _m.check_dtype(x, _m._F, "ReduceLogSumExp", "input_tensor")
        # TensorFlow's graph: the maximum (0 where it is not finite, so that exp(x - max)
        # stays defined and the result is still +-inf) factored out, out of the gradient
        raw_max = reduce_max(x, axis, keepdims=True)
        finite = _m.is_finite(raw_max)
        zeros = make_tensor("ZerosLike", [raw_max], name="ZerosLike")
        shift = stop_gradient(make_tensor("Select", [finite, raw_max, zeros], name="Select"))
        result = _m.log(reduce_sum(_m.exp(_m.subtract(x, shift)), axis, keepdims=keepdims))
        if not keepdims:
            shift = _reshape(shift, _shape(result, optimize=False))
        result = _m.add(result, shift, name=scope)
        if not keepdims and axis is None:
            result.set_shape([])  # all axes reduced, even when the rank is unknown
        return result


# -- arg-reductions -----------------------------------------------------------------------
def _arg_shape(op, x, axis_shape):
    if x.ndims is None:
        return [TensorShape(None)]
    axis = constant_value(op.inputs[1])
    if axis is None:
        return [TensorShape([None] * max(x.ndims - 1, 0))]
    a = int(np.reshape(axis, -1)[0])
    if not -x.ndims <= a < x.ndims:
        raise op.shape_error(f"Dimension ({a}) must be in the range [{-x.ndims}, {x.ndims}), "
                             f"where {x.ndims} is the number of dimensions in the input")
    a %= x.ndims
    return [TensorShape([d for i, d in enumerate(x.dims) if i != a])]


for _op_type in ("ArgMax", "ArgMin"):
    register_op(_op_type, attrs={"output_type": _dtypes.int64, "Tidx": _dtypes.int32},
                dtype_fn=attr_dtype("output_type"))(_arg_shape)
not_differentiable("ArgMax", "ArgMin")


def _arg(op_type, input, axis, name, dimension, output_type):
    if dimension is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'.")
        axis = dimension
    axis = 0 if axis is None else axis
    out = _dtypes.as_dtype(output_type).base_dtype
    if out not in (_dtypes.int16, _dtypes.uint16, _dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value passed to parameter 'output_type' of op '{op_type}' has "
                        f"DataType {out.name} not in list of allowed values: int16, uint16, "
                        "int32, int64")
    with name_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        _m.check_dtype(x, (*_m._REAL, _dtypes.bool), op_type, "input")  # no complex
        axis_t = _axis_tensor(axis, op_type, "dimension")
        if axis_t.shape.ndims not in (None, 0):
            raise ValueError(f"'dimension' of {op_type} must be a scalar, got shape "
                             f"{axis_t.shape}")
        return make_tensor(op_type, [x, axis_t], {"output_type": out,
                                                  "Tidx": axis_t.dtype.base_dtype},
                           name=scope)


def argmax(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):
    """Index of the largest value along `axis` (default 0; `dimension` is TF1's alias).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.argmax([[1, 5, 2], [7, 0, 1]], axis=1)))
    [1 0]
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):
    """Index of the smallest value along `axis` (default 0; `dimension` is TF1's alias).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.argmin([[1, 5, 2], [7, 0, 1]], axis=1)))
    [0 1]
    """
    return _arg("ArgMin", input, axis, name, dimension, output_type)


# -- scans --------------------------------------------------------------------------------
def _scan_shape(op, x, axis_shape):
    return [x]  # an axis out of range fails when it runs, as in TensorFlow


for _op_type in ("Cumsum", "Cumprod"):
    register_op(_op_type, attrs={"exclusive": False, "reverse": False,
                                 "Tidx": _dtypes.int32})(_scan_shape)


def _scan(op_type, x, axis, exclusive, reverse, name):
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        _m.check_dtype(x, _m._NUM, op_type)
        axis_t = _axis_tensor(axis, op_type, "axis")
        if axis_t.shape.ndims not in (None, 0):
            raise ValueError(f"'axis' of {op_type} must be a scalar, got shape {axis_t.shape}")
        return make_tensor(op_type, [x, axis_t], {"exclusive": bool(exclusive),
                                                  "reverse": bool(reverse),
                                                  "Tidx": axis_t.dtype.base_dtype},
                           name=scope)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis`; `exclusive` leaves out the current element, `reverse`
    runs from the end.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True)))
    [5 3 0]
    """
    return _scan("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis` (`exclusive`/`reverse` as in `cumsum`).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.cumprod([1, 2, 3], exclusive=True)))
    [1 1 2]
    """
    return _scan("Cumprod", x, axis, exclusive, reverse, name)


# -- add_n --------------------------------------------------------------------------------
@register_op("AddN", attrs={"N": 1})
def _add_n_shape(op, *shapes):
    out = TensorShape(None)
    for i, s in enumerate(shapes):
        if not out.is_compatible_with(s):
            raise op.shape_error(f"input {i} has shape {s}, which differs from {out}; all "
                                 "inputs of AddN must have the same shape")
        out = out.merge_with(s)
    return [out]


def _check_inputs(inputs, fn_name: str) -> list[Tensor]:
    if isinstance(inputs, Tensor) or not isinstance(inputs, list | tuple) or not inputs:
        raise ValueError(f"{fn_name}: inputs must be a list of at least one Tensor with the "
                         f"same dtype and shape, got {inputs!r}")
    tensors = [convert_to_tensor(t) for t in inputs]
    kinds = [t.dtype.base_dtype for t in tensors]
    if any(k != kinds[0] for k in kinds):
        raise TypeError(f"Tensors in list passed to 'inputs' of 'AddN' Op have types "
                        f"[{', '.join(k.name for k in kinds)}] that don't all match.")
    _m.check_dtype(tensors[0], _m._NUM, "AddN", "inputs")
    return tensors


def add_n(inputs, name=None):
    """Elementwise sum of a list of tensors of one dtype and shape.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.add_n([[1, 2], [10, 20], [100, 200]])))
    [111 222]
    """
    if (h := handler_for("add_n", inputs)) is not None:  # RaggedTensors
        return h(inputs, name)
    tensors = _check_inputs(inputs, "add_n")
    if len(tensors) == 1:
        if name:
            return identity(tensors[0], name=name)
        return tensors[0]
    return make_tensor("AddN", tensors, {"N": len(tensors)}, name=name or "AddN")


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """Elementwise sum of a list of tensors (as `add_n`), checking `shape` and
    `tensor_dtype` when given.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.accumulate_n([[1., 2.], [3., 4.]], shape=[2])))
    [4. 6.]
    """
    tensors = _check_inputs(inputs, "accumulate_n")
    if tensor_dtype is not None and _dtypes.as_dtype(tensor_dtype) != tensors[0].dtype:
        raise TypeError(f"accumulate_n: tensor_dtype {_dtypes.as_dtype(tensor_dtype).name} "
                        f"does not match the inputs' dtype {tensors[0].dtype.name}")
    if shape is not None:
        want = TensorShape(shape)
        for t in tensors:
            if not t.shape.is_compatible_with(want):
                raise ValueError(f"accumulate_n: input {t.name} has shape {t.shape}, not "
                                 f"compatible with shape {want}")
    return add_n(tensors, name=name)


# -- bincount -----------------------------------------------------------------------------
@register_op("Bincount", dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype])
def _bincount_shape(op, arr, size, weights):
    if weights.num_elements() != 0 and not weights.is_compatible_with(arr):
        raise op.shape_error(f"weights of shape {weights} must have the shape of arr "
                             f"({arr}) or be empty")
    n = constant_value(op.inputs[1])
    return [TensorShape([None if n is None else int(n)])]


# Left without a gradient, as TensorFlow leaves Bincount:
# tf.gradients raises LookupError when a gradient reaches one.


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32,
             name=None):
    """Count occurrences of each value in the non-negative int array `arr`.

    The output has length ``max(arr) + 1``, at least `minlength` and at most `maxlength`
    (larger values are dropped). With `weights` (same shape as `arr`) each occurrence
    adds its weight and the output has the weights' dtype; else it has `dtype`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.bincount([1, 1, 3], minlength=5)))
    [0 2 0 1 0]
    """
    with name_scope(name, "bincount", [arr, weights]):
        arr = convert_to_tensor(arr, name="arr")
        if arr.dtype.base_dtype == _dtypes.int64:
            arr = _m.cast(arr, _dtypes.int32)
        _m.check_dtype(arr, (_dtypes.int32,), "Bincount", "arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            if not arr.shape.is_compatible_with(weights.shape):
                raise ValueError(f"bincount: weights must have the shape of arr {arr.shape}, "
                                 f"got {weights.shape}")
            weights = _reshape(weights, [-1])
        arr = _reshape(arr, [-1])  # TF counts over all elements whatever the rank
        size = _m.maximum(_m.add(reduce_max(arr), 1), 0)  # 0 for an empty arr
        if minlength is not None:
            size = _m.maximum(minlength, size)
        if maxlength is not None:
            size = _m.minimum(maxlength, size)
        if weights is None:
            weights = constant([], dtype=dtype, name="weights")
        else:
            _m.check_dtype(weights, (_dtypes.int32, _dtypes.int64, _dtypes.float32,
                                     _dtypes.float64), "Bincount", "weights")
        # TF 2.15 builds DenseBincount here (`Bincount` stays registered for old graphs).
        return make_tensor("DenseBincount", [arr, size, weights], name="DenseBincount")
