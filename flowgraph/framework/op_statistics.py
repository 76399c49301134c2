"""Per-op statistics (TensorFlow's ``ops.RegisterStatistics`` registry): `OpStats`,
the `RegisterStatistics` decorator and `get_stats_for_node_def`, with TensorFlow's
``flops`` rules registered for the op types its profiler counts (``2*m*k*n`` for
MatMul, ``2 * output elements * kernel area * input channels`` for Conv2D and its
gradients, the output size for elementwise ops, ...). `flops_of` is what
`tf.profiler` counts per op: a registered function's value, 0 without one.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     y = tf.matmul(tf.ones([8, 4]), tf.ones([4, 3]))
>>> get_stats_for_node_def(g, y.op.node_def, "flops").value
192
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["OpStats", "RegisterStatistics", "flops_of", "get_stats_for_node_def",
           "op_flops"]


class OpStats:
    """A statistic of one op: its type (``"flops"``) and value (None: unknown)."""

    __slots__ = ["statistic_type", "value"]

    def __init__(self, statistic_type: str, value=None) -> None:
        self.statistic_type = statistic_type
        self.value = value

    def __iadd__(self, other: OpStats) -> OpStats:
        if other.statistic_type != self.statistic_type:
            raise ValueError(f"Can't add an OpStat of type {self.statistic_type} to one "
                             f"of {other.statistic_type}.")
        if self.value is None:
            self.value = other.value
        elif other.value is not None:
            self.value += other.value
        return self


# "OpType,statistic" -> f(graph, node_def) -> OpStats
_REGISTRY: dict[str, Callable] = {}


def _check_key_part(value, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string.")
    if "," in value:
        raise TypeError(f"{what} must not contain a comma.")


class RegisterStatistics:
    """Decorator registering ``f(graph, node_def) -> OpStats`` as the `statistic_type`
    function of ops of type `op_type`; a second registration is a KeyError. Used as::

        @RegisterStatistics("Relu", "flops")
        def _relu_flops(graph, node_def):
            return OpStats("flops", 7)
    """

    __slots__ = ["_op_type", "_statistic_type"]

    def __init__(self, op_type: str, statistic_type: str) -> None:
        _check_key_part(op_type, "op_type")
        _check_key_part(statistic_type, "statistic_type")
        self._op_type = op_type
        self._statistic_type = statistic_type

    def __call__(self, f: Callable) -> Callable:
        key = f"{self._op_type},{self._statistic_type}"
        if key in _REGISTRY:
            raise KeyError(f"Registering two statistical functions with name '{key}'! "
                           f"(Previous registration was for {_REGISTRY[key].__name__})")
        _REGISTRY[key] = f
        return f


def get_stats_for_node_def(graph, node, statistic_type: str) -> OpStats:
    """`statistic_type` of the op `node` (a NodeDef of `graph`) from its registered
    function; an `OpStats` with value None when none is registered."""
    f = _REGISTRY.get(f"{node.op},{statistic_type}")
    return f(graph, node) if f is not None else OpStats(statistic_type)


def flops_of(op) -> int:
    """The float operations `tf.profiler` counts for `op`: a registered ``flops``
    function's value, else 0 (no rule, or shapes not fully known)."""
    f = _REGISTRY.get(f"{op.type},flops")
    if f is None:
        return 0
    if f is _builtin_flops:  # skip building a NodeDef
        return int(op_flops(op) or 0)
    try:
        value = f(op.graph, op.node_def).value
    except ValueError:  # as tfprof: a rule that cannot count is no count
        return 0
    return int(value or 0)


# -- TensorFlow's flops rules ---------------------------------------------------------
def _n(shape) -> int | None:
    if shape.ndims is None or not shape.is_fully_defined():
        return None
    return math.prod(shape.as_list())


_UNARY = {"Reciprocal", "Square", "Log", "Neg", "AssignSub", "AssignAdd"}
_BINARY = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
           "RsqrtGrad", "GreaterEqual", "Greater", "LessEqual", "Less", "Equal", "NotEqual",
           "BiasAdd"}
_REDUCE = {"Sum": 0, "ArgMax": 0, "ArgMin": 0, "BiasAddGrad": 0, "Mean": 1}


def _reduction_flops(op, finalize: int) -> int | None:
    n_in, n_out = _n(op.inputs[0].shape), _n(op.outputs[0].shape)
    if n_in is None or n_out is None:
        return None
    return n_in + n_out * (finalize - 1)


def op_flops(op) -> int | None:
    """The float operations TensorFlow's statistics give `op` (None: no rule, or shapes
    not fully known)."""
    t = op.type
    if t in _UNARY or t in _BINARY:
        return _n(op.outputs[0].shape)
    if t in ("SquaredDifference", "Rsqrt"):  # two operations per element
        n = _n(op.outputs[0].shape)
        return None if n is None else 2 * n
    if t == "L2Loss":
        n = _n(op.inputs[0].shape)
        return None if n is None else 3 * n - 1
    if t == "Softmax":
        n = _n(op.outputs[0].shape)
        return None if n is None else 5 * n
    if t == "AddN":
        n = _n(op.outputs[0].shape)
        return None if n is None else (len(op.inputs) - 1) * n
    if t in _REDUCE:
        return _reduction_flops(op, _REDUCE[t])
    if t == "MatMul":
        a = op.inputs[0].shape
        out = _n(op.outputs[0].shape)
        if out is None or a.ndims != 2 or not a.is_fully_defined():
            return None
        k = a.as_list()[0 if op.get_attr("transpose_a") else 1]
        return 2 * out * k
    if t in ("AvgPool", "MaxPool"):
        out = _n(op.outputs[0].shape)
        ksize = op.get_attr("ksize")
        return None if out is None else out * math.prod(ksize)
    if t in ("Conv2D", "DepthwiseConv2dNative", "Conv3D", "Dilation2D"):
        out, f = _n(op.outputs[0].shape), op.inputs[1].shape
        if out is None or not f.is_fully_defined():
            return None
        dims = f.as_list()
        per = math.prod(dims[:-2]) if t != "Dilation2D" else dims[0] * dims[1]
        return 2 * out * per * (dims[-2] if t in ("Conv2D", "Conv3D") else 1)
    return _grad_flops(op)


def _grad_flops(op) -> int | None:
    """TensorFlow's rules for batched matmuls and the convolution and pooling gradients."""
    t = op.type
    if t in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"):
        a, out = op.inputs[0].shape, _n(op.outputs[0].shape)
        if out is None or not a.is_fully_defined():
            return None
        # tfprof reads a ``transpose_a`` these ops lack: k is always a's last dimension
        return 2 * out * a.as_list()[-1]
    if t in ("AvgPoolGrad", "MaxPoolGrad"):
        # the gradient flowing in (AvgPoolGrad) / the pooled output (MaxPoolGrad)
        n = _n(op.inputs[1].shape)
        if n is None:
            return None
        area = math.prod(op.get_attr("ksize"))
        return 2 * area * n if t == "AvgPoolGrad" else area * n + n
    if t in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
        # image: the convolution's input; kernel: its filter
        image, kernel = ((op.outputs[0].shape, op.inputs[1].shape)
                         if t == "Conv2DBackpropInput" else
                         (op.inputs[0].shape, op.outputs[0].shape))
        if not (image.is_fully_defined() and kernel.is_fully_defined()):
            return None
        strides = op.get_attr("strides")
        # a float, as TensorFlow's rule divides
        return 2 * _n(image) * _n(kernel) / (image.as_list()[-1] * strides[1] * strides[2])
    return None


def _builtin_flops(graph, node) -> OpStats:
    op = graph.get_operation_by_name(node.name)
    value = op_flops(op)
    if value is None:
        shapes = [t.shape for t in (*op.inputs, *op.outputs)]
        unknown = next((s for s in shapes if not s.is_fully_defined()), None)
        raise ValueError(f"Shape {unknown} is not fully defined")
    return OpStats("flops", value)


_BUILTIN_TYPES = (
    *sorted(_UNARY | _BINARY | set(_REDUCE)), "SquaredDifference", "Rsqrt", "L2Loss",
    "Softmax", "AddN", "MatMul", "AvgPool", "MaxPool", "Conv2D", "DepthwiseConv2dNative",
    "Conv3D", "Dilation2D", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "AvgPoolGrad",
    "MaxPoolGrad", "Conv2DBackpropInput", "Conv2DBackpropFilter")
for _type in _BUILTIN_TYPES:
    _REGISTRY[f"{_type},flops"] = _builtin_flops
