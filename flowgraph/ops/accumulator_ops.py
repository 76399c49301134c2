"""Gradient accumulators: `ConditionalAccumulator` and `SparseConditionalAccumulator`.

An accumulator sums the gradients applied to it and hands out their mean (or sum) once
enough have arrived; gradients older than its global step are dropped. It lives in the
session's resource container like a queue (kernels:
`flowgraph/backends/cpu/kernels_accumulator.py`).
As in TensorFlow 2.15's ``tf.compat.v1``, the dense accumulator uses the resource op
types (``ResourceConditionalAccumulator`` ...) and the sparse one the string-handle ops
(``SparseConditionalAccumulator`` ...).

Example
-------
>>> import flowgraph as tf
>>> acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
>>> apply = acc.apply_grad([1.0, 3.0], local_step=0)
>>> with tf.Session() as sess:
...     sess.run(apply); sess.run(apply)
...     print(sess.run(acc.take_grad(2)))
[1. 3.]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import fixed_dtype, make_op

__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase",
           "SparseConditionalAccumulator"]

_ACC_ATTRS = {"dtype": None, "shape": None, "container": "", "shared_name": "",
              "reduction_type": "MEAN"}


def _scalar(op, *_):
    return [TensorShape([])]


def _none(op, *_):
    return []


def _no_dtypes(op):
    return []


def _take_shape(op, *_):
    shape = op.attrs.get("shape")
    return [as_shape(shape) if shape is not None else TensorShape(None)]


def _attr_dtype(op):
    return [_dtypes.as_dtype(op.attrs["dtype"])]


for _ref, _handle_dtype in (("ResourceConditionalAccumulator", _dtypes.resource),
                            ("SparseConditionalAccumulator", _dtypes.string)):
    register_op(_ref, attrs=_ACC_ATTRS, dtype_fn=fixed_dtype(_handle_dtype),
                stateful=True)(_scalar)
# The sparse accumulator shares the string-handle ops for its count and step.
for _prefix in ("Resource", ""):
    register_op(f"{_prefix}AccumulatorSetGlobalStep", num_outputs=0, dtype_fn=_no_dtypes,
                stateful=True)(_none)
    register_op(f"{_prefix}AccumulatorNumAccumulated", dtype_fn=fixed_dtype(_dtypes.int32),
                stateful=True)(_scalar)
register_op("ResourceAccumulatorApplyGradient", attrs={"dtype": None}, num_outputs=0,
            dtype_fn=_no_dtypes, stateful=True)(_none)
register_op("ResourceAccumulatorTakeGradient", attrs={"dtype": None, "shape": None},
            dtype_fn=_attr_dtype, stateful=True)(_take_shape)
register_op("SparseAccumulatorApplyGradient", attrs={"dtype": None, "has_known_shape": False},
            num_outputs=0, dtype_fn=_no_dtypes, stateful=True)(_none)
register_op("SparseAccumulatorTakeGradient", attrs={"dtype": None}, num_outputs=3,
            dtype_fn=lambda op: [_dtypes.int64, _dtypes.as_dtype(op.attrs["dtype"]),
                                 _dtypes.int64],
            stateful=True)(lambda op, *_: [TensorShape(None)] * 3)
not_differentiable(
    "ResourceConditionalAccumulator", "SparseConditionalAccumulator",
    "ResourceAccumulatorApplyGradient", "ResourceAccumulatorSetGlobalStep",
    "AccumulatorSetGlobalStep", "ResourceAccumulatorNumAccumulated",
    "AccumulatorNumAccumulated", "ResourceAccumulatorTakeGradient",
    "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient")


def _reduction(reduction_type: str, op_type: str) -> str:
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(
            f"Attr 'reduction_type' of '{op_type}' Op passed string '{reduction_type}' not "
            'in: "MEAN", "SUM".')
    return reduction_type


class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, its dtype and shape, the count of
    gradients accumulated and the global step.

    Parameters
    ----------
    dtype : DType
        The type of the gradients.
    shape : TensorShape or None
        The shape of the gradients (partial shapes are checked when gradients arrive).
    accumulator_ref : Tensor
        The handle tensor made by a subclass.
    """

    _prefix = "Resource"

    def __init__(self, dtype, shape, accumulator_ref: Tensor) -> None:
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Tensor:
        """The handle of the underlying accumulator."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        """The name of the accumulator op (without its scope)."""
        return self._name

    @property
    def dtype(self):
        """The dtype of the gradients."""
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """A scalar int32 tensor: how many gradients were accumulated since the last take.

        Example
        -------
        >>> import flowgraph as tf
        >>> acc = tf.ConditionalAccumulator(tf.float32)
        >>> tf.Session().run(acc.num_accumulated()).item()
        0
        """
        return make_op(f"{self._prefix}AccumulatorNumAccumulated", [self._accumulator_ref],
                       name=name or f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step, name: str | None = None) -> Operation:
        """An op setting the global step: later gradients with a smaller ``local_step``
        are dropped.

        Example
        -------
        >>> import flowgraph as tf
        >>> acc = tf.ConditionalAccumulator(tf.float32)
        >>> acc.set_global_step(3).type
        'ResourceAccumulatorSetGlobalStep'
        """
        step = cast(convert_to_tensor(new_global_step), _dtypes.int64)
        return make_op(f"{self._prefix}AccumulatorSetGlobalStep",
                       [self._accumulator_ref, step], name=name)

    def _local_step(self, local_step) -> Tensor:
        return cast(convert_to_tensor(local_step), _dtypes.int64)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients; `take_grad(n)` waits for `n` and returns their mean.

    Parameters
    ----------
    dtype : DType
        float16, float32 or float64 (other types fail when the accumulator is created).
    shape : shape, optional
        The gradients' shape.
    shared_name : str, optional
        Share the accumulator among sessions on one target under this name.
    name : str
        The op's name.
    reduction_type : {'MEAN', 'SUM'}
        What `take_grad` returns.

    Example
    -------
    >>> import flowgraph as tf
    >>> acc = tf.ConditionalAccumulator(tf.float32, shape=[], reduction_type="SUM")
    >>> ops = [acc.apply_grad(1.0), acc.apply_grad(2.0), acc.apply_grad(9.0, local_step=-1)]
    >>> with tf.Session() as sess:
    ...     _ = sess.run(ops)
    ...     print(sess.run(acc.take_grad(2)))
    3.0
    """

    def __init__(self, dtype, shape=None, shared_name=None,
                 name: str = "conditional_accumulator", reduction_type: str = "MEAN") -> None:
        shape = as_shape(shape) if shape is not None else TensorShape(None)
        attrs = {"dtype": _dtypes.as_dtype(dtype).base_dtype, "shape": shape,
                 "shared_name": shared_name or "",
                 "reduction_type": _reduction(reduction_type, "ResourceConditionalAccumulator")}
        ref = make_op("ResourceConditionalAccumulator", [], attrs, name=name).outputs[0]
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name: str | None = None) -> Operation:
        """An op adding `grad` unless `local_step` is below the global step.

        Raises ValueError when `grad`'s static shape contradicts the accumulator's.
        """
        grad = convert_to_tensor(grad, dtype=self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        step = self._local_step(local_step)
        return make_op(f"{self._prefix}AccumulatorApplyGradient",
                       [self._accumulator_ref, step, grad], {"dtype": self._dtype}, name=name)

    def take_grad(self, num_required, name: str | None = None) -> Tensor:
        """The mean (or sum) of the next `num_required` gradients; blocks until they are
        there, then resets the accumulator and increments its global step."""
        n = convert_to_tensor(num_required, dtype=_dtypes.int32)
        return make_op(f"{self._prefix}AccumulatorTakeGradient", [self._accumulator_ref, n],
                       {"dtype": self._dtype, "shape": self._shape}, name=name).outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (`IndexedSlices`); the mean averages each row over
    the gradients that contained it.

    Example
    -------
    >>> import flowgraph as tf
    >>> acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 1])
    >>> a = acc.apply_grad([0, 2], [[1.0], [2.0]])
    >>> b = acc.apply_grad([2], [[4.0]])
    >>> with tf.Session() as sess:
    ...     _ = sess.run([a]); _ = sess.run(b)
    ...     idx, val, shape = sess.run(acc.take_grad(2))
    >>> idx.tolist(), val.ravel().tolist(), shape.tolist()
    ([0, 2], [1.0, 3.0], [3, 1])
    """

    _prefix = ""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name: str = "sparse_conditional_accumulator",
                 reduction_type: str = "MEAN") -> None:
        shape = as_shape(shape) if shape is not None else TensorShape(None)
        attrs = {"dtype": _dtypes.as_dtype(dtype).base_dtype, "shape": shape,
                 "shared_name": shared_name or "",
                 "reduction_type": _reduction(reduction_type, "SparseConditionalAccumulator")}
        ref = make_op("SparseConditionalAccumulator", [], attrs, name=name).outputs[0]
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad: IndexedSlices, local_step=0,
                                  name: str | None = None) -> Operation:
        """`apply_grad` with the parts of an `IndexedSlices`."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step,
                               name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0,
                   name: str | None = None) -> Operation:
        """An op adding the rows `grad_values` at `grad_indices` (of a tensor of
        `grad_shape`) unless `local_step` is below the global step."""
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        indices = cast(convert_to_tensor(grad_indices), _dtypes.int64)
        known = grad_shape is not None
        shape = cast(convert_to_tensor(grad_shape if known else []), _dtypes.int64)
        step = self._local_step(local_step)
        return make_op("SparseAccumulatorApplyGradient",
                       [self._accumulator_ref, step, indices, values, shape],
                       {"dtype": self._dtype, "has_known_shape": known}, name=name)

    def take_grad(self, num_required, name: str | None = None):
        """``(indices, values, shape)``: the averaged (or summed) rows of the next
        `num_required` gradients, indices in the order they first arrived (the shape's
        first dimension is -1 when no gradient gave a shape); blocks until they are
        there."""
        n = convert_to_tensor(num_required, dtype=_dtypes.int32)
        op = make_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, n],
                     {"dtype": self._dtype}, name=name)
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required, name: str | None = None) -> IndexedSlices:
        """`take_grad` as an `IndexedSlices`."""
        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, shape)
