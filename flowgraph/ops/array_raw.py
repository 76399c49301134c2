"""Array op types of TensorFlow graphs beside the `array_*` modules: the TF 1.0 names
``Concat`` (``concat_dim`` first), ``Reverse`` (a bool per dimension), ``TopK`` and
``InTopK`` (``k`` an attribute) and ``PlaceholderV2``; ops TensorFlow 2.x's public
functions emit (``EnsureShape``, ``HistogramFixedWidth``, ``ParallelConcat``,
``GuaranteeConst``, ``ApproxTopK``); and ``NthElement``, ``UniqueV2``,
``UniqueWithCountsV2``, ``Empty``, ``InplaceAdd``/``Sub``/``Update``, ``PreventGradient``,
``CheckNumericsV2``, ``DebugGradientIdentity``, ``Snapshot`` and ``DeepCopy``.

Gradients are TensorFlow's; the ops TensorFlow gives none (``PreventGradient`` among
them) have none: `tf.gradients` through one raises LookupError. Kernels:
`flowgraph/backends/cpu/kernels_math_raw.py`.

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([[1, 2], [3, 4]])
>>> tf.Session().run(tf.raw_ops.Reverse(tensor=x, dims=[True, False])).tolist()
[[3, 4], [1, 2]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.registry import (
    get_op_def,
    not_differentiable,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import Dimension, TensorShape, as_shape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops.math_reduce import reduce_sum
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = ["ensure_shape", "guarantee_const", "histogram_fixed_width", "parallel_stack"]


def _same(op, x, *rest):
    return [x]


@register_op("Concat", attrs={"N": 2}, dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _concat_shape(op, concat_dim, *values):
    axis = constant_value(op.inputs[0])
    known = [v for v in values if v.ndims is not None]
    if not known:
        return [TensorShape(None)]
    rank = known[0].ndims
    if any(v.ndims != rank for v in known):
        raise op.shape_error(f"all values must have the same rank, got {list(values)}")
    if axis is None:
        return [TensorShape([None] * rank)]
    a = int(axis)
    if not -rank <= a < rank:
        raise op.shape_error(f"concat_dim {a} is out of range for rank {rank}")
    a %= rank
    out = [Dimension(None)] * rank
    total = 0
    for i in range(rank):
        if i == a:
            continue
        d = Dimension(None)
        for v in known:
            if not d.is_compatible_with(v.dims[i]):
                raise op.shape_error(f"dimension {i} differs between {list(values)}")
            d = d.merge_with(v.dims[i])
        out[i] = d
    sizes = [v.dims[a].value if v.ndims is not None else None for v in values]
    total = None if None in sizes else sum(sizes)
    out[a] = Dimension(total)
    return [TensorShape(out)]


@register_op("Reverse")
def _reverse_shape(op, x, dims):
    if dims.ndims not in (None, 1):
        raise op.shape_error(f"dims must be a vector of bools, got shape {dims}")
    if x.ndims is not None and dims.ndims == 1 and dims.dims[0].value not in (None, x.ndims):
        raise op.shape_error(f"dims has {dims.dims[0]} entries but tensor {x} has rank "
                             f"{x.ndims}")
    return [x]


@register_op("NthElement", attrs={"reverse": False})
def _nth_shape(op, x, n):
    if x.ndims is None:
        return [TensorShape(None)]
    if x.ndims < 1:
        raise op.shape_error(f"input must be at least 1-D, got shape {x}")
    k = constant_value(op.inputs[1])
    last = x.dims[-1].value
    if k is not None and last is not None and not 0 <= int(k) < last:
        raise op.shape_error(f"input must have last dimension > n = {int(k)} but is {last}")
    return [TensorShape(x.dims[:-1])]


def _top_k_dtypes(op):
    return [op.inputs[0].dtype.base_dtype, _dtypes.int32]


@register_op("TopK", attrs={"k": None, "sorted": True}, num_outputs=2, dtype_fn=_top_k_dtypes)
def _top_k_v1_shape(op, x):
    k = int(op.attrs["k"])
    if k < 0:
        raise op.shape_error(f"k must be non-negative but is {k}")
    if x.ndims is None:
        return [TensorShape(None)] * 2
    if x.ndims < 1 or (x.dims[-1].value is not None and x.dims[-1].value < k):
        raise op.shape_error(f"input must have last dimension >= k = {k}, got shape {x}")
    out = TensorShape([*x.dims[:-1], k])
    return [out, out]


@register_op("InTopK", attrs={"k": None}, dtype_fn=fixed_dtype(_dtypes.bool))
def _in_top_k_v1_shape(op, predictions, targets):
    if predictions.ndims not in (None, 2) or targets.ndims not in (None, 1):
        raise op.shape_error(f"predictions must be 2-D and targets 1-D, got {predictions} "
                             f"and {targets}")
    batch = Dimension(None)
    for d in ([predictions.dims[0]] if predictions.ndims else []) + \
            ([targets.dims[0]] if targets.ndims else []):
        if not batch.is_compatible_with(d):
            raise op.shape_error(f"predictions {predictions} and targets {targets} hold "
                                 "different batch sizes")
        batch = batch.merge_with(d)
    return [TensorShape([batch])]


@register_op("ApproxTopK", attrs={"k": None, "reduction_dimension": -1,
                                  "recall_target": 0.95, "is_max_k": True,
                                  "reduction_input_size_override": -1,
                                  "aggregate_to_topk": True},
             num_outputs=2, dtype_fn=_top_k_dtypes, cost="expensive")
def _approx_top_k_shape(op, x):
    if x.ndims is None:
        return [TensorShape(None)] * 2
    rd = int(op.attrs["reduction_dimension"])
    if not -x.ndims <= rd < x.ndims:
        raise op.shape_error(f"reduction_dimension {rd} is out of range for {x}")
    dims = list(x.dims)
    dims[rd % x.ndims] = Dimension(int(op.attrs["k"]))
    return [TensorShape(dims)] * 2


@register_op("HistogramFixedWidth", attrs={"dtype": _dtypes.int32},
             dtype_fn=attr_dtype("dtype"))
def _histogram_shape(op, values, value_range, nbins):
    if value_range.ndims not in (None, 1) or not value_range.is_compatible_with([2]):
        raise op.shape_error(f"value_range must be a vector of 2, got shape {value_range}")
    n = constant_value(op.inputs[2])
    return [TensorShape([None if n is None else int(n)])]


def _unique_shape(op, x, axis):
    idx = Dimension(None)
    a = constant_value(op.inputs[1])
    if x.ndims is not None and a is not None:
        flat = [int(v) for v in a.ravel()]
        if not flat:
            idx = Dimension(x.num_elements()) if x.ndims == 1 or x.is_fully_defined() \
                else Dimension(None)
            out = TensorShape([None])
        else:
            idx = x.dims[flat[0] % max(x.ndims, 1)]
            out = TensorShape([None] * x.ndims)
    else:
        out = TensorShape(None)
    shapes = [out, TensorShape([idx])]
    return shapes + ([TensorShape([None])] if op.type == "UniqueWithCountsV2" else [])


def _unique_dtypes(op):
    idx = _dtypes.as_dtype(op.attrs["out_idx"])
    return [op.inputs[0].dtype.base_dtype, idx] + \
        ([idx] if op.type == "UniqueWithCountsV2" else [])


register_op("UniqueV2", attrs={"out_idx": _dtypes.int32}, num_outputs=2,
            dtype_fn=_unique_dtypes)(_unique_shape)
register_op("UniqueWithCountsV2", attrs={"out_idx": _dtypes.int32}, num_outputs=3,
            dtype_fn=_unique_dtypes)(_unique_shape)


@register_op("Empty", attrs={"dtype": None, "init": False}, dtype_fn=attr_dtype("dtype"))
def _empty_shape(op, shape):
    from flowgraph.framework.constant_op import constant_value_as_shape

    return [constant_value_as_shape(op.inputs[0])]


@register_op("EnsureShape", attrs={"shape": None})
def _ensure_shape_shape(op, x):
    want = as_shape(op.attrs["shape"])
    if not x.is_compatible_with(want):
        raise op.shape_error(f"the input of shape {x} is not compatible with shape {want}")
    return [x.merge_with(want)]


def _inplace_shape(op, x, i, v):
    if i.ndims not in (None, 0, 1):
        raise op.shape_error(f"i must be a scalar or a vector, got shape {i}")
    return [x]


for _name in ("InplaceAdd", "InplaceSub", "InplaceUpdate"):
    register_op(_name)(_inplace_shape)


@register_op("ParallelConcat", attrs={"N": 1, "shape": None})
def _parallel_concat_shape(op, *values):
    return [as_shape(op.attrs["shape"])]


register_op("PreventGradient", attrs={"message": ""})(_same)
register_op("CheckNumericsV2", attrs={"message": ""})(_same)
for _name in ("GuaranteeConst", "DebugGradientIdentity", "Snapshot", "DeepCopy"):
    register_op(_name)(_same)
register_op("PlaceholderV2", attrs={"dtype": None, "shape": None},
            dtype_fn=attr_dtype("dtype"))(get_op_def("Placeholder").shape_fn)

not_differentiable("PlaceholderV2")


@register_gradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    # TensorFlow's words; the message attribute printed as the bytes it is there
    message = op.get_attr("message")
    if isinstance(message, str):
        message = message.encode()
    raise LookupError(f"Gradient explicitly disabled. Reason: {message!r} (op "
                      f"'{op.name}', PreventGradient)")


# -- wrappers (the public functions that emit these ops) --------------------------------------

def ensure_shape(x, shape, name=None):
    """`x`, checked to have `shape` (None entries match any size) when the graph is built
    and again when it runs (op ``EnsureShape``); its static shape becomes the merge.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None, None])
    >>> tf.ensure_shape(x, [None, 3]).shape.as_list()
    [None, 3]
    """
    with op_scope(name, "EnsureShape", (x,)) as scope:
        t = convert_to_tensor(x, name="input")
        return make_tensor("EnsureShape", [t], {"shape": as_shape(shape)}, name=scope)


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """Counts of `values` in `nbins` equal bins spanning `value_range` ``[lo, hi]``; values
    below ``lo`` count in the first bin, values at or above ``hi`` in the last (op
    ``HistogramFixedWidth``).

    Example
    -------
    >>> import flowgraph as tf
    >>> h = tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 20.0], [0.0, 5.0], nbins=5)
    >>> tf.Session().run(h).tolist()
    [2, 1, 1, 0, 2]
    """
    with op_scope(name, "histogram_fixed_width", (values, value_range, nbins)) as scope:
        v = convert_to_tensor(values, name="values")
        r = convert_to_tensor(value_range, dtype=v.dtype.base_dtype, name="value_range")
        n = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        return make_tensor("HistogramFixedWidth", [v, r, n],
                           {"dtype": _dtypes.as_dtype(dtype)}, name=scope)


def parallel_stack(values, name="parallel_stack"):
    """`values` (all of one known shape) stacked along a new first axis, written in
    parallel (op ``ParallelConcat`` of each value expanded to ``[1, ...]``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.parallel_stack([[1, 2], [3, 4]]).shape.as_list()
    [2, 2]
    """
    from flowgraph.framework.graph import name_scope

    with name_scope(name, "parallel_stack", values) as scope:
        ts = [convert_to_tensor(v) for v in values]
        shape = ts[0].shape
        if not shape.is_fully_defined():
            raise ValueError(f"tf.parallel_stack needs values of a fully defined shape, got "
                             f"{shape}")
        expanded = [_a.expand_dims(t, 0) for t in ts]
        out_shape = TensorShape([len(ts), *shape.as_list()])
        return make_tensor("ParallelConcat", expanded, {"N": len(ts), "shape": out_shape},
                           name=scope)


def guarantee_const(input, name=None):
    """`input`, promised constant over the session's lifetime (op ``GuaranteeConst``; as in
    TensorFlow it has no gradient).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.guarantee_const([1, 2])).tolist()
    [1, 2]
    """
    with op_scope(name, "GuaranteeConst", (input,)) as scope:
        return make_tensor("GuaranteeConst", [convert_to_tensor(input, name="input")],
                           name=scope)


# -- gradients -------------------------------------------------------------------------------

@register_gradient("Concat")
def _concat_grad(op, grad):
    axis = op.inputs[0]
    values = op.inputs[1:]
    rank = _a.rank(values[0])
    a = _m.floormod(axis, rank)
    sizes = _a.stack([_a.shape(v)[a] for v in values]) if len(values) > 1 else None
    if sizes is None:
        return [None, grad]
    return [None, *_a.split(grad, sizes, a, num=len(values))]


@register_gradient("Reverse")
def _reverse_grad(op, grad):
    return [make_tensor("Reverse", [grad, op.inputs[1]]), None]


@register_gradient("NthElement")
def _nth_grad(op, grad):
    x = op.inputs[0]
    out = op.outputs[0]
    hits = _m.cast(_m.equal(_a.expand_dims(out, -1), x), grad.dtype.base_dtype)
    count = _a.expand_dims(reduce_sum(hits, -1), -1)
    return [_m.truediv(hits, count) * _a.expand_dims(grad, -1), None]


@register_gradient("TopK")
def _top_k_v1_grad(op, grad_values, grad_indices):
    return get_op_def("TopKV2").gradient(op, grad_values, grad_indices)[:1]


@register_gradient("ApproxTopK")
def _approx_top_k_grad(op, grad_values, grad_indices):
    x = op.inputs[0]
    rank = x.shape.ndims
    rd = int(op.attrs["reduction_dimension"])
    if rd == -1:  # [..., k, n] one-hot rows, summed over k
        hot = _a.one_hot(op.outputs[1], _a.shape(x)[-1], dtype=grad_values.dtype.base_dtype)
        return [reduce_sum(hot * _a.expand_dims(grad_values, -1), -2)]
    if rank is None:
        raise ValueError(f"ApproxTopK '{op.name}': the gradient along reduction_dimension "
                         f"{rd} needs the input's rank")
    rd %= rank
    hot = _a.one_hot(op.outputs[1], _a.shape(x)[rd], axis=rd,
                     dtype=grad_values.dtype.base_dtype)
    return [reduce_sum(hot * _a.expand_dims(grad_values, rd), rd + 1)]


@register_gradient("EnsureShape")
@register_gradient("DebugGradientIdentity")
def _identity_grad(op, grad):
    return [grad]


@register_gradient("CheckNumericsV2")
def _check_numerics_v2_grad(op, grad):
    message = "Not a number (NaN) or infinity (Inf) values detected in gradient. " + \
        op.attrs["message"]
    return [make_tensor("CheckNumericsV2", [grad], {"message": message})]


def top_k_v1(input, k, sorted=True, name=None):
    """One ``TopK`` op (``k`` an attribute), as TensorFlow 1.0 graphs hold it."""
    x = convert_to_tensor(input, name="input")
    op = make_op("TopK", [x], {"k": int(k), "sorted": bool(sorted)}, name=name or "TopK")
    return op.outputs[0], op.outputs[1]
